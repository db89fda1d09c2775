package pi.ide.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Protocol v0.3, pi to editor, pure: the message pi writes to {@code <state dir>/pi-<pid>.json}, its parser
 * (untrusted text in, a message or one problem out, never an exception), which changes this editor still has to
 * act on, and the {@code files} reports it writes back. The rules of editors/shared/pi-message.ts.
 */
public final class PiMessage {
	public static final int MAX_BYTES = 64 * 1024;
	public static final int MAX_CHANGED = 50;
	public static final int MAX_LAST_TURN = 50;
	/**
	 * PROTOCOL.md `files`: at most 200 reports; each pi's newest 20, and those on a change its newest message still
	 * lists (no clock, v0.5).
	 */
	public static final int MAX_FILE_REPORTS = 200;
	public static final int KEPT_FILE_REPORTS = 20;
	/** PROTOCOL.md "Limits": pi's files nest at most this many levels of lists and objects. */
	public static final int MAX_DEPTH = 16;
	private static final long MAX_PID = 2147483647L;
	private static final long MAX_SAFE = 9007199254740991L;
	private static final Pattern NAME = Pattern.compile("pi-([1-9][0-9]{0,9})\\.json");

	public static final class Change {
		public final String file;
		public final long seq;
		public final String tool;
		/** v0.5 (issue 26): the entry's {@code merge} as the message had it, unchecked ({@link Merge#parse}); null: none. */
		public final Object merge;

		public Change(String file, long seq, String tool) {
			this(file, seq, tool, null);
		}

		public Change(String file, long seq, String tool, Object merge) {
			this.file = file;
			this.seq = seq;
			this.tool = tool;
			this.merge = merge;
		}
	}

	public final String protocol;
	public final long pid;
	/** v0.5: pi's pid namespace as its file said ({@code "pid:[4026532455]"}), null when it said none. */
	public final String pidNs;
	public final String cwd;
	/** null: pi is connected to no editor. */
	public final Long editorPid;
	public final long seq;
	public final List<Change> changed;
	public final List<String> lastTurn;
	/** v0.5 send to pi: the latest send pi answered; null when absent or malformed (never fails the message). */
	public final Sent sent;

	/** pi's {@code sent} (v0.5): which editor's send, its id, its fate and an optional reason. */
	public static final class Sent {
		public final long editorPid;
		public final String id;
		public final String fate;
		public final String reason;

		Sent(long editorPid, String id, String fate, String reason) {
			this.editorPid = editorPid;
			this.id = id;
			this.fate = fate;
			this.reason = reason;
		}
	}

	@SuppressWarnings("unchecked")
	private static Sent parseSent(Object raw) {
		if (!(raw instanceof Map)) return null;
		Map<String, Object> m = (Map<String, Object>) raw;
		if (!isPid(m.get("editor_pid")) || !(m.get("id") instanceof String) || ((String) m.get("id")).isEmpty()
				|| !(m.get("fate") instanceof String)) return null;
		return new Sent((Long) m.get("editor_pid"), (String) m.get("id"), (String) m.get("fate"),
				m.get("reason") instanceof String ? (String) m.get("reason") : null);
	}

	private PiMessage(String protocol, long pid, String pidNs, String cwd, Long editorPid, long seq,
			List<Change> changed, List<String> lastTurn, Sent sent) {
		this.protocol = protocol;
		this.pid = pid;
		this.pidNs = pidNs;
		this.cwd = cwd;
		this.editorPid = editorPid;
		this.seq = seq;
		this.changed = Collections.unmodifiableList(changed);
		this.lastTurn = Collections.unmodifiableList(lastTurn);
		this.sent = sent;
	}

	/** A parsed message, or the one problem that made it unusable. */
	public static final class Parsed {
		public final PiMessage message;
		public final String problem;

		Parsed(PiMessage message, String problem) {
			this.message = message;
			this.problem = problem;
		}
	}

	/** This pi's identity ({@link PiIdentity#key}): its pid and namespace. */
	public String key() {
		return PiIdentity.key(pid, pidNs);
	}

	/** The pid in a {@code pi-<pid>.json} name (canonical decimal, at most 2^31-1), or -1 for any other name. */
	public static long pidOfName(String name) {
		Matcher m = NAME.matcher(name);
		if (!m.matches()) return -1;
		long pid = Long.parseLong(m.group(1));
		return pid <= MAX_PID ? pid : -1;
	}

	private static boolean isCount(Object v) {
		return v instanceof Long && (Long) v >= 0 && (Long) v <= MAX_SAFE;
	}

	private static boolean isPid(Object v) {
		return v instanceof Long && (Long) v >= 1 && (Long) v <= MAX_SAFE;
	}

	private static boolean isAbsolutePath(Object v) {
		return v instanceof String && !((String) v).isEmpty() && ((String) v).length() <= 4096 && ((String) v).startsWith("/");
	}

	private static Parsed problem(String what) {
		return new Parsed(null, what);
	}

