/**
 * Issue 26 in real Vim 9 under tmux (editors/vim/autoload/pi_ide/merge.vim): pi's change merged into the user's
 * unsaved buffer, the user's edits typed as keys. The merge is one undo step of its own: typed `u` takes pi's lines
 * out, never the user's, whether the user was still in Insert mode when it came (the step Vim keeps open while
 * typing) or typed a change after it. A conflict keeps the user's text, says so in one line with `:PiIde diff`,
 * which shows the file on disk beside the buffer; a change Vim cannot merge is reported `modified` and the buffer
 * is left alone. (The rules every client keeps: test/conformance/cases/merge.ts.)
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { contentOf, mergeInfo } from "../../src/link/change-set.ts";
import type { FileReport } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startVim, type Vim, vimString } from "../helpers/vim.ts";

after(killAllEditors);

const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;
const replaced = (lines: string[], at: number, line: string) => lines.map((l, i) => (i === at - 1 ? line : l));

interface World {
	vim: Vim;
	file: string;
	pi: number;
	seq: number;
}

async function world(t: TestContext, content = text(LINES)): Promise<World> {
	const vim = await startVim(t, { cols: 160, rows: 24 });
	const file = join(vim.dirs.work, "m.txt");
	writeFileSync(file, content);
	await vim.ex("edit m.txt");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "m.txt open");
	const live = await spawnLiveEditor();
	t.after(live.kill);
	const w = { vim, file, pi: live.pid, seq: 0 };
	say(w, []);
	await vim.until((s) => (s["pi"] as { seq: number } | null)?.seq === 0, "pi's first message handled");
	return w;
}

function say(w: World, changed: unknown[]): void {
	const message = makePiMessage({
		pid: w.pi,
		cwd: w.vim.dirs.work,
		timestamp: Date.now() / 1000,
		editor_pid: w.vim.pid,
		seq: w.seq,
		changed: changed as never,
		last_turn: [],
	});
	writeRawStateFile(w.vim.dirs.stateDir, `pi-${w.pi}.json`, JSON.stringify(message));
}

/** pi's tool writes `after` (over `before`); its message carries `merge` (changed by `tamper` if given). */
async function piWrites(
	w: World,
	before: string,
	after: string,
	tamper: (m: Record<string, unknown>) => Record<string, unknown> = (m) => m,
): Promise<FileReport> {
	const merge = mergeInfo(contentOf(Buffer.from(before)), contentOf(Buffer.from(after)));
	assert.ok(merge);
	writeFileSync(w.file, after);
	w.seq++;
	say(w, [{ file: w.file, seq: w.seq, tool: "edit", merge: tamper({ ...merge }) }]);
	const seq = w.seq;
	const state = await w.vim.until(
		(s) => ((s["files"] ?? []) as FileReport[]).some((f) => f.file === w.file && f.seq === seq),
		`the report on pi's change ${seq}`,
	);
	const report = (state["files"] as FileReport[]).find((f) => f.file === w.file && f.seq === seq);
	assert.ok(report);
	return report;
}

const lines = (vim: Vim) => vim.expr<string[]>("getline(1, '$')");
const modified = async (vim: Vim) => (await vim.expr<number>("&modified")) === 1;

/** Typed `u` in Normal mode; done once Vim has run a command typed after it. */
async function typedUndo(vim: Vim): Promise<void> {
	const tick = await vim.expr<number>("b:changedtick");
	await vim.keys("Escape", "u");
	await vim.waitExpr(`b:changedtick != ${tick}`);
}

