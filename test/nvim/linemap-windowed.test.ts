/**
 * Neovim's windowed line diff (pi-ide.linemap.hunks_windowed: the user's changes in a merge of pi's change into an
 * unsaved buffer, issue 26), in real Neovim 0.7.2 and 0.10, on the seeded long line lists of
 * test/fixtures/windowed-diff-cases.ts: with unique lines exactly the edits made, with repeated lines a true diff
 * (ascending, apart, turning the old lines into the new). `PI_IDE_SEEDS=<n>` runs more cases (default 60 of each).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Change, checkDiff, windowedCase } from "../fixtures/windowed-diff-cases.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 60);

/** vim.diff's hunks ({start_a, count_a, start_b, count_b}, an empty side's start the line before) as ranges. */
const DIFF_ALL = `
local lm = require("pi-ide.linemap")
local out = {}
for i, c in ipairs(...) do
  local changes = {}
  for k, h in ipairs(lm.hunks_windowed(c.a, c.b)) do
    local a = h[2] == 0 and h[1] or h[1] - 1
    local b = h[4] == 0 and h[3] or h[3] - 1
    changes[k] = { a = a, aEnd = a + h[2], b = b, bEnd = b + h[4] }
  end
  out[i] = changes
end
return out
`;

forEachNvim((flavour) => {
	describe(`linemap.hunks_windowed (${flavour.name})`, () => {
		for (const kind of ["unique", "repeats"] as const) {
			it(`${SEEDS} seeded ${kind === "unique" ? "lists of unique lines: exactly the edits made" : "lists with repeated lines: a true diff"}`, async (t) => {
				const nv = await startNvim(t, flavour, { ui: false });
				const cases = Array.from({ length: SEEDS }, (_, i) => windowedCase(i + 1, kind));
				// An empty Lua table comes back as {} (no changes): read it as an empty list.
				const got = (await nv.lua<(Change[] | Record<string, never>)[]>(DIFF_ALL, cases)).map((c) =>
					Array.isArray(c) ? c : [],
				);
				for (const [i, c] of cases.entries()) {
					const changes = got[i] as Change[];
					if (c.expected) assert.deepEqual(changes, c.expected, `seed ${c.seed}`);
					else assert.deepEqual(checkDiff(c.a, c.b, changes), [], `seed ${c.seed}`);
				}
			});
		}
	});
});
