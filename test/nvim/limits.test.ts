/**
 * The state file stays under pi's 1 MiB limit whatever the user selects: the Neovim client caps the selection
 * by its *encoded* size (JSON escaping grows source text by a few percent and control bytes sixfold), marks a
 * cut selection `truncated: true`, and as a last resort cuts the selection further or skips the write. The
 * Lua functions are checked in a real Neovim (tables of cases), then `ggVG` on a multi-MB file with
 * binary-ish bytes, once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MAX_STATE_FILE_BYTES } from "../../src/protocol/protocol.ts";
import { binaryishLines, forEachNvim, type Nvim, startNvim } from "../helpers/nvim.ts";

/** The size of `s` inside a JSON string as vim.json writes it (it also escapes "/" and DEL), without the quotes. */
function encodedSize(s: string): number {
	return Buffer.byteLength(JSON.stringify(s).replaceAll("/", "\\/").replaceAll("\u007f", "\\u007f")) - 2;
}

interface FitCase {
	name: string;
	text: string;
	max: number;
	/** The expected result, or "maximal" to check the prefix/maximality properties only. */
	expect: string;
	cut: boolean;
}

const FIT: FitCase[] = [
	{ name: "fits as is", text: "plain text", max: 100, expect: "plain text", cut: false },
	{ name: "exactly the cap", text: "abcd", max: 4, expect: "abcd", cut: false },
	{ name: 'quotes take 2 bytes ("a" is 5)', text: '"a"', max: 4, expect: '"a', cut: true },
	{ name: "a slash is escaped too", text: "a/b", max: 3, expect: "a/", cut: true },
	{ name: "a control byte takes 6", text: "ab\u0001cd", max: 7, expect: "ab", cut: true },
	{ name: "never splits a character", text: "aé", max: 2, expect: "a", cut: true },
	{ name: "DEL takes 6", text: "a\u007fb", max: 6, expect: "a", cut: true },
	{ name: "zero room", text: "abc", max: 0, expect: "", cut: true },
	{ name: "a newline takes 2", text: "a\nb", max: 3, expect: "a\n", cut: true },
];

async function fit(nv: Nvim, text: string, max: number): Promise<[string, boolean, number]> {
	return nv.lua<[string, boolean, number]>(
		`local sel = require("pi-ide.selection")
		local t, cut = sel.fit(...)
		return { t, cut, sel.encoded_size(t) }`,
		text,
		max,
	);
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: the state file stays under pi's limit`, { concurrency: 4 }, () => {
		it("selection.fit cuts by the encoded size (table)", async (t) => {
			const nv = await startNvim(t, flavour);
			for (const c of FIT) {
				const [text, cut, size] = await fit(nv, c.text, c.max);
				assert.deepEqual({ text, cut }, { text: c.expect, cut: c.cut }, c.name);
				assert.equal(size, encodedSize(text), `${c.name}: encoded_size agrees with JSON.stringify`);
			}
		});

		it("selection.fit on large binary-ish text: a maximal prefix that fits, at every cap", async (t) => {
			const nv = await startNvim(t, flavour);
			const text = binaryishLines(300_000).join("\n");
			for (const max of [1, 5, 4095, 4096, 4097, 100_000, 262_144]) {
				const [cut, wasCut, size] = await fit(nv, text, max);
				assert.equal(wasCut, true);
				assert.ok(size <= max, `cap ${max}: ${size} bytes`);
				assert.ok(text.startsWith(cut), `cap ${max}: a prefix`);
				const next = [...text.slice(cut.length)][0] ?? "";
				assert.ok(encodedSize(cut + next) > max, `cap ${max}: one more character would not fit`);
			}
		});

		it("state.encode: a file over 1 MiB anyway cuts the selection further, or is not written", async (t) => {
			const nv = await startNvim(t, flavour);
			const result = await nv.lua<{ fits: [number, boolean, number]; hopeless: [boolean, string] }>(`
				local state = require("pi-ide.state")
				local function payload(argv, text)
				  return state.build({ pid = 1, cwd = "/p", argv = argv, bufname = "/p/a", buftype = "", filetype = "",
				    modified = false, lines_total = 1, cursor = { 1, 0 },
				    selection = { start = { line = 1, column = 1 }, ["end"] = { line = 1, column = 1 }, text = text },
				    selected_at = 1 })
				end
				-- 600 KiB of argv plus a 512 KiB selection: too big together.
				local argv = {}
				for i = 1, 600 do argv[i] = string.rep("a", 1023) end
				local content, text = state.encode(payload(argv, string.rep("x", 512 * 1024)), 1)
				local decoded = vim.json.decode(text)
				-- 1.2 MiB of argv: no selection cut can help.
				for i = 601, 1200 do argv[i] = string.rep("a", 1023) end
				local none, err = state.encode(payload(argv, "x"), 1)
				return { fits = { #text, decoded.active_buffer.selection.truncated, #decoded.active_buffer.selection.text },
				  hopeless = { none == nil, err } }
			`);
			const [size, truncated, kept] = result.fits;
			assert.ok(size <= MAX_STATE_FILE_BYTES, `${size} bytes`);
			assert.ok(size > MAX_STATE_FILE_BYTES - 100, `the selection keeps what fits (${size} bytes)`);
			assert.equal(truncated, true);
			assert.ok(kept > 0 && kept < 512 * 1024);
			assert.equal(result.hopeless[0], true);
			assert.match(result.hopeless[1], /over pi's limit of 1048576; not written/);
		});

		it("ggVG on a 3 MB binary-ish file: the file stays small, truncated is set, no write fails", async (t) => {
			const nv = await startNvim(t, flavour);
			const lines = binaryishLines(3_000_000);
			writeFileSync(join(nv.tmp, "big.bin.txt"), `${lines.join("\n")}\n`);
			await nv.command("edit big.bin.txt");
			await nv.input("ggVG");
			let s = await nv.until((x) => x.active_buffer.selection?.end.line === lines.length, "ggVG written");
			const sel = s.active_buffer.selection;
			assert.equal(sel?.truncated, true);
			const file = statSync(nv.statePath).size;
			assert.ok(file <= 256 * 1024 + 4096, `state file ${file} bytes (cap 256 KiB + the rest)`);
			const status = await nv.status();
			assert.equal(status.failures, 0);
			assert.equal(status.config.max_selection_bytes, 256 * 1024);
			assert.match(await nv.exec("PiIde"), /selection: 1:1-\d+:\d+, \d+ bytes \(cut to max_selection_bytes\), made/);
			// Kept as marks after <Esc>: still cut, still marked.
			await nv.input("<Esc>");
			s = await nv.until((x) => x.active_buffer.selection?.selected_at !== sel?.selected_at, "<Esc> written");
			assert.equal(s.active_buffer.selection?.truncated, true);
			// A small selection is not marked.
			await nv.input("ggvl<Esc>");
			s = await nv.until((x) => x.active_buffer.selection?.end.line === 1, "a small selection");
			assert.equal(s.active_buffer.selection?.truncated, undefined);
		});

		it("max_selection_bytes above 512 KiB is refused: the file could not stay under 1 MiB", async (t) => {
			const nv = await startNvim(t, flavour);
			const [ok, err] = await nv.lua<[boolean, string]>(
				"return { require('pi-ide').setup({ max_selection_bytes = 1048576 }) }",
			);
			assert.equal(ok, false);
			assert.match(err, /`max_selection_bytes` should be a whole number of bytes between 1 and 524288/);
		});
	});
});
