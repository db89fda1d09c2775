/**
 * The Neovim client's reads of paths someone else may swap, with the swap made deterministic: a test hook in
 * the client runs between its check of a path and its open (pi's message file, pi-ide.inbox.read), or
 * between its verified read of a buffer's file and the buffer's change to those bytes (pi-ide.inbox.reload),
 * and swaps the file there, as another user racing the client would (test/nvim/reload-race.test.ts races for
 * real). The client must never block (a FIFO), never follow a symlink it did not record, and never leave in a
 * buffer anything but what it verified it read.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { linkSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { assertNoErrors, CONTENT, lines, message, send, type World, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

/** Run `swap` (Lua, given the path) once, from the client's hook `hook` of module `module`. */
async function swapAt(w: World, module: string, hook: string, swap: string, ...args: unknown[]): Promise<void> {
	await w.nv.lua(
		`local mod, hook, args = require(...), select(2, ...), { select(3, ...) }
		local uv = vim.uv or vim.loop
		local swap = loadstring(args[1])
		mod[hook] = function(path)
			mod[hook] = nil
			swap(path, uv, unpack(args, 2))
		end`,
		module,
		hook,
		swap,
		...args,
	);
}

/** A good message from a new live pi reloads the buffer with `text`. */
async function assertReloads(w: World, text: string): Promise<void> {
	writeFileSync(w.file, text);
	const pi = await spawnLiveEditor();
	const msg = message({ ...w, piPid: pi.pid });
	send({ ...w, piPid: pi.pid }, msg, { pid: pi.pid });
	const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "the control message is handled");
	assert.equal(state.files?.find((f) => f.file === w.file && f.pi_pid === pi.pid)?.status, "reloaded");
	assert.deepEqual(await lines(w.nv), text.trimEnd().split("\n"));
}

