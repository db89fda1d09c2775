/**
 * Protocol v0.4 approval in a real Emacs (pi-ide-approval.el): requests built by pi's own code
 * (src/link/approval.ts), written as pi writes them, from a live stand-in pi of the same user (the test runner).
 * Emacs says so in one message, marks the proposed hunks in the open buffer, shows ` approve?` in the mode line
 * and `pi-ide-status`; `pi-ide-approve` / `pi-ide-reject` put the decision in the state file without touching
 * the buffer or the disk; `pi-ide-proposal` shows the change as a read-only diff without taking focus. A request
 * that ends (removed, replaced) is forgotten and answering it says so. Bad requests: nothing pending, one message
 * each, no error.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	chownSync,
	mkdirSync,
	readFileSync,
	renameSync,
	symlinkSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import type { ApprovalMessage } from "../../src/protocol/wire.ts";
import { deadPid, killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\n";
const PROPOSED = "one\nTWO\nthree\nfour\n";

interface Decision {
	pi_pid: number;
	id: string;
	decision: string;
}

const decisionsOf = (s: unknown): Decision[] | undefined => (s as { decisions?: Decision[] } | null)?.decisions;

function request(
	e: Emacs,
	file: string,
	overrides: Partial<ApprovalMessage> = {},
	{ id = "req-1", before = CONTENT, after = PROPOSED, timeoutS = 120 } = {},
): ApprovalMessage {
	const now = Date.now() / 1000;
	return {
		protocol: "0.4",
		kind: "pi-approval",
		pid: process.pid,
		editor_pid: e.pid,
		timestamp: now,
		request: buildRequest({ id, tool: "edit", file, before: { kind: "text", text: before }, after, timeoutS, now }),
		...overrides,
	};
}

/** Put `text` at `<state dir>/<name>` whole, mode and owner already set, as pi does (temp file, rename). */
function place(e: Emacs, name: string, text: string, mode = 0o600, owner?: number): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, text);
	chmodSync(tmp, mode);
	if (owner !== undefined) chownSync(tmp, owner, owner);
	renameSync(tmp, join(e.stateDir, name));
}

const approvalName = (pid = process.pid) => `pi-${pid}.approval.json`;
const ask = (e: Emacs, message: ApprovalMessage) => place(e, approvalName(message.pid), encodeApprovalMessage(message));

const PENDING = "(length pi-ide-approval--pending)";
const waitPending = (e: Emacs, n: number) =>
	pollUntil(async () => ((await e.eval(PENDING)) === String(n) ? true : undefined), `${n} requests pending`, {
		timeoutMs: 10_000,
		intervalMs: 25,
	});

/** The approval overlays of FILE's buffer: [first line, last line, the text shown beside them, has a face]. */
const marks = (e: Emacs, file: string) =>
	e.json<[number, number, string, boolean][]>(`(with-current-buffer (find-buffer-visiting ${elispString(file)})
		(vconcat (mapcar (lambda (o) (vector (line-number-at-pos (overlay-start o) t) (line-number-at-pos (overlay-end o) t)
			(substring-no-properties (or (overlay-get o 'before-string) (overlay-get o 'after-string) ""))
			(if (overlay-get o 'face) t :false)))
			(sort (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-approval)) (overlays-in (point-min) (point-max)))
				(lambda (a b) (< (overlay-start a) (overlay-start b)))))))`);

/** Line 2 (and its newline) to go, "TWO" after it; "four" after the last line. */
const MARKED: [number, number, string, boolean][] = [
	[2, 3, "+ TWO\n", true],
	[4, 4, "+ four", false],
];

async function openFile(e: Emacs, name: string, text = CONTENT): Promise<string> {
	const file = join(e.dir, name);
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), `${name} open`);
	return file;
}

const bufferText = (e: Emacs, file: string) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);

const said = async (e: Emacs, re: RegExp) => (await e.messages()).filter((m) => re.test(m));