	/** Parse a message's text. Unknown fields are accepted; lists are cut to the protocol's caps. */
	@SuppressWarnings("unchecked")
	public static Parsed parse(String text) {
		Object raw;
		try {
			raw = Json.parse(text, MAX_DEPTH);
		} catch (Json.ParseError e) {
			return problem("invalid JSON: " + e.getMessage());
		}
		if (!(raw instanceof Map)) return problem("not a JSON object");
		Map<String, Object> m = (Map<String, Object>) raw;
		if (!"pi".equals(m.get("kind"))) return problem("kind: not \"pi\"");
		if (!(m.get("protocol") instanceof String)) return problem("protocol: not a string");
		if (!isPid(m.get("pid"))) return problem("pid: not a positive integer");
		if (m.containsKey("pid_ns") && !(m.get("pid_ns") instanceof String)) return problem("pid_ns: not a string");
		if (!(m.get("cwd") instanceof String)) return problem("cwd: not a string");
		if (!(m.get("timestamp") instanceof Number)) return problem("timestamp: not a number");
		Object editor = m.get("editor_pid");
		if (editor != null && !isPid(editor)) return problem("editor_pid: not a pid or null");
		if (!m.containsKey("editor_pid")) return problem("editor_pid: not a pid or null");
		if (!isCount(m.get("seq"))) return problem("seq: not a non-negative integer");
		Object rawChanged = m.get("changed");
		if (!(rawChanged instanceof List)) return problem("changed: not an array");
		List<Change> changed = new ArrayList<>();
		List<Object> list = (List<Object>) rawChanged;
		for (int i = 0; i < list.size(); i++) {
			if (!(list.get(i) instanceof Map)) return problem("changed[" + i + "]: not an object");
			Map<String, Object> e = (Map<String, Object>) list.get(i);
			if (!isAbsolutePath(e.get("file"))) return problem("changed[" + i + "].file: not an absolute path");
			if (!isCount(e.get("seq"))) return problem("changed[" + i + "].seq: not a non-negative integer");
			if (!(e.get("tool") instanceof String)) return problem("changed[" + i + "].tool: not a string");
			changed.add(new Change((String) e.get("file"), (Long) e.get("seq"), (String) e.get("tool"), e.get("merge")));
		}
		Object rawTurn = m.get("last_turn");
		if (!(rawTurn instanceof List)) return problem("last_turn: not a list of absolute paths");
		List<String> lastTurn = new ArrayList<>();
		for (Object p : (List<Object>) rawTurn) {
			if (!isAbsolutePath(p)) return problem("last_turn: not a list of absolute paths");
			if (lastTurn.size() < MAX_LAST_TURN) lastTurn.add((String) p);
		}
		List<Change> newest = changed.subList(Math.max(0, changed.size() - MAX_CHANGED), changed.size());
		return new Parsed(new PiMessage((String) m.get("protocol"), (Long) m.get("pid"), (String) m.get("pid_ns"),
				(String) m.get("cwd"),
				(Long) editor, (Long) m.get("seq"), new ArrayList<>(newest), lastTurn, parseSent(m.get("sent"))), null);
	}

	/**
	 * The changes this editor ({@code ownPid}) still has to act on, one per file (its newest entry, in the order
	 * of those entries): none unless pi names this editor; entries newer than {@code handledSeq}; for a pi not
	 * handled before (null), only its newest batch.
	 */
	public List<Change> pending(long ownPid, Long handledSeq) {
		List<Change> out = new ArrayList<>();
		if (editorPid == null || editorPid != ownPid) return out;
		long newest = -1;
		for (Change c : changed) newest = Math.max(newest, c.seq);
		long since = handledSeq != null ? handledSeq : newest - 1;
		Map<String, Change> byFile = new LinkedHashMap<>();
		for (Change c : changed) {
			if (c.seq <= since) continue;
			byFile.remove(c.file); // re-insert: the newest entry of a file sets its place
			byFile.put(c.file, c);
		}
		out.addAll(byFile.values());
		return out;
	}

	/**
	 * held (newest last) with report replacing any earlier report of the same pi on the same file, then retained:
	 * keyed by pi too (its pid and namespace, {@link PiIdentity#keyOf}), so one pi's report never replaces another's
	 * before that pi read it.
	 */
	public static List<Map<String, Object>> addReport(List<Map<String, Object>> held, Map<String, Object> report,
			Map<String, List<Change>> listed) {
		List<Map<String, Object>> out = new ArrayList<>();
		for (Map<String, Object> h : held) {
			boolean same = h.get("file").equals(report.get("file"))
					&& PiIdentity.keyOf(h).equals(PiIdentity.keyOf(report));
			if (!same) out.add(h);
		}
		out.add(report);
		return retain(out, listed);
	}

	/**
	 * PROTOCOL.md's retention of {@code files} reports (held newest last), timing-free: each pi's newest
	 * KEPT_FILE_REPORTS, and every report on a change (file and seq) that its pi's newest message lists ({@code
	 * listed}: a pi's {@link PiIdentity#keyOf key} to its {@code changed}), at most MAX_FILE_REPORTS in all, the
	 * newest. One pi's listing keeps only that pi's reports.
	 */
	public static List<Map<String, Object>> retain(List<Map<String, Object>> held, Map<String, List<Change>> listed) {
		Map<String, Integer> perPi = new java.util.HashMap<>();
		List<Map<String, Object>> kept = new ArrayList<>();
		for (int i = held.size() - 1; i >= 0 && kept.size() < MAX_FILE_REPORTS; i--) {
			Map<String, Object> h = held.get(i);
			String key = PiIdentity.keyOf(h);
			int count = perPi.merge(key, 1, Integer::sum);
			if (count <= KEPT_FILE_REPORTS || lists(listed.get(key), h)) kept.add(h);
		}
		Collections.reverse(kept);
		return kept;
	}

	/** Does changed (null: no message) list the change report answers (its file at its seq)? */
	private static boolean lists(List<Change> changed, Map<String, Object> report) {
		if (changed == null) return false;
		for (Change c : changed) {
			if (c.file.equals(report.get("file")) && Long.valueOf(c.seq).equals(report.get("seq"))) return true;
		}
		return false;
	}
}
