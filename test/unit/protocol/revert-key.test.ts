/**
 * The revert key `(pi_pid, run, id)` (test/fixtures/revert-key.ts) in its TypeScript copies: pi's (src/link/reverts.ts:
 * a revert told once per key) and the TypeScript editors' (editors/shared/review.ts `addRevert`: a hunk reverted
 * again is one entry). The same table runs in Neovim, Vim and Emacs (test/{nvim,vim,emacs}/revert-key.test.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { addRevert, type Mark } from "../../../editors/shared/review.ts";
import { newReverts, revertKey } from "../../../src/link/reverts.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import type { ReviewRun } from "../../../src/protocol/wire.ts";
import { expectedAfterBoth, REVERT_KEY_CASES, REVERT_KEY_NS_CASES, type Revert } from "../../fixtures/revert-key.ts";

const markOf = (r: Revert): Mark => ({
	pid: r.pi_pid,
	...(r.pi_ns === undefined ? {} : { piNs: r.pi_ns }),
	run: r.run,
	file: r.file,
	hunk: {
		id: r.id,
		old_start: r.line,
		old_lines: 1,
		new_start: r.line,
		new_lines: r.lines,
		old_text: ["x"],
		new_text: Array.from({ length: r.lines }, () => "y"),
	},
	line: r.line - 1,
	reverted: true,
});

/** v0.5: `pi_ns` is part of the key too (left out: the initial namespace). */
const CASES = [...REVERT_KEY_CASES, ...REVERT_KEY_NS_CASES];

describe("editors/shared/review.ts addRevert: one entry per (pi_pid, pi_ns, run, id)", () => {
	for (const c of CASES) {
		test(c.name, () => {
			const list = addRevert(addRevert([], markOf(c.first)), markOf(c.second));
			const { count, newest } = expectedAfterBoth(c);
			assert.equal(list.length, count);
			assert.deepEqual(list.at(-1), newest);
		});
	}
});

describe("src/link/reverts.ts: pi tells a revert once per (pi_pid, pi_ns, run, id)", () => {
	for (const c of CASES) {
		test(c.name, () => {
			// pi (the second revert's) published that hunk; the first revert was told already.
			const { second } = c;
			const runs: ReviewRun[] = [
				{
					run: second.run,
					files: [{ file: second.file, baseline: "x\n", note: null, hunks_total: 1, hunks: [markOf(second).hunk] }],
				},
			];
			// The first was told: remembered under its key, as pi's shell remembers it (src/link/editor-link.ts).
			const told = new Set([revertKey(c.first)]);
			const fresh = newReverts(
				{ reverted: [second] } as EditorState,
				second.pi_pid,
				runs,
				told,
				() => false,
				second.pi_ns,
			);
			assert.equal(fresh.length, c.same ? 0 : 1);
		});
	}
});
