package pi.ide.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's approval requests over seeded random sequences, against a simple model (the oracle): several
 * live pis of ours (child processes), their request files written, replaced, removed, left behind by a pi that
 * died, for this IDE or another, running out as the clock moves, answered (by id, or the one that runs out
 * first, late or in time), with scans in between. After every scan the requests pending are exactly those the
 * model says are waiting (a file there, a live pi, this IDE's, not run out, not answered or ended); each request
 * is told once and ended once; the decisions are the model's last 20. A failure names its seed: set
 * PI_IDE_SEED=<n> to replay it.
 */
class ApprovalLifecycleTest {
	@TempDir
	Path root;

	static final int PIS = 3;

	/** The model's view of one request file. */
	static final class Req {
		final String id;
		final boolean mine;
		final double expires;

		Req(String id, boolean mine, double expires) {
			this.id = id;
			this.mine = mine;
			this.expires = expires;
		}
	}

	@Test
	void pendingRequestsFollowTheModel() throws Exception {
		String only = System.getenv("PI_IDE_SEED");
		int first = only != null ? Integer.parseInt(only) : 1;
		int last = only != null ? first : 40;
		for (int seed = first; seed <= last; seed++) {
			// Fresh pis for each sequence (a sequence may end some).
			List<Process> pis = new ArrayList<>();
			try {
				for (int i = 0; i < PIS; i++) pis.add(new ProcessBuilder("sleep", "600").start());
				run(seed, pis);
			} finally {
				for (Process p : pis) p.destroyForcibly();
			}
		}
	}

	void run(int seed, List<Process> pis) throws Exception {
		Random random = new Random(seed);
		Path dir = root.resolve("s" + seed);
		long own = StateDir.ownPid();
		AtomicLong clock = new AtomicLong(1_700_000_000_000L);
		List<String> events = new CopyOnWriteArrayList<>();
		Client client = new Client(own, dir, StateDir.ownUid(), new Client.Listener() {
			public void warn(String message) {}

			public void onMessage(PiMessage message) {}

			public void approvalAsked(Approval.Request r) {
				events.add("asked " + r.id);
			}

			public void approvalEnded(Approval.Request r, String why) {
				events.add("ended " + r.id);
			}
		}, clock::get);
		// The model.
		Map<Integer, Req> files = new HashMap<>();
		Set<Integer> dead = new HashSet<>();
		Set<String> consumed = new HashSet<>();
		Map<Integer, String> pendingModel = new HashMap<>();
		List<String> decisions = new ArrayList<>();
		Map<String, Double> expiresById = new HashMap<>();
		// The request the user was shown and has not answered, read off the user's screen: the first told since the
		// last answer, or the one an answer named instead (PROTOCOL.md "An answer is for the request the user saw").
		String[] seenModel = { null };
		int[] eventsRead = { 0 };
		List<String> trace = new ArrayList<>();
		int ids = 0;
		long mtime = 1_000_000;
		try {
			client.update(new Snapshot.State(new Snapshot.Ide(own, "IntelliJ IDEA", "2025.2"),
					java.util.Arrays.asList(new Snapshot.Window("/p", null, null)), null, null), true);
			ClientTest.waitFor(() -> Files.exists(client.stateFile()), "the state file");
			for (int step = 0; step < 40; step++) {
				int k = random.nextInt(pis.size());
				long piPid = pis.get(k).pid();
				Path file = dir.resolve("pi-" + piPid + ".approval.json");
				double now = clock.get() / 1000.0;
				int what = random.nextInt(10);
				if (what < 4) {
					String id = "r" + seed + "-" + (ids++);
					boolean mine = random.nextInt(5) > 0;
					// A distinct fraction per request: "the one that runs out first" is never a tie.
					double expires = (random.nextInt(8) == 0 ? now - 1 : now + 1 + random.nextInt(10)) + ids / 1024.0;
					PiReaderTest.write(file, ApprovalTest.GOOD.replace("\"pid\":4242", "\"pid\":" + piPid)
							.replace("\"editor_pid\":77", "\"editor_pid\":" + (mine ? own : own + 1))
							.replace("\"r1\"", "\"" + id + "\"").replace("1700000120.5", String.valueOf(expires)), "rw-------");
					// Each write is a new version of the file, as pi's atomic rename makes it.
					Files.setLastModifiedTime(file, FileTime.fromMillis(mtime += 1_000_000));
					files.put(k, new Req(id, mine, expires));
					expiresById.put(id, expires);
					trace.add("write pi" + k + " " + id + (mine ? "" : " (another editor)") + " expires+" + (expires - now));
				} else if (what < 5) {
					Files.deleteIfExists(file);
					files.remove(k);
					trace.add("remove pi" + k);
				} else if (what < 6 && !dead.contains(k) && dead.size() < pis.size() - 1) {
					pis.get(k).destroyForcibly().waitFor();
					dead.add(k);
					trace.add("pi" + k + " dies");
				} else if (what < 7) {
					clock.addAndGet(1000L * random.nextInt(6));
					trace.add("clock to " + clock.get() / 1000);
				} else if (what < 9) {
					// Answer: by id (a pending one, or one already gone), or the one that runs out first.
					String id = null;
					int pick = random.nextInt(3);
					if (pick == 1 && !pendingModel.isEmpty()) {
						id = new ArrayList<>(new TreeMap<>(pendingModel).values()).get(random.nextInt(pendingModel.size()));
					} else if (pick == 2 && !consumed.isEmpty()) {
						id = consumed.iterator().next();
					}
					String decision = random.nextBoolean() ? "accept" : "reject";
					for (; eventsRead[0] < events.size(); eventsRead[0]++) {
						String e = events.get(eventsRead[0]);
						if (e.startsWith("asked ") && seenModel[0] == null) seenModel[0] = e.substring(6);
					}
					String target = id != null ? id : pendingModel.containsValue(seenModel[0]) ? seenModel[0] : null;
					String instead = null;
					if (id == null && target == null) {
						double soonest = Double.MAX_VALUE;
						for (String pending : pendingModel.values()) {
							if (expiresById.get(pending) < soonest) {
								soonest = expiresById.get(pending);
								instead = pending;
							}
						}
						seenModel[0] = instead;
					}
					Approvals.Answer answer = client.decide(id, decision, "/p");
					boolean found = target != null && pendingModel.containsValue(target);
					boolean inTime = found && now <= expiresById.get(target);
					trace.add(decision + " " + (id == null ? "(seen: " + target + ", instead " + instead + ")" : id) + " -> "
							+ answer.said);
					String at = "seed " + seed + " (PI_IDE_SEED=" + seed + "):\n  " + String.join("\n  ", trace);
					assertEquals(inTime, answer.recorded, at);
					if (instead != null) {
						assertNull(answer.request, at);
						assertTrue(answer.said.contains("the request you saw is gone"), at);
					}
					if (found) {
						assertEquals(target, answer.request.id, at);
						pendingModel.values().remove(target);
						consumed.add(target);
						seenModel[0] = null;
					}
					if (inTime) decisions.add(target + "=" + decision);
				}
				if (random.nextBoolean() || step == 39) {
					client.scanMessages();
					trace.add("scan");
					now = clock.get() / 1000.0;
					// What the model says waits now: a file of a live pi, for this IDE, in time, never consumed.
					for (Integer pi : new ArrayList<>(pendingModel.keySet())) {
						Req f = files.get(pi);
						if (f == null || !f.id.equals(pendingModel.get(pi)) || dead.contains(pi) || now > f.expires) {
							consumed.add(pendingModel.remove(pi));
						}
					}
					for (Map.Entry<Integer, Req> e : files.entrySet()) {
						Req f = e.getValue();
						boolean waits = f.mine && !dead.contains(e.getKey()) && now <= f.expires && !consumed.contains(f.id);
						if (waits) pendingModel.put(e.getKey(), f.id);
						else if (pendingModel.containsKey(e.getKey()) && pendingModel.get(e.getKey()).equals(f.id)) {
							consumed.add(pendingModel.remove(e.getKey()));
						}
					}
					for (Map.Entry<Integer, Req> e : files.entrySet()) {
						// read once and refused (run out, another IDE's, a dead pi's): never pending later either
						if (!pendingModel.containsValue(e.getValue().id)) consumed.add(e.getValue().id);
					}
					String at = "seed " + seed + " (PI_IDE_SEED=" + seed + "):\n  " + String.join("\n  ", trace);
					Map<Long, String> expected = new TreeMap<>();
					for (Map.Entry<Integer, String> e : pendingModel.entrySet()) expected.put(pis.get(e.getKey()).pid(), e.getValue());
					Map<Long, String> actual = new TreeMap<>();
					for (Long pi : client.approvals().waiting()) actual.put(pi, client.approvals().pendingOf(pi).id);
					assertEquals(expected, actual, at);
				}
			}
			// Every request told once, and ended once when it no longer waits.
			for (Integer k : new ArrayList<>(files.keySet())) {
				Files.deleteIfExists(dir.resolve("pi-" + pis.get(k).pid() + ".approval.json"));
			}
			client.scanMessages();
			String at = "seed " + seed + " (PI_IDE_SEED=" + seed + "):\n  " + String.join("\n  ", trace) + "\n  events " + events;
			Map<String, Integer> asked = new LinkedHashMap<>();
			Map<String, Integer> ended = new LinkedHashMap<>();
			for (String e : events) {
				String[] parts = e.split(" ");
				(parts[0].equals("asked") ? asked : ended).merge(parts[1], 1, Integer::sum);
			}
			for (Map.Entry<String, Integer> e : asked.entrySet()) {
				assertEquals(1, (int) e.getValue(), "told once: " + e.getKey() + "\n" + at);
				assertEquals(1, (int) ended.getOrDefault(e.getKey(), 0), "ended once: " + e.getKey() + "\n" + at);
			}
			assertEquals(asked.keySet(), ended.keySet(), at);
			List<String> got = new ArrayList<>();
			for (Map<String, Object> d : client.approvals().decisions()) got.add(d.get("id") + "=" + d.get("decision"));
			assertEquals(decisions.subList(Math.max(0, decisions.size() - Approval.MAX_DECISIONS), decisions.size()), got, at);
		} finally {
			client.dispose();
		}
	}
}
