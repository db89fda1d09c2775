/**
 * What the Neovim client says, on an 80-column UI: never a hit-enter prompt (a line break in a message
 * field or a file name, a state dir of another user at startup), a flood of malformed messages rate-limited
 * and summarised, unsaved conflicts of one run said once naming every file, `:PiIde diff` comparing without
 * ever risking the unsaved text, and the statusline and :PiIde dropping pi once the client is disabled or
 * pi is gone.
 */
import assert from "node:assert/strict";
import { chownSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, removeLater, startNvim } from "../helpers/nvim.ts";
import {
	CONTENT,
	lines,
	luaWithoutPrompt,
	type Mode,
	message,
	NARROW,
	notices,
	send,
	untilMessageLine,
	untilStatusline,
	type World,
	world,
} from "../helpers/nvim-inbox.ts";
import { pollFor } from "../helpers/poll.ts";

after(killAllEditors);

const notBlocked = async (w: { nv: World["nv"] }) =>
	assert.equal((await w.nv.call<Mode>("nvim_get_mode")).blocking, false, "no prompt waits for a key");

const piIde = (w: World) => luaWithoutPrompt<string>(w.nv, "return vim.fn.execute('PiIde')");

/** Type into a.txt (unsaved), let pi change it on disk and say so in one message with `others`. */
async function conflict(w: World, others: string[] = []): Promise<void> {
	writeFileSync(w.file, "pi's version\n");
	const msg = message(w);
	send(w, { ...msg, changed: [w.file, ...others].map((file) => ({ file, seq: msg["seq"], tool: "write" })) });
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
}

