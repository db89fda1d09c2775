package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code <pid>.buffers.json} (v0.5): the line rule, the encoded 2 MiB cap and the 32-buffer cap; the kit checks the rest. */
class UnsavedBuffersTest {
	@SuppressWarnings("unchecked")
	static List<Map<String, Object>> buffersOf(List<UnsavedBuffers.Dirty> documents) throws Json.ParseError {
		Map<String, Object> file = (Map<String, Object>) Json.parse(UnsavedBuffers.encode(42, 7, documents, 1.5));
		assertEquals("editor-buffers", file.get("kind"));
		assertEquals(7L, ((Number) file.get("serial")).longValue());
		return (List<Map<String, Object>>) file.get("buffers");
	}

	static UnsavedBuffers.Dirty dirty(String file, String text) {
		return new UnsavedBuffers.Dirty(file, 3, new FrozenLines(text));
	}

	static Stream<Arguments> lines() {
		return Stream.of(Arguments.of("one\ntwo\n", 2, "one\ntwo"), Arguments.of("one\ntwo", 2, "one\ntwo"),
				Arguments.of("one\n\n", 2, "one\n"), Arguments.of("", 1, ""),
				Arguments.of("a \"q\" \\ \t é 日本 \u0001\n", 1, "a \"q\" \\ \t é 日本 \u0001"));
	}

	@ParameterizedTest
	@MethodSource("lines")
	void aTextIsItsLinesJoinedWithoutTheFinalNewline(String text, int total, String expected) throws Exception {
		Map<String, Object> b = buffersOf(Collections.singletonList(dirty("/w/a.txt", text))).get(0);
		assertEquals("/w/a.txt", b.get("file"));
		assertEquals(total, ((Number) b.get("lines_total")).intValue());
		assertEquals(expected, b.get("text"));
	}

	@Test
	void theEncodedTextsTakeAtMostTwoMebibytes() throws Exception {
		StringBuilder half = new StringBuilder();
		for (int i = 0; i < UnsavedBuffers.MAX_TEXT_BYTES / 2; i++) half.append('x');
		// Quotes encode to two bytes: under the cap raw, over what is left of it encoded.
		StringBuilder quoted = new StringBuilder();
		for (int i = 0; i <= UnsavedBuffers.MAX_TEXT_BYTES / 2; i++) quoted.append('"');
		List<Map<String, Object>> b = buffersOf(Arrays.asList(dirty("/w/half", half.toString()),
				dirty("/w/quoted", quoted.toString()), dirty("/w/small", "small")));
		assertEquals(half.length(), ((String) b.get(0).get("text")).length());
		assertEquals("too_large", b.get(1).get("note"));
		assertNull(b.get(1).get("text"));
		assertEquals("small", b.get(2).get("text"));
	}

	@Test
	void atMost32BuffersTheFirstOnes() throws Exception {
		List<UnsavedBuffers.Dirty> many = new ArrayList<>();
		for (int i = 0; i < UnsavedBuffers.MAX_BUFFERS + 3; i++) many.add(dirty("/w/" + i, i + "\n"));
		List<Map<String, Object>> b = buffersOf(many);
		assertEquals(UnsavedBuffers.MAX_BUFFERS, b.size());
		assertEquals("/w/0", b.get(0).get("file"));
	}
}
