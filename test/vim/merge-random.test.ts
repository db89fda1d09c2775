/**
 * Seeded, in real Vim 9 under tmux (issue 26; the Neovim twin: test/nvim/merge-random.test.ts): random sequences of
 * the user's typed edits (each its own undo step), saves, undos and pi's edits of one file, checked after every step
 * against independent oracles: the merge rule of test/fixtures/merge-oracle.ts (a three-way merge built from the
 * rule, with jsdiff) for the buffer and the report's conflicts; a stack of the buffer's states for what typed `u`
 * restores (a merge is one step of its own); the disk always exactly what the last writer (pi's tool, the user's
 * save) wrote; the buffer modified unless it stands at its last save or reload. Lines are unique tokens, so every
 * line diff is the same whoever computes it. pi's message is built by pi's own code (ChangeLog, mergeInfo).
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 12). A failure prints its seed and steps.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, it } from "node:test";
import { contentOf, mergeInfo } from "../../src/link/change-set.ts";
import { ChangeLog, type SeqCounter } from "../../src/link/pi-message.ts";
import type { FileReport } from "../../src/protocol/protocol.ts";
import { merge3 } from "../fixtures/merge-oracle.ts";
import { MergeSteps, UndoOracle } from "../fixtures/merge-steps.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startVim, type Vim } from "../helpers/vim.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 12);
const STEPS = 12;
const text = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

/** Keys typed, then a no-op command whose mark proves Vim has run everything typed before it. */
let marks = 0;
async function typed(vim: Vim, literal: string, ...keys: string[]): Promise<void> {
	if (literal !== "") await vim.text(literal);
	if (keys.length > 0) await vim.keys(...keys);
	marks += 1;
	await vim.keys("Escape");
	await vim.text(`:let g:pi_test_mark = ${marks}`);
	await vim.keys("Enter");
	await vim.waitExpr(`get(g:, 'pi_test_mark', 0) == ${marks}`);
}

/**
 * The user's `:w!`. After a conflict the file on disk is pi's, newer than the buffer's read: Vim asks whether to
 * write over it; the user answers yes, and Enter at the prompt that follows.
 */
async function save(vim: Vim, file: string, expected: string): Promise<void> {
	await vim.keys("Escape");
	await vim.text(":w!");
	await vim.keys("Enter");
	let screen = "";
	await pollUntil(
		async () => {
			screen = await vim.capture();
			if (/\(y\/n\)/.test(screen)) await vim.keys("y");
			else if (/Press ENTER/.test(screen)) await vim.keys("Enter");
			else if (readFileSync(file, "utf8") === expected) return true;
			return undefined;
		},
		() => `Vim to write the file; screen:\n${screen}`,
		{ intervalMs: 30 },
	);
	await typed(vim, "");
}

const tally: Record<string, number> = {};

