/**
 * editors/shared/merge.ts (issue 26, the TypeScript clients' merge of pi's change into an unsaved buffer): the
 * `merge` field's checks, pi's hunks taken back out, line edits as text edits (a last line without a newline), the
 * chain of changes; and a seeded test of the three-way merge against the rule's oracle (test/fixtures/merge-oracle.ts),
 * on cases whose edits are known ranges of the base (test/fixtures/merge-ranges.ts); and the user's changes found by
 * diffing windows only (`diffWindowed`), seeded, on long lists (test/fixtures/windowed-diff-cases.ts).
 * `PI_IDE_SEEDS=<n>` runs more cases (default 500; a fifth of them for the windowed diff).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import {
	diffWindowed,
	type LineEdit,
	type MergeHunk,
	mergeChain,
	parseMerge,
	planMerge,
	textEditsOf,
	unapplyHunks,
} from "../../../../editors/shared/merge.ts";
import { contentOf, mergeInfo } from "../../../../src/link/change-set.ts";
import { merge3 } from "../../../fixtures/merge-oracle.ts";
import { applyPlan, mergeCase } from "../../../fixtures/merge-ranges.ts";
import { checkDiff, windowedCase } from "../../../fixtures/windowed-diff-cases.ts";

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 500);
const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const hunk = (old_start: number, old_text: string[], new_start: number, new_text: string[]): MergeHunk => ({
	old_start,
	old_lines: old_text.length,
	new_start,
	new_lines: new_text.length,
	old_text,
	new_text,
});

describe("parseMerge: a changed entry's merge field", () => {
	const good = { sha256: "a".repeat(64), hunks: [hunk(2, ["b"], 2, ["B", "B2"]), hunk(5, [], 6, ["x"])] };
	const cases: [string, unknown, boolean][] = [
		["well-formed", good, true],
		["with prev_seq", { ...good, prev_seq: 3 }, true],
		["not an object", "x", false],
		["a short hash", { ...good, sha256: "abc" }, false],
		["prev_seq 0", { ...good, prev_seq: 0 }, false],
		["hunks not a list", { ...good, hunks: {} }, false],
		["a count that is not the text's", { ...good, hunks: [{ ...hunk(2, ["b"], 2, ["B"]), old_lines: 2 }] }, false],
		["hunks out of order", { ...good, hunks: [hunk(5, [], 5, ["x"]), hunk(2, ["b"], 3, ["B"])] }, false],
		["a new_start that does not follow", { ...good, hunks: [hunk(2, ["b"], 3, ["B"])] }, false],
		[
			"501 hunks",
			{ ...good, hunks: Array.from({ length: 501 }, (_, i) => hunk(2 * i + 1, ["a"], 2 * i + 1, ["b"])) },
			false,
		],
		["a line not a string", { ...good, hunks: [hunk(2, [1 as never], 2, ["B"])] }, false],
	];
	for (const [name, raw, ok] of cases) test(name, () => assert.equal(parseMerge(raw) !== undefined, ok));
});

describe("unapplyHunks: the text before pi's change", () => {
	const before = ["a", "b", "c", "d"];
	const hunks = [hunk(2, ["b"], 2, ["B", "B2"]), hunk(5, [], 6, ["e"])];
	const after = ["a", "B", "B2", "c", "d", "e"];
	test("gives the text before", () => assert.deepEqual(unapplyHunks(after, hunks), before));
	test("a file without the hunk's new lines: undefined", () =>
		assert.equal(unapplyHunks(["a", "X", "B2", "c", "d", "e"], hunks), undefined));
	test("a shorter file: undefined", () => assert.equal(unapplyHunks(["a"], hunks), undefined));
});

describe("textEditsOf: line edits as text edits", () => {
	const cases: [string, string, LineEdit[], string][] = [
		["a replaced line", "a\nb\nc\n", [{ from: 1, to: 2, lines: ["B"] }], "a\nB\nc\n"],
		["lines added at the end", "a\nb\n", [{ from: 2, to: 2, lines: ["c", "d"] }], "a\nb\nc\nd\n"],
		["no final newline: the last line replaced", "a\nb", [{ from: 1, to: 2, lines: ["B"] }], "a\nB"],
		["no final newline: lines added after the last", "a\nb", [{ from: 2, to: 2, lines: ["c"] }], "a\nb\nc"],
		["no final newline: the last line removed", "a\nb", [{ from: 1, to: 2, lines: [] }], "a\n"],
		[
			"two edits",
			"a\nb\nc\nd\n",
			[
				{ from: 0, to: 1, lines: [] },
				{ from: 3, to: 3, lines: ["x"] },
			],
			"b\nc\nx\nd\n",
		],
	];
	for (const [name, text, edits, want] of cases) {
		test(name, () => {
			let out = text;
			const offset = (p: { line: number; character: number }) =>
				out
					.split("\n")
					.slice(0, p.line)
					.reduce((n, l) => n + l.length + 1, 0) + p.character;
			for (const e of textEditsOf(text, edits).reverse()) {
				out = out.slice(0, offset(e.start)) + e.text + out.slice(offset(e.end));
			}
			assert.equal(out, want);
		});
	}
});

describe("mergeChain: when a merge is made", () => {
	const base = "1\n2\n3\n4\n5\n";
	const after = "1\n2\n3\n4\nfive\n";
	const merge = mergeInfo(contentOf(Buffer.from(base)), contentOf(Buffer.from(after)));
	const cases: [string, { seq: number; merge?: unknown }[], number, string, string, string | undefined][] = [
		["one change", [{ seq: 4, merge }], 3, after, "one\n2\n3\n4\n5\n", "merged"],
		["no merge field", [{ seq: 4 }], 3, after, "one\n2\n3\n4\n5\n", undefined],
		["a change in between not handled", [{ seq: 4, merge: { ...merge, prev_seq: 2 } }], 1, after, "one\n", undefined],
		["another file on disk", [{ seq: 4, merge }], 3, "1\n2\n3\n4\nFIVE\n", "one\n", undefined],
		["CR-LF in the buffer", [{ seq: 4, merge }], 3, after, "one\r\n2\r\n3\r\n4\r\n5\r\n", undefined],
		["a conflict", [{ seq: 4, merge }], 3, after, "1\n2\n3\n4\nuser\n", "conflict"],
	];
	for (const [name, chain, handled, disk, buffer, status] of cases) {
		test(name, () => {
			const outcome = mergeChain(chain, handled, disk, sha(disk), buffer);
			assert.equal(outcome.ok ? outcome.status : undefined, status);
		});
	}
});

// ---- seeded: the merge against an oracle written from the rule ---------------------------------------------------

/** One seeded case: undefined when the merge agrees with the oracle, else what differs. */
function runCase(seed: number): string | undefined {
	const { base, ours, theirs, user, pi, pis } = mergeCase(seed);
	const plan = planMerge(base, ours, theirs);
	const got = { buffer: applyPlan(ours, plan.edits), conflicts: plan.conflicts };
	const oracle = merge3(base, ours, pis);
	const want = { buffer: oracle.merged, conflicts: oracle.conflicts };
	if (JSON.stringify(got) === JSON.stringify(want)) return undefined;
	return `seed ${seed}: base ${base.length} lines, user ${JSON.stringify(user)}, pi ${JSON.stringify(pi)}\n  got ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`;
}

describe("seeded: the merge against the rule's oracle", () => {
	test(`${SEEDS} cases`, () => {
		for (let seed = 1; seed <= SEEDS; seed++) assert.equal(runCase(seed), undefined);
	});
});

/** Long lists with big edits: fewer cases than the merge's. */
const WINDOWED_SEEDS = Math.ceil(SEEDS / 5);

describe("seeded: the user's changes, diffed in windows (diffWindowed)", () => {
	test(`${WINDOWED_SEEDS} lists of unique lines: exactly the edits made`, () => {
		for (let seed = 1; seed <= WINDOWED_SEEDS; seed++) {
			const c = windowedCase(seed, "unique");
			assert.deepEqual(diffWindowed(c.a, c.b), c.expected, `seed ${seed}`);
		}
	});
	test(`${WINDOWED_SEEDS} lists with repeated lines: ascending, apart, and turning the old lines into the new`, () => {
		for (let seed = 1; seed <= WINDOWED_SEEDS; seed++) {
			const c = windowedCase(seed, "repeats");
			assert.deepEqual(checkDiff(c.a, c.b, diffWindowed(c.a, c.b)), [], `seed ${seed}`);
		}
	});
});
