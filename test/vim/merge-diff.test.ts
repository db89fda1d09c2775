/**
 * Vim's windowed line diff (pi_ide/merge.vim Diff: the user's changes in a merge of pi's change into an unsaved
 * buffer, issue 26), in real Vim 9 (`vim -es`), on the seeded long line lists of
 * test/fixtures/windowed-diff-cases.ts: with unique lines exactly the edits made, with repeated lines a true diff
 * (ascending, apart, turning the old lines into the new). `PI_IDE_SEEDS=<n>` runs more cases (default 40 of each).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { type Change, checkDiff, windowedCase } from "../fixtures/windowed-diff-cases.ts";
import { runVimRules } from "../helpers/vim.ts";

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 40);

const DIFF_ALL = `import autoload 'pi_ide/merge.vim'
var out = {changes: mapnew(c, (_, x) => mapnew(merge.Diff(x.a, x.b),
  (_, r) => ({a: r.a, aEnd: r.a_end, b: r.b, bEnd: r.b_end})))}`;

for (const kind of ["unique", "repeats"] as const) {
	it(`Vim's Diff: ${SEEDS} seeded ${kind === "unique" ? "lists of unique lines: exactly the edits made" : "lists with repeated lines: a true diff"}`, (t) => {
		const cases = Array.from({ length: SEEDS }, (_, i) => windowedCase(i + 1, kind));
		const { changes } = runVimRules<{ changes: Change[][] }>(
			t,
			cases.map((c) => ({ a: c.a, b: c.b })),
			DIFF_ALL,
		);
		for (const [i, c] of cases.entries()) {
			const got = changes[i] as Change[];
			if (c.expected) assert.deepEqual(got, c.expected, `seed ${c.seed}`);
			else assert.deepEqual(checkDiff(c.a, c.b, got), [], `seed ${c.seed}`);
		}
	});
}
