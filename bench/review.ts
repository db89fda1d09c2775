/**
 * The v0.4 change set (issue: review and undo): pi's own cost per write/edit to record the change of a
 * 10,000-line file: read the file before the tool (baseline) and after it, diff the two (jsdiff), build and
 * encode the change set, and write `pi-<pid>.review.json` atomically. Target: p50 <= 5 ms.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EditorRecord } from "../src/discovery/scan.ts";
import { EditorLink } from "../src/link/editor-link.ts";
import { makeState } from "../test/helpers/state-files.ts";
import { header, median, percentile, row } from "./report.ts";

export async function runReviewBench(): Promise<void> {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-bench-review-"));
	try {
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700);
		const file = join(root, "big.ts");
		const lines = Array.from({ length: 10_000 }, (_, i) => `export const value${i} = ${i}; // line ${i}`);
		writeFileSync(file, `${lines.join("\n")}\n`);
		// A connected v0.2 editor: pi publishes for it but does not wait for an answer, so only pi's work is timed.
		const state = makeState({ pid: 999_998, cwd: root });
		const editor: EditorRecord = { path: join(dir, "999998.json"), pid: 999_998, state, writtenAt: 0, ino: 0 };
		const link = new EditorLink({
			stateDir: dir,
			uid: process.getuid?.() ?? -1,
			pid: 999_999,
			cwd: root,
			home: root,
			connected: () => editor,
			seqCounter: { last: 0 },
		});
		const samples: number[] = [];
		for (let round = 0; round < 60; round++) {
			if (round % 5 === 0) link.startRun();
			// One edit the model makes: a line changed somewhere in the file (the tool's own write is not timed).
			const at = (round * 997) % lines.length;
			lines[at] = `export const value${at} = ${round}; // edited`;
			const started = performance.now();
			link.beforeTool("edit", { path: file });
			const toolEnded = performance.now();
			writeFileSync(file, `${lines.join("\n")}\n`);
			const resumed = performance.now();
			await link.afterTool("edit", { path: file });
			samples.push(toolEnded - started + (performance.now() - resumed));
		}
		link.close();
		const measured = samples.slice(10);
		console.log("\nReview: pi's change set (v0.4)");
		header();
		const p50 = median(measured);
		row(
			"record an edit, 10,000-line file (read, diff, write) p50",
			`${p50.toFixed(2)} ms (p90 ${percentile(measured, 0.9).toFixed(2)})`,
			"<= 5 ms",
			p50 <= 5,
		);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}
