/**
 * The Neovim client's side of protocol v0.3 against hostile or odd input: pi messages that are malformed,
 * oversized, not ours, from a dead pi, for another editor, for a file it does not have open, or for a file
 * deleted or swapped for a symlink before the reload. Each is ignored (with one diagnostic, never an error)
 * or reported with the right status, and each negative ends with a positive control in the same Neovim.
 * The "pi" is a live process of ours (its pid is what matters); the messages are written as pi writes them.
 */
import assert from "node:assert/strict";
import { chownSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, type Nvim, type NvimFlavour, startNvim } from "../helpers/nvim.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\n";

interface World {
	nv: Nvim;
	file: string;
	piPid: number;
}

async function world(t: TestContext, flavour: NvimFlavour): Promise<World> {
	const nv = await startNvim(t, flavour);
	const file = join(nv.tmp, "a.txt");
	writeFileSync(file, CONTENT);
	await nv.command("edit a.txt");
	await nv.until((s) => s.active_buffer.file === file, "a.txt open");
	const pi = await spawnLiveEditor();
	return { nv, file, piPid: pi.pid };
}

let seqs = 0;
function message(w: World, overrides: Record<string, unknown> = {}, file = w.file): Record<string, unknown> {
	seqs += 1;
	return {
		protocol: "0.3",
		kind: "pi",
		pid: w.piPid,
		cwd: w.nv.tmp,
		timestamp: Date.now() / 1000,
		editor_pid: w.nv.pid,
		seq: seqs,
		changed: [{ file, seq: seqs, tool: "write" }],
		last_turn: [file],
		...overrides,
	};
}

function send(w: World, msg: unknown, options: { pid?: number; mode?: number; raw?: string } = {}): string {
	const pid = options.pid ?? w.piPid;
	return writeRawStateFile(w.nv.stateDir, `pi-${pid}.json`, options.raw ?? JSON.stringify(msg), options.mode);
}

/** Load b.txt into a second (hidden) buffer and change it on disk; returns its path. */
async function openSecond(w: World): Promise<string> {
	const other = join(w.nv.tmp, "b.txt");
	writeFileSync(other, "b original\n");
	await w.nv.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b)", other);
	writeFileSync(other, "b changed by pi\n");
	return other;
}

async function assertUntouched(w: World, other: string): Promise<void> {
	const text = await w.nv.lua<string[]>("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", other);
	assert.deepEqual(text, ["b original"]);
	assert.ok(!w.nv.readState()?.files?.some((f) => f.file === other), "no report on b.txt");
}

const lines = (nv: Nvim) => nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");

/** Positive control: a good message from a (new) live pi reloads the buffer. */
async function assertStillWorks(w: World): Promise<void> {
	writeFileSync(w.file, "control\n");
	const pi = await spawnLiveEditor();
	send({ ...w, piPid: pi.pid }, message({ ...w, piPid: pi.pid }), { pid: pi.pid });
	const state = await w.nv.until(
		(s) => s.pi?.pid === pi.pid && s.files?.some((f) => f.file === w.file && f.status === "reloaded") === true,
		"the control message is handled",
	);
	assert.ok(state.files);
	assert.deepEqual(await lines(w.nv), ["control"]);
}

async function assertIgnored(w: World, pattern: RegExp): Promise<void> {
	const status = await pollPiIde(w.nv, pattern);
	assert.match(status, pattern);
	assert.deepEqual(await lines(w.nv), CONTENT.trimEnd().split("\n"), "the buffer was not reloaded");
	assert.equal(w.nv.readState()?.pi ?? null, null, "no message was handled");
}

async function pollPiIde(nv: Nvim, pattern: RegExp): Promise<string> {
	const deadline = Date.now() + 5000;
	let out = "";
	while (Date.now() < deadline) {
		out = await nv.exec("PiIde");
		if (pattern.test(out)) return out;
		await new Promise((r) => setTimeout(r, 25));
	}
	throw new Error(`:PiIde never matched ${pattern}: ${out}`);
}

async function assertNoErrors(nv: Nvim): Promise<void> {
	const messages = await nv.exec("messages");
	assert.doesNotMatch(messages, /E\d{2,4}:|Error|stack traceback/, messages);
	assert.doesNotMatch(nv.stderr(), /E\d{2,4}:|Error|stack traceback/);
}

