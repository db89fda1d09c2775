/**
 * The v0.4 change set (issue: review and undo): pi's own cost per write/edit to record the change of a
 * 10,000-line file (430 KB): read the file before the tool (the baseline, once per run) and after it, update the
 * hunks (jsdiff over the changed region only), encode the change set (three runs kept, each with this file's
 * baseline: about 1.3 MB) and hand it to libuv's thread pool, which writes `pi-<pid>.review.json` atomically and
 * then pi's message. The tool's own write is not timed. Figures: the tool's wall time p50/p95, what the tool
 * result waits for (target p50 <= 5 ms); the time until both files have landed (info: the tool result does not
 * wait for it, an editor does); the process's CPU time, every thread's, until they landed (user + system, so the
 * kernel's part of the write and rename counts; less sensitive to other processes on a loaded machine). With the
 * state dir on the temp dir's file system and, where there is one, on tmpfs (/dev/shm: what $XDG_RUNTIME_DIR,
 * the usual state dir on Linux, is). Rounds never overlap: each waits for the last one's files.
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/review.ts`.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EditorRecord } from "../src/discovery/scan.ts";
import { buildRequest } from "../src/link/approval.ts";
import { EditorLink } from "../src/link/editor-link.ts";
import { makeState } from "../test/helpers/state-files.ts";
import { header, percentile, row } from "./report.ts";

const ROUNDS = 200;
/** Left out of the figures: the first runs (caches, JIT) until three runs of baselines are kept. */
const WARMUP = 20;

/** pi's EditorLink with a connected v0.2 editor: pi publishes for it but does not wait for an answer, so only pi's work is timed. */
function linkIn(root: string, dir: string): EditorLink {
	const state = makeState({ pid: 999_998, cwd: root });
	const editor: EditorRecord = { path: join(dir, "999998.json"), pid: 999_998, state, writtenAt: 0, ino: 0 };
	return new EditorLink({
		stateDir: dir,
		uid: process.getuid?.() ?? -1,
		pid: 999_999,
		cwd: root,
		home: root,
		connected: () => editor,
		seqCounter: { last: 0 },
	});
}

/**
 * A full rewrite of an `n`-line file (pi's `write` of new content over it, every line changed, or every second; issue 22): per
 * round, a new run, then what the tool waits for (the baseline read before the tool, the change set after it),
 * and the approval request's hunks for the same change (buildRequest, which runs before the user is asked).
 */