describe("emacs: approving pi's proposed change (v0.4)", { concurrency: 2 }, () => {
	it("a request is told once, marked and shown; approve and reject write the decision, touch nothing", async (t) => {
		const e = await startEmacs(t);
		const file = await openFile(e, "a.txt");
		assert.deepEqual(decisionsOf(e.readState()), [], "decisions, empty: this Emacs answers approvals");
		ask(e, request(e, file));
		await waitPending(e, 1);
		assert.deepEqual(await marks(e, file), MARKED);
		assert.match(await e.pane(), /^one\n- two\n\+ TWO\nthree\n\+ four$/m, "the proposed lines on screen, after pi's");
		assert.equal(await e.eval("(pi-ide-mode-line)"), '" pi approve?"');
		assert.match(
			await e.eval("(pi-ide-status)"),
			/pi waits for your approval: edit of .*a\.txt \(2 hunks\), 1[12]\d s left\. M-x pi-ide-approve/,
		);
		ask(e, request(e, file)); // pi's file read again (any event): told once
		await e.eval("(pi-ide-inbox-refresh-approvals)");
		assert.equal(
			(await said(e, /pi waits for your approval of its edit of .*a\.txt \(2 hunks, 120 s\): M-x pi-ide-approve/))
				.length,
			1,
		);

		assert.match(await e.eval("(pi-ide-approve)"), /approved: pi applies its change to .*a\.txt/);
		const s = await e.until((s) => (decisionsOf(s)?.length === 1 ? s : undefined), "the decision is written");
		assert.deepEqual(decisionsOf(s), [{ pi_pid: process.pid, id: "req-1", decision: "accept" }]);
		assert.equal(await e.eval(PENDING), "0");
		assert.deepEqual(await marks(e, file), []);
		assert.equal(await e.eval("(pi-ide-mode-line)"), '""');
		assert.equal(await bufferText(e, file), CONTENT, "the buffer is pi's to change, not Emacs's");
		assert.equal(readFileSync(file, "utf8"), CONTENT);
		assert.match(await e.eval("(pi-ide-approve)"), /pi is not waiting for your approval/);
		// pi has not removed the answered request yet: read again, it is not asked again.
		await e.eval(`(pi-ide-inbox-process ${elispString(approvalName())})`);
		assert.equal(await e.eval(PENDING), "0");

		ask(e, request(e, file, {}, { id: "req-2" }));
		await waitPending(e, 1);
		assert.match(await e.eval("(pi-ide-reject)"), /rejected: pi leaves .*a\.txt as it is/);
		const r = await e.until((s) => (decisionsOf(s)?.length === 2 ? s : undefined), "the second decision");
		assert.deepEqual(decisionsOf(r)?.[1], { pi_pid: process.pid, id: "req-2", decision: "reject" });
		assert.equal(readFileSync(file, "utf8"), CONTENT);
		assert.equal((await said(e, /error|Error/)).length, 0);
	});

	it("a file opened later is marked, an edit of pi's lines marks it as the user's (issue 26); pi removing its request clears the marks", async (t) => {
		const e = await startEmacs(t);
		await openFile(e, "a.txt");
		const other = join(e.dir, "b.txt");
		writeFileSync(other, CONTENT);
		const buffers = await e.eval("(length (buffer-list))");
		ask(e, request(e, other));
		await waitPending(e, 1);
		assert.equal(await e.eval("(length (buffer-list))"), buffers, "nothing opened for the request");
		await e.act(`(find-file ${elispString(other)})`);
		assert.deepEqual(await marks(e, other), MARKED);
		// The user edits a line pi would replace, unsaved: that hunk is marked as touching the user's line (issue 26),
		// and pi's own marks come back when the edit is taken back.
		const untilMarks = (want: unknown) =>
			pollUntil(
				async () => (JSON.stringify(await marks(e, other)) === JSON.stringify(want) ? true : undefined),
				`marks ${JSON.stringify(want)}`,
			);
		await e.act('(progn (goto-char (point-min)) (forward-line 1) (end-of-line) (insert "!"))');
		await untilMarks([
			[
				2,
				3,
				"pi's hunk touches your unsaved lines: if accepted, the file gets pi's text and your buffer keeps yours\n",
				true,
			],
			MARKED[1],
		]);
		await e.act("(progn (goto-char (point-min)) (forward-line 1) (end-of-line) (delete-char -1))");
		await untilMarks(MARKED);
		unlinkSync(join(e.stateDir, approvalName()));
		await waitPending(e, 0);
		assert.deepEqual(await marks(e, other), []);
		assert.equal(await e.eval("(pi-ide-mode-line)"), '""');
		assert.deepEqual(decisionsOf(e.readState()), []);
	});

	it("pi-ide-proposal: a read-only diff, displayed not selected; against unsaved text (issue 26): a hunk touching it marked on the user's line, named, the rest placed; never touched", async (t) => {
		const e = await startEmacs(t);
		const file = await openFile(e, "a.txt");
		await e.act('(progn (goto-char (point-min)) (forward-line 1) (kill-line) (insert "mine, unsaved"))');
		ask(e, request(e, file));
		await waitPending(e, 1);
		const touch =
			"1 of 2 hunks touches your unsaved line 2: if accepted, the file gets pi's text and your buffer keeps yours there";
		assert.deepEqual(
			await marks(e, file),
			[
				[
					2,
					3,
					"pi's hunk touches your unsaved lines: if accepted, the file gets pi's text and your buffer keeps yours\n",
					true,
				],
				[4, 4, "+ four", false],
			],
			"pi's line 2 touches the user's unsaved line: marked there; the line pi adds at the end placed",
		);
		assert.equal((await said(e, /pi waits for your approval/)).at(-1)?.endsWith(`. ${touch}`), true);
		const before = await e.eval("(list (buffer-name (window-buffer (selected-window))) (point))");
		assert.equal(await e.json<string>("(pi-ide-proposal)"), `(pi-ide) ${touch}`);
		assert.equal(await e.eval("(list (buffer-name (window-buffer (selected-window))) (point))"), before);
		const view = await e.json<{ text: string; readOnly: boolean; mode: string; shown: boolean }>(
			`(with-current-buffer "*pi-ide proposal*"
				(list (cons 'text (buffer-string)) (cons 'readOnly (if buffer-read-only t :false))
					(cons 'mode (symbol-name major-mode)) (cons 'shown (if (get-buffer-window (current-buffer) t) t :false))))`,
		);
		assert.deepEqual(view, {
			text: `(pi-ide) ${touch}\n--- ${file} (your unsaved buffer)\n+++ ${file} (pi's proposal in your unsaved buffer)\n@@ -4,0 +4,1 @@\n+four\n`,
			readOnly: true,
			mode: "diff-mode",
			shown: true,
		});
		const header = () => e.json<string>('(with-current-buffer "*pi-ide proposal*" header-line-format)');
		assert.match(await header(), /pi waits for your decision on this change: M-x pi-ide-approve/);
		unlinkSync(join(e.stateDir, approvalName())); // decided in pi's dialog, say
		await waitPending(e, 0);
		assert.equal(await header(), "pi no longer waits for a decision on this change");
		assert.equal(await bufferText(e, file), "one\nmine, unsaved\nthree\n");
		assert.equal(readFileSync(file, "utf8"), CONTENT);
		assert.match(
			await e.eval(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-modified-p))`),
			/^t$/,
		);
	});

	it("a CR-LF buffer with unsaved changes (lines not split at \\n): no marks, no unsaved lines named (issue 26)", async (t) => {
		const e = await startEmacs(t);
		const crlf = "one\r\ntwo\r\nthree\r\n";
		const file = await openFile(e, "crlf.txt", crlf);
		await e.act('(progn (goto-char (point-min)) (insert "top\n"))');
		ask(e, request(e, file, {}, { before: crlf, after: "one\r\nTWO\r\nthree\r\n" }));
		await waitPending(e, 1);
		await e.eval(`(pi-ide-approval--mark ${elispString(file)})`); // the marks drawn now, as the recheck draws them
		assert.deepEqual(await marks(e, file), []);
		const told = await said(e, /pi waits for your approval/);
		assert.equal(told.length, 1);
		assert.doesNotMatch(told[0] ?? "", /unsaved/);
	});

	it("answering a request that is gone (removed, replaced) does nothing but say so", async (t) => {
		// No watch, and a timer that never comes: pi's files change under Emacs without Emacs having read them.
		const e = await startEmacs(t, {
			preEval: ["(setq pi-ide-inbox-use-file-notify nil pi-ide-inbox-poll-interval 3600)"],
		});
		const file = await openFile(e, "a.txt");
		ask(e, request(e, file));
		await e.eval("(progn (pi-ide-inbox--scan) (pi-ide-inbox--flush))");
		await waitPending(e, 1);
		unlinkSync(join(e.stateDir, approvalName()));
		assert.match(await e.eval("(pi-ide-approve)"), /pi no longer waits for that decision/);
		assert.equal(await e.eval(PENDING), "0");
		assert.deepEqual(await marks(e, file), []);

		ask(e, request(e, file, {}, { id: "req-2" }));
		await e.eval("(progn (pi-ide-inbox--scan) (pi-ide-inbox--flush))");
		await waitPending(e, 1);
		ask(e, request(e, file, {}, { id: "req-3" }));
		assert.match(
			await e.eval("(pi-ide-reject)"),
			/not rejected: the request you saw is gone; pi now asks about .*a\.txt \(2 hunks\): M-x pi-ide-reject again/,
		);
		assert.equal(await e.eval("(plist-get (pi-ide-approval-current) :id)"), '"req-3"');
		assert.equal(await e.eval("(length pi-ide-approval--decisions)"), "0", "nothing was decided");
		assert.match(await e.eval("(pi-ide-reject)"), /rejected/);
		const s = await e.until((s) => (decisionsOf(s)?.length === 1 ? s : undefined), "the decision on req-3");
		assert.deepEqual(decisionsOf(s), [{ pi_pid: process.pid, id: "req-3", decision: "reject" }]);
	});

	// Issue 22, item 8: an answer is for the request the user saw (PROTOCOL.md). A shown, A ends (timed out, read
	// by Emacs), B arrives and is told: the command the user was typing for A must not answer B.
	const BOUND: { name: string; commands: { form: string; said: RegExp }[]; decided: Omit<Decision, "pi_pid">[] }[] = [
		{
			name: "approve refuses and names B; approve again approves B",
			commands: [
				{ form: "(pi-ide-approve)", said: /^"\(pi-ide\) not approved: the request you saw is gone; pi now asks about/ },
				{ form: "(pi-ide-approve)", said: /^"\(pi-ide\) approved: pi applies its change to/ },
			],
			decided: [{ id: "req-B", decision: "accept" }],
		},
		{
			name: "reject refuses; pi-ide-proposal shows B; reject then rejects B",
			commands: [
				{ form: "(pi-ide-reject)", said: /^"\(pi-ide\) not rejected: the request you saw is gone/ },
				{ form: "(pi-ide-proposal)", said: /^nil$/ },
				{ form: "(pi-ide-reject)", said: /^"\(pi-ide\) rejected: pi leaves/ },
			],
			decided: [{ id: "req-B", decision: "reject" }],
		},
	];
	for (const c of BOUND)
		it(`an answer is for the request the user saw: A shown, A ends, B arrives: ${c.name}`, async (t) => {
			const e = await startEmacs(t);
			const file = await openFile(e, "a.txt");
			ask(e, request(e, file, {}, { id: "req-A" }));
			await waitPending(e, 1);
			unlinkSync(join(e.stateDir, approvalName()));
			await waitPending(e, 0);
			ask(e, request(e, file, {}, { id: "req-B" }));
			await pollUntil(
				async () => ((await e.eval("(plist-get (pi-ide-approval-current) :id)")) === '"req-B"' ? true : undefined),
				"B is pending",
			);
			for (const step of c.commands) assert.match(await e.eval(step.form), step.said, step.form);
			const want = c.decided.map((d) => ({ pi_pid: process.pid, ...d }));
			assert.equal(await e.eval("(length pi-ide-approval--decisions)"), String(want.length));
			const s = await e.until((s) => (decisionsOf(s)?.length === want.length ? s : undefined), "the decisions");
			assert.deepEqual(decisionsOf(s), want);
		});

	it("an answer is for the request the user saw: a request first read by the command itself is named, not answered", async (t) => {
		// No watch, and a timer that never comes: pi's files change under Emacs without Emacs having read them.
		const e = await startEmacs(t, {
			preEval: ["(setq pi-ide-inbox-use-file-notify nil pi-ide-inbox-poll-interval 3600)"],
		});
		const file = await openFile(e, "a.txt");
		const other = await spawnLiveEditor();
		t.after(() => other.kill());
		const read = () => e.eval("(progn (pi-ide-inbox--scan) (pi-ide-inbox--flush))");
		ask(e, request(e, file, {}, { id: "req-X" }));
		await read();
		ask(e, request(e, file, { pid: other.pid }, { id: "req-A" }));
		await read();
		await waitPending(e, 2);
		assert.match(await e.eval("(pi-ide-approve)"), /approved: pi applies/, "X, told first, is the one shown");
		// The other pi replaces A with B; only the command's own re-read sees it.
		ask(e, request(e, file, { pid: other.pid }, { id: "req-B" }));
		assert.match(await e.eval("(pi-ide-approve)"), /not approved: the request you saw is gone; pi now asks about/);
		assert.equal(await e.eval("(length pi-ide-approval--decisions)"), "1", "B was not decided");
		assert.match(await e.eval("(pi-ide-approve)"), /approved: pi applies/);
		const s = await e.until((s) => (decisionsOf(s)?.length === 2 ? s : undefined), "the decision on req-B");
		assert.deepEqual(decisionsOf(s), [
			{ pi_pid: process.pid, id: "req-X", decision: "accept" },
			{ pi_pid: other.pid, id: "req-B", decision: "accept" },
		]);
	});

	it("a request that runs out, or whose pi dies, without pi removing it is dropped within seconds", async (t) => {
		const e = await startEmacs(t);
		const file = await openFile(e, "a.txt");
		ask(e, request(e, file, {}, { timeoutS: 1 }));
		await waitPending(e, 1);
		assert.deepEqual(await marks(e, file), MARKED);
		await waitPending(e, 0);
		assert.deepEqual(await marks(e, file), []);
		// The request the user saw ran out: the answer names that, not "nothing waits".
		assert.match(
			await e.eval("(pi-ide-approve)"),
			/pi no longer waits for that decision \(answered elsewhere, run out/,
		);

		const pi = await spawnLiveEditor();
		ask(e, request(e, file, { pid: pi.pid }));
		await waitPending(e, 1);
		await pi.kill();
		await waitPending(e, 0);
		assert.deepEqual(await marks(e, file), []);
		assert.equal(await e.eval("(pi-ide-mode-line)"), '""');
		assert.deepEqual(decisionsOf(e.readState()), []);
	});

	it("bad requests are ignored with one message each; other editors', dead pis' are silent; no error", async (t) => {
		const e = await startEmacs(t);
		const file = await openFile(e, "a.txt");
		const good = (pid: number, overrides: Partial<ApprovalMessage> = {}) =>
			encodeApprovalMessage(request(e, file, { pid, ...overrides }));
		const cases: { name: string; make: (name: string, pid: number) => void; why: RegExp }[] = [
			{ name: "malformed JSON", make: (n) => place(e, n, "{not json"), why: /not valid JSON/ },
			{
				name: "oversized",
				make: (n, pid) => place(e, n, good(pid).padEnd(1024 * 1024 + 1, " ")),
				why: /over the 1048576-byte limit/,
			},
			{
				name: "symlinked",
				make: (n, pid) => {
					writeFileSync(join(e.dir, `planted-${pid}`), good(pid), { mode: 0o600 });
					symlinkSync(join(e.dir, `planted-${pid}`), join(e.stateDir, n));
				},
				why: /is a link, not a regular file/,
			},
			{
				name: "a FIFO",
				make: (n) => execFileSync("mkfifo", ["-m", "600", join(e.stateDir, n)]),
				why: /is a fifo, not a regular file/,
			},
			{ name: "group-readable", make: (n, pid) => place(e, n, good(pid), 0o640), why: /group\/other permissions/ },
			{ name: "pid field not the name's", make: (n, pid) => place(e, n, good(pid + 1)), why: /does not match/ },
			{
				name: "pi's message kind",
				make: (n, pid) => place(e, n, good(pid, { kind: "pi" } as never)),
				why: /not a pi approval request/,
			},
			{
				name: "run out",
				make: (n, pid) =>
					place(e, n, good(pid, { request: { ...request(e, file).request, expires: Date.now() / 1000 - 1 } })),
				why: /ran out/,
			},
		];
		if (process.getuid?.() === 0)
			cases.push({
				name: "another user's file",
				make: (n, pid) => place(e, n, good(pid), 0o600, 65534),
				why: /belongs to uid 65534/,
			});
		const base = 2_000_000;
		cases.forEach((c, i) => {
			c.make(approvalName(base + i), base + i);
		});
		const dead = await deadPid();
		place(e, approvalName(dead), good(dead));
		const otherPi = await spawnLiveEditor();
		place(e, approvalName(otherPi.pid), good(otherPi.pid, { editor_pid: e.pid + 1 }));
		// A good request last: once it is pending, everything before it was read.
		ask(e, request(e, file));
		await waitPending(e, 1);
		await e.eval("(pi-ide-inbox--scan)"); // what the timer fallback would see: nothing new, no second message
		await e.eval("(pi-ide-inbox--flush)");
		assert.equal(await e.eval("(mapcar #'car pi-ide-approval--pending)"), `(${process.pid})`);
		const messages = await e.messages();
		cases.forEach((c, i) => {
			const lines = messages.filter((m) => m.includes(`ignoring ${approvalName(base + i)}`));
			assert.equal(lines.length, 1, `${c.name}: ${lines.join(" | ")}`);
			assert.match(lines[0] ?? "", c.why, c.name);
		});
		for (const quiet of [dead, otherPi.pid])
			assert.equal(messages.filter((m) => m.includes(approvalName(quiet))).length, 0, messages.join("\n"));
		assert.equal(messages.filter((m) => /pi waits for your approval/.test(m)).length, 1, messages.join("\n"));
		assert.equal(messages.filter((m) => /error|Error/.test(m)).length, 0, messages.join("\n"));
		assert.deepEqual(await marks(e, file), MARKED);
		assert.equal(await bufferText(e, file), CONTENT);
		unlinkSync(join(e.stateDir, approvalName(base + 3))); // the FIFO: nothing may ever open it
	});
});
