/**
 * The Vim client's side of protocol v0.3 (editors/vim/autoload/pi_ide/inbox.vim) in real Vim under tmux,
 * against the input the Neovim client is tested with (test/nvim/inbox.test.ts): pi messages that are
 * malformed, oversized, not ours, from a dead pi, for another editor, for a file Vim does not have open, for a
 * file deleted or swapped for a symlink; a buffer with unsaved changes; every window's view. Each bad message
 * is ignored with one notice that fits the message line (never an error, never a hit-enter prompt), and each
 * negative ends with a positive control in the same Vim. The "pi" is a live process of ours.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chownSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { RETENTION_CASES, RETENTION_SEED, randomRetentionCases } from "../fixtures/report-retention-cases.ts";
import { keepPath, startFlipper } from "../fixtures/symlink-flipper.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startVim, type Vim, type VimOptions, vimString } from "../helpers/vim.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\n";

interface World {
	vim: Vim;
	file: string;
	piPid: number;
}

interface Report {
	file: string;
	seq: number;
	status: string;
	version: number | null;
	modified: boolean;
	diagnostics_expected: boolean;
	pi_pid: number;
}
const files = (s: Record<string, unknown>) => (s["files"] as Report[] | undefined) ?? [];
const piOf = (s: Record<string, unknown>) => s["pi"] as { pid: number; seq: number } | null | undefined;

async function world(t: TestContext, options: VimOptions = {}): Promise<World> {
	const vim = await startVim(t, options);
	const file = join(vim.dirs.work, "a.txt");
	writeFileSync(file, CONTENT);
	await vim.ex("edit a.txt");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "a.txt open");
	const pi = await spawnLiveEditor();
	return { vim, file, piPid: pi.pid };
}

let seqs = 0;
function message(w: World, overrides: Record<string, unknown> = {}, file = w.file): Record<string, unknown> {
	seqs += 1;
	return {
		protocol: "0.3",
		kind: "pi",
		pid: w.piPid,
		cwd: w.vim.dirs.work,
		timestamp: Date.now() / 1000,
		editor_pid: w.vim.pid,
		seq: seqs,
		changed: [{ file, seq: seqs, tool: "write" }],
		last_turn: [file],
		...overrides,
	};
}

function send(w: World, msg: unknown, options: { pid?: number; mode?: number; raw?: string } = {}): string {
	const pid = options.pid ?? w.piPid;
	return writeRawStateFile(w.vim.dirs.stateDir, `pi-${pid}.json`, options.raw ?? JSON.stringify(msg), options.mode);
}

const lines = (vim: Vim) => vim.expr<string[]>("getline(1, '$')");
const messages = (vim: Vim) => vim.expr<string>("execute('messages')");

/** Positive control: a good message from a (new) live pi reloads the buffer. */
async function assertStillWorks(w: World): Promise<void> {
	writeFileSync(w.file, "control\n");
	const pi = await spawnLiveEditor();
	const w2 = { ...w, piPid: pi.pid };
	send(w2, message(w2), { pid: pi.pid });
	await w.vim.until(
		(s) => piOf(s)?.pid === pi.pid && files(s).some((f) => f.file === w.file && f.status === "reloaded"),
		"the control message is handled",
	);
	assert.deepEqual(await lines(w.vim), ["control"]);
}

async function assertNoErrors(vim: Vim): Promise<void> {
	const said = await messages(vim);
	assert.doesNotMatch(said, /E\d{2,4}:|Error|internal error/, said);
	assert.doesNotMatch(await vim.capture(), /Press ENTER/);
}

