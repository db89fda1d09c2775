/**
 * Benchmarks of the Neovim client, in real Neovim (every version of the test matrix): the cost of one
 * CursorMoved event (the autocmd callback path, in-process, median of 10,000), writes per second while the
 * cursor keeps moving (over RPC, as a user would), writes per second under a burst of visual toggles, the cost
 * of one write for a typical state and for a 10,000-line selection, and what the plugin adds to startup
 * (`--startuptime`, with and without it).
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/nvim.ts`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	binaryishLines,
	type NvimFlavour,
	nvimVersion,
	PLUGIN_DIR,
	requireBin,
	startNvim,
} from "../test/helpers/nvim.ts";
import { forEachNvim, header, median, row, scope } from "./report.ts";

/** In-process timing of the CursorMoved path, median over 10,000 calls, in microseconds. */
const EVENT_COST = `
local uv = vim.uv or vim.loop
local pi = require("pi-ide")
local n = 10000
local direct, autocmd = {}, {}
-- The callback exactly as the autocmd runs it (guard + handler), cursor really moving each time.
local handler = pi._handlers.moved
for i = 1, n do
  vim.api.nvim_win_set_cursor(0, { (i % 500) + 1, i % 7 })
  local t0 = uv.hrtime()
  local ok = pcall(handler)
  direct[i] = (uv.hrtime() - t0) / 1000
end
-- Through Neovim's autocmd dispatch for our group (what one CursorMoved costs end to end in Lua).
for i = 1, n do
  vim.api.nvim_win_set_cursor(0, { (i % 500) + 1, i % 7 })
  local t0 = uv.hrtime()
  vim.api.nvim_exec_autocmds("CursorMoved", { group = "PiIde" })
  autocmd[i] = (uv.hrtime() - t0) / 1000
end
table.sort(direct); table.sort(autocmd)
return { direct[n / 2], autocmd[n / 2] }
`;

/** Median cost of one forced write (snapshot + encode + atomic write), in milliseconds. */
const WRITE_COST = `
local uv = vim.uv or vim.loop
local pi = require("pi-ide")
local n = ...
local xs = {}
for i = 1, n do
  local t0 = uv.hrtime()
  local ok, err = pi._write_now(true)
  xs[i] = (uv.hrtime() - t0) / 1e6
  if not ok then error(err) end
end
table.sort(xs)
return xs[math.floor(n / 2) + 1]
`;

