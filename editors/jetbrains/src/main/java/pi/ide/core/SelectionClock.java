package pi.ide.core;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * When each document's current selection was made, so {@code selected_at} is the moment the user made it (kept
 * while it stays, kept when the user switches away and back), never the time of the latest write. Bounded to the
 * most recently used documents.
 */
public final class SelectionClock {
	private static final class Made {
		final String range;
		final long at;

		Made(String range, long at) {
			this.range = range;
			this.at = at;
		}
	}

	private final Map<String, Made> made = new LinkedHashMap<>();
	private final int limit;

	public SelectionClock() {
		this(64);
	}

	public SelectionClock(int limit) {
		this.limit = limit;
	}

	/** {@code now} in unix seconds; the selected_at for {@code range} in document {@code key}, null without one. */
	public synchronized Long stamp(String key, Text.Range range, long now) {
		if (range == null) {
			made.remove(key);
			return null;
		}
		String signature = range.signature();
		Made previous = made.remove(key); // re-inserted below: insertion order is the recency order
		long at = previous != null && previous.range.equals(signature) ? previous.at : now;
		made.put(key, new Made(signature, at));
		if (made.size() > limit) {
			Iterator<String> oldest = made.keySet().iterator();
			oldest.next();
			oldest.remove();
		}
		return at;
	}
}
