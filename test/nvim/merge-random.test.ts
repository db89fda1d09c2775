/**
 * Seeded, in real Neovim 0.7.2 and 0.10 (issue 26): random sequences of the user's typed edits (each its own undo
 * step), saves, undos and pi's edits of one file, checked after every step against independent oracles: the merge
 * rule of test/fixtures/merge-oracle.ts (a three-way merge built from the rule, with jsdiff) for the buffer, the
 * report's conflicts and pi's tool result; a stack of the buffer's states for what `u` restores (a merge is one step
 * of its own, a reload too); the disk always exactly what the last writer (pi's tool, the user's save) wrote; the
 * buffer modified unless it stands at its last save or reload. Lines are unique tokens, so every line diff is the
 * same whoever computes it. pi's message is built by pi's own code (ChangeLog, mergeInfo).
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 25 per Neovim). A failure prints its seed and steps.
 */

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { contentOf, mergeInfo } from "../../src/link/change-set.ts";
import { ChangeLog, formatToolNote, type SeqCounter } from "../../src/link/pi-message.ts";
import { merge3 } from "../fixtures/merge-oracle.ts";
import { MergeSteps, UndoOracle } from "../fixtures/merge-steps.ts";
import { killAllEditors } from "../helpers/editors.ts";
import { forEachNvim, type Nvim } from "../helpers/nvim.ts";
import { assertNoErrors, luaWithoutPrompt, nextSeq, send, type World, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 25);
const STEPS = 14;
const text = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

const BUFFER = "return { vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.bo.modified }";

/**
 * The user's `:w!`. After a conflict the file on disk is pi's, newer than the buffer's read: Neovim 0.7.2 asks
 * whether to write over it even with `!` (0.10 does not); the user answers yes, and Enter at the warning's prompt.
 */
async function save(nv: Nvim): Promise<void> {
	let done = false;
	const write = nv.command("silent w!").finally(() => {
		done = true;
	});
	while (!done) {
		const mode = await nv.call<{ mode: string; blocking: boolean }>("nvim_get_mode");
		if (mode.mode === "r?") nv.notify("nvim_input", "y"); // Enter at the warning's prompt: the harness's
		await new Promise((r) => setTimeout(r, 10));
	}
	await write;
}

/** What the sequences did (shown with the result, so a run that never merged or never conflicted is seen). */
const tally: Record<string, number> = {};

async function runSequence(w: World, seed: number, counter: SeqCounter): Promise<void> {
	const steps = new MergeSteps(seed);
	const int = steps.int;
	const file = join(w.nv.tmp, `m${seed}.txt`);
	let disk = Array.from({ length: 8 }, (_, i) => `b${i + 1}`);
	writeFileSync(file, text(disk));
	await w.nv.command(`silent! %bwipeout! | edit ${file}`);
	const undo = new UndoOracle([...disk]);
	const log = new ChangeLog(counter);
	const trail: string[] = [];
	const fail = (what: string) => `seed ${seed}, after ${trail.join("; ")}: ${what}`;
	for (let step = 0; step < STEPS; step++) {
		const action = int(10);
		const buffer = undo.current;
		if (action < 4) {
			const edit = steps.userEdit(buffer);
			const { next } = edit;
			const keys = edit.insert ? `${edit.keys}<Esc>` : edit.keys;
			await w.nv.input(keys);
			undo.push(next);
			undo.modified = true;
			trail.push(`user ${keys}`);
		} else if (action === 4) {
			await save(w.nv);
			disk = [...buffer];
			undo.modified = false;
			trail.push("user :w");
		} else if (action === 5) {
			await w.nv.input("u");
			undo.undo();
			trail.push("user u");
		} else {
			// pi's edit of the file on disk: 1 to 3 changes at random lines.
			const next = steps.piEdit(disk);
			if (next.join("\n") === disk.join("\n")) continue;
			const info = mergeInfo(contentOf(Buffer.from(text(disk))), contentOf(Buffer.from(text(next))));
			assert.ok(info);
			writeFileSync(file, text(next));
			const seq = log.record(file, "edit", info);
			nextSeq();
			send(w, {
				protocol: "0.3",
				kind: "pi",
				pid: w.piPid,
				cwd: w.nv.tmp,
				timestamp: Date.now() / 1000,
				editor_pid: w.nv.pid,
				seq,
				changed: log.changed,
				last_turn: [file],
			});
			trail.push(`pi ${JSON.stringify(disk)} -> ${JSON.stringify(next)}`);
			const state = await w.nv.until(
				(s) => (s.files ?? []).some((f) => f.file === file && f.seq === seq),
				`seed ${seed}: the report on pi's change ${seq}`,
			);
			const report = state.files?.find((f) => f.file === file && f.seq === seq);
			assert.ok(report);
			tally[report.status] = (tally[report.status] ?? 0) + 1;
			const note = formatToolNote(state, file, { report, ended: "settled" }) ?? "";
			if (!undo.modified) {
				assert.equal(report.status, "reloaded", fail("an unmodified buffer reloads"));
				undo.push(next);
			} else {
				const expected = merge3(disk, buffer, next);
				const status = expected.conflicts.length > 0 ? "conflict" : "merged";
				assert.equal(report.status, status, fail(`the report's status (${JSON.stringify(report.merge)})`));
				assert.equal(report.merge?.merged, expected.taken, fail("pi's hunks merged"));
				assert.equal(report.merge?.hunks, expected.hunks, fail("pi's hunks"));
				assert.deepEqual(report.merge?.conflicts, expected.conflicts, fail("the conflicts"));
				if (status === "merged") assert.match(note, /merged this change into the editor's unsaved buffer/);
				for (const c of expected.conflicts) {
					const where = c.lines <= 1 ? `line ${c.line}` : `lines ${c.line}-${c.line + c.lines - 1}`;
					assert.ok(note.includes(where), fail(`the tool result names ${where}: ${note}`));
					for (const line of c.text) assert.ok(note.includes(line), fail(`the tool result quotes ${line}`));
				}
				if (expected.taken > 0) undo.push(expected.merged);
			}
			disk = next;
		}
		// Read as a request that fails at once if Neovim waits for a key: a merge never prompts.
		const [lines, modified] = await luaWithoutPrompt<[string[], boolean]>(w.nv, BUFFER);
		assert.deepEqual(lines, undo.current.length === 0 ? [""] : undo.current, fail("the buffer"));
		if (action === 5) undo.modified = modified;
		assert.equal(modified, undo.modified, fail("'modified'"));
		assert.equal(readFileSync(file, "utf8"), text(disk), fail("the disk has what its last writer wrote"));
	}
}

forEachNvim((flavour) => {
	describe(`seeded: pi's edits merged into the user's unsaved buffer (${flavour.name})`, () => {
		it(`${SEEDS} sequences of typed edits, saves, undos and pi's edits`, async (t) => {
			const w = await world(t, flavour);
			await w.nv.command("set hidden");
			const counter: SeqCounter = { last: nextSeq() + 1000 };
			for (const k of Object.keys(tally)) delete tally[k];
			for (let seed = 1; seed <= SEEDS; seed++) await runSequence(w, seed, counter);
			t.diagnostic(`reports: ${JSON.stringify(tally)}`);
			for (const status of ["merged", "conflict", "reloaded"]) assert.ok((tally[status] ?? 0) > 0, `some ${status}`);
			await assertNoErrors(w.nv);
		});
	});
});