async function benchOne(flavour: NvimFlavour): Promise<void> {
	const bin = requireBin(flavour);
	console.log(`\n-- Neovim ${nvimVersion(bin)} (${bin})`);
	header();
	const s = scope();
	try {
		// Per-event cost and write cost for a typical state: a 500-line file, a small selection made.
		const nv = await startNvim(s, flavour);
		const lines = Array.from({ length: 500 }, (_, i) => `const value${i} = compute(${i}, "some text here");`);
		writeFileSync(join(nv.tmp, "typical.ts"), `${lines.join("\n")}\n`);
		await nv.command("edit typical.ts");
		await nv.input("3GVj<Esc>");
		await nv.until((x) => x.active_buffer.selection !== null, "typical state written");
		const [direct, autocmd] = await nv.lua<[number, number]>(EVENT_COST);
		row("CursorMoved callback, median of 10,000", `${direct.toFixed(2)} µs`, "<= 20 µs", direct <= 20);
		row("  incl. Neovim's autocmd dispatch", `${autocmd.toFixed(2)} µs`, "(info)", true);
		const typical = await nv.lua<number>(WRITE_COST, 200);
		row("write, typical state (median of 200)", `${typical.toFixed(3)} ms`, "<= 1 ms", typical <= 1);

		// Writes per second while the cursor keeps moving (over RPC, each move awaited, for 3 s).
		await nv.lua("require('pi-ide').setup()");
		const before = (await nv.status()).writes;
		const started = performance.now();
		let moves = 0;
		while (performance.now() - started < 3000) {
			moves++;
			await nv.call("nvim_win_set_cursor", 0, [(moves % 500) + 1, moves % 7]);
		}
		await nv.settle();
		const seconds = (performance.now() - started) / 1000;
		const rate = ((await nv.status()).writes - before) / seconds;
		row(`writes/s, continuous movement (${Math.round(moves / seconds)} moves/s)`, rate.toFixed(2), "<= 5", rate <= 5);

		// Prompt writes under a burst: 1,000 visual toggles, each its own request (its own event-loop turn), with
		// the client on and off. Before the gap between prompt writes this made ~900 writes/s.
		const toggles = async (): Promise<{ ms: number; writes: number }> => {
			const w0 = (await nv.status()).writes;
			const t0 = performance.now();
			for (let i = 0; i < 1000; i++) await nv.input(i % 2 === 0 ? "v" : "<Esc>");
			const ms = performance.now() - t0;
			return { ms, writes: (await nv.status()).writes - w0 };
		};
		const on = await toggles();
		await nv.lua("require('pi-ide').disable()");
		const off = await toggles();
		await nv.lua("require('pi-ide').enable()");
		// One write at once, then at most one per 20 ms gap (about 50/s).
		const toggleRate = on.writes / (on.ms / 1000);
		row(
			`writes/s, 1,000 visual toggles (${Math.round(1000 / (on.ms / 1000))} toggles/s)`,
			`${toggleRate.toFixed(1)} (${on.writes})`,
			"1 + 1 per 20 ms",
			on.writes <= 1 + Math.ceil(on.ms / 20),
		);
		row(
			"  toggle cost with / without the client",
			`${(on.ms / 1000).toFixed(3)} / ${(off.ms / 1000).toFixed(3)} ms`,
			"(info)",
			true,
		);

		// A 10,000-line selection (live, in visual mode).
		const big = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}: ${"lorem ipsum ".repeat(4)}`);
		writeFileSync(join(nv.tmp, "big.txt"), `${big.join("\n")}\n`);
		await nv.command("edit big.txt");
		await nv.input("ggVG");
		await nv.until((x) => x.active_buffer.selection?.end.line === 10_000, "10,000-line selection written");
		const bigCost = await nv.lua<number>(WRITE_COST, 20);
		const bytes = big.join("\n").length;
		row(`write, 10,000 lines selected (${(bytes / 1024).toFixed(0)} KiB)`, `${bigCost.toFixed(3)} ms`, "(info)", true);
		// The same selection kept as '< '> marks: what every later write (each cursor move) pays for it.
		await nv.input("<Esc>");
		await nv.until((x) => x.active_buffer.selection?.end.line === 10_000, "the kept selection written");
		const keptCost = await nv.lua<number>(WRITE_COST, 20);
		row("  after <Esc>, the selection kept as marks", `${keptCost.toFixed(3)} ms`, "(info)", true);

		// ggVG on a 3 MB file of binary-ish bytes (control bytes take 6 in JSON): the file stays small.
		const dump = binaryishLines(3_000_000);
		writeFileSync(join(nv.tmp, "dump.txt"), `${dump.join("\n")}\n`);
		await nv.command("edit dump.txt");
		await nv.input("ggVG");
		await nv.until((x) => x.active_buffer.selection?.end.line === dump.length, "3 MB selection written");
		const dumpCost = await nv.lua<number>(WRITE_COST, 20);
		const dumpFile = statSync(nv.statePath).size;
		row(
			`write, ggVG on 3 MB binary-ish (file ${(dumpFile / 1024).toFixed(0)} KiB)`,
			`${dumpCost.toFixed(3)} ms`,
			"file < 1024 KiB",
			dumpFile < 1024 * 1024,
		);
		await nv.input("<Esc>");
	} finally {
		await s.close();
	}

	// The deferred part of startup: what the first event-loop turn pays (require the modules, create the
	// autocmds, first write). Not in --startuptime, so measured on its own, median of 15 fresh Neovims.
	const deferred: number[] = [];
	for (let i = 0; i < 15; i++) {
		const s2 = scope();
		try {
			const nv = await startNvim(s2, flavour, { preCmds: ["let g:pi_ide_disable = 1"] });
			deferred.push(
				await nv.lua<number>(`
local uv = vim.uv or vim.loop
vim.g.pi_ide_disable = nil
local t0 = uv.hrtime()
local pi = require("pi-ide")
pi._autostart()
pi._write_now(true)
return (uv.hrtime() - t0) / 1e6`),
			);
		} finally {
			await s2.close();
		}
	}
	row("deferred start: require + enable + 1st write", `${median(deferred).toFixed(3)} ms`, "(after startup)", true);

	// Startup: --startuptime with and without the plugin, median of 15 runs each.
	const tmp = mkdtempSync(join(tmpdir(), "pi-ide-bench-"));
	try {
		const run = (withPlugin: boolean, i: number) => {
			const log = join(tmp, `st-${withPlugin}-${i}.log`);
			const args = ["--headless", "--clean", "-n", "-i", "NONE", "--startuptime", log];
			if (withPlugin) args.push("--cmd", `set rtp+=${PLUGIN_DIR}`);
			execFileSync(bin, [...args, "-c", "qa!"], {
				cwd: tmp,
				env: { ...process.env, XDG_RUNTIME_DIR: tmp },
				stdio: "ignore",
			});
			const text = readFileSync(log, "utf8");
			// The clock of the last line: with -c qa!, 0.7 exits before logging "--- NVIM STARTED ---".
			const clocks = [...text.matchAll(/^(\d+\.\d+)\s/gm)].map((m) => Number(m[1]));
			const total = clocks.at(-1) ?? Number.NaN;
			// "clock  self+sourced  self:  sourcing <file>"
			const src = /^\d+\.\d+\s+(\d+\.\d+)\s+\d+\.\d+: sourcing .*plugin\/pi-ide\.lua$/m.exec(text);
			return { total, plugin: src ? Number(src[1]) : 0 };
		};
		const without: number[] = [];
		const withP: number[] = [];
		const sourcing: number[] = [];
		for (let i = 0; i < 15; i++) {
			without.push(run(false, i).total);
			const w = run(true, i);
			withP.push(w.total);
			sourcing.push(w.plugin);
		}
		const added = median(withP) - median(without);
		const own = median(sourcing);
		row("startup: plugin/pi-ide.lua incl. requires", `${own.toFixed(3)} ms`, "<= 1 ms", own <= 1);
		row(
			`  total with - without (${median(withP).toFixed(1)} vs ${median(without).toFixed(1)} ms)`,
			`${added.toFixed(3)} ms`,
			"(noisy, info)",
			true,
		);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

/** Print the Neovim client's figures for every Neovim in the matrix. */
export async function runNvimBench(): Promise<void> {
	console.log("== Neovim client ==");
	await forEachNvim(benchOne);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runNvimBench();
}