const BAD: { name: string; write: (w: World) => void; why: RegExp }[] = [
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
		name: "a change with a relative path",
		write: (w) => void send(w, message(w, { changed: [{ file: "a.txt", seq: 1, tool: "write" }] })),
		why: /absolute path/,
	},
	{ name: "group/other-readable", write: (w) => void send(w, message(w), { mode: 0o644 }), why: /group\/other/ },
	{
		name: "owned by another user",
		write: (w) => {
			const path = join(w.vim.dirs.root, "foreign.json");
			writeFileSync(path, JSON.stringify(message(w)), { mode: 0o600 });
			chownSync(path, 4242, 4242);
			renameSync(path, join(w.vim.dirs.stateDir, `pi-${w.piPid}.json`));
		},
		why: /belongs to (a user without a name|\S+), not to you/,
	},
	{
		name: "a FIFO (reading it would block Vim)",
		write: (w) => void execFileSync("mkfifo", ["-m", "600", join(w.vim.dirs.stateDir, `pi-${w.piPid}.json`)]),
		why: /is a fifo, not a regular file/,
	},
	{
		name: "a symlink",
		write: (w) => {
			const target = join(w.vim.dirs.root, "elsewhere.json");
			writeFileSync(target, JSON.stringify(message(w)), { mode: 0o600 });
			symlinkSync(target, join(w.vim.dirs.stateDir, `pi-${w.piPid}.json`));
		},
		why: /is a link, not a regular file/,
	},
];

