/**
 * What the user's-trust check costs a prompt (src/pi-api/trust.ts): asked with every prompt of a project that has
 * a rules file, it reads pi's global settings and, when `<agent-dir>/trust.json` changed, pi's trust store
 * (which takes a lock file). Real files, pi's own classes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { savedTrustReader, userTrustCheck } from "../src/pi-api/trust.ts";
import { header, percentile, row } from "./report.ts";

const ROUNDS = 300;

function sample(fn: () => unknown): { p50: number; p99: number } {
	const samples: number[] = [];
	for (let i = 0; i < ROUNDS; i++) {
		const start = performance.now();
		fn();
		samples.push(performance.now() - start);
	}
	return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

export async function runTrustBench(): Promise<void> {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-bench-trust-"));
	try {
		const agentDir = join(root, "agent");
		const project = join(root, "project");
		mkdirSync(agentDir);
		mkdirSync(join(project, ".pi"), { recursive: true });
		const trustFile = join(agentDir, "trust.json");
		writeFileSync(trustFile, JSON.stringify({ [project]: true }));
		const check = userTrustCheck({ cwd: project, agentDir, piTrusts: () => true, argv: [] });
		const steady = sample(check);
		let round = 0;
		const reader = savedTrustReader(agentDir);
		// trust.json rewritten before every read: the store is read each time.
		const changed = sample(() => {
			writeFileSync(trustFile, JSON.stringify({ [project]: true, [join(root, String(round++))]: false }));
			return reader(project);
		});
		const write = sample(() => writeFileSync(trustFile, JSON.stringify({ [project]: true })));
		console.log("\nThe user's-trust check (a project with a rules file; per prompt)");
		header();
		row(
			"trust.json unchanged, p50 / p99",
			`${steady.p50.toFixed(3)} / ${steady.p99.toFixed(3)} ms`,
			"p50 <= 0.2 ms",
			steady.p50 <= 0.2,
		);
		row(
			"trust.json changed (store read + the rewrite), p50 / p99",
			`${changed.p50.toFixed(3)} / ${changed.p99.toFixed(3)} ms`,
			"(info)",
			true,
		);
		row("  of which the rewrite, p50", `${write.p50.toFixed(3)} ms`, "(info)", true);
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

if (import.meta.main) await runTrustBench();
