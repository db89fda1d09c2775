/**
 * v0.5 send to pi from a real Neovim (0.7.2 and 0.10, with a UI) to real pi in RPC mode: `:PiIdeSend` from
 * visual mode puts the selection and the typed words into pi's input (the set_editor_text request),
 * `:PiIdeSend! [prompt]` sends the line at once (the fake model records it), `@diagnostic` sends the diagnostic
 * under the cursor, an excluded file is refused with one line, and with no pi connected Neovim says so in one line.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { userTexts } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { type RpcRecord, startRpc } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const isDraft = (r: RpcRecord) => r.type === "extension_ui_request" && r.method === "set_editor_text";

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: :PiIdeSend to real pi in RPC mode`, () => {
		it("no pi: one line; a visual selection as a draft; the line at once; a diagnostic; an excluded file refused", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			mkdirSync(join(env.workDir, ".pi"), { recursive: true });
			writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
			const file = touch(env.workDir, "src/main.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
			const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command(`edit ${file}`);
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports main.ts");
			const messages = async () => nv.exec("messages");
			const newMessage = async (before: string, what: RegExp) =>
				pollUntil(async () => {
					const now = await messages();
					const added = now.slice(before.length);
					return what.test(added) ? added : undefined;
				}, `a message ${what}`);

			// No pi yet: one line, nothing written.
			let before = await messages();
			await nv.command("PiIdeSend hello");
			await newMessage(before, /no pi is connected to this Neovim: nothing sent/);

			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			await pollUntil(
				async () => ((await nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) > 0 ? true : undefined),
				"pi's message naming this Neovim",
				WAIT_MS,
			);

			// Visual mode: lines 2-3 selected, `:` gives the range.
			let since = rpc.records.length;
			before = await messages();
			await nv.input("2GVj:PiIdeSend why these?<CR>");
			const draft = await rpc.waitFor(isDraft, WAIT_MS, since);
			assert.equal(
				draft["text"],
				"why these?\n\nSelection from src/main.ts, lines 2-3:\n```typescript\nconst b = 2;\nconst c = 3;\n```",
			);
			await newMessage(before, /\(pi-ide\) selection in pi's input as a draft/);
			assert.equal(env.model.requests.length, 0, "a draft is not sent");

			// At once: the line under the cursor becomes a prompt the model receives.
			await nv.command("normal! 1G");
			await nv.command("PiIdeSend! explain");
			const sent = "explain\n\nLine from src/main.ts, line 1:\n```typescript\nconst a = 1;\n```";
			await pollUntil(
				() => (env.model.requests.some((r) => userTexts(r).includes(sent)) ? true : undefined),
				"the model receiving the send",
				WAIT_MS,
			);

			// The diagnostic under the cursor.
			since = rpc.records.length;
			await nv.lua(`local buf = vim.api.nvim_get_current_buf()
				vim.diagnostic.set(vim.api.nvim_create_namespace("send-test"), buf,
					{ { lnum = 1, col = 0, message = "b is unused", severity = vim.diagnostic.severity.WARN } })
				vim.api.nvim_win_set_cursor(0, { 2, 0 })`);
			await nv.command("PiIdeSend @diagnostic");
			const diag = await rpc.waitFor(isDraft, WAIT_MS, since);
			assert.equal(diag["text"], "Diagnostic from src/main.ts, line 2: b is unused\n```typescript\nconst b = 2;\n```");

			// An excluded file: refused, one line; nothing reaches pi's input.
			await nv.command(`edit ${secret}`);
			await nv.until((s) => s.active_buffer.file === secret, "Neovim reports secret.env");
			since = rpc.records.length;
			before = await messages();
			await nv.command("PiIdeSend! what is this?");
			await newMessage(before, /not sent: the file is excluded by pi's ignore rules/);
			assert.equal(rpc.records.slice(since).filter(isDraft).length, 0);
			for (const request of env.model.requests) assert.ok(!JSON.stringify(request).includes("hunter2"));
		});
	});
});
