package pi.ide.core;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Positions and selections, pure: the IDE hands over what its Document and Caret say (0-based line, 0-based
 * UTF-16 offset in that line) and this turns them into the wire's 1-based lines and 1-based UTF-8 byte
 * columns, with the selection text capped at its encoded size. The same rules as the TypeScript clients
 * (editors/shared/state.ts), so one file selected in any editor is described the same way.
 */
public final class Text {
	private Text() {}

	/** The protocol's encoded selection cap (PROTOCOL.md, Limits; src/protocol/limits.ts). */
	public static final long MAX_SELECTION_TEXT_BYTES = 256 * 1024;

	/** Read access to a document's lines (0-based) without copying the whole text. */
	public interface Lines {
		int count();

		String text(int line);
	}

	/** 0-based line and UTF-16 offset, as editor APIs report them. */
	public static final class HostPosition {
		public final int line;
		public final int character;

		public HostPosition(int line, int character) {
			this.line = line;
			this.character = character;
		}
	}

	/** A wire position: 1-based line, 1-based UTF-8 byte column. */
	public static final class Position {
		public final int line;
		public final int column;

		public Position(int line, int column) {
			this.line = line;
			this.column = column;
		}

		public String signature() {
			return line + ":" + column;
		}
	}

	/** A non-empty selection before its selected_at stamp. */
	public static final class Range {
		public final Position start;
		public final Position end;
		public final String text;
		/** The text was cut at the cap; start/end still describe the whole selection. */
		public final boolean truncated;

		public Range(Position start, Position end, String text, boolean truncated) {
			this.start = start;
			this.end = end;
			this.text = text;
			this.truncated = truncated;
		}

		public String signature() {
			return start.signature() + "-" + end.signature();
		}
	}

	/** Lines over a whole text, split at \r\n, \r or \n (tests, the headless driver). */
	public static Lines linesOf(String text) {
		final String[] split = text.split("\r\n|\r|\n", -1);
		return new Lines() {
			public int count() {
				return split.length;
			}

			public String text(int line) {
				return line >= 0 && line < split.length ? split[line] : "";
			}
		};
	}

	private static int characterStart(String line, int character) {
		int at = Math.max(0, Math.min(character, line.length()));
		if (at > 0 && at < line.length() && Character.isLowSurrogate(line.charAt(at))
				&& Character.isHighSurrogate(line.charAt(at - 1))) {
			return at - 1;
		}
		return at;
	}

	/** 1-based byte column of the character at UTF-16 offset {@code character} (clamped to the line). */
	public static int byteColumn(String line, int character) {
		return Bytes.utf8Length(line.substring(0, characterStart(line, character))) + 1;
	}

	private static int lastCharacterBefore(String line, int end) {
		int at = characterStart(line, end);
		if (at >= 2 && Character.isLowSurrogate(line.charAt(at - 1)) && Character.isHighSurrogate(line.charAt(at - 2))) {
			return at - 2;
		}
		return Math.max(0, at - 1);
	}

	/** Lines as the user counts them: a final newline adds no line; an empty buffer has 1. */
	public static int countLines(Lines lines) {
		if (lines.count() > 1 && lines.text(lines.count() - 1).isEmpty()) return lines.count() - 1;
		return Math.max(lines.count(), 0);
	}

	private static int clampLine(Lines lines, int line) {
		return Math.max(0, Math.min(line, Math.max(lines.count() - 1, 0)));
	}

	public static Position toWire(Lines lines, HostPosition p) {
		int line = clampLine(lines, p.line);
		return new Position(line + 1, byteColumn(lines.text(line), p.character));
	}

	private static int compare(HostPosition a, HostPosition b) {
		return a.line != b.line ? Integer.compare(a.line, b.line) : Integer.compare(a.character, b.character);
	}

