/**
 * What a reload for pi leaves in the buffer besides its text: the line endings of the new content
 * ('fileformat'), the user's 'autoread' as it was (a buffer-local `noautoread` kept, nothing buffer-local
 * left behind), and the undo history, also for a file over 'undoreload'.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { assertNoErrors, lines, luaWithoutPrompt, message, send, type World, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

/** pi writes `text` to a.txt and says so; resolves once the client has handled it. */
async function piWrites(w: World, text: string): Promise<void> {
	writeFileSync(w.file, text);
	const msg = message(w);
	send(w, msg);
	const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
	assert.equal(state.files?.find((f) => f.file === w.file)?.status, "reloaded");
}

/** 'autoread' as the buffer has it: its local value (-1 or nil: none) and the one in effect. */
const AUTOREAD = `return { l = vim.api.nvim_eval("&l:autoread"), effective = vim.api.nvim_get_option_value("autoread", {}) }`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: what a reload keeps and takes`, () => {
		const ENDINGS = [
			{ name: "CRLF to LF", from: "a\r\nb\r\n", to: "x\ny\n", fileformat: "unix" },
			{ name: "LF to CRLF", from: "a\nb\n", to: "x\r\ny\r\n", fileformat: "dos" },
			{ name: "CRLF stays", from: "a\r\nb\r\n", to: "x\r\ny\r\n", fileformat: "dos" },
			{ name: "mixed stays unix, the CR kept in the line", from: "a\nb\n", to: "x\r\ny\n", fileformat: "unix" },
		];
		for (const c of ENDINGS) {
			it(`'fileformat' follows the new content: ${c.name}; a :w writes pi's bytes back unchanged`, async (t) => {
				const w = await world(t, flavour);
				writeFileSync(w.file, c.from);
				await w.nv.command("edit!");
				await piWrites(w, c.to);
				assert.equal(await w.nv.lua("return vim.bo.fileformat"), c.fileformat);
				assert.equal(await w.nv.lua("return vim.bo.modified"), false);
				await w.nv.command("write");
				assert.equal(readFileSync(w.file, "utf8"), c.to);
				await assertNoErrors(w.nv);
			});
		}

		const EMPTY: { name: string; from: string; to: string; written?: string }[] = [
			{ name: "a line to an empty file", from: "a\n", to: "" },
			{ name: "a line break to an empty file", from: "\n", to: "" },
			{ name: "an empty file to a line break", from: "", to: "\n" },
			{ name: "an empty file to a line", from: "", to: "x\n" },
			// 'fixendofline' (on by default) adds it back at :w, as after Neovim's own read of such a file.
			{ name: "no line break at the end", from: "a\nb\n", to: "a\nb", written: "a\nb\n" },
		];
		for (const c of EMPTY) {
			it(`${c.name}: the buffer holds pi's bytes, a :w writes them back as Neovim does`, async (t) => {
				const w = await world(t, flavour);
				writeFileSync(w.file, c.from);
				await w.nv.command("edit!");
				writeFileSync(w.file, c.to);
				const msg = message(w);
				send(w, msg);
				const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
				assert.equal(state.files?.find((f) => f.file === w.file)?.status, "reloaded");
				assert.equal(await w.nv.lua("return vim.bo.modified"), false);
				await w.nv.command("write");
				assert.equal(readFileSync(w.file, "utf8"), c.written ?? c.to);
				await assertNoErrors(w.nv);
			});
		}

		const DECODE = [
			{ name: "LF, last line ended", text: "a\nb\n", ff: "unix", fenc: "utf-8", lines: ["a", "b"], eol: true },
			{ name: "no line break at the end", text: "a\nb", ff: "unix", fenc: "utf-8", lines: ["a", "b"], eol: false },
			{ name: "CRLF", text: "a\r\nb\r\n", ff: "dos", fenc: "utf-8", lines: ["a", "b"], eol: true },
			{ name: "a BOM", text: "\u{feff}a\n", ff: "unix", fenc: "utf-8", lines: ["a"], eol: true, bomb: true },
			{ name: "an empty file", text: "", ff: "unix", fenc: "utf-8", lines: [], eol: null },
			{ name: "one line break", text: "\n", ff: "unix", fenc: "utf-8", lines: [""], eol: true },
			{ name: "latin1", text: "caf\u00e9\n", ff: "unix", fenc: "latin1", latin1: true, lines: ["café"], eol: true },
		];
		it("M.decode: the lines, 'endofline' and 'bomb' of the verified bytes, written back as exactly those", async (t) => {
			const w = await world(t, flavour);
			const got = await w.nv.lua<unknown[]>(
				`local r = require("pi-ide.inbox.reload")
				return vim.tbl_map(function(c)
					local text = c.latin1 and vim.fn.iconv(c.text, "utf-8", "latin1") or c.text
					local d = r.decode(text, c.ff, c.fenc)
					return { lines = d.lines, eol = d.endofline == nil and vim.NIL or d.endofline, bomb = d.bomb }
				end, ...)`,
				DECODE,
			);
			assert.deepEqual(
				got,
				DECODE.map((c) => ({ lines: c.lines, eol: c.eol, bomb: c.bomb ?? false })),
			);
		});

		it("a change in several places is one undo step; marks on lines pi left alone stay; :checktime and :w ask nothing", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			const before = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
			writeFileSync(w.file, `${before.join("\n")}\n`);
			await w.nv.command("edit!");
			await w.nv.command("7mark a");
			const after = [...before];
			after[1] = "pi 2";
			after.splice(9, 1);
			after.push("pi end");
			await piWrites(w, `${after.join("\n")}\n`);
			assert.deepEqual(await lines(w.nv), after);
			assert.equal(await w.nv.lua('return vim.fn.line("\'a")'), 7, "the mark on an untouched line stays");
			await luaWithoutPrompt(w.nv, `vim.cmd("checktime"); vim.cmd("write")`);
			assert.equal(readFileSync(w.file, "utf8"), `${after.join("\n")}\n`);
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), before, "one undo takes back all of pi's change");
			await assertNoErrors(w.nv);
		});

		it("without LuaJIT's FFI: Neovim's record made current by a quiet :checktime (no W11, no read autocommand)", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			await w.nv.lua(`package.loaded.ffi = nil
				package.preload.ffi = function() error("no FFI in this Neovim") end
				_G.reads = 0
				vim.api.nvim_create_autocmd({ "BufReadPre", "BufReadPost", "FileReadPost" }, {
					callback = function() _G.reads = _G.reads + 1 end,
				})`);
			for (const autoread of [true, false]) {
				await w.nv.command(autoread ? "set autoread" : "set noautoread");
				await piWrites(w, `pi's version, autoread ${autoread}\n`);
				await luaWithoutPrompt(w.nv, `vim.cmd("checktime")`);
				assert.deepEqual(await lines(w.nv), [`pi's version, autoread ${autoread}`]);
				assert.equal(await w.nv.lua("return vim.bo.modified"), false);
			}
			assert.equal(await w.nv.lua("return _G.reads"), 0, "no read autocommand");
			await assertNoErrors(w.nv);
		});

		it("a 'binary' buffer: pi's bytes as they are (CR-LF and a BOM kept in the lines), a :w writes them back", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, "a\nb\n");
			await w.nv.command("setlocal binary");
			await w.nv.command("edit!");
			await piWrites(w, "\u{feff}x\r\ny\r\n");
			assert.deepEqual(await lines(w.nv), ["\u{feff}x\r", "y\r"]);
			await w.nv.command("write");
			assert.equal(readFileSync(w.file, "utf8"), "\u{feff}x\r\ny\r\n");
			await assertNoErrors(w.nv);
		});

		it("a 'nomodifiable' 'readonly' buffer reloads as Neovim's reload does, and stays so (no W10)", async (t) => {
			const w = await world(t, flavour);
			await w.nv.command("setlocal nomodifiable readonly");
			await piWrites(w, "pi's version\n");
			assert.deepEqual(await lines(w.nv), ["pi's version"]);
			assert.deepEqual(await w.nv.lua("return { vim.bo.modifiable, vim.bo.readonly, vim.bo.modified }"), [
				false,
				true,
				false,
			]);
			assert.doesNotMatch(await w.nv.exec("messages"), /W10/);
			await assertNoErrors(w.nv);
		});

		it("a buffer-local noautoread stays; under a global noautoread nothing buffer-local is left", async (t) => {
			const w = await world(t, flavour);
			await w.nv.command("setlocal noautoread");
			const before = await w.nv.lua<{ l: number }>(AUTOREAD);
			await piWrites(w, "one\n");
			assert.deepEqual(await lines(w.nv), ["one"]);
			assert.deepEqual(await w.nv.lua(AUTOREAD), before, "setlocal noautoread kept");

			await w.nv.command("set noautoread"); // global, and (':set') no local value
			const unset = await w.nv.lua<{ l: unknown; effective: boolean }>(AUTOREAD);
			assert.equal(unset.effective, false);
			await piWrites(w, "two\n");
			assert.deepEqual(await lines(w.nv), ["two"]);
			assert.deepEqual(await w.nv.lua(AUTOREAD), unset, "no buffer-local 'autoread' left set");
		});

		it("the undo history survives a reload, also of a file over 'undoreload' (which is left as it was)", async (t) => {
			const w = await world(t, flavour);
			await w.nv.command("set undoreload=5");
			const long = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
			writeFileSync(w.file, `${long.join("\n")}\n`);
			await w.nv.command("edit!");
			await w.nv.input("ggOtyped<Esc>");
			await w.nv.command("write");
			await piWrites(w, "pi's version\n");
			assert.deepEqual(await lines(w.nv), ["pi's version"]);
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), ["typed", ...long], "undo brings back the text before pi's change");
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), long, "and the user's own change before it");
			assert.equal(await w.nv.lua("return vim.o.undoreload"), 5);
		});
	});
});
