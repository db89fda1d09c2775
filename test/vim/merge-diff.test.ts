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

// A merge diffs with `stop` (none past pi's last hunk) and `own` (the lists taken apart as it goes, no copies of
// their strings): the changes must be Diff's own, a prefix of them holding every change that starts at or before
// a[stop] (each case stops at its middle change's start, and at its first).
const DIFF_OWN_STOP = `import autoload 'pi_ide/merge.vim'
def Ranges(rs: list<dict<number>>): list<dict<number>>
  return mapnew(rs, (_, r) => ({a: r.a, aEnd: r.a_end, b: r.b, bEnd: r.b_end}))
enddef
var out = {cases: mapnew(c, (_, x) => {
  var all = merge.Diff(x.a, x.b)
  var stops = empty(all) ? [0] : [all[len(all) / 2].a, all[0].a]
  return {all: Ranges(all), own: Ranges(merge.Diff(copy(x.a), copy(x.b), -1, true)), stops: stops,
    stopped: mapnew(stops, (_, s) => Ranges(merge.Diff(copy(x.a), copy(x.b), s, true))),
    stopped_kept: mapnew(stops, (_, s) => Ranges(merge.Diff(x.a, x.b, s)))}
})}`;

for (const kind of ["unique", "repeats"] as const) {
	it(`Vim's Diff with own lists and a stop: ${SEEDS} seeded ${kind} cases, the same changes up to the stop`, (t) => {
		const cases = Array.from({ length: SEEDS }, (_, i) => windowedCase(i + 1, kind));
		const { cases: got } = runVimRules<{
			cases: { all: Change[]; own: Change[]; stops: number[]; stopped: Change[][]; stopped_kept: Change[][] }[];
		}>(
			t,
			cases.map((c) => ({ a: c.a, b: c.b })),
			DIFF_OWN_STOP,
		);
		for (const [i, c] of cases.entries()) {
			const g = got[i];
			assert.ok(g, `seed ${c.seed}`);
			assert.deepEqual(g.own, g.all, `seed ${c.seed}: own lists`);
			for (const [k, stop] of g.stops.entries()) {
				for (const stopped of [g.stopped[k] ?? [], g.stopped_kept[k] ?? []]) {
					assert.deepEqual(stopped, g.all.slice(0, stopped.length), `seed ${c.seed}, stop ${stop}: a prefix`);
					assert.deepEqual(
						g.all.filter((r) => r.a <= stop && !stopped.some((s) => s.a === r.a && s.b === r.b)),
						[],
						`seed ${c.seed}, stop ${stop}: every change at or before the stop`,
					);
				}
			}
		}
	});
}