/** Open `name` (in the test dir) in a hidden buffer with an unsaved change; returns its path. */
async function unsavedOther(w: World, name: string): Promise<string> {
	const path = join(w.nv.tmp, name);
	writeFileSync(path, "original\n");
	await w.nv.lua(
		"local b = vim.fn.bufadd(...); vim.fn.bufload(b); vim.api.nvim_buf_set_lines(b, 0, 0, false, { 'USER' })",
		path,
	);
	writeFileSync(path, "pi's version\n");
	return path;
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: notices never open a prompt`, { concurrency: 2 }, () => {
		it("a line break in a message's pid field: one inert line, no prompt", async (t) => {
			const w = await world(t, flavour, NARROW);
			send(w, message(w, { pid: "4242\nline two\nline three" }));
			const line = await untilMessageLine(w.nv, /ignoring pi-/);
			assert.doesNotMatch(line, /line two/, "the field's text is not shown");
			await notBlocked(w);
			assert.match(await piIde(w), /pid field a string does not match the file name/);
		});

		it("a line break in a file name: the unsaved-buffer notice is one line, shown as ^J", async (t) => {
			const w = await world(t, flavour, NARROW);
			const odd = join(w.nv.tmp, "odd\nname.txt");
			writeFileSync(odd, "x\n");
			await w.nv.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b); vim.api.nvim_set_current_buf(b)", odd);
			await w.nv.input("ggOUSER<Esc>");
			writeFileSync(odd, "pi's version\n");
			send(w, message(w, {}, odd));
			// Neovim keeps a line break in a buffer name as NUL (^@); in pi's message it is ^J.
			const line = await untilMessageLine(w.nv, /odd\^[@J]name\.txt/);
			assert.match(line, /pi changed/);
			await notBlocked(w);
			assert.match(await piIde(w), /not reloaded: pi changed odd\^[@J]name\.txt/);
		});

		it("a state dir of another user: one line at startup, no prompt; :PiIde has the whole reason", async (t) => {
			const run = mkdtempSync(join(tmpdir(), "pi-ide-foreign-"));
			removeLater(t, run);
			mkdirSync(join(run, "pi-ide"), { mode: 0o700 });
			chownSync(join(run, "pi-ide"), 4242, 4242);
			const nv = await startNvim(t, flavour, { ...NARROW, runtimeDir: run });
			const line = await untilMessageLine(nv, /\(:PiIde\)/);
			assert.match(line, /^\(pi-ide\) not writing the state file: .*… \(:PiIde\)/);
			await notBlocked({ nv });
			const status = await luaWithoutPrompt<string>(nv, "return vim.fn.execute('PiIde')");
			assert.match(status, /warning: \(pi-ide\) not writing the state file: .*4242/);
		});

		it("1,000 malformed messages: a few warnings, one line counting the rest; :PiIde summarises", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.lua("require('pi-ide.notice').WINDOW_S = 1");
			for (let i = 0; i < 1000; i++) writeRawStateFile(w.nv.stateDir, `pi-${100000 + i}.json`, "{not json");
			await untilMessageLine(w.nv, /more warnings held back: see :PiIde/);
			await notBlocked(w);
			assert.ok((await notices(w.nv, /ignoring pi-/)) <= 3, "at most a burst of warnings");
			const status = await piIde(w);
			assert.ok(status.split("\n").length < 20, status);
			assert.match(status, /ignored 995 more pi message files/);
		});
	});

	describe(`nvim ${flavour.name}: unsaved conflicts and :PiIde diff`, { concurrency: 2 }, () => {
		it("two unsaved conflicts in one run: one notice naming both", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.input("ggOUSER<Esc>");
			const other = await unsavedOther(w, "b.txt");
			await conflict(w, [other]);
			const line = await untilMessageLine(w.nv, /2 unsaved files: a\.txt, b\.txt/);
			assert.match(line, /\(:PiIde\)/);
			await w.nv.settle();
			assert.equal(await notices(w.nv, /pi changed/), 1, "said once for the run");
		});

		it("a conflict after an earlier one: the notice names both", async (t) => {
			const w = await world(t, flavour);
			await w.nv.input("ggOUSER<Esc>");
			await conflict(w);
			await pollFor(async () => (await notices(w.nv, /pi changed a\.txt on disk/)) === 1, "the first conflict");
			const other = await unsavedOther(w, "b.txt");
			send(w, message(w, {}, other));
			await pollFor(
				async () => (await notices(w.nv, /pi changed 2 files you have unsaved edits in: a\.txt, b\.txt/)) === 1,
				"the second names both",
			);
		});

		it(":PiIde diff shows the file beside the buffer, read-only, in diff mode; the unsaved text stays", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.input("ggOUSER<Esc>");
			await conflict(w);
			await luaWithoutPrompt(w.nv, "vim.cmd('PiIde diff')");
			const view = await luaWithoutPrompt<{
				wins: number;
				here: string[];
				modified: boolean;
				diff: boolean[];
				scratch: { lines: string[]; buftype: string; modifiable: boolean };
			}>(
				w.nv,
				`local wins = vim.api.nvim_tabpage_list_wins(0)
				local scratch
				for _, win in ipairs(wins) do
					local b = vim.api.nvim_win_get_buf(win)
					if vim.bo[b].buftype == "nofile" then scratch = b end
				end
				return {
					wins = #wins,
					here = vim.api.nvim_buf_get_lines(0, 0, -1, false),
					modified = vim.bo.modified,
					diff = vim.tbl_map(function(win) return vim.wo[win].diff end, wins),
					scratch = { lines = vim.api.nvim_buf_get_lines(scratch, 0, -1, false), buftype = vim.bo[scratch].buftype,
						modifiable = vim.bo[scratch].modifiable },
				}`,
			);
			assert.deepEqual(view, {
				wins: 2,
				here: ["USER", ...CONTENT.trimEnd().split("\n")],
				modified: true,
				diff: [true, true],
				scratch: { lines: ["pi's version"], buftype: "nofile", modifiable: false },
			});
			await notBlocked(w);
			assert.doesNotMatch(await w.nv.exec("messages"), /W12|W11/);
			assert.deepEqual((await lines(w.nv)).slice(0, 1), ["USER"]);
		});
	});

	describe(`nvim ${flavour.name}: the statusline and :PiIde drop pi`, { concurrency: 2 }, () => {
		const STATUSLINE = "set laststatus=2 statusline=[%{v:lua.require'pi-ide'.statusline()}]";
		it("after :PiIde disable", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.command(STATUSLINE);
			send(w, message(w, {}, join(w.nv.tmp, "not-open.txt")));
			await untilStatusline(w.nv, "[pi +1]");
			await luaWithoutPrompt(w.nv, "vim.fn.execute('PiIde disable')");
			await untilStatusline(w.nv, "[]");
			assert.match(await piIde(w), /pi: none connected/);
		});

		it("after pi is killed and leaves its message file", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.command(STATUSLINE);
			const pi = await spawnLiveEditor();
			send({ ...w, piPid: pi.pid }, message({ ...w, piPid: pi.pid }, {}, join(w.nv.tmp, "x.txt")), { pid: pi.pid });
			await untilStatusline(w.nv, "[pi +1]");
			await pi.kill();
			await untilStatusline(w.nv, "[]");
			assert.match(await piIde(w), /pi: none connected/);
		});
	});
});
