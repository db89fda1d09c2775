/**
 * Protocol v0.3 end to end: a real Neovim with the client, a real pi whose fake model calls pi's own `write`
 * and `edit` tools. pi's edits show up in the open buffer; an unsaved buffer keeps the user's text; Neovim's
 * diagnostics reach the model with the next prompt, and after a tool edit the diagnostics for the new content
 * reach it in the same run, never the stale ones from before the edit; a dotfile opened through a symlink
 * shows pi's edit through the link. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { lstatSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { forEachNvim, type Nvim, type NvimFlavour, startNvim } from "../helpers/nvim.ts";
import { type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, PROMPT, promptOnce, theBlock, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);

/** pi's env and a Neovim in pi's work dir showing src/app.ts (cursor on line 10, column 4). */
async function openInNvim(
	t: TestContext,
	flavour: NvimFlavour,
	lines = ORIGINAL,
): Promise<{ env: PiEnv; nv: Nvim; file: string }> {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${lines.join("\n")}\n`);
	const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await nv.command("edit src/app.ts");
	await nv.call("nvim_win_set_cursor", 0, [10, 3]);
	await nv.settle();
	await nv.until((s) => s.active_buffer.file === file && s.protocol === "0.3", "Neovim reports src/app.ts (v0.3)");
	return { env, nv, file };
}

/** One prompt whose first model reply calls `calls`; returns the text of pi's tool result message(s). */
async function runTools(env: PiEnv, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
	env.model.respond = toolsThenReply(calls);
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.equal(env.model.requests.length, 2, "the tool call, then the answer");
	return toolResults(env.model.requests[1]).join("\n");
}

const bufferLines = (nv: Nvim) => nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");

async function untilLua<T>(nv: Nvim, code: string, accept: (v: T) => boolean, what: string): Promise<T> {
	let last: T | undefined;
	return pollUntil(
		async () => {
			last = await nv.lua<T>(code);
			return accept(last) ? last : undefined;
		},
		() => `${what}; last: ${JSON.stringify(last)}`,
		{ timeoutMs: 10_000, intervalMs: 25 },
	);
}

/**
 * A stand-in linter in Neovim: after every change or reload of the buffer it reports, `delay` ms later, an
 * error for each word starting with BROKEN (an empty list when clean), through vim.diagnostic like any
 * checker (nvim-lint and the like). With `declares`, it also sets b:pi_ide_diagnostics_expected; without, the
 * client counts it as a checker once it has published.
 */
async function attachFakeLinter(nv: Nvim, declares = true, delay = 300): Promise<void> {
	await nv.lua(
		`local declares, delay = ...
		local buf = vim.api.nvim_get_current_buf()
		local ns = vim.api.nvim_create_namespace("fake-lint")
		if declares then vim.b[buf].pi_ide_diagnostics_expected = true end
		_G.fake_lint = { enabled = true }
		local function lint()
			if not _G.fake_lint.enabled or not vim.api.nvim_buf_is_valid(buf) then return end
			local items = {}
			for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
				local s, _, word = l:find("(%u*BROKEN%w*)")
				if s then
					items[#items + 1] = { lnum = i - 1, col = s - 1, message = word .. " is not allowed",
						severity = vim.diagnostic.severity.ERROR, source = "fake-lint", code = "FL1" }
				end
			end
			vim.diagnostic.set(ns, buf, items)
		end
		local function later() vim.defer_fn(lint, delay) end
		vim.api.nvim_buf_attach(buf, false, { on_lines = function() later() end, on_reload = function() later() end })
		lint()`,
		declares,
		delay,
	);
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name} + pi tools (protocol v0.3)`, { concurrency: 3 }, () => {
		it("pi's write reloads the open buffer, cursor kept; Neovim names pi and the file it changed", async (t) => {
			const { env, nv, file } = await openInNvim(t, flavour);
			const next = ORIGINAL.map((l, i) => (i === 4 ? "export const v5 = 'changed by pi';" : l));
			env.model.beforeReply = async (_request, index) => {
				if (index !== 1) return;
				// After the tool turn, before the answer: Neovim shows pi and the file of its last turn.
				await untilLua<string>(nv, "return require('pi-ide').statusline()", (s) => s === "pi +1", "statusline");
				const summary = await nv.exec("PiIde");
				assert.match(summary, /^pi: connected, pid \d+/m);
				assert.match(summary, /^pi changed in its last turn: src\/app\.ts$/m);
			};
			const toolText = await runTools(env, [
				{ name: "write", arguments: { path: file, content: `${next.join("\n")}\n` } },
			]);
			assert.match(toolText, /Successfully wrote/);
			await untilLua<string[]>(
				nv,
				"return vim.api.nvim_buf_get_lines(0, 0, -1, false)",
				(l) => l[4] === next[4],
				"the buffer shows pi's write",
			);
			assert.deepEqual(await bufferLines(nv), next);
			assert.deepEqual(await nv.call("nvim_win_get_cursor", 0), [10, 3]);
			assert.equal(await nv.lua("return vim.bo.modified"), false);
			const state = await nv.until((s) => (s.files ?? []).some((f) => f.file === file), "a report on src/app.ts");
			const report = state.files?.find((f) => f.file === file);
			assert.equal(report?.status, "reloaded");
			assert.equal(report?.version, state.active_buffer.version);
			// pi exited and removed its message: Neovim no longer shows a connected pi.
			await untilLua<string>(nv, "return require('pi-ide').statusline()", (s) => s === "", "statusline cleared");
		});

		it("a dotfile opened through a symlink shows pi's edit through the link, cursor kept", async (t) => {
			const env = await envFor(t);
			const target = touch(env.workDir, "dotfiles/bashrc", `${ORIGINAL.join("\n")}\n`);
			const link = join(env.workDir, ".bashrc");
			symlinkSync(target, link);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit .bashrc");
			await nv.call("nvim_win_set_cursor", 0, [10, 3]);
			await nv.until((s) => s.active_buffer.file === link && s.protocol === "0.3", "Neovim reports .bashrc");
			await runTools(env, [
				{ name: "edit", arguments: { path: link, edits: [{ oldText: "// line 5", newText: "// line five" }] } },
			]);
			assert.ok(lstatSync(link).isSymbolicLink(), "pi edited through the link");
			const state = await nv.until((s) => (s.files ?? []).some((f) => f.file === link), "a report on .bashrc");
			assert.equal(state.files?.find((f) => f.file === link)?.status, "reloaded");
			assert.equal((await bufferLines(nv))[4], "export const v5 = 5; // line five");
			assert.deepEqual(await nv.call("nvim_win_get_cursor", 0), [10, 3]);
			assert.equal(await nv.lua("return vim.api.nvim_buf_get_name(0)"), link, "still the buffer read through the link");
		});

		it("an unsaved buffer keeps the user's text where pi's edit touches it, Neovim stays responsive, the model is told", async (t) => {
			const { env, nv, file } = await openInNvim(t, flavour);
			// The user's line 5, where pi's edit goes: a conflict (issue 26; a merge elsewhere: nvim-merge.test.ts).
			await nv.input("5GccUSER-TEXT<Esc>");
			assert.equal(await nv.lua("return vim.bo.modified"), true);
			await nv.until((s) => s.active_buffer.modified, "Neovim reports the unsaved change");
			const toolText = await runTools(env, [
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "// line 5", newText: "// line five" }] } },
			]);
			assert.match(readFileSync(file, "utf8"), /line five/, "pi edited the file on disk");
			assert.match(toolText, /open in Neovim with unsaved changes/);
			assert.match(toolText, /Conflict/);
			assert.match(toolText, /line 5 of the user's unsaved buffer/);
			const lines = await bufferLines(nv);
			assert.equal(lines[4], "USER-TEXT");
			assert.ok(!lines.join("\n").includes("line five"), "the buffer was not overwritten");
			assert.equal(await nv.lua("return vim.bo.modified"), true);
			// Responsive: no prompt is waiting for a key.
			assert.equal((await nv.call<{ blocking: boolean }>("nvim_get_mode")).blocking, false);
			await nv.input("ggdd");
			assert.equal((await bufferLines(nv))[0], ORIGINAL[1]);
			// The notice is Neovim's own (scheduled, one for all the files of a run): wait for it, then count it.
			const messages = await pollUntil(async () => {
				const text = await nv.exec("messages");
				return /touches your unsaved line 5/.test(text) ? text : undefined;
			}, "Neovim's notice about the unsaved buffer");
			assert.equal(messages.match(/touches your unsaved/g)?.length, 1, `told once: ${messages}`);
			assert.match(messages, /app\.ts.*:PiIde diff/);
			const state = await nv.until((s) => (s.files ?? []).some((f) => f.file === file), "a report");
			assert.equal(state.files?.find((f) => f.file === file)?.status, "conflict");
		});

		it("diagnostics set in Neovim reach the model with the next prompt", async (t) => {
			const { env, nv, file } = await openInNvim(t, flavour);
			await nv.lua(
				`local ns = vim.api.nvim_create_namespace("test")
				vim.diagnostic.set(ns, 0, {
					{ lnum = 2, col = 4, message = "boom\\nsecond line", severity = vim.diagnostic.severity.ERROR, source = "test-source", code = "E1" },
					{ lnum = 0, col = 0, message = "meh", severity = vim.diagnostic.severity.WARN },
				})`,
			);
			await nv.until((s) => s.active_buffer.diagnostics?.items.length === 2, "Neovim reports 2 diagnostics");
			const block = theBlock(await promptOnce(env));
			assert.match(block, new RegExp(`^File: ${file}$`, "m"));
			assert.match(block, /^Diagnostics \(1 error, 1 warning\):$/m);
			assert.match(block, /^- error 3:5 boom\\nsecond line \[test-source E1\]$/m);
			assert.match(block, /^- warning 1:1 meh$/m);
		});

		it("after pi's edit, the diagnostics of the new content reach the model in the same run; stale ones never", async (t) => {
			const lines = ORIGINAL.map((l, i) => (i === 1 ? "export const v2 = OLDBROKEN;" : l));
			const { env, nv, file } = await openInNvim(t, flavour, lines);
			await attachFakeLinter(nv);
			await nv.until(
				(s) => s.active_buffer.diagnostics?.items.some((d) => d.message.includes("OLDBROKEN")) === true,
				"the old error is reported",
			);
			const toolText = await runTools(env, [
				{
					name: "edit",
					arguments: {
						path: file,
						edits: [
							{ oldText: "OLDBROKEN", newText: "2" },
							{ oldText: "export const v7 = 7;", newText: "export const v7 = NEWBROKEN;" },
						],
					},
				},
			]);
			assert.match(toolText, /Neovim reloaded .*src\/app\.ts\. Diagnostics \(1 error\):/);
			assert.match(toolText, /^- error 7:19 NEWBROKEN is not allowed \[fake-lint FL1\]$/m);
			assert.ok(!toolText.includes("OLDBROKEN"), `no stale diagnostic: ${toolText}`);
		});

		it("a linter that only publishes (no buffer variable; clean at first): pi's edit waits for its verdict", async (t) => {
			const { env, nv, file } = await openInNvim(t, flavour);
			await attachFakeLinter(nv, false);
			await nv.until((s) => s.active_buffer.diagnostics?.total === 0, "the linter's empty list (clean) is reported");
			const toolText = await runTools(env, [
				{
					name: "edit",
					arguments: {
						path: file,
						edits: [{ oldText: "export const v7 = 7;", newText: "export const v7 = NEWBROKEN;" }],
					},
				},
			]);
			assert.match(toolText, /Neovim reloaded .*src\/app\.ts\. Diagnostics \(1 error\):/, toolText);
			assert.match(toolText, /^- error 7:19 NEWBROKEN is not allowed \[fake-lint FL1\]$/m, toolText);
		});

		it("when no diagnostics for the new content arrive, the model is told so and sees no stale ones", async (t) => {
			const lines = ORIGINAL.map((l, i) => (i === 1 ? "export const v2 = OLDBROKEN;" : l));
			const { env, nv, file } = await openInNvim(t, flavour, lines);
			await attachFakeLinter(nv);
			await nv.until(
				(s) => s.active_buffer.diagnostics?.items.some((d) => d.message.includes("OLDBROKEN")) === true,
				"the old error is reported",
			);
			await nv.lua("_G.fake_lint.enabled = false");
			const toolText = await runTools(env, [
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "// line 9", newText: "// line nine" }] } },
			]);
			assert.match(toolText, /no diagnostics for the new content arrived within 2 s/);
			assert.ok(!toolText.includes("OLDBROKEN"), `no stale diagnostic: ${toolText}`);
			assert.equal((await bufferLines(nv))[8], "export const v9 = 9; // line nine");
		});
	});
});