describe("vim: pi messages (protocol v0.3)", { concurrency: 3 }, () => {
	for (const bad of BAD) {
		it(`a pi message that is ${bad.name} is ignored with one notice, never an error`, async (t) => {
			const w = await world(t);
			writeFileSync(w.file, "pi's version\n");
			bad.write(w);
			await w.vim.waitExpr("execute('messages') =~# 'ignoring pi-'");
			const said = await messages(w.vim);
			assert.match(said, bad.why);
			assert.equal(said.match(/ignoring pi-/g)?.length, 1, said);
			assert.deepEqual(await lines(w.vim), CONTENT.trimEnd().split("\n"), "not reloaded");
			assert.equal(piOf(w.vim.state() ?? {}) ?? null, null, "no message was handled");
			await assertNoErrors(w.vim);
			await assertStillWorks(w);
		});
	}

	it("two bad messages in one poll: no hit-enter prompt, :PiIde names both", async (t) => {
		const w = await world(t, { cols: 80, rows: 24 });
		const other = await spawnLiveEditor();
		send(w, null, { raw: "{not json" });
		send({ ...w, piPid: other.pid }, message({ ...w, piPid: other.pid }, { kind: "editor" }), { pid: other.pid });
		await w.vim.waitExpr("execute('messages') =~# 'notices\\|ignoring'");
		await w.vim.waitExpr("len(filter(pi_ide#Summary(), {_, l -> l =~# '^ignored pi-'})) == 2");
		const summary = await w.vim.expr<string[]>("pi_ide#Summary()");
		assert.ok(
			summary.some((l) => /ignored pi-\d+\.json: not valid JSON/.test(l)),
			summary.join("\n"),
		);
		assert.ok(
			summary.some((l) => /ignored pi-\d+\.json: kind is not "pi"/.test(l)),
			summary.join("\n"),
		);
		await assertNoErrors(w.vim);
		await assertStillWorks(w);
	});

	it(":PiIde shows the state file, the buffer and the connected pi without an error", async (t) => {
		const w = await world(t);
		send(w, message(w, { last_turn: [] }));
		await w.vim.until((s) => piOf(s)?.pid === w.piPid, "the message is handled");
		const out = String(await w.vim.expr("execute('PiIde')"));
		assert.match(out, new RegExp(`state file: ${w.vim.stateFile} \\(present\\)`));
		assert.match(out, new RegExp(`buffer: ${w.file} \\[text\\] line 1 col 1 of 3`));
		assert.match(out, new RegExp(`pi: connected, pid ${w.piPid}`));
		assert.match(out, /selection: none/);
		await assertNoErrors(w.vim);
	});

	it("an unmodified buffer is reloaded, cursor kept, and reported with its new version", async (t) => {
		const w = await world(t);
		await w.vim.keys("2G", "l");
		await w.vim.waitExpr("line('.') == 2 && col('.') == 2");
		const before = Number(await w.vim.expr("b:changedtick"));
		writeFileSync(w.file, "ONE\nTWO\nTHREE\nFOUR\n");
		const msg = message(w);
		send(w, msg);
		const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "the message is handled");
		const report = files(s).find((f) => f.file === w.file);
		assert.ok(report);
		const version = Number(await w.vim.expr("b:changedtick"));
		assert.ok(version > before);
		assert.deepEqual(report, {
			file: w.file,
			seq: msg["seq"],
			status: "reloaded",
			version,
			modified: false,
			diagnostics_expected: false,
			diagnostics: null,
			pi_pid: w.piPid,
		});
		assert.deepEqual(piOf(s), { pid: w.piPid, seq: msg["seq"] });
		assert.deepEqual(await lines(w.vim), ["ONE", "TWO", "THREE", "FOUR"]);
		assert.deepEqual(await w.vim.expr("[line('.'), col('.')]"), [2, 2]);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "pi +1");
		await assertNoErrors(w.vim);
	});

	it("the directory is listed every 100 ms while pi's files change, every 500 ms again once they rest; one perl reads", async (t) => {
		const w = await world(t);
		const pollMs = () => w.vim.expr<number>("pi_ide#inbox#Debug().poll_ms");
		assert.equal(await pollMs(), 500);
		writeFileSync(w.file, "busy\n");
		const msg = message(w);
		send(w, msg);
		await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "the message is handled");
		assert.equal(await pollMs(), 100);
		// The file was read by the kept reader (READER), which runs on for the next message.
		assert.equal(await w.vim.expr("pi_ide#inbox#Debug().reader"), "run");
		await pollUntil(async () => ((await pollMs()) === 500 ? true : undefined), "back to 500 ms", 15000);
		await assertNoErrors(w.vim);
	});

	it("a buffer with unsaved changes is never touched; told once in one line, no prompt", async (t) => {
		const w = await world(t, { cols: 80, rows: 24 });
		await w.vim.keys("O", "USER-TEXT", "Escape");
		await w.vim.waitExpr("&modified && mode() ==# 'n'");
		writeFileSync(w.file, "pi's version\n");
		for (let i = 0; i < 2; i++) {
			const msg = message(w);
			send(w, msg);
			const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "the message is handled");
			assert.equal(files(s).find((f) => f.file === w.file)?.status, "modified");
			assert.equal(files(s).find((f) => f.file === w.file)?.modified, true);
		}
		assert.deepEqual(await lines(w.vim), ["USER-TEXT", ...CONTENT.trimEnd().split("\n")]);
		const said = await messages(w.vim);
		assert.equal(said.match(/pi changed/g)?.length, 1, said);
		assert.match(String(await w.vim.expr('join(pi_ide#Summary(), "\\n")')), /:w !diff % -/);
		await assertNoErrors(w.vim);
	});

	it("a message from a pi that has exited is ignored", async (t) => {
		const w = await world(t);
		const pi = await spawnLiveEditor();
		await pi.kill();
		const dead = { ...w, piPid: pi.pid };
		writeFileSync(w.file, "from the dead\n");
		send(dead, message(dead), { pid: pi.pid });
		await assertStillWorks(w);
		assert.ok(!files(w.vim.state() ?? {}).some((f) => f.pi_pid === pi.pid));
	});

	it("a message for another editor, or under a non-canonical name, changes nothing here", async (t) => {
		const w = await world(t);
		writeFileSync(w.file, "not for us\n");
		send(w, message(w, { editor_pid: w.vim.pid + 100000 }));
		writeRawStateFile(w.vim.dirs.stateDir, `pi-0${w.piPid}.json`, JSON.stringify(message(w)));
		await pollUntil(() => undefined, "", 1200).catch(() => undefined);
		assert.deepEqual(await lines(w.vim), CONTENT.trimEnd().split("\n"));
		assert.equal(piOf(w.vim.state() ?? {}) ?? null, null);
		await assertStillWorks(w);
	});

	it("a file Vim does not have open is reported not-open and not opened", async (t) => {
		const w = await world(t);
		const other = join(w.vim.dirs.work, "other.txt");
		writeFileSync(other, "x\n");
		send(w, message(w, {}, other));
		const s = await w.vim.until((s) => files(s).some((f) => f.file === other), "a report");
		assert.equal(files(s).find((f) => f.file === other)?.status, "not-open");
		assert.equal(await w.vim.expr(`bufexists(${vimString(other)})`), 0, "no buffer was created");
		await assertStillWorks(w);
	});

	it("a file deleted before the reload is reported gone; the buffer keeps its text", async (t) => {
		const w = await world(t);
		unlinkSync(w.file);
		send(w, message(w));
		const s = await w.vim.until((s) => files(s).some((f) => f.file === w.file), "a report");
		assert.equal(files(s).find((f) => f.file === w.file)?.status, "gone");
		assert.deepEqual(await lines(w.vim), CONTENT.trimEnd().split("\n"));
		await assertNoErrors(w.vim);
		await assertStillWorks(w);
	});

	it("a file replaced by a symlink before the reload is refused, never read through", async (t) => {
		const w = await world(t);
		const secret = join(w.vim.dirs.work, "secret.txt");
		writeFileSync(secret, "SECRET\n");
		unlinkSync(w.file);
		symlinkSync(secret, w.file);
		send(w, message(w));
		const s = await w.vim.until((s) => files(s).some((f) => f.file === w.file), "a report");
		assert.equal(files(s).find((f) => f.file === w.file)?.status, "refused");
		assert.deepEqual(await lines(w.vim), CONTENT.trimEnd().split("\n"));
		rmSync(w.file);
		await assertStillWorks(w);
	});

	it("a dotfile read through a symlink reloads while the link still points at the same file", async (t) => {
		const w = await world(t);
		const target = join(w.vim.dirs.work, "target.txt");
		const link = join(w.vim.dirs.work, "link.txt");
		writeFileSync(target, CONTENT);
		symlinkSync(target, link);
		await w.vim.ex("edit link.txt");
		writeFileSync(link, "new\n");
		const msg = message(w, {}, link);
		send(w, msg);
		const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "handled");
		assert.equal(files(s).find((f) => f.file === link)?.status, "reloaded");
		assert.deepEqual(await lines(w.vim), ["new"]);
	});

	it("every window on the buffer keeps its view; a hidden loaded buffer reloads too", async (t) => {
		const w = await world(t);
		const long = Array.from({ length: 300 }, (_, i) => `line ${i + 1}`);
		writeFileSync(w.file, `${long.join("\n")}\n`);
		await w.vim.ex("edit!");
		await w.vim.ex("split | 200 | normal! zt");
		await w.vim.ex("wincmd w | 50 | normal! zt");
		const hidden = join(w.vim.dirs.work, "b.txt");
		writeFileSync(hidden, "b\n");
		await w.vim.ex(`call bufload(bufadd(${vimString(hidden)}))`);
		const views = "map(win_findbuf(bufnr('a.txt')), {_, id -> getwininfo(id)[0].topline})";
		const before = await w.vim.expr<number[]>(views);
		writeFileSync(w.file, `${long.map((l) => l.toUpperCase()).join("\n")}\n`);
		writeFileSync(hidden, "B\n");
		const msg = message(w, {
			changed: [
				{ file: w.file, seq: seqs + 1, tool: "edit" },
				{ file: hidden, seq: seqs + 2, tool: "edit" },
			],
			seq: seqs + 2,
		});
		seqs += 2;
		send(w, msg);
		const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "handled");
		assert.deepEqual(
			files(s).map((f) => [f.file, f.status]),
			[
				[w.file, "reloaded"],
				[hidden, "reloaded"],
			],
		);
		assert.deepEqual(await w.vim.expr<number[]>(views), before);
		assert.equal(await w.vim.expr("getline(50)"), "LINE 50");
		assert.deepEqual(await w.vim.expr(`getbufline(bufnr(${vimString(hidden)}), 1, '$')`), ["B"]);
		await assertNoErrors(w.vim);
	});
});

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("vim: the reports kept in files", () => {
	// PROTOCOL.md `files` (v0.5): each pi's newest 20 and those its newest message lists, at most 200; the shared table
	// and seeded random cases (test/fixtures/report-retention-cases.ts).
	it(`pi_ide#inbox#Retain: the shared table and random cases (seed ${RETENTION_SEED})`, async (t) => {
		const vim = await startVim(t);
		/** writer.KeyOfRecord's spelling: `<pid>`, or `<pid>-<ns digits>`. */
		const key = (l: { pi_pid: number; pi_ns?: string }) =>
			l.pi_ns ? `${l.pi_pid}-${l.pi_ns.replace(/\D/g, "")}` : `${l.pi_pid}`;
		for (const c of [...RETENTION_CASES, ...randomRetentionCases(RETENTION_SEED, 60)]) {
			const list = c.reports.map((r, i) => ({ ...r, i }));
			const listed = Object.fromEntries(c.listed.map((l) => [key(l), l.changed]));
			const kept = await vim.expr<{ i: number }[]>(
				`pi_ide#inbox#Retain(${JSON.stringify(list)}, ${JSON.stringify(listed)})`,
			);
			assert.deepEqual(
				kept.map((r) => r.i),
				c.kept,
				c.name,
			);
		}
	});

	it("pi changing 30 open files at once finds a report on each; two pis on one file get one each", async (t) => {
		const w = await world(t);
		const paths = range(0, 30).map((i) => join(w.vim.dirs.work, `f${i}.txt`));
		for (const p of paths) {
			writeFileSync(p, "old\n");
			await w.vim.ex(`call bufload(bufadd(${vimString(p)}))`);
		}
		for (const p of paths) writeFileSync(p, "new\n");
		const first = seqs + 1;
		seqs += 30;
		const msg = message(w, {
			changed: paths.map((file, i) => ({ file, seq: first + i, tool: "write" })),
			last_turn: paths,
			seq: seqs,
		});
		send(w, msg);
		const s = await w.vim.until((x) => piOf(x)?.seq === msg["seq"], "handled");
		assert.deepEqual(
			files(s).map((f) => [f.file, f.status]),
			paths.map((p) => [p, "reloaded"]),
		);
		// A second pi changes one of them: its report is added, the first pi's stays.
		const other = await spawnLiveEditor();
		const w2 = { ...w, piPid: other.pid };
		writeFileSync(paths[0] as string, "newer\n");
		send(w2, message(w2, {}, paths[0]), { pid: other.pid });
		const both = await w.vim.until((x) => piOf(x)?.pid === other.pid, "the second pi handled");
		assert.deepEqual(
			files(both)
				.filter((f) => f.file === paths[0])
				.map((f) => f.pi_pid),
			[w.piPid, other.pid],
		);
		assert.equal(files(both).length, 31);
		await assertNoErrors(w.vim);
	});

	it("pi_ide#state#Encode: a file that would pass 1 MiB drops the oldest reports first", async (t) => {
		const vim = await startVim(t);
		// Built in Vim: 1.2 MB of JSON is more than one channel message carries.
		const reports =
			"map(range(200), {i -> {'file': '/p/f' . i, 'seq': i + 1, 'status': 'reloaded', 'diagnostics': {'version': 1, 'total': 1, 'items': [{'message': repeat('x', 6000)}]}}})";
		const payload = `{'pid': 1, 'cwd': '/p', 'app': 'vim', 'active_buffer': {'file': '/p/a', 'selection': v:null}, 'files': ${reports}}`;
		const [content, text, error] = await vim.expr<[string, string, string]>(
			`pi_ide#state#Encode(${payload}, 1700000000)`,
		);
		assert.equal(error, "");
		assert.ok(content !== "");
		assert.ok(Buffer.byteLength(text) <= 1024 * 1024, `${Buffer.byteLength(text)} bytes`);
		const kept = (JSON.parse(text) as { files: { seq: number }[] }).files.map((f) => f.seq);
		assert.ok(kept.length < 200 && kept.length > 150, `${kept.length} kept`);
		assert.deepEqual(kept, range(201 - kept.length, 201), "the newest kept, the oldest dropped");
	});
});

