/**
 * Benchmarks of the Neovim client's review (protocol v0.4, editors/nvim/lua/pi-ide/review/), in real Neovim
 * (every version of the test matrix), timed inside Neovim with the loop's hrtime over many repetitions:
 * - marking 500 hunks: from pi's change set on disk (`pi-<pid>.review.json`, built and encoded by pi's own
 *   code) to the marks placed in the loaded buffer: read, decode, validate, mark (`review.load`), the client's
 *   own work when pi's message names a new change set. Target <= 10 ms. And the same load when the buffer's
 *   marks are already placed from an equal entry (pi changed another file): read, decode, validate, compare.
 * - reverting one hunk in a 10,000-line buffer that carries 500 of pi's hunks: `:PiIde revert` with the cursor
 *   on a hunk (find the mark, check its lines are still pi's, put the baseline's back). Each repetition undoes
 *   the revert and marks the buffer again outside the timed part. Target <= 5 ms.
 * - the state file's `reverted` after a keystroke in that buffer with every hunk reverted (the newest 50
 *   followed) and 1,000 undo steps since: the undo tree asked whether each revert is still in the text (info).
 * Each figure also in Neovim's CPU time (getrusage), which other processes on a shared machine inflate least.
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/nvim-review.ts`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { oneRunReview } from "../test/fixtures/review-message.ts";
import { writeRawStateFile } from "../test/helpers/editors.ts";
import { type NvimFlavour, nvimVersion, requireBin, startNvim } from "../test/helpers/nvim.ts";
import { forEachNvim, header, percentile, row, scope } from "./report.ts";

/** Any pid works: `review.load` trusts its caller (the inbox) to have checked that this pi is live and ours. */
const PI_PID = 999_997;

/** `count` lines, and pi's version of them: every `every`-th line changed, so `count / every` hunks. */
function piEdit(count: number, every: number): { before: string; after: string } {
	const before = Array.from({ length: count }, (_, i) => `export const value${i} = compute(${i}); // line ${i + 1}`);
	const after = before.map((line, i) => (i % every === every - 1 ? `${line} // pi changed this` : line));
	return { before: `${before.join("\n")}\n`, after: `${after.join("\n")}\n` };
}

/** pi's change set for one run that changed `file` from `before` to `after`, as pi encodes it. */
function reviewText(file: string, before: string, after: string, editorPid: number): string {
	return oneRunReview([{ file, before, after }], { pid: PI_PID, editorPid }).toString();
}

/**
 * Neovim's CPU time (user + system) in milliseconds: beside the wall time, the figure that a machine shared with
 * other busy processes inflates least.
 */
const CPU_MS = `
local uv = vim.uv or vim.loop
local function cpu_ms()
  local r = uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end`;

/**
 * \`n\` loads of the change set into the current buffer: milliseconds each, and the marks placed by the last. With
 * \`fresh\`, the client forgets what it marked before each load (not timed), so every load places every mark; without,
 * the buffer's marks are already placed from the same change set (pi changed another file).
 */
const MARK_COST = `${CPU_MS}
local review = require("pi-ide.review")
local dir, pid, n, fresh = ...
local ns = vim.api.nvim_create_namespace("pi-ide-review")
local xs, cpu = {}, {}
for i = 1, n do
  if fresh then review._reset() end
  local c0, t0 = cpu_ms(), uv.hrtime()
  local problem = review.load(dir, pid)
  xs[i], cpu[i] = (uv.hrtime() - t0) / 1e6, cpu_ms() - c0
  if problem then error(problem) end
end
return { xs, cpu, #vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}) }
`;

/** `n` reverts of the hunk under the cursor (line `at`): milliseconds each; undo and re-marking are not timed. */
const REVERT_COST = `${CPU_MS}
local review = require("pi-ide.review")
local dir, pid, at, n = ...
local xs, cpu = {}, {}
for i = 1, n do
  review.load(dir, pid)
  vim.api.nvim_win_set_cursor(0, { at, 0 })
  local c0, t0 = cpu_ms(), uv.hrtime()
  local msg = review.revert(nil)
  xs[i], cpu[i] = (uv.hrtime() - t0) / 1e6, cpu_ms() - c0
  if not msg:find("reverted 1 of", 1, true) then error(msg) end
  vim.cmd("silent undo")
end
return { xs, cpu }
`;

/**
 * The state file's `reverted` after each of `n` keystrokes in a buffer where `:PiIde revert file` reverted
 * its hunks (the newest 50 followed) and `steps` other undo steps came after: each keystroke (one line
 * changed, an undo step of its own) makes `review.report` ask the buffer's undo tree again.
 */
