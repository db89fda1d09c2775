package pi.ide.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The requests pi waits on and the decisions given, host-neutral (the IDE's notification and actions, or the
 * headless driver's commands): one pending request per pi, the decisions the state file carries (always a
 * list once this client runs: that is how pi knows it may ask this editor). Thread-safe; no I/O.
 */
public final class Approvals {
	/** What answering gave: the request it found (null: none), whether the decision was recorded, the line to say. */
	public static final class Answer {
		/** No longer pending either way: answered, or found run out. */
		public final Approval.Request request;
		public final boolean recorded;
		public final String said;

		Answer(Approval.Request request, boolean recorded, String said) {
			this.request = request;
			this.recorded = recorded;
			this.said = said;
		}
	}

	private final Map<Long, Approval.Request> pending = new HashMap<>();
	private List<Map<String, Object>> decisions = new ArrayList<>();

	/** pi {@code r.piPid} waits on r; true when it is news (not the request already pending). */
	public synchronized boolean offer(Approval.Request r) {
		Approval.Request before = pending.put(r.piPid, r);
		return before == null || !before.id.equals(r.id);
	}

	/** pi {@code piPid} waits on nothing any more (decided, timed out, gone); the request it waited on, or null. */
	public synchronized Approval.Request forget(long piPid) {
		return pending.remove(piPid);
	}

	/** The request pi {@code piPid} waits on, or null. */
	public synchronized Approval.Request pendingOf(long piPid) {
		return pending.get(piPid);
	}

	/** The pis with a pending request. */
	public synchronized List<Long> waiting() {
		return new ArrayList<>(pending.keySet());
	}

	/** The request answered by a plain "accept"/"reject": the one that runs out first. */
	public synchronized Approval.Request current() {
		Approval.Request best = null;
		for (Approval.Request r : pending.values()) {
			if (best == null || r.expires < best.expires) best = r;
		}
		return best;
	}

	/** The pending request with this id, or null. */
	public synchronized Approval.Request find(String id) {
		for (Approval.Request r : pending.values()) {
			if (r.id.equals(id)) return r;
		}
		return null;
	}

	/**
	 * Answer request {@code id} (null: {@link #current}) with "accept" or "reject" at {@code now} (epoch seconds).
	 * A request that is gone or ran out records nothing and says so: pi no longer waits on it.
	 */
	public synchronized Answer decide(String id, String decision, double now, String project) {
		if (!"accept".equals(decision) && !"reject".equals(decision)) {
			throw new IllegalArgumentException("a decision is accept or reject, not " + decision);
		}
		Approval.Request r = id == null ? current() : find(id);
		if (r == null) return new Answer(null, false, "pi-ide-context: pi is not waiting for your approval of that change (any more)");
		pending.remove(r.piPid);
		String shown = Approval.shownPath(r.file, project);
		if (Approval.expired(r, now)) {
			return new Answer(r, false, "pi-ide-context: pi's request to change " + shown + " ran out (" + r.timeoutS
					+ " s); pi did not apply it");
		}
		decisions = Approval.addDecision(decisions, r, decision);
		return new Answer(r, true, "accept".equals(decision) ? "pi-ide-context: approved: pi applies its change to " + shown
				: "pi-ide-context: rejected: pi leaves " + shown + " as it is");
	}

	/** The state file's {@code decisions}: newest last, empty before the first. */
	public synchronized List<Map<String, Object>> decisions() {
		return new ArrayList<>(decisions);
	}
}
