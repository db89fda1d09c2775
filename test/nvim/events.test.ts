/**
 * The Neovim client against a real Neovim: every field of the state file and every event that must rewrite
 * it (buffer/window switch, cursor, text, insert mode, :cd/:tcd/:lcd), debouncing, skipped unchanged writes,
 * non-file buffers and the write rate under rapid movement. Runs once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, type Nvim, nowSeconds, PLUGIN_DIR, startNvim } from "../helpers/nvim.ts";

const file = (nv: Nvim, name: string, lines: string[]): string => {
	const path = join(nv.tmp, name);
	writeFileSync(path, `${lines.join("\n")}\n`);
	return path;
};

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: fields and events`, { concurrency: 8 }, () => {
		it("writes every field at startup (unnamed buffer)", async (t) => {
			const nv = await startNvim(t, flavour);
			const before = nowSeconds();
			const s = await nv.until(() => true, "the first write");
			assert.equal(s.pid, nv.pid);
			assert.equal(s.app, "nvim");
			assert.equal(s.cwd, nv.tmp);
			assert.ok(Math.abs(s.timestamp - before) < 10, `timestamp ${s.timestamp} is about now (${before})`);
			const tick = await nv.lua<number>("return vim.b.changedtick");
			assert.deepEqual(s.active_buffer, {
				file: null,
				name: "[No Name]",
				language: null,
				cursor: { line: 1, column: 1 },
				selection: null,
				modified: false,
				lines_total: 1,
				// v0.3: the buffer version; no checker has reported, so diagnostics are unknown (null).
				version: tick,
				diagnostics: null,
			});
			assert.equal(s.protocol, "0.3");
			assert.equal(s.pi, null);
			assert.deepEqual(s.decisions, [], "v0.4: Neovim answers approvals");
			assert.deepEqual(Object.keys(s).sort(), [
				"active_buffer",
				"app",
				"argv",
				"cwd",
				"decisions",
				"pi",
				"pid",
				"pid_ns",
				"protocol",
				"timestamp",
			]);
		});

		it("argv: launch args without argv[0], --embed, --headless and --listen <addr>", async (t) => {
			const nv = await startNvim(t, flavour, { args: ["--listen", "pi-ide-test.sock", "notes.txt", "-c", "set nu"] });
			const s = await nv.until((x) => x.active_buffer.name === "notes.txt", "notes.txt opened from argv");
			assert.deepEqual(s.argv, [
				"--clean",
				"-n",
				"-i",
				"NONE",
				"--cmd",
				`set rtp+=${PLUGIN_DIR}`,
				"--cmd",
				"let g:loaded_python3_provider=0",
				"notes.txt",
				"-c",
				"set nu",
			]);
			assert.equal(s.active_buffer.file, join(nv.tmp, "notes.txt"), "a new file is still a file");
		});

		it("buffer switch: file, name, language, lines_total, written without waiting for the debounce", async (t) => {
			const nv = await startNvim(t, flavour);
			const a = file(nv, "a.ts", ["const a = 1;", "const b = 2;", "", "export { a, b };"]);
			const b = file(nv, "b.md", ["# title"]);
			// A 60 s debounce: only prompt writes can land within the poll deadline.
			assert.deepEqual(await nv.lua("return { require('pi-ide').setup({ debounce_ms = 60000 }) }"), [true]);
			await nv.command("edit a.ts");
			let s = await nv.until((x) => x.active_buffer.file === a, "a.ts active");
			assert.deepEqual(s.active_buffer, {
				file: a,
				name: "a.ts",
				language: "typescript",
				cursor: { line: 1, column: 1 },
				selection: null,
				modified: false,
				lines_total: 4,
				version: await nv.lua<number>("return vim.b.changedtick"),
				diagnostics: null,
			});
			await nv.command("edit b.md");
			s = await nv.until((x) => x.active_buffer.file === b, "b.md active");
			assert.equal(s.active_buffer.language, "markdown");
			assert.equal(s.active_buffer.lines_total, 1);
			const abuf = await nv.call<number>("nvim_call_function", "bufnr", ["a.ts"]);
			await nv.call("nvim_set_current_buf", abuf);
			await nv.until((x) => x.active_buffer.file === a, "nvim_set_current_buf back to a.ts");
		});

		it("cursor: 1-based line, 1-based byte column, multibyte, debounced", async (t) => {
			const nv = await startNvim(t, flavour);
			file(nv, "u.txt", ["héllo wörld", "日本語テキスト", ""]);
			await nv.command("edit u.txt");
			await nv.until((x) => x.active_buffer.name === "u.txt", "u.txt");
			const cases: [number, number, number][] = [
				// [line, 0-based byte col for set_cursor, expected 1-based byte column]
				// No two consecutive cases expect the same position, so each wait needs a new write.
				[1, 7, 8], // "w": after "héllo " (h, é=2 bytes, llo, space) = 7 bytes
				[1, 8, 9], // "ö" starts at byte 9
				[2, 3, 4], // "本" (each kanji is 3 bytes)
				[1, 9, 9], // inside "ö": Neovim snaps to the character's first byte
				[2, 6, 7], // "語"
				[3, 0, 1], // empty line
			];
			for (const [line, col, column] of cases) {
				await nv.call("nvim_win_set_cursor", 0, [line, col]);
				await nv.settle();
				await nv.until(
					(x) => x.active_buffer.cursor.line === line && x.active_buffer.cursor.column === column,
					`cursor ${line}:${column} after set_cursor(${line}, ${col})`,
				);
			}
		});

		it("text changes: lines_total and modified; :write clears modified", async (t) => {
			const nv = await startNvim(t, flavour);
			const f = file(nv, "t.py", ["x = 1"]);
			await nv.command("edit t.py");
			await nv.until((x) => x.active_buffer.file === f, "t.py");
			await nv.call("nvim_buf_set_lines", 0, 1, 1, false, ["y = 2", "z = 3"]);
			await nv.settle();
			let s = await nv.until((x) => x.active_buffer.lines_total === 3, "3 lines after set_lines");
			assert.equal(s.active_buffer.modified, true);
			assert.equal(s.active_buffer.language, "python");
			await nv.command("write");
			s = await nv.until((x) => !x.active_buffer.modified, "modified=false after :write");
			assert.equal(s.active_buffer.lines_total, 3);
		});

		it("insert mode: typing updates cursor and text (CursorMovedI, TextChangedI)", async (t) => {
			const nv = await startNvim(t, flavour);
			file(nv, "i.txt", ["first"]);
			await nv.command("edit i.txt");
			await nv.until((x) => x.active_buffer.name === "i.txt", "i.txt");
			await nv.input("Go");
			await nv.input("añb");
			const s = await nv.until(
				(x) => x.active_buffer.lines_total === 2 && x.active_buffer.cursor.column === 5,
				"insert-mode typing written (a + ñ(2 bytes) + b = 4 bytes, cursor after them at byte 5)",
			);
			assert.equal(s.active_buffer.cursor.line, 2);
			assert.equal(s.active_buffer.modified, true);
			assert.equal((await nv.call<{ mode: string }>("nvim_get_mode")).mode, "i", "still in insert mode");
		});

		it("window switch: the current window's buffer (WinEnter)", async (t) => {
			const nv = await startNvim(t, flavour);
			const a = file(nv, "a.c", ["int a;"]);
			const b = file(nv, "b.c", ["int b;", "int c;"]);
			await nv.command("edit a.c");
			await nv.command("vsplit b.c");
			await nv.until((x) => x.active_buffer.file === b, "b.c in the new window");
			await nv.command("wincmd w");
			const s = await nv.until((x) => x.active_buffer.file === a, "a.c after wincmd w");
			assert.equal(s.active_buffer.language, "c");
			await nv.command("wincmd w");
			await nv.until((x) => x.active_buffer.file === b, "b.c again");
		});

		it("directory changes: :cd, :tcd, :lcd and the current window's effective cwd", async (t) => {
			const nv = await startNvim(t, flavour);
			for (const d of ["one", "two", "three"]) mkdirSync(join(nv.tmp, d));
			await nv.lua("require('pi-ide').setup({ debounce_ms = 60000 })");
			await nv.command("cd one");
			await nv.until((x) => x.cwd === join(nv.tmp, "one"), ":cd one");
			await nv.command("tcd ../two");
			await nv.until((x) => x.cwd === join(nv.tmp, "two"), ":tcd two");
			await nv.command("vsplit");
			await nv.command("lcd ../three");
			await nv.until((x) => x.cwd === join(nv.tmp, "three"), ":lcd three");
			await nv.command("wincmd w");
			await nv.until((x) => x.cwd === join(nv.tmp, "two"), "the other window has no :lcd: back to the tab's dir");
			await nv.call("nvim_call_function", "chdir", [nv.tmp]);
			await nv.until((x) => x.cwd === nv.tmp, "chdir()");
		});

		it("debounce: a cursor move alone waits; the next prompt write carries it", async (t) => {
			const nv = await startNvim(t, flavour);
			file(nv, "d.txt", ["1", "2", "3"]);
			await nv.command("edit d.txt");
			await nv.until((x) => x.active_buffer.name === "d.txt", "d.txt");
			await nv.lua("require('pi-ide').setup({ debounce_ms = 60000 })");
			await nv.until((x) => x.active_buffer.name === "d.txt", "rewritten after setup");
			const writes = (await nv.status()).writes;
			await nv.call("nvim_win_set_cursor", 0, [3, 0]);
			await nv.settle();
			await nv.settle();
			assert.equal(nv.readState()?.active_buffer.cursor.line, 1, "not written yet: the move is debounced");
			assert.equal((await nv.status()).writes, writes);
			mkdirSync(join(nv.tmp, "sub"));
			await nv.command("cd sub");
			const s = await nv.until((x) => x.cwd === join(nv.tmp, "sub"), ":cd written promptly");
			assert.equal(s.active_buffer.cursor.line, 3, "the pending cursor move went out with it");
		});

		it("skips writes whose content would not change", async (t) => {
			const nv = await startNvim(t, flavour);
			file(nv, "s.txt", ["a", "b"]);
			await nv.command("edit s.txt");
			await nv.until((x) => x.active_buffer.name === "s.txt", "s.txt");
			const before = await nv.untilStatus((x) => x.writes > 0, "a write");
			// Insert mode entered and left at column 1: InsertLeave asks for a prompt write, nothing changed.
			await nv.input("i");
			await nv.input("<Esc>");
			const after = await nv.untilStatus((x) => x.skipped > before.skipped, "the unchanged write skipped");
			assert.equal(after.writes, before.writes);
		});

		it("non-file buffers (terminal, help, quickfix, nofile, prompt, acwrite) keep describing the file the user was last in", async (t) => {
			const nv = await startNvim(t, flavour);
			file(nv, "real.txt", ["x", "yy", "zzz"]);
			const real = join(nv.tmp, "real.txt");
			const steps = [
				"help",
				"enew | setlocal buftype=nofile | file scratch.txt",
				"enew | setlocal buftype=prompt | file ask",
				"enew | setlocal buftype=acwrite | file fugitive:///x/.git//0/a.txt",
				"cgetexpr ['real.txt:1:x'] | copen",
				"enew | terminal",
			];
			for (const [i, cmd] of steps.entries()) {
				// Lines 2 and 3 in turn: each step moves the cursor, and never to 1:1, where the previous step's
				// non-file buffer left it in this same window (a move that ends where Neovim last saw the cursor in
				// a window fires no CursorMoved; suspected, not proven, behind a rare failure of this test).
				const line = (i % 2) + 2;
				await nv.command("only | edit real.txt");
				await nv.call("nvim_win_set_cursor", 0, [line, 0]);
				await nv.until((x) => x.active_buffer.cursor.line === line, `real.txt line ${line}`);
				await nv.command("split");
				await nv.command(cmd);
				await nv.settle();
				assert.notEqual(await nv.call("nvim_get_option_value", "buftype", {}), "", `${cmd} is not a file buffer`);
				// Written promptly (WinEnter/BufEnter): a status check that the write happened, then the state.
				const before = (await nv.status()).writes;
				await nv.command("doautocmd <nomodeline> WinEnter");
				await nv.untilStatus((x) => x.writes + x.skipped > before, `a write after ${cmd}`);
				const s = nv.readState();
				assert.equal(s?.active_buffer.file, real, cmd);
				assert.equal(s?.active_buffer.cursor.line, line, `cursor after ${cmd}`);
				assert.equal(s?.active_buffer.language, "text", `language after ${cmd}`);
			}
		});

		it("non-file buffers with no file visited before, and URL names, report file: null", async (t) => {
			const nv = await startNvim(t, flavour);
			const steps: { cmd: string; name: (n: string) => boolean; language: string | null }[] = [
				{ cmd: "help | only", name: (n) => n === "help.txt", language: "help" },
				{ cmd: "enew | setlocal buftype=nofile | file scratch.txt", name: (n) => n === "scratch.txt", language: null },
				{ cmd: "enew | file scp://host/dir/f.txt", name: (n) => n === "scp://host/dir/f.txt", language: null },
				{ cmd: "enew | terminal", name: (n) => n.startsWith("term://"), language: null },
			];
			for (const step of steps) {
				await nv.command(step.cmd);
				await nv.settle();
				const s = await nv.until((x) => step.name(x.active_buffer.name), `buffer after ${step.cmd}`);
				assert.equal(s.active_buffer.file, null, step.cmd);
				assert.equal(s.active_buffer.language, step.language, `language after ${step.cmd}`);
			}
		});

		it("500 rapid cursor moves: writes stay under 5 per second and the last position lands", async (t) => {
			const nv = await startNvim(t, flavour);
			file(
				nv,
				"big.txt",
				Array.from({ length: 600 }, (_, i) => `line ${i + 1}`),
			);
			await nv.command("edit big.txt");
			await nv.until((x) => x.active_buffer.name === "big.txt", "big.txt");
			await nv.lua(
				"_G.moves = 0; vim.api.nvim_create_autocmd('CursorMoved', { callback = function() _G.moves = _G.moves + 1 end })",
			);
			const before = await nv.untilStatus((x) => x.writes > 0, "a write");
			const started = performance.now();
			for (let i = 1; i <= 500; i++) {
				await nv.call("nvim_win_set_cursor", 0, [i + 1, i % 5]);
			}
			await nv.settle();
			const elapsed = performance.now() - started;
			const s = await nv.until((x) => x.active_buffer.cursor.line === 501, "the last position written");
			assert.equal(s.active_buffer.cursor.column, 1);
			const moves = await nv.lua<number>("return _G.moves");
			// Neovim may fold two moves into one CursorMoved when both requests arrive before it idles.
			assert.ok(moves >= 450, `CursorMoved fired for (nearly) every move (${moves})`);
			const after = await nv.status();
			const writes = after.writes - before.writes;
			// Writes are at least 200 ms of real time apart (the client refreshes libuv's clock when it arms the
			// timer). Counted from `before` to `after`: one per 200 ms of `elapsed`, one already armed at
			// `before`, and the trailing write that lands after `elapsed` was taken.
			const bound = Math.ceil(elapsed / 200) + 2;
			assert.ok(
				writes >= 1 && writes <= bound,
				`${writes} writes for 500 moves in ${elapsed.toFixed(0)} ms (bound ${bound})`,
			);
		});
	});
});