describe("Vim 9: pi's change merged into the unsaved buffer (issue 26)", () => {
	it("merged while the user is still typing in Insert mode: one typed u takes pi's line out, all the typing stays", async (t) => {
		const w = await world(t);
		await w.vim.keys("3G", "A");
		await w.vim.text(" typed");
		await w.vim.waitExpr("getline(3) ==# 'line 3 typed' && mode() ==# 'i'");
		const report = await piWrites(w, text(LINES), text(replaced(LINES, 10, "pi ten")));
		assert.equal(report.status, "merged");
		assert.equal(await w.vim.expr<string>("mode()"), "i", "still in Insert mode: no prompt, no focus change");
		await w.vim.text(" more");
		await w.vim.waitExpr("getline(3) ==# 'line 3 typed more'");
		assert.deepEqual(await lines(w.vim), replaced(replaced(LINES, 10, "pi ten"), 3, "line 3 typed more"));
		await typedUndo(w.vim); // pi's merge, and nothing of the user's
		assert.deepEqual(await lines(w.vim), replaced(LINES, 3, "line 3 typed more"), "pi's line out, the typing stays");
		assert.equal(await modified(w.vim), true);
		await typedUndo(w.vim); // the user's insert, all of it
		assert.deepEqual(await lines(w.vim), LINES);
		assert.equal(readFileSync(w.file, "utf8"), text(replaced(LINES, 10, "pi ten")), "never written");
	});

	it("a change typed after the merge is its own step: u takes it out and leaves pi's lines", async (t) => {
		const w = await world(t);
		await w.vim.keys("2G", "c", "c");
		await w.vim.text("user two");
		await w.vim.keys("Escape");
		await w.vim.waitExpr("getline(2) ==# 'user two' && mode() ==# 'n'");
		const pis = replaced(LINES, 11, "pi eleven");
		assert.equal((await piWrites(w, text(LINES), text(pis))).status, "merged");
		await w.vim.keys("5G", "d", "d");
		await w.vim.waitExpr("line('$') == 11");
		await typedUndo(w.vim);
		assert.deepEqual(await lines(w.vim), replaced(pis, 2, "user two"));
		await typedUndo(w.vim);
		assert.deepEqual(await lines(w.vim), replaced(LINES, 2, "user two"));
	});

	it("a conflict keeps the user's text and says so once, in one line, with :PiIde diff", async (t) => {
		const w = await world(t);
		await w.vim.keys("4G", "c", "c");
		await w.vim.text("user four");
		await w.vim.keys("Escape");
		await w.vim.waitExpr("getline(4) ==# 'user four'");
		const pis = replaced(replaced(LINES, 4, "pi four"), 9, "pi nine");
		const report = await piWrites(w, text(LINES), text(pis));
		assert.equal(report.status, "conflict");
		assert.deepEqual(report.merge, { hunks: 2, merged: 1, conflicts: [{ line: 4, lines: 1, text: ["user four"] }] });
		assert.deepEqual(await lines(w.vim), replaced(pis, 4, "user four"));
		const said = (await w.vim.expr<string>("execute('messages')")).split("\n").filter((l) => l.includes("pi-ide"));
		assert.deepEqual(said, [
			"(pi-ide) pi's change to m.txt touches your unsaved line 4: kept yours. Compare: :PiIde diff",
		]);
		await w.vim.keys(":PiIde diff", "Enter");
		await w.vim.waitExpr("winnr('$') == 2");
		assert.equal(await w.vim.expr<string>("expand('%:t')"), "m.txt", "the cursor stays in the user's window");
		assert.deepEqual(await w.vim.expr<string[]>("getbufline(winbufnr(2), 1, '$')"), pis, "the file on disk beside");
		assert.equal(await w.vim.expr<number>("&diff"), 1);
		assert.equal(await modified(w.vim), true);
		assert.deepEqual(await lines(w.vim), replaced(pis, 4, "user four"), "the buffer is not reloaded");
	});

	// Issue 26 item 6: a conflict is listed where pi's hunks are (:PiIde hunks, the quickfix list), on the user's
	// lines, following them when the user edits above; once saved, buffer and file agree and it leaves the list.
	it("a conflict is listed with pi's hunks (:PiIde hunks), on the user's lines as they move; saved, it leaves", async (t) => {
		const w = await world(t);
		await w.vim.keys("4G", "c", "c");
		await w.vim.text("user four");
		await w.vim.keys("Escape");
		await w.vim.waitExpr("getline(4) ==# 'user four'");
		const pis = replaced(replaced(LINES, 4, "pi four"), 9, "pi nine");
		const report = await piWrites(w, text(LINES), text(pis));
		assert.equal(report.status, "conflict");
		await w.vim.keys("g", "g", "O");
		await w.vim.text("user top");
		await w.vim.keys("Escape");
		await w.vim.waitExpr("getline(1) ==# 'user top' && mode() ==# 'n'");
		const listed = async () => {
			const reply = await w.vim.expr<string>("trim(execute('PiIde hunks'))");
			const items = await w.vim.expr<{ lnum: number; end_lnum: number; text: string; name: string }[]>(
				"map(getqflist(), {_, it -> {'lnum': it.lnum, 'end_lnum': it.end_lnum, 'text': it.text, 'name': fnamemodify(bufname(it.bufnr), ':t')}})",
			);
			return { reply, items };
		};
		assert.deepEqual(await listed(), {
			reply: "(pi-ide) 0 of pi's hunks and 1 conflicts in the quickfix list (:copen)",
			items: [
				{
					lnum: 5,
					end_lnum: 5,
					name: "m.txt",
					text: "conflict: your unsaved line 5 kept; pi's version is on disk (:PiIde diff)",
				},
			],
		});
		// After a conflict Vim asks before writing over the changed file: the user answers it, as they decide.
		await w.vim.keys(":w", "Enter");
		await pollUntil(async () => ((await w.vim.capture()).includes("(y/n)") ? true : undefined), "Vim asks");
		await w.vim.keys("y");
		await w.vim.waitExpr("!&modified");
		assert.match(
			(await listed()).reply,
			/no hunks of pi's known/,
			"saved: the buffer and its file agree, nothing is listed",
		);
	});

	const notMerged: { name: string; setup?: string; tamper: (m: Record<string, unknown>) => Record<string, unknown> }[] =
		[
			{
				name: "the file is not what pi's tool wrote (another hash)",
				tamper: (m) => ({ ...m, sha256: "0".repeat(64) }),
			},
			{ name: "an earlier change of the file is not in the message", tamper: (m) => ({ ...m, prev_seq: 99 }) },
			{ name: "a malformed hunk", tamper: (m) => ({ ...m, hunks: [{ old_start: 0 }] }) },
			{
				name: "a CR-LF buffer (its lines are not the file's split at \\n)",
				setup: "setlocal ff=dos",
				tamper: (m) => m,
			},
		];
	for (const c of notMerged) {
		it(`not merged, reported modified, the buffer untouched: ${c.name}`, async (t) => {
			const w = await world(t);
			if (c.setup) await w.vim.ex(c.setup);
			await w.vim.keys("2G", "c", "c");
			await w.vim.text("user two");
			await w.vim.keys("Escape");
			await w.vim.waitExpr("getline(2) ==# 'user two'");
			const before = await lines(w.vim);
			const report = await piWrites(w, text(LINES), text(replaced(LINES, 9, "pi nine")), c.tamper);
			assert.equal(report.status, "modified");
			assert.equal(report.merge, undefined);
			assert.deepEqual(await lines(w.vim), before);
		});
	}

	// The file's hash comes from the client's verified read (its kept perl hashes the bytes it read: Vim neither
	// joins nor hashes 10,000 lines); a merge compares that hash with pi's, and computes it only without one.
	const MERGE_WITH = `vim9script
import autoload 'pi_ide/merge.vim'
import autoload 'pi_ide/inbox.vim'
def g:PiTestRead(file: string): string
  return get(inbox.ReadVerifiedMany([file])[file], 'sha256', '')
enddef
def g:PiTestMerge(file: string, info: dict<any>, sha: string): dict<any>
  return merge.Merge(bufnr(), [{seq: 1, merge: merge.Parse(info)}], readfile(file, 'b'), sha)
enddef
`;
	const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
	const hashCases: { name: string; onDisk?: string; sha: (file: string) => string; merged: boolean }[] = [
		{ name: "the read's hash is pi's", sha: (f) => sha256(f), merged: true },
		{ name: "the read's hash in capitals", sha: (f) => sha256(f).toUpperCase(), merged: true },
		{ name: "a planted wrong hash (the bytes' own is pi's)", sha: () => "0".repeat(64), merged: false },
		{ name: "no hash from the read: Vim computes it", sha: () => "", merged: true },
		{
			name: "the file changed since pi's tool, the read's hash of what it read",
			onDisk: text(replaced(replaced(LINES, 9, "pi nine"), 1, "someone else")),
			sha: (f) => sha256(f),
			merged: false,
		},
	];
	it("the kept reader (perl) hashes what it reads: its SHA-256 is the file's", async (t) => {
		const w = await world(t);
		writeFileSync(join(w.vim.dirs.root, "merge-with.vim"), MERGE_WITH);
		await w.vim.ex(`source ${join(w.vim.dirs.root, "merge-with.vim")}`);
		const content = text(replaced(LINES, 9, "pi nine"));
		writeFileSync(w.file, content);
		assert.equal(await w.vim.expr<string>(`g:PiTestRead(${vimString(w.file)})`), sha256(content));
	});
	for (const c of hashCases) {
		it(`the merge compares the read's hash with pi's: ${c.name}`, async (t) => {
			const w = await world(t);
			writeFileSync(join(w.vim.dirs.root, "merge-with.vim"), MERGE_WITH);
			await w.vim.ex(`source ${join(w.vim.dirs.root, "merge-with.vim")}`);
			await w.vim.keys("2G", "c", "c");
			await w.vim.text("user two");
			await w.vim.keys("Escape");
			await w.vim.waitExpr("getline(2) ==# 'user two'");
			const before = await lines(w.vim);
			const after = text(replaced(LINES, 9, "pi nine"));
			const info = mergeInfo(contentOf(Buffer.from(text(LINES))), contentOf(Buffer.from(after)));
			const disk = c.onDisk ?? after;
			writeFileSync(w.file, disk);
			const outcome = await w.vim.expr<Record<string, unknown>>(
				`g:PiTestMerge(${vimString(w.file)}, json_decode(${vimString(JSON.stringify(info))}), ${vimString(c.sha(disk))})`,
			);
			if (c.merged) {
				assert.equal(outcome["status"], "merged", JSON.stringify(outcome));
				assert.deepEqual(await lines(w.vim), replaced(before, 9, "pi nine"));
			} else {
				assert.deepEqual(outcome, { why: "the file is not what pi's tool wrote" });
				assert.deepEqual(await lines(w.vim), before, "the buffer untouched");
			}
		});
	}
});
