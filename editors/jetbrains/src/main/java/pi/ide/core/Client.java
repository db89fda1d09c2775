package pi.ide.core;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The client's I/O shell around the pure core, shared by the IDE plugin and the headless driver: the latest
 * snapshot handed over by the editor's event thread, a debounced write (200 ms for cursor and text, at once for
 * switches and selections) on one background thread, unchanged states not written again, pi's messages read
 * from the state directory (a WatchService plus a one-second poll) and handed to the {@link Inbox}, and the file
 * removed on {@link #dispose}. Nothing here throws into the caller: failures become one warning per streak.
 */
public final class Client {
	public static final long DEBOUNCE_MS = 200;
	private static final long POLL_MS = 1000;

	/** What the client tells its host. */
	public interface Listener {
		/** One line for the user, once per failure streak (a notification, never a modal dialog). */
		void warn(String message);

		/** The host runs this where it may touch documents (the IDE: a write-safe EDT call), and waits for it. */
		void onMessage(PiMessage message);

		/**
		 * v0.4: pi waits for the user's decision on r (a new request of a live pi of ours naming this editor).
		 * Tell the user without blocking or taking focus. Called on the client's thread. A host that shows
		 * nothing (a test's) keeps the default: the request can still be answered through {@link #decide}.
		 */
		default void approvalAsked(Approval.Request r) {}

		/** pi no longer waits on r ({@code why}: answered, ran out, pi gone, ...): expire what told the user. */
		default void approvalEnded(Approval.Request r, String why) {}

		/**
		 * v0.5: the documents with unsaved changes (files only), the active one first, for pi's {@code read}
		 * ({@link UnsavedBuffers}). Asked on the client's thread, outside its lock, only while a pi is connected; a
		 * host that hands over none (the default) never has a {@code <pid>.buffers.json}.
		 */
		default List<UnsavedBuffers.Dirty> unsavedBuffers() {
			return null;
		}

		/**
		 * v0.5 show and ask: what answers pi's {@code pi-<pid>.ask.json} ({@link ShowAsk}). A host that has none (the
		 * default) never reads a request file nor writes answers.
		 */
		default ShowAsk.Host showAsk() {
			return null;
		}
	}

	private final long pid;
	private final Path dir;
	private final long uid;
	private final Listener listener;
	private final LongSupplier clockMillis;
	private final ScheduledExecutorService worker;
	private final SelectionClock clock = new SelectionClock();
	private final Inbox inbox;
	private final Approvals approvals = new Approvals();
	private final PiReader.PidProbe probe;
	/** This process's pid namespace (v0.5 {@code pid_ns}), read once: pi's pids are judged only in it. */
	private final String ownNs = PiIdentity.ownNamespace();

	private Snapshot.State latest;
	/** When the debounced write is due (System.nanoTime), and whether a timer task is waiting for it. */
	private long dueAt;
	private boolean armed;
	private String lastKey;
	private boolean wrote;
	private boolean disposed;
	private boolean warned;
	private String lastProblem;
	private long writes;
	private WatchService watcher;
	private Thread watchThread;
	private final Map<String, String> seenMessages = new java.util.HashMap<>();
	/** v0.5: the live pis whose message names this editor, by identity, with their file's name. */
	private final Map<String, PiIdentity.Name> connected = new java.util.concurrent.ConcurrentHashMap<>();
	private final UnsavedBuffers unsaved = new UnsavedBuffers();
	private boolean unsavedWarned;
	/** v0.5 show and ask: the answers and the list of places; each request file's stamp when last read. */
	private final ShowAsk.Responder asks;
	private final Map<String, String> seenAsks = new HashMap<>();

	public Client(long pid, Path dir, long uid, Listener listener, LongSupplier clockMillis) {
		this.pid = pid;
		this.dir = dir;
		this.uid = uid;
		this.listener = listener;
		this.clockMillis = clockMillis;
		this.inbox = new Inbox(pid);
		this.probe = PiReader.systemProbe(uid);
		this.asks = new ShowAsk.Responder(pid, dir, uid);
		this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
			Thread t = new Thread(r, "pi-ide-context writer");
			t.setDaemon(true);
			return t;
		});
	}

	public long pid() {
		return pid;
	}

	public Path stateFile() {
		return dir.resolve(StateDir.stateFileName(pid));
	}

	public Inbox inbox() {
		return inbox;
	}

	/** The approval requests pi waits on and the decisions given. */
	public Approvals approvals() {
		return approvals;
	}

	/** v0.5 show and ask: pi's places and the answers. */
	public ShowAsk.Responder asks() {
		return asks;
	}

	/** Files written so far (the benchmark's writes per second). */
	public synchronized long writes() {
		return writes;
	}

	public synchronized String lastProblem() {
		return lastProblem;
	}

	/**
	 * Hand over the editor's state. {@code urgent} (a switch, a selection, focus) writes at once; otherwise the
	 * write waits until events pause for 200 ms. Cheap, as this is what runs on the event thread per caret move:
	 * it moves a deadline; one timer task, armed only when none is, checks the deadline when it fires (re-arming a
	 * scheduled task per event would leave thousands of cancelled tasks in the executor's queue).
	 */
	public synchronized void update(Snapshot.State state, boolean urgent) {
		if (disposed) return;
		latest = state;
		long now = System.nanoTime();
		dueAt = urgent ? now : now + DEBOUNCE_MS * 1_000_000L;
		if (urgent) {
			worker.execute(this::fireIfDue);
		} else if (!armed) {
			armed = true;
			worker.schedule(this::fireIfDue, DEBOUNCE_MS, TimeUnit.MILLISECONDS);
		}
	}

	/** The debounce timer: write when the deadline has passed, else wait for the rest of it. */
	private void fireIfDue() {
		synchronized (this) {
			if (disposed) return;
			long wait = dueAt - System.nanoTime();
			if (wait > 0) {
				armed = true;
				worker.schedule(this::fireIfDue, wait, TimeUnit.NANOSECONDS);
				return;
			}
			armed = false;
		}
		flushQuietly();
	}

	/** Write the latest state now, on the calling thread (tests, the driver's commands). */
	public void flush() {
		flushQuietly();
	}

	private void flushQuietly() {
		try {
			// Outside this client's lock: the host takes its own to read its documents, and calls update() under it.
			write(connected.isEmpty() ? null : listener.unsavedBuffers());
		} catch (RuntimeException | Error e) {
			fail("pi-ide-context: " + e);
		}
	}

	/** Some live pi's message names this editor now. */
	public boolean piConnected() {
		return !connected.isEmpty();
	}

	/** v0.5: write the unsaved buffers' file when due; the serial the state names, or null. */
	private Long prepareUnsaved(List<UnsavedBuffers.Dirty> documents) {
		if (documents == null || documents.isEmpty()) return null;
		UnsavedBuffers.Prepared prepared = unsaved.prepare(dir, pid, uid, documents, clockMillis.getAsLong() / 1000.0);
		if (prepared.problem == null) {
			unsavedWarned = false;
			return prepared.serial;
		}
		// The state goes without buffers_serial: pi reads the disk, as before.
		if (!unsavedWarned) {
			unsavedWarned = true;
			try {
				listener.warn("pi-ide-context: not handing the unsaved buffers to pi: " + prepared.problem);
			} catch (RuntimeException ignored) {
				// the host's own notification failed: nothing sensible is left to do
			}
		}
		return null;
	}

	private void removeUnsaved() {
		String problem = unsaved.remove(dir, pid, uid);
		if (problem != null) lastProblem = "pi-ide-context: " + problem;
	}

	private synchronized void write(List<UnsavedBuffers.Dirty> documents) {
		if (disposed || latest == null) return;
		Long serial = latest.windows.isEmpty() ? null : prepareUnsaved(documents);
		Snapshot.State withReports = new Snapshot.State(latest.ide, latest.windows, inbox.files(), inbox.pi(),
				approvals.decisions(), serial);
		if (withReports.windows.isEmpty()) {
			removeFile();
			return;
		}
		StateBuilder.Built built = StateBuilder.build(withReports, clockMillis.getAsLong() / 1000, clock);
		if (built.content == null) {
			fail("pi-ide-context: " + built.problem);
			return;
		}
		if (built.key.equals(lastKey)) {
			if (serial == null) removeUnsaved();
			return;
		}
		StateDir.Result result = StateDir.write(dir, StateDir.stateFileName(pid), built.content, uid);
		if (!result.ok()) {
			fail("pi-ide-context: " + result.message);
			return;
		}
		lastKey = built.key;
		wrote = true;
		writes++;
		lastProblem = null;
		warned = false;
		// The state no longer names the unsaved buffers (none modified, or no pi connected): their file goes.
		if (serial == null) removeUnsaved();
	}

	private void fail(String message) {
		boolean tell;
		synchronized (this) {
			lastProblem = message;
			tell = !warned;
			warned = true;
		}
		if (tell) {
			try {
				listener.warn(message);
			} catch (RuntimeException ignored) {
				// the host's own notification failed: nothing sensible is left to do
			}
		}
	}

	private void removeFile() {
		// Only a file this client wrote: never delete a same-named file in a directory we did not write into.
		if (!wrote) return;
		wrote = false;
		lastKey = null;
		StateDir.Result result = StateDir.remove(dir, StateDir.stateFileName(pid), uid);
		if (!result.ok()) fail("pi-ide-context: " + result.message);
		removeUnsaved();
	}

	/**
	 * v0.5 send to pi: the messages of the live pis in the state dir now, each read under the checks every message
	 * is read with ({@link PiReader#read}: yours, 0600, no symlink, its pi alive); none when the dir fails its checks.
	 */
	public java.util.List<PiMessage> livePis() {
		java.util.List<PiMessage> out = new java.util.ArrayList<>();
		if (!StateDir.check(dir, uid).ok()) return out;
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "pi-*.json")) {
			for (Path entry : entries) {
				String name = entry.getFileName().toString();
				PiIdentity.Name piName = PiIdentity.parse(name);
				if (piName == null || !"message".equals(piName.kind)) continue;
				PiReader.Verdict verdict = PiReader.read(dir, name, uid, probe, ownNs);
				if ("message".equals(verdict.kind)) out.add(verdict.message);
			}
		} catch (IOException | RuntimeException e) {
			fail("pi-ide-context: cannot read " + dir + ": " + e);
		}
		return out;
	}

	/** Start reading pi's messages: a WatchService on the state dir, and a poll as the backstop. */
	public synchronized void listen() {
		if (disposed || watchThread != null) return;
		watchThread = new Thread(this::watchLoop, "pi-ide-context inbox");
		watchThread.setDaemon(true);
		watchThread.start();
	}

	private void watchLoop() {
		while (!isDisposed()) {
			try {
				if (watcher == null && StateDir.check(dir, uid).ok()) {
					WatchService w = FileSystems.getDefault().newWatchService();
					dir.register(w, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
					synchronized (this) {
						if (disposed) {
							w.close();
							return;
						}
						watcher = w;
					}
				}
				worker.execute(this::scanMessages);
				if (watcher != null) {
					WatchKey key = watcher.poll(POLL_MS, TimeUnit.MILLISECONDS);
					if (key != null) {
						key.pollEvents();
						key.reset();
					}
				} else {
					Thread.sleep(POLL_MS);
				}
			} catch (ClosedWatchServiceException | InterruptedException e) {
				return;
			} catch (IOException | RuntimeException e) {
				fail("pi-ide-context: cannot watch " + dir + ": " + e);
				try {
					Thread.sleep(POLL_MS);
				} catch (InterruptedException stop) {
					return;
				}
			}
		}
	}

	private synchronized boolean isDisposed() {
		return disposed;
	}

	/**
	 * Read every pi-<pid>.json and pi-<pid>.approval.json that changed since the last look and act on it; a
	 * pending request whose file went away (or that ran out) ends.
	 */
	void scanMessages() {
		if (isDisposed() || !StateDir.check(dir, uid).ok()) return;
		boolean changed = false;
		boolean listed = false;
		double now = clockMillis.getAsLong() / 1000.0;
		// pi identities (PiIdentity.key) with a request file, and their names' namespace for the liveness check.
		Map<String, PiIdentity.Name> asking = new HashMap<>();
		boolean wasConnected = !connected.isEmpty();
		Set<String> listedMessages = new HashSet<>();
		List<String> askFiles = new java.util.ArrayList<>();
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "pi-*.json")) {
			for (Path entry : entries) {
				String name = entry.getFileName().toString();
				PiIdentity.Name piName = PiIdentity.parse(name);
				// A change set (.review.json) is not this client's: it does not implement review.
				if (piName == null || "review".equals(piName.kind)) continue;
				if ("ask".equals(piName.kind)) {
					askFiles.add(name);
					continue;
				}
				boolean approval = "approval".equals(piName.kind);
				if (approval) asking.put(piName.key(), piName);
				else listedMessages.add(piName.key());
				String stamp = stampOf(entry);
				if (stamp == null) continue;
				if (stamp.equals(seenMessages.get(name))) continue;
				seenMessages.put(name, stamp);
				if (approval) {
					approvalRead(piName.key(), PiReader.readApproval(dir, name, uid, probe, pid, now, ownNs),
							dir.resolve(name));
					continue;
				}
				PiReader.Verdict verdict = PiReader.read(dir, name, uid, probe, ownNs);
				if ("problem".equals(verdict.kind)) {
					fail("pi-ide-context: ignoring " + dir.resolve(name) + ": it " + verdict.problem);
				} else if ("message".equals(verdict.kind)) {
					if (verdict.message.editorPid != null && verdict.message.editorPid == pid) connected.put(piName.key(), piName);
					else connected.remove(piName.key());
					listener.onMessage(verdict.message);
					changed = true;
				} else {
					connected.remove(piName.key()); // gone, or dead
				}
			}
			listed = true;
		} catch (IOException | RuntimeException e) {
			fail("pi-ide-context: cannot read " + dir + ": " + e);
		}
		// v0.5: a connected pi whose message went (it exited), or whose process did (killed: the message stays, and an
		// unchanged file is not read again), is connected no more: the unsaved buffers' file goes with the next write.
		if (listed) {
			for (Map.Entry<String, PiIdentity.Name> c : connected.entrySet()) {
				if (!listedMessages.contains(c.getKey())
						|| !"alive".equals(PiReader.liveness(c.getValue(), probe, ownNs))) {
					connected.remove(c.getKey());
				}
			}
		}
		if (wasConnected != !connected.isEmpty()) changed = true;
		if (listed) answerAsks(askFiles, now);
		// Only a complete listing says which requests went away. An unchanged file is not read again, so a pi that
		// died without removing it (a crash) is asked after here.
		for (String waiting : listed ? approvals.waiting() : Collections.<String>emptyList()) {
			Approval.Request r = approvals.pendingOf(waiting);
			if (!asking.containsKey(waiting)) {
				endApproval(waiting, "pi stopped waiting");
			} else if (r != null && Approval.expired(r, now)) {
				endApproval(waiting, "it ran out");
			} else if (!"alive".equals(PiReader.liveness(asking.get(waiting), probe, ownNs))) {
				endApproval(waiting, "pi exited");
			}
		}
		if (changed) flushQuietly();
	}

	/**
	 * What tells one version of a file of pi's from the next: its inode (pi replaces each by a rename, so a new
	 * version is a new file), size and mtime, never following a link; null when it is gone. (An mtime XORed with
	 * the size once stood here: two versions could give one number, and the second was never read.)
	 */
	static String stampOf(Path file) {
		try {
			java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(file,
					java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
			return a.fileKey() + ":" + a.size() + ":" + a.lastModifiedTime().to(TimeUnit.NANOSECONDS);
		} catch (IOException gone) {
			return null;
		}
	}

	/**
	 * v0.5: read each of pi's request files that is new since the last look (an atomic write is a new file: its key,
	 * size and mtime) and answer its new requests; a refused one is told once per version of the file.
	 */
	private void answerAsks(List<String> names, double now) {
		ShowAsk.Host host = listener.showAsk();
		seenAsks.keySet().retainAll(names);
		if (host == null) return;
		for (String name : names) {
			String stamp = stampOf(dir.resolve(name));
			if (stamp == null) continue;
			if (stamp.equals(seenAsks.get(name))) continue;
			seenAsks.put(name, stamp);
			ShowAsk.Read read = ShowAsk.read(dir, name, uid, probe, pid, ownNs);
			if ("problem".equals(read.kind)) {
				tell("pi-ide-context: ignoring " + dir.resolve(name) + ": it " + read.problem);
			} else if ("ask".equals(read.kind)) {
				if (read.file.problem != null) {
					tell("pi-ide-context: ignoring a request in " + dir.resolve(name) + ": " + read.file.problem);
				}
				String problem = asks.receive(read.file, host, now);
				if (problem != null) tell("pi-ide-context: cannot answer pi's show or ask: " + problem);
			}
		}
	}

	private void tell(String line) {
		try {
			listener.warn(line);
		} catch (RuntimeException ignored) {
			// the host's own notification failed: nothing sensible is left to do
		}
	}

	/** An approval file read: a new request is told to the host; anything else ends what pi waited on. */
	private void approvalRead(String piPid, PiReader.Verdict verdict, Path path) {
		if ("request".equals(verdict.kind)) {
			// pi asks one thing at a time: a new request replaces what it waited on before (its notice expires).
			Approval.Request before = approvals.pendingOf(piPid);
			if (before != null && !before.id.equals(verdict.request.id)) endApproval(piPid, "pi stopped waiting");
			if (approvals.offer(verdict.request)) {
				try {
					listener.approvalAsked(verdict.request);
				} catch (RuntimeException e) {
					fail("pi-ide-context: cannot show pi's approval request: " + e);
				}
			}
			return;
		}
		if ("problem".equals(verdict.kind)) fail("pi-ide-context: ignoring " + path + ": it " + verdict.problem);
		endApproval(piPid, "gone".equals(verdict.kind) ? "pi stopped waiting" : "dead".equals(verdict.kind) ? "pi exited"
				: "elsewhere".equals(verdict.kind) ? "pi asks another editor" : "its request is not usable");
	}

	private void endApproval(String piPid, String why) {
		Approval.Request r = approvals.forget(piPid);
		if (r == null) return;
		try {
			listener.approvalEnded(r, why);
		} catch (RuntimeException e) {
			fail("pi-ide-context: " + e);
		}
	}

	/**
	 * The user's answer to request {@code id} (null: the one that runs out first): "accept" or "reject". Recorded
	 * in {@code decisions} and written at once; a request that is gone or ran out records nothing. Returns the
	 * one line to tell the user. Throws only for a decision other than those two (a programmer's error).
	 */
	public Approvals.Answer decide(String id, String decision, String project) {
		Approvals.Answer answer = approvals.decide(id, decision, clockMillis.getAsLong() / 1000.0, project);
		if (answer.recorded) {
			synchronized (this) {
				if (!disposed) worker.execute(this::flushQuietly);
			}
		}
		if (answer.request != null) {
			try {
				listener.approvalEnded(answer.request,
						!answer.recorded ? "it ran out" : "accept".equals(decision) ? "approved" : "rejected");
			} catch (RuntimeException e) {
				fail("pi-ide-context: " + e);
			}
		}
		return answer;
	}

	/** Act on a message through the host (called by the host's onMessage, where it may touch documents). */
	public void handle(PiMessage message, Inbox.Host host) {
		if (inbox.handle(message, host)) {
			synchronized (this) {
				lastKey = null; // the reports changed: write even if the editor did not
			}
			worker.execute(this::flushQuietly);
		}
	}

	/** The diagnostics of a document changed: refresh listed reports and write soon. */
	public void diagnosticsChanged(Inbox.Host host) {
		inbox.refreshDiagnostics(host);
	}

	/** Stop, and delete the state file. Waits briefly for the writer so the removal is the last thing done. */
	public void dispose() {
		synchronized (this) {
			if (disposed) return;
		}
		try {
			worker.submit(() -> {
				synchronized (Client.this) {
					removeFile();
					disposed = true;
				}
			}).get(2, TimeUnit.SECONDS);
		} catch (Exception e) {
			synchronized (this) {
				disposed = true;
				removeFile();
			}
		}
		asks.dispose();
		worker.shutdownNow();
		try {
			if (watcher != null) watcher.close();
		} catch (IOException ignored) {
			// closing a watcher that failed already
		}
		if (watchThread != null) watchThread.interrupt();
	}
}
