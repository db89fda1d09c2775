/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and a real
 * Vim 9 in tmux with a real ALE: `ide_show` puts the place in Vim's quickfix list with one notice while the user's
 * window, buffer and cursor stay; `ide_open_files` answers with every loaded file buffer, its unsaved flag and the
 * named file's ALE diagnostics dated with its changedtick; a file the ignore rules exclude is refused (show) or
 * only counted (ask), never named. Follows test/e2e/nvim-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { type FakeToolCall, type RecordedRequest, requestMessages, toolResults } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startVim, vimString } from "../helpers/vim.ts";
import { aleLint, aleVimrc, setAleItems } from "../helpers/vim-ale.ts";

function callTools(calls: FakeToolCall[]) {
	return (request: RecordedRequest) =>
		requestMessages(request).at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: calls };
}

it("vim + pi: show to the quickfix list, focus kept, one notice; ask: buffers, modified, ALE's diagnostics; excluded never named", async (t) => {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	const a = touch(env.workDir, "src/a.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
	const b = touch(env.workDir, "src/b.ts", "let x = 1;\nlet y = 2;\nlet z = 3;\n");
	const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
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

	env.model.respond = callTools([
		{ name: "ide_show", arguments: { path: "src/b.ts", line: 2, end_line: 3, note: "y is\u001b[31m never used" } },
		{ name: "ide_open_files", arguments: { path: "src/b.ts" } },
		{ name: "ide_show", arguments: { path: "secret.env", line: 1 } },
	]);
	const run = await runPrint(env, ["Where is it?"]);
	assert.equal(run.code, 0, run.stderr);
	const results = toolResults(env.model.requests.at(-1));
	assert.equal(
		results[0],
		"Shown in Vim: src/b.ts:2-3 is in the user's quickfix list with a one-line notice; the user's window and cursor stayed where they were (the user opens it when they choose).",
	);
	const ask = results[1] ?? "";
	assert.match(ask, /^Open file buffers in Vim \(3; \* = unsaved changes/);
	assert.match(ask, /\n- src\/a\.ts \(active\)\n- src\/b\.ts \*\n- 1 more excluded by pi-ide-context's ignore rules/);
	assert.match(ask, /\nsrc\/b\.ts: Diagnostics \(1 error\):\n- error 2:5 y is unused/);
	assert.match(results[2] ?? "", /^Not shown: pi-ide-context's ignore rules exclude this file/);
	for (const result of results) assert.ok(!result.includes("secret"), result);

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
