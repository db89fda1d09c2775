/**
 * Seeded, in real Vim 9 under tmux: which of pi's hunks Vim lists as reverted (pi_ide/review.vim's `reverted`, what
 * the state file gets), over random sequences of `:PiIde revert` at a marked line, `u`, CTRL-R and the user's own
 * edits (a line appended to, a line inserted), against the stack oracle of test/fixtures/revert-oracle.ts (which
 * knows nothing of text), with Vim's own undo. The change set is pi's own (src/link/change-set.ts via the shared
 * fixture), with frequent equal lines; each step is its own undo step, as a user's separate commands are.
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 12: quick).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, it } from "node:test";
import { RevertOracle, revertVersions } from "../fixtures/revert-oracle.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { seededInts } from "../helpers/seeded.ts";
import { startVim, type Vim, vimString } from "../helpers/vim.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 12);
const STEPS = 16;

/**
 * The test's Vim functions: `:PiIde revert` with the cursor on line `lnum`, returning the ids of the hunks it
 * reverted, oldest first (two where a deletion is marked on the line of another hunk), or none; and what the state
 * file's `reverted` would list now for `file`.
 */
const VIMRC = [
	"set hidden",
	"function! PiTestRevertAt(lnum) abort",
	"  let before = copy(pi_ide#review#Debug().reverted)",
	"  call cursor(a:lnum, 1)",
	"  silent PiIde revert",
	"  let made = filter(copy(pi_ide#review#Debug().reverted), {_, e -> empty(filter(copy(before), {_, b -> b is e}))})",
	"  return map(made, {_, e -> e.id})",
	"endfunction",
	"function! PiTestListed(file) abort",
	"  return map(filter(copy(pi_ide#review#Reverted() ?? []), {_, e -> e.file ==# a:file}), {_, e -> e.id})",
	"endfunction",
];

/** The lines of pi's marks in the current buffer, top to bottom. */
const MARK_LINES = "uniq(sort(map(sign_getplaced(bufnr(), {'group': 'pi_ide_review'})[0].signs, 'v:val.lnum'), 'n'))";

async function runSequence(vim: Vim, piPid: number, seed: number): Promise<string | undefined> {
	const int = seededInts(seed);
	const { base, pi } = revertVersions(int);
	// A file of its own per sequence (the one before wiped: its reverts no longer followed), showing pi's version
	// with a fresh undo history; then pi's change set, announced by pi's message.
	const file = join(vim.dirs.work, `seed-${seed}.txt`);
	writeFileSync(file, pi);
	const before = await vim.expr<number>("bufnr()");
	await vim.ex(`silent edit ${file}`);
	if (seed > 1) await vim.ex(`bwipeout! ${before}`);
	writeRawStateFile(
		vim.dirs.stateDir,
		`pi-${piPid}.review.json`,
		oneRunReview([{ file, before: base, after: pi }], { pid: piPid, editorPid: vim.pid }).toString(),
	);
	const msg = { protocol: "0.4", kind: "pi", pid: piPid, cwd: vim.dirs.work, timestamp: Date.now() / 1000 };
	writeRawStateFile(
		vim.dirs.stateDir,
		`pi-${piPid}.json`,
		JSON.stringify({ ...msg, editor_pid: vim.pid, seq: seed, changed: [], last_turn: [] }),
	);
	await vim.waitExpr(`has_key(pi_ide#review_rules#Newest(pi_ide#review#Debug().sets), ${vimString(file)})`);
	assert.deepEqual(await vim.expr("getline(1, '$')"), pi.replace(/\n$/, "").split("\n"), `seed ${seed}: pi's version`);
	const oracle = new RevertOracle<null>();
	const trail: string[] = [];
	for (let i = 0; i < STEPS; i++) {
		// Each step its own undo step (`:help undo-break`).
		await vim.ex("let &undolevels = &undolevels");
		const action = int(10);
		const count = await vim.expr<number>("line('$')");
		if (action < 3) {
			const marked = await vim.expr<number[]>(MARK_LINES);
			if (marked.length === 0) continue;
			const line = marked[int(marked.length)] as number;
			const ids = await vim.expr<string[]>(`PiTestRevertAt(${line})`);
			if (ids.length === 0) continue;
			oracle.step(null, ids);
			trail.push(`revert ${ids.join(" and ")} at line ${line}`);
		} else if (action < 5) {
			if (!oracle.undo()) continue;
			await vim.ex("silent normal! u");
			trail.push("u");
		} else if (action < 7) {
			if (!oracle.redo()) continue;
			await vim.ex('silent execute "normal! \\<C-r>"');
			trail.push("CTRL-R");
		} else {
			const line = 1 + int(count);
			if (action < 9) await vim.ex(`call setline(${line}, getline(${line}) . '!${i}')`);
			else await vim.ex(`call append(${line - 1}, 'u${i}')`);
			oracle.step(null);
			trail.push(`${action < 9 ? "append to" : "insert above"} line ${line}`);
		}
		const got = await vim.expr<string[]>(`PiTestListed(${vimString(file)})`);
		const want = oracle.listed();
		if (JSON.stringify(got) !== JSON.stringify(want)) {
			return `seed ${seed}, step ${i}: listed ${JSON.stringify(got)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
		}
	}
	return undefined;
}

it(`vim: reverts listed while they hold (seeded): ${SEEDS} sequences of ${STEPS} steps of :PiIde revert, u, CTRL-R and the user's edits`, async (t) => {
	const vim = await startVim(t, { cols: 80, rows: 24, vimrc: VIMRC });
	const pi = await spawnLiveEditor();
	for (let seed = 1; seed <= SEEDS; seed++) {
		assert.equal(await runSequence(vim, pi.pid, seed), undefined);
	}
	const said = await vim.expr<string>("execute('messages')");
	assert.doesNotMatch(said, /E\d{2,4}:|Error/, said);
});
