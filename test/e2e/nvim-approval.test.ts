/**
 * Approval end to end (v0.4, `ideContext.approve: "edits"`): a real pi in RPC mode whose fake model edits a file,
 * a real Neovim showing it. pi waits; Neovim marks the proposal and `:PiIde approve` or `:PiIde reject` decides
 * (pi's own dialog, asked at the same time, is dismissed); with nobody answering the short timeout ends the wait.
 * The model is told each outcome. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { DIALOG_ACCEPT, DIALOG_REJECT } from "../../src/link/approval.ts";
import { type RecordedRequest, toolsThenReply } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startRpc, type UiRequest } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const ORIGINAL = "alpha\nbeta\ngamma\n";
const EDITED = "alpha\nbeta, by pi\ngamma\n";

/** The tool result the model read in a request (the `tool` message), as text. */
const toolResult = (request: RecordedRequest | undefined): string => {
	const messages = (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
	return JSON.stringify(messages.filter((m) => m.role === "tool").map((m) => m.content));
};

const PENDING = `local n = 0
	for _ in pairs(require("pi-ide.approval")._state().pending) do n = n + 1 end
	return n`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name} + pi: approving pi's edits (v0.4)`, () => {
		const cases: {
			name: string;
			command: string | null;
			dialog?: boolean;
			abort?: boolean;
			timeoutS: number;
			content: string;
			/** What the model reads in the tool result; null: the run was stopped, the model is not asked again. */
			told: RegExp | null;
		}[] = [
			{
				name: ":PiIde approve: the edit applies, the model is told it was approved in Neovim",
				command: "PiIde approve",
				timeoutS: 60,
				content: EDITED,
				told: /the user approved this change to notes\.txt in Neovim/,
			},
			{
				name: ":PiIde reject: the file is unchanged, the model is told the user rejected it",
				command: "PiIde reject",
				timeoutS: 60,
				content: ORIGINAL,
				told: /The user rejected this change in Neovim: notes\.txt is unchanged\. Do not make it again/,
			},
			{
				name: "pi's dialog answers first: the edit applies, the request leaves Neovim",
				command: null,
				dialog: true,
				timeoutS: 60,
				content: EDITED,
				told: /the user approved this change to notes\.txt in pi's approval dialog/,
			},
			{
				name: "pi's abort (Esc) while it waits: not applied, the request leaves Neovim",
				command: null,
				abort: true,
				timeoutS: 60,
				content: ORIGINAL,
				told: null,
			},
			{
				name: "no answer: the timeout, not a rejection; the request leaves Neovim",
				command: null,
				timeoutS: 3,
				content: ORIGINAL,
				told: /No decision within 3 s .*notes\.txt is unchanged\. This is not a rejection: ask the user/,
			},
		];
		for (const c of cases)
			it(c.name, async (t) => {
				const env = await envFor(t, {
					settings: { ideContext: { approve: "edits", approveTimeoutSeconds: c.timeoutS } },
				});
				const file = touch(env.workDir, "notes.txt", ORIGINAL);
				const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
				await nv.command("edit notes.txt");
				await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
				const rpc = await startRpc(env);
				t.after(() => rpc.close());
				env.model.respond = toolsThenReply([
					{ name: "edit", arguments: { path: file, edits: [{ oldText: "beta\n", newText: "beta, by pi\n" }] } },
				]);
				const since = rpc.records.length;
				const prompted = rpc.prompt("change beta");
				// pi starts and the model answers first: that takes pi's own wait under load, not a Neovim one.
				await pollUntil(
					async () => ((await nv.lua<number>(PENDING)) === 1 ? true : undefined),
					"Neovim has the request",
					WAIT_MS,
				);
				assert.equal(await nv.lua("return require('pi-ide').statusline()"), "pi approve?");
				// pi's dialog asks at the same time (the editor's answer dismisses it).
				const dialog = await rpc.waitFor<UiRequest>(
					(r) => r.type === "extension_ui_request" && r.method === "select",
					undefined,
					since,
				);
				assert.equal(readFileSync(file, "utf8"), ORIGINAL, "nothing written while pi waits");
				if (c.command) await nv.command(c.command);
				if (c.dialog) rpc.respond(dialog.id, { value: DIALOG_ACCEPT });
				if (c.abort) await rpc.command({ type: "abort" });
				await prompted;
				assert.equal(readFileSync(file, "utf8"), c.content);
				if (c.told) assert.match(toolResult(env.model.requests[1]), c.told);
				else assert.equal(env.model.requests.length, 1, "a stopped run asks the model nothing more");
				await pollUntil(async () => ((await nv.lua<number>(PENDING)) === 0 ? true : undefined), "the request is gone");
				if (c.content === EDITED) {
					const buffer = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
					assert.deepEqual(buffer, ["alpha", "beta, by pi", "gamma"], "the approved edit reloads the buffer");
				}
			});

		it("A shown, A ends (answered in pi's dialog), B arrives: :PiIde approve names B and approves nothing; again approves B", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits", approveTimeoutSeconds: 60 } } });
			const first = touch(env.workDir, "notes.txt", ORIGINAL);
			const second = touch(env.workDir, "other.txt", ORIGINAL);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === first && Array.isArray(s.decisions), "Neovim reports notes.txt");
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			const edit = (path: string) => ({
				name: "edit",
				arguments: { path, edits: [{ oldText: "beta\n", newText: "beta, by pi\n" }] },
			});
			env.model.respond = toolsThenReply([edit(first), edit(second)]);
			const pendingFile = async (): Promise<string | undefined> =>
				(await nv.lua<string | null>(
					'for _, r in pairs(require("pi-ide.approval")._state().pending) do return r.file end return nil',
				)) ?? undefined;
			const since = rpc.records.length;
			const prompted = rpc.prompt("change beta in both");
			await pollUntil(async () => ((await pendingFile()) === first ? true : undefined), "Neovim shows A", WAIT_MS);
			const dialogA = await rpc.waitFor<UiRequest>(
				(r) => r.type === "extension_ui_request" && r.method === "select",
				undefined,
				since,
			);
			const afterA = rpc.records.length;
			rpc.respond(dialogA.id, { value: DIALOG_REJECT });
			await pollUntil(async () => ((await pendingFile()) === second ? true : undefined), "Neovim has B", WAIT_MS);
			await rpc.waitFor<UiRequest>(
				(r) => r.type === "extension_ui_request" && r.method === "select",
				undefined,
				afterA,
			);
			const refused = await nv.lua<string>('return vim.api.nvim_exec("PiIde approve", true)');
			assert.match(refused, /not approved: the request you saw is gone; pi now asks about other\.txt/);
			assert.deepEqual(await nv.lua('return require("pi-ide.approval").report()'), [], "nothing decided");
			assert.match(await nv.lua<string>('return vim.api.nvim_exec("PiIde approve", true)'), /approved: pi applies/);
			await prompted;
			assert.equal(readFileSync(first, "utf8"), ORIGINAL, "A: rejected in pi's dialog");
			assert.equal(readFileSync(second, "utf8"), EDITED, "B: approved in Neovim, once shown");
			const told = toolResult(env.model.requests[1]);
			assert.match(told, /The user rejected this change in pi's approval dialog: notes\.txt is unchanged/);
			assert.match(told, /the user approved this change to other\.txt in Neovim/);
		});

		it("pi -p (no UI): Neovim alone is asked, and :PiIde approve applies the edit", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
			env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written by pi\n" } }]);
			const ran = runPrint(env, ["rewrite notes"]);
			await pollUntil(
				async () => ((await nv.lua<number>(PENDING)) === 1 ? true : undefined),
				"Neovim has the request",
				WAIT_MS,
			);
			await nv.command("PiIde approve");
			const result = await ran;
			assert.equal(result.code, 0, result.stderr);
			assert.equal(readFileSync(file, "utf8"), "written by pi\n");
			assert.match(toolResult(env.model.requests[1]), /approved this change to notes\.txt in Neovim/);
		});

		it("the user adds a line and saves while reviewing, then approves: pi refuses, the saved line stays", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
			env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written by pi\n" } }]);
			const ran = runPrint(env, ["rewrite notes"]);
			await pollUntil(
				async () => ((await nv.lua<number>(PENDING)) === 1 ? true : undefined),
				"Neovim has the request",
				WAIT_MS,
			);
			await nv.lua("vim.api.nvim_buf_set_lines(0, -1, -1, false, { 'mine' })");
			await nv.command("write");
			await nv.command("PiIde approve");
			const result = await ran;
			assert.equal(result.code, 0, result.stderr);
			const saved = `${ORIGINAL}mine\n`;
			assert.equal(readFileSync(file, "utf8"), saved, "the user's saved line is not overwritten");
			assert.match(
				toolResult(env.model.requests[1]),
				/approved this change in Neovim, but notes\.txt changed after the change was proposed.*not applied/,
			);
			await nv.command("checktime");
			const buffer = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
			assert.deepEqual(buffer, ["alpha", "beta", "gamma", "mine"], "the buffer keeps the user's line");
		});

		it("pi -p (no UI), Neovim quits while pi waits: not applied, not a rejection, the model told", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
			env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written by pi\n" } }]);
			const ran = runPrint(env, ["rewrite notes"]);
			await pollUntil(
				async () => ((await nv.lua<number>(PENDING)) === 1 ? true : undefined),
				"Neovim has the request",
				WAIT_MS,
			);
			await nv.quit();
			const result = await ran;
			assert.equal(result.code, 0, result.stderr);
			assert.equal(readFileSync(file, "utf8"), ORIGINAL);
			assert.match(
				toolResult(env.model.requests[1]),
				/Neovim closed while this change waited for approval: the change was not applied.*This is not a rejection/,
			);
		});

		// Issue 26 item 6: the proposal against what the user sees. The user typed a line above and changed "delta",
		// unsaved; pi's edit changes "beta" (away from the user's lines) and "delta" (the user's line).
		it("unsaved lines in the buffer: the notice names the one pi's hunk touches, the marks stand where the merge puts them; approved, the merge keeps the user's line and :PiIde hunks lists the conflict", async (t) => {
			const five = "alpha\nbeta\ngamma\ndelta\nepsilon\n";
			const env = await envFor(t, { settings: { ideContext: { approve: "edits", approveTimeoutSeconds: 60 } } });
			const file = touch(env.workDir, "notes.txt", five);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
			await nv.input("ggOuser top<Esc>5Gccuser delta<Esc>");
			await nv.settle();
			const user = ["user top", "alpha", "beta", "gamma", "user delta", "epsilon"];
			assert.deepEqual(await nv.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), user);
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			env.model.respond = toolsThenReply([
				{
					name: "edit",
					arguments: {
						path: file,
						edits: [
							{ oldText: "beta\n", newText: "beta, by pi\n" },
							{ oldText: "delta\n", newText: "delta, by pi\n" },
						],
					},
				},
			]);
			const prompted = rpc.prompt("change beta and delta");
			await pollUntil(
				async () => ((await nv.lua<number>(PENDING)) === 1 ? true : undefined),
				"Neovim has the request",
				WAIT_MS,
			);
			const marked = await nv.lua<number[]>(`local ns = vim.api.nvim_create_namespace("pi-ide-approval")
				local rows = {}
				for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {})) do rows[m[2] + 1] = true end
				return vim.tbl_keys(rows)`);
			assert.deepEqual(
				marked.sort((a, b) => a - b),
				[3, 5],
				"beta where the merge puts it, delta on the user's line",
			);
			await pollUntil(
				async () =>
					(await nv.exec("messages")).includes("1 of 2 hunks touches your unsaved line 5") ? true : undefined,
				"the notice names the user's line",
			);
			await nv.command("PiIde approve");
			await prompted;
			assert.equal(readFileSync(file, "utf8"), "alpha\nbeta, by pi\ngamma\ndelta, by pi\nepsilon\n");
			assert.match(toolResult(env.model.requests[1]), /line 5/, "the model is told the conflict's line");
			await pollUntil(
				async () =>
					JSON.stringify(await nv.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")) ===
					JSON.stringify(["user top", "alpha", "beta, by pi", "gamma", "user delta", "epsilon"])
						? true
						: undefined,
				"pi's beta merged, the user's delta kept",
			);
			await nv.command("PiIde hunks");
			const texts = await nv.lua<string[]>(
				'local t = {} for _, it in ipairs(vim.fn.getqflist()) do t[#t + 1] = it.lnum .. " " .. it.text end vim.cmd("cclose") return t',
			);
			assert.ok(
				texts.includes("5 conflict: your unsaved line 5 kept; pi's version is on disk (:PiIde diff)"),
				`the conflict is listed with pi's hunks: ${JSON.stringify(texts)}`,
			);
		});
	});
});
