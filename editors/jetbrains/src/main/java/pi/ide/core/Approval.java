package pi.ide.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Protocol v0.4's optional approval, the editor's half, pure (PROTOCOL.md, "Approval (optional, off by
 * default)"): the request pi writes to {@code pi-<pid>.approval.json} while its write/edit waits, its parser
 * (untrusted text in, a request or one problem out, never an exception), the proposal applied in memory to the
 * text the user sees (for a diff; nothing is ever written with it), and the {@code decisions} list the state
 * file carries back. The rules of editors/nvim/lua/pi-ide/approval.lua, in Java.
 */
public final class Approval {
	private Approval() {}

	/** pi's notes on a request without hunks (PROTOCOL.md `files[].note`, wire.ts REVIEW_NOTES). */
	public static final List<String> NOTES = Collections.unmodifiableList(Arrays.asList("binary", "too large", "unreadable"));

	/** The largest request read (pi keeps it under this; a bigger one loses its hunks, note "too large"). */
	public static final int MAX_BYTES = 1024 * 1024;
	/** Decisions kept in the state file, newest last. */
	public static final int MAX_DECISIONS = 20;
	/** PROTOCOL.md "Limits": a request listing more hunks is refused whole, by the count. */
	public static final int MAX_HUNKS = 500;
	/** PROTOCOL.md {@code hunks[].id} and {@code request.id}: 1 to this many bytes of UTF-8 (not UTF-16 chars). */
	public static final int MAX_ID_BYTES = 64;
	/** PROTOCOL.md "Limits": a hunk's {@code old_start} and {@code new_start} are integers up to this (a Java int). */
	public static final int MAX_LINE = Integer.MAX_VALUE;
	private static final Pattern NAME = Pattern.compile("pi-([1-9][0-9]{0,9})\\.approval\\.json");
	private static final long MAX_SAFE = 9007199254740991L;

	/** One proposed hunk: the file's lines {@code oldText} at {@code oldStart} (1-based) become {@code newText}. */
	public static final class Hunk {
		public final String id;
		public final int oldStart;
		public final int newStart;
		public final List<String> oldText;
		public final List<String> newText;

		Hunk(String id, int oldStart, int newStart, List<String> oldText, List<String> newText) {
			this.id = id;
			this.oldStart = oldStart;
			this.newStart = newStart;
			this.oldText = Collections.unmodifiableList(oldText);
			this.newText = Collections.unmodifiableList(newText);
		}
	}

	/** What pi waits on. */
	public static final class Request {
		public final long piPid;
		/** v0.5: pi's pid namespace as its request said, null when it said none. */
		public final String piNs;
		public final long editorPid;
		public final String id;
		public final String tool;
		public final String file;
		public final boolean created;
		/** "binary", "too large", "unreadable": the hunks are not carried. null when they are. */
		public final String note;
		public final List<Hunk> hunks;
		public final long hunksTotal;
		public final long timeoutS;
		/** Seconds since the epoch. */
		public final double expires;

		Request(long piPid, String piNs, long editorPid, String id, String tool, String file, boolean created, String note,
				List<Hunk> hunks, long hunksTotal, long timeoutS, double expires) {
			this.piPid = piPid;
			this.piNs = piNs;
			this.editorPid = editorPid;
			this.id = id;
			this.tool = tool;
			this.file = file;
			this.created = created;
			this.note = note;
			this.hunks = Collections.unmodifiableList(hunks);
			this.hunksTotal = hunksTotal;
			this.timeoutS = timeoutS;
			this.expires = expires;
		}

		/** The identity of the pi that asks ({@link PiIdentity#key}): its pid and namespace. */
		public String key() {
			return PiIdentity.key(piPid, piNs);
		}
	}

	/** A parsed request, or the one problem that made it unusable. */
	public static final class Parsed {
		public final Request request;
		public final String problem;

		Parsed(Request request, String problem) {
			this.request = request;
			this.problem = problem;
		}
	}

	/** The pid in a {@code pi-<pid>.approval.json} name (PiMessage's canonical decimal), or -1 for any other name. */
	public static long pidOfName(String name) {
		Matcher m = NAME.matcher(name);
		return m.matches() ? PiMessage.pidOfName("pi-" + m.group(1) + ".json") : -1;
	}

	private static boolean isInt(Object v, long min) {
		return v instanceof Long && (Long) v >= min && (Long) v <= MAX_LINE;
	}

