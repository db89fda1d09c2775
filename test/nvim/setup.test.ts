/**
 * Loading and configuring the Neovim client in a real Neovim: setup() validation, the opt-outs
 * (vim.g.pi_ide_disable, enabled = false), :PiIde and its subcommands, :checkhealth pi-ide, :help pi-ide,
 * loading twice (a packpath copy plus a plugin-manager copy), and autocmds that survive their own callbacks
 * (0.10 deletes an autocmd whose callback returns a truthy value).
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, PLUGIN_DIR, startNvim } from "../helpers/nvim.ts";

const SETUP_ERRORS: [string, string][] = [
	["{ debounce_ms = '200' }", "(pi-ide) `debounce_ms` should be a number, not string"],
	[
		"{ debounce_ms = -1 }",
		"(pi-ide) `debounce_ms` should be a whole number of milliseconds between 0 and 60000, not -1",
	],
	[
		"{ debounce_ms = 1.5 }",
		"(pi-ide) `debounce_ms` should be a whole number of milliseconds between 0 and 60000, not 1.5",
	],
	[
		"{ max_selection_bytes = 0 }",
		"(pi-ide) `max_selection_bytes` should be a whole number of bytes between 1 and 524288 (pi reads state files up to 1 MiB), not 0",
	],
	["{ enabled = 'yes' }", "(pi-ide) `enabled` should be a boolean, not string"],
	[
		"{ debounc_ms = 10 }",
		"(pi-ide) unknown option `debounc_ms` (known: debounce_ms, enabled, follow, max_selection_bytes, review_marks)",
	],
	["'fast'", "(pi-ide) `setup()` expects a table of options, not string"],
];

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: setup, commands, health, loading`, { concurrency: 8 }, () => {
		it("setup() validates its options with clear messages and keeps the previous config", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.lua("_G.notes = {}; vim.notify = function(m, l) table.insert(_G.notes, { m, l }) end");
			for (const [opts, message] of SETUP_ERRORS) {
				assert.deepEqual(await nv.lua(`return { require('pi-ide').setup(${opts}) }`), [false, message], opts);
			}
			const notes = await nv.lua<[string, number][]>("return _G.notes");
			assert.deepEqual(
				notes.map(([m, l]) => [m, l]),
				SETUP_ERRORS.map(([, m]) => [m, 4]),
				"each reported once at ERROR level",
			);
			assert.equal((await nv.status()).config.debounce_ms, 200, "the defaults stay");
			assert.deepEqual(
				await nv.lua("return { require('pi-ide').setup({ debounce_ms = 50, max_selection_bytes = 10 }) }"),
				[true],
			);
			const st = await nv.status();
			assert.deepEqual([st.config.debounce_ms, st.config.max_selection_bytes, st.enabled], [50, 10, true]);
		});

		it("vim.g.pi_ide_disable keeps it off (no dir, no file) until :PiIde enable", async (t) => {
			const nv = await startNvim(t, flavour, { preCmds: ["let g:pi_ide_disable = 1"] });
			await nv.command("cd /");
			await nv.call("nvim_buf_set_lines", 0, 0, -1, false, ["x"]);
			await nv.settle();
			const st = await nv.status();
			assert.deepEqual([st.enabled, st.writes, st.failures], [false, 0, 0]);
			assert.equal(existsSync(nv.stateDir), false);
			assert.equal(await nv.call("nvim_call_function", "exists", [":PiIde"]), 2, ":PiIde is still defined");
			await nv.command("PiIde enable");
			await nv.until((x) => x.cwd === "/", "written after :PiIde enable");
		});

		it("setup({ enabled = false }) stops and deletes the file", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			assert.deepEqual(await nv.lua("return { require('pi-ide').setup({ enabled = false }) }"), [true]);
			assert.equal(existsSync(nv.statePath), false);
			assert.equal((await nv.status()).enabled, false);
		});

		it(":PiIde shows the path, the last write and a summary; bad subcommands are reported", async (t) => {
			const nv = await startNvim(t, flavour);
			const path = join(nv.tmp, "x.lua");
			writeFileSync(path, "local a = 1\nreturn a\n");
			await nv.command("edit x.lua");
			await nv.until((x) => x.active_buffer.file === path, "x.lua");
			let out = await nv.exec("PiIde");
			assert.match(out, /pi-ide: enabled/);
			assert.ok(out.includes(`state file: ${nv.statePath} (present)`), out);
			assert.match(out, /last write: \d\d:\d\d:\d\d \(\d+\.\ds ago\), \d+ writes, \d+ unchanged skipped/);
			assert.ok(out.includes(`buffer: ${path} [lua] line 1 col 1 of 2`), out);
			assert.match(out, /selection: none/);
			assert.ok(out.includes(`cwd: ${nv.tmp}`), out);
			await nv.input("vl<Esc>");
			await nv.until((x) => x.active_buffer.selection !== null, "selection");
			out = await nv.exec("PiIde status");
			assert.match(out, /selection: 1:1-1:2, 2 bytes, made \d+\.\ds ago/);
			out = await nv.exec("PiIde disable");
			assert.match(out, /pi-ide: disabled/);
			assert.ok(out.includes("(absent)"), out);
			await assert.rejects(nv.exec("PiIde frobnicate"), /unknown subcommand `frobnicate`/);
		});

		it(":checkhealth pi-ide reports version, state dir, last write and the file", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			await nv.command("checkhealth pi-ide");
			const text = (await nv.call<string[]>("nvim_buf_get_lines", 0, 0, -1, false)).join("\n");
			assert.ok(text.includes(`Neovim ${nv.version} is supported`), text);
			assert.ok(text.includes(`${nv.stateDir}: directory, owner uid ${process.getuid?.()}, mode 700`), text);
			assert.match(text, /OK:? \d{4}-\d\d-\d\d \d\d:\d\d:\d\d, \d+\.\d s ago/);
			assert.ok(text.includes(`state file present: ${nv.statePath}`), text);
			assert.doesNotMatch(text, /ERROR|WARNING/);
		});

		it(":help pi-ide opens the vimdoc", async (t) => {
			const nv = await startNvim(t, flavour);
			for (const tag of [
				"pi-ide",
				"pi-ide-options",
				"pi-ide-commands",
				":PiIde",
				"g:pi_ide_disable",
				"pi-ide-health",
				"pi-ide-approval",
				":PiIde-approve",
				":PiIde-proposal",
			]) {
				await nv.command(`help ${tag}`);
				const name = await nv.call<string>("nvim_buf_get_name", 0);
				assert.equal(name, join(PLUGIN_DIR, "doc/pi-ide.txt"), tag);
			}
		});

		it("loading twice (packpath link + plugin-manager copy + :runtime!) is harmless", async (t) => {
			const nv0 = await startNvim(t, flavour);
			const single = (await nv0.call<unknown[]>("nvim_get_autocmds", { group: "PiIde" })).length;
			const base = nv0.tmp;
			const start = join(base, "site/pack/pi-ide-context/start");
			mkdirSync(start, { recursive: true });
			symlinkSync(PLUGIN_DIR, join(start, "pi-ide"));
			cpSync(PLUGIN_DIR, join(base, "manager/pi-ide"), { recursive: true });
			const nv = await startNvim(t, flavour, {
				rtp: [join(base, "manager/pi-ide"), PLUGIN_DIR],
				preCmds: [`set packpath^=${join(base, "site")}`],
			});
			await nv.until(() => true, "first write");
			await nv.command("runtime! plugin/pi-ide.lua");
			await nv.command("packloadall!");
			await nv.command("runtime! plugin/pi-ide.lua");
			assert.equal((await nv.call<unknown[]>("nvim_get_autocmds", { group: "PiIde" })).length, single);
			assert.equal(await nv.call("nvim_get_vvar", "errmsg"), "");
			const copies = await nv.call<string[]>("nvim_get_runtime_file", "plugin/pi-ide.lua", true);
			assert.deepEqual(
				[...copies].sort(),
				[join(base, "manager/pi-ide"), PLUGIN_DIR, join(start, "pi-ide")]
					.map((d) => join(d, "plugin/pi-ide.lua"))
					.sort(),
				"three copies are visible",
			);
			await nv.command("cd /");
			await nv.until((x) => x.cwd === "/", "still writing");
		});

		it("autocmds survive their own callbacks (0.10 deletes those returning a truthy value)", async (t) => {
			const nv = await startNvim(t, flavour);
			writeFileSync(join(nv.tmp, "a.txt"), "one\ntwo\n");
			const count = async () => (await nv.call<unknown[]>("nvim_get_autocmds", { group: "PiIde" })).length;
			const initial = await count();
			assert.ok(initial >= 8, `${initial} autocmds`);
			mkdirSync(join(nv.tmp, "d"));
			for (const step of ["edit a.txt", "normal! j", "cd d", "split", "wincmd w", "enew", "bwipeout!"]) {
				await nv.command(step);
			}
			await nv.input("ihi<Esc>vj<Esc>");
			await nv.until((x) => x.active_buffer.selection !== null, "events handled");
			assert.equal(await count(), initial);
			// In d/ now: a new buffer, so the wait cannot be met by the a.txt state written before.
			await nv.command("edit a.txt");
			await nv.until(
				(x) => x.active_buffer.file === join(nv.tmp, "d/a.txt"),
				"still writing after every kind of event",
			);
		});
	});
});
