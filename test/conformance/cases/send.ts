/**
 * Protocol v0.5, send to pi (PROTOCOL.md, "v0.5: send to pi"): the request an editor writes, read with pi's own
 * validator (src/protocol/send.ts). The "pi" is a live process of ours whose message names the editor. With no
 * pi naming it the client writes nothing and says so once; with one, each command writes `<pid>.send.json`
 * (0600, no temp file left) for that pi with a new id, the mode, the typed words and what was pointed at: the
 * selected lines, the line under the cursor, the whole file, the diagnostic there with its message (its own case,
 * for the clients with diagnostics); a line
 * past the cap is cut at 256 KiB encoded with `truncated`; pi's answer (`sent`) is shown in one notice.
 */
import assert from "node:assert/strict";
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_SELECTION_TEXT_BYTES } from "../../../src/protocol/limits.ts";
import { editorSendFileName, parseSendRequest, type SendRequest } from "../../../src/protocol/wire.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import type { KitSend } from "../client.ts";
import {
	activeFile,
	assertNoTempLeft,
	type Editor,
	type Kit,
	type KitCase,
	nowSeconds,
	quietPeriod,
	stateDirEntries,
	WRITE_WAIT_MS,
} from "../kit.ts";

const TEXT = "one\ntwo\nthree\n";

function sendPath(editor: Editor): string {
	return join(editor.stateDir, editorSendFileName(editor.session.pid));
}

/** The send file as pi reads it, or undefined while there is none (or only the one with `previousId`). */
function readSend(editor: Editor, previousId: string | undefined): SendRequest | undefined {
	let text: string;
	try {
		text = readFileSync(sendPath(editor), "utf8");
	} catch {
		return undefined;
	}
	const parsed = parseSendRequest(text, editor.session.pid);
	if (!parsed.ok) throw new Error(`pi refuses the send file: ${parsed.reason}\n${text.slice(0, 300)}`);
	return parsed.request.id === previousId ? undefined : parsed.request;
}

/** pi `piPid`'s message naming the editor, handled. */
async function connectPi(editor: Editor, piPid: number, extra: Record<string, unknown> = {}): Promise<void> {
	const message = {
		...makePiMessage({
			pid: piPid,
			cwd: editor.project,
			timestamp: nowSeconds(),
			editor_pid: editor.session.pid,
			seq: 0,
			changed: [],
			last_turn: [],
		}),
		...extra,
	};
	writeRawStateFile(editor.stateDir, `pi-${piPid}.json`, JSON.stringify(message));
	await editor.until((s) => s.pi?.pid === piPid && s.pi.seq === message.seq, "pi's message is handled");
}

interface Row {
	name: string;
	send: KitSend;
	/** Lay the buffer out (diagnostics); the cursor goes to `cursor` first. */
	cursor: number;
	arrange?: (editor: Editor, file: string) => Promise<void>;
	expect: (request: SendRequest, file: string) => void;
}

/** Needs "diagnostics" too: its own case, so a client without diagnostics (Obsidian) runs the other forms. */
const DIAGNOSTIC_ROW: Row = {
	name: "the diagnostic under the cursor, with its message",
	send: { mode: "draft", prompt: "", form: "diagnostic" },
	cursor: 3,
	arrange: (editor, file) =>
		editor.session.setDiagnostics(file, [{ severity: "error", line: 3, column: 1, message: "three is bad" }]),
	expect: (r) => {
		assert.deepEqual(
			[r.item.kind, r.item.start_line, r.item.text, r.item.message],
			["diagnostic", 3, "three", "three is bad"],
		);
	},
};

const ROWS: Row[] = [
	{
		name: "the selected lines, as a draft, with the typed words",
		send: { mode: "draft", prompt: "why these?", lines: [2, 3] },
		cursor: 1,
		expect: (r, file) => {
			assert.equal(r.mode, "draft");
			assert.equal(r.prompt, "why these?");
			assert.deepEqual(
				{ ...r.item, message: r.item.message ?? null },
				{ kind: "selection", file, start_line: 2, end_line: 3, text: "two\nthree", truncated: false, message: null },
			);
		},
	},
	{
		name: "the line under the cursor, at once",
		send: { mode: "now", prompt: "explain" },
		cursor: 2,
		expect: (r, file) => {
			assert.equal(r.mode, "now");
			assert.deepEqual(
				[r.item.kind, r.item.file, r.item.start_line, r.item.end_line, r.item.text],
				["line", file, 2, 2, "two"],
			);
		},
	},
	{
		name: "the whole file",
		send: { mode: "draft", prompt: "", form: "file" },
		cursor: 1,
		expect: (r) => {
			assert.deepEqual(
				[r.item.kind, r.item.start_line, r.item.end_line, r.item.text],
				["file", 1, 3, "one\ntwo\nthree"],
			);
		},
	},
];

