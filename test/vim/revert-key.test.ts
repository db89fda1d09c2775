/**
 * The revert key `(pi_pid, run, id)` (test/fixtures/revert-key.ts) in the Vim client's `reverted` list
 * (pi_ide#review_rules#AddReverted: a hunk reverted again is one entry), in one real Vim (`vim -es`).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { expectedAfterBoth, REVERT_KEY_CASES, type Revert } from "../fixtures/revert-key.ts";
import { runVimRules } from "../helpers/vim.ts";

it("vim: AddReverted keeps one entry per (pi_pid, run, id), two when one field of the key differs", (t) => {
	const out = runVimRules<{ lists: Revert[][] }>(
		t,
		REVERT_KEY_CASES.map((c) => [c.first, c.second]),
		"var out = {lists: mapnew(c, (_, pair) => pi_ide#review_rules#AddReverted(pi_ide#review_rules#AddReverted([], pair[0]), pair[1]))}",
	);
	const wrong = REVERT_KEY_CASES.flatMap((c, i) => {
		const list = out.lists[i] ?? [];
		const { count, newest } = expectedAfterBoth(c);
		return list.length === count && isDeepStrictEqual(list.at(-1), newest)
			? []
			: [`${c.name}: ${JSON.stringify(list)}`];
	});
	assert.deepEqual(wrong, []);
});
