/**
 * Protocol v0.4, pi's change set and reverts (PROTOCOL.md "v0.4: pi's change set, for review in the editor",
 * "Limits"): a live "pi" writes `pi-<pid>.review.json` as pi does (built by pi's own code, src/link/change-set.ts)
 * and then the `pi-<pid>.json` that announces the change. The client marks only the valid hunks of the newest
 * run on pi's lines, keeps them there across the user's edits above, refuses a change set over a cap (500 hunks
 * in a file, 3 runs, nesting past 16 levels) with one notice, reverts an intact hunk in the buffer only, refuses
 * one the user changed or deleted, and lists in `reverted` the reverts that hold, each with pi's revert key
 * (pi_pid, run, id). Every case ends with a positive control in the same editor.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { ChangeSet, encodeReviewMessage } from "../../../src/link/change-set.ts";
import { MAX_PI_FILE_DEPTH, MAX_REVIEW_HUNKS_PER_FILE, MAX_REVIEW_RUNS } from "../../../src/protocol/limits.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import type { ReviewRun } from "../../../src/protocol/wire.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import { activeFile, type Editor, type Kit, type KitCase, nowSeconds, quietPeriod } from "../kit.ts";

/** The baseline of every case's file, and pi's version: lines 2 and 4 changed, 7 added (no deletion). */
const BASELINE = "a\nb\nc\nd\ne\nf\n";
const PIS = "a\nB\nc\nD\ne\nf\nG\n";
const PIS_LINES = [2, 4, 7];

interface Reverted {
	pi_pid: number;
	run: number;
	id: string;
	file: string;
	line: number;
	lines: number;
}

/** One pi talking to one editor about one file of its own. */
interface Pi {
	pid: number;
	file: string;
	seq: number;
}

/** pi's change set of one run (or of `runs`, oldest first) over `file`. */
function runsOf(edits: { file: string; before: string; after: string; seq: number }[][]): ReviewRun[] {
	const set = new ChangeSet();
	for (const run of edits) {
		set.startRun();
		for (const { file, before, seq } of run) set.before(file, { kind: "text", text: before }, seq);
		for (const { file, after } of run) set.after(file, { kind: "text", text: after });
	}
	return set.runs();
}

function reviewText(editor: Editor, pi: Pi, runs: unknown): string {
	return encodeReviewMessage({
		protocol: "0.4",
		kind: "pi-review",
		pid: pi.pid,
		editor_pid: editor.session.pid,
		timestamp: nowSeconds(),
		runs: runs as ReviewRun[],
	}).toString();
}

/** pi's message announcing a change of its file (seq `pi.seq`), written after its change set, as pi does. */
function announce(editor: Editor, pi: Pi): void {
	const message = makePiMessage({
		pid: pi.pid,
		cwd: editor.project,
		timestamp: nowSeconds(),
		editor_pid: editor.session.pid,
		seq: pi.seq,
		changed: pi.seq === 0 ? [] : [{ file: pi.file, seq: pi.seq, tool: "write" }],
		last_turn: pi.seq === 0 ? [] : [pi.file],
	});
	writeRawStateFile(editor.stateDir, `pi-${pi.pid}.json`, JSON.stringify(message));
}

/**
 * A live pi, connected to `editor` (its first message handled), and `name` open in the editor with the
 * baseline; the pi is killed after the case.
 */
async function piAndFile(editor: Editor, name: string, cleanups: (() => Promise<void>)[]): Promise<Pi> {
	const live = await spawnLiveEditor();
	cleanups.push(live.kill);
	const file = editor.file(name, BASELINE);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	const pi: Pi = { pid: live.pid, file, seq: 0 };
	announce(editor, pi);
	await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === 0, "pi's first message is handled");
	return pi;
}

