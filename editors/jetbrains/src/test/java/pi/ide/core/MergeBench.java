package pi.ide.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * bench/jetbrains.ts's merge figure (issue 26), in the JVM after warm-up (not a test: JUnit finds no tests here): pi's
 * 10-hunk edit merged into a 10,000-line document with 50 unsaved changed lines, the whole of what the client does
 * but the IDE's own Document edit, in the thread's CPU time: {@link Merge#chain} (the hash, the strict decode, pi's hunks taken back out, the
 * line diff base -> document, the plan) and the text edits made in the driver's text. Prints one JSON line.
 */
public final class MergeBench {
	private MergeBench() {}

	public static void main(String[] args) throws Exception {
		List<String> base = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) base.add("    val line" + i + " = \"some text é\" // " + i);
		List<String> pis = new ArrayList<>(base);
		List<Object> hunks = new ArrayList<>();
		for (int k = 0; k < 10; k++) {
			int at = 1000 * k + 500;
			pis.set(at, "pi's line " + k);
			Map<String, Object> h = new LinkedHashMap<>();
			h.put("old_start", (long) at + 1);
			h.put("old_lines", 1L);
			h.put("new_start", (long) at + 1);
			h.put("new_lines", 1L);
			h.put("old_text", Collections.singletonList(base.get(at)));
			h.put("new_text", Collections.singletonList(pis.get(at)));
			hunks.add(h);
		}
		List<String> ours = new ArrayList<>(base);
		for (int k = 0; k < 50; k++) ours.set(200 * k + 7, "the user's line " + k);
		byte[] disk = (String.join("\n", pis) + "\n").getBytes(StandardCharsets.UTF_8);
		StringBuilder sha = new StringBuilder();
		for (byte b : MessageDigest.getInstance("SHA-256").digest(disk)) sha.append(String.format("%02x", b & 0xff));
		Map<String, Object> merge = new LinkedHashMap<>();
		merge.put("sha256", sha.toString());
		merge.put("hunks", hunks);
		List<Merge.Link> chain = Arrays.asList(new Merge.Link(5, merge));
		String document = String.join("\n", ours) + "\n";
		// The thread's CPU time, not the wall clock: on a machine shared by many processes the wall clock mostly
		// measures waiting for a core.
		java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
		double[] ms = new double[300];
		String merged = null;
		for (int round = 0; round < 200 + ms.length; round++) {
			long start = cpu.getCurrentThreadCpuTime();
			Merge.Outcome o = Merge.chain(chain, 4, disk, document);
			merged = Merge.apply(document, Merge.textEdits(document, o.plan.edits));
			if (round >= 200) ms[round - 200] = (cpu.getCurrentThreadCpuTime() - start) / 1e6;
			if (!"merged".equals(o.status) || o.plan.merged != 10) throw new IllegalStateException("not merged: " + o.why);
		}
		if (!Merge.splitLines(merged).get(500).equals("pi's line 0")) throw new IllegalStateException("wrong merge");
		Arrays.sort(ms);
		Map<String, Object> out = new LinkedHashMap<>();
		out.put("merge_ms_p50", ms[ms.length / 2]);
		out.put("merge_ms_p95", ms[(int) (ms.length * 0.95)]);
		System.out.println(Json.write(out));
	}
}
