/**
 * Protocol v0.4 approval (PROTOCOL.md "Approval (optional, off by default): pi-<pid>.approval.json and
 * decisions", and its rule "An answer is for the request the user saw"). The "pi" is a live process of ours and
 * its requests are built by pi's own code (src/link/approval.ts: buildRequest, encodeApprovalMessage) and written
 * as pi writes them (0600, atomically). The user answers with the client's command that names no request
 * (ClientSession.approve / reject); what the client wrote is read as pi reads it (its `decisions`). Each case
 * starts an editor of its own: which request the user was shown is the client's memory, and no case may inherit
 * another's.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { buildRequest, encodeApprovalMessage } from "../../../src/link/approval.ts";
import { MAX_DECISIONS, MAX_PI_FILE_DEPTH } from "../../../src/protocol/limits.ts";
import type { ApprovalDecision, EditorState } from "../../../src/protocol/protocol.ts";
import type { ApprovalMessage } from "../../../src/protocol/wire.ts";
import { deadPid, spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import type { ClientSession } from "../client.ts";
import { type Editor, type KitCase, nowSeconds, QUIET_MS, quietPeriod, WRITE_WAIT_MS } from "../kit.ts";

const ORIGINAL = "one\ntwo\nthree\n";
const PROPOSED = "one\nTWO\nthree\nfour\n";

type Answer = "approve" | "reject";
const DECISION = { approve: "accept", reject: "reject" } as const;

/** pi's request `id` to change `file` (ORIGINAL to PROPOSED), from `piPid` to `editor`, built by pi's code. */
function request(editor: Editor, piPid: number, id: string, file: string, now = nowSeconds()): ApprovalMessage {
	return {
		protocol: "0.4",
		kind: "pi-approval",
		pid: piPid,
		editor_pid: editor.session.pid,
		timestamp: now,
		request: buildRequest({
			id,
			tool: "edit",
			file,
			before: { kind: "text", text: ORIGINAL },
			after: PROPOSED,
			timeoutS: 120,
			now,
		}),
	};
}

const approvalPath = (editor: Editor, piPid: number) => join(editor.stateDir, `pi-${piPid}.approval.json`);

/** Write pi's approval file as pi does (`raw` text, else the encoded request). */
function ask(editor: Editor, piPid: number, message: ApprovalMessage | string): void {
	const text = typeof message === "string" ? message : encodeApprovalMessage(message);
	writeRawStateFile(editor.stateDir, `pi-${piPid}.approval.json`, text);
}

/** pi's wait ends (answered, timed out, pi's dialog): it removes the file. */
function end(editor: Editor, piPid: number): void {
	rmSync(approvalPath(editor, piPid), { force: true });
}

const decisionsIn = (state: EditorState | null): ApprovalDecision[] =>
	(state as { decisions?: ApprovalDecision[] } | null)?.decisions ?? [];

/** The decisions the editor's state file holds for `piPid`, as pi reads them. */
const decisionsFor = (editor: Editor, piPid: number) =>
	decisionsIn(editor.readState()).filter((d) => d.pi_pid === piPid);

const brief = (ds: ApprovalDecision[]) => ds.map((d) => ({ id: d.id, decision: d.decision }));

/** The user's command (no request named); fails when the adapter has none. */
function command(session: ClientSession, answer: Answer): Promise<string> {
	const run = answer === "approve" ? session.approve : session.reject;
	if (!run) throw new Error(`the adapter has capability "approval" but no ${answer}()`);
	return run.call(session);
}

/** The notices announcing requests (ClientSession.approvalNotices), else every notice. */
const arrivals = (editor: Editor): Promise<string[]> => editor.session.approvalNotices?.() ?? editor.notices();

/** Wait until the editor announced a request (a new notice), after `before` such notices (from `arrivals`). */
async function announced(editor: Editor, before: number, what: string): Promise<string[]> {
	let last: string[] = [];
	return pollUntil(
		async () => {
			last = await arrivals(editor);
			return last.length > before ? last.slice(before) : undefined;
		},
		() => `${what} is announced (a notice); notices: ${JSON.stringify(last.slice(-5))}`,
		WRITE_WAIT_MS,
	);
}

