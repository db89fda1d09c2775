/**
 * v0.5 show and ask (issue 25 items 2-4) with real pi (print mode), the fake model calling both tools, and a real
 * Neovim (0.7.2 and 0.10, with a UI): `ide_show` puts the place in Neovim's quickfix list with one notice while
 * the user's window, buffer and cursor stay; `ide_open_files` answers with every open file buffer, its unsaved
 * flag and the named file's diagnostics dated with its version; a file the ignore rules exclude is refused
 * (show) or only counted (ask), never named; with no editor each tool says so.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callToolsThenAnswer, toolResults } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor } from "../helpers/scenario.ts";
import { showAndAsk, showAskProject } from "../helpers/show-ask-scenario.ts";

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: the model shows a place and asks what is open (real pi, print mode)`, () => {
		it("show: quickfix, focus kept, one notice; ask: open buffers, modified, diagnostics; excluded never named", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			const { a, b, secret } = showAskProject(env);

			// No editor yet: both tools say so.
			env.model.respond = callToolsThenAnswer([
				{ name: "ide_show", arguments: { path: "src/b.ts", line: 2 } },
				{ name: "ide_open_files", arguments: {} },
			]);
			const run = await runPrint(env, ["Where is it?"]);
			assert.equal(run.code, 0, run.stderr);
			const results = toolResults(env.model.requests.at(-1));
			assert.match(results[0] ?? "", /^No editor is connected to pi .*nothing was shown\.$/);
			assert.match(results[1] ?? "", /^No editor is connected to pi .*pi cannot tell what is open\.$/);

			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command(`edit ${secret}`);
			await nv.command(`edit ${b}`);
			await nv.command("call setline(1, 'let x = 10;')"); // unsaved
			await nv.lua(`vim.diagnostic.set(vim.api.nvim_create_namespace("show-ask-test"), 0,
				{ { lnum = 1, col = 4, message = "y is unused", severity = vim.diagnostic.severity.ERROR } })`);
			await nv.command(`edit ${a}`);
			await nv.command("normal! 3G");
			const before = await nv.lua<{ win: number; buf: number; cursor: number[]; wins: number; qf: number }>(
				"return { win = vim.api.nvim_get_current_win(), buf = vim.api.nvim_get_current_buf(), cursor = vim.api.nvim_win_get_cursor(0), wins = #vim.api.nvim_list_wins(), qf = vim.fn.getqflist({ nr = '$' }).nr }",
			);
			await nv.until((s) => s.active_buffer.file === a && s.active_buffer.cursor.line === 3, "Neovim reports a.ts:3");
			const messagesBefore = await nv.exec("messages");

			await showAndAsk(env, "Neovim", "quickfix list");

			// Neovim: the place is in the quickfix list; the user's window, buffer and cursor stayed; one notice.
			const after = await nv.lua<{
				win: number;
				buf: number;
				cursor: number[];
				wins: number;
				title: string;
				items: { lnum: number; end_lnum: number; text: string; file: string }[];
			}>(`local l = vim.fn.getqflist({ title = 0, items = 0 })
				local items = {}
				for _, it in ipairs(l.items) do items[#items + 1] = { lnum = it.lnum, end_lnum = it.end_lnum, text = it.text, file = vim.api.nvim_buf_get_name(it.bufnr) } end
				return { win = vim.api.nvim_get_current_win(), buf = vim.api.nvim_get_current_buf(), cursor = vim.api.nvim_win_get_cursor(0), wins = #vim.api.nvim_list_wins(), title = l.title, items = items }`);
			assert.deepEqual(
				{ win: after.win, buf: after.buf, cursor: after.cursor, wins: after.wins },
				{ win: before.win, buf: before.buf, cursor: before.cursor, wins: before.wins },
			);
			assert.equal(after.title, "pi-ide: pi's places");
			assert.deepEqual(after.items, [{ lnum: 2, end_lnum: 3, text: "pi: y is^[[31m never used", file: b }]);
			const notice = await pollUntil(async () => {
				const added = (await nv.exec("messages")).slice(messagesBefore.length);
				return /\(pi-ide\) pi shows/.test(added) ? added : undefined;
			}, "the notice");
			assert.equal(notice.trim().split("\n").length, 1, `one notice line: ${notice}`);
			assert.match(notice, /\(pi-ide\) pi shows src\/b\.ts:2-3: y is\^\[\[31m never used \(:cc 1\)/);
		});
	});
});