/** pi writes its version of its file, then `review` (its change set, as text), then the message; handled. */
async function piChanges(editor: Editor, pi: Pi, review: string, text = PIS): Promise<void> {
	writeFileSync(pi.file, text);
	pi.seq++;
	writeRawStateFile(editor.stateDir, `pi-${pi.pid}.review.json`, review);
	announce(editor, pi);
	await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === pi.seq, `pi's message ${pi.seq} is handled`);
	await pollUntil(
		async () => ((await editor.session.buffer(pi.file))?.text === text ? true : undefined),
		"the buffer shows pi's version",
	);
}

/** The good change set of one run: baseline -> pi's version, its first change at `seq`. */
const goodRuns = (pi: Pi, seq = 1) => runsOf([[{ file: pi.file, before: BASELINE, after: PIS, seq }]]);

const marks = (editor: Editor, file: string) => {
	const read = editor.session.reviewMarks;
	if (!read) throw new Error("the adapter has capability review but no reviewMarks");
	return read.call(editor.session, file);
};

/** Poll the marks of `file` until they are `want`. */
async function untilMarks(editor: Editor, file: string, want: number[], what: string): Promise<void> {
	let last: number[] = [];
	await pollUntil(
		async () => {
			last = await marks(editor, file);
			return JSON.stringify(last) === JSON.stringify(want) ? true : undefined;
		},
		() => `${what}: marks ${JSON.stringify(want)}, last ${JSON.stringify(last)}`,
	);
}

const revertedOf = (state: EditorState | null, pi: Pi): Reverted[] =>
	(((state as { reverted?: Reverted[] } | null)?.reverted ?? []) as Reverted[]).filter((r) => r.pi_pid === pi.pid);

async function withPi(kit: Kit, name: string, body: (editor: Editor, pi: Pi) => Promise<void>): Promise<void> {
	const editor = await kit.shared();
	const cleanups: (() => Promise<void>)[] = [];
	try {
		const pi = await piAndFile(editor, name, cleanups);
		await body(editor, pi);
	} finally {
		for (const cleanup of cleanups) await cleanup();
	}
}

/** The session's review methods, which capability "review" promises. */
function review(editor: Editor) {
	const { editLines, revertHunk, undo } = editor.session;
	if (!editLines || !revertHunk || !undo) throw new Error("the adapter has capability review but not its methods");
	return {
		edit: (file: string, line: number, remove: number, insert: string[]) =>
			editLines.call(editor.session, file, line, remove, insert),
		revert: (file: string, line: number) => revertHunk.call(editor.session, file, line),
		undo: (file: string) => undo.call(editor.session, file),
	};
}

/** Ways a hunk is malformed (PROTOCOL.md `hunks[]`, "Limits"), each of which every reader drops. */
const MALFORMED: [string, (hunk: Record<string, unknown>) => Record<string, unknown>][] = [
	["old_start 1.5", (h) => ({ ...h, old_start: 1.5 })],
	["new_start -1", (h) => ({ ...h, new_start: -1 })],
	["new_start 2^53", (h) => ({ ...h, new_start: 2 ** 53 })],
	["new_start a string", (h) => ({ ...h, new_start: "4" })],
	["id not a string", (h) => ({ ...h, id: 7 })],
	["id over 64 characters", (h) => ({ ...h, id: `h${"0".repeat(64)}` })],
	["an empty id", (h) => ({ ...h, id: "" })],
	["id of 33 characters but 65 UTF-8 bytes", (h) => ({ ...h, id: `h${"é".repeat(32)}` })],
	["new_start 0", (h) => ({ ...h, new_start: 0 })],
	["old_start 0", (h) => ({ ...h, old_start: 0 })],
	["new_text not a list", (h) => ({ ...h, new_text: "D" })],
	["old_text holding a number", (h) => ({ ...h, old_text: [4] })],
	["no new_start", ({ new_start: _, ...h }) => h],
];