const BAD: { name: string; write: (w: World) => void | Promise<void>; why: RegExp }[] = [
	{ name: "malformed JSON", write: (w) => void send(w, null, { raw: "{not json" }), why: /not valid JSON/ },
	{
		name: "oversized",
		write: (w) => void send(w, message(w, { padding: "x".repeat(70 * 1024) })),
		why: /over the 65536-byte limit/,
	},
	{ name: "of another kind", write: (w) => void send(w, message(w, { kind: "editor" })), why: /kind is not "pi"/ },
	{
		name: "misnamed (pid field not the file's)",
		write: (w) => void send(w, message(w, { pid: w.piPid + 1 })),
		why: /does not match the file name/,
	},
	{
		name: "over the 50-change cap",
		write: (w) =>
			void send(
				w,
				message(w, { changed: Array.from({ length: 51 }, (_, i) => ({ file: w.file, seq: i + 1, tool: "write" })) }),
			),
		why: /at most 50/,
	},
	{
		name: "group/other-readable",
		write: (w) => void send(w, message(w), { mode: 0o644 }),
		why: /group\/other permissions/,
	},
	{
		name: "owned by another user",
		write: (w) => {
			const path = join(w.nv.tmp, "foreign.json");
			writeFileSync(path, JSON.stringify(message(w)), { mode: 0o600 });
			chownSync(path, 4242, 4242);
			renameSync(path, join(w.nv.stateDir, `pi-${w.piPid}.json`));
		},
		why: /belongs to uid 4242/,
	},
	{
		name: "a symlink",
		write: (w) => {
			const target = join(w.nv.tmp, "elsewhere.json");
			writeFileSync(target, JSON.stringify(message(w)), { mode: 0o600 });
			symlinkSync(target, join(w.nv.stateDir, `pi-${w.piPid}.json`));
		},
		why: /is a link, not a regular file/,
	},
];

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi messages (protocol v0.3)`, { concurrency: 4 }, () => {
		for (const bad of BAD) {
			it(`a pi message that is ${bad.name} is ignored with one diagnostic, never an error`, async (t) => {
				const w = await world(t, flavour);
				writeFileSync(w.file, "pi's version\n");
				await bad.write(w);
				await assertIgnored(w, bad.why);
				await assertNoErrors(w.nv);
				const said = (await w.nv.exec("messages")).match(/ignoring pi-/g)?.length;
				assert.equal(said, 1, "said once");
				await assertStillWorks(w);
			});
		}

		it("a message from a pi that has exited is ignored", async (t) => {
			const w = await world(t, flavour);
			const other = await openSecond(w);
			const pi = await spawnLiveEditor();
			await pi.kill();
			send({ ...w, piPid: pi.pid }, message({ ...w, piPid: pi.pid }, {}, other), { pid: pi.pid });
			// The control is handled after (or with) the earlier message: then b.txt must still be untouched.
			await assertStillWorks(w);
			await assertUntouched(w, other);
		});

		it("a message for another editor changes nothing here", async (t) => {
			const w = await world(t, flavour);
			const other = await openSecond(w);
			send(w, message(w, { editor_pid: w.nv.pid + 100000 }, other));
			await assertStillWorks(w);
			await assertUntouched(w, other);
		});

		it("a file the editor does not have open is reported not-open and not opened", async (t) => {
			const w = await world(t, flavour);
			const other = join(w.nv.tmp, "other.txt");
			writeFileSync(other, "x\n");
			send(w, message(w, {}, other));
			const state = await w.nv.until((s) => s.files?.some((f) => f.file === other) === true, "a report");
			assert.equal(state.files?.find((f) => f.file === other)?.status, "not-open");
			assert.equal(await w.nv.lua("return vim.fn.bufexists(...)", other), 0, "no buffer was created");
			await assertStillWorks(w);
		});

		it("a file deleted before the reload is reported gone; the buffer keeps its text", async (t) => {
			const w = await world(t, flavour);
			unlinkSync(w.file);
			send(w, message(w));
			const state = await w.nv.until((s) => s.files?.some((f) => f.file === w.file) === true, "a report");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "gone");
			assert.deepEqual(await lines(w.nv), CONTENT.trimEnd().split("\n"));
			await assertNoErrors(w.nv);
			await assertStillWorks(w);
		});

		it("a file replaced by a symlink before the reload is refused, never read through", async (t) => {
			const w = await world(t, flavour);
			const secret = join(w.nv.tmp, "secret.txt");
			writeFileSync(secret, "SECRET\n");
			unlinkSync(w.file);
			symlinkSync(secret, w.file);
			send(w, message(w));
			const state = await w.nv.until((s) => s.files?.some((f) => f.file === w.file) === true, "a report");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "refused");
			assert.deepEqual(await lines(w.nv), CONTENT.trimEnd().split("\n"));
			rmSync(w.file);
			await assertStillWorks(w);
		});

		it("every window on the buffer keeps its view; a hidden loaded buffer reloads too", async (t) => {
			const w = await world(t, flavour);
			const long = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`);
			writeFileSync(w.file, `${long.join("\n")}\n`);
			await w.nv.command("edit!");
			await w.nv.command("split");
			await w.nv.lua("vim.fn.winrestview({ lnum = 200, col = 2, topline = 180 })");
			await w.nv.command("wincmd w");
			await w.nv.lua("vim.fn.winrestview({ lnum = 40, col = 1, topline = 30 })");
			const other = await openSecond(w);
			const views =
				"return vim.tbl_map(function(win) return vim.api.nvim_win_call(win, vim.fn.winsaveview) end, vim.api.nvim_list_wins())";
			const before = await w.nv.lua<{ lnum: number; topline: number; col: number }[]>(views);
			const autoread = await w.nv.lua("return vim.bo.autoread");
			writeFileSync(w.file, `${long.map((l) => l.toUpperCase()).join("\n")}\n`);
			seqs += 1;
			send(w, {
				...message(w),
				changed: [
					{ file: w.file, seq: seqs, tool: "edit" },
					{ file: other, seq: seqs, tool: "write" },
				],
			});
			const state = await w.nv.until(
				(x) => x.files?.filter((f) => f.status === "reloaded").length === 2,
				"both files reloaded",
			);
			assert.equal(state.files?.length, 2);
			assert.equal((await lines(w.nv))[0], "LINE 1");
			const after = await w.nv.lua<{ lnum: number; topline: number; col: number }[]>(views);
			assert.deepEqual(
				after.map((v) => [v.lnum, v.col, v.topline]),
				before.map((v) => [v.lnum, v.col, v.topline]),
			);
			const hidden = await w.nv.lua<string[]>(
				"return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)",
				other,
			);
			assert.deepEqual(hidden, ["b changed by pi"]);
			assert.equal(await w.nv.lua("return vim.bo.autoread"), autoread, "'autoread' is left as it was");
		});

		it("diagnostics are ordered errors first then by position, capped at 100 items of 500 bytes", async (t) => {
			const w = await world(t, flavour);
			await w.nv.lua(`
				local items = {}
				for i = 1, 150 do
					local sev = i <= 50 and 4 or (i <= 110 and 2 or 1) -- 50 hints, 60 warnings, 40 errors
					items[i] = { lnum = (i * 37) % 200, col = i % 9, message = "d" .. i, severity = sev }
				end
				items[1].message = string.rep("é", 400) -- 800 bytes: cut on a character boundary
				items[1].severity = 1
				vim.diagnostic.set(vim.api.nvim_create_namespace("many"), 0, items)`);
			const s = await w.nv.until((x) => x.active_buffer.diagnostics?.total === 150, "150 diagnostics reported");
			const items = s.active_buffer.diagnostics?.items ?? [];
			assert.equal(items.length, 100);
			const severities = items.map((d) => d.severity);
			assert.deepEqual(severities.slice(0, 41), Array(41).fill("error"));
			assert.deepEqual(severities.slice(41), Array(59).fill("warning"));
			const errorLines = items.slice(0, 41).map((d) => d.line * 100 + d.column);
			assert.deepEqual(
				errorLines,
				[...errorLines].sort((a, b) => a - b),
			);
			const long = items.find((d) => d.message.startsWith("é"));
			assert.equal(long?.message, "é".repeat(250));
		});

		it("diagnostics carry the changedtick they were set at; typing makes the buffer version move past them", async (t) => {
			const w = await world(t, flavour);
			await w.nv.lua(
				`vim.diagnostic.set(vim.api.nvim_create_namespace("t"), 0, {{ lnum = 1, col = 0, message = "m", severity = 2 }})`,
			);
			const s1 = await w.nv.until((s) => s.active_buffer.diagnostics?.items.length === 1, "diagnostics reported");
			assert.equal(s1.active_buffer.diagnostics?.version, s1.active_buffer.version);
			assert.deepEqual(s1.active_buffer.diagnostics?.items[0], {
				severity: "warning",
				line: 2,
				column: 1,
				end_line: 2,
				end_column: 1,
				message: "m",
				source: null,
				code: null,
			});
			await w.nv.input("ggix<Esc>");
			const s2 = await w.nv.until(
				(s) => (s.active_buffer.version ?? 0) > (s1.active_buffer.version ?? 0),
				"the buffer version moves",
			);
			assert.equal(s2.active_buffer.diagnostics?.version, s1.active_buffer.version, "the stamp stays");
			await w.nv.lua(`vim.diagnostic.set(vim.api.nvim_create_namespace("t"), 0, {})`);
			const s3 = await w.nv.until((s) => s.active_buffer.diagnostics?.items.length === 0, "diagnostics cleared");
			assert.equal(s3.active_buffer.diagnostics?.version, s3.active_buffer.version);
			// :w bumps changedtick without changing the content: diagnostics current before it stay current.
			await w.nv.command("write");
			const s4 = await w.nv.until((s) => !s.active_buffer.modified, "written");
			assert.ok((s4.active_buffer.version ?? 0) > (s3.active_buffer.version ?? 0), "the write moved changedtick");
			assert.equal(s4.active_buffer.diagnostics?.version, s4.active_buffer.version);
		});
	});
});