	/**
	 * The selection between two positions in the protocol's shape, or null when empty: start is the first byte
	 * of the first character, end the last byte of the last one; a selection stopping at column 0 of a later
	 * line ends with the previous line's line break. Single-line: the exact text; multi-line: whole lines.
	 */
	public static Range describeSelection(Lines lines, HostPosition anchor, HostPosition head) {
		HostPosition from = compare(anchor, head) <= 0 ? anchor : head;
		HostPosition to = compare(anchor, head) <= 0 ? head : anchor;
		int startLine = clampLine(lines, from.line);
		int endLine = clampLine(lines, to.line);
		String startText = lines.text(startLine);
		int startChar = characterStart(startText, from.character);
		String endText = lines.text(endLine);
		int endChar = characterStart(endText, to.character);
		if (startLine == endLine && startChar == endChar) return null;

		boolean endsAtLineBreak = endChar == 0 && endLine > startLine;
		int lastLine = endsAtLineBreak ? endLine - 1 : endLine;
		String lastText = lines.text(lastLine);
		int firstChar = startChar >= startText.length() ? lastCharacterBefore(startText, startText.length()) : startChar;
		Position start = new Position(startLine + 1, byteColumn(startText, firstChar));
		int lastByte = Bytes.utf8Length(endsAtLineBreak ? lastText : lastText.substring(0, endChar));
		Position end = new Position(lastLine + 1, Math.max(1, lastByte));

		if (startLine == lastLine) {
			// Positions clamped from before the first or past the last line can cross (start after end on one
			// line): that is an empty text, as in the TypeScript clients, never an exception in the event handler.
			String text = endsAtLineBreak ? startText.substring(startChar) + "\n"
					: startChar < endChar ? startText.substring(startChar, endChar) : "";
			List<String> one = new ArrayList<>();
			one.add(text);
			return clip(start, end, one.iterator(), MAX_SELECTION_TEXT_BYTES);
		}
		final int first = startLine;
		final int last = lastLine;
		// Lines are pulled lazily: the cap stops the pulling, so a select-all in a huge file costs the cap.
		Iterator<String> picked = new Iterator<String>() {
			int next = first;

			public boolean hasNext() {
				return next <= last;
			}

			public String next() {
				return lines.text(next++);
			}
		};
		return clip(start, end, picked, MAX_SELECTION_TEXT_BYTES);
	}

	/** Join lines with \n, stopping before the line whose encoded bytes would pass budget. */
	static Range clip(Position start, Position end, Iterator<String> parts, long budget) {
		long bytes = 0;
		StringBuilder kept = new StringBuilder();
		boolean any = false;
		while (parts.hasNext()) {
			String part = parts.next();
			long cost = Json.stringBytes(part) + (any ? 2 : 0);
			if (bytes + cost > budget) {
				if (!any) kept.append(clipLine(part, budget));
				return new Range(start, end, kept.toString(), true);
			}
			bytes += cost;
			if (any) kept.append('\n');
			kept.append(part);
			any = true;
		}
		return new Range(start, end, kept.toString(), false);
	}

	/** The longest prefix of line, cut on a character boundary, whose encoded bytes fit budget. */
	static String clipLine(String line, long budget) {
		long bytes = 0;
		int units = 0;
		while (units < line.length()) {
			int width = Character.isHighSurrogate(line.charAt(units)) && units + 1 < line.length()
					&& Character.isLowSurrogate(line.charAt(units + 1)) ? 2 : 1;
			bytes += Json.stringBytes(line.substring(units, units + width));
			if (bytes > budget) break;
			units += width;
		}
		return line.substring(0, units);
	}

	/** A selection's text cut further to budget (the state file's room), at a line boundary; truncated. */
	public static Range recut(Range range, long budget) {
		List<String> parts = new ArrayList<>();
		for (String part : range.text.split("\n", -1)) parts.add(part);
		Range cut = clip(range.start, range.end, parts.iterator(), budget);
		return new Range(range.start, range.end, cut.text, true);
	}

	/** The UTF-16 offset of 1-based byte column {@code column} in line (clamped; inside a character: its start). */
	public static int characterOf(String line, int column) {
		int bytes = 0;
		int at = 0;
		while (at < line.length()) {
			int width = Character.isHighSurrogate(line.charAt(at)) && at + 1 < line.length()
					&& Character.isLowSurrogate(line.charAt(at + 1)) ? 2 : 1;
			int size = Bytes.utf8Length(line.substring(at, at + width));
			if (bytes + size > column - 1) break;
			bytes += size;
			at += width;
		}
		return at;
	}
}
