/**
 * The Neovim client's side of protocol v0.3 against hostile or odd input: pi messages that are malformed,
 * oversized, not ours, from a dead pi, for another editor, for a file it does not have open, or for a file
 * deleted or swapped for a symlink before the reload. Each is ignored (with one diagnostic, never an error)
 * or reported with the right status, and each negative ends with a positive control in the same Neovim.
 * The "pi" is a live process of ours (its pid is what matters); the messages are written as pi writes them.
 * What every client must do with a message from a dead pi, for another editor or under a non-canonical name
 * is the conformance kit's (test/conformance/cases/reload.ts); this file keeps what is Neovim's own (the
 * reasons :PiIde gives, notices that fit the message line, windows, symlinks, the statusline).
 */
import assert from "node:assert/strict";
import { chownSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FileStatus, piMessagePid } from "../../editors/shared/pi-message.ts";
import { PI_FILE_NAME_CASES, PI_MESSAGE_NAME_CASES } from "../fixtures/state-dir-cases.ts";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { forEachNvim, type Nvim, startNvim } from "../helpers/nvim.ts";
import {
	assertNoErrors,
	CONTENT,
	lines,
	luaWithoutPrompt,
	type Mode,
	message,
	NARROW,
	nextSeq,
	notices,
	pollPiIde,
	send,
	untilMessageLine,
	untilStatusline,
	type World,
	world,
} from "../helpers/nvim-inbox.ts";
import { pollFor } from "../helpers/poll.ts";

after(killAllEditors);

/** Load b.txt into a second (hidden) buffer and change it on disk; returns its path. */
async function openSecond(w: World): Promise<string> {
	const other = join(w.nv.tmp, "b.txt");
	writeFileSync(other, "b original\n");
	await w.nv.lua("local b = vim.fn.bufadd(...); vim.fn.bufload(b)", other);
	writeFileSync(other, "b changed by pi\n");
	return other;
}

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

/**
 * `:write!` the current buffer over the file pi changed since it was read, as the user does: 0.7.2 still
 * asks "the file has been changed since reading it ... (y/n)", answered y, and then shows the warning and
 * the write's message in a hit-enter prompt, answered Enter. Neovim's own prompts, not the client's.
 */
async function writeOverPisVersion(nv: Nvim): Promise<void> {
	await nv.call("nvim_input", ":write!<CR>");
	// Only requests Neovim answers at a prompt, and the state file: anything else would wait behind the prompt.
	await pollFor(async () => {
		const mode = await nv.call<Mode>("nvim_get_mode");
		if (mode.mode === "r?") await nv.call("nvim_input", "y");
		else if (mode.mode === "r") await nv.call("nvim_input", "<CR>");
		return !mode.blocking && nv.readState()?.active_buffer.modified === false;
	}, "the buffer is written");
}

/** Re-point the symlink `link` to `target`, as `ln -sfn` does (a new link renamed over the old one). */
function repoint(link: string, target: string): void {
	symlinkSync(target, `${link}.new`);
	renameSync(`${link}.new`, link);
}

const PIS_VERSION = ["pi's", "new", "version"];
const OTHER_FILE = "ANOTHER FILE\n";

/**
 * A buffer read from one path, that path changed (or not) before pi's message, and pi naming a path (the
 * same or another name of the file): whether the reload may read the buffer's path again. In `dir`, the
 * test's temp dir: `open` lays out the files and returns the path the buffer is read from; `change` runs
 * after the read (pi's write included) and returns the path pi's message names.
 */
/** The buffer's file is `link.txt`, an absolute symlink to `target.txt` (a dotfile's usual shape). */
const openThroughLink = (dir: string): string => {
	writeFileSync(join(dir, "target.txt"), CONTENT);
	symlinkSync(join(dir, "target.txt"), join(dir, "link.txt"));
	return join(dir, "link.txt");
};

/** pi writes the path the buffer was opened as (through the link, if it is one) and names that path. */
const piWritesOpened = (_dir: string, opened: string): string => {
	writeFileSync(opened, `${PIS_VERSION.join("\n")}\n`);
	return opened;
};

