/**
 * The revert key `(pi_pid, pi_ns, run, id)` (test/fixtures/revert-key.ts, v0.5 cases too) in the Vim client's `reverted` list
 * (pi_ide#review_rules#AddReverted: a hunk reverted again is one entry), in one real Vim (`vim -es`).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { expectedAfterBoth, REVERT_KEY_CASES, REVERT_KEY_NS_CASES, type Revert } from "../fixtures/revert-key.ts";

/** v0.5: the key is (pi_pid, pi_ns, run, id), pi_ns left out read as the initial namespace. */
const CASES = [...REVERT_KEY_CASES, ...REVERT_KEY_NS_CASES];

import { runVimRules } from "../helpers/vim.ts";

it("vim: AddReverted keeps one entry per (pi_pid, pi_ns, run, id), two when one field of the key differs", (t) => {
	const out = runVimRules<{ lists: Revert[][] }>(
		t,
		CASES.map((c) => [c.first, c.second]),
		"var out = {lists: mapnew(c, (_, pair) => pi_ide#review_rules#AddReverted(pi_ide#review_rules#AddReverted([], pair[0]), pair[1]))}",
	);
	const wrong = CASES.flatMap((c, i) => {
		const list = out.lists[i] ?? [];
		const { count, newest } = expectedAfterBoth(c);
		return list.length === count && isDeepStrictEqual(list.at(-1), newest)
			? []
			: [`${c.name}: ${JSON.stringify(list)}`];
	});
	assert.deepEqual(wrong, []);
});
