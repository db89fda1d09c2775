/**
 * Benchmarks of the unsaved read (issue 26 item 1, protocol v0.5 `<pid>.buffers.json`):
 * - pi's side: what pi adds to a `read` of a 10,000-line file that the connected editor holds with 50 unsaved
 *   changed lines: the state file looked at, the editor's buffers file read and validated, the result rendered
 *   (EditorLink.unsavedRead, the tool_result handler's work). Target p50 <= 2 ms.
 * - the Neovim client's side (every Neovim of the test matrix), timed inside Neovim: one state write with that
 *   buffer modified, when its `changedtick` moved (the buffers file written too) and when it did not (only looked
 *   at). Keystrokes only arm the state file's timer, as before: nothing of this runs per keystroke. And the same
 *   write with no pi connected (no pi's message names the editor): no buffer is looked at, no copy written. The
 *   keystroke itself: the client's TextChangedI handler through the autocmd dispatch, µs per call, with no pi
 *   connected and with one (target <= 20 µs; the same handler either way: nothing added).
 * - the Vim client's side, the same two writes, timed inside Vim with reltime(): the main-thread part and the time
 *   until the state file naming the new copy is in place (Vim writes through `mv` jobs, the copy first); and the
 *   keystroke's cost, as for Neovim.
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/unsaved-read.ts`.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EditorRecord } from "../src/discovery/scan.ts";
import { EditorLink } from "../src/link/editor-link.ts";
import { editorBuffersFileName } from "../src/protocol/wire.ts";
import { makePiMessage } from "../test/fixtures/pi-message.ts";
import { type LiveEditor, spawnLiveEditor, writeRawStateFile } from "../test/helpers/editors.ts";
import { type NvimFlavour, nvimVersion, requireBin, startNvim } from "../test/helpers/nvim.ts";
import { makeState, writeStateFile } from "../test/helpers/state-files.ts";
import { makeVimDirs, startVim } from "../test/helpers/vim.ts";
import { forEachNvim, header, percentile, row, scope } from "./report.ts";

const LINES = 10_000;
const CHANGED = 50;
const EDITOR_PID = 4242;
/** pi's read caps (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES of pi's read tool). */
const CAPS = { maxLines: 2000, maxBytes: 50 * 1024 };

const ms = (samples: number[]) =>
	`${percentile(samples, 0.5).toFixed(3)} ms (p95 ${percentile(samples, 0.95).toFixed(3)})`;

/** 10,000 lines, 50 of them (every 200th) changed by the user. */
function userBuffer(): string[] {
	return Array.from({ length: LINES }, (_, i) =>
		i % (LINES / CHANGED) === 7
			? `export const value${i} = "typed by the user, not saved"; // line ${i + 1}`
			: `export const value${i} = compute(${i}); // line ${i + 1}`,
	);
}

