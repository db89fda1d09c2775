/**
 * v0.5 send to pi from real Vim 9 and real Emacs 28 (each in tmux, with its UI) to real pi in RPC mode, the
 * commands typed as keys: with no pi connected, one line; a selection sent as a draft (`:'<,'>PiIdeSend why
 * these?` from visual mode, `M-x pi-ide-send` with the region) lands in pi's input (the set_editor_text request)
 * and is not sent; a selection sent at once (`:PiIdeSend!`, `C-u M-x pi-ide-send`) reaches the model; an excluded
 * file is refused with one line and nothing of it reaches pi. Neovim's run is test/e2e/nvim-send.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { startEmacs } from "../helpers/emacs.ts";
import { userTexts } from "../helpers/fake-llm.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { type RpcRecord, startRpc } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startVim } from "../helpers/vim.ts";

const isDraft = (r: RpcRecord) => r.type === "extension_ui_request" && r.method === "set_editor_text";
const SOURCE = "const a = 1;\nconst b = 2;\nconst c = 3;\n";
const DRAFT = "why these?\n\nSelection from src/main.ts, lines 2-3:\n```typescript\nconst b = 2;\nconst c = 3;\n```";
const NOW = "explain\n\nSelection from src/main.ts, lines 1-2:\n```typescript\nconst a = 1;\nconst b = 2;\n```";

/** The project: src/main.ts, and secret.env that the project's ignore file excludes. */
async function project(t: Parameters<typeof envFor>[0]): Promise<{ env: PiEnv; file: string; secret: string }> {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	const file = touch(env.workDir, "src/main.ts", SOURCE);
	const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
	return { env, file, secret };
}

/** The user's steps in one editor, and how to read what it said. */
interface Editor {
	messages(): Promise<string>;
	connected(): Promise<boolean>;
	/** No region: the command as a draft with `prompt`. */
	sendLine(prompt: string): Promise<void>;
	/** Lines `first`..`last` selected, then the command (at once when `now`) with `prompt`. */
	sendSelection(first: number, last: number, now: boolean, prompt: string): Promise<void>;
	open(file: string): Promise<void>;
}

async function run(env: PiEnv, secret: string, editor: Editor, name: string): Promise<void> {
	const newMessage = async (before: string, what: RegExp) =>
		pollUntil(async () => {
			const added = (await editor.messages()).slice(before.length);
			return what.test(added) ? added : undefined;
		}, `a message ${what}`);

	// No pi yet: one line, nothing written.
	let before = await editor.messages();
	await editor.sendLine("hello");
	await newMessage(before, new RegExp(`no pi is connected to this ${name}: nothing sent`));

	const rpc = await startRpc(env);
	try {
		await pollUntil(async () => ((await editor.connected()) ? true : undefined), `pi naming this ${name}`, WAIT_MS);

		// A selection as a draft: in pi's input, not sent.
		let since = rpc.records.length;
		before = await editor.messages();
		await editor.sendSelection(2, 3, false, "why these?");
		const draft = await rpc.waitFor(isDraft, WAIT_MS, since);
		assert.equal(draft["text"], DRAFT);
		await newMessage(before, /\(pi-ide\) selection in pi's input as a draft/);
		assert.equal(env.model.requests.length, 0, "a draft is not sent");

		// A selection at once: the model receives it as a prompt.
		before = await editor.messages();
		await editor.sendSelection(1, 2, true, "explain");
		await pollUntil(
			() => (env.model.requests.some((r) => userTexts(r).includes(NOW)) ? true : undefined),
			"the model receiving the send",
			WAIT_MS,
		);
		await newMessage(before, /\(pi-ide\) selection sent to pi as a prompt/);

		// An excluded file: refused in one line; nothing reaches pi's input or the model.
		await editor.open(secret);
		since = rpc.records.length;
		before = await editor.messages();
		await editor.sendLine("what is this?");
		const refused = await newMessage(before, /not sent: the file is excluded by pi's ignore rules/);
		assert.equal(refused.split("\n").filter((l) => l.includes("(pi-ide)")).length, 1, refused);
		assert.equal(rpc.records.slice(since).filter(isDraft).length, 0);
		for (const request of env.model.requests) assert.ok(!JSON.stringify(request).includes("hunter2"));
	} finally {
		await rpc.close();
	}
}

describe("send to pi from Vim 9 and Emacs 28, real pi in RPC mode", () => {
	it("vim: :PiIdeSend from visual mode as a draft, :PiIdeSend! at once, no pi and an excluded file in one line", async (t) => {
		const { env, file, secret } = await project(t);
		const vim = await startVim(t, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		});
		const typed = async (keys: string) => {
			await vim.text(keys);
			await vim.keys("Enter");
		};
		const open = async (path: string) => {
			await vim.ex(`edit ${path}`);
			await vim.until((s) => (s["active_buffer"] as { file: string }).file === path, `Vim reports ${path}`);
		};
		await open(file);
		await run(
			env,
			secret,
			{
				messages: () => vim.expr<string>("execute('messages')"),
				connected: async () => (await vim.expr<number>("len(pi_ide#inbox#All())")) > 0,
				sendLine: (prompt) => typed(`:PiIdeSend ${prompt}`),
				sendSelection: async (first, last, now, prompt) => {
					await vim.keys(`${first}G`, "V", `${last - first}j`);
					await vim.waitExpr(`mode() ==# 'V' && line('.') == ${last}`);
					await typed(`:PiIdeSend${now ? "!" : ""} ${prompt}`);
				},
				open,
			},
			"Vim",
		);
	});

	it("emacs: M-x pi-ide-send with the region as a draft, C-u M-x pi-ide-send at once, no pi and an excluded file in one line", async (t) => {
		const { env, file, secret } = await project(t);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir, file });
		await e.until((s) => s?.active_buffer.file === file, "Emacs reports main.ts");
		const command = async (prefix: boolean, prompt: string) => {
			await e.keys(...(prefix ? ["C-u"] : []), "M-x");
			await e.keys("pi-ide-send", "Enter");
			await pollUntil(async () => ((await e.pane()).includes("Send to pi") ? true : undefined), "the prompt");
			await e.keys(prompt, "Enter");
		};
		await run(
			env,
			secret,
			{
				messages: async () => (await e.messages()).join("\n"),
				connected: async () => (await e.json<number>("(length (pi-ide-inbox-all))")) > 0,
				sendLine: (prompt) => command(false, prompt),
				sendSelection: async (first, last, now, prompt) => {
					// The region as the user marks whole lines: C-SPC at the first, down to the end of the last.
					await e.act(`(progn (goto-char (point-min)) (forward-line ${first - 1}))`);
					await e.keys("C-Space");
					for (let i = first; i < last; i++) await e.keys("C-n");
					await e.keys("C-e");
					await pollUntil(
						async () =>
							(await e.json<boolean>(
								`(with-selected-window (frame-selected-window (pi-ide-test-ui-frame)) (if (and (use-region-p) (= (line-number-at-pos) ${last})) t :false))`,
							)) || undefined,
						"the region over the lines",
					);
					await command(now, prompt);
				},
				open: async (path) => {
					await e.act(`(find-file ${JSON.stringify(path)})`);
					await e.until((s) => s?.active_buffer.file === path, `Emacs reports ${path}`);
				},
			},
			"Emacs",
		);
	});
});
