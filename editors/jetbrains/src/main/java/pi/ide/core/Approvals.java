package pi.ide.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The requests pi waits on and the decisions given, host-neutral (the IDE's notification and actions, or the
 * headless driver's commands): one pending request per pi, the decisions the state file carries (always a
 * list once this client runs: that is how pi knows it may ask this editor). Thread-safe; no I/O.
 *
 * <p>An answer is for the request the user saw (PROTOCOL.md): an answer that names no request (the actions from Find
 * Action or a keymap) is for the one the user was last shown and has not answered: its notice, when nothing shown was
 * unanswered then, or its "Show change". When that one no longer waits and another does, nothing is decided: the
 * answer names the other, which counts as showing it, so the same action again answers it.
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
	/** The request the user was last shown and has not answered, or null. */
	private Approval.Request seen;

	/**
	 * pi {@code r.piPid} waits on r; true when it is news (not the request already pending): the host tells the user,
	 * and it becomes the one shown unless a request shown is still unanswered (the user may be answering that one).
	 */
	public synchronized boolean offer(Approval.Request r) {
		Approval.Request before = pending.put(r.piPid, r);
		boolean news = before == null || !before.id.equals(r.id);
		if (news && seen == null) seen = r;
		return news;
	}

	/** The user is shown {@code r} ("Show change"): an answer naming no request is for it from now on. */
	public synchronized void shown(Approval.Request r) {
		seen = r;
	}

	/** The request an answer naming none is for: the one the user was shown, while it waits; else null. */
	public synchronized Approval.Request seen() {
		Approval.Request r = seen == null ? null : pending.get(seen.piPid);
		return r != null && r.id.equals(seen.id) ? r : null;
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

	/** The request that runs out first, if any waits. */
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
	 * Answer request {@code id} (null: {@link #seen}) with "accept" or "reject" at {@code now} (epoch seconds).
	 * A request that is gone or ran out records nothing and says so: pi no longer waits on it. With no id, a
	 * request the user was not shown is never answered: the answer names it instead (request null, nothing recorded).
	 */
	public synchronized Answer decide(String id, String decision, double now, String project) {
		if (!"accept".equals(decision) && !"reject".equals(decision)) {
			throw new IllegalArgumentException("a decision is accept or reject, not " + decision);
		}
		Approval.Request r = id == null ? seen() : find(id);
		if (r == null && id == null) {
			Approval.Request instead = current();
			seen = instead;
			if (instead != null) {
				boolean accept = "accept".equals(decision);
				return new Answer(null, false, "pi-ide-context: not " + (accept ? "approved" : "rejected")
						+ ": the request you saw is gone; " + Approval.describe(instead, Approval.shownPath(instead.file, project))
						+ ". Answer again to " + (accept ? "accept" : "reject") + " it");
			}
		}
		if (r == null) return new Answer(null, false, "pi-ide-context: pi is not waiting for your approval of that change (any more)");
		seen = null;
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
