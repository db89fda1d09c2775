package pi.ide.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Protocol v0.3 diagnostics, pure: the IDE's highlights mapped to wire items (1-based line, 1-based byte
 * column), then sorted (errors first, then by position), capped and clipped as the other clients do
 * (editors/shared/diagnostics.ts), so the state file stays far below pi's limit.
 */
public final class Diagnostics {
	private Diagnostics() {}

	public static final int MAX_ITEMS = 100;
	public static final int MAX_MESSAGE_CHARS = 500;
	public static final int MAX_LABEL_CHARS = 100;
	public static final int MAX_BYTES = 128 * 1024;
	public static final List<String> SEVERITIES = Arrays.asList("error", "warning", "info", "hint");

	/** One diagnostic in the protocol's terms; endLine/endColumn may be null. */
	public static final class Item {
		public final String severity;
		public final int line;
		public final int column;
		public final Integer endLine;
		public final Integer endColumn;
		public final String message;
		public final String source;
		public final String code;

		public Item(String severity, int line, int column, Integer endLine, Integer endColumn, String message,
				String source, String code) {
			this.severity = severity;
			this.line = line;
			this.column = column;
			this.endLine = endLine;
			this.endColumn = endColumn;
			this.message = message;
			this.source = source;
			this.code = code;
		}
	}

	/** The IDE's HighlightSeverity name to the protocol's severity; null for levels that are not diagnostics. */
	public static String severityOf(String ideSeverity) {
		if (ideSeverity == null) return null;
		switch (ideSeverity) {
			case "ERROR": return "error";
			case "WARNING": return "warning";
			case "WEAK WARNING": case "WEAK_WARNING": return "info";
			case "INFORMATION": case "INFO": case "TYPO": return "hint";
			default: return null;
		}
	}

	/** Cut to at most max UTF-16 units without splitting a surrogate pair; "…" marks a cut. */
	public static String clip(String text, int max) {
		if (text == null || text.length() <= max) return text;
		int end = max - 1;
		if (Character.isHighSurrogate(text.charAt(end - 1))) end--;
		return text.substring(0, end) + "…";
	}

	/** Sort, cap and clip items into the wire report for buffer {@code version}; {@code total} counts all. */
	public static Map<String, Object> summarize(List<Item> items, long version) {
		List<Item> sorted = new ArrayList<>(items);
		sorted.sort(Comparator.<Item>comparingInt(i -> SEVERITIES.indexOf(i.severity)).thenComparingInt(i -> i.line)
				.thenComparingInt(i -> i.column));
		List<Object> kept = new ArrayList<>();
		long bytes = 0;
		for (Item i : sorted) {
			if (kept.size() >= MAX_ITEMS) break;
			Map<String, Object> m = new LinkedHashMap<>();
			m.put("severity", i.severity);
			m.put("line", i.line);
			m.put("column", i.column);
			if (i.endLine != null) m.put("end_line", i.endLine);
			if (i.endColumn != null) m.put("end_column", i.endColumn);
			m.put("message", clip(i.message, MAX_MESSAGE_CHARS));
			m.put("source", clip(i.source, MAX_LABEL_CHARS));
			m.put("code", clip(i.code, MAX_LABEL_CHARS));
			bytes += Bytes.utf8Length(Json.write(m)) + 1;
			if (bytes > MAX_BYTES) break;
			kept.add(m);
		}
		Map<String, Object> report = new LinkedHashMap<>();
		report.put("version", version);
		report.put("total", items.size());
		report.put("items", kept);
		return report;
	}
}