async function measureRewrite(
	base: string,
	n: number,
	rounds: number,
	every: number,
): Promise<{ record: number[]; ask: number[] }> {
	const root = mkdtempSync(join(base, "pi-ide-bench-rewrite-"));
	try {
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700);
		const file = join(root, "big.ts");
		const link = linkIn(root, dir);
		const record: number[] = [];
		const ask: number[] = [];
		for (let round = 0; round < rounds; round++) {
			// Line i changes when i % every is 0: every line (a full rewrite), or every second one (lines in common
			// throughout: the diff searches until its bound).
			const version = (v: number) =>
				`${Array.from({ length: n }, (_, i) => `export const value${i} = ${i % every ? 0 : v}; // line ${i}`).join("\n")}\n`;
			const before = version(2 * round);
			const after = version(2 * round + 1);
			writeFileSync(file, before);
			let started = performance.now();
			buildRequest({
				id: `r${round}`,
				tool: "write",
				file,
				before: { kind: "text", text: before },
				after,
				timeoutS: 120,
				now: Date.now() / 1000,
			});
			ask.push(performance.now() - started);
			link.startRun();
			started = performance.now();
			link.beforeTool("write", { path: file });
			let waited = performance.now() - started;
			writeFileSync(file, after);
			started = performance.now();
			await link.afterTool("write", { path: file });
			waited += performance.now() - started;
			record.push(waited);
			await link.flush();
		}
		await link.close();
		return { record, ask };
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** Per recorded edit, with the state dir under `base`: the tool's wall ms, ms until the files landed, CPU ms. */
async function measure(base: string): Promise<{ wall: number[]; landed: number[]; cpu: number[] }> {
	const root = mkdtempSync(join(base, "pi-ide-bench-review-"));
	try {
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700);
		const file = join(root, "big.ts");
		const lines = Array.from({ length: 10_000 }, (_, i) => `export const value${i} = ${i}; // line ${i}`);
		writeFileSync(file, `${lines.join("\n")}\n`);
		const link = linkIn(root, dir);
		const wall: number[] = [];
		const landed: number[] = [];
		const cpu: number[] = [];
		for (let round = 0; round < ROUNDS; round++) {
			if (round % 5 === 0) link.startRun();
			// One edit the model makes: a line changed somewhere in the file (the tool's own write is not timed).
			const at = (round * 997) % lines.length;
			lines[at] = `export const value${at} = ${round}; // edited`;
			let cpuStart = process.cpuUsage();
			const started = performance.now();
			link.beforeTool("edit", { path: file });
			const toolEnded = performance.now();
			const beforeCpu = process.cpuUsage(cpuStart);
			writeFileSync(file, `${lines.join("\n")}\n`);
			cpuStart = process.cpuUsage();
			const resumed = performance.now();
			await link.afterTool("edit", { path: file });
			const returned = performance.now();
			await link.flush();
			const afterCpu = process.cpuUsage(cpuStart);
			wall.push(toolEnded - started + (returned - resumed));
			landed.push(toolEnded - started + (performance.now() - resumed));
			cpu.push((beforeCpu.user + beforeCpu.system + afterCpu.user + afterCpu.system) / 1000);
		}
		await link.close();
		return { wall: wall.slice(WARMUP), landed: landed.slice(WARMUP), cpu: cpu.slice(WARMUP) };
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

export async function runReviewBench(): Promise<void> {
	console.log("\nReview: pi's change set (v0.4)");
	header();
	const places: [string, string][] = [[tmpdir(), tmpdir()]];
	if (existsSync("/dev/shm")) places.push(["/dev/shm, tmpfs", "/dev/shm"]);
	for (const [where, base] of places) {
		const { wall, landed, cpu } = await measure(base);
		const p50 = percentile(wall, 0.5);
		const figure = (values: number[]) =>
			`${percentile(values, 0.5).toFixed(2)} ms (p95 ${percentile(values, 0.95).toFixed(2)})`;
		row(`record an edit, 10,000-line file (dir: ${where})`, figure(wall), "p50 <= 5 ms", p50 <= 5);
		row("  until both files landed (off the tool's path)", figure(landed), "(info)", true);
		row("  CPU time, all threads (user + system)", figure(cpu), "(info)", true);
	}
	// Issue 22: a full rewrite must never hold pi's tool call for more than a few hundred ms.
	const cases: [number, number][] = [
		[1_000, 1],
		[10_000, 1],
		[20_000, 1],
		[50_000, 1],
		[20_000, 2],
	];
	for (const [n, every] of cases) {
		const { record, ask } = await measureRewrite(tmpdir(), n, n > 20_000 ? 6 : 10, every);
		const figure = (values: number[]) => `${percentile(values, 0.5).toFixed(1)} / ${Math.max(...values).toFixed(1)} ms`;
		const ok = (values: number[]) => Math.max(...values) <= 300;
		const what = `${every === 1 ? "full rewrite" : "every 2nd line"}, ${n.toLocaleString("en-US")} lines`;
		// Over 1 MiB (50,000 lines here) the change set carries a note, not a diff; the approval request diffs all.
		row(`${what}: change set, p50 / max`, figure(record), "max <= 300 ms", ok(record));
		row(`${what}: approval request, p50 / max`, figure(ask), "max <= 300 ms", ok(ask));
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runReviewBench();
}
