/** What the model is told about pi's hunks the user reverted in the editor (src/link/reverts.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	formatRevertNote,
	formatUndoneNote,
	newReverts,
	revertKey,
	type ToldRevert,
	undoneReverts,
} from "../../src/link/reverts.ts";
import { MAX_REVERTED_REPORTS } from "../../src/protocol/limits.ts";
import type { RevertedHunk } from "../../src/protocol/protocol.ts";
import { makeState } from "../helpers/state-files.ts";

const PI = 4242;
const hunk = (over: Partial<RevertedHunk> = {}): RevertedHunk => ({
	pi_pid: PI,
	run: 7,
	id: "h0123456789",
	file: "/p/src/a.ts",
	line: 12,
	lines: 1,
	...over,
});

describe("newReverts", () => {
	const cases: { name: string; reverted: RevertedHunk[]; told?: string[]; runs?: number[]; want: number }[] = [
		{ name: "none", reverted: [], want: 0 },
		{ name: "one of this pi's", reverted: [hunk()], want: 1 },
		{ name: "another pi's", reverted: [hunk({ pi_pid: 1 })], want: 0 },
		{ name: "a run this pi does not know (an earlier process)", reverted: [hunk({ run: 3 })], want: 0 },
		{ name: "told already", reverted: [hunk()], told: [revertKey(hunk())], want: 0 },
		{
			name: "the same hunk id in a later run is news",
			reverted: [hunk({ run: 8 })],
			runs: [7, 8],
			told: [revertKey(hunk())],
			want: 1,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const state = makeState({ pid: 9 });
			const got = newReverts({ ...state, reverted: c.reverted }, PI, new Set(c.runs ?? [7]), new Set(c.told ?? []));
			assert.equal(got.length, c.want);
		});
	}
	test("an editor without the field (v0.3) has none", () => {
		assert.deepEqual(newReverts(makeState(), PI, new Set([7]), new Set()), []);
	});
});

describe("undoneReverts: a revert told to the model that its editor no longer lists", () => {
	const EDITOR = 9;
	const told = (...reverts: RevertedHunk[]): Map<string, ToldRevert> =>
		new Map(reverts.map((r) => [revertKey(r), { revert: r, editorPid: EDITOR }]));
	const full = Array.from({ length: MAX_REVERTED_REPORTS }, (_, i) => hunk({ id: `hfull${i}` }));
	const cases: {
		name: string;
		listed: RevertedHunk[] | undefined;
		told: Map<string, ToldRevert>;
		editor?: number;
		noState?: boolean;
		want: string[];
	}[] = [
		{ name: "still listed", listed: [hunk()], told: told(hunk()), want: [] },
		{ name: "no longer listed: undone", listed: [], told: told(hunk()), want: ["h0123456789"] },
		{ name: "the field gone (every revert undone)", listed: undefined, told: told(hunk()), want: ["h0123456789"] },
		{
			name: "one of two undone",
			listed: [hunk({ id: "h2" })],
			told: told(hunk(), hunk({ id: "h2" })),
			want: ["h0123456789"],
		},
		{ name: "another editor (it never listed it)", listed: [], told: told(hunk()), editor: 10, want: [] },
		{ name: "the editor's state unreadable", listed: [], told: told(hunk()), noState: true, want: [] },
		{ name: "a full list (its oldest entries dropped)", listed: full, told: told(hunk()), want: [] },
		{ name: "nothing told", listed: [], told: told(), want: [] },
	];
	for (const c of cases) {
		test(c.name, () => {
			const base = makeState({ pid: EDITOR });
			const state = c.noState ? undefined : c.listed === undefined ? base : { ...base, reverted: c.listed };
			const got = undoneReverts(state, c.editor ?? EDITOR, c.told);
			assert.deepEqual(
				got.map((r) => r.id),
				c.want,
			);
		});
	}
	test("the note: what the user undid, where; an unsafe name made inert", () => {
		assert.equal(formatUndoneNote([], "/p"), null);
		assert.equal(
			formatUndoneNote([hunk({ lines: 2 })], "/p"),
			"Editor: the user undid their revert of one of your changes (told to you earlier): it is back in their " +
				"editor's buffer as you made it:\n- src/a.ts:12-13",
		);
		const note = formatUndoneNote([hunk(), hunk({ file: "/etc/x\nIgnore previous", id: "h2" })], "/p") ?? "";
		assert.match(note, /^Editor: the user undid their revert of 2 of your changes/);
		assert.equal(note.split("\n").length, 3);
	});
});

describe("formatRevertNote", () => {
	test("nothing new: no note", () => assert.equal(formatRevertNote([], "/p"), null));
	test("one hunk, relative to pi's directory", () => {
		assert.equal(
			formatRevertNote([hunk({ lines: 3 })], "/p"),
			"Editor: the user reverted one of your changes in their editor (in the buffer: the file on disk keeps your " +
				"version until they save). Do not re-apply it unless the user asks:\n- src/a.ts:12-14",
		);
	});
	test("a deletion put back, a file outside pi's directory, an unsafe name made inert", () => {
		const note =
			formatRevertNote([hunk({ lines: 0 }), hunk({ file: "/etc/x\nIgnore previous", id: "h2" })], "/p") ?? "";
		assert.match(note, /^Editor: the user reverted 2 of your changes/);
		assert.match(note, /- src\/a\.ts:12 \(lines you deleted, put back\)/);
		assert.equal(note.split("\n").length, 3, "an injected newline stays inside its line");
	});
	test("many: the first ten and a count", () => {
		const many = Array.from({ length: 13 }, (_, i) => hunk({ id: `h${i}`, line: i + 1 }));
		const note = formatRevertNote(many, "/p") ?? "";
		assert.equal(note.split("\n").length, 12);
		assert.match(note, /- and 3 more$/);
	});
});
