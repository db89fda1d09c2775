/**
 * The revert key `(pi_pid, run, id)` (test/fixtures/revert-key.ts) in the Neovim client's `reverted` list
 * (require("pi-ide.review").add_reverted: a hunk reverted again is one entry). Neovim 0.7.2 and 0.10.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { expectedAfterBoth, REVERT_KEY_CASES, REVERT_KEY_NS_CASES, type Revert } from "../fixtures/revert-key.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

/** v0.5: `pi_ns` is part of the key too, left out read as the initial namespace. */
const CASES = [...REVERT_KEY_CASES, ...REVERT_KEY_NS_CASES];

forEachNvim((flavour) => {
	describe(`the Neovim client's revert key (${flavour.name})`, () => {
		it("add_reverted keeps one entry per (pi_pid, pi_ns, run, id), two when one field of the key differs", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const lists = await nv.lua<Revert[][]>(
				`local pairs_ = ...
local review = require("pi-ide.review")
local out = {}
for i, pair in ipairs(pairs_) do
  out[i] = review.add_reverted(review.add_reverted({}, pair[1]), pair[2])
end
return out`,
				CASES.map((c) => [c.first, c.second]),
			);
			const wrong = CASES.flatMap((c, i) => {
				const list = lists[i] ?? [];
				const { count, newest } = expectedAfterBoth(c);
				return list.length === count && isDeepStrictEqual(list.at(-1), newest)
					? []
					: [`${c.name}: ${JSON.stringify(list)}`];
			});
			assert.deepEqual(wrong, []);
		});
	});
});