/**
 * No pi: one notice, nothing written; then with one pi naming the editor, each of `rows` sent and read as pi reads
 * it, and pi's answer to the last shown in one notice.
 */
async function sendEachForm(kit: Kit, rows: readonly Row[]): Promise<void> {
	const editor = await kit.start();
	const file = editor.file("send.ts", TEXT);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, "send.ts open");

	// No pi names this editor: one notice, nothing written.
	const before = (await editor.notices()).length;
	await editor.session.sendToPi?.(file, { mode: "draft", prompt: "hello" });
	const notices = await pollUntil(async () => {
		const now = await editor.notices();
		return now.length > before ? now.slice(before) : undefined;
	}, "a notice that no pi is connected");
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0] ?? "", /no pi/i);
	assert.ok(!stateDirEntries(editor).some((n) => n.includes(".send.")), "nothing written");

	const pi = await spawnLiveEditor();
	try {
		await connectPi(editor, pi.pid);
		let previous: string | undefined;
		const ids = new Set<string>();
		for (const row of rows) {
			await row.arrange?.(editor, file);
			await editor.session.moveCursor({ line: row.cursor, column: 1 });
			await editor.session.sendToPi?.(file, row.send);
			const request = await pollUntil(() => readSend(editor, previous), `${row.name}: the send file`, WRITE_WAIT_MS);
			assert.equal(request.pi_pid, pi.pid, `${row.name}: for the pi naming the editor`);
			assert.ok(!ids.has(request.id), `${row.name}: a new id`);
			ids.add(request.id);
			previous = request.id;
			row.expect(request, file);
			const stats = lstatSync(sendPath(editor));
			assert.ok(stats.isFile(), "a regular file");
			assert.equal(stats.mode & 0o777, 0o600, `${row.name}: mode 0600`);
			await assertNoTempLeft(editor, `${row.name}: no temp file left`);
		}

		// pi's answer: the refusal of an excluded file, in one notice.
		const seen = (await editor.notices()).length;
		await connectPi(editor, pi.pid, {
			sent: { editor_pid: editor.session.pid, id: previous, fate: "excluded", reason: "excluded" },
		});
		const answer = await pollUntil(async () => {
			const now = await editor.notices();
			return now.length > seen ? now.slice(seen) : undefined;
		}, "pi's answer shown");
		assert.equal(answer.length, 1, answer.join("\n"));
		assert.match(answer[0] ?? "", /excluded/);
	} finally {
		await pi.kill();
	}
}

/** pi's answers (`sent`, PROTOCOL.md "v0.5: send to pi"): each fate, and what the editor shows for it in one line. */
const FATES: { fate: string; reason?: string; shows: RegExp[] }[] = [
	{ fate: "draft", shows: [/as a draft/] },
	{ fate: "prompt", shows: [/as a prompt/] },
	{ fate: "follow-up", shows: [/follow-up/] },
	{ fate: "excluded", reason: "excluded", shows: [/excluded/] },
	// A reason is pi's words: shown inert (an escape sequence never reaches the screen as one).
	{ fate: "refused", reason: "older than 60 s\u001b[31m", shows: [/refused/, /older than 60 s/] },
	// A fate this editor does not know (a newer pi's): a refusal naming it, inert, never an error.
	{ fate: "teleported", shows: [/refused/, /teleported/] },
];

/** Send the line under the cursor as a draft; the send file's id. */
async function sendOne(editor: Editor, file: string, previous: string | undefined): Promise<string> {
	await editor.session.sendToPi?.(file, { mode: "draft", prompt: "" });
	return (await pollUntil(() => readSend(editor, previous), "the send file", WRITE_WAIT_MS)).id;
}

/** The notices after the first `seen`, once there are more (or [] after a quiet period, with `none`). */
async function newNotices(editor: Editor, seen: number, what: string, none = false): Promise<string[]> {
	if (none) {
		await quietPeriod();
		return (await editor.notices()).slice(seen);
	}
	return pollUntil(async () => {
		const now = await editor.notices();
		return now.length > seen ? now.slice(seen) : undefined;
	}, what);
}

/**
 * pi answers each of `rows` (a send of the line under the cursor each): the editor shows each in one line; with
 * `others`, answers not for this editor or not for a send it made are not shown, and the right one once, however
 * often pi's message says it. Each message pi writes has a new `seq` (as pi's rewrites do), so the editor has
 * handled each before the case goes on. One editor each (a GUI editor's notification list shows only a few).
 */
