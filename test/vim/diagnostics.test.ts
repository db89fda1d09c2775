/**
 * The Vim client's diagnostics (editors/vim/autoload/pi_ide/diagnostics.vim) from a real ALE (Debian's
 * vim-ale, `packadd ale`) running a linter the test defines (test/helpers/vim-ale.ts: a shell script ALE runs
 * as a job on the buffer's lines), in real Vim under tmux: results dated with the changedtick of the content
 * the lint read, an edit during a lint making its results old, an empty result as "none", the reports on pi's
 * edits carrying the diagnostics of the reloaded content, and a Vim without ALE reporting none and saying
 * nothing. The pure mapping (severities, positions, duplicates, caps) runs as a table in Vim.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { makeVimDirs, REPO, startVim, type Vim, vimString } from "../helpers/vim.ts";
import { aleLint, aleVimrc, setAleSlow } from "../helpers/vim-ale.ts";

after(killAllEditors);

interface Item {
	severity: string;
	line: number;
	column: number;
	end_line: number | null;
	end_column: number | null;
	message: string;
	source: string | null;
	code: string | null;
}
interface Diagnostics {
	version: number;
	total: number;
	items: Item[];
}
interface Buf {
	file: string | null;
	version: number;
	diagnostics: Diagnostics | null;
}
interface Report {
	file: string;
	seq: number;
	status: string;
	version: number | null;
	diagnostics_expected: boolean;
	diagnostics: Diagnostics | null;
}
const buf = (s: Record<string, unknown>) => s["active_buffer"] as Buf;
const files = (s: Record<string, unknown>) => (s["files"] as Report[] | undefined) ?? [];

/** Vim (with ALE and `pikit` unless `ale` is false) showing `name` holding `text`. */
async function withFile(
	t: TestContext,
	text: string,
	options: { ale?: boolean; vimrc?: string[]; name?: string; fileLinter?: boolean } = {},
): Promise<{ vim: Vim; file: string; checker: string }> {
	const dirs = makeVimDirs(t);
	const checker = join(dirs.root, "checker");
	const ale = options.ale === false ? [] : aleVimrc(checker, ["pikit"], true, options.fileLinter ?? false);
	const vimrc = [...ale, ...(options.vimrc ?? [])];
	const vim = await startVim(t, { dirs, vimrc });
	const name = options.name ?? "a.pk";
	const file = join(vim.dirs.work, name);
	writeFileSync(file, text);
	await vim.ex(`edit ${name}`);
	await vim.until((s) => buf(s).file === file, `${name} open`);
	return { vim, file, checker };
}

async function assertNoErrors(vim: Vim): Promise<void> {
	const said = await vim.expr<string>("execute('messages')");
	assert.doesNotMatch(said, /E\d{2,4}:|Error|internal error/, said);
	assert.doesNotMatch(await vim.capture(), /Press ENTER/);
}

const tick = (vim: Vim) => vim.expr<number>("b:changedtick");

