package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The writer escapes as JSON.stringify does (the expected strings are JSON.stringify's); the parser is strict. */
class JsonTest {
	static Stream<Arguments> strings() {
		return Stream.of(
				Arguments.of("plain", "\"plain\""),
				Arguments.of("q\"b\\", "\"q\\\"b\\\\\""),
				Arguments.of("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\""),
				Arguments.of("\u0001\u001f", "\"\\u0001\\u001f\""),
				Arguments.of("/ stays", "\"/ stays\""),
				Arguments.of("é😀", "\"é😀\""),
				Arguments.of("lone \ud800 high", "\"lone \\ud800 high\""),
				Arguments.of("lone \udc00 low", "\"lone \\udc00 low\""),
				Arguments.of("\u2028", "\"\u2028\""));
	}

	@ParameterizedTest
	@MethodSource
	void strings(String value, String expected) {
		assertEquals(expected, Json.write(value));
		// the cap counts exactly what is written, less the quotes
		assertEquals(expected.getBytes(java.nio.charset.StandardCharsets.UTF_8).length - 2, Json.stringBytes(value));
	}

	@ParameterizedTest
	@ValueSource(strings = {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"a\nb\"", "tru", "{} x", "'a'", "NaN"})
	void rejects(String text) {
		assertThrows(Json.ParseError.class, () -> Json.parse(text));
	}

	@org.junit.jupiter.api.Test
	void roundTrips() throws Exception {
		Map<String, Object> m = new LinkedHashMap<>();
		m.put("a", 1L);
		m.put("b", Arrays.asList("x", null, true, 2.5));
		m.put("c", new LinkedHashMap<>());
		String text = Json.write(m);
		assertEquals("{\"a\":1,\"b\":[\"x\",null,true,2.5],\"c\":{}}", text);
		assertEquals(m, Json.parse(text));
		assertEquals(4L, Json.parse("4.0"), "JavaScript has one number type: 4.0 is an integer");
		assertEquals("é", Json.parse("\"\\u00e9\""));
	}
}