/** A live pi for the case, and the editor it asks (its own, with `files` in its project; the first open). */
async function setUp(
	kit: Parameters<KitCase["run"]>[0],
	names: string[],
): Promise<{ editor: Editor; files: string[]; pis: { pid: number; kill: () => Promise<void> }[] }> {
	const [first, ...rest] = names;
	const editor = await kit.start(first === undefined ? {} : { file: { name: first, text: ORIGINAL } });
	const files = names.map((name) => join(editor.project, name));
	for (const name of rest) editor.file(name, ORIGINAL);
	// An editor that answers approvals always writes `decisions`, empty before the first: that is how pi knows.
	const state = await editor.until(
		(s) => Array.isArray((s as { decisions?: unknown }).decisions),
		"`decisions` in the state file",
	);
	assert.deepEqual(decisionsIn(state), [], "`decisions` is empty before any answer");
	return { editor, files, pis: [] };
}

async function livePi(pis: { pid: number; kill: () => Promise<void> }[]): Promise<number> {
	const pi = await spawnLiveEditor();
	pis.push(pi);
	return pi.pid;
}

async function killAll(pis: { kill: () => Promise<void> }[]): Promise<void> {
	for (const pi of pis) await pi.kill();
}

/** Wait until the decisions for `piPid` are `expected` (ids and decisions, oldest first). */
async function decided(editor: Editor, piPid: number, expected: { id: string; decision: string }[], what: string) {
	const want = JSON.stringify(expected);
	await editor.until((s) => JSON.stringify(brief(decisionsIn(s).filter((d) => d.pi_pid === piPid))) === want, what);
}

/** Nothing is decided for `piPid` (after a quiet period: a decision cannot be awaited not to come). */
async function noDecision(editor: Editor, piPid: number, what: string): Promise<void> {
	await quietPeriod();
	assert.deepEqual(brief(decisionsFor(editor, piPid)), [], what);
}

/** Levels of nesting in a request that is too deep (PROTOCOL.md: at most 16, refused before decoding). */
const TOO_DEEP = MAX_PI_FILE_DEPTH + 24;

/** Kinds of request an editor ignores: not for it, from a dead pi, run out, or bad input. */
interface Ignored {
	name: string;
	/** Write it; `good` is pi's request it spoils, `piPid` a live pi's. Returns the pid whose file it is. */
	write: (editor: Editor, piPid: number, good: ApprovalMessage) => Promise<number> | number;
}

const IGNORED: Ignored[] = [
	{
		name: "for another editor",
		write: (e, pid, good) => {
			ask(e, pid, { ...good, editor_pid: pid });
			return pid;
		},
	},
	{
		name: "from a dead pi",
		write: async (e, _pid, good) => {
			const dead = await deadPid();
			ask(e, dead, { ...good, pid: dead });
			return dead;
		},
	},
	{
		name: "expired (its time ran out)",
		write: (e, pid, good) => {
			const then = nowSeconds() - 300;
			ask(e, pid, { ...good, timestamp: then, request: { ...good.request, expires: then + 120 } });
			return pid;
		},
	},
	{
		// PROTOCOL.md `files[].note`: one of three; the editor never shows a note it does not know.
		name: "an unknown note",
		write: (e, pid, good) => {
			ask(e, pid, { ...good, request: { ...good.request, note: "huge" } } as unknown as ApprovalMessage);
			return pid;
		},
	},
	{
		name: "malformed JSON",
		write: (e, pid) => {
			ask(e, pid, '{"protocol": "0.4", "kind": "pi-approval", ');
			return pid;
		},
	},
	{
		name: "an id over 64 characters",
		write: (e, pid, good) => {
			ask(e, pid, { ...good, request: { ...good.request, id: "x".repeat(65) } });
			return pid;
		},
	},
	{
		name: `nested ${TOO_DEEP} levels deep`,
		write: (e, pid, good) => {
			const text = encodeApprovalMessage(good);
			ask(e, pid, `${text.slice(0, -1)},"x":${"[".repeat(TOO_DEEP)}${"]".repeat(TOO_DEEP)}}`);
			return pid;
		},
	},
];