describe("vim + ALE: diagnostics dated with the buffer version", { concurrency: 2 }, () => {
	it("ALE's results appear in the state file, dated with the changedtick the lint read", async (t) => {
		const { vim, file } = await withFile(t, "fine\nthis is bad\nmeh\n");
		const s = await vim.until((x) => (buf(x).diagnostics?.total ?? 0) === 2, "two diagnostics");
		const b = buf(s);
		assert.equal(b.diagnostics?.version, b.version, "current: dated with the content's changedtick");
		assert.equal(b.version, await tick(vim));
		// :PiIde describes the last write Vim saw complete (the file may be in place a moment before).
		await vim.waitExpr("!pi_ide#Status().writing");
		assert.match(
			String(await vim.expr("execute('PiIde')")),
			/^diagnostics \(ALE\): 1 error, 1 warning, for this content$/m,
		);
		assert.deepEqual(b.diagnostics?.items, [
			{
				severity: "error",
				line: 2,
				column: 9,
				end_line: null,
				end_column: null,
				message: "found bad",
				source: "pikit",
				code: null,
			},
			{
				severity: "warning",
				line: 3,
				column: 1,
				end_line: null,
				end_column: null,
				message: "found meh",
				source: "pikit",
				code: null,
			},
		]);
		// An edit and ALE's lint of it (on text change): the new content's results, dated with its tick.
		await vim.ex("call setline(1, 'now bad too')");
		await vim.keys("C-l");
		await aleLint(vim, file);
		const after = await vim.until(
			(x) => buf(x).diagnostics?.total === 3 && buf(x).diagnostics?.version === buf(x).version,
			"three diagnostics for the edited content",
		);
		assert.ok(buf(after).version > b.version);
		await assertNoErrors(vim);
	});

	it("an edit while the linter runs: its results are dated with the tick it started at, so they read as old", async (t) => {
		const { vim, file, checker } = await withFile(t, "fine\n", { vimrc: ["let g:ale_lint_on_text_changed = 'never'"] });
		await vim.until((x) => buf(x).diagnostics?.total === 0, "the first lint: none");
		setAleSlow(checker, 1.5);
		await vim.ex("call setline(1, 'bad')");
		const started = await tick(vim);
		await vim.ex(`call ale#Queue(0, 'lint_file', bufnr(${vimString(file)}))`);
		await vim.waitExpr(`ale#engine#IsCheckingBuffer(bufnr(${vimString(file)}))`);
		// While the linter sleeps on "bad", the user makes it "fine" again.
		await vim.ex("call setline(1, 'fine')");
		const edited = await tick(vim);
		assert.ok(edited > started);
		const s = await vim.until((x) => buf(x).diagnostics?.total === 1, "the slow lint's result", 10_000);
		assert.equal(buf(s).diagnostics?.version, started, "dated with the tick the lint read");
		assert.equal(buf(s).version, edited);
		assert.ok((buf(s).diagnostics?.version ?? 0) < buf(s).version, "older than the content: not current");
		// :PiIde describes the last write Vim saw complete (the file may be in place a moment before).
		await vim.waitExpr("!pi_ide#Status().writing");
		assert.match(
			String(await vim.expr("execute('PiIde')")),
			new RegExp(`^diagnostics \\(ALE\\): 1 error, for an earlier version \\(${started}, now ${edited}\\)$`, "m"),
		);
		// The next lint reads the current content: none, dated with it.
		setAleSlow(checker, 0);
		await aleLint(vim, file);
		const now = await vim.until((x) => buf(x).diagnostics?.total === 0, "the next lint");
		assert.equal(buf(now).diagnostics?.version, edited);
		await assertNoErrors(vim);
	});

	it("a lint_file linter is left out after an edit until it runs again (on save); run on unsaved content it is dated 0", async (t) => {
		const { vim, file } = await withFile(t, "fine\nbad\n", { fileLinter: true });
		const sources = (x: Record<string, unknown>) =>
			(buf(x).diagnostics?.items ?? []).map((d) => `${d.source}: ${d.message}`);
		const both = ["pikit: found bad", "pikitdisk: disk bad"];
		const opened = await vim.until((x) => sources(x).length === 2, "both linters' items");
		assert.deepEqual(sources(opened).sort(), both);
		assert.equal(buf(opened).diagnostics?.version, buf(opened).version);
		// An unsaved edit: ALE lints the buffer (pikit) on the text change; pikitdisk, which reads the file on
		// disk, does not run, and its item, about other content, is left out (neither listed nor counted).
		await vim.ex("call setline(1, 'meh')");
		await vim.keys("C-l");
		const edited = await vim.until(
			(x) => buf(x).diagnostics?.version === buf(x).version && sources(x).includes("pikit: found meh"),
			"the buffer linter's result on the edit",
		);
		assert.deepEqual(sources(edited), ["pikit: found bad", "pikit: found meh"]);
		assert.equal(buf(edited).diagnostics?.total, 2);
		// A full lint while unsaved: pikitdisk runs on the file on disk, not on this content: dated 0, left out.
		await aleLint(vim, file);
		const debug = await vim.expr<{ dates: Record<string, Record<string, number>> }>("pi_ide#diagnostics#Debug()");
		assert.equal(Object.values(debug.dates)[0]?.["pikitdisk"], 0);
		assert.deepEqual(sources(await vim.until((x) => buf(x).diagnostics?.version === buf(x).version, "current")), [
			"pikit: found bad",
			"pikit: found meh",
		]);
		// Saved: ALE lints the file (both linters), and both are current again.
		await vim.ex("silent write");
		const saved = await vim.until(
			(x) => sources(x).length === 3 && buf(x).diagnostics?.version === buf(x).version,
			"both linters after the save",
		);
		assert.deepEqual(sources(saved).sort(), ["pikit: found bad", "pikit: found meh", "pikitdisk: disk bad"]);
		await assertNoErrors(vim);
	});

	it("a write moves changedtick, not the content: diagnostics current before it stay current (ALE not linting on save)", async (t) => {
		const { vim, file } = await withFile(t, "this is bad\n", {
			vimrc: ["let g:ale_lint_on_save = 0", "let g:ale_lint_on_text_changed = 'never'"],
		});
		await vim.ex("call setline(1, 'still bad')");
		await aleLint(vim, file);
		const edited = await vim.until(
			(x) => buf(x).diagnostics?.version === buf(x).version && buf(x).diagnostics?.total === 1 && buf(x).version > 4,
			"the edit linted",
		);
		await vim.ex("silent write");
		const saved = await vim.until((x) => buf(x).version > buf(edited).version, "the write");
		assert.equal(buf(saved).diagnostics?.version, buf(saved).version, "still current");
		assert.equal(buf(saved).diagnostics?.items[0]?.message, "found bad");
		// A change during the write (what a fixer on save does) makes them old: they are for the content before.
		await vim.ex("call setline(1, 'bad once more')");
		await aleLint(vim, file);
		const again = await vim.until(
			(x) => buf(x).diagnostics?.version === buf(x).version && buf(x).version > buf(saved).version,
			"the second edit linted",
		);
		await vim.ex("autocmd BufWritePre <buffer> call setline(2, 'added by a fixer')");
		await vim.ex("silent write");
		const fixed = await vim.until((x) => buf(x).version > buf(again).version + 1, "the write with a fixer");
		assert.ok((buf(fixed).diagnostics?.version ?? 0) < buf(fixed).version, "old: the content changed in the write");
		await assertNoErrors(vim);
	});

	it("a language server run by ALE is not read (no version to date its answers): its items left out, not expected", async (t) => {
		const server = join(REPO, "node_modules/.bin/vscode-json-language-server");
		const lsp = `call ale#linter#Define('json', {'name': 'jsonls', 'lsp': 'stdio', 'executable': ${vimString(server)}, 'command': '%e --stdio', 'project_root': getcwd()})`;
		const { vim, file } = await withFile(t, '{\n  "a": 1,\n}\n', {
			name: "c.json",
			vimrc: ["let g:ale_linters = {'json': ['jsonls']}", lsp],
		});
		// ALE has the server's answer (a trailing comma)...
		await vim.waitExpr(
			`!empty(filter(copy(ale#engine#GetLoclist(bufnr(${vimString(file)}))), {_, i -> i.linter_name ==# 'jsonls'}))`,
			30_000,
		);
		// ...and the state file written after it says nothing of it: unknown, not expected.
		await vim.ex("call pi_ide#WriteForTest()");
		await vim.waitExpr("!pi_ide#Status().writing");
		assert.equal(buf(vim.state() as Record<string, unknown>).diagnostics, null);
		assert.equal(await vim.expr(`pi_ide#diagnostics#Expected(bufnr(${vimString(file)}))`), false);
		await assertNoErrors(vim);
	});

	it("an empty result is 'none' (total 0, current), not unknown", async (t) => {
		const { vim } = await withFile(t, "all fine\n");
		const s = await vim.until((x) => buf(x).diagnostics !== null, "ALE's verdict");
		assert.deepEqual(buf(s).diagnostics, { version: buf(s).version, total: 0, items: [] });
	});

	it("without ALE: diagnostics null, no error, and pi's reload reports diagnostics_expected false", async (t) => {
		const { vim, file } = await withFile(t, "this is bad\n", { ale: false });
		const pi = await spawnLiveEditor();
		writeFileSync(file, "bad again\n");
		sendChange(vim, pi.pid, file, 1);
		const s = await vim.until((x) => files(x).some((f) => f.status === "reloaded"), "the reload report");
		assert.equal(buf(s).diagnostics, null);
		const report = files(s)[0];
		assert.equal(report?.diagnostics_expected, false);
		assert.equal(report?.diagnostics, null);
		await vim.waitExpr("!pi_ide#Status().writing");
		assert.match(String(await vim.expr("execute('PiIde')")), /^diagnostics: none \(ALE is not loaded/m);
		await assertNoErrors(vim);
	});

	it("ALE without a linter for the filetype: diagnostics null and not expected", async (t) => {
		const { vim, file } = await withFile(t, "bad\n", { name: "notes.txt" });
		const pi = await spawnLiveEditor();
		writeFileSync(file, "bad again\n");
		sendChange(vim, pi.pid, file, 1);
		const s = await vim.until((x) => files(x).some((f) => f.status === "reloaded"), "the reload report");
		assert.equal(buf(s).diagnostics, null);
		assert.equal(files(s)[0]?.diagnostics_expected, false);
		await assertNoErrors(vim);
	});
});

/** pi's message naming one changed file (the pi is a live process of ours). */
function sendChange(vim: Vim, piPid: number, file: string, seq: number): void {
	writeRawStateFile(
		vim.dirs.stateDir,
		`pi-${piPid}.json`,
		JSON.stringify({
			protocol: "0.3",
			kind: "pi",
			pid: piPid,
			cwd: vim.dirs.work,
			timestamp: Date.now() / 1000,
			editor_pid: vim.pid,
			seq,
			changed: [{ file, seq, tool: "write" }],
			last_turn: [file],
		}),
	);
}

describe("vim + ALE: the reports on pi's edits carry the reloaded content's diagnostics", () => {
	it("reloaded, diagnostics_expected, then the report's diagnostics dated with (at least) its version", async (t) => {
		const { vim, file } = await withFile(t, "this is bad\n");
		await vim.until((x) => buf(x).diagnostics?.total === 1, "the old content's error");
		const pi = await spawnLiveEditor();
		writeFileSync(file, "fixed\nbut meh\n");
		sendChange(vim, pi.pid, file, 1);
		const s = await vim.until((x) => {
			const r = files(x)[0];
			return r?.diagnostics !== null && r?.diagnostics !== undefined && r.diagnostics.version >= (r.version ?? 0);
		}, "the report with the new content's diagnostics");
		const report = files(s)[0];
		assert.equal(report?.status, "reloaded");
		assert.equal(report?.diagnostics_expected, true);
		assert.deepEqual(
			report?.diagnostics?.items.map((d) => [d.severity, d.line, d.message]),
			[["warning", 2, "found meh"]],
		);
		assert.deepEqual(await vim.expr("getline(1, '$')"), ["fixed", "but meh"]);
		await assertNoErrors(vim);
	});
});

interface BuildCase {
	name: string;
	ale: Record<string, unknown>[];
	expect: { total: number; items: Partial<Item>[] };
}

const BUILD: BuildCase[] = [
	{
		name: "severities: E, W, I; style one step lower (ES warning, WS info, IS hint)",
		ale: [
			{ lnum: 1, col: 1, type: "I", text: "i" },
			{ lnum: 1, col: 2, type: "W", sub_type: "style", text: "ws" },
			{ lnum: 1, col: 3, type: "E", sub_type: "style", text: "es" },
			{ lnum: 1, col: 4, type: "W", text: "w" },
			{ lnum: 1, col: 5, type: "E", text: "e" },
			{ lnum: 1, col: 6, type: "I", sub_type: "style", text: "is" },
		],
		expect: {
			total: 6,
			items: [
				{ severity: "error", message: "e" },
				{ severity: "warning", message: "es" },
				{ severity: "warning", message: "w" },
				{ severity: "info", message: "i" },
				{ severity: "info", message: "ws" },
				{ severity: "hint", message: "is" },
			],
		},
	},
	{
		name: "positions: col 0 is column 1; end_col inclusive becomes end_column past the end; end_lnum kept",
		ale: [
			{ lnum: 3, col: 0, type: "E", text: "a" },
			{ lnum: 4, col: 2, end_col: 5, type: "E", text: "b" },
			{ lnum: 5, col: 2, end_lnum: 7, end_col: 1, type: "E", text: "c" },
		],
		expect: {
			total: 3,
			items: [
				{ line: 3, column: 1, end_line: null, end_column: null },
				{ line: 4, column: 2, end_line: 4, end_column: 6 },
				{ line: 5, column: 2, end_line: 7, end_column: 2 },
			],
		},
	},
	{
		name: "code: a string code, else nr unless -1; source is the linter",
		ale: [
			{ lnum: 1, col: 1, type: "E", text: "a", code: "E501", linter_name: "flake8" },
			{ lnum: 2, col: 1, type: "E", text: "b", nr: 42, linter_name: "x" },
			{ lnum: 3, col: 1, type: "E", text: "c", nr: -1 },
		],
		expect: {
			total: 3,
			items: [
				{ code: "E501", source: "flake8" },
				{ code: "42", source: "x" },
				{ code: null, source: null },
			],
		},
	},
	{
		name: "exact duplicates listed and counted once; a different message is not a duplicate",
		ale: [
			{ lnum: 1, col: 1, type: "E", text: "same", linter_name: "a" },
			{ lnum: 1, col: 1, type: "E", text: "same", linter_name: "a" },
			{ lnum: 1, col: 1, type: "E", text: "other", linter_name: "a" },
			{ lnum: 1, col: 1, type: "E", text: "same", linter_name: "b" },
		],
		expect: { total: 3, items: [{ message: "same" }, { message: "other" }, { message: "same", source: "b" }] },
	},
];

describe("vim: ALE items -> protocol diagnostics (pi_ide#diagnostics#Build)", () => {
	it("the table", async (t) => {
		const vim = await startVim(t);
		for (const c of BUILD) {
			const got = await vim.expr<Diagnostics>(`pi_ide#diagnostics#Build(${JSON.stringify(c.ale)}, 7)`);
			assert.equal(got.version, 7, c.name);
			assert.equal(got.total, c.expect.total, c.name);
			assert.equal(got.items.length, c.expect.items.length, c.name);
			c.expect.items.forEach((want, i) => {
				const item = got.items[i] as unknown as Record<string, unknown>;
				for (const [k, v] of Object.entries(want)) assert.deepEqual(item[k], v, `${c.name}: item ${i} ${k}`);
			});
		}
	});

	it(`at most 100 items (errors first), messages cut to 500 bytes on a character boundary, total counts all`, async (t) => {
		const vim = await startVim(t);
		const ale = Array.from({ length: 150 }, (_, i) => ({
			lnum: 1 + i,
			col: 1,
			type: i % 3 === 0 ? "E" : "W",
			text: `${"é".repeat(300)}${i}`,
		}));
		const got = await vim.expr<Diagnostics>(`pi_ide#diagnostics#Build(${JSON.stringify(ale)}, 1)`);
		assert.equal(got.total, 150);
		assert.equal(got.items.length, 100);
		assert.deepEqual(
			got.items.slice(0, 50).map((d) => d.severity),
			Array(50).fill("error"),
		);
		for (const d of got.items) {
			assert.ok(Buffer.byteLength(d.message) <= 500, "at most 500 bytes");
			assert.equal(d.message, "é".repeat(250), "cut between characters");
		}
	});
});
