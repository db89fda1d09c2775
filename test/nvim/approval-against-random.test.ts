/**
 * Issue 26 item 6 in Neovim (pi-ide.approval.rules `against`, `touch_phrase`): seeded proposals against seeded
 * unsaved buffers, each checked against the rule's oracle (test/fixtures/approval-against-oracle.ts): every hunk's
 * place in the buffer (where the merge would put it, or on the user's lines it touches), the proposal as the user
 * would see it, and the line naming the touched lines. A failure names its seed (PI_IDE_SEED replays from it).
 * Neovim 0.7.2 and 0.10.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { againstCase } from "../fixtures/approval-against-oracle.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const SEED = Number(process.env["PI_IDE_SEED"] ?? 20261205);
const CASES = Array.from({ length: 400 }, (_, i) => againstCase(SEED + i));

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: approval against the user's unsaved buffer, seeded`, () => {
		it(`${CASES.length} seeded proposals (from seed ${SEED}) agree with the rule's oracle`, async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const out = await nv.lua<{ places: unknown[]; proposed: string[]; phrase: string }[]>(
				`local rules = require("pi-ide.approval.rules")
local out = {}
for i, c in ipairs(...) do
  local places, proposed = rules.against(c.disk, c.ours, c.hunks)
  local _, short = rules.touch_phrase(places)
  out[i] = { places = places, proposed = proposed, phrase = short or "" }
end
return out`,
				CASES.map((c) => ({ disk: c.disk, ours: c.ours, hunks: c.hunks })),
			);
			for (const [i, c] of CASES.entries()) {
				const got = out[i];
				const seed = `seed ${c.seed} (PI_IDE_SEED=${c.seed})`;
				assert.deepEqual(got?.places ?? [], c.places, `${seed}: the places`);
				assert.deepEqual(got?.proposed, c.proposed, `${seed}: the proposal as the user would see it`);
				assert.equal(got?.phrase, c.phrase, `${seed}: the line naming the touched lines`);
			}
		});

		it("hunks out of order or overlapping (never pi's): nothing placed, no error", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const h = (at: number, old: string[]) => ({
				old_start: at,
				old_lines: old.length,
				old_text: old,
				new_text: ["x"],
			});
			const placed = await nv.lua<boolean[]>(
				`local rules = require("pi-ide.approval.rules")
local out = {}
for i, hunks in ipairs(...) do out[i] = rules.against({ "a", "b", "c" }, { "a", "B", "c" }, hunks) ~= nil end
return out`,
				[
					[h(3, ["c"]), h(1, ["a"])],
					[h(1, ["a", "b"]), h(2, ["b"])],
					[h(1, ["a"]), h(3, ["c"])],
				],
			);
			assert.deepEqual(placed, [false, false, true]);
		});
	});
});