describe("vim: a reload puts in exactly the bytes of its one verified read", () => {
	// The oracle is Vim's own read: after the client's reload, `:e!` must find the same lines and 'eol'.
	const FORMATS: { name: string; before: Buffer; after: Buffer }[] = [
		{ name: "lines with a final newline", before: Buffer.from("x\n"), after: Buffer.from("a\nb\n") },
		{ name: "no final newline", before: Buffer.from("x\n"), after: Buffer.from("a\nb") },
		{ name: "emptied", before: Buffer.from("x\n"), after: Buffer.from("") },
		{ name: "CRLF (fileformat=dos)", before: Buffer.from("x\r\ny\r\n"), after: Buffer.from("a\r\nb\r\n") },
		{
			name: "latin1 (fileencoding=latin1)",
			before: Buffer.from([0x78, 0xe9, 0x0a]),
			after: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
		},
		{ name: "a byte-order mark ('bomb')", before: Buffer.from("\ufeffx\n"), after: Buffer.from("\ufeffa\nb\n") },
	];
	for (const [i, c] of FORMATS.entries()) {
		it(`reads as Vim reads: ${c.name}`, async (t) => {
			const w = await world(t);
			writeFileSync(w.file, c.before);
			// Also where the buffer may not be changed by the user: a reload changes it all the same.
			await w.vim.ex(i % 2 === 0 ? "edit!" : "edit! | setlocal nomodifiable readonly");
			writeFileSync(w.file, c.after);
			const msg = message(w);
			send(w, msg);
			const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "handled");
			assert.equal(files(s).find((f) => f.seq === msg["seq"])?.status, "reloaded");
			const read = "[getline(1, '$'), &eol, &modified, &fileformat, &fileencoding, &bomb]";
			const ours = await w.vim.expr(read);
			assert.deepEqual(await w.vim.expr("[&modifiable, &readonly]"), i % 2 === 0 ? [1, 0] : [0, 1], "kept");
			await w.vim.ex("edit!");
			assert.deepEqual(ours, await w.vim.expr(read));
		});
	}

	// Issue 22: another user flips the path between the user's file and a symlink to a 0600 secret while pi's
	// messages arrive. An observer in Vim (BufReadPost, a listener on the buffer) records any content with the
	// secret; Vim's own record of the file is up to date afterwards (a :checktime asks nothing).
	it("under a symlink race no read autocommand or listener ever sees the secret, and no W11 follows", async (t) => {
		const w = await world(t);
		const secret = join(w.vim.dirs.work, "secret.txt");
		writeFileSync(secret, "SECRET\n", { mode: 0o600 });
		await w.vim.ex("let g:leaks = [] | let g:fcs = 0");
		await w.vim.ex(
			"autocmd BufReadPost * if join(getline(1, '$'), \"\\n\") =~# 'SECRET' | call add(g:leaks, 'BufReadPost ' . expand('<stack>')) | endif",
		);
		await w.vim.ex("autocmd FileChangedShell * let g:fcs += 1");
		await w.vim.ex(
			"call listener_add({b, s, e, a, c -> join(getbufline(b, 1, '$'), \"\\n\") =~# 'SECRET' ? add(g:leaks, 'listener') : 0}, bufnr('a.txt'))",
		);
		const flipper = await startFlipper(t, w.file, secret);
		const statuses: string[] = [];
		// Handled at once (the poll called directly, the report read from the client), 150 times.
		for (let i = 1; i <= 150; i++) {
			writeFileSync(keepPath(w.file), `v${i}\n`);
			const msg = message(w);
			send(w, msg);
			await w.vim.ex("call pi_ide#inbox#Poll() | call listener_flush()");
			const reports = await w.vim.expr<Report[]>("pi_ide#inbox#Debug().reports");
			statuses.push(reports.find((r) => r.seq === msg["seq"])?.status ?? "none");
			const now = await lines(w.vim);
			const said = `after message ${i} (${statuses.join(" ")})`;
			assert.match(now.join("\n"), /^v\d+$/, said);
			assert.deepEqual(await w.vim.expr("g:leaks"), [], said);
		}
		await flipper.stop();
		// The race let some reloads through: the test saw reads during it, not only refusals.
		assert.ok(statuses.includes("reloaded"), statuses.join(" "));
		writeFileSync(w.file, "final\n");
		const msg = message(w);
		send(w, msg);
		const s = await w.vim.until((s) => piOf(s)?.seq === msg["seq"], "the last message handled");
		assert.equal(files(s).find((f) => f.seq === msg["seq"])?.status, "reloaded");
		assert.deepEqual(await lines(w.vim), ["final"]);
		assert.equal(await w.vim.expr("&modified"), 0);
		await w.vim.ex("let g:fcs = 0 | checktime");
		assert.equal(await w.vim.expr("g:fcs"), 0, "Vim's record of the file is up to date: no W11");
		assert.deepEqual(await w.vim.expr("g:leaks"), []);
		await assertNoErrors(w.vim);
	});
});
