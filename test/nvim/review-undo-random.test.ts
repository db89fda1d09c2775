/**
 * Seeded, in real Neovim: which of pi's hunks Neovim lists as reverted (pi-ide.review's `reverted`, what the
 * state file gets), over random sequences of `:PiIde revert`, `u`, `<C-r>` and the user's own edits, against
 * the stack oracle of test/fixtures/revert-oracle.ts (which knows nothing of text), with Neovim's own undo.
 * The change set is pi's own (src/link/change-set.ts via the shared fixture); each step is its own undo block,
 * as a user's separate commands are.
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 60 per Neovim).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { RevertOracle, revertVersions } from "../fixtures/revert-oracle.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { assertNoErrors, lines, message, send, type World, world } from "../helpers/nvim-inbox.ts";
import { seededInts } from "../helpers/seeded.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 60);
const STEPS = 16;

/** The rows (0-based) of pi's marks in the current buffer, top to bottom. */
const MARK_ROWS = `local ns = vim.api.nvim_create_namespace("pi-ide-review")
	return vim.tbl_map(function(m) return m[2] end, vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}))`;

/**
 * One `:PiIde revert` at `row`: the ids of the hunks it reverted, oldest first (two where a deletion is marked on
 * the line of another hunk), or none.
 */
const REVERT_AT = `local row = ...
	local reverted = require("pi-ide.review")._state().reverted
	local before = {}
	for _, r in ipairs(reverted) do before[r] = true end
	vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
	vim.cmd("silent PiIde revert")
	local ids = {}
	for _, r in ipairs(require("pi-ide.review")._state().reverted) do
		if not before[r] then ids[#ids + 1] = r.id end
	end
	return ids`;

/** What the state file's `reverted` would list now. */
const LISTED = `return vim.tbl_map(function(r) return r.id end, require("pi-ide.review").report() or {})`;

async function runSequence(w: World, seed: number): Promise<string | undefined> {
	const int = seededInts(seed);
	const { base, pi } = revertVersions(int);
	// The buffer shows the baseline, unmodified; pi writes its version and announces it: Neovim reloads and marks.
	writeFileSync(w.file, base);
	await w.nv.command("silent edit!");
	writeFileSync(w.file, pi);
	writeRawStateFile(
		w.nv.stateDir,
		`pi-${w.piPid}.review.json`,
		oneRunReview([{ file: w.file, before: base, after: pi }], { pid: w.piPid, editorPid: w.nv.pid }).toString(),
	);
	const msg = message(w);
	send(w, msg);
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
	assert.deepEqual(await lines(w.nv), pi.replace(/\n$/, "").split("\n"), `seed ${seed}: Neovim shows pi's version`);
	const oracle = new RevertOracle<null>();
	const trail: string[] = [];
	for (let i = 0; i < STEPS; i++) {
		// Each step its own undo block (`:help undo-break`).
		await w.nv.command("let &undolevels = &undolevels");
		const action = int(10);
		const count = (await lines(w.nv)).length;
		if (action < 3) {
			const rows = await w.nv.lua<number[]>(MARK_ROWS);
			if (rows.length === 0) continue;
			const row = Math.min(rows[int(rows.length)] ?? 0, count - 1);
			const ids = await w.nv.lua<string[]>(`return (function(...) ${REVERT_AT} end)(${row})`);
			if (ids.length === 0) continue;
			oracle.step(null, ids);
			trail.push(`revert ${ids.join(" and ")} at row ${row}`);
		} else if (action < 5) {
			if (!oracle.undo()) continue;
			await w.nv.command("silent undo");
			trail.push("undo");
		} else if (action < 7) {
			if (!oracle.redo()) continue;
			await w.nv.command("silent redo");
			trail.push("redo");
		} else {
			const row = int(count);
			if (action < 9) await w.nv.command(`call setline(${row + 1}, getline(${row + 1}) . '!${i}')`);
			else await w.nv.command(`call append(${row}, 'u${i}')`);
			oracle.step(null);
			trail.push(`${action < 9 ? "append to" : "insert above"} row ${row}`);
		}
		const got = await w.nv.lua<string[]>(LISTED);
		const want = oracle.listed();
		if (JSON.stringify(got) !== JSON.stringify(want)) {
			return `seed ${seed}, step ${i}: listed ${JSON.stringify(got)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
		}
	}
	return undefined;
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: reverts listed while they hold (seeded)`, () => {
		it(`${SEEDS} sequences of ${STEPS} steps: :PiIde revert, u, <C-r> and the user's edits`, async (t) => {
			const w = await world(t, flavour);
			for (let seed = 1; seed <= SEEDS; seed++) {
				await w.nv.lua('require("pi-ide.review")._reset()');
				assert.equal(await runSequence(w, seed), undefined);
			}
			await assertNoErrors(w.nv);
		});
	});
});
