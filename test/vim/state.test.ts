/**
 * The Vim client's state file in real Vim 9 under tmux: what a user's acts (typed keys) make it say, case by
 * case, as the Neovim client says for the same situation (test/nvim/events.test.ts, selection.test.ts).
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pollFor } from "../helpers/poll.ts";
import { startVim, type Vim } from "../helpers/vim.ts";

interface Pos {
	line: number;
	column: number;
}
interface Sel {
	start: Pos;
	end: Pos;
	text: string;
	selected_at: number | null;
	truncated?: boolean;
}
interface Buf {
	file: string | null;
	name: string;
	language: string | null;
	cursor: Pos;
	selection: Sel | null;
	modified: boolean;
	lines_total: number;
}
const buf = (s: Record<string, unknown>) => s["active_buffer"] as Buf;

const SOURCE = "const a = 1;\nconst b = 2;\nconst c = 3;\n";

/** Vim with `a.ts` open and its state file describing it. */
async function withFile(t: Parameters<typeof startVim>[0], text = SOURCE, name = "a.ts"): Promise<Vim> {
	const vim = await startVim(t);
	writeFileSync(join(vim.dirs.work, name), text);
	await vim.ex(`edit ${name}`);
	await vim.until((s) => buf(s).name === name, `${name} open`);
	return vim;
}

interface SelectionCase {
	name: string;
	keys: string[];
	/** What Vim must be in before the state file is checked (a legacy expression). */
	ready: string;
	expect: Omit<Sel, "selected_at"> | null;
	/** selected_at: "now" (set by this act) or null. */
	at?: "now";
}

const SELECTIONS: SelectionCase[] = [
	{
		name: "charwise, live while selecting",
		keys: ["2G", "0", "v", "l", "l"],
		ready: "mode() ==# 'v' && col('.') == 3",
		expect: { start: { line: 2, column: 1 }, end: { line: 2, column: 3 }, text: "con" },
		at: "now",
	},
	{
		name: "kept after Escape, dated when it was left",
		keys: ["2G", "0", "v", "l", "Escape"],
		ready: "mode() ==# 'n' && line(\"'>\") == 2",
		expect: { start: { line: 2, column: 1 }, end: { line: 2, column: 2 }, text: "co" },
		at: "now",
	},
	{
		name: "kept after a yank",
		keys: ["1G", "0", "v", "e", "y"],
		ready: "mode() ==# 'n' && @\" ==# 'const'",
		expect: { start: { line: 1, column: 1 }, end: { line: 1, column: 5 }, text: "const" },
		at: "now",
	},
	{
		name: "none after the selected text was deleted",
		keys: ["2G", "0", "v", "e", "d"],
		ready: "mode() ==# 'n' && getline(2) ==# ' b = 2;'",
		expect: null,
	},
	{
		name: "none after it was replaced with c",
		keys: ["2G", "0", "v", "e", "c", "X", "Escape"],
		ready: "mode() ==# 'n' && getline(2) ==# 'X b = 2;'",
		expect: null,
	},
	{
		name: "none after its lines were deleted with dd",
		keys: ["2G", "0", "v", "l", "Escape", "d", "d"],
		ready: "mode() ==# 'n' && line('$') == 2",
		expect: null,
	},
	{
		name: "kept, moved, when a line is added above",
		keys: ["2G", "0", "v", "l", "Escape", "g", "g", "O", "new", "Escape"],
		ready: "mode() ==# 'n' && line('$') == 4",
		expect: { start: { line: 3, column: 1 }, end: { line: 3, column: 2 }, text: "co" },
		at: "now",
	},
	{
		name: "linewise: whole lines, the end column at the last line's end",
		keys: ["1G", "V", "j"],
		ready: "mode() ==# 'V' && line('.') == 2",
		expect: { start: { line: 1, column: 1 }, end: { line: 2, column: 12 }, text: "const a = 1;\nconst b = 2;" },
		at: "now",
	},
	{
		name: "block across lines: whole lines with the corners' columns",
		keys: ["1G", "0", "l", "C-v", "j", "l"],
		ready: "mode() ==# \"\\<C-v>\" && line('.') == 2",
		expect: { start: { line: 1, column: 2 }, end: { line: 2, column: 3 }, text: "const a = 1;\nconst b = 2;" },
		at: "now",
	},
];

