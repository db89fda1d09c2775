/** What the model is told about pi's hunks the user reverted in the editor (src/link/reverts.ts). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatRevertNote, newReverts, revertKey } from "../../src/link/reverts.ts";
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
