package pi.ide.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The editor's half of protocol v0.3, host-neutral: a pi message in, the reload decisions carried out through
 * the {@link Host} (the IDE's documents, or the headless driver's buffers), the {@code files} and {@code pi}
 * reports kept for the next state write. Remembers the highest seq handled per pi, so a message read twice
 * (a watcher event and a poll) is acted on once, and the modified-buffer notice is shown once per change.
 */
public final class Inbox {
	/** What the client needs from its editor; every call is made on the thread the host says is right. */
	public interface Host {
		/** Facts about the document holding {@code file} (the document's own path is what is checked and read). */
		Reload.Facts facts(String file);

		/** Re-read the unmodified document holding file from disk (only called for "reloaded"). */
		void reload(String file);

		/** The document's version after handling, or null when not open. */
		Long version(String file);

		boolean diagnosticsExpected(String file);

		/** The document's current diagnostics report, or null. */
		Map<String, Object> diagnostics(String file);

		/** Tell the user once, without blocking (a notification, never a modal dialog). */
		void notifyModified(String file, String notice);

		/**
		 * v0.5 (issue 26): the text of the document holding {@code file} when it has unsaved changes, for merging pi's
		 * change into it ({@link Merge}); null (the default): this host does not merge, the report says modified.
		 */
		default String documentText(String file) {
			return null;
		}

		/**
		 * Make pi's merged {@code edits} (of {@code text}, ascending) in the document holding {@code file} as one undo
		 * step of its own, never saving it; false (nothing changed) when the document no longer holds {@code text}.
		 */
		default boolean applyMerge(String file, String text, List<Merge.TextEdit> edits) {
			return false;
		}
	}

	private final long ownPid;
	/** The highest seq handled per pi identity ({@link PiMessage#key}: its pid and namespace). */
	private final Map<String, Long> handled = new HashMap<>();
	/**
	 * Per pi identity, the changes its newest message naming this editor lists: their reports stay (PROTOCOL.md
	 * {@code files}); a pi whose newest message names another editor lists nothing here.
	 */
	private final Map<String, List<PiMessage.Change>> listed = new HashMap<>();
	private final Set<String> notified = new HashSet<>();
	private List<Map<String, Object>> files = new ArrayList<>();
	private Map<String, Object> pi;

	public Inbox(long ownPid) {
		this.ownPid = ownPid;
	}

	/** Act on a message; true when the reports changed (the state file should be written promptly). */
	public synchronized boolean handle(PiMessage message, Host host) {
		String key = message.key();
		if (message.editorPid == null || message.editorPid != ownPid) {
			listed.remove(key);
			return false;
		}
		listed.put(key, message.changed);
		List<PiMessage.Change> pending = message.pending(ownPid, handled.get(key));
		if (pending.isEmpty()) {
			// Nothing to act on, but the message was handled: `pi` says so (PROTOCOL.md: "Then write its state
			// file promptly with files and pi"), as pi's first message after connecting (no changes) expects.
			// Its seq is handled too: the next message's changes after it are all new to this editor.
			Long before = handled.get(key);
			handled.put(key, before == null ? message.seq : Math.max(before, message.seq));
			boolean news = pi == null || !pi.get("pid").equals(message.pid) || !pi.get("seq").equals(message.seq);
			if (news) pi = seen(message);
			return news;
		}
		Long handledBefore = handled.get(key);
		for (PiMessage.Change change : pending) {
			String status;
			Reload.Facts facts = host.facts(change.file);
			status = Reload.decide(facts);
			if (Reload.reads(status)) host.reload(change.file);
			// v0.5 (issue 26): pi's change merged into the unsaved document where it can be (Merging), else modified.
			Merge.Outcome merged = "modified".equals(status) ? Merging.attempt(message, change, handledBefore, facts, host) : null;
			if (merged != null) status = merged.status;
			if ("modified".equals(status) && notified.add(key + ":" + change.seq + ":" + change.file)) {
				host.notifyModified(change.file, Reload.modifiedNotice(change.file));
			}
			if ("conflict".equals(status) && notified.add(key + ":" + change.seq + ":" + change.file)) {
				host.notifyModified(change.file, Merge.conflictNotice(change.file, merged.plan));
			}
			boolean open = !"not-open".equals(status);
			Map<String, Object> report = Reload.report(change.file, change.seq, message.pid, status,
					open ? host.version(change.file) : null, facts.modified, open && host.diagnosticsExpected(change.file),
					open ? host.diagnostics(change.file) : null);
			// v0.5: the pi's namespace exactly as its message said (left out when it said none).
			if (message.pidNs != null) report.put("pi_ns", message.pidNs);
			if (merged != null) report.put("merge", merged.report());
			files = PiMessage.addReport(files, report, listed);
		}
		long newest = handled.containsKey(key) ? handled.get(key) : -1;
		for (PiMessage.Change c : pending) newest = Math.max(newest, c.seq);
		handled.put(key, newest);
		pi = seen(message);
		return true;
	}

	private static Map<String, Object> seen(PiMessage message) {
		Map<String, Object> last = new java.util.LinkedHashMap<>();
		last.put("pid", message.pid);
		last.put("seq", message.seq);
		return last;
	}

	/** Refresh the diagnostics of listed reports (kept up to date while listed); true when any changed. */
	public synchronized boolean refreshDiagnostics(Host host) {
		boolean changed = false;
		List<Map<String, Object>> next = new ArrayList<>();
		for (Map<String, Object> h : files) {
			Map<String, Object> copy = new java.util.LinkedHashMap<>(h);
			if (!"not-open".equals(h.get("status"))) {
				Map<String, Object> now = host.diagnostics((String) h.get("file"));
				if (now != null && !now.equals(h.get("diagnostics"))) {
					copy.put("diagnostics", now);
					changed = true;
				}
			}
			next.add(copy);
		}
		files = next;
		return changed;
	}

	/** The state file's {@code files}: the reports PROTOCOL.md's retention keeps now; null when none. */
	public synchronized List<Map<String, Object>> files() {
		files = PiMessage.retain(files, listed);
		return files.isEmpty() ? null : new ArrayList<>(files);
	}

	public synchronized Map<String, Object> pi() {
		return pi;
	}
}