/** Every text the buffer's undo history can bring back, by undoing all and redoing all. */
const UNDO_STATES = `local seen = {}
	local function note() seen[#seen + 1] = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\\n") end
	for _ = 1, 20 do vim.cmd("silent! undo"); note() end
	for _ = 1, 40 do vim.cmd("silent! redo"); note() end
	return seen`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: a pi message file swapped between the check and the open`, () => {
		const SWAPS = [
			{
				name: "for a FIFO: the open does not block (Neovim would hang for good, SIGTERM too)",
				prepare: (dir: string) => {
					execFileSync("mkfifo", ["-m", "600", join(dir, "swap-in")]);
				},
			},
			{
				name: "for a symlink to a valid message: not followed",
				prepare: (dir: string, w: World) => {
					const elsewhere = join(w.nv.tmp, "planted.json");
					writeFileSync(elsewhere, JSON.stringify(message(w)), { mode: 0o600 });
					symlinkSync(elsewhere, join(dir, "swap-in"));
				},
			},
		];
		for (const c of SWAPS) {
			it(c.name, async (t) => {
				const w = await world(t, flavour);
				c.prepare(w.nv.stateDir, w);
				await swapAt(
					w,
					"pi-ide.inbox.read",
					"_between_check_and_open",
					"local path, uv, from = ...; assert(uv.fs_rename(from, path))",
					join(w.nv.stateDir, "swap-in"),
				);
				writeFileSync(w.file, "pi's version\n");
				send(w, message(w));
				// The swapped-in file is never read: the buffer stays, and Neovim answers the next message.
				await assertReloads(w, "control\n");
				assert.equal(await w.nv.lua("return require('pi-ide.inbox.read')._between_check_and_open == nil"), true);
				await assertNoErrors(w.nv);
			});
		}
	});

	describe(`nvim ${flavour.name}: a buffer's file swapped during a reload`, () => {
		it("for a symlink to a secret between the verified read and the apply: the verified bytes, no trace", async (t) => {
			const w = await world(t, flavour);
			const secret = join(w.nv.tmp, "secret.txt");
			writeFileSync(secret, "SECRET\n");
			await swapAt(
				w,
				"pi-ide.inbox.reload",
				"_between_verify_and_reload",
				"local path, uv, secret = ...; assert(uv.fs_rename(path, path .. '.away')); assert(uv.fs_symlink(secret, path))",
				secret,
			);
			writeFileSync(w.file, "pi's version\n");
			const msg = message(w);
			send(w, msg);
			const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "reloaded");
			assert.deepEqual(await lines(w.nv), ["pi's version"], "the bytes of the verified read, nothing read after");
			assert.equal(await w.nv.lua("return vim.bo.modified"), false);
			const undo = await w.nv.lua<string[]>(UNDO_STATES);
			assert.ok(!undo.some((text) => text.includes("SECRET")), `no undo state holds the secret: ${undo.join(" | ")}`);

			// The link stays: what the buffer was read from is still the regular file, so it is never read through.
			const later = message(w);
			send(w, later);
			const refused = await w.nv.until((s) => s.pi?.seq === later["seq"], "the later message is handled");
			assert.equal(refused.files?.find((f) => f.file === w.file)?.status, "refused");
			assert.ok(!(await lines(w.nv)).includes("SECRET"));

			// The real file back: reloads work again.
			rmSync(w.file);
			renameSync(`${w.file}.away`, w.file);
			await assertReloads(w, "pi's second version\n");
			await assertNoErrors(w.nv);
		});

		it("for a symlink to a secret between the path check and the open: not followed, refused", async (t) => {
			const w = await world(t, flavour);
			const secret = join(w.nv.tmp, "secret.txt");
			writeFileSync(secret, "SECRET\n");
			await swapAt(
				w,
				"pi-ide.inbox.reload",
				"_between_check_and_open",
				"local path, uv, secret = ...; assert(uv.fs_unlink(path)); assert(uv.fs_symlink(secret, path))",
				secret,
			);
			const msg = message(w);
			send(w, msg);
			const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "refused");
			assert.deepEqual(await lines(w.nv), CONTENT.trimEnd().split("\n"));
		});
	});

	describe(`nvim ${flavour.name}: is the opened file the one the buffer was read from`, () => {
		const file = (ino: number, nlink = 1, type = "file") => ({ type, dev: 1, ino, nlink });
		const CASES: { name: string; was: unknown; opened: unknown; atReal?: unknown; same: boolean }[] = [
			{ name: "no record (read before the client): a regular file", was: null, opened: file(5), same: true },
			{ name: "not a regular file", was: null, opened: file(5, 1, "fifo"), same: false },
			{ name: "the recorded file", was: { type: "file", dev: 1, ino: 5 }, opened: file(5, 3), same: true },
			{ name: "a new file (replaced), one link", was: { type: "file", dev: 1, ino: 5 }, opened: file(6), same: true },
			{
				name: "a new file with two links (a hard link to any file of yours)",
				was: { type: "file", dev: 1, ino: 5 },
				opened: file(6, 2),
				same: false,
			},
			{
				name: "through a link: the recorded target",
				was: { type: "link", dev: 1, ino: 5 },
				opened: file(5),
				atReal: file(9),
				same: true,
			},
			{
				name: "through a link: the target replaced at the recorded real path",
				was: { type: "link", dev: 1, ino: 5 },
				opened: file(6),
				atReal: file(6),
				same: true,
			},
			{
				name: "through a link re-pointed elsewhere",
				was: { type: "link", dev: 1, ino: 5 },
				opened: file(7),
				atReal: file(6),
				same: false,
			},
			{
				name: "through a link, the recorded real path gone",
				was: { type: "link", dev: 1, ino: 5 },
				opened: file(7),
				same: false,
			},
		];
		it("one table", async (t) => {
			const w = await world(t, flavour);
			const got = await w.nv.lua<boolean[]>(
				`local r = require("pi-ide.inbox.reload")
				return vim.tbl_map(function(c)
					local nilify = function(v) return v ~= vim.NIL and v or nil end
					return r.is_recorded_file(nilify(c.was), c.opened, nilify(c.atReal))
				end, ...)`,
				CASES.map((c) => ({ ...c, was: c.was ?? null, atReal: c.atReal ?? null })),
			);
			assert.deepEqual(
				CASES.map((c, i) => ({ name: c.name, same: got[i] })),
				CASES.map((c) => ({ name: c.name, same: c.same })),
			);
		});

		it("a hard link to a file of yours swapped in for the buffer's file is refused", async (t) => {
			const w = await world(t, flavour);
			const secret = join(w.nv.tmp, "secret.txt");
			writeFileSync(secret, "SECRET\n");
			rmSync(w.file);
			linkSync(secret, w.file);
			const msg = message(w);
			send(w, msg);
			const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "refused");
			assert.deepEqual(await lines(w.nv), CONTENT.trimEnd().split("\n"));
		});
	});
});
