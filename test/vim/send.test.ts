/**
 * :PiIdeSend in real Vim 9 under tmux (editors/vim/autoload/pi_ide/send.vim), against pis that are live processes
 * of ours whose messages name it: with several (here one pid in two pid namespaces), Vim asks once which (typed
 * into its list) and remembers; each request names the chosen pi by `pi_pid` and `pi_ns`. `@hunk` sends pi's hunk
 * under the cursor as the buffer has it; without one, or in a buffer that is no file, nothing is written and one
 * line says why. The parse of the command's words is a table. (Every form and the caps: the conformance kit's
 * cases/send.ts; with real pi: test/e2e/vim-emacs-send.test.ts.)
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { editorSendFileName, parseSendRequest, type SendRequest } from "../../src/protocol/wire.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startVim, type Vim, vimString } from "../helpers/vim.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\nfour\n";

async function world(t: TestContext): Promise<{ vim: Vim; file: string }> {
	const vim = await startVim(t, { cols: 100, rows: 24 });
	const file = join(vim.dirs.work, "a.txt");
	writeFileSync(file, CONTENT);
	await vim.ex("edit a.txt");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "a.txt open");
	return { vim, file };
}

let seqs = 0;
/** pi `pid`'s message naming the Vim (no changes), as `pi-<pid>[-<ns digits>].json`. */
function tell(vim: Vim, pid: number, nsDigits?: string): void {
	seqs += 1;
	const msg = {
		protocol: "0.4",
		kind: "pi",
		pid,
		cwd: vim.dirs.work,
		timestamp: Date.now() / 1000,
		editor_pid: vim.pid,
		seq: seqs,
		changed: [],
		last_turn: [],
		...(nsDigits ? { pid_ns: `pid:[${nsDigits}]` } : {}),
	};
	writeRawStateFile(vim.dirs.stateDir, `pi-${pid}${nsDigits ? `-${nsDigits}` : ""}.json`, JSON.stringify(msg));
}

const knownPis = (vim: Vim, n: number) => vim.waitExpr(`len(pi_ide#inbox#All()) == ${n}`);

/** The request in the send file once it is a new one (not `previous`), as pi's validator reads it. */
async function nextRequest(vim: Vim, previous?: string): Promise<SendRequest> {
	const path = join(vim.dirs.stateDir, editorSendFileName(vim.pid));
	return pollUntil(() => {
		try {
			const parsed = parseSendRequest(readFileSync(path, "utf8"), vim.pid);
			return parsed.ok && parsed.request.id !== previous ? parsed.request : undefined;
		} catch {
			return undefined;
		}
	}, "a new send request");
}

async function typed(vim: Vim, command: string): Promise<void> {
	await vim.text(command);
	await vim.keys("Enter");
}

