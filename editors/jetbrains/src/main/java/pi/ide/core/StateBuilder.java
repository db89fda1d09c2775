package pi.ide.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The state file for one IDE process, pure: a {@link Snapshot.State} in, the protocol's JSON out.
 *
 * <p>The top-level fields describe the project window the user touched last, exactly as a v0.3 file of any
 * editor (a v0.2 or v0.3 reader sees one editor in that project). The other open windows follow in
 * {@code windows} (PROTOCOL.md, "Several windows of one process"), each with its own {@code cwd}, {@code argv}
 * and {@code active_buffer}, so pi can pick the window whose project is its own.
 */
public final class StateBuilder {
	private StateBuilder() {}

	public static final String APP = "jetbrains";
	public static final String PROTOCOL = "0.3";
	/** pi refuses bigger state files unread (PROTOCOL.md, Limits). */
	public static final int MAX_STATE_FILE_BYTES = 1024 * 1024;
	/** At most this many other windows are listed (the most recently touched). */
	public static final int MAX_OTHER_WINDOWS = 8;
	/** Each other window's selection text is capped lower, so the whole list fits beside the main one. */
	public static final long OTHER_WINDOW_SELECTION_BYTES = 64 * 1024;

	/** The encoded file, or why nothing may be written. */
	public static final class Built {
		/** null when nothing should be written (no window open, or too big even with the selection cut). */
		public final byte[] content;
		/** The state without its timestamp: equal keys need no second write. */
		public final String key;
		public final String problem;

		Built(byte[] content, String key, String problem) {
			this.content = content;
			this.key = key;
			this.problem = problem;
		}
	}

	/** {@code now} in unix seconds; stamps selections on {@code clock}. */
	public static Built build(Snapshot.State state, long now, SelectionClock clock) {
		if (state.windows.isEmpty()) return new Built(null, null, "no project window is open");
		Snapshot.Window main = state.windows.get(0);
		Map<String, Object> out = new LinkedHashMap<>();
		out.put("protocol", PROTOCOL);
		out.put("pid", state.ide.pid);
		if (state.ide.pidNs != null) out.put("pid_ns", state.ide.pidNs);
		out.put("cwd", main.projectPath);
		out.put("timestamp", now);
		out.put("app", APP);
		out.put("product", state.ide.product);
		out.put("argv", argv(state.ide, main));
		Text.Range mainRange = range(main.document);
		out.put("active_buffer", activeBuffer(main.document, mainRange, now, clock));
		if (main.database != null) out.put("database", main.database);
		if (state.windows.size() > 1) {
			List<Object> others = new ArrayList<>();
			for (Snapshot.Window w : state.windows.subList(1, Math.min(state.windows.size(), MAX_OTHER_WINDOWS + 1))) {
				Map<String, Object> entry = new LinkedHashMap<>();
				entry.put("cwd", w.projectPath);
				entry.put("argv", argv(state.ide, w));
				Text.Range r = range(w.document);
				if (r != null && Json.stringBytes(r.text) > OTHER_WINDOW_SELECTION_BYTES) {
					r = Text.recut(r, OTHER_WINDOW_SELECTION_BYTES);
				}
				entry.put("active_buffer", activeBuffer(w.document, r, now, clock));
				if (w.database != null) entry.put("database", w.database);
				others.add(entry);
			}
			out.put("windows", others);
		}
		if (state.files != null) out.put("files", state.files);
		if (state.pi != null) out.put("pi", state.pi);
		if (state.buffersSerial != null) out.put("buffers_serial", state.buffersSerial);
		// Always a list once the client answers approvals, empty before the first: how pi knows it may ask.
		if (state.decisions != null) {
			List<Map<String, Object>> d = state.decisions;
			out.put("decisions", new ArrayList<>(d.subList(Math.max(0, d.size() - Approval.MAX_DECISIONS), d.size())));
		}
		return fit(out);
	}