/** Change sets a client refuses whole (PROTOCOL.md "Limits"), by their counts or depth, before any work per hunk. */
const REFUSED: [string, (pi: Pi) => unknown][] = [
	[
		`${MAX_REVIEW_HUNKS_PER_FILE + 1} hunks in a file`,
		(pi) =>
			goodRuns(pi).map((run) => ({
				...run,
				files: [
					...run.files,
					{
						file: `${pi.file}.other`,
						baseline: "x\n",
						note: null,
						hunks_total: MAX_REVIEW_HUNKS_PER_FILE + 1,
						hunks: Array.from({ length: MAX_REVIEW_HUNKS_PER_FILE + 1 }, () => run.files[0]?.hunks[0]),
					},
				],
			})),
	],
	[
		`${MAX_REVIEW_RUNS + 1} runs`,
		(pi) => [
			...Array.from({ length: MAX_REVIEW_RUNS }, (_, i) => ({ run: i + 1, files: [] })),
			...goodRuns(pi, MAX_REVIEW_RUNS + 1),
		],
	],
	[
		`nested ${MAX_PI_FILE_DEPTH + 4} levels deep`,
		(pi) =>
			goodRuns(pi).map((run) => ({
				...run,
				files: run.files.map((f) => ({
					...f,
					extra: JSON.parse(`${"[".repeat(MAX_PI_FILE_DEPTH)}${"]".repeat(MAX_PI_FILE_DEPTH)}`),
				})),
			})),
	],
];

