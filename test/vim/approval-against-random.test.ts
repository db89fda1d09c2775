/**
 * Issue 26 item 6 in Vim 9 (pi_ide/approval_rules.vim `Against`, `TouchPhrase`): seeded proposals against seeded
 * unsaved buffers, each checked against the rule's oracle (test/fixtures/approval-against-oracle.ts): every hunk's
 * place in the buffer (where the merge would put it, or on the user's lines it touches), the proposal as the user
 * would see it, and the line naming the touched lines. A failure names its seed (PI_IDE_SEED replays from it).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { againstCase } from "../fixtures/approval-against-oracle.ts";
import { runVimRules } from "../helpers/vim.ts";

const SEED = Number(process.env["PI_IDE_SEED"] ?? 20261205);
const CASES = Array.from({ length: 400 }, (_, i) => againstCase(SEED + i));

it(`vim: approval against the user's unsaved buffer: ${CASES.length} seeded proposals (from seed ${SEED}) agree with the rule's oracle`, (t) => {
	const out = runVimRules<{ all: { places: unknown[]; proposed: string[]; phrase: string }[] }>(
		t,
		CASES.map((c) => ({ disk: c.disk, ours: c.ours, hunks: c.hunks })),
		`var out = {all: mapnew(c, (_, v) => {
  var at = pi_ide#approval_rules#Against(v.disk, v.ours, v.hunks)
  return {places: at.places, proposed: at.proposed, phrase: pi_ide#approval_rules#TouchPhrase(at.places)[1]}
})}`,
	);
	for (const [i, c] of CASES.entries()) {
		const got = out.all[i];
		const seed = `seed ${c.seed} (PI_IDE_SEED=${c.seed})`;
		assert.deepEqual(got?.places, c.places, `${seed}: the places`);
		assert.deepEqual(got?.proposed, c.proposed, `${seed}: the proposal as the user would see it`);
		assert.equal(got?.phrase, c.phrase, `${seed}: the line naming the touched lines`);
	}
});

it("vim: hunks out of order or overlapping (never pi's): nothing placed, no error", (t) => {
	const h = (at: number, old: string[]) => ({ old_start: at, old_lines: old.length, old_text: old, new_text: ["x"] });
	const out = runVimRules<{ placed: boolean[] }>(
		t,
		[
			[h(3, ["c"]), h(1, ["a"])],
			[h(1, ["a", "b"]), h(2, ["b"])],
			[h(1, ["a"]), h(3, ["c"])],
		],
		"var out = {placed: mapnew(c, (_, hunks) => !empty(pi_ide#approval_rules#Against(['a', 'b', 'c'], ['a', 'B', 'c'], hunks)))}",
	);
	assert.deepEqual(out.placed, [false, false, true]);
});