describe("vim: :PiIdeSend", { concurrency: 2 }, () => {
	it("parses the command's words (a table)", async (t) => {
		const { vim } = await world(t);
		const rows: [string, string, string][] = [
			["", "", ""],
			["why?", "", "why?"],
			["@diagnostic", "diagnostic", ""],
			["@diagnostic  what is wrong", "diagnostic", "what is wrong"],
			["@hunk why", "hunk", "why"],
			["@file", "file", ""],
			["@other words", "", "@other words"],
			["@filey", "", "@filey"],
			["  padded  ", "", "padded"],
		];
		for (const [args, form, prompt] of rows) {
			assert.deepEqual(await vim.expr(`pi_ide#send#ParseArgs(${vimString(args)})`), [form, prompt], args);
		}
	});

	it("several pis (one pid, two namespaces): asks once, remembers; each request names the chosen pi", async (t) => {
		const { vim } = await world(t);
		const pi = await spawnLiveEditor();
		tell(vim, pi.pid);
		tell(vim, pi.pid, "4026531999");
		await knownPis(vim, 2);
		await typed(vim, ":PiIdeSend first");
		// Vim's list: "<n>. pi <pid> (pid:[4026531999]) in <cwd>"; the user types the number of that one.
		const screen = await pollUntil(async () => {
			const s = await vim.capture();
			return s.includes("Send to which pi?") ? s : undefined;
		}, "the question");
		const pick = new RegExp(`(\\d)\\. pi ${pi.pid} \\(pid:\\[4026531999\\]\\) in `).exec(screen)?.[1];
		assert.ok(pick, screen);
		await typed(vim, pick);
		const first = await nextRequest(vim);
		assert.deepEqual([first.pi_pid, first.pi_ns, first.prompt], [pi.pid, "pid:[4026531999]", "first"]);
		// Remembered: no question (Vim would wait in its list, and write nothing).
		await typed(vim, ":PiIdeSend second");
		const second = await nextRequest(vim, first.id);
		assert.deepEqual([second.pi_pid, second.pi_ns, second.prompt], [pi.pid, "pid:[4026531999]", "second"]);
		assert.doesNotMatch(await vim.expr<string>("execute('messages')"), /E\d{2,4}:|Error/);
	});

	it("one pi of the initial namespace: the request names it without pi_ns, and asks nothing", async (t) => {
		const { vim, file } = await world(t);
		const pi = await spawnLiveEditor();
		tell(vim, pi.pid);
		await knownPis(vim, 1);
		await vim.keys("2G");
		await typed(vim, ":PiIdeSend! @file whole");
		const request = await nextRequest(vim);
		assert.equal(request.pi_pid, pi.pid);
		assert.equal("pi_ns" in request, false);
		assert.deepEqual(
			[request.mode, request.prompt, request.item.kind, request.item.file, request.item.text],
			["now", "whole", "file", file, "one\ntwo\nthree\nfour"],
		);
		assert.match((await vim.expr<string[]>("pi_ide#Summary()")).join("\n"), /last send: file of a.txt to pi \d+/);
		// The send file goes with the state file when Vim exits.
		await vim.quit();
		assert.throws(() => readFileSync(join(vim.dirs.stateDir, editorSendFileName(vim.pid))), /ENOENT/);
	});

	it("two sends in one go (a mapping, a script): the second is written once the first is in place, none lost to the other's temp", async (t) => {
		const { vim } = await world(t);
		const pi = await spawnLiveEditor();
		tell(vim, pi.pid);
		await knownPis(vim, 1);
		// One channel command: the second send starts while the first's replace is still under way.
		await vim.ex(
			"call pi_ide#send#Command(v:false, 0, 1, 1, 'first') | call pi_ide#send#Command(v:false, 0, 1, 1, 'second')",
		);
		const request = await pollUntil(async () => {
			const r = await nextRequest(vim);
			return r.prompt === "second" ? r : undefined;
		}, "the second send in the file");
		assert.deepEqual([request.item.start_line, request.item.text], [1, "one"]);
		await vim.ex("sleep 200m");
		const said = await vim.expr<string>("execute('messages')");
		assert.doesNotMatch(said, /not sending|E\d{2,4}:|Error/, said);
	});

	it("@hunk with no hunk of pi's, and a buffer that is no file: one line each, nothing written", async (t) => {
		const { vim } = await world(t);
		const pi = await spawnLiveEditor();
		tell(vim, pi.pid);
		await knownPis(vim, 1);
		await typed(vim, ":PiIdeSend @hunk why");
		await vim.waitExpr(`execute('messages') =~# "no hunk of pi's under the cursor: nothing sent"`);
		await typed(vim, ":enew");
		await typed(vim, ":PiIdeSend hello");
		await vim.waitExpr(`execute('messages') =~# 'not a file buffer: nothing sent'`);
		const said = (await vim.expr<string>("execute('messages')")).split("\n").filter((l) => l.includes("(pi-ide)"));
		assert.equal(said.length, 2, said.join("\n"));
		assert.throws(() => readFileSync(join(vim.dirs.stateDir, editorSendFileName(vim.pid))), /ENOENT/);
	});

	it("@hunk: pi's hunk under the cursor, its lines as the buffer has them", async (t) => {
		const { vim, file } = await world(t);
		const pi = await spawnLiveEditor();
		// pi's run added lines 2-3 (the buffer already holds pi's version).
		writeRawStateFile(
			vim.dirs.stateDir,
			`pi-${pi.pid}.review.json`,
			oneRunReview([{ file, before: "one\nfour\n", after: CONTENT }], { pid: pi.pid, editorPid: vim.pid }).toString(),
		);
		tell(vim, pi.pid);
		await vim.waitExpr("len(sign_getplaced(bufnr(), {'group': 'pi_ide_review'})[0].signs) == 2");
		await vim.keys("3G");
		await typed(vim, ":PiIdeSend @hunk why?");
		const request = await nextRequest(vim);
		assert.deepEqual(
			[request.item.kind, request.item.start_line, request.item.end_line, request.item.text, request.prompt],
			["hunk", 2, 3, "two\nthree", "why?"],
		);
	});
});