const LINK_CASES: {
	name: string;
	open: (dir: string) => string;
	/** `edit`, or `noautocmd edit`: read without the client seeing it (as before the client started). */
	read: "edit" | "noautocmd edit";
	change: (dir: string, opened: string) => string;
	status: FileStatus;
	lines: string[];
}[] = [
	{
		name: "read through a symlink, pi writes through the link: reloaded",
		open: openThroughLink,
		read: "edit",
		change: piWritesOpened,
		status: "reloaded",
		lines: PIS_VERSION,
	},
	{
		name: "read through a relative symlink, pi names the real path: reloaded",
		open: (dir) => {
			writeFileSync(join(dir, "target.txt"), CONTENT);
			symlinkSync("target.txt", join(dir, "link.txt"));
			return join(dir, "link.txt");
		},
		read: "edit",
		change: (dir) => {
			writeFileSync(join(dir, "target.txt"), `${PIS_VERSION.join("\n")}\n`);
			return join(dir, "target.txt");
		},
		status: "reloaded",
		lines: PIS_VERSION,
	},
	{
		name: "read as a regular file, pi names a symlink to it: reloaded",
		open: (dir) => {
			writeFileSync(join(dir, "a.txt"), CONTENT);
			return join(dir, "a.txt");
		},
		read: "edit",
		change: (dir, opened) => {
			symlinkSync(opened, join(dir, "pi-link.txt"));
			writeFileSync(join(dir, "pi-link.txt"), `${PIS_VERSION.join("\n")}\n`);
			return join(dir, "pi-link.txt");
		},
		status: "reloaded",
		lines: PIS_VERSION,
	},
	{
		name: "read through a symlink re-pointed to another file before the message: refused",
		open: openThroughLink,
		read: "edit",
		change: (dir, opened) => {
			writeFileSync(join(dir, "other.txt"), OTHER_FILE);
			repoint(opened, join(dir, "other.txt"));
			return opened;
		},
		status: "refused",
		lines: CONTENT.trimEnd().split("\n"),
	},
	{
		name: "read through a symlink replaced by a regular file before the message: refused",
		open: openThroughLink,
		read: "edit",
		change: (dir, opened) => {
			writeFileSync(join(dir, "planted.txt"), OTHER_FILE);
			renameSync(join(dir, "planted.txt"), opened);
			return opened;
		},
		status: "refused",
		lines: CONTENT.trimEnd().split("\n"),
	},
	{
		// Neovim names the buffer by the directory's real path: pi's path is found by its real path.
		name: "read in a symlinked directory, pi writes there: reloaded",
		open: (dir) => {
			mkdirSync(join(dir, "real-dir"));
			writeFileSync(join(dir, "real-dir", "f.txt"), CONTENT);
			symlinkSync(join(dir, "real-dir"), join(dir, "dir-link"));
			return join(dir, "dir-link", "f.txt");
		},
		read: "edit",
		change: piWritesOpened,
		status: "reloaded",
		lines: PIS_VERSION,
	},
	{
		name: "read through a symlink unseen by the client (no record of the read): refused, as without this rule",
		open: openThroughLink,
		read: "noautocmd edit",
		change: piWritesOpened,
		status: "refused",
		lines: CONTENT.trimEnd().split("\n"),
	},
];