async function benchPi(): Promise<void> {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-bench-unsaved-"));
	try {
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700);
		const file = join(root, "src", "big.ts");
		const lines = userBuffer();
		const state = makeState({
			pid: EDITOR_PID,
			cwd: root,
			protocol: "0.3",
			buffers_serial: 1,
			active_buffer: { file, modified: true, lines_total: LINES, version: 77 },
		});
		writeStateFile(dir, state);
		const buffers = {
			protocol: "0.5",
			kind: "editor-buffers",
			pid: EDITOR_PID,
			serial: 1,
			timestamp: Date.now() / 1000,
			buffers: [{ file, version: 77, lines_total: LINES, text: lines.join("\n") }],
		};
		writeRawStateFile(dir, editorBuffersFileName(EDITOR_PID), JSON.stringify(buffers));
		const record: EditorRecord = {
			path: join(dir, `${EDITOR_PID}.json`),
			pid: EDITOR_PID,
			state,
			writtenAt: 0,
			ino: 0,
		};
		const link = new EditorLink({
			stateDir: dir,
			uid: process.getuid?.() ?? -1,
			pid: process.pid,
			cwd: root,
			home: root,
			connected: () => record,
		});
		const time = async (input: Record<string, unknown>, n: number): Promise<number[]> => {
			const xs: number[] = [];
			for (let i = 0; i < n + 20; i++) {
				const t0 = performance.now();
				const out = await link.unsavedRead(input, CAPS);
				const dt = performance.now() - t0;
				if (out?.kind !== "replace") throw new Error("expected the unsaved buffer");
				if (i >= 20) xs.push(dt);
			}
			return xs;
		};
		console.log("\n== unsaved read (v0.5): pi's side ==");
		header();
		const whole = await time({ path: "src/big.ts" }, 300);
		row(
			"read of a 10,000-line file, 50 unsaved lines: added by pi",
			ms(whole),
			"p50 <= 2 ms",
			percentile(whole, 0.5) <= 2,
		);
		const window = await time({ path: "src/big.ts", offset: 5000, limit: 100 }, 300);
		row("  the same, offset 5000 limit 100", ms(window), "(info)", true);
		void link.close();
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

/** `n` state writes with the 10,000-line buffer modified; `bump`: one line changed (a new changedtick) before each. */
const WRITE_COST = `
local uv = vim.uv or vim.loop
local n, bump = ...
local pi_ide = require("pi-ide")
local xs = {}
for i = 1, n do
  if bump then vim.api.nvim_buf_set_lines(0, 3, 4, false, { "typed " .. i }) end
  local t0 = uv.hrtime()
  local ok, err = pi_ide._write_now(true)
  xs[i] = (uv.hrtime() - t0) / 1e6
  if not ok then error(err) end
end
return xs
`;

/**
 * µs per keystroke in the client: its TextChangedI handler through Neovim's autocmd dispatch (what a typed
 * character runs of ours), for each of \`batches\` batches of \`per\` calls.
 */
const KEYSTROKE_COST = `
local uv = vim.uv or vim.loop
local batches, per = ...
local xs = {}
for b = 1, batches do
  local t0 = uv.hrtime()
  for _ = 1, per do
    vim.cmd("doautocmd <nomodeline> PiIde TextChangedI")
  end
  xs[b] = (uv.hrtime() - t0) / 1e3 / per
end
return xs
`;

const us = (samples: number[]) =>
	`${percentile(samples, 0.5).toFixed(1)} µs (p95 ${percentile(samples, 0.95).toFixed(1)})`;

/** A live "pi" (a process of ours) whose message names editor `editorPid`: the editor hands its buffers over. */
async function connectPi(stateDir: string, editorPid: number): Promise<LiveEditor> {
	const pi = await spawnLiveEditor();
	const message = makePiMessage({
		pid: pi.pid,
		cwd: stateDir,
		timestamp: Date.now() / 1000,
		editor_pid: editorPid,
		seq: 0,
		changed: [],
		last_turn: [],
	});
	writeRawStateFile(stateDir, `pi-${pi.pid}.json`, JSON.stringify(message));
	return pi;
}

/** Wait (up to 5 s) until the editor's copy is there: it saw the pi. */
async function untilCopy(stateDir: string, editorPid: number): Promise<void> {
	const path = join(stateDir, editorBuffersFileName(editorPid));
	for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 50));
	if (!existsSync(path)) throw new Error(`${path} not written after a pi connected`);
}

async function benchNvim(flavour: NvimFlavour): Promise<void> {
	const bin = requireBin(flavour);
	console.log(`\n-- Neovim ${nvimVersion(bin)} (${bin})`);
	header();
	const s = scope();
	try {
		const nv = await startNvim(s, flavour);
		const file = join(nv.tmp, "big.ts");
		writeFileSync(file, `${userBuffer().join("\n")}\n`);
		await nv.command("edit big.ts");
		await nv.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, { 'typed' })");
		const keysAlone = await nv.lua<number[]>(KEYSTROKE_COST, 20, 500);
		const alone = await nv.lua<number[]>(WRITE_COST, 100, true);
		const none = !existsSync(join(nv.stateDir, editorBuffersFileName(nv.pid)));
		row("no pi connected: state write, modified 10,000-line buffer", ms(alone), "no copy written", none);
		row("no pi connected: per keystroke (TextChangedI handler)", us(keysAlone), "(info)", true);
		const pi = await connectPi(nv.stateDir, nv.pid);
		s.after(pi.kill);
		await untilCopy(nv.stateDir, nv.pid);
		const keys = await nv.lua<number[]>(KEYSTROKE_COST, 20, 500);
		row("pi connected: per keystroke (TextChangedI handler)", us(keys), "p50 <= 20 µs", percentile(keys, 0.5) <= 20);
		const moved = await nv.lua<number[]>(WRITE_COST, 100, true);
		row("state write, modified 10,000-line buffer, new changedtick", ms(moved), "(info)", true);
		const still = await nv.lua<number[]>(WRITE_COST, 100, false);
		row("state write, the same buffer, changedtick unchanged", ms(still), "(info)", true);
	} finally {
		await s.close();
	}
}

