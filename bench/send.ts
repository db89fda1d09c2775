/**
 * Benchmarks of send to pi (protocol v0.5, issue 25), with a real Neovim (every version of the test matrix), real
 * Vim 9 and real Emacs 28, and real pi in RPC mode with the fake model: from `:PiIdeSend` (the command given over
 * RPC, Vim's channel, or `pi-ide-send` run as an Emacs command) to pi's draft (its
 * set_editor_text request read on pi's stdout), and from `:PiIdeSend!` to the model receiving the prompt (the
 * fake model's request), pi idle. Nothing runs per keystroke: the command writes one file; no autocmd, no timer.
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/send.ts`.
 */
import { fileURLToPath } from "node:url";
import { elispString, startEmacs } from "../test/helpers/emacs.ts";
import { type NvimFlavour, nvimVersion, requireBin, startNvim } from "../test/helpers/nvim.ts";
import { createPiEnv, type PiEnv } from "../test/helpers/pi-env.ts";
import { pollUntil } from "../test/helpers/poll.ts";
import { type RpcPi, startRpc } from "../test/helpers/rpc.ts";
import { touch } from "../test/helpers/scenario.ts";
import { startVim } from "../test/helpers/vim.ts";
import { forEachNvim, header, percentile, row, scope } from "./report.ts";

const ROUNDS = 30;
const TARGET_MS = 50;

/** Time ROUNDS drafts and ROUNDS sends at once through `send` (the editor's command), with pi in RPC mode idle. */
async function measure(
	name: string,
	env: PiEnv,
	rpc: RpcPi,
	send: (now: boolean, prompt: string) => Promise<void>,
	command: string,
): Promise<void> {
	const drafts: number[] = [];
	for (let i = 0; i < ROUNDS; i++) {
		const since = rpc.records.length;
		const t0 = performance.now();
		await send(false, `draft-${i}`);
		await rpc.waitFor(
			(r) => r.method === "set_editor_text" && String(r["text"]).startsWith(`draft-${i}\n`),
			10_000,
			since,
		);
		drafts.push(performance.now() - t0);
	}
	const prompts: number[] = [];
	let arrived = 0;
	env.model.beforeReply = () => {
		arrived = performance.now();
	};
	for (let i = 0; i < ROUNDS; i++) {
		const before = env.model.requests.length;
		arrived = 0;
		const t0 = performance.now();
		await send(true, `now-${i}`);
		await pollUntil(() => (env.model.requests.length > before && arrived > 0 ? true : undefined), "the prompt", 10_000);
		prompts.push(arrived - t0);
		await pollUntil(
			async () => {
				const state = await rpc.command({ type: "get_state" });
				const data = state["data"] as { isStreaming: boolean; pendingMessageCount: number };
				return !data.isStreaming && data.pendingMessageCount === 0 ? true : undefined;
			},
			"pi idle",
			10_000,
		);
	}
	const p50d = percentile(drafts, 0.5);
	const p50p = percentile(prompts, 0.5);
	row(
		`${name}: ${command} -> pi's draft, p50/p95`,
		`${p50d.toFixed(1)} / ${percentile(drafts, 0.95).toFixed(1)} ms`,
		`p50 <= ${TARGET_MS} ms`,
		p50d <= TARGET_MS,
	);
	row(
		`${name}: ${command} at once -> model (idle), p50/p95`,
		`${p50p.toFixed(1)} / ${percentile(prompts, 0.95).toFixed(1)} ms`,
		`p50 <= ${TARGET_MS} ms`,
		p50p <= TARGET_MS,
	);
}

async function benchFlavour(flavour: NvimFlavour): Promise<void> {
	const bin = requireBin(flavour);
	const s = scope();
	try {
		const env = await createPiEnv({ settings: { ideContext: { linkNvim: false } } });
		s.after(env.cleanup);
		const file = touch(env.workDir, "src/main.ts", "const a = 1;\nconst b = 2;\n");
		const nv = await startNvim(s, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command(`edit ${file}`);
		await nv.until((st) => st.active_buffer.file === file, "Neovim reports main.ts");
		const rpc = await startRpc(env);
		s.after(() => rpc.close());
		await pollUntil(
			async () => ((await nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) > 0 ? true : undefined),
			"pi's message naming Neovim",
			30_000,
		);
		await measure(
			`Neovim ${nvimVersion(bin)}`,
			env,
			rpc,
			(now, prompt) => nv.command(`PiIdeSend${now ? "!" : ""} ${prompt}`),
			":PiIdeSend",
		);
	} finally {
		await s.close();
	}
}

/** Real Vim 9 in tmux: `:PiIdeSend[!]` given over its channel. */
async function benchVim(): Promise<void> {
	const s = scope();
	try {
		const env = await createPiEnv();
		s.after(env.cleanup);
		const file = touch(env.workDir, "src/main.ts", "const a = 1;\nconst b = 2;\n");
		const vim = await startVim(null, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		});
		s.after(() => vim.kill());
		await vim.ex(`edit ${file}`);
		await vim.until((st) => (st["active_buffer"] as { file: string }).file === file, "Vim reports main.ts");
		const rpc = await startRpc(env);
		s.after(() => rpc.close());
		await vim.waitExpr("len(pi_ide#inbox#All()) > 0", 30_000);
		await measure("Vim 9", env, rpc, (now, prompt) => vim.ex(`PiIdeSend${now ? "!" : ""} ${prompt}`), ":PiIdeSend");
	} finally {
		await s.close();
	}
}

/** Real Emacs 28 (daemon with a tty frame in tmux): `pi-ide-send` run as a command. */
async function benchEmacs(): Promise<void> {
	const s = scope();
	try {
		const env = await createPiEnv();
		s.after(env.cleanup);
		const file = touch(env.workDir, "src/main.ts", "const a = 1;\nconst b = 2;\n");
		const e = await startEmacs(s, { runtimeDir: env.runtimeDir, cwd: env.workDir, file });
		await e.until((st) => (st?.active_buffer.file === file ? true : undefined), "Emacs reports main.ts");
		const rpc = await startRpc(env);
		s.after(() => rpc.close());
		await pollUntil(
			async () => ((await e.json<number>("(length (pi-ide-inbox-all))")) > 0 ? true : undefined),
			"pi's message naming Emacs",
			30_000,
		);
		await measure(
			"Emacs 28",
			env,
			rpc,
			(now, prompt) => e.act(`(pi-ide-send ${now ? "'(4)" : "nil"} ${elispString(prompt)})`),
			"M-x pi-ide-send",
		);
	} finally {
		await s.close();
	}
}

export async function runSendBench(): Promise<void> {
	console.log("\nSend to pi (protocol v0.5, issue 25): real Neovim, Vim and Emacs, real pi in RPC mode, fake model");
	header();
	await forEachNvim(benchFlavour);
	await benchVim();
	await benchEmacs();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runSendBench();
