/**
 * Send to pi in a real Emacs 28 (pi-ide-send.el), against pis that are live processes of ours whose messages
 * name it: with several (here one pid in two pid namespaces), `M-x pi-ide-send` asks once in the minibuffer which
 * (typed, completed) and remembers; each request names the chosen pi by `pi_pid` and `pi_ns`. A region ending at
 * the start of a line does not take that line. `pi-ide-send-hunk` sends pi's hunk under point as the buffer has
 * it; without one, or in a buffer that visits no file, nothing is written and one line says why. (Every form and
 * the caps: the conformance kit's cases/send.ts; with real pi: test/e2e/vim-emacs-send.test.ts.)
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { editorSendFileName, parseSendRequest, type SendRequest } from "../../src/protocol/wire.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\nfour\n";

/** Put `text` at `<state dir>/<name>` whole, as pi does (temp file, rename). */
function place(e: Emacs, name: string, text: string | Buffer): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, text, { mode: 0o600 });
	renameSync(tmp, join(e.stateDir, name));
}

async function world(t: TestContext): Promise<{ e: Emacs; file: string }> {
	const e = await startEmacs(t);
	const file = join(e.dir, "a.txt");
	writeFileSync(file, CONTENT);
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "a.txt open");
	return { e, file };
}

let seqs = 0;
/** pi `pid`'s message naming the Emacs (no changes), as `pi-<pid>[-<ns digits>].json`. */
function tell(e: Emacs, pid: number, nsDigits?: string): void {
	seqs += 1;
	const msg = {
		...makePiMessage({ pid, cwd: e.dir, editor_pid: e.pid, seq: seqs, changed: [], last_turn: [] }),
		...(nsDigits ? { pid_ns: `pid:[${nsDigits}]` } : {}),
	};
	place(e, `pi-${pid}${nsDigits ? `-${nsDigits}` : ""}.json`, JSON.stringify(msg));
}

const knownPis = (e: Emacs, n: number) =>
	pollUntil(async () => ((await e.json<number>("(length (pi-ide-inbox-all))")) === n ? true : undefined), `${n} pis`);

/** The request in the send file once it is a new one (not `previous`), as pi's validator reads it. */
async function nextRequest(e: Emacs, previous?: string): Promise<SendRequest> {
	const path = join(e.stateDir, editorSendFileName(e.pid));
	return pollUntil(() => {
		try {
			const parsed = parseSendRequest(readFileSync(path, "utf8"), e.pid);
			return parsed.ok && parsed.request.id !== previous ? parsed.request : undefined;
		} catch {
			return undefined;
		}
	}, "a new send request");
}

const screenHas = (e: Emacs, text: string) =>
	pollUntil(async () => ((await e.pane()).includes(text) ? true : undefined), `"${text}" on screen`);

/** `M-x COMMAND RET PROMPT RET`, typed. */
async function command(e: Emacs, name: string, prompt: string): Promise<void> {
	await e.keys("M-x");
	await e.keys(name, "Enter");
	await screenHas(e, "Send to pi");
	await e.keys(prompt, "Enter");
}

const said = async (e: Emacs) => (await e.messages()).filter((l) => l.startsWith("(pi-ide)"));

describe("emacs: send to pi", { concurrency: 2 }, () => {
	it("several pis (one pid, two namespaces): asks once, remembers; each request names the chosen pi", async (t) => {
		const { e } = await world(t);
		const pi = await spawnLiveEditor();
		tell(e, pi.pid);
		tell(e, pi.pid, "4026531999");
		await knownPis(e, 2);
		await command(e, "pi-ide-send", "first");
		await screenHas(e, "Send to which pi?");
		// The candidates: "pi <pid> (pid:[4026531999]) in <dir>" and "pi <pid> in <dir>": typed to the first.
		await e.keys(`pi ${pi.pid} (pid`, "Tab", "Enter");
		const first = await nextRequest(e);
		assert.deepEqual([first.pi_pid, first.pi_ns, first.prompt], [pi.pid, "pid:[4026531999]", "first"]);
		// Remembered: no question (Emacs would wait in the minibuffer, and write nothing).
		await command(e, "pi-ide-send", "second");
		const second = await nextRequest(e, first.id);
		assert.deepEqual([second.pi_pid, second.pi_ns, second.prompt], [pi.pid, "pid:[4026531999]", "second"]);
	});

	it("one pi of the initial namespace: no pi_ns; a region ending at the start of a line does not take it", async (t) => {
		const { e, file } = await world(t);
		const pi = await spawnLiveEditor();
		tell(e, pi.pid);
		await knownPis(e, 1);
		// Lines 2 and 3 marked whole: from the start of line 2 to the start of line 4.
		await e.act("(progn (goto-char (point-min)) (forward-line 1) (push-mark (point) t t) (forward-line 2))");
		await e.keys("C-u");
		await command(e, "pi-ide-send", "these");
		const request = await nextRequest(e);
		assert.equal(request.pi_pid, pi.pid);
		assert.equal("pi_ns" in request, false);
		assert.deepEqual(
			[request.mode, request.prompt, request.item.kind, request.item.file, request.item.start_line],
			["now", "these", "selection", file, 2],
		);
		assert.deepEqual([request.item.end_line, request.item.text], [3, "two\nthree"]);
		assert.match(await e.json<string>("(pi-ide-status)"), /last send: selection of .*a\.txt to pi \d+/);
		// The send file goes with the state file when Emacs exits.
		await e.quit();
		assert.throws(() => readFileSync(join(e.stateDir, editorSendFileName(e.pid))), /ENOENT/);
	});

	it("pi-ide-send-hunk with no hunk of pi's, and a buffer that visits no file: one line each, nothing written", async (t) => {
		const { e } = await world(t);
		const pi = await spawnLiveEditor();
		tell(e, pi.pid);
		await knownPis(e, 1);
		await command(e, "pi-ide-send-hunk", "why");
		await pollUntil(
			async () =>
				(await said(e)).some((l) => /no hunk of pi's under the cursor: nothing sent/.test(l)) ? true : undefined,
			"the hunk notice",
		);
		await e.act('(switch-to-buffer (get-buffer-create "notes"))');
		await command(e, "pi-ide-send", "hello");
		await pollUntil(
			async () => ((await said(e)).some((l) => /not a file buffer: nothing sent/.test(l)) ? true : undefined),
			"the buffer notice",
		);
		assert.equal((await said(e)).length, 2, (await said(e)).join("\n"));
		assert.throws(() => readFileSync(join(e.stateDir, editorSendFileName(e.pid))), /ENOENT/);
	});

	it("pi-ide-send-hunk: pi's hunk under point, its lines as the buffer has them", async (t) => {
		const { e, file } = await world(t);
		const pi = await spawnLiveEditor();
		// pi's run added lines 2-3 (the buffer already holds pi's version).
		place(
			e,
			`pi-${pi.pid}.review.json`,
			oneRunReview([{ file, before: "one\nfour\n", after: CONTENT }], { pid: pi.pid, editorPid: e.pid }),
		);
		tell(e, pi.pid);
		await pollUntil(
			async () =>
				(await e.json<number>(
					`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (length (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max)))))`,
				)) > 0
					? true
					: undefined,
			"pi's hunk marked",
		);
		await e.act("(progn (goto-char (point-min)) (forward-line 2))");
		await command(e, "pi-ide-send-hunk", "why?");
		const request = await nextRequest(e);
		assert.deepEqual(
			[request.item.kind, request.item.start_line, request.item.end_line, request.item.text, request.prompt],
			["hunk", 2, 3, "two\nthree", "why?"],
		);
	});
});