/** Per write in ms, [main thread, until in place]; `bump`: one line changed (a new changedtick) before each. */
const VIM_WRITE_COST = `vim9script
def g:PiBenchUnsavedWrite(n: number, bump: bool): list<list<float>>
  var out: list<list<float>> = []
  for i in range(n)
    if bump
      setline(4, 'typed ' .. i)
    endif
    var start = reltime()
    pi_ide#WriteForTest()
    var sync = reltimefloat(reltime(start)) * 1000.0
    while pi_ide#Status().writing
      sleep 1m
    endwhile
    out->add([sync, reltimefloat(reltime(start)) * 1000.0])
  endfor
  return out
enddef
`;

/** µs per keystroke in the Vim client: its TextChangedI handler through Vim's autocmd dispatch, per batch. */
const VIM_KEYSTROKE_COST = `vim9script
def g:PiBenchKeystroke(batches: number, per: number): list<float>
  var out: list<float> = []
  for b in range(batches)
    var start = reltime()
    for i in range(per)
      doautocmd <nomodeline> PiIde TextChangedI
    endfor
    out->add(reltimefloat(reltime(start)) * 1000000.0 / per)
  endfor
  return out
enddef
`;

async function benchVim(): Promise<void> {
	console.log("\n== unsaved read (v0.5): the Vim client's state write ==");
	header();
	const dirs = makeVimDirs();
	const vim = await startVim(null, { dirs, cols: 120, rows: 40 });
	let pi: LiveEditor | undefined;
	try {
		writeFileSync(join(vim.dirs.work, "big.ts"), `${userBuffer().join("\n")}\n`);
		writeFileSync(
			join(vim.dirs.root, "unsaved-bench.vim"),
			VIM_WRITE_COST + VIM_KEYSTROKE_COST.replace("vim9script\n", ""),
		);
		await vim.ex(`source ${join(vim.dirs.root, "unsaved-bench.vim")}`);
		await vim.ex("edit big.ts");
		await vim.ex("call setline(1, 'typed')");
		const keysAlone = await vim.expr<number[]>("g:PiBenchKeystroke(20, 500)");
		const alone = await vim.expr<[number, number][]>("g:PiBenchUnsavedWrite(50, v:true)");
		const none = !existsSync(join(vim.dirs.stateDir, editorBuffersFileName(vim.pid)));
		row(
			"no pi connected: state write, modified 10,000-line buffer",
			ms(alone.map((m) => m[0])),
			"no copy written",
			none,
		);
		row("no pi connected: per keystroke (TextChangedI handler)", us(keysAlone), "(info)", true);
		pi = await connectPi(vim.dirs.stateDir, vim.pid);
		await untilCopy(vim.dirs.stateDir, vim.pid);
		const keys = await vim.expr<number[]>("g:PiBenchKeystroke(20, 500)");
		row("pi connected: per keystroke (TextChangedI handler)", us(keys), "p50 <= 20 µs", percentile(keys, 0.5) <= 20);
		const moved = await vim.expr<[number, number][]>("g:PiBenchUnsavedWrite(50, v:true)");
		row("state write, modified 10,000-line buffer, new changedtick", ms(moved.map((m) => m[0])), "(info)", true);
		row("  until the state naming the new copy is in place", ms(moved.map((m) => m[1])), "(info)", true);
		const still = await vim.expr<[number, number][]>("g:PiBenchUnsavedWrite(50, v:false)");
		row("state write, the same buffer, changedtick unchanged", ms(still.map((m) => m[0])), "(info)", true);
	} finally {
		vim.kill();
		await pi?.kill();
		rmSync(dirs.root, { recursive: true, force: true });
	}
}

/** Print the unsaved read's figures: pi's side, then every Neovim in the matrix, then Vim. */
export async function runUnsavedReadBench(): Promise<void> {
	await benchPi();
	console.log("\n== unsaved read (v0.5): the Neovim client's state write ==");
	await forEachNvim(benchNvim);
	try {
		await benchVim();
	} catch (error) {
		console.log(`Vim: ${(error as Error).message}`);
		process.exitCode = 1;
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runUnsavedReadBench();
}
