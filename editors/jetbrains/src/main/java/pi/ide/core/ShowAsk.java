package pi.ide.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Protocol v0.5, the model shows a place and asks what is open (PROTOCOL.md, "v0.5: the model shows a place and asks
 * what is open"), the editor's half. While pi's {@code ide_show} or {@code ide_open_files} waits (at most 1 s), pi
 * writes {@code pi-<pid>[-<ns>].ask.json} naming this IDE; {@link #read} reads it under the checks of pi's message
 * (regular file of ours, no group/other bits, no link, 64 KiB, 16 levels, the name's pid and namespace, a live pi of
 * ours judged only in the editor's own namespace) and parses it (a malformed request is left out, never the others).
 * {@link Responder} answers each request once, by pi and id: a show goes to the IDE's list of places ({@link Place},
 * capped) with one inert notice and nothing else (the user's editor, caret and focus stay) unless the user's follow
 * setting opens it; an ask is answered from the open file documents (the active one first, {@code modified}, the
 * version, diagnostics of the named or every one, capped and dated as the state file's). The answers, the newest 16,
 * go to {@code <pid>.answers.json} by the state file's rules ({@link StateDir#write}). The TypeScript clients' rules
 * (editors/shared/show-ask.ts) in Java. Never throws for bad input.
 */
public final class ShowAsk {
	private ShowAsk() {}

	/** pi's request file at most (MAX_ASK_FILE_BYTES). */
	public static final int MAX_FILE_BYTES = 64 * 1024;
	/** Requests in one file at most (MAX_ASK_REQUESTS). */
	public static final int MAX_REQUESTS = 8;
	/** A show's note at most, in bytes of UTF-8 (MAX_SHOW_NOTE_BYTES). */
	public static final int MAX_NOTE_BYTES = 1024;
	/** Answers kept in the answers file (MAX_ANSWERS), newest last. */
	public static final int MAX_ANSWERS = 16;
	/** The answers file at most (MAX_ANSWERS_FILE_BYTES): the oldest answers go first. */
	public static final int MAX_ANSWERS_FILE_BYTES = 1024 * 1024;
	/** Buffers in one ask's answer (MAX_ASK_BUFFERS); {@code buffers_total} counts all. */
	public static final int MAX_BUFFERS = 200;
	/** Diagnostic items over one ask's answer (MAX_ASK_DIAGNOSTIC_ITEMS); 100 per buffer (Diagnostics.MAX_ITEMS). */
	public static final int MAX_DIAGNOSTIC_ITEMS = 200;
	/** Places kept in the list, newest last (the oldest go first). */
	public static final int MAX_PLACES = 100;
	/** Answered requests remembered (each is answered once). */
	static final int MAX_DONE = 64;
	/** What the answer's {@code list} says: the IDE's list of pi's places. */
	public static final String LIST = "places";

	private static final long MAX_LINE = Integer.MAX_VALUE;
	private static final long MAX_SAFE = 9007199254740991L;
	private static final Pattern NS = Pattern.compile("pid:\\[[0-9]+\\]");

	/** The answers file's name: {@code <pid>.answers.json}. */
	public static String fileName(long pid) {
		return pid + ".answers.json";
	}

	/** One request: a show ({@code file}, {@code line}, {@code endLine}, {@code note}) or an ask ({@code diagnostics}). */
	public static final class Request {
		public final String id;
		/** "show" or "ask". */
		public final String kind;
		/** A show's place; an ask's file when {@code diagnostics} is "file", else null. */
		public final String file;
		public final long line;
		public final Long endLine;
		public final String note;
		/** An ask's: "file", "all" or "none". */
		public final String diagnostics;
		public final double expires;

		Request(String id, String kind, String file, long line, Long endLine, String note, String diagnostics,
				double expires) {
			this.id = id;
			this.kind = kind;
			this.file = file;
			this.line = line;
			this.endLine = endLine;
			this.note = note;
			this.diagnostics = diagnostics;
			this.expires = expires;
		}
	}

	/** pi's request file as this editor keeps it. */
	public static final class AskFile {
		public final long piPid;
		/** pi's {@code pid_ns} as its file said (echoed as {@code pi_ns}), null when it said none. */
		public final String piNs;
		public final long editorPid;
		public final List<Request> requests;
		/** The first malformed request's problem (left out, the others kept), or null. */
		public final String problem;

		AskFile(long piPid, String piNs, long editorPid, List<Request> requests, String problem) {
			this.piPid = piPid;
			this.piNs = piNs;
			this.editorPid = editorPid;
			this.requests = Collections.unmodifiableList(requests);
			this.problem = problem;
		}

		/** The identity of the pi that asks ({@link PiIdentity#key}). */
		public String key() {
			return PiIdentity.key(piPid, piNs);
		}
	}

	/** A parsed file, or the one problem that made the whole file unusable. */
	public static final class Parsed {
		public final AskFile file;
		public final String problem;

		Parsed(AskFile file, String problem) {
			this.file = file;
			this.problem = problem;
		}
	}

	private static boolean isLine(Object v) {
		return v instanceof Long && (Long) v >= 1 && (Long) v <= MAX_LINE;
	}

	private static boolean isPath(Object v) {
		return v instanceof String && ((String) v).startsWith("/") && ((String) v).length() <= 4095
				&& ((String) v).indexOf('\0') < 0;
	}

	private static int utf8(String s) {
		return s.getBytes(StandardCharsets.UTF_8).length;
	}

	/** One request, or (a String) why it is malformed. */
	@SuppressWarnings("unchecked")
	static Object request(Object raw) {
		if (!(raw instanceof Map)) return "a request is not an object";
		Map<String, Object> r = (Map<String, Object>) raw;
		Object id = r.get("id");
		if (!(id instanceof String) || ((String) id).isEmpty() || utf8((String) id) > Approval.MAX_ID_BYTES) {
			return "a request's id is not 1 to " + Approval.MAX_ID_BYTES + " bytes";
		}
		Object expires = r.get("expires");
		if (!(expires instanceof Number) || !Double.isFinite(((Number) expires).doubleValue())) {
			return "a request has no expires";
		}
		double until = ((Number) expires).doubleValue();
		Object kind = r.get("kind");
		if ("show".equals(kind)) {
			Object file = r.get("file");
			Object line = r.get("line");
			Object end = r.get("end_line");
			Object note = r.get("note");
			if (!isPath(file) || !isLine(line)) return "a show has no absolute file and line";
			if (end != null && (!isLine(end) || (Long) end < (Long) line)) {
				return "a show's end_line is not a line at or after its line";
			}
			if (note != null && (!(note instanceof String) || utf8((String) note) > MAX_NOTE_BYTES)) {
				return "a show's note is not text of at most " + MAX_NOTE_BYTES + " bytes";
			}
			return new Request((String) id, "show", (String) file, (Long) line, (Long) end, (String) note, null, until);
		}
		if ("ask".equals(kind)) {
			Object diagnostics = r.get("diagnostics");
			if (!"file".equals(diagnostics) && !"all".equals(diagnostics) && !"none".equals(diagnostics)) {
				return "an ask's diagnostics is not file, all or none";
			}
			Object file = r.get("file");
			if ("file".equals(diagnostics) && !isPath(file)) return "an ask for a file's diagnostics names no absolute file";
			return new Request((String) id, "ask", "file".equals(diagnostics) ? (String) file : null, 0, null, null,
					(String) diagnostics, until);
		}
		return "a request's kind is not show or ask";
	}

	/** Parse the text of pi {@code pid}'s request file ({@code pid}: the name's). Never throws. */
	@SuppressWarnings("unchecked")
	public static Parsed parse(String text, long pid) {
		Object raw;
		try {
			raw = Json.parse(text, PiMessage.MAX_DEPTH);
		} catch (Json.ParseError e) {
			return new Parsed(null, "invalid JSON: " + e.getMessage());
		}
		if (!(raw instanceof Map)) return new Parsed(null, "not a JSON object");
		Map<String, Object> m = (Map<String, Object>) raw;
		if (!"pi-ask".equals(m.get("kind"))) return new Parsed(null, "kind: not \"pi-ask\"");
		if (!(m.get("pid") instanceof Long) || (Long) m.get("pid") != pid) {
			return new Parsed(null, "pid field " + m.get("pid") + " does not match the file name");
		}
		Object ns = m.get("pid_ns");
		if (m.containsKey("pid_ns") && !(ns instanceof String && NS.matcher((String) ns).matches())) {
			return new Parsed(null, "pid_ns: not a pid namespace (pid:[<digits>])");
		}
		Object editor = m.get("editor_pid");
		if (!(editor instanceof Long) || (Long) editor < 1 || (Long) editor > MAX_SAFE) {
			return new Parsed(null, "editor_pid: not a pid");
		}
		Object list = m.get("requests");
		if (!(list instanceof List) || ((List<Object>) list).size() > MAX_REQUESTS) {
			return new Parsed(null, "requests: not a list of at most " + MAX_REQUESTS);
		}
		List<Request> requests = new ArrayList<>();
		String problem = null;
		for (Object each : (List<Object>) list) {
			Object r = request(each);
			if (r instanceof Request) requests.add((Request) r);
			else if (problem == null) problem = (String) r;
		}
		return new Parsed(new AskFile(pid, (String) ns, (Long) editor, requests, problem), null);
	}

	/** What reading one of pi's request files gave. */
	public static final class Read {
		/** "ask" (naming this editor, of a live pi of ours), "gone", "dead", "elsewhere" or "problem". */
		public final String kind;
		public final AskFile file;
		public final String problem;

		Read(String kind, AskFile file, String problem) {
			this.kind = kind;
			this.file = file;
			this.problem = problem;
		}
	}

	/**
	 * Read {@code dir/name} (a {@code pi-<pid>[-<ns>].ask.json}) as editor {@code ownPid} in pid namespace
	 * {@code ownNs}: the checks of pi's message ({@link StateDir#readPrivate}, {@link PiReader#liveness}).
	 */
	public static Read read(Path dir, String name, long uid, PiReader.PidProbe probe, long ownPid, String ownNs) {
		PiIdentity.Name fromName = PiIdentity.parse(name);
		if (fromName == null || !"ask".equals(fromName.kind)) return new Read("problem", null, "is not named pi-<pid>.ask.json");
		StateDir.Read read = StateDir.readPrivate(dir.resolve(name), uid, MAX_FILE_BYTES);
		if (read.gone) return new Read("gone", null, null);
		if (read.problem != null) return new Read("problem", null, read.problem);
		Parsed parsed = parse(read.text, fromName.pid);
		if (parsed.problem != null) return new Read("problem", null, "invalid request: " + parsed.problem);
		String ns = PiIdentity.disagrees(fromName, parsed.file.piNs);
		if (ns != null) return new Read("problem", null, "invalid request: " + ns);
		if (parsed.file.editorPid != ownPid) return new Read("elsewhere", null, null);
		switch (PiReader.liveness(fromName, probe, ownNs)) {
			case "alive": return new Read("ask", parsed.file, null);
			case "dead": return new Read("dead", null, null);
			case "foreign": return new Read("problem", null, "its pid belongs to another user's process: refused");
			default: return new Read("problem", null, "cannot tell whether its pi is running: ignored");
		}
	}

	/** The model's note as one line of inert text: control characters (line breaks, escapes) become spaces. */
	public static String inertNote(String note) {
		return note.replaceAll("[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]+", " ").trim();
	}

	/** The show's one notice: "pi shows src/b.ts:2-3: look here" ({@code shown}: the path as the user knows it). */
	public static String describe(Request show, String shown) {
		String lines = show.endLine != null && show.endLine != show.line ? show.line + "-" + show.endLine
				: Long.toString(show.line);
		String note = show.note == null ? "" : inertNote(show.note);
		return "pi shows " + shown + ":" + lines + (note.isEmpty() ? "" : ": " + note);
	}

	/** A place pi showed, as the list holds it. */
	public static final class Place {
		public final String file;
		public final long line;
		public final Long endLine;
		/** The entry's text: "pi: <note>" (inert), or "pi". */
		public final String text;

		public Place(String file, long line, Long endLine, String text) {
			this.file = file;
			this.line = line;
			this.endLine = endLine;
			this.text = text;
		}

		public Map<String, Object> toMap() {
			Map<String, Object> m = new LinkedHashMap<>();
			m.put("file", file);
			m.put("line", line);
			m.put("end_line", endLine);
			m.put("text", text);
			return m;
		}
	}

	/** The list entry for a show. */
	public static Place placeOf(Request show) {
		String note = show.note == null ? "" : inertNote(show.note);
		return new Place(show.file, show.line, show.endLine, note.isEmpty() ? "pi" : "pi: " + note);
	}

	/** An open file document as the host knows it, for an ask's answer. */
	public static final class OpenDocument {
		public final String file;
		public final boolean modified;
		public final long version;
		public final long linesTotal;
		public final boolean active;
		/** Its diagnostics as the state file carries them ({@link Diagnostics#summarize}: dated), null: none reported. */
		public final Map<String, Object> diagnostics;

		public OpenDocument(String file, boolean modified, long version, long linesTotal, boolean active,
				Map<String, Object> diagnostics) {
			this.file = file;
			this.modified = modified;
			this.version = version;
			this.linesTotal = linesTotal;
			this.active = active;
			this.diagnostics = diagnostics;
		}

		/** Is this the document of {@code path} (pi's: by path, or by real path)? */
		boolean is(String path) {
			if (path == null) return false;
			if (path.equals(file)) return true;
			try {
				return Paths.get(path).toRealPath().equals(Paths.get(file).toRealPath());
			} catch (IOException | RuntimeException e) {
				return false;
			}
		}
	}

	/**
	 * The answer to an ask (without its head) from the open file documents: the active one first, at most
	 * {@link #MAX_BUFFERS}; the named file's diagnostics (or every one's), at most 100 items each and
	 * {@link #MAX_DIAGNOSTIC_ITEMS} in all ({@code total} still counts them all).
	 */
	@SuppressWarnings("unchecked")
	public static Map<String, Object> answerAsk(Request ask, List<OpenDocument> documents) {
		List<OpenDocument> ordered = new ArrayList<>();
		for (OpenDocument d : documents) if (d.active) ordered.add(d);
		for (OpenDocument d : documents) if (!d.active) ordered.add(d);
		int room = MAX_DIAGNOSTIC_ITEMS;
		List<Object> buffers = new ArrayList<>();
		for (OpenDocument d : ordered.subList(0, Math.min(ordered.size(), MAX_BUFFERS))) {
			Map<String, Object> b = new LinkedHashMap<>();
			b.put("file", d.file);
			b.put("modified", d.modified);
			b.put("version", d.version);
			b.put("lines_total", d.linesTotal);
			b.put("active", d.active);
			boolean named = "all".equals(ask.diagnostics) || ("file".equals(ask.diagnostics) && d.is(ask.file));
			if (named) {
				Map<String, Object> report = null;
				if (d.diagnostics != null && d.diagnostics.get("items") instanceof List) {
					List<Object> items = (List<Object>) d.diagnostics.get("items");
					List<Object> kept = new ArrayList<>(items.subList(0, Math.min(items.size(),
							Math.min(room, Diagnostics.MAX_ITEMS))));
					room -= kept.size();
					report = new LinkedHashMap<>(d.diagnostics);
					report.put("items", kept);
				}
				b.put("diagnostics", report);
			}
			buffers.add(b);
		}
		Map<String, Object> answer = new LinkedHashMap<>();
		answer.put("kind", "ask");
		answer.put("buffers", buffers);
		answer.put("buffers_total", ordered.size());
		return answer;
	}

	/** What the IDE does with a request. Called on the client's thread; never throws into it (a failure is caught). */
	public interface Host {
		/** The open file documents now. */
		List<OpenDocument> documents();

		/** The user's follow setting (off by default): open a shown place at once. */
		boolean follow();

		/** Open the place (only with follow on), without blocking; false when it cannot. */
		boolean open(Place place);

		/** The place went to the list: show the list's new entry and the one notice line (inert). */
		void shown(Place place, String notice);

		/** The path as the user knows it (relative to the project), for the notice. */
		String shownPath(String file);
	}

	/** One editor's answers: each request of a live pi naming it answered once, the newest 16 kept on disk. */
	public static final class Responder {
		private final long pid;
		private final Path dir;
		private final long uid;
		private final List<Map<String, Object>> answers = new ArrayList<>();
		private final Set<String> done = new LinkedHashSet<>();
		private final List<Place> places = new ArrayList<>();
		private boolean written;

		public Responder(long pid, Path dir, long uid) {
			this.pid = pid;
			this.dir = dir;
			this.uid = uid;
		}

		/** The places in the list, oldest first. Their own lock: never held while the host is called. */
		public List<Place> places() {
			synchronized (places) {
				return new ArrayList<>(places);
			}
		}

		/** The user cleared the list. */
		public void clearPlaces() {
			synchronized (places) {
				places.clear();
			}
		}

		/**
		 * Answer the new, unexpired requests of {@code file} (read and checked: a live pi of ours naming this editor)
		 * at {@code now} (epoch seconds). Returns why the answers could not be written, or null.
		 */
		public synchronized String receive(AskFile file, Host host, double now) {
			boolean answered = false;
			for (Request r : file.requests) {
				String key = file.key() + ":" + r.id;
				if (done.contains(key) || r.expires < now) continue;
				done.add(key);
				if (done.size() > MAX_DONE) done.remove(done.iterator().next());
				Map<String, Object> answer = new LinkedHashMap<>();
				answer.put("pi_pid", file.piPid);
				if (file.piNs != null) answer.put("pi_ns", file.piNs);
				answer.put("id", r.id);
				answer.putAll(answerOf(r, host));
				answers.add(answer);
				answered = true;
			}
			if (!answered) return null;
			while (answers.size() > MAX_ANSWERS) answers.remove(0);
			return write(now);
		}

		private Map<String, Object> answerOf(Request r, Host host) {
			Map<String, Object> out = new LinkedHashMap<>();
			try {
				if ("ask".equals(r.kind)) return answerAsk(r, host.documents());
				Place place = placeOf(r);
				synchronized (places) {
					places.add(place);
					while (places.size() > MAX_PLACES) places.remove(0);
				}
				boolean opened = host.follow() && host.open(place);
				host.shown(place, describe(r, host.shownPath(r.file)));
				out.put("kind", "show");
				out.put("status", opened ? "opened" : "listed");
				out.put("list", LIST);
				out.put("reason", null);
			} catch (RuntimeException e) {
				out.clear();
				out.put("kind", r.kind);
				if ("ask".equals(r.kind)) {
					out.put("buffers", new ArrayList<Object>());
					out.put("buffers_total", 0);
				} else {
					out.put("status", "refused");
					out.put("list", null);
					String why = Send.oneLine("the editor failed: " + e);
					out.put("reason", why.length() > 200 ? why.substring(0, 200) : why);
				}
			}
			return out;
		}

		private String write(double now) {
			for (;;) {
				Map<String, Object> file = new LinkedHashMap<>();
				file.put("protocol", "0.5");
				file.put("kind", "editor-answers");
				file.put("pid", pid);
				file.put("timestamp", now);
				file.put("answers", answers);
				byte[] bytes = Json.write(file).getBytes(StandardCharsets.UTF_8);
				if (bytes.length <= MAX_ANSWERS_FILE_BYTES) {
					StateDir.Result made = StateDir.create(dir, uid);
					if (!made.ok()) return made.message;
					StateDir.Result result = StateDir.write(dir, fileName(pid), bytes, uid);
					if (!result.ok()) return result.message;
					written = true;
					return null;
				}
				if (answers.isEmpty()) return "the answers would not fit in their file";
				answers.remove(0);
			}
		}

		/** Remove the answers file this editor wrote (a clean exit, with the state file). */
		public synchronized void dispose() {
			if (!written) return;
			written = false;
			StateDir.remove(dir, fileName(pid), uid);
		}
	}
}