	/** An id of pi's (a hunk's, a request's): 1 to MAX_ID_BYTES bytes of UTF-8. */
	private static boolean isId(Object v) {
		return v instanceof String && !((String) v).isEmpty()
				&& ((String) v).getBytes(StandardCharsets.UTF_8).length <= MAX_ID_BYTES;
	}

	private static boolean isLong(Object v, long min) {
		return v instanceof Long && (Long) v >= min && (Long) v <= MAX_SAFE;
	}

	@SuppressWarnings("unchecked")
	private static List<String> lines(Object v) {
		if (!(v instanceof List)) return null;
		for (Object line : (List<Object>) v) {
			if (!(line instanceof String)) return null;
		}
		return new ArrayList<>((List<String>) v);
	}

	/** A well-formed hunk, or null (dropped, as the other clients drop it: the rest of the request stands). */
	@SuppressWarnings("unchecked")
	private static Hunk hunk(Object raw) {
		if (!(raw instanceof Map)) return null;
		Map<String, Object> h = (Map<String, Object>) raw;
		Object id = h.get("id");
		List<String> oldText = lines(h.get("old_text"));
		List<String> newText = lines(h.get("new_text"));
		if (!isId(id) || !isInt(h.get("old_start"), 1)
				|| !isInt(h.get("new_start"), 1) || oldText == null || newText == null) {
			return null;
		}
		return new Hunk((String) id, ((Long) h.get("old_start")).intValue(), ((Long) h.get("new_start")).intValue(), oldText,
				newText);
	}

	private static Parsed problem(String what) {
		return new Parsed(null, what);
	}

	/** Parse the text of {@code pi-<pid>.approval.json}; {@code pid} is the one in its name. */
	@SuppressWarnings("unchecked")
	public static Parsed parse(String text, long pid) {
		Object raw;
		try {
			raw = Json.parse(text, PiMessage.MAX_DEPTH);
		} catch (Json.ParseError e) {
			return problem("invalid JSON: " + e.getMessage());
		}
		if (!(raw instanceof Map)) return problem("not a JSON object");
		Map<String, Object> m = (Map<String, Object>) raw;
		if (!"pi-approval".equals(m.get("kind"))) return problem("kind: not \"pi-approval\"");
		if (!(m.get("pid") instanceof Long) || (Long) m.get("pid") != pid) {
			return problem("pid field " + m.get("pid") + " does not match the file name");
		}
		if (m.containsKey("pid_ns") && !(m.get("pid_ns") instanceof String)) return problem("pid_ns: not a string");
		if (!isLong(m.get("editor_pid"), 1)) return problem("editor_pid: not a pid");
		if (!(m.get("request") instanceof Map)) return problem("request: not an object");
		Map<String, Object> r = (Map<String, Object>) m.get("request");
		Object id = r.get("id");
		if (!isId(id)) {
			return problem("request.id: not a string of 1 to " + MAX_ID_BYTES + " bytes");
		}
		Object file = r.get("file");
		if (!(file instanceof String) || !((String) file).startsWith("/") || ((String) file).length() > 4096) {
			return problem("request.file: not an absolute path");
		}
		if (!(r.get("tool") instanceof String)) return problem("request.tool: not a string");
		if (!isLong(r.get("timeout_s"), 1)) return problem("request.timeout_s: not a positive integer");
		if (!(r.get("expires") instanceof Number) || !Double.isFinite(((Number) r.get("expires")).doubleValue())) {
			return problem("request.expires: not a finite number");
		}
		if (!(r.get("hunks") instanceof List)) return problem("request.hunks: not a list");
		int listed = ((List<Object>) r.get("hunks")).size();
		if (listed > MAX_HUNKS) return problem("request.hunks: " + listed + ", over the cap of " + MAX_HUNKS + ": refused");
		List<Hunk> hunks = new ArrayList<>();
		for (Object h : (List<Object>) r.get("hunks")) {
			Hunk good = hunk(h);
			if (good != null) hunks.add(good);
		}
		// PROTOCOL.md `files[].note`: one of three; any other refuses the request (never shown).
		Object rawNote = r.get("note");
		if (rawNote != null && !NOTES.contains(rawNote)) return problem("request.note: not binary, too large or unreadable");
		String note = (String) rawNote;
		long total = isInt(r.get("hunks_total"), 0) ? (Long) r.get("hunks_total") : hunks.size();
		return new Parsed(new Request(pid, (String) m.get("pid_ns"), (Long) m.get("editor_pid"), (String) id, (String) r.get("tool"), (String) file,
				Boolean.TRUE.equals(r.get("created")), note, hunks, total, (Long) r.get("timeout_s"),
				((Number) r.get("expires")).doubleValue()), null);
	}