	/** {@code ["<Product> <version>", "<project path>"]}: a fingerprint that tells two IDEs on one project apart. */
	public static List<Object> argv(Snapshot.Ide ide, Snapshot.Window window) {
		return new ArrayList<Object>(Arrays.asList(ide.product + " " + ide.version, window.projectPath));
	}

	private static Text.Range range(Snapshot.Document d) {
		if (d == null || d.anchor == null || d.head == null) return null;
		return Text.describeSelection(d.lines, d.anchor, d.head);
	}

	static Map<String, Object> activeBuffer(Snapshot.Document d, Text.Range range, long now, SelectionClock clock) {
		Map<String, Object> b = new LinkedHashMap<>();
		if (d == null) {
			b.put("file", null);
			b.put("name", "[No Name]");
			b.put("language", null);
			b.put("cursor", position(null));
			b.put("selection", null);
			b.put("modified", false);
			b.put("lines_total", 0);
			return b;
		}
		Long selectedAt = clock.stamp(d.key, range, now);
		String file = d.file == null || d.file.isEmpty() ? null : d.file;
		b.put("file", file);
		b.put("name", d.name);
		b.put("language", Languages.bundled().of(file != null ? file : d.name));
		b.put("cursor", position(d.cursor == null ? null : Text.toWire(d.lines, d.cursor)));
		b.put("selection", range == null ? null : selection(range, selectedAt));
		b.put("modified", d.modified);
		b.put("lines_total", Text.countLines(d.lines));
		if (d.version != null) b.put("version", d.version);
		if (d.diagnostics != null) b.put("diagnostics", d.diagnostics);
		return b;
	}

	private static Map<String, Object> position(Text.Position p) {
		Map<String, Object> m = new LinkedHashMap<>();
		m.put("line", p == null ? null : (Object) p.line);
		m.put("column", p == null ? null : (Object) p.column);
		return m;
	}

	private static Map<String, Object> selection(Text.Range r, Long selectedAt) {
		Map<String, Object> s = new LinkedHashMap<>();
		s.put("start", position(r.start));
		s.put("end", position(r.end));
		s.put("text", r.text);
		s.put("selected_at", selectedAt);
		if (r.truncated) s.put("truncated", true);
		return s;
	}

	private static String keyOf(Map<String, Object> state) {
		Map<String, Object> rest = new LinkedHashMap<>(state);
		rest.remove("timestamp");
		return Json.write(rest);
	}

	private static byte[] encode(Map<String, Object> state) {
		return (Json.write(state) + "\n").getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Keep the encoded file within pi's limit: cut the main selection at a line boundary to the room the rest
	 * leaves (marked truncated), or write nothing when even an empty text does not fit (editors/shared/state.ts's
	 * fitStateFile, the same rule).
	 */
	@SuppressWarnings("unchecked")
	static Built fit(Map<String, Object> state) {
		byte[] content = encode(state);
		if (content.length <= MAX_STATE_FILE_BYTES) return new Built(content, keyOf(state), null);
		Map<String, Object> buffer = (Map<String, Object>) state.get("active_buffer");
		Map<String, Object> selection = (Map<String, Object>) buffer.get("selection");
		String tooBig = "the state would be " + content.length + " bytes, over pi's " + MAX_STATE_FILE_BYTES
				+ "-byte limit; not written";
		if (selection == null || "".equals(selection.get("text"))) return new Built(null, null, tooBig);
		String text = (String) selection.get("text");
		selection.put("text", "");
		selection.put("truncated", true);
		long room = MAX_STATE_FILE_BYTES - encode(state).length;
		if (room < 0) return new Built(null, null, tooBig);
		List<String> parts = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
		selection.put("text", Text.clip(null, null, parts.iterator(), room).text);
		byte[] cut = encode(state);
		return cut.length <= MAX_STATE_FILE_BYTES ? new Built(cut, keyOf(state), null) : new Built(null, null, tooBig);
	}
}
