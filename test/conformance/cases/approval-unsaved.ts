/**
 * Issue 26 item 6, approval against what the user sees (PROTOCOL.md "Approval (optional, off by default)", its v0.5
 * refinement "The proposal and an unsaved buffer"): when the proposal's file is open with unsaved changes, the
 * editor shows the proposal against the buffer. The user's changes are the line diff disk -> buffer; a proposed
 * hunk that touches none of them (the merge's "touches" rule) is marked where the merge would place it (moved by
 * the user's line-count changes above it); one that touches the user's lines is marked on those lines, and the
 * request's arrival notice names them in one line ("1 of 2 hunks touches your unsaved line 12 ...").
 *
 * The user's unsaved edit is `setLines` without a save; pi's request is built by pi's own code
 * (src/link/approval.ts) from the file on disk, as pi builds it.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildRequest, encodeApprovalMessage } from "../../../src/link/approval.ts";
import type { ApprovalMessage } from "../../../src/protocol/wire.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import { type Editor, type Kit, type KitCase, linesOf, nowSeconds, quietPeriod, WRITE_WAIT_MS } from "../kit.ts";

const DISK = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;
const replaced = (lines: string[], at: number, line: string) => lines.map((l, i) => (i === at - 1 ? line : l));

/**
 * The user's unsaved buffer: two lines inserted after line 2 (every line below moves down 2) and line 10 changed
 * (buffer line 12).
 */
const BUFFER = [...DISK.slice(0, 2), "user a", "user b", ...replaced(DISK, 10, "user ten").slice(2)];
/** pi's proposals, from the file on disk: line 15 only (touches nothing of the user's), and lines 10 and 15. */
const AWAY = replaced(DISK, 15, "pi fifteen");
const BOTH = replaced(AWAY, 10, "pi ten");
/** Where the merge places disk line 15 in the buffer (2 lines inserted above it), and the user's line 12. */
const PLACED = 17;
const USER_LINE = 12;

interface Setup {
	editor: Editor;
	file: string;
	pi: number;
	kill: () => Promise<void>;
}

/** An editor with `a.txt` open, the user's unsaved edit made (not saved), and a live pi to ask it. */
async function setUp(kit: Kit): Promise<Setup> {
	const editor = await kit.start({ file: { name: "a.txt", text: text(DISK) } });
	const file = join(editor.project, "a.txt");
	await editor.until((s) => Array.isArray((s as { decisions?: unknown }).decisions), "`decisions` in the state file");
	await editor.session.setLines(file, BUFFER);
	await pollUntil(
		async () => ((await editor.session.buffer(file))?.modified ? true : undefined),
		"a.txt has the user's unsaved edit",
	);
	const live = await spawnLiveEditor();
	return { editor, file, pi: live.pid, kill: live.kill };
}

/** pi asks the editor about changing `file` from the disk's text to `after` (its request `id`). */
function ask({ editor, file, pi }: Setup, id: string, after: string[]): void {
	const now = nowSeconds();
	const message: ApprovalMessage = {
		protocol: "0.4",
		kind: "pi-approval",
		pid: pi,
		editor_pid: editor.session.pid,
		timestamp: now,
		request: buildRequest({
			id,
			tool: "edit",
			file,
			before: { kind: "text", text: text(DISK) },
			after: text(after),
			timeoutS: 120,
			now,
		}),
	};
	writeRawStateFile(editor.stateDir, `pi-${pi}.approval.json`, encodeApprovalMessage(message));
}

const end = ({ editor, pi }: Setup) => rmSync(join(editor.stateDir, `pi-${pi}.approval.json`), { force: true });

const arrivals = (editor: Editor): Promise<string[]> => editor.session.approvalNotices?.() ?? editor.notices();

/** The notices that came after `before` of them, once there is one. */
async function announced(editor: Editor, before: number, what: string): Promise<string> {
	let last: string[] = [];
	const told = await pollUntil(
		async () => {
			last = await arrivals(editor);
			return last.length > before ? last.slice(before) : undefined;
		},
		() => `${what} is announced; notices: ${JSON.stringify(last.slice(-5))}`,
		WRITE_WAIT_MS,
	);
	return told.join("\n");
}

/** The buffer and the file are what they were: the user's unsaved text, the disk's. */
async function untouched({ editor, file }: Setup, what: string): Promise<void> {
	assert.deepEqual(await editor.session.buffer(file), { text: text(BUFFER), modified: true }, `${what}: buffer`);
	assert.equal(readFileSync(file, "utf8"), text(DISK), `${what}: the file on disk`);
}

export const cases: KitCase[] = [
	{
		name: "approval: the proposal shown against the user's unsaved buffer: the arrival notice names the user's unsaved lines a proposed hunk touches (1 of 2 hunks), and says nothing of them when none is touched",
		// "merge": the proposal is placed by the merge's rule; a client without the merge (JetBrains) has no placement.
		ownEditors: true,
		needs: ["approval", "unsaved-buffers", "merge"],
		run: async (kit) => {
			const setup = await setUp(kit);
			const { editor } = setup;
			try {
				let before = (await arrivals(editor)).length;
				ask(setup, "kit-away", AWAY);
				const away = await announced(editor, before, "the proposal that touches nothing of the user's");
				assert.doesNotMatch(away, /unsaved/i, `no hunk touches the user's lines: ${away}`);
				end(setup);
				await quietPeriod();
				before = (await arrivals(editor)).length;
				ask(setup, "kit-both", BOTH);
				const both = await announced(editor, before, "the proposal touching the user's line");
				assert.match(both, /\b1 of 2\b/, `the notice counts the touching hunks: ${both}`);
				assert.match(both, /unsaved/i, `the notice says the lines are the user's unsaved ones: ${both}`);
				assert.match(both, new RegExp(`\\bline ${USER_LINE}\\b`), `the buffer's line ${USER_LINE}: ${both}`);
				await untouched(setup, "after the notices");
			} finally {
				end(setup);
				await setup.kill();
			}
		},
	},
	{
		name: "approval: the proposal shown against the user's unsaved buffer: a hunk away from the user's lines is marked where the merge would place it, one touching them on the user's lines; the buffer and the file are untouched",
		ownEditors: true,
		needs: ["approval", "approval-marks", "unsaved-buffers", "merge"],
		run: async (kit) => {
			const setup = await setUp(kit);
			const { editor, file } = setup;
			const read = editor.session.approvalMarks;
			if (!read) throw new Error('the adapter has capability "approval-marks" but no approvalMarks()');
			const marked = async () =>
				[...new Set((await read.call(editor.session, file)).map((m) => m.line))].sort((a, b) => a - b);
			try {
				ask(setup, "kit-marks", BOTH);
				let last: number[] = [];
				await pollUntil(
					async () => {
						last = await marked();
						return last.length > 0 ? true : undefined;
					},
					() => `the proposal is marked in a.txt; marked lines: ${JSON.stringify(last)}`,
					WRITE_WAIT_MS,
				);
				await quietPeriod();
				const lines = await marked();
				// Disk line 10 is the user's unsaved line 12 (a conflict, marked there); disk line 15 is buffer line 17.
				assert.deepEqual(
					lines,
					[USER_LINE, PLACED],
					`marks on the user's line ${USER_LINE} and on line ${PLACED} (disk line 15, moved by the user's 2 lines above), not at the disk's 10 and 15: ${JSON.stringify(lines)}`,
				);
				assert.equal(linesOf(text(BUFFER))[PLACED - 1], "line 15");
				await untouched(setup, "with the marks");
			} finally {
				end(setup);
				await setup.kill();
			}
		},
	},
];
