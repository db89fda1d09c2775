package pi.ide.driver;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import pi.ide.core.Approval;
import pi.ide.core.ApprovalAgainst;
import pi.ide.core.Approvals;
import pi.ide.core.Client;
import pi.ide.core.Diagnostics;
import pi.ide.core.FrozenLines;
import pi.ide.core.Inbox;
import pi.ide.core.Json;
import pi.ide.core.Merge;
import pi.ide.core.PathFacts;
import pi.ide.core.PiIdentity;
import pi.ide.core.PiMessage;
import pi.ide.core.Reload;
import pi.ide.core.Send;
import pi.ide.core.ShowAsk;
import pi.ide.core.Snapshot;
import pi.ide.core.StateDir;
import pi.ide.core.Text;
import pi.ide.core.UnsavedBuffers;

/**
 * The headless driver: the JetBrains client's own code (the core and its {@link Client}) run without an IDE,
 * for one project window, as the plugin runs it. It writes the state file, answers pi's v0.3 messages as the
 * plugin's decisions say (over plain text buffers standing where the IDE's documents would), and stays alive
 * until stdin closes or a "quit" command comes. Usage (editors/jetbrains/README.md):
 *
 * <pre>
 * java -jar editors/jetbrains/build/core.jar --project DIR [--file FILE] [--cursor L:C] [--select L:C-L:C]
 *      [--product NAME] [--version V] [--window DIR[=FILE]]...
 * </pre>
 *
 * {@code --window} adds another open project window (the IDE's other windows, touched earlier), showing FILE
 * when given: the state file then lists it in {@code windows}.
 *
 * Positions are the protocol's (1-based line, 1-based byte column; a selection's end inclusive). Commands are
 * JSON lines on stdin ({"cmd":"cursor","line":3,"column":1}); each gets one JSON line on stdout.
 */
public final class Driver implements Inbox.Host, Client.Listener {
	/** One open document: its text, whether unsaved, its version and what its path was when read. */
	static final class Buffer {
		String text;
		boolean modified;
		long version = 1;
		PathFacts readFrom;
		Map<String, Object> diagnostics;
		/** The driver's undo (issue 26): the text and modified flag before each user edit and each merge of pi's. */
		final java.util.ArrayDeque<Object[]> undo = new java.util.ArrayDeque<>();

		/** Record the state before an edit: one undo step. */
		void step() {
			undo.push(new Object[] {text, modified});
		}
	}

	private final String project;
	private final Snapshot.Ide ide;
	private final Client client;
	/** v0.5 send to pi: the plugin's "Send to pi" actions' desk. */
	private final Send.Desk sends;
	/** The pi the next send's list picks (the "send" command's {@code pick}: the driver's stand-in for the list). */
	private Long pickPid;
	private final Map<String, Buffer> buffers = new LinkedHashMap<>();
	/** Other project windows: their project path and the file each shows (null: none). */
	private final Map<String, String> otherWindows = new LinkedHashMap<>();
	private final List<String> messages = Collections.synchronizedList(new ArrayList<String>());
	private String active;
	private Text.HostPosition cursor = new Text.HostPosition(0, 0);
	private Text.HostPosition anchor;
	private Text.HostPosition head;
	/** v0.5 show: the plugin's follow setting (off by default): a shown place is opened. */
	private volatile boolean showFollow;

