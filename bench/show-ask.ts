/**
 * Benchmarks of show and ask (protocol v0.5, issue 25 items 2-3) through a real Neovim (every version of the test
 * matrix, with a UI): pi's own desk (src/link/ask-desk.ts) writes the request, Neovim answers, pi reads the answer.
 * Timed from the tool's call to its result: the round trip the model waits for. Nothing runs while the tools are
 * unused: no watcher or timer on pi's side, and Neovim reads the request file only when its directory watch names it.
 * The same through the JetBrains client's headless driver (its core and client, as the plugin runs them).
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/show-ask.ts`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AskDesk } from "../src/link/ask-desk.ts";
import { makeState } from "../test/helpers/editors.ts";
import { startJetBrainsDriver } from "../test/helpers/jetbrains.ts";
import { type NvimFlavour, nvimVersion, requireBin, startNvim } from "../test/helpers/nvim.ts";
import { touch } from "../test/helpers/scenario.ts";
import { forEachNvim, header, percentile, row, scope } from "./report.ts";

const ROUNDS = 30;
const TARGET_MS = 100;

/**
 * pi's own desk against the editor `editorPid` (its state dir, its project holding 10 open files, `file` among them):
 * ROUNDS shows of `file` and ROUNDS asks, each timed from the tool's call to its result, and their rows printed.
 */
async function roundTrips(
	s: ReturnType<typeof scope>,
	name: string,
	{ stateDir, editorPid, project, file }: { stateDir: string; editorPid: number; project: string; file: string },
): Promise<void> {
	const state = makeState({ pid: editorPid, cwd: project });
	const desk = new AskDesk({
		stateDir,
		uid: process.getuid?.() ?? 0,
		pid: process.pid,
		pidNamespace: null,
		cwd: project,
		home: project,
		connected: () => ({ pid: editorPid, state }),
		excluded: () => false,
	});
	s.after(() => desk.close());
	const time = async (call: (i: number) => Promise<{ text: string }>, expect: RegExp): Promise<number[]> => {
		const out: number[] = [];
		for (let i = 0; i < ROUNDS; i++) {
			const t0 = performance.now();
			const result = await call(i);
			out.push(performance.now() - t0);
			if (!expect.test(result.text)) throw new Error(`unexpected result: ${result.text}`);
		}
		return out;
	};
	const shows = await time((i) => desk.show({ path: file, line: 1 + (i % 40) }, `show-${i}`), /^Shown in/);
	const asks = await time((i) => desk.ask({}, `ask-${i}`), /^Open file buffers in .* \(10;/);
	for (const [what, samples] of [
		["ide_show round trip", shows],
		["ide_open_files round trip (10 files)", asks],
	] as const) {
		const p50 = percentile(samples, 0.5);
		row(
			`${name}: ${what}, p50 / p95`,
			`${p50.toFixed(1)} / ${percentile(samples, 0.95).toFixed(1)} ms`,
			`p50 <= ${TARGET_MS} ms`,
			p50 <= TARGET_MS,
		);
	}
}

async function benchFlavour(flavour: NvimFlavour): Promise<void> {
	const bin = requireBin(flavour);
	const s = scope();
	try {
		const project = mkdtempSync(join(tmpdir(), "pi-ide-bench-show-ask-"));
		s.after(() => rmSync(project, { recursive: true, force: true }));
		const files = Array.from({ length: 10 }, (_, i) => touch(project, `src/f${i}.ts`, "const a = 1;\n".repeat(50)));
		const nv = await startNvim(s, flavour, { cwd: project, preCmds: ["set hidden"] });
		for (const file of files) await nv.command(`edit ${file}`);
		await nv.lua(`local ns = vim.api.nvim_create_namespace("bench")
			for _, buf in ipairs(vim.api.nvim_list_bufs()) do
				vim.diagnostic.set(ns, buf, { { lnum = 1, col = 0, message = "bad", severity = 1 } })
			end`);
		await nv.until((st) => st.active_buffer.file === files.at(-1), "Neovim reports the last file");
		await roundTrips(s, `Neovim ${nvimVersion(bin)}`, {
			stateDir: nv.stateDir,
			editorPid: nv.pid,
			project,
			file: "src/f0.ts",
		});
	} finally {
		await s.close();
	}
}

/** pi's desk against the JetBrains headless driver holding 10 open documents. */
async function benchJetBrains(): Promise<void> {
	const s = scope();
	try {
		const project = mkdtempSync(join(tmpdir(), "pi-ide-bench-show-ask-jb-"));
		const runtime = mkdtempSync(join(tmpdir(), "pi-ide-bench-show-ask-jb-rt-"));
		s.after(() => {
			rmSync(project, { recursive: true, force: true });
			rmSync(runtime, { recursive: true, force: true });
		});
		const files = Array.from({ length: 10 }, (_, i) => touch(project, `src/f${i}.kt`, "val a = 1\n".repeat(50)));
		const driver = await startJetBrainsDriver({
			project,
			env: { ...process.env, XDG_RUNTIME_DIR: runtime },
			file: files[0] ?? "",
		});
		s.after(() => driver.kill());
		for (const file of files) {
			await driver.command({ cmd: "open", file });
			await driver.command({
				cmd: "diagnostics",
				file,
				items: [{ severity: "error", line: 1, column: 1, message: "bad" }],
			});
		}
		await roundTrips(s, "JetBrains driver", {
			stateDir: join(runtime, "pi-ide"),
			editorPid: driver.pid,
			project,
			file: "src/f0.kt",
		});
	} finally {
		await s.close();
	}
}

export async function runShowAskBench(): Promise<void> {
	console.log("\nShow and ask (protocol v0.5, issue 25): pi's desk, real Neovim with a UI, the JetBrains driver");
	header();
	await forEachNvim(benchFlavour);
	await benchJetBrains();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runShowAskBench();
