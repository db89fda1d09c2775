/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and a real
 * Vim 9 in tmux with a real ALE: `ide_show` puts the place in Vim's quickfix list with one notice while the user's
 * window, buffer and cursor stay; `ide_open_files` answers with every loaded file buffer, its unsaved flag and the
 * named file's ALE diagnostics dated with its changedtick; a file the ignore rules exclude is refused (show) or
 * only counted (ask), never named. Follows test/e2e/nvim-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { it } from "node:test";
import { pollUntil } from "../helpers/poll.ts";
import { envFor } from "../helpers/scenario.ts";
import { showAndAsk, showAskProject } from "../helpers/show-ask-scenario.ts";
import { startVim, vimString } from "../helpers/vim.ts";
import { aleLint, aleVimrc, setAleItems } from "../helpers/vim-ale.ts";

it("vim + pi: show to the quickfix list, focus kept, one notice; ask: buffers, modified, ALE's diagnostics; excluded never named", async (t) => {
	const env = await envFor(t);
	const { a, b, secret } = showAskProject(env);
	const checker = join(env.root, "checker");
	const vim = await startVim(t, {
		dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		vimrc: ["set hidden", ...aleVimrc(checker, ["typescript"], false)],
	});
	await vim.ex(`execute 'edit ' . fnameescape(${vimString(secret)})`);
	await vim.ex(`execute 'edit ' . fnameescape(${vimString(b)})`);
	await vim.ex("call setline(1, 'let x = 10;')"); // unsaved
	setAleItems(checker, b, [{ severity: "error", line: 2, column: 5, message: "y is unused" }]);
	await aleLint(vim, b);
	await vim.ex(`execute 'edit ' . fnameescape(${vimString(a)})`);
	await vim.keys("3", "G");
	await vim.until(
		(s) =>
			(s["active_buffer"] as { file: string; cursor: { line: number } }).file === a &&
			(s["active_buffer"] as { cursor: { line: number } }).cursor.line === 3,
		"Vim reports a.ts:3",
	);
	const where = "[win_getid(), bufnr('%'), line('.'), winnr('$')]";
	const before = await vim.expr(where);
	const messagesBefore = await vim.expr<string>("execute('messages')");

	await showAndAsk(env, "Vim", "quickfix list");

	// Vim: the place is in pi's quickfix list; the user's window, buffer and cursor stayed; one notice.
	assert.deepEqual(await vim.expr(where), before);
	assert.deepEqual(
		await vim.expr(
			"[getqflist({'title': 0}).title, map(getqflist(), {_, i -> [fnamemodify(bufname(i.bufnr), ':p'), i.lnum, i.end_lnum, i.text]})]",
		),
		["pi-ide: pi's places", [[b, 2, 3, "pi: y is?[31m never used"]]],
	);
	const notice = await pollUntil(async () => {
		const added = (await vim.expr<string>("execute('messages')")).slice(messagesBefore.length);
		return /\(pi-ide\) pi shows/.test(added) ? added : undefined;
	}, "the notice");
	assert.equal(notice.trim().split("\n").length, 1, `one notice line: ${notice}`);
	assert.match(notice, /\(pi-ide\) pi shows src\/b\.ts:2-3: y is\?\[31m never used \(:cc 1\)/);
});