describe("vim: selections", { concurrency: 3 }, () => {
	for (const c of SELECTIONS) {
		it(c.name, async (t) => {
			const vim = await withFile(t);
			const before = Math.floor(Date.now() / 1000);
			await vim.keys(...c.keys);
			await vim.waitExpr(c.ready);
			const expected = c.expect;
			const s = await vim.until((s) => {
				const sel = buf(s).selection;
				if (expected === null) return sel === null && buf(s).modified === true;
				return sel !== null && sel.text === expected.text && sel.end.line === expected.end.line;
			}, c.name);
			const sel = buf(s).selection;
			if (expected === null) {
				assert.equal(sel, null);
				return;
			}
			assert.ok(sel);
			const { selected_at, ...rest } = sel;
			assert.deepEqual(rest, expected);
			assert.ok(
				typeof selected_at === "number" && selected_at >= before && selected_at <= before + 5,
				`${selected_at}`,
			);
		});
	}
});

describe("vim: the state file", { concurrency: 3 }, () => {
	it("describes the open file; the cursor is 1-based with byte columns; removed on :qa", async (t) => {
		const vim = await withFile(t, "x = 'é' + y\nz\n", "m.py");
		await vim.keys("0", "f", "+");
		await vim.waitExpr("col('.') == 10");
		const s = await vim.until((s) => buf(s).cursor.column === 10, "cursor on +");
		assert.deepEqual(readdirSync(vim.dirs.stateDir), [`${vim.pid}.json`], "no temp left once the file is there");
		assert.equal(s["pid"], vim.pid);
		assert.equal(s["app"], "vim");
		assert.equal(s["cwd"], vim.dirs.work);
		assert.equal(s["protocol"], "0.3");
		assert.ok(Array.isArray(s["argv"]));
		assert.deepEqual(buf(s), {
			...buf(s),
			file: join(vim.dirs.work, "m.py"),
			name: "m.py",
			language: "python",
			cursor: { line: 1, column: 10 },
			selection: null,
			modified: false,
			lines_total: 2,
		});
		assert.equal(readFileSync(vim.stateFile, "utf8").includes("\n"), false);
		await vim.quit();
		assert.equal(existsSync(vim.stateFile), false);
		assert.equal(existsSync(`${vim.stateFile}.tmp`), false);
	});

	it(":qa! while a write is under way: the write is stopped, then the state file and every temp removed", async (t) => {
		// The write's callback runs while VimLeavePre waits for the write to stop; it once cleared what the wait
		// was looking at, the wait threw, and the file stayed (a CI run caught it).
		const vim = await withFile(t);
		await vim.waitExpr("!pi_ide#Status().writing");
		await vim.keys("Escape", ":call pi_ide#WriteForTest() | qa!", "Enter");
		await pollFor(() => !vim.isAlive(), "Vim exits", 10_000);
		assert.deepEqual(readdirSync(vim.dirs.stateDir), [], "the state file and every temp are gone");
	});

	for (const signal of ["SIGTERM", "SIGHUP"] as const) {
		it(`${signal} (a closed terminal sends SIGHUP) between writes: VimLeavePre runs, the file is removed`, async (t) => {
			const vim = await withFile(t);
			// No write under way (one caught by the signal can leave the file: editors/vim/README.md).
			await vim.waitExpr("!pi_ide#Status().writing");
			process.kill(vim.pid, signal);
			await pollFor(() => !vim.isAlive(), "Vim exits", 10_000).catch(async (e: Error) => {
				throw new Error(`${e.message}\n${await vim.capture()}`);
			});
			assert.deepEqual(readdirSync(vim.dirs.stateDir), [], "the state file and every temp are gone");
		});
	}

	it("a multibyte character selected counts all its bytes", async (t) => {
		const vim = await withFile(t, "aéb\n", "u.txt");
		await vim.keys("0", "l", "v");
		await vim.waitExpr("mode() ==# 'v'");
		const s = await vim.until((s) => buf(s).selection?.text === "é", "é selected");
		assert.deepEqual(buf(s).selection?.start, { line: 1, column: 2 });
		assert.deepEqual(buf(s).selection?.end, { line: 1, column: 3 });
	});

	it("unsaved changes, an unnamed buffer, a changed directory", async (t) => {
		const vim = await withFile(t);
		await vim.keys("A", "!", "Escape");
		await vim.until((s) => buf(s).modified === true, "modified");
		await vim.keys(":enew!", "Enter");
		let s = await vim.until((s) => buf(s).name === "[No Name]", "unnamed buffer");
		assert.equal(buf(s).file, null);
		mkdirSync(join(vim.dirs.work, "sub"));
		await vim.keys(":cd sub", "Enter");
		s = await vim.until((s) => s["cwd"] === join(vim.dirs.work, "sub"), "cwd after :cd");
	});

	it("a terminal focused: the file the user was in is described, and PI_IDE_EDITOR_PID is exported", async (t) => {
		const vim = await withFile(t);
		await vim.keys("2G");
		const out = join(vim.dirs.work, "env.txt");
		writeFileSync(join(vim.dirs.work, "env.sh"), `echo "$PI_IDE_EDITOR_PID" > ${out}\nsleep 30\n`);
		await vim.keys(":terminal sh env.sh", "Enter");
		await vim.waitExpr("&buftype ==# 'terminal'");
		const s = await vim.until((s) => buf(s).cursor.line === 2, "a.ts described from the terminal");
		assert.equal(buf(s).file, join(vim.dirs.work, "a.ts"));
		await vim.waitExpr(`filereadable('${out}') && readfile('${out}') ==# ['${vim.pid}']`);
	});

	it("a selection over 256 KiB once encoded is cut and marked truncated", async (t) => {
		// Quotes double when encoded: 200,000 of them take 400,000 bytes.
		const vim = await withFile(t, `${'"'.repeat(200_000)}\nend\n`, "big.txt");
		await vim.keys("g", "g", "V", "G");
		await vim.waitExpr("mode() ==# 'V' && line('.') == 2");
		const s = await vim.until((s) => buf(s).selection?.truncated === true, "truncated selection");
		const sel = buf(s).selection;
		assert.ok(sel);
		assert.ok(JSON.stringify(sel.text).length - 2 <= 256 * 1024);
		assert.ok(JSON.stringify(sel.text).length - 2 > 256 * 1024 - 8);
		assert.deepEqual(sel.end, { line: 2, column: 3 });
	});

	it("a state dir opened up while Vim runs (chmod 755) gets no further write", async (t) => {
		const vim = await withFile(t);
		chmodSync(vim.dirs.stateDir, 0o755);
		await vim.keys("j");
		await vim.waitExpr("pi_ide#Status().failures >= 1");
		assert.equal(buf(vim.state() ?? {}).cursor.line, 1, "the last write before the change stays");
		assert.match(String(await vim.expr("execute('messages')")), /has mode rwxr-xr-x/);
	});

	it("an insecure state dir gets nothing written and one notice", async (t) => {
		const vim = await startVim(t, {
			dirs: undefined,
			noWaitForClient: true,
			vimrc: ["let g:pi_ide_disable = 1"],
		});
		mkdirSync(vim.dirs.stateDir);
		chmodSync(vim.dirs.stateDir, 0o755);
		await vim.ex("let g:pi_ide_disable = 0 | call pi_ide#Enable()");
		writeFileSync(join(vim.dirs.work, "a.ts"), SOURCE);
		await vim.ex("edit a.ts");
		await vim.keys("j", "j", "k");
		await vim.waitExpr("pi_ide#Status().failures >= 1");
		await vim.waitExpr("execute('messages') =~# 'not writing the state file'");
		const messages = String(await vim.expr("execute('messages')"));
		assert.equal(messages.split("not writing the state file").length - 1, 1, messages);
		assert.equal(existsSync(vim.stateFile), false);
		assert.doesNotMatch(await vim.capture(), /Press ENTER/);
	});
});
