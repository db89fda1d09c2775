/**
 * Issue 26, pi's change merged into an unsaved buffer (PROTOCOL.md, "v0.5: pi's change merged into an unsaved
 * buffer"): pi's message carries the change's hunks and the hash of what its tool wrote (`changed[].merge`, built
 * here by pi's own code). A client with capability "merge" puts pi's hunks the user's changes do not touch into the
 * modified buffer (it stays modified, the disk keeps exactly pi's text), as one undo step of its own, hidden
 * buffers too, and reports `merged`; where pi's hunk touches the user's lines the buffer keeps them and the report
 * says `conflict` with those lines.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { contentOf, mergeInfo } from "../../../src/link/change-set.ts";
import type { FileReport } from "../../../src/protocol/protocol.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import { activeFile, type Editor, type Kit, type KitCase, linesOf, nowSeconds } from "../kit.ts";

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const TEXT = `${LINES.join("\n")}\n`;
const text = (lines: string[]) => `${lines.join("\n")}\n`;
const replaced = (lines: string[], at: number, line: string) => lines.map((l, i) => (i === at - 1 ? line : l));

interface Pi {
	pid: number;
	seq: number;
}

/** A live pi whose first message (seq 0) the editor handled. */
async function connect(editor: Editor, cleanups: (() => Promise<void>)[]): Promise<Pi> {
	const live = await spawnLiveEditor();
	cleanups.push(live.kill);
	const pi = { pid: live.pid, seq: 0 };
	say(editor, pi, []);
	await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === 0, "pi's first message is handled");
	return pi;
}

function say(editor: Editor, pi: Pi, changed: unknown[]): void {
	const message = makePiMessage({
		pid: pi.pid,
		cwd: editor.project,
		timestamp: nowSeconds(),
		editor_pid: editor.session.pid,
		seq: pi.seq,
		changed: changed as never,
		last_turn: [],
	});
	writeRawStateFile(editor.stateDir, `pi-${pi.pid}.json`, JSON.stringify(message));
}

/** pi's tool writes `after` over `before` in `file`; pi announces it with the merge; returns the editor's report. */
async function piWrites(editor: Editor, pi: Pi, file: string, before: string, after: string): Promise<FileReport> {
	const merge = mergeInfo(contentOf(Buffer.from(before)), contentOf(Buffer.from(after)));
	assert.ok(merge);
	writeFileSync(file, after);
	pi.seq++;
	say(editor, pi, [{ file, seq: pi.seq, tool: "edit", merge }]);
	const state = await editor.until(
		(s) => (s.files ?? []).some((f) => f.file === file && f.seq === pi.seq && f.pi_pid === pi.pid),
		`the report on pi's change ${pi.seq}`,
	);
	const report = state.files?.find((f) => f.file === file && f.seq === pi.seq && f.pi_pid === pi.pid);
	assert.ok(report);
	return report;
}

/** `name` open with the 20 lines, the user's own edit made (its own undo step); returns its path. */
async function userEdited(editor: Editor, name: string, line: number, insert: string[]): Promise<string> {
	const file = editor.file(name, TEXT);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	const edit = editor.session.editLines;
	if (!edit) throw new Error("the adapter has capability merge but no editLines");
	await edit.call(editor.session, file, line, 1, insert);
	await pollUntil(async () => ((await editor.session.buffer(file))?.modified ? true : undefined), `${name} modified`);
	return file;
}

async function bufferLines(editor: Editor, file: string): Promise<{ lines: string[]; modified: boolean }> {
	const b = await editor.session.buffer(file);
	assert.ok(b, `${file} is loaded`);
	return { lines: linesOf(b.text), modified: b.modified };
}

async function withPi(kit: Kit, body: (editor: Editor, pi: Pi) => Promise<void>): Promise<void> {
	const editor = await kit.start();
	const cleanups: (() => Promise<void>)[] = [];
	try {
		await body(editor, await connect(editor, cleanups));
	} finally {
		for (const cleanup of cleanups) await cleanup();
	}
}

export const cases: KitCase[] = [
	{
		name: "merge: pi's hunk away from the user's unsaved lines goes into the buffer, which stays modified",
		ownEditors: true,
		needs: ["merge"],
		run: (kit) =>
			withPi(kit, async (editor, pi) => {
				const file = await userEdited(editor, "merge.txt", 3, ["user three"]);
				const pis = replaced(LINES, 15, "pi fifteen");
				const report = await piWrites(editor, pi, file, TEXT, text(pis));
				assert.equal(report.status, "merged");
				assert.deepEqual(report.merge?.conflicts, []);
				assert.deepEqual(await bufferLines(editor, file), {
					lines: replaced(pis, 3, "user three"),
					modified: true,
				});
				assert.equal(readFileSync(file, "utf8"), text(pis), "the disk has exactly what pi's tool wrote");
			}),
	},
	{
		name: "merge: pi's hunk on the user's unsaved line is a conflict; the buffer keeps the user's text",
		ownEditors: true,
		needs: ["merge"],
		run: (kit) =>
			withPi(kit, async (editor, pi) => {
				const file = await userEdited(editor, "conflict.txt", 3, ["user three", "user more"]);
				const user = await bufferLines(editor, file);
				const pis = replaced(replaced(LINES, 3, "pi three"), 18, "pi eighteen");
				const report = await piWrites(editor, pi, file, TEXT, text(pis));
				assert.equal(report.status, "conflict");
				assert.deepEqual(report.merge?.conflicts, [{ line: 3, lines: 2, text: ["user three", "user more"] }]);
				assert.equal(report.merge?.merged, 1, "pi's other hunk is merged");
				const now = await bufferLines(editor, file);
				assert.deepEqual(now.lines, [...user.lines.slice(0, 18), "pi eighteen", ...user.lines.slice(19)]);
				assert.equal(now.modified, true);
				assert.equal(readFileSync(file, "utf8"), text(pis));
			}),
	},
	{
		name: "merge: one undo takes pi's merged lines out and leaves the user's",
		ownEditors: true,
		needs: ["merge"],
		run: (kit) =>
			withPi(kit, async (editor, pi) => {
				const file = await userEdited(editor, "undo.txt", 3, ["user three"]);
				const user = await bufferLines(editor, file);
				const report = await piWrites(editor, pi, file, TEXT, text(replaced(LINES, 12, "pi twelve")));
				assert.equal(report.status, "merged");
				const undo = editor.session.undo;
				if (!undo) throw new Error("the adapter has capability merge but no undo");
				await undo.call(editor.session, file);
				assert.deepEqual(await bufferLines(editor, file), user, "the user's edit stays, pi's line goes");
			}),
	},
	{
		name: "merge: a modified buffer that is not the current one is merged too",
		ownEditors: true,
		needs: ["merge"],
		run: (kit) =>
			withPi(kit, async (editor, pi) => {
				const file = await userEdited(editor, "hidden.txt", 2, ["user two"]);
				const other = editor.file("other.txt", "other\n");
				await editor.session.open(other);
				await editor.until((s) => activeFile(s) === other, "other.txt is the current buffer");
				const pis = replaced(LINES, 19, "pi nineteen");
				const report = await piWrites(editor, pi, file, TEXT, text(pis));
				assert.equal(report.status, "merged");
				assert.deepEqual(await bufferLines(editor, file), { lines: replaced(pis, 2, "user two"), modified: true });
				assert.equal(activeFile(editor.readState() ?? ({} as never)), other, "the current buffer stays");
			}),
	},
];