async function answersShown(kit: Kit, rows: typeof FATES, others: boolean): Promise<void> {
	const editor = await kit.start();
	const file = editor.file("fates.ts", TEXT);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, "fates.ts open");
	const pi = await spawnLiveEditor();
	let seq = 0;
	try {
		await connectPi(editor, pi.pid, { seq });
		let previous: string | undefined;
		for (const row of rows) {
			const id = await sendOne(editor, file, previous);
			previous = id;
			const seen = (await editor.notices()).length;
			const sent = {
				editor_pid: editor.session.pid,
				id,
				fate: row.fate,
				...(row.reason ? { reason: row.reason } : {}),
			};
			await connectPi(editor, pi.pid, { seq: ++seq, sent });
			const shown = await newNotices(editor, seen, `pi's answer "${row.fate}" shown`);
			assert.equal(shown.length, 1, `${row.fate}: one line\n${shown.join("\n")}`);
			for (const words of row.shows) assert.match(shown[0] ?? "", words, row.fate);
			assert.ok(!(shown[0] ?? "").includes("\u001b"), `${row.fate}: no escape character shown`);
		}
		if (!others) return;
		// Answers that are not this editor's, or not for a send it made: nothing shown.
		const id = await sendOne(editor, file, previous);
		const seen = (await editor.notices()).length;
		for (const sent of [
			{ editor_pid: editor.session.pid + 1, id, fate: "draft" },
			{ editor_pid: editor.session.pid, id: `${id}-not-mine`, fate: "draft" },
		]) {
			await connectPi(editor, pi.pid, { seq: ++seq, sent });
			assert.deepEqual(await newNotices(editor, seen, "", true), [], JSON.stringify(sent));
		}
		// Positive control: the right answer is shown, once, however often pi's message says it again.
		for (let i = 0; i < 3; i++)
			await connectPi(editor, pi.pid, { seq: ++seq, sent: { editor_pid: editor.session.pid, id, fate: "draft" } });
		const shown = await newNotices(editor, seen, "the right answer shown");
		await quietPeriod();
		assert.equal((await editor.notices()).slice(seen).length, 1, shown.join("\n"));
	} finally {
		await pi.kill();
	}
}

export const cases: KitCase[] = [
	{
		name: "send to pi: the request an editor writes (no pi: nothing written, one notice; then each form, valid for pi)",
		ownEditors: true,
		needs: ["send"],
		run: (kit) => sendEachForm(kit, ROWS),
	},
	{
		name: "send to pi: pi's answer shown in one line for each fate: draft, prompt, follow-up, excluded",
		ownEditors: true,
		needs: ["send"],
		run: (kit) => answersShown(kit, FATES.slice(0, 4), false),
	},
	{
		name: "send to pi: pi's refusal shown in one line with its reason, inert; an unknown fate as a refusal naming it; another editor's or another send's answer not shown",
		ownEditors: true,
		needs: ["send"],
		run: (kit) => answersShown(kit, FATES.slice(4), true),
	},
	{
		name: "send to pi: the diagnostic under the cursor, with its message",
		ownEditors: true,
		needs: ["send", "diagnostics"],
		run: (kit) => sendEachForm(kit, [DIAGNOSTIC_ROW]),
	},
	{
		name: "send to pi: a line past the cap is cut at 256 KiB encoded, with truncated",
		ownEditors: true,
		needs: ["send"],
		run: async (kit) => {
			const editor = await kit.start();
			// Quotes take two bytes each once encoded: the raw line fits twice over, the encoded one does not.
			const long = `${'"'.repeat(MAX_SELECTION_TEXT_BYTES / 2 + 100)}`;
			const file = editor.file("long.txt", `${long}\nshort\n`);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "long.txt open");
			const pi = await spawnLiveEditor();
			try {
				await connectPi(editor, pi.pid);
				await editor.session.moveCursor({ line: 1, column: 1 });
				await editor.session.sendToPi?.(file, { mode: "draft", prompt: "" });
				const request = await pollUntil(() => readSend(editor, undefined), "the send file", WRITE_WAIT_MS);
				assert.equal(request.item.truncated, true);
				const encoded = JSON.stringify(request.item.text).length - 2;
				assert.ok(encoded <= MAX_SELECTION_TEXT_BYTES, `encoded ${encoded} bytes`);
				assert.ok(encoded > MAX_SELECTION_TEXT_BYTES - 8, `cut at the cap, not before: ${encoded}`);
			} finally {
				await pi.kill();
			}
		},
	},
];
