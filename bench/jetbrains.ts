/**
 * The JetBrains client's figures (issue 16), measured inside the JVM after warm-up by the plugin's own code
 * (editors/jetbrains/src/test/java/pi/ide/plugin/CaretBench.java) over a real IntelliJ DocumentImpl of 5,000 lines:
 * the work per caret event on the event thread, the files written per second while the caret keeps moving
 * (30 events a second), and, beside them, the cost of one write on the client's own thread; and (issue 26) the merge
 * of pi's change into a 10,000-line unsaved document (editors/jetbrains/src/test/java/pi/ide/core/MergeBench.java).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { buildJetBrains } from "../test/helpers/jetbrains.ts";
import { header, row } from "./report.ts";

interface Figures {
	caret_us_p50: number;
	caret_us_p95: number;
	writes_per_second: number;
	write_ms_p50: number;
}

export async function runJetBrainsBench(): Promise<void> {
	const build = await buildJetBrains();
	const { stdout } = await promisify(execFile)("java", ["-cp", build.testClassPath, "pi.ide.plugin.CaretBench"], {
		maxBuffer: 1024 * 1024,
	});
	const figures = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Figures;
	console.log("\nJetBrains client (the plugin's code in the JVM, real DocumentImpl, no IDE)");
	header();
	row(
		"work per caret event, median of 300 batches of 1000",
		`${figures.caret_us_p50.toFixed(2)} µs`,
		"<= 20 µs",
		figures.caret_us_p50 <= 20,
	);
	row(
		"work per caret event, p95 batch",
		`${figures.caret_us_p95.toFixed(2)} µs`,
		"<= 20 µs",
		figures.caret_us_p95 <= 20,
	);
	row(
		"state files written per second, caret moving 30/s",
		`${figures.writes_per_second.toFixed(2)}/s`,
		"<= 5/s",
		figures.writes_per_second <= 5,
	);
	row("one write (build + encode + atomic write), median", `${figures.write_ms_p50.toFixed(3)} ms`, "(shown)", true);
	// Issue 26: pi's 10-hunk edit merged into a 10,000-line document with 50 unsaved lines (MergeBench.java).
	const merge = JSON.parse(
		(await promisify(execFile)("java", ["-cp", build.testClassPath, "pi.ide.core.MergeBench"])).stdout.trim(),
	) as { merge_ms_p50: number; merge_ms_p95: number };
	row(
		"merge: 10 hunks into 10,000 lines (50 unsaved), CPU p50",
		`${merge.merge_ms_p50.toFixed(2)} ms`,
		"<= 5 ms",
		merge.merge_ms_p50 <= 5,
	);
	row("merge: the same, CPU p95", `${merge.merge_ms_p95.toFixed(2)} ms`, "(shown)", true);
}

if (import.meta.main) await runJetBrainsBench();