describe("pi message file names: one table for TypeScript and the Neovim inbox", () => {
	for (const { name, pid } of PI_MESSAGE_NAME_CASES) {
		it(`piMessagePid(${JSON.stringify(name)}) = ${pid}`, () => assert.equal(piMessagePid(name), pid));
	}
});

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi message file names`, () => {
		it("the inbox takes a pid from exactly the names the TypeScript side does", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const names = PI_MESSAGE_NAME_CASES.map((c) => c.name);
			const pids = await nv.lua<(number | null)[]>(
				"return vim.tbl_map(function(n) return require('pi-ide.inbox.message').pid_of_name(n) or vim.NIL end, ...)",
				names,
			);
			assert.deepEqual(
				names.map((name, i) => ({ name, pid: pids[i] ?? undefined })),
				PI_MESSAGE_NAME_CASES,
			);
		});
	});

	describe(`nvim ${flavour.name}: pi's file names with its identity (v0.5)`, () => {
		it("pi-ide.inbox.identity parses exactly as the wire's parser (PI_FILE_NAME_CASES)", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const names = PI_FILE_NAME_CASES.map((c) => c.name);
			const parsed = await nv.lua<({ kind: string; pid: number; ns?: string } | null)[]>(
				`return vim.tbl_map(function(n)
  local p = require('pi-ide.inbox.identity').parse_name(n)
  return p and { kind = p.kind, pid = p.pid, ns = p.ns } or vim.NIL
end, ...)`,
				names,
			);
			assert.deepEqual(
				names.map((name, i) => {
					const p = parsed[i];
					return { name, expect: p ? { kind: p.kind, pid: p.pid, ns: p.ns?.slice(5, -1) ?? null } : undefined };
				}),
				PI_FILE_NAME_CASES,
			);
		});
	});

	describe(`nvim ${flavour.name}: notices fit the message line`, () => {
		const VARIANTS = [
			["(pi-ide) pi changed ", " on disk; the long story"],
			["(pi-ide) pi changed ", "; short"],
		];
		const cases: { name: string; file: string; cells: number; fitted: string }[] = [
			{
				name: "the longest that fits",
				file: "a.txt",
				cells: 80,
				fitted: "(pi-ide) pi changed a.txt on disk; the long story",
			},
			{ name: "a shorter one", file: "a.txt", cells: 40, fitted: "(pi-ide) pi changed a.txt; short" },
			{
				name: "the path cut to its tail",
				file: "src/deep/dir/app.ts",
				cells: 38,
				fitted: "(pi-ide) pi changed …dir/app.ts; short",
			},
			{
				name: "multibyte names by cells",
				file: "dé/日本語.txt",
				cells: 37,
				fitted: "(pi-ide) pi changed …本語.txt; short",
			},
			{ name: "too narrow even for that: cut at the end", file: "a.txt", cells: 12, fitted: "(pi-ide) pi…" },
		];
		it("fit() picks the longest variant that fits, else cuts the name's start, else the end", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const got = await nv.lua<string[]>(
				`local variants, cases = ...
				return vim.tbl_map(function(c) return require('pi-ide.notice').fit(variants, c.file, c.cells) end, cases)`,
				VARIANTS,
				cases,
			);
			assert.deepEqual(
				cases.map((c, i) => ({ name: c.name, fitted: got[i] })),
				cases.map((c) => ({ name: c.name, fitted: c.fitted })),
			);
		});
	});

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

		for (const c of LINK_CASES) {
			it(`symlinks: a buffer ${c.name}`, async (t) => {
				const w = await world(t, flavour);
				const opened = c.open(w.nv.tmp);
				await w.nv.command(`${c.read} ${opened}`);
				await w.nv.call("nvim_win_set_cursor", 0, [2, 1]);
				const piPath = c.change(w.nv.tmp, opened);
				const msg = message(w, {}, piPath);
				send(w, msg);
				const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
				assert.equal(state.files?.find((f) => f.file === piPath)?.status, c.status);
				assert.deepEqual(await lines(w.nv), c.lines);
				assert.deepEqual(await w.nv.call("nvim_win_get_cursor", 0), [2, 1], "the cursor is kept");
				assert.equal(await w.nv.lua("return vim.bo.modified"), false);
				await assertNoErrors(w.nv);
			});
		}

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
			const seq = nextSeq();
			send(w, {
				...message(w),
				changed: [
					{ file: w.file, seq, tool: "edit" },
					{ file: other, seq, tool: "write" },
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

		it("with 80 columns, the unsaved-buffer notice fits one line: no prompt, the file named, :PiIde says how", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.input("ggOUSER-TEXT<Esc>");
			await w.nv.until((s) => s.active_buffer.modified, "the unsaved change is reported");
			writeFileSync(w.file, "pi's version\n");
			send(w, message(w));
			const line = await untilMessageLine(w.nv, /a\.txt/);
			assert.match(line, /pi changed a\.txt/);
			assert.equal((await w.nv.call<Mode>("nvim_get_mode")).blocking, false);
			await w.nv.until((s) => s.files?.some((f) => f.status === "modified") === true, "a modified report");
			const summary = await luaWithoutPrompt<string>(w.nv, "return vim.fn.execute('PiIde')");
			assert.match(summary, /not reloaded: pi changed a\.txt on disk.*Compare: :PiIde diff {3}Take pi's version: :e!/);
			assert.deepEqual(await lines(w.nv), ["USER-TEXT", ...CONTENT.trimEnd().split("\n")]);
		});

		it("with 80 columns, a long path is cut to its tail, keeping the file name", async (t) => {
			const w = await world(t, flavour, NARROW);
			const deep = join(w.nv.tmp, "a-rather-long-directory-name", "and-another-one-below-it", "deep-file.txt");
			await w.nv.lua("vim.fn.mkdir(vim.fn.fnamemodify(..., ':h'), 'p')", deep);
			writeFileSync(deep, "x\n");
			await w.nv.command(`edit ${deep}`);
			await w.nv.input("ggOUSER-TEXT<Esc>");
			await w.nv.until((s) => s.active_buffer.file === deep && s.active_buffer.modified, "deep-file.txt unsaved");
			writeFileSync(deep, "pi's version\n");
			send(w, message(w, {}, deep));
			const line = await untilMessageLine(w.nv, /deep-file\.txt/);
			assert.match(line, /…[^ ]*deep-file\.txt/);
			assert.equal((await w.nv.call<Mode>("nvim_get_mode")).blocking, false);
		});

		it("with 80 columns, the warning for an ignored message fits one line; :PiIde has the whole reason", async (t) => {
			const w = await world(t, flavour, NARROW);
			send(w, message(w, { changed: [{ file: "relative/path.txt", seq: 1, tool: "write" }] }));
			const name = `pi-${w.piPid}.json`;
			await untilMessageLine(w.nv, new RegExp(`ignoring ${name}`));
			assert.equal((await w.nv.call<Mode>("nvim_get_mode")).blocking, false);
			const summary = await luaWithoutPrompt<string>(w.nv, "return vim.fn.execute('PiIde')");
			assert.match(summary, new RegExp(`ignored ${name}: a changed entry is not \\{file = absolute path`));
		});

		it("an unsaved buffer is told once per conflict: again after :w, not for each pi edit", async (t) => {
			const w = await world(t, flavour);
			const TOLD = /pi changed a\.txt on disk/;
			const piEdits = async (text: string) => {
				writeFileSync(w.file, text);
				const msg = message(w);
				send(w, msg);
				await w.nv.until((s) => s.pi?.seq === msg["seq"], `pi's edit ${msg["seq"]} is handled`);
			};
			await w.nv.input("ggOUSER-TEXT<Esc>");
			await piEdits("pi's first version\n");
			await pollFor(async () => (await notices(w.nv, TOLD)) === 1, "the first conflict is told");
			await piEdits("pi's second version\n");
			await w.nv.settle();
			assert.equal(await notices(w.nv, TOLD), 1, "the same conflict is told once");
			await writeOverPisVersion(w.nv);
			await w.nv.input("ggOMORE-TEXT<Esc>");
			await piEdits("pi's third version\n");
			await pollFor(async () => (await notices(w.nv, TOLD)) >= 2, "the new conflict is told");
			assert.equal(await notices(w.nv, TOLD), 2);
			assert.deepEqual((await lines(w.nv)).slice(0, 2), ["MORE-TEXT", "USER-TEXT"]);
		});

		it("the statusline follows pi: drawn as pi +N when a pi connects, cleared when it goes", async (t) => {
			const w = await world(t, flavour, NARROW);
			await w.nv.command("set laststatus=2 statusline=[%{v:lua.require'pi-ide'.statusline()}]");
			await untilStatusline(w.nv, "[]");
			// A file not open here: nothing in the editor changes but what statusline() returns.
			const path = send(w, message(w, {}, join(w.nv.tmp, "not-open.txt")));
			await untilStatusline(w.nv, "[pi +1]");
			unlinkSync(path);
			await untilStatusline(w.nv, "[]");
		});
	});
});
