/**
 * Selections in a real Neovim: v, V, CTRL-V and select mode, normalized 1-based inclusive byte columns with
 * multibyte characters, and the freshness clock: `selected_at` is "now" while in visual mode, the moment
 * visual mode was left afterwards, kept (not refreshed) while the old marks are reported, per buffer, null
 * for marks the client did not see being made, and never derived from registers.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { Selection } from "../../src/protocol/protocol.ts";
import { forEachNvim, type Nvim, nowSeconds, startNvim } from "../helpers/nvim.ts";

const LINES = ["héllo wörld", "second line", "日本語テキスト", "", "last"];

async function open(nv: Nvim, name = "sel.txt", lines = LINES): Promise<string> {
	const path = join(nv.tmp, name);
	writeFileSync(path, `${lines.join("\n")}\n`);
	await nv.command(`edit ${name}`);
	await nv.until((x) => x.active_buffer.file === path, `${name} open`);
	return path;
}

type Pos = [number, number]; // [line, 0-based byte col] as nvim_win_set_cursor takes it

interface Row {
	name: string;
	from: Pos;
	keys: string;
	to: Pos | null;
	want: { start: [number, number]; end: [number, number]; text: string };
}

const CTRL_V = "<C-v>";
const ROWS: Row[] = [
	{ name: "v one line", from: [1, 7], keys: "v", to: [1, 14], want: { start: [1, 8], end: [1, 13], text: "wörld" } },
	{
		name: "v ending on a 2-byte char",
		from: [1, 0],
		keys: "v",
		to: [1, 1],
		want: { start: [1, 1], end: [1, 3], text: "hé" },
	},
	{
		name: "v ending on a 3-byte char",
		from: [3, 0],
		keys: "v",
		to: [3, 3],
		want: { start: [3, 1], end: [3, 6], text: "日本" },
	},
	{
		name: "v multi-line: whole lines, edge columns",
		from: [1, 7],
		keys: "v",
		to: [2, 6],
		want: { start: [1, 8], end: [2, 7], text: "héllo wörld\nsecond line" },
	},
	{
		name: "v backwards is normalized",
		from: [2, 3],
		keys: "v",
		to: [1, 1],
		want: { start: [1, 2], end: [2, 4], text: "héllo wörld\nsecond line" },
	},
	{ name: "v on an empty line", from: [4, 0], keys: "v", to: null, want: { start: [4, 1], end: [4, 1], text: "" } },
	{
		name: "v$ stops at the last byte",
		from: [5, 0],
		keys: "v$",
		to: null,
		want: { start: [5, 1], end: [5, 4], text: "last" },
	},
	{
		name: "V one line",
		from: [3, 4],
		keys: "V",
		to: null,
		want: { start: [3, 1], end: [3, 21], text: "日本語テキスト" },
	},
	{
		name: "V multi-line",
		from: [2, 4],
		keys: "V",
		to: [3, 0],
		want: { start: [2, 1], end: [3, 21], text: "second line\n日本語テキスト" },
	},
	{
		name: "CTRL-V multi-line: whole lines, the anchors' byte columns",
		from: [1, 1],
		keys: CTRL_V,
		to: [3, 3],
		want: { start: [1, 2], end: [3, 6], text: "héllo wörld\nsecond line\n日本語テキスト" },
	},
	{
		name: "CTRL-V one line: the exact range",
		from: [2, 0],
		keys: CTRL_V,
		to: [2, 5],
		want: { start: [2, 1], end: [2, 6], text: "second" },
	},
	{
		name: "select mode (gh) counts as visual",
		from: [2, 7],
		keys: "gh",
		to: [2, 10],
		want: { start: [2, 8], end: [2, 11], text: "line" },
	},
];

const shape = (s: Selection | null | undefined) =>
	s ? { start: [s.start.line, s.start.column], end: [s.end.line, s.end.column], text: s.text } : s;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: selections`, { concurrency: 8 }, () => {
		for (const row of ROWS) {
			it(`${row.name}: while selecting and after leaving visual mode`, async (t) => {
				const nv = await startNvim(t, flavour);
				await open(nv);
				await nv.call("nvim_win_set_cursor", 0, row.from);
				const t0 = nowSeconds();
				await nv.input(row.keys);
				if (row.to) {
					await nv.call("nvim_win_set_cursor", 0, row.to);
					await nv.settle();
				}
				const live = await nv.until(
					(x) => JSON.stringify(shape(x.active_buffer.selection)) === JSON.stringify(row.want),
					`${row.name} while selecting: want ${JSON.stringify(row.want)}`,
				);
				const liveAt = live.active_buffer.selection?.selected_at as number;
				assert.ok(liveAt >= t0 - 0.05 && liveAt <= nowSeconds() + 0.05, `selected_at ${liveAt} is now while selecting`);

				// A throttled visual-mode write may still land: only a state written from now on counts.
				const tPre = nowSeconds();
				await nv.input("<Esc>");
				const tEsc = nowSeconds();
				const after = await nv.until(
					(x) =>
						x.timestamp >= tPre - 0.01 &&
						x.active_buffer.selection !== null &&
						x.active_buffer.selection.selected_at !== liveAt,
					"a write after leaving visual mode",
				);
				assert.deepEqual(shape(after.active_buffer.selection), row.want, "the marks report the same selection");
				const at = after.active_buffer.selection?.selected_at as number;
				assert.ok(
					at >= tPre - 0.05 && at <= tEsc + 0.05,
					`selected_at ${at} = the moment visual mode was left (${tPre}..${tEsc})`,
				);
			});
		}

		it("selected_at is not refreshed by later writes; old marks keep their time; per buffer", async (t) => {
			const nv = await startNvim(t, flavour);
			await open(nv, "a.txt");
			await nv.call("nvim_win_set_cursor", 0, [2, 0]);
			await nv.input("Vj<Esc>");
			const made = await nv.until((x) => x.active_buffer.selection?.start.line === 2, "selection in a.txt");
			const at = made.active_buffer.selection?.selected_at as number;
			assert.equal(typeof at, "number");

			// A later cursor move rewrites the file (new timestamp) but not selected_at.
			await nv.call("nvim_win_set_cursor", 0, [5, 2]);
			await nv.settle();
			const moved = await nv.until((x) => x.active_buffer.cursor.line === 5, "cursor move written");
			assert.equal(moved.active_buffer.selection?.selected_at, at);
			assert.ok(moved.timestamp > at, "timestamp moves on, selected_at stays");
			assert.deepEqual(shape(moved.active_buffer.selection), shape(made.active_buffer.selection));

			// Another buffer has its own (no) marks.
			await open(nv, "b.txt", ["only line", "two"]);
			let s = await nv.until((x) => x.active_buffer.name === "b.txt", "b.txt");
			assert.equal(s.active_buffer.selection, null);
			await nv.input("vl<Esc>");
			s = await nv.until((x) => x.active_buffer.selection?.text === "on", "selection in b.txt");
			const bAt = s.active_buffer.selection?.selected_at as number;
			assert.ok(bAt > at);

			// Back to a.txt: its own old selection, with its old time.
			await nv.command("buffer a.txt");
			s = await nv.until((x) => x.active_buffer.name === "a.txt", "a.txt again");
			assert.deepEqual(shape(s.active_buffer.selection), shape(made.active_buffer.selection));
			assert.equal(s.active_buffer.selection?.selected_at, at);

			// Lines inserted above shift the marks: still the same selection, same time.
			await nv.call("nvim_buf_set_lines", 0, 0, 0, false, ["new first line"]);
			await nv.settle();
			s = await nv.until((x) => x.active_buffer.selection?.start.line === 3, "marks shifted by the edit");
			assert.equal(s.active_buffer.selection?.selected_at, at);
			assert.equal(s.active_buffer.selection?.text, "second line\n日本語テキスト");
		});

		it("marks the client did not see being made have selected_at null (restored, m<, API)", async (t) => {
			const nv = await startNvim(t, flavour);
			await open(nv);
			// Marks set as a session/shada restore would: no visual mode involved.
			await nv.call("nvim_buf_set_mark", 0, "<", 1, 0, {});
			await nv.call("nvim_buf_set_mark", 0, ">", 2, 3, {});
			await nv.call("nvim_win_set_cursor", 0, [3, 0]);
			await nv.settle();
			let s = await nv.until((x) => x.active_buffer.cursor.line === 3, "written after the marks were set");
			assert.deepEqual(shape(s.active_buffer.selection), {
				start: [1, 1],
				end: [2, 4],
				text: "héllo wörld\nsecond line",
			});
			assert.equal(s.active_buffer.selection?.selected_at, null);

			// A real selection, then `m<` moves a mark without visual mode and without an edit: unknown again.
			await nv.call("nvim_win_set_cursor", 0, [5, 0]);
			await nv.input("vl<Esc>");
			s = await nv.until((x) => x.active_buffer.selection?.text === "la", "a real selection");
			assert.equal(typeof s.active_buffer.selection?.selected_at, "number");
			await nv.call("nvim_win_set_cursor", 0, [2, 0]);
			await nv.input("m<lt>");
			// Setting a mark is no event: the next write (a cursor move) reports it.
			await nv.call("nvim_win_set_cursor", 0, [3, 0]);
			await nv.settle();
			s = await nv.until((x) => x.active_buffer.cursor.line === 3, "written after m<");
			assert.equal(s.active_buffer.selection?.start.line, 2, "'< moved by m<");
			assert.equal(s.active_buffer.selection?.selected_at, null);
		});

		it("the kept selection's text follows edits inside it and a new cap, even when the marks stay put", async (t) => {
			const nv = await startNvim(t, flavour);
			await open(nv);
			await nv.call("nvim_win_set_cursor", 0, [2, 0]);
			await nv.input("Vj<Esc>");
			await nv.until((x) => x.active_buffer.selection?.text === "second line\n日本語テキスト", "the selection");
			// Same marks, new text: "second" -> "2nd" inside the selection.
			await nv.call("nvim_buf_set_text", 0, 1, 0, 1, 6, ["2nd"]);
			await nv.settle();
			await nv.until((x) => x.active_buffer.selection?.text === "2nd line\n日本語テキスト", "the edited text");
			// Same marks, same text, a smaller cap.
			await nv.lua("require('pi-ide').setup({ max_selection_bytes = 4 })");
			await nv.until((x) => x.active_buffer.selection?.text === "2nd ", "cut to the new cap");
		});

		it("never guesses from registers: yanks and deletes without visual mode leave selection null", async (t) => {
			const nv = await startNvim(t, flavour);
			await open(nv);
			await nv.input('yyj"ayyjdd');
			const s = await nv.until((x) => x.active_buffer.lines_total === 4, 'after yy / "ayy / dd');
			assert.equal(s.active_buffer.selection, null);
			assert.equal(await nv.call("nvim_call_function", "getreg", ["a"]), "second line\n");
		});

		it("caps the selection text (on a character boundary); start/end still describe all of it", async (t) => {
			const nv = await startNvim(t, flavour);
			await open(nv);
			await nv.lua("require('pi-ide').setup({ max_selection_bytes = 9 })");
			await nv.input("ggVG");
			const s = await nv.until((x) => x.active_buffer.selection?.end.line === 5, "ggVG");
			// Byte 9 is the first byte of "ö": the cut backs off to the character boundary.
			assert.equal(s.active_buffer.selection?.text, "héllo w");
			assert.equal(s.active_buffer.selection?.truncated, true);
			assert.deepEqual(shape(s.active_buffer.selection)?.start, [1, 1]);
			assert.deepEqual(shape(s.active_buffer.selection)?.end, [5, 4]);
		});

		it("a 10,000-line selection (500 KB) is cut at the default 256 KiB and marked truncated", async (t) => {
			const nv = await startNvim(t, flavour);
			const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1} ${"x".repeat(40)}`);
			await open(nv, "big.txt", lines);
			await nv.input("ggVG");
			const s = await nv.until((x) => x.active_buffer.selection?.end.line === 10_000, "ggVG over 10,000 lines");
			const text = s.active_buffer.selection?.text ?? "";
			assert.equal(s.active_buffer.selection?.truncated, true);
			// Each "\n" takes 2 bytes in the file: the cap is on the encoded size.
			const encoded = text.length + text.split("\n").length - 1;
			assert.ok(encoded <= 256 * 1024 && encoded > 256 * 1024 - 100, `${encoded} encoded bytes kept`);
			assert.ok(lines.join("\n").startsWith(text));
		});
	});
});
