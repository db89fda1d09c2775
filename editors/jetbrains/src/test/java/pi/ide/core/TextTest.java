package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Positions and selections: the wire's 1-based byte columns and the encoded selection cap. */
class TextTest {
	static Stream<Arguments> byteColumns() {
		return Stream.of(
				Arguments.of("ascii start", "hello", 0, 1),
				Arguments.of("ascii middle", "hello", 3, 4),
				Arguments.of("past the end is clamped", "hi", 9, 3),
				Arguments.of("after a 2-byte é", "é!", 1, 3),
				Arguments.of("after a 3-byte €", "€x", 1, 4),
				Arguments.of("after an emoji (surrogate pair)", "😀x", 2, 5),
				Arguments.of("inside a surrogate pair counts as its start", "😀x", 1, 1),
				Arguments.of("a tab is one byte", "\tx", 1, 2));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void byteColumns(String name, String line, int character, int expected) {
		assertEquals(expected, Text.byteColumn(line, character));
	}

	static Stream<Arguments> selections() {
		// name, text, anchor line/char, head line/char, start "l:c", end "l:c", selected text (null: none)
		return Stream.of(
				Arguments.of("empty", "abc", 0, 1, 0, 1, null, null, null),
				Arguments.of("one line", "hello world", 0, 6, 0, 11, "1:7", "1:11", "world"),
				Arguments.of("reversed", "hello world", 0, 11, 0, 6, "1:7", "1:11", "world"),
				Arguments.of("one é is two bytes", "aéb", 0, 1, 0, 2, "1:2", "1:3", "é"),
				Arguments.of("whole lines when multi-line", "ab\ncd\nef", 0, 1, 2, 1, "1:2", "3:1", "ab\ncd\nef"),
				Arguments.of("up to column 0 ends with the line break", "ab\ncd\nef", 0, 0, 2, 0, "1:1", "2:2", "ab\ncd"),
				Arguments.of("one line and its break", "ab\ncd", 0, 0, 1, 0, "1:1", "1:2", "ab\n"),
				Arguments.of("start on a line break clamps", "ab\ncd", 0, 2, 1, 1, "1:2", "2:1", "ab\ncd"),
				// found by test/jetbrains/selection-differential.test.ts (seeded): clamping made start pass end
				Arguments.of("positions clamped across each other: empty, no exception", "abc", -1, 3, 0, 0, "1:3", "1:1", ""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void selections(String name, String text, int al, int ac, int hl, int hc, String start, String end, String selected) {
		Text.Range r = Text.describeSelection(Text.linesOf(text), new Text.HostPosition(al, ac), new Text.HostPosition(hl, hc));
		if (selected == null) {
			assertNull(r);
			return;
		}
		assertEquals(start, r.start.signature());
		assertEquals(end, r.end.signature());
		assertEquals(selected, r.text);
		assertFalse(r.truncated);
	}

	static Stream<Arguments> caps() {
		// one character repeated so the raw text fits the cap but its encoding does not (or does)
		long cap = Text.MAX_SELECTION_TEXT_BYTES;
		return Stream.of(
				Arguments.of("plain text at the cap fits", "a", (int) cap, false, cap),
				Arguments.of("plain text one over is cut", "a", (int) cap + 1, true, cap),
				Arguments.of("quotes count twice", "\"", (int) cap / 2 + 1, true, cap),
				Arguments.of("control bytes count six", "\u0001", (int) cap / 6 + 1, true, cap - (cap % 6)),
				Arguments.of("emoji never split", "😀", (int) cap / 4 + 1, true, cap));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource
	void caps(String name, String unit, int count, boolean truncated, long encodedBytes) {
		StringBuilder line = new StringBuilder();
		for (int i = 0; i < count; i++) line.append(unit);
		Text.Range r = Text.describeSelection(Text.linesOf(line + "\nnext"), new Text.HostPosition(0, 0),
				new Text.HostPosition(0, line.length()));
		assertEquals(truncated, r.truncated);
		assertEquals(encodedBytes, Json.stringBytes(r.text));
		assertTrue(Json.stringBytes(r.text) <= Text.MAX_SELECTION_TEXT_BYTES);
		assertEquals("1:1", r.start.signature(), "start/end describe the whole selection");
	}

	@Test
	void multiLineCapsAtALineBoundary() {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < 40000; i++) text.append("line ").append(i).append('\n');
		Text.Lines lines = Text.linesOf(text.toString());
		Text.Range r = Text.describeSelection(lines, new Text.HostPosition(0, 0), new Text.HostPosition(39999, 3));
		assertTrue(r.truncated);
		assertTrue(Json.stringBytes(r.text) <= Text.MAX_SELECTION_TEXT_BYTES);
		assertTrue(r.text.endsWith("" + r.text.substring(r.text.lastIndexOf('\n') + 1)));
		assertTrue(r.text.substring(r.text.lastIndexOf('\n') + 1).startsWith("line "), "whole lines only");
		assertEquals("40000:3", r.end.signature());
	}

	static Stream<Arguments> lineCounts() {
		return Stream.of(Arguments.of("", 1), Arguments.of("a", 1), Arguments.of("a\n", 1), Arguments.of("a\nb", 2),
				Arguments.of("a\n\n", 2));
	}

	@ParameterizedTest
	@MethodSource
	void lineCounts(String text, int expected) {
		assertEquals(expected, Text.countLines(Text.linesOf(text)));
	}
}