async function runSequence(vim: Vim, piPid: number, seed: number, counter: SeqCounter): Promise<void> {
	const steps = new MergeSteps(seed);
	const int = steps.int;
	const file = join(vim.dirs.work, `m${seed}.txt`);
	let disk = Array.from({ length: 8 }, (_, i) => `b${i + 1}`);
	writeFileSync(file, text(disk));
	await vim.ex(`silent! %bwipeout! | edit ${file}`);
	const undo = new UndoOracle([...disk]);
	const log = new ChangeLog(counter);
	const trail: string[] = [];
	const fail = (what: string) => `seed ${seed}, after ${trail.join("; ")}: ${what}`;
	// Whether the newest undo step is a reload with nothing typed since (pi's reload of an unmodified buffer is
	// not this test's subject: Vim joins reloads in a row into one undo step, as the oracle then does).
	let lastReload: boolean = false;
	for (let step = 0; step < STEPS; step++) {
		const action = int(10);
		const reloadBefore: boolean = lastReload;
		lastReload = false;
		const buffer = undo.current;
		if (action < 4) {
			const { keys, next } = steps.userEdit(buffer);
			await typed(vim, keys);
			undo.push(next);
			undo.modified = true;
			trail.push(`user ${keys}`);
		} else if (action === 4) {
			await save(vim, file, text(buffer));
			disk = [...buffer];
			undo.modified = false;
			trail.push("user :w");
		} else if (action === 5) {
			await typed(vim, "u");
			undo.undo();
			trail.push("user u");
		} else {
			// pi's edit of the file on disk: 1 to 3 changes at random lines.
			const next = steps.piEdit(disk);
			if (next.join("\n") === disk.join("\n")) {
				lastReload = reloadBefore;
				continue;
			}
			const info = mergeInfo(contentOf(Buffer.from(text(disk))), contentOf(Buffer.from(text(next))));
			assert.ok(info);
			writeFileSync(file, text(next));
			const seq = log.record(file, "edit", info);
			const message = makePiMessage({
				pid: piPid,
				cwd: vim.dirs.work,
				timestamp: Date.now() / 1000,
				editor_pid: vim.pid,
				seq,
				changed: log.changed as never,
				last_turn: [file],
			});
			writeRawStateFile(vim.dirs.stateDir, `pi-${piPid}.json`, JSON.stringify(message));
			trail.push(`pi ${JSON.stringify(disk)} -> ${JSON.stringify(next)}`);
			const state = await vim.until(
				(s) => ((s["files"] ?? []) as FileReport[]).some((f) => f.file === file && f.seq === seq),
				`seed ${seed}: the report on pi's change ${seq}`,
			);
			const report = (state["files"] as FileReport[]).find((f) => f.file === file && f.seq === seq);
			assert.ok(report);
			tally[report.status] = (tally[report.status] ?? 0) + 1;
			if (!undo.modified) {
				assert.equal(report.status, "reloaded", fail("an unmodified buffer reloads"));
				if (reloadBefore && undo.at > 0) undo.replace(next);
				else undo.push(next);
				lastReload = true;
			} else {
				const expected = merge3(disk, buffer, next);
				const status = expected.conflicts.length > 0 ? "conflict" : "merged";
				assert.equal(report.status, status, fail(`the report's status (${JSON.stringify(report.merge)})`));
				assert.equal(report.merge?.merged, expected.taken, fail("pi's hunks merged"));
				assert.equal(report.merge?.hunks, expected.hunks, fail("pi's hunks"));
				assert.deepEqual(report.merge?.conflicts, expected.conflicts, fail("the conflicts"));
				if (expected.taken > 0) undo.push(expected.merged);
			}
			disk = next;
		}
		const lines = await vim.expr<string[]>("getline(1, '$')");
		const modified = (await vim.expr<number>("&modified")) === 1;
		assert.deepEqual(lines, undo.current.length === 0 ? [""] : undo.current, fail("the buffer"));
		// After an undo, 'modified' is Vim's own business (undoing a reload leaves it as Vim decides).
		if (action === 5) undo.modified = modified;
		assert.equal(modified, undo.modified, fail("'modified'"));
		assert.equal(readFileSync(file, "utf8"), text(disk), fail("the disk has what its last writer wrote"));
	}
}

it(`seeded, Vim 9: ${SEEDS} sequences of typed edits, saves, undos and pi's edits merged into the unsaved buffer`, async (t) => {
	const vim = await startVim(t, { cols: 200, rows: 30, vimrc: ["set hidden"] });
	const live = await spawnLiveEditor();
	t.after(live.kill);
	const counter: SeqCounter = { last: 1000 };
	for (let seed = 1; seed <= SEEDS; seed++) await runSequence(vim, live.pid, seed, counter);
	t.diagnostic(`reports: ${JSON.stringify(tally)}`);
	for (const status of ["merged", "conflict", "reloaded"]) assert.ok((tally[status] ?? 0) > 0, `some ${status}`);
	const said = await vim.expr<string>("execute('messages')");
	assert.doesNotMatch(said, /E\d+:|Error/, "no error in Vim");
});
