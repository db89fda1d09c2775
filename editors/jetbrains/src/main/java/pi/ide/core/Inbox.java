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
	}

	private final long ownPid;
	private final Map<Long, Long> handled = new HashMap<>();
	private final Set<String> notified = new HashSet<>();
	private List<Map<String, Object>> files = new ArrayList<>();
	private Map<String, Object> pi;

	public Inbox(long ownPid) {
		this.ownPid = ownPid;
	}

	/** Act on a message; true when the reports changed (the state file should be written promptly). */
	public synchronized boolean handle(PiMessage message, Host host) {
		List<PiMessage.Change> pending = message.pending(ownPid, handled.get(message.pid));
		if (pending.isEmpty()) return false;
		for (PiMessage.Change change : pending) {
			String status;
			Reload.Facts facts = host.facts(change.file);
			status = Reload.decide(facts);
			if (Reload.reads(status)) host.reload(change.file);
			if ("modified".equals(status) && notified.add(message.pid + ":" + change.seq + ":" + change.file)) {
				host.notifyModified(change.file, Reload.modifiedNotice(change.file));
			}
			boolean open = !"not-open".equals(status);
			files = PiMessage.addReport(files, Reload.report(change.file, change.seq, message.pid, status,
					open ? host.version(change.file) : null, facts.modified, open && host.diagnosticsExpected(change.file),
					open ? host.diagnostics(change.file) : null));
		}
		long newest = handled.containsKey(message.pid) ? handled.get(message.pid) : -1;
		for (PiMessage.Change c : pending) newest = Math.max(newest, c.seq);
		handled.put(message.pid, newest);
		Map<String, Object> last = new java.util.LinkedHashMap<>();
		last.put("pid", message.pid);
		last.put("seq", message.seq);
		pi = last;
		return true;
	}

	/** Refresh the diagnostics of listed reports (kept up to date while listed); true when any changed. */
	public synchronized boolean refreshDiagnostics(Host host) {
		boolean changed = false;
		List<Map<String, Object>> next = new ArrayList<>();
		for (Map<String, Object> r : files) {
			Map<String, Object> copy = new java.util.LinkedHashMap<>(r);
			if (!"not-open".equals(r.get("status"))) {
				Map<String, Object> now = host.diagnostics((String) r.get("file"));
				if (now != null && !now.equals(r.get("diagnostics"))) {
					copy.put("diagnostics", now);
					changed = true;
				}
			}
			next.add(copy);
		}
		files = next;
		return changed;
	}

	public synchronized List<Map<String, Object>> files() {
		return files.isEmpty() ? null : new ArrayList<>(files);
	}

	public synchronized Map<String, Object> pi() {
		return pi;
	}
}
