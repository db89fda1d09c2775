/**
 * v0.5 show and ask in a real Vim 9 (in tmux), the parts the conformance kit does not drive: g:pi_ide_show_follow
 * (default off) opens the shown place, in the window or (from a terminal window) a split; a second show from the
 * same pi while the first is listed is appended to pi's quickfix list, the user's own list kept one :colder away;
 * an ask's ALE diagnostics over the answer's cap (200 items in all) are cut with each buffer's total kept.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../src/link/show-ask.ts";
import { type AskAnswer, parseAnswers, type ShowAskAnswer, type ShowAskRequest } from "../../src/protocol/show-ask.ts";
import { spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { nowSeconds } from "../helpers/nvim.ts";
import { pollUntil } from "../helpers/poll.ts";
import { touch } from "../helpers/scenario.ts";
import { makeVimDirs, startVim, type Vim, vimString } from "../helpers/vim.ts";
import { aleLint, aleVimrc, setAleItems } from "../helpers/vim-ale.ts";

function ask(vim: Vim, piPid: number, requests: ShowAskRequest[]): void {
	const text = encodeAskMessage({ pid: piPid, pidNs: null, editorPid: vim.pid, now: nowSeconds(), requests });
	writeRawStateFile(vim.dirs.stateDir, `pi-${piPid}.ask.json`, text);
}

function answerOf(vim: Vim, piPid: number, id: string): Promise<ShowAskAnswer> {
	return pollUntil(() => {
		let text: string;
		try {
			text = readFileSync(join(vim.dirs.stateDir, `${vim.pid}.answers.json`), "utf8");
		} catch {
			return undefined;
		}
		const parsed = parseAnswers(text, vim.pid);
		return parsed.ok ? findAnswer(parsed.answers, piPid, null, id) : undefined;
	}, `the answer to ${id}`);
}

const show = (id: string, file: string, line: number) =>
	buildShow(id, file, { path: file, line, endLine: null, note: null }, nowSeconds() + 30);

describe("vim: show and ask", () => {
	it("g:pi_ide_show_follow (default off) opens the place: in the window, or a split beside a terminal", async (t) => {
		const vim = await startVim(t, { vimrc: ["set hidden"] });
		const a = touch(vim.dirs.work, "a.ts", "1\n2\n3\n4\n");
		const b = touch(vim.dirs.work, "b.ts", "1\n2\n3\n4\n");
		await vim.ex(`execute 'edit ' . fnameescape(${vimString(a)})`);
		const pi = await spawnLiveEditor();
		t.after(() => pi.kill());
		ask(vim, pi.pid, [show("off", b, 3)]);
		assert.equal(((await answerOf(vim, pi.pid, "off")) as { status: string }).status, "listed");
		assert.deepEqual(await vim.expr("[expand('%:p'), line('.'), winnr('$')]"), [a, 1, 1], "off: nothing moves");

		await vim.ex("let g:pi_ide_show_follow = 1");
		ask(vim, pi.pid, [show("f1", b, 3)]);
		assert.equal(((await answerOf(vim, pi.pid, "f1")) as { status: string }).status, "opened");
		assert.deepEqual(await vim.expr("[expand('%:p'), line('.'), winnr('$')]"), [b, 3, 1]);

		// From a terminal window: the terminal stays, the place opens in a split.
		await vim.ex("terminal ++curwin sh");
		const term = await vim.expr<number>("bufnr('%')");
		ask(vim, pi.pid, [show("f2", a, 2)]);
		assert.equal(((await answerOf(vim, pi.pid, "f2")) as { status: string }).status, "opened");
		assert.deepEqual(await vim.expr(`[expand('%:p'), line('.'), index(tabpagebuflist(), ${term}) >= 0]`), [a, 2, 1]);
		await vim.ex(`call job_stop(term_getjob(${term}), 'kill')`);
	});

	it("pi's places: appended to pi's own quickfix list; the user's list stays one :colder away", async (t) => {
		const vim = await startVim(t, { vimrc: ["set hidden"] });
		const a = touch(vim.dirs.work, "a.ts", "1\n2\n3\n4\n");
		await vim.ex(`execute 'edit ' . fnameescape(${vimString(a)})`);
		await vim.ex(
			`call setqflist([], ' ', {'title': 'mine', 'items': [{'filename': ${vimString(a)}, 'lnum': 4, 'text': 'mine'}]})`,
		);
		const pi = await spawnLiveEditor();
		t.after(() => pi.kill());
		ask(vim, pi.pid, [show("p1", a, 1)]);
		await answerOf(vim, pi.pid, "p1");
		ask(vim, pi.pid, [show("p1", a, 1), show("p2", a, 2)]);
		await answerOf(vim, pi.pid, "p2");
		assert.deepEqual(await vim.expr("[getqflist({'title': 0}).title, map(getqflist(), {_, i -> i.lnum})]"), [
			"pi-ide: pi's places",
			[1, 2],
		]);
		await vim.ex("silent colder");
		assert.deepEqual(await vim.expr("[getqflist({'title': 0}).title, map(getqflist(), {_, i -> i.text})]"), [
			"mine",
			["mine"],
		]);
	});

	it("an ask over the cap: 200 ALE diagnostics in all, each buffer's total kept", async (t) => {
		const dirs = makeVimDirs(t);
		const checker = join(dirs.root, "checker");
		const vim = await startVim(t, { dirs, vimrc: ["set hidden", ...aleVimrc(checker, ["typescript"], false)] });
		const files = [0, 1, 2].map((i) => touch(vim.dirs.work, `f${i}.ts`, "x\n".repeat(200)));
		for (const f of files) {
			await vim.ex(`execute 'edit ' . fnameescape(${vimString(f)})`);
			setAleItems(
				checker,
				f,
				Array.from({ length: 100 }, (_, i) => ({
					severity: "error" as const,
					line: i + 1,
					column: 1,
					message: `m${i}`,
				})),
			);
			await aleLint(vim, f);
		}
		const pi = await spawnLiveEditor();
		t.after(() => pi.kill());
		ask(vim, pi.pid, [buildAsk("cap", "all", nowSeconds() + 30)]);
		const answer = (await answerOf(vim, pi.pid, "cap")) as AskAnswer;
		const counts = answer.buffers.map((b) => [b.diagnostics?.items.length, b.diagnostics?.total]);
		assert.deepEqual(counts, [
			[100, 100],
			[100, 100],
			[0, 100],
		]);
	});
});