	Driver(String project, String product, String version, long pid, Path dir) {
		this.project = project;
		this.ide = new Snapshot.Ide(pid, PiIdentity.ownNamespace(), product, version);
		this.client = new Client(pid, dir, StateDir.ownUid(), this, System::currentTimeMillis);
		this.sends = new Send.Desk(pid, dir, StateDir.ownUid());
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		List<String> windowArgs = new ArrayList<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			if ("--window".equals(args[i])) windowArgs.add(args[i + 1]);
			else options.put(args[i], args[i + 1]);
		}
		String project = options.get("--project");
		if (project == null) {
			System.err.println("usage: java -jar core.jar --project DIR [--file FILE] [--cursor L:C] [--select L:C-L:C]"
					+ " [--product NAME] [--version V]");
			System.exit(2);
		}
		Path dir = StateDir.resolve(System.getenv());
		Driver driver = new Driver(Paths.get(project).toAbsolutePath().normalize().toString(),
				options.getOrDefault("--product", "IntelliJ IDEA"), options.getOrDefault("--version", "2025.2"), StateDir.ownPid(), dir);
		PrintStream out = new PrintStream(System.out, true, "UTF-8");
		synchronized (driver) {
			for (String window : windowArgs) {
				int eq = window.indexOf('=');
				String dirOf = eq < 0 ? window : window.substring(0, eq);
				driver.otherWindows.put(Paths.get(dirOf).toAbsolutePath().normalize().toString(),
						eq < 0 ? null : Paths.get(window.substring(eq + 1)).toAbsolutePath().normalize().toString());
			}
			if (options.containsKey("--file")) driver.open(options.get("--file"));
			if (options.containsKey("--cursor")) driver.cursor = driver.host(position(options.get("--cursor")));
			if (options.containsKey("--select")) {
				String[] ends = options.get("--select").split("-");
				driver.select(position(ends[0]), position(ends[1]));
			}
			driver.publish(true);
		}
		driver.client.flush();
		driver.client.listen();
		Map<String, Object> ready = new LinkedHashMap<>();
		ready.put("ready", true);
		ready.put("pid", driver.ide.pid);
		ready.put("state_file", driver.client.stateFile().toString());
		out.println(Json.write(ready));
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			if (line.trim().isEmpty()) continue;
			Map<String, Object> reply;
			try {
				reply = driver.command(line);
			} catch (Exception e) {
				reply = new LinkedHashMap<>();
				reply.put("ok", false);
				reply.put("error", String.valueOf(e));
			}
			out.println(Json.write(reply));
			if ("quit".equals(reply.get("done"))) break;
		}
		driver.client.dispose();
		driver.sends.dispose();
		System.exit(0);
	}

	static Text.Position position(String text) {
		String[] parts = text.split(":");
		return new Text.Position(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
	}

	private Text.Position position(Object raw) {
		Map<?, ?> m = (Map<?, ?>) raw;
		return new Text.Position(((Number) m.get("line")).intValue(), ((Number) m.get("column")).intValue());
	}

	/** A wire position to the host's (0-based line, UTF-16 offset), in the active buffer. */
	private Text.HostPosition host(Text.Position p) {
		Text.Lines lines = new FrozenLines(activeBuffer().text);
		int line = Math.max(0, Math.min(p.line - 1, lines.count() - 1));
		return new Text.HostPosition(line, Text.characterOf(lines.text(line), p.column));
	}

	private Buffer activeBuffer() {
		Buffer b = buffers.get(active);
		if (b == null) throw new IllegalStateException("no file is open");
		return b;
	}

	/** Inclusive end: the selection runs to just past the character at end. */
	private void select(Text.Position start, Text.Position end) {
		anchor = host(start);
		Text.HostPosition last = host(end);
		String line = new FrozenLines(activeBuffer().text).text(last.line);
		int width = last.character < line.length() && Character.isHighSurrogate(line.charAt(last.character)) ? 2 : 1;
		head = new Text.HostPosition(last.line, Math.min(line.length(), last.character + width));
		cursor = last;
	}

	private void open(String file) throws IOException {
		String path = Paths.get(file).toAbsolutePath().normalize().toString();
		if (!buffers.containsKey(path)) {
			Buffer b = new Buffer();
			b.readFrom = PathFacts.of(Paths.get(path));
			b.text = Files.exists(Paths.get(path)) ? new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8) : "";
			buffers.put(path, b);
		}
		active = path;
		cursor = new Text.HostPosition(0, 0);
		anchor = null;
		head = null;
	}

	/** Hand the current state to the client, as the plugin's listeners do. */
	private synchronized void publish(boolean urgent) {
		Snapshot.Document document = null;
		if (active != null) {
			Buffer b = buffers.get(active);
			document = new Snapshot.Document(project + ":" + active, active, Paths.get(active).getFileName().toString(),
					new FrozenLines(b.text), cursor, anchor, head, b.modified, b.version, b.diagnostics);
		}
		List<Snapshot.Window> windows = new ArrayList<>();
		windows.add(new Snapshot.Window(project, document, null));
		for (Map.Entry<String, String> other : otherWindows.entrySet()) {
			Snapshot.Document shown = null;
			if (other.getValue() != null) {
				String text;
				try {
					text = new String(Files.readAllBytes(Paths.get(other.getValue())), StandardCharsets.UTF_8);
				} catch (IOException e) {
					text = "";
				}
				shown = new Snapshot.Document(other.getKey() + ":" + other.getValue(), other.getValue(),
						Paths.get(other.getValue()).getFileName().toString(), new FrozenLines(text),
						new Text.HostPosition(0, 0), null, null, false, 1L, null);
			}
			windows.add(new Snapshot.Window(other.getKey(), shown, null));
		}
		client.update(new Snapshot.State(ide, windows, null, null), urgent);
	}

	@SuppressWarnings("unchecked")
	synchronized Map<String, Object> command(String line) throws Exception {
		Map<String, Object> c = (Map<String, Object>) Json.parse(line);
		Map<String, Object> reply = new LinkedHashMap<>();
		reply.put("ok", true);
		String file = c.get("file") instanceof String ? Paths.get((String) c.get("file")).toAbsolutePath().normalize().toString() : null;
		switch (String.valueOf(c.get("cmd"))) {
			case "open":
				open(file);
				publish(true);
				break;
			case "cursor":
				cursor = host(position(c));
				anchor = null;
				head = null;
				publish(false);
				break;
			case "select":
				select(position(c.get("start")), position(c.get("end")));
				publish(true);
				break;
			case "clear":
				anchor = null;
				head = null;
				publish(true);
				break;
			case "setLines": {
				Buffer b = buffers.get(file);
				if (b == null) throw new IllegalArgumentException("not open: " + file);
				b.step();
				b.text = String.join("\n", (List<String>) c.get("lines")) + "\n";
				b.modified = true;
				b.version++;
				publish(false);
				break;
			}
			case "editLines": {
				// The user's own edit (issue 26's kit): `remove` lines from `line` (1-based) replaced by `insert`, one undo step.
				Buffer b = buffers.get(file);
				if (b == null) throw new IllegalArgumentException("not open: " + file);
				List<String> lines = Merge.splitLines(b.text);
				int from = Math.min(((Number) c.get("line")).intValue() - 1, lines.size());
				int to = Math.min(from + ((Number) c.get("remove")).intValue(), lines.size());
				List<Merge.TextEdit> edits = Merge.textEdits(b.text,
						Collections.singletonList(new Merge.LineEdit(from, to, (List<String>) c.get("insert"))));
				b.step();
				b.text = Merge.apply(b.text, edits);
				b.modified = true;
				b.version++;
				publish(false);
				break;
			}
			case "undo": {
				Buffer b = buffers.get(file);
				if (b == null) throw new IllegalArgumentException("not open: " + file);
				Object[] before = b.undo.poll();
				reply.put("undone", before != null);
				if (before != null) {
					b.text = (String) before[0];
					b.modified = (Boolean) before[1];
					b.version++;
					publish(false);
				}
				break;
			}
			case "save": {
				Buffer b = buffers.get(file);
				if (b == null) throw new IllegalArgumentException("not open: " + file);
				Files.write(Paths.get(file), b.text.getBytes(StandardCharsets.UTF_8));
				b.modified = false;
				b.readFrom = PathFacts.of(Paths.get(file));
				publish(true);
				break;
			}
			case "buffer": {
				Buffer b = buffers.get(file);
				if (b != null) {
					Map<String, Object> m = new LinkedHashMap<>();
					m.put("text", b.text);
					m.put("modified", b.modified);
					reply.put("buffer", m);
				} else {
					reply.put("buffer", null);
				}
				break;
			}
			case "loaded":
				reply.put("files", new ArrayList<Object>(buffers.keySet()));
				break;
			case "diagnostics": {
				Buffer b = buffers.get(file);
				if (b == null) throw new IllegalArgumentException("not open: " + file);
				List<Diagnostics.Item> items = new ArrayList<>();
				for (Object raw : (List<Object>) c.get("items")) {
					Map<String, Object> d = (Map<String, Object>) raw;
					items.add(new Diagnostics.Item((String) d.get("severity"), ((Number) d.get("line")).intValue(),
							((Number) d.get("column")).intValue(), null, null, (String) d.get("message"),
							(String) d.get("source"), null));
				}
				b.diagnostics = Diagnostics.summarize(items, b.version);
				client.diagnosticsChanged(this);
				publish(true);
				break;
			}
			case "messages":
				reply.put("messages", new ArrayList<Object>(messages));
				break;
			case "approval":
				reply.put("request", pendingRequest());
				break;
			case "accept":
			case "reject": {
				// As the plugin's actions answer: the request named (a notification's), else the one pi waits on.
				Approvals.Answer answer = client.decide(c.get("id") instanceof String ? (String) c.get("id") : null,
						(String) c.get("cmd"), project);
				reply.put("answered", answer.recorded);
				reply.put("said", answer.said);
				messages.add(answer.said);
				break;
			}
			case "send": {
				// The plugin's actions "Send to pi" (mode draft) and "Send to pi now" (mode now), with the form and the
				// words the user typed; `pick`: the pid the user picks when several pis name this IDE.
				pickPid = c.get("pick") instanceof Number ? ((Number) c.get("pick")).longValue() : null;
				String said = send(c.get("form") instanceof String ? (String) c.get("form") : "default",
						"now".equals(c.get("mode")) ? "now" : "draft", c.get("prompt") instanceof String ? (String) c.get("prompt") : "");
				reply.put("said", said);
				reply.put("id", said == null ? sends.lastId() : null);
				if (said != null) messages.add(said);
				break;
			}
			case "places": {
				// v0.5 show: the IDE's list of pi's places, oldest first (the plugin's "pi's places" list).
				List<Object> places = new ArrayList<>();
				for (ShowAsk.Place p : client.asks().places()) places.add(p.toMap());
				reply.put("places", places);
				break;
			}
			case "showFollow":
				showFollow = Boolean.TRUE.equals(c.get("on"));
				break;
			case "flush":
				client.flush();
				break;
			case "quit":
				reply.put("done", "quit");
				break;
			default:
				throw new IllegalArgumentException("unknown command: " + c.get("cmd"));
		}
		return reply;
	}

	/** A send as the plugin's action makes it; null when written, else the one line told to the user. */
	private String send(String form, String mode, String prompt) {
		Buffer b = active == null ? null : buffers.get(active);
		Send.Item item = Send.item(form, active, new FrozenLines(b == null ? "" : b.text), cursor, anchor, head,
				b == null ? null : b.diagnostics, null);
		if (item.item == null) return item.notice;
		String[] why = new String[1];
		PiMessage pi = sends.pick(Send.naming(client.livePis(), ide.pid), choices -> {
			for (PiMessage m : choices) if (pickPid != null && m.pid == pickPid) return m;
			return null;
		}, why);
		if (pi == null) return why[0];
		return sends.write(pi, item.item, mode, prompt, System.currentTimeMillis() / 1000.0);
	}

	/** The request pi waits on as the plugin would show it (its notice, and its "Show change" proposal), or null. */
	private Map<String, Object> pendingRequest() {
		Approval.Request r = client.approvals().seen() != null ? client.approvals().seen() : client.approvals().current();
		if (r == null) return null;
		Map<String, Object> m = new LinkedHashMap<>();
		m.put("pi_pid", r.piPid);
		m.put("id", r.id);
		m.put("file", r.file);
		// Issue 26 item 6: a buffer with unsaved changes shows the proposal against it (the plugin's "Show change" too).
		ApprovalAgainst.View view = ApprovalAgainst.of(r, this);
		m.put("notice", ApprovalAgainst.notice(r, Approval.shownPath(r.file, project), view));
		Buffer b = buffers.get(r.file);
		String current = b != null ? b.text : PathFacts.readRegular(r.file);
		m.put("proposal", view != null ? view.text : current == null ? null : Approval.proposal(current, r));
		m.put("touch", view == null ? null : ApprovalAgainst.touchPhrase(view.places, true));
		return m;
	}

	// ---- Client.Listener ----

	/** v0.5 show and ask, as the plugin answers them, over the driver's buffers. */
	public ShowAsk.Host showAsk() {
		return showAskHost;
	}

	private final ShowAsk.Host showAskHost = new ShowAsk.Host() {
		public List<ShowAsk.OpenDocument> documents() {
			synchronized (Driver.this) {
				List<ShowAsk.OpenDocument> out = new ArrayList<>();
				for (Map.Entry<String, Buffer> e : buffers.entrySet()) {
					Buffer b = e.getValue();
					out.add(new ShowAsk.OpenDocument(e.getKey(), b.modified, b.version, Text.countLines(new FrozenLines(b.text)),
							e.getKey().equals(active), b.diagnostics));
				}
				return out;
			}
		}

		public boolean follow() {
			return showFollow;
		}

		public boolean open(ShowAsk.Place place) {
			synchronized (Driver.this) {
				try {
					Driver.this.open(place.file);
				} catch (IOException | RuntimeException e) {
					return false;
				}
				cursor = host(new Text.Position((int) place.line, 1));
				publish(true);
				return true;
			}
		}

		public void shown(ShowAsk.Place place, String notice) {
			messages.add(notice);
		}

		public String shownPath(String file) {
			return Approval.shownPath(file, project);
		}
	};

	public void warn(String message) {
		messages.add(message);
		System.err.println(message);
	}

	public void onMessage(PiMessage message) {
		client.handle(message, this);
		publish(true);
		String answered = sends.answered(message);
		if (answered != null) messages.add(answered);
	}

	public void approvalAsked(Approval.Request r) {
		// As the plugin's notification says it: with the user's unsaved lines a hunk touches (issue 26 item 6).
		messages.add(ApprovalAgainst.notice(r, Approval.shownPath(r.file, project), ApprovalAgainst.of(r, this)));
	}

	public void approvalEnded(Approval.Request r, String why) {
		messages.add("pi-ide-context: pi's request to change " + Approval.shownPath(r.file, project) + " ended: " + why);
	}

	/** As the plugin hands over FileDocumentManager's unsaved documents: the modified buffers, the active one first. */
	public synchronized List<UnsavedBuffers.Dirty> unsavedBuffers() {
		List<UnsavedBuffers.Dirty> out = new ArrayList<>();
		Buffer current = active == null ? null : buffers.get(active);
		if (current != null && current.modified) out.add(new UnsavedBuffers.Dirty(active, current.version, new FrozenLines(current.text)));
		for (Map.Entry<String, Buffer> e : buffers.entrySet()) {
			if (e.getValue().modified && !e.getKey().equals(active)) {
				out.add(new UnsavedBuffers.Dirty(e.getKey(), e.getValue().version, new FrozenLines(e.getValue().text)));
			}
		}
		return out;
	}

	// ---- Inbox.Host: the plugin's decisions over plain buffers ----

	public synchronized Reload.Facts facts(String file) {
		Buffer b = buffers.get(file);
		if (b == null) return new Reload.Facts(false, false, Reload.PathKind.UNKNOWN, null, Reload.PathKind.UNKNOWN, null, false);
		PathFacts now = PathFacts.of(Paths.get(file));
		boolean same = false;
		if (!b.modified && (now.kind == Reload.PathKind.REGULAR || now.kind == Reload.PathKind.LINK_TO_REGULAR)) {
			try {
				same = b.text.equals(new String(Files.readAllBytes(Paths.get(now.realPath)), StandardCharsets.UTF_8));
			} catch (IOException e) {
				same = false;
			}
		}
		return new Reload.Facts(true, b.modified, b.readFrom.kind, b.readFrom.realPath, now.kind, now.realPath, same);
	}

	public synchronized void reload(String file) {
		Buffer b = buffers.get(file);
		try {
			PathFacts now = PathFacts.of(Paths.get(file));
			b.text = new String(Files.readAllBytes(Paths.get(now.realPath)), StandardCharsets.UTF_8);
			b.version++;
			b.readFrom = now;
		} catch (IOException | RuntimeException e) {
			warn("pi-ide-context: cannot reload " + file + ": " + e);
		}
	}

	public synchronized Long version(String file) {
		Buffer b = buffers.get(file);
		return b == null ? null : b.version;
	}

	public boolean diagnosticsExpected(String file) {
		return false;
	}

	public synchronized Map<String, Object> diagnostics(String file) {
		Buffer b = buffers.get(file);
		return b == null ? null : b.diagnostics;
	}

	public void notifyModified(String file, String notice) {
		messages.add(notice);
	}

	public synchronized String documentText(String file) {
		Buffer b = buffers.get(file);
		return b == null || !b.modified ? null : b.text;
	}

	/** As the plugin's WriteCommandAction: one undo step of its own, the document stays modified, nothing saved. */
	public synchronized boolean applyMerge(String file, String text, List<Merge.TextEdit> edits) {
		Buffer b = buffers.get(file);
		if (b == null || !b.text.equals(text)) return false;
		b.step();
		b.text = Merge.apply(b.text, edits);
		b.version++;
		return true;
	}
}