	/** Has the request run out at {@code now} (seconds since the epoch)? pi stops waiting then. */
	public static boolean expired(Request r, double now) {
		return now > r.expires;
	}

	/** pi's own split (src/link/change-set.ts splitLines): no last empty line for a final newline. */
	static List<String> splitLines(String text) {
		List<String> out = new ArrayList<>();
		if (text.isEmpty()) return out;
		int from = 0;
		for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', from)) {
			out.add(text.substring(from, i));
			from = i + 1;
		}
		if (from < text.length()) out.add(text.substring(from));
		return out;
	}

	/**
	 * The proposal applied in memory to {@code text} (what the user sees: the document, or the file), or null
	 * when the hunks' old lines do not stand in it where the request says (the text is not the one pi read, or
	 * the request carries no hunks). Applied bottom up so earlier line numbers stay right. The result ends with
	 * a newline when {@code text} does (or, for an empty text, when it gets lines): the hunks do not carry it.
	 */
	public static String proposal(String text, Request r) {
		if (r.note != null || r.hunks.size() != r.hunksTotal) return null;
		List<String> lines = splitLines(text);
		List<Hunk> sorted = new ArrayList<>(r.hunks);
		Collections.sort(sorted, (a, b) -> Integer.compare(b.oldStart, a.oldStart));
		int above = Integer.MAX_VALUE;
		for (Hunk h : sorted) {
			int at = h.oldStart - 1;
			if (at < 0 || at + h.oldText.size() > lines.size() || at + h.oldText.size() > above) return null;
			if (!lines.subList(at, at + h.oldText.size()).equals(h.oldText)) return null;
			lines.subList(at, at + h.oldText.size()).clear();
			lines.addAll(at, h.newText);
			above = at;
		}
		if (lines.isEmpty()) return "";
		boolean newline = text.isEmpty() || text.endsWith("\n");
		return String.join("\n", lines) + (newline ? "\n" : "");
	}

	/** Why {@link #proposal} gave nothing for r on a text: for the user, one line. */
	public static String whyNoProposal(Request r) {
		if (r.note != null) return "pi sent no preview of it (" + r.note + ")";
		if (r.hunks.size() != r.hunksTotal) return "its hunks were not all readable";
		return "the text open in the IDE is not the one pi read (unsaved changes?)";
	}

	/** The one line a user is told: "pi wants to edit src/a.ts: 2 hunks" ({@code shown}: the path as shown). */
	public static String describe(Request r, String shown) {
		String verb = r.created ? "create" : "write".equals(r.tool) ? "overwrite" : "edit";
		String what = r.note != null ? "(" + r.note + ", no preview)" : r.hunksTotal + (r.hunksTotal == 1 ? " hunk" : " hunks");
		return "pi wants to " + verb + " " + shown + ": " + what;
	}

	/** {@code file} relative to {@code project} when inside it, else as it is. */
	public static String shownPath(String file, String project) {
		if (project != null && !project.isEmpty()) {
			String base = project.endsWith("/") ? project : project + "/";
			if (file.startsWith(base)) return file.substring(base.length());
		}
		return file;
	}

	/** {@code decisions} with one more, newest last, at most {@link #MAX_DECISIONS}. */
	public static List<Map<String, Object>> addDecision(List<Map<String, Object>> decisions, Request r, String decision) {
		if (!"accept".equals(decision) && !"reject".equals(decision)) {
			throw new IllegalArgumentException("a decision is accept or reject, not " + decision);
		}
		List<Map<String, Object>> out = new ArrayList<>(decisions);
		Map<String, Object> d = new LinkedHashMap<>();
		d.put("pi_pid", r.piPid);
		if (r.piNs != null) d.put("pi_ns", r.piNs);
		d.put("id", r.id);
		d.put("decision", decision);
		out.add(d);
		return new ArrayList<>(out.subList(Math.max(0, out.size() - MAX_DECISIONS), out.size()));
	}
}