export const cases: KitCase[] = [
	{
		name: `review / change set: only the valid hunks are marked (${MALFORMED.map(([n]) => n).join(", ")} dropped)`,
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "valid-hunks.txt", async (editor, pi) => {
				const runs = goodRuns(pi);
				const file = runs[0]?.files[0];
				assert.ok(file && file.hunks.length === 3, "pi's change set has three hunks");
				// pi's hunk at line 4 comes only malformed, in each way; those at 2 and 7 are valid.
				const [two, four, seven] = file.hunks;
				const spoilt = MALFORMED.map(([, spoil]) => spoil(four as unknown as Record<string, unknown>));
				const mixed = [{ ...runs[0], files: [{ ...file, hunks: [two, ...spoilt, seven] }] }];
				await piChanges(editor, pi, reviewText(editor, pi, mixed));
				await untilMarks(editor, pi.file, [2, 7], "only the valid hunks");
				// Positive control: the same hunk well formed is marked.
				await piChanges(editor, pi, reviewText(editor, pi, runs));
				await untilMarks(editor, pi.file, PIS_LINES, "the well-formed change set");
			}),
	},
	{
		// PROTOCOL.md `files[].note`: one of three; any other makes the entry malformed (the editor never shows a
		// string from a file it does not know), dropped as a malformed hunk is, never the other files.
		name: "change set: a file entry with an unknown note is dropped; the other files are marked",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "unknown-note.txt", async (editor, pi) => {
				const other = editor.file("unknown-note-other.txt", PIS);
				await editor.session.open(other);
				await editor.until((s) => activeFile(s) === other, "the other file open");
				await editor.session.open(pi.file);
				await editor.until((s) => activeFile(s) === pi.file, "pi's file active again");
				const runs = runsOf([
					[
						{ file: pi.file, before: BASELINE, after: PIS, seq: 1 },
						{ file: other, before: BASELINE, after: PIS, seq: 1 },
					],
				]);
				const [mine, others] = runs[0]?.files ?? [];
				assert.ok(mine && others && mine.hunks.length === 3, "pi's change set has both files");
				const noted = [{ ...runs[0], files: [{ ...mine, note: "huge" }, others] }];
				await piChanges(editor, pi, reviewText(editor, pi, noted));
				// Each file looked at in turn, as the user would (a GUI editor draws marks in the editors in view).
				await editor.session.open(other);
				await untilMarks(editor, other, PIS_LINES, "the other file's entry");
				await editor.session.open(pi.file);
				await editor.until((s) => activeFile(s) === pi.file, "pi's file active again");
				await quietPeriod();
				assert.deepEqual(await marks(editor, pi.file), [], "the entry with an unknown note is dropped");
				// Positive control: the same entry without the note is marked.
				await piChanges(editor, pi, reviewText(editor, pi, runs));
				await untilMarks(editor, pi.file, PIS_LINES, "the entry without the note");
			}),
	},
	{
		name: "review / change set: the newest run is the one marked (a file changed in two runs)",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "newest-run.txt", async (editor, pi) => {
				// Run 1 changed line 2; run 5 changed line 4 of what run 1 left: only line 4 is pi's newest change.
				const first = "a\nB\nc\nd\ne\nf\n";
				const newest = "a\nB\nc\nD\ne\nf\n";
				const runs = runsOf([
					[{ file: pi.file, before: BASELINE, after: first, seq: 1 }],
					[{ file: pi.file, before: first, after: newest, seq: 5 }],
				]);
				assert.deepEqual(
					runs.map((r) => r.run),
					[1, 5],
				);
				await piChanges(editor, pi, reviewText(editor, pi, runs), newest);
				await untilMarks(editor, pi.file, [4], "the newest run's hunk only");
			}),
	},
	{
		// pi writes its change set before the message of its edit, and a client reads it after each message: one
		// busy past pi's answer wait reads the next run's change set after an earlier message, before that run's edit
		// reached the buffer (issue 24: Vim's marks never came under the suite's load).
		name: "review / change set read before the message of its edit (the buffer still the text before it): the marks come with the reload",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "early-change-set.txt", async (editor, pi) => {
				const first = "a\nB\nc\nd\ne\nf\n";
				const runs = runsOf([
					[{ file: pi.file, before: BASELINE, after: first, seq: 1 }],
					[{ file: pi.file, before: first, after: PIS, seq: 2 }],
				]);
				await piChanges(editor, pi, reviewText(editor, pi, runs.slice(0, 1)), first);
				await untilMarks(editor, pi.file, [2], "run 1's hunk");
				// Run 2's change set, then a message announcing nothing new (pi's end of run 1, read late).
				writeRawStateFile(editor.stateDir, `pi-${pi.pid}.review.json`, reviewText(editor, pi, runs));
				announce(editor, pi);
				await untilMarks(editor, pi.file, [], "run 2's hunks stand nowhere yet, run 1's are not the newest");
				// Run 2's edit and its message; the change set is not written again.
				writeFileSync(pi.file, PIS);
				pi.seq++;
				announce(editor, pi);
				await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === pi.seq, "run 2's message is handled");
				await untilMarks(editor, pi.file, [4, 7], "run 2's hunks, once its edit is in the buffer");
			}),
	},
	...REFUSED.map(
		([name, runsFor]): KitCase => ({
			name: `review / change set: refused whole, with one notice: ${name}`,
			needs: ["review"],
			run: (kit) =>
				withPi(kit, `refused-${name.replace(/\W+/g, "-")}.txt`, async (editor, pi) => {
					const before = (await editor.notices()).length;
					await piChanges(editor, pi, reviewText(editor, pi, runsFor(pi)));
					await quietPeriod();
					assert.deepEqual(await marks(editor, pi.file), [], "nothing of a refused change set is marked");
					const notices = (await editor.notices()).slice(before);
					assert.equal(notices.length, 1, `one notice: ${JSON.stringify(notices)}`);
					// Positive control: the good change set after it is marked.
					await piChanges(editor, pi, reviewText(editor, pi, goodRuns(pi, 2)));
					await untilMarks(editor, pi.file, PIS_LINES, "a good change set after a refused one");
				}),
		}),
	),
	{
		name: "review / marks: on pi's lines, and moved with them when the user inserts lines above or edits another line",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "marks-kept.txt", async (editor, pi) => {
				const { edit } = review(editor);
				await piChanges(editor, pi, reviewText(editor, pi, goodRuns(pi)));
				await untilMarks(editor, pi.file, PIS_LINES, "pi's lines");
				await edit(pi.file, 1, 0, ["mine 1", "mine 2"]);
				await untilMarks(editor, pi.file, [4, 6, 9], "two lines inserted above: the marks move down two");
				await edit(pi.file, 5, 1, ["c, mine"]);
				await untilMarks(editor, pi.file, [4, 6, 9], "a line between pi's edited: the marks stay");
				await edit(pi.file, 1, 1, []);
				await untilMarks(editor, pi.file, [3, 5, 8], "a line above deleted: the marks move up one");
			}),
	},
	{
		name: "review / revert: refused on a hunk the user changed or deleted (the buffer unchanged, nothing listed)",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "revert-refused.txt", async (editor, pi) => {
				const { edit, revert } = review(editor);
				await piChanges(editor, pi, reviewText(editor, pi, goodRuns(pi)));
				await untilMarks(editor, pi.file, PIS_LINES, "pi's lines");
				// The user changes pi's line 2 and deletes pi's line 4 (then "d"... gone: line 4 is "e").
				await edit(pi.file, 2, 1, ["B, mine"]);
				await edit(pi.file, 4, 1, []);
				const edited = "a\nB, mine\nc\ne\nf\nG\n";
				for (const line of [2, 4]) {
					await revert(pi.file, line);
					await quietPeriod();
					assert.equal((await editor.session.buffer(pi.file))?.text, edited, `revert at line ${line}: refused`);
					assert.deepEqual(revertedOf(editor.readState(), pi), [], `revert at line ${line}: nothing listed`);
				}
				// Positive control: pi's intact hunk (G, now line 6) reverts, and is the one listed.
				await revert(pi.file, 6);
				await pollUntil(
					async () => ((await editor.session.buffer(pi.file))?.text === "a\nB, mine\nc\ne\nf\n" ? true : undefined),
					"the intact hunk reverted",
				);
				await editor.until((s) => revertedOf(s, pi).length === 1, "the intact hunk's revert is listed");
			}),
	},
	{
		name: "review / revert: an intact hunk's baseline goes back in the buffer (not on disk); `reverted` carries pi's key (pi_pid, run, id); an undo takes it off the list",
		needs: ["review"],
		run: (kit) =>
			withPi(kit, "revert-intact.txt", async (editor, pi) => {
				const { revert, undo } = review(editor);
				const runs = goodRuns(pi, 3);
				await piChanges(editor, pi, reviewText(editor, pi, runs));
				await untilMarks(editor, pi.file, PIS_LINES, "pi's lines");
				await revert(pi.file, 4);
				const reverted = "a\nB\nc\nd\ne\nf\nG\n";
				await pollUntil(
					async () => ((await editor.session.buffer(pi.file))?.text === reverted ? true : undefined),
					"the baseline's line 4 back in the buffer",
				);
				assert.equal((await editor.session.buffer(pi.file))?.modified, true, "the buffer is modified");
				assert.equal(readFileSync(pi.file, "utf8"), PIS, "the disk keeps pi's version");
				const state = await editor.until((s) => revertedOf(s, pi).length === 1, "the revert is listed");
				const hunk = runs[0]?.files[0]?.hunks[1];
				assert.deepEqual(revertedOf(state, pi), [
					{ pi_pid: pi.pid, run: 3, id: hunk?.id, file: pi.file, line: 4, lines: 1 },
				]);
				await untilMarks(editor, pi.file, [2, 7], "the reverted hunk is no longer marked");
				await undo(pi.file);
				await pollUntil(
					async () => ((await editor.session.buffer(pi.file))?.text === PIS ? true : undefined),
					"the undo brings pi's line back",
				);
				await editor.until((s) => revertedOf(s, pi).length === 0, "an undone revert leaves `reverted`");
				await untilMarks(editor, pi.file, PIS_LINES, "pi's hunk marked again");
			}),
	},
];