/**
 * Approve (or reject) the request `name` names as the user would once it was shown: the command answers it, or
 * (when the editor was showing another that no longer waits, or had not bound it yet) decides nothing and says
 * so naming `name`, and the same command again answers it.
 */
async function answerNamed(
	editor: Editor,
	piPid: number,
	answer: Answer,
	id: string,
	name: string,
	earlier: ApprovalDecision[] = [],
): Promise<void> {
	const expected = [...brief(earlier), { id, decision: DECISION[answer] }];
	const said = await command(editor.session, answer);
	await quietPeriod();
	if (JSON.stringify(brief(decisionsFor(editor, piPid))) === JSON.stringify(expected)) return;
	assert.deepEqual(
		brief(decisionsFor(editor, piPid)),
		brief(earlier),
		`${answer}: nothing decided yet (said: ${said})`,
	);
	assert.ok(said.includes(name), `a command that decides nothing names the request that waits (${name}): ${said}`);
	await command(editor.session, answer);
	await decided(editor, piPid, expected, `${answer} again answers ${id}`);
}

export const cases: KitCase[] = [
	{
		name: "approval: a request for this editor is announced once; approve and reject put its id and the decision in `decisions`; the buffer and file are untouched",
		ownEditors: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt"]);
			const [file] = files as [string];
			try {
				const pi = await livePi(pis);
				for (const [i, answer] of (["approve", "reject"] as const).entries()) {
					const id = `kit-${answer}`;
					const before = (await arrivals(editor)).length;
					ask(editor, pi, request(editor, pi, id, file));
					await announced(editor, before, id);
					// pi writes its file again (a new timestamp): the same request, not announced again.
					ask(editor, pi, request(editor, pi, id, file));
					await quietPeriod();
					const told = (await arrivals(editor)).slice(before);
					assert.equal(told.length, 1, `${id} is announced once: ${JSON.stringify(told)}`);
					await command(editor.session, answer);
					const expected = [
						...(i === 1 ? [{ id: "kit-approve", decision: "accept" }] : []),
						{ id, decision: DECISION[answer] },
					];
					await decided(editor, pi, expected, `${answer} writes ${id}'s decision`);
					end(editor, pi);
				}
				assert.deepEqual(await editor.session.buffer(file), { text: ORIGINAL, modified: false });
				assert.equal(readFileSync(file, "utf8"), ORIGINAL, "the file is pi's to change, not the editor's");
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: "approval: a request is known by its pi and its id: another pi's request with the same id (pi's ids are its tool calls') is announced and answered as its own",
		ownEditors: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt", "b.txt"]);
			try {
				for (const [i, file] of files.entries()) {
					const pi = await livePi(pis);
					const before = (await arrivals(editor)).length;
					ask(editor, pi, request(editor, pi, "call_1", file));
					await announced(editor, before, `pi ${i + 1}'s call_1`);
					await command(editor.session, "approve");
					await decided(editor, pi, [{ id: "call_1", decision: "accept" }], `pi ${i + 1}'s call_1 approved`);
					end(editor, pi);
				}
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: `approval: a request for another editor, from a dead pi, expired, malformed, with an id over 64 characters or nested too deep is ignored: at most one notice, no decision (${IGNORED.length} kinds)`,
		ownEditors: true,
		long: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt"]);
			const [file] = files as [string];
			try {
				const pi = await livePi(pis);
				for (const row of IGNORED) {
					const before = (await editor.notices()).length;
					const owner = await row.write(editor, pi, request(editor, pi, `kit-${row.name.length}`, file));
					// Longer than a poll of the clients that poll the state dir (Vim: every 500 ms), so the user's
					// command below comes after the client has read the request.
					await quietPeriod(QUIET_MS * 2);
					const told = (await editor.notices()).slice(before);
					assert.ok(told.length <= 1, `${row.name}: at most one notice: ${JSON.stringify(told)}`);
					await command(editor.session, "approve");
					await quietPeriod();
					assert.deepEqual(decisionsIn(editor.readState()), [], `${row.name}: no decision`);
					end(editor, owner);
				}
				// The same editor still answers a good request.
				const before = (await arrivals(editor)).length;
				ask(editor, pi, request(editor, pi, "kit-good", file));
				await announced(editor, before, "a good request after the bad ones");
				await command(editor.session, "approve");
				await decided(editor, pi, [{ id: "kit-good", decision: "accept" }], "the good request is approved");
				assert.deepEqual(await editor.session.buffer(file), { text: ORIGINAL, modified: false });
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: "approval: an answer is bound to its request id: A shown, A ends, B arrives: approve (or reject) decides nothing and names B; the same command again answers B",
		ownEditors: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt", "b.txt"]);
			const [a, b] = files as [string, string];
			try {
				for (const answer of ["approve", "reject"] as const) {
					const pi = await livePi(pis);
					let before = (await arrivals(editor)).length;
					// Ids of their own: a request is (pi pid, id), and this pi is new.
					const [idA, idB] = [`kit-A-${answer}`, `kit-B-${answer}`];
					ask(editor, pi, request(editor, pi, idA, a));
					await announced(editor, before, `${answer}: A`);
					end(editor, pi);
					before = (await arrivals(editor)).length;
					ask(editor, pi, request(editor, pi, idB, b));
					await announced(editor, before, `${answer}: B`);
					const said = await command(editor.session, answer);
					await noDecision(editor, pi, `${answer}: B is not answered without being shown (said: ${said})`);
					assert.ok(said.includes(basename(b)), `${answer}: the command names B (b.txt): ${said}`);
					await command(editor.session, answer);
					await decided(editor, pi, [{ id: idB, decision: DECISION[answer] }], `${answer} again answers B`);
					end(editor, pi);
				}
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: "approval: late and foreign answers: an answer after its request ended is not given to the next one; a request from another pi arriving while one is shown does not take its place",
		ownEditors: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt", "b.txt"]);
			const [a, b] = files as [string, string];
			try {
				// Late: A shown, A ends, the user approves (nothing waits), then B arrives.
				const pi = await livePi(pis);
				let before = (await arrivals(editor)).length;
				ask(editor, pi, request(editor, pi, "kit-A", a));
				await announced(editor, before, "A");
				end(editor, pi);
				await quietPeriod();
				await command(editor.session, "approve");
				before = (await arrivals(editor)).length;
				ask(editor, pi, request(editor, pi, "kit-B", b));
				await announced(editor, before, "B");
				await quietPeriod();
				const late = decisionsFor(editor, pi);
				assert.ok(
					late.every((d) => d.id === "kit-A"),
					`the late answer to A is never written as B's: ${JSON.stringify(late)}`,
				);
				// The user answers B (the editor shows no unanswered request after it).
				await answerNamed(editor, pi, "reject", "kit-B", basename(b), late);
				end(editor, pi);

				// Foreign: pi 1's A shown, pi 2's B arrives meanwhile: approve answers A (pi 1's), never B.
				const one = await livePi(pis);
				const two = await livePi(pis);
				before = (await arrivals(editor)).length;
				ask(editor, one, request(editor, one, "kit-one", a));
				await announced(editor, before, "pi 1's request");
				before = (await arrivals(editor)).length;
				ask(editor, two, request(editor, two, "kit-two", b));
				await announced(editor, before, "pi 2's request");
				await command(editor.session, "approve");
				await decided(editor, one, [{ id: "kit-one", decision: "accept" }], "approve answers the request shown");
				assert.deepEqual(brief(decisionsFor(editor, two)), [], "pi 2's request is not answered with pi 1's");
				end(editor, one);
				await answerNamed(editor, two, "reject", "kit-two", basename(b));
				assert.deepEqual(brief(decisionsFor(editor, one)), [{ id: "kit-one", decision: "accept" }]);
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: `approval: \`decisions\` keeps the newest ${MAX_DECISIONS}, newest last`,
		ownEditors: true,
		needs: ["approval"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt"]);
			const [file] = files as [string];
			try {
				const pi = await livePi(pis);
				const ids: string[] = [];
				for (let i = 1; i <= MAX_DECISIONS + 1; i++) {
					const id = `kit-${i}`;
					ids.push(id);
					const before = (await arrivals(editor)).length;
					ask(editor, pi, request(editor, pi, id, file));
					await announced(editor, before, id);
					await command(editor.session, i % 2 === 0 ? "reject" : "approve");
					end(editor, pi);
				}
				const newest = ids[ids.length - 1];
				await editor.until((s) => decisionsIn(s).some((d) => d.id === newest), `${newest} decided`);
				// The file as written: pi's reader keeps the newest 20 of a longer list, so it would hide one.
				const raw = editor.rawState();
				assert.ok(raw !== null, "the state file is there");
				editor.readState(); // and pi reads it without a problem
				const kept = (JSON.parse(raw) as { decisions: ApprovalDecision[] }).decisions;
				assert.deepEqual(
					kept.map((d) => d.id),
					ids.slice(-MAX_DECISIONS),
					`the newest ${MAX_DECISIONS}, newest last`,
				);
				assert.ok(
					kept.every((d) => d.pi_pid === pi && d.decision === (Number(d.id.slice(4)) % 2 === 0 ? "reject" : "accept")),
				);
			} finally {
				await killAll(pis);
			}
		},
	},
	{
		name: 'approval: the proposal shown: its marks in the open buffer carry the "pi" name, on the lines pi would change; the buffer is not modified; an answer clears them',
		ownEditors: true,
		needs: ["approval", "approval-marks"],
		run: async (kit) => {
			const { editor, files, pis } = await setUp(kit, ["a.txt"]);
			const [file] = files as [string];
			const marks = (f: string) => {
				const read = editor.session.approvalMarks;
				if (!read) throw new Error('the adapter has capability "approval-marks" but no approvalMarks()');
				return read.call(editor.session, f);
			};
			try {
				const pi = await livePi(pis);
				ask(editor, pi, request(editor, pi, "kit-marks", file));
				let last: { name: string; line: number }[] = [];
				const shown = await pollUntil(
					async () => {
						last = await marks(file);
						return last.length > 0 ? last : undefined;
					},
					() => `the proposal is marked in a.txt; marks: ${JSON.stringify(last)}`,
					WRITE_WAIT_MS,
				);
				for (const mark of shown) {
					assert.match(mark.name, /pi/i, `a mark carries the "pi" name: ${JSON.stringify(mark)}`);
					// pi replaces line 2 ("two") and adds "four" after line 3 (before line 4, the end of the buffer):
					// a mark sits on a line pi replaces, or where its added lines go.
					assert.ok(mark.line >= 2 && mark.line <= 4, `a mark on a line pi changes: ${JSON.stringify(shown)}`);
				}
				assert.deepEqual(await editor.session.buffer(file), { text: ORIGINAL, modified: false });
				await command(editor.session, "reject");
				await decided(editor, pi, [{ id: "kit-marks", decision: "reject" }], "reject");
				await pollUntil(
					async () => {
						last = await marks(file);
						return last.length === 0 ? true : undefined;
					},
					() => `the marks go once answered; marks: ${JSON.stringify(last)}`,
					WRITE_WAIT_MS,
				);
				assert.deepEqual(await editor.session.buffer(file), { text: ORIGINAL, modified: false });
				assert.equal(readFileSync(file, "utf8"), ORIGINAL);
			} finally {
				end(editor, pis[0]?.pid ?? 0);
				await killAll(pis);
			}
		},
	},
];