const REPORT_COST = `${CPU_MS}
local review = require("pi-ide.review")
local dir, pid, steps, n = ...
review.load(dir, pid)
local msg = review.revert("file")
if not msg:find("reverted 500 of", 1, true) then error(msg) end
local last = vim.api.nvim_buf_line_count(0) - 1
local function keystroke(i)
  vim.cmd("let &undolevels = &undolevels")
  vim.api.nvim_buf_set_lines(0, last, last + 1, false, { "typed " .. i })
end
for i = 1, steps do keystroke(i) end
local xs, cpu = {}, {}
for i = 1, n do
  keystroke(steps + i)
  local c0, t0 = cpu_ms(), uv.hrtime()
  local listed = review.report()
  xs[i], cpu[i] = (uv.hrtime() - t0) / 1e6, cpu_ms() - c0
  if #listed ~= 50 then error("expected 50 listed, got " .. #listed) end
end
return { xs, cpu }
`;

const ms = (samples: number[]) =>
	`${percentile(samples, 0.5).toFixed(2)} ms (p95 ${percentile(samples, 0.95).toFixed(2)})`;

async function benchOne(flavour: NvimFlavour): Promise<void> {
	const bin = requireBin(flavour);
	console.log(`\n-- Neovim ${nvimVersion(bin)} (${bin})`);
	header();
	const s = scope();
	try {
		const nv = await startNvim(s, flavour);

		// 500 hunks in a 5,000-line file (every 10th line), the most a file carries (MAX_REVIEW_HUNKS_PER_FILE).
		const marked = join(nv.tmp, "marked.ts");
		const small = piEdit(5_000, 10);
		writeFileSync(marked, small.after);
		await nv.command("edit marked.ts");
		writeRawStateFile(nv.stateDir, `pi-${PI_PID}.review.json`, reviewText(marked, small.before, small.after, nv.pid));
		const [markSamples, markCpu, placed] = await nv.lua<[number[], number[], number]>(
			MARK_COST,
			nv.stateDir,
			PI_PID,
			200,
			true,
		);
		if (placed !== 500) throw new Error(`expected 500 marks, found ${placed}`);
		const markP50 = percentile(markSamples, 0.5);
		row("mark 500 hunks: change set read to marks placed (200 runs)", ms(markSamples), "p50 <= 10 ms", markP50 <= 10);
		row("  CPU time (user + system)", ms(markCpu), "(info)", true);
		const [keptSamples, keptCpu] = await nv.lua<[number[], number[], number]>(
			MARK_COST,
			nv.stateDir,
			PI_PID,
			200,
			false,
		);
		row("  the same 500 marks kept (pi changed another file)", ms(keptSamples), "(info)", true);
		row("    CPU time (user + system)", ms(keptCpu), "(info)", true);

		// One hunk reverted in a 10,000-line buffer with 500 hunks (every 20th line), the cursor mid-file.
		const big = join(nv.tmp, "big.ts");
		const large = piEdit(10_000, 20);
		writeFileSync(big, large.after);
		await nv.command("edit big.ts");
		writeRawStateFile(nv.stateDir, `pi-${PI_PID}.review.json`, reviewText(big, large.before, large.after, nv.pid));
		const [revertSamples, revertCpu] = await nv.lua<[number[], number[]]>(REVERT_COST, nv.stateDir, PI_PID, 5_000, 200);
		const revertP50 = percentile(revertSamples, 0.5);
		row("revert one hunk, 10,000-line buffer, 500 hunks (200 runs)", ms(revertSamples), "p50 <= 5 ms", revertP50 <= 5);
		row("  CPU time (user + system)", ms(revertCpu), "(info)", true);

		// The same buffer, every hunk reverted, then 1,000 undo steps of the user's: what a keystroke costs.
		await nv.command("silent edit!");
		const [reportSamples, reportCpu] = await nv.lua<[number[], number[]]>(REPORT_COST, nv.stateDir, PI_PID, 1_000, 200);
		row("`reverted` per keystroke, 50 reverts, 1,000 undo steps", ms(reportSamples), "(info)", true);
		row("  CPU time (user + system)", ms(reportCpu), "(info)", true);
	} finally {
		await s.close();
	}
}

/** Print the review figures for every Neovim in the matrix. */
export async function runNvimReviewBench(): Promise<void> {
	console.log("\n== Neovim client: review (v0.4) ==");
	await forEachNvim(benchOne);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runNvimReviewBench();
}
