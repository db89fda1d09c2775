/**
 * A selection whose text was deleted or replaced is no selection: Neovim keeps '< '> after `d`, `c` or `p` on
 * a selection (moved onto the text that follows), and the client used to send that other text as a fresh
 * selection. Yanks, edits inside the selection and edits elsewhere keep it. One table, typed as a user types
 * (each case is one burst of keys, so the operator arrives as typeahead), once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
const lines = (from: number, to: number): string => LINES.slice(from - 1, to).join("\n");

interface EditCase {
	name: string;
	/** Keys typed in one burst, then (optionally) a second burst. */
	keys: string[];
	/** null = no selection; otherwise the reported range and text. */
	expect: null | { start: number; end: number; text: string };
}

const CASES: EditCase[] = [
	{ name: "V5jd deletes the selection", keys: ["10GV5jd"], expect: null },
	{ name: "V2jc replaces it", keys: ["10GV2jcNEW TEXT<Esc>"], expect: null },
	{ name: "a later :1,20d deletes it", keys: ["10GV5j<Esc>", ":1,20d<CR>"], expect: null },
	{ name: "charwise vlld", keys: ["10G0vlld"], expect: null },
	{ name: "viwc replaces a word", keys: ["10G0viwcfoo<Esc>"], expect: null },
	{ name: "p over it", keys: ["1Gyy10GVjjp"], expect: null },
	{ name: "a later d over it", keys: ["10GVj<Esc>", "9G4dd"], expect: null },
	{ name: "V5jy (yank) keeps it", keys: ["10GV5jy"], expect: { start: 10, end: 15, text: lines(10, 15) } },
	{
		name: "an edit inside keeps it",
		keys: ["10GV2j<Esc>", "11G0x"],
		expect: { start: 10, end: 12, text: "line 10\nine 11\nline 12" },
	},
	{
		name: "lines deleted above move it",
		keys: ["10GV2j<Esc>", ":1,3d<CR>"],
		expect: { start: 7, end: 9, text: lines(10, 12) },
	},
	{
		name: "deleting only part of it keeps the rest",
		keys: ["10GV2j<Esc>", "10Gdd"],
		expect: { start: 10, end: 11, text: lines(11, 12) },
	},
	{
		name: "indenting it keeps it (>)",
		keys: ["10GVj><Esc>"],
		expect: { start: 10, end: 11, text: "\tline 10\n\tline 11" },
	},
];

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: a deleted or replaced selection is not sent`, { concurrency: 6 }, () => {
		for (const c of CASES) {
			it(`${c.name}: ${c.keys.join(" then ")}`, async (t) => {
				const nv = await startNvim(t, flavour);
				writeFileSync(join(nv.tmp, "edits.txt"), `${LINES.join("\n")}\n`);
				await nv.command("edit edits.txt");
				await nv.until((x) => x.active_buffer.name === "edits.txt", "edits.txt open");
				for (const keys of c.keys) await nv.input(keys);
				// A cursor position no case ends on, so the wait needs the write made after the keys.
				await nv.call("nvim_win_set_cursor", 0, [1, 2]);
				await nv.settle();
				const s = await nv.until((x) => x.active_buffer.cursor.column === 3, "written after the keys");
				const sel = s.active_buffer.selection;
				if (c.expect === null) {
					assert.equal(sel, null, `no selection; got ${JSON.stringify(sel)}`);
				} else {
					assert.deepEqual(
						{ start: sel?.start.line, end: sel?.end.line, text: sel?.text },
						{ start: c.expect.start, end: c.expect.end, text: c.expect.text },
					);
					assert.equal(typeof sel?.selected_at, "number", "still the user's selection, with its time");
				}
			});
		}

		it("a new selection after a deleted one is sent again", async (t) => {
			const nv = await startNvim(t, flavour);
			writeFileSync(join(nv.tmp, "edits.txt"), `${LINES.join("\n")}\n`);
			await nv.command("edit edits.txt");
			await nv.input("10GV5jd");
			await nv.input("3GVj<Esc>");
			const s = await nv.until((x) => x.active_buffer.selection?.start.line === 3, "the new selection");
			assert.equal(s.active_buffer.selection?.text, lines(3, 4));
			assert.equal(typeof s.active_buffer.selection?.selected_at, "number");
		});
	});
});
