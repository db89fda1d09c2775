/**
 * Seeded, in real Neovim: which of pi's hunks stay marked and which may be reverted while the user adds and
 * deletes lines (pi's among them), reverts hunks (which changes the line count) and pi sends further messages
 * (each reads the change set again), against the identity oracle of test/fixtures/marks-oracle.ts. After every
 * step the buffer's text, the hunks marked and the hunks a `:PiIde revert` reverted must be the oracle's: a
 * hunk that holds keeps its mark after lines moved above it, and a mark that slid onto a line equal to pi's
 * (pi's own line deleted) reverts nothing.
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 40 per Neovim).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { MarksOracle, marksVersions, type OracleHunk } from "../fixtures/marks-oracle.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { assertNoErrors, lines, message, send, type World, world } from "../helpers/nvim-inbox.ts";
import { seededInts } from "../helpers/seeded.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 40);
const STEPS = 20;

/** pi's marks in the current buffer: [hunk id, first row, last row] (0-based), top to bottom. */
const MARKS = `local ns = vim.api.nvim_create_namespace("pi-ide-review")
	local known = require("pi-ide.review")._state().marks[vim.api.nvim_get_current_buf()] or {}
	local out = {}
	for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
		local info = known[m[1]]
		if info then out[#out + 1] = { info.hunk.id, m[2], m[4].end_row or m[2] } end
	end
	return out`;

/** One `:PiIde revert` at `row`: the ids of the hunks it reverted. */
const REVERT_AT = `local row = ...
	local before = {}
	for _, r in ipairs(require("pi-ide.review")._state().reverted) do before[r] = true end
	vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
	vim.cmd("silent PiIde revert")
	local ids = {}
	for _, r in ipairs(require("pi-ide.review")._state().reverted) do
		if not before[r] then ids[#ids + 1] = r.id end
	end
	return ids`;

type Mark = [string, number, number];

async function piMessage(w: World): Promise<void> {
	const msg = message(w, { changed: [], last_turn: [] });
	send(w, msg);
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
}

async function runSequence(w: World, seed: number): Promise<string | undefined> {
	const int = seededInts(seed);
	const { base, pi } = marksVersions(int);
	writeFileSync(w.file, base);
	await w.nv.command("silent edit!");
	writeFileSync(w.file, pi);
	const review = oneRunReview([{ file: w.file, before: base, after: pi }], { pid: w.piPid, editorPid: w.nv.pid });
	const hunks = (JSON.parse(review.toString()) as { runs: { files: { hunks: OracleHunk[] }[] }[] }).runs[0]?.files[0]
		?.hunks;
	assert.ok(hunks, `seed ${seed}: pi's change set has the file`);
	writeRawStateFile(w.nv.stateDir, `pi-${w.piPid}.review.json`, review.toString());
	const msg = message(w);
	send(w, msg);
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
	const oracle = new MarksOracle(pi.replace(/\n$/, "").split("\n"), hunks);
	const trail: string[] = [];
	for (let i = 0; i <= STEPS; i++) {
		const action = i === 0 ? -1 : int(10);
		const count = oracle.lines.length;
		if (action < 0) {
			trail.push("pi's first message");
		} else if (action < 3) {
			const marks = await w.nv.lua<Mark[]>(MARKS);
			const mark = marks[int(marks.length)];
			if (!mark) continue;
			const row = Math.min(mark[1], count - 1);
			const under = marks.filter(([, first, last]) => row >= first && row <= last).map(([id]) => id);
			const ids = await w.nv.lua<string[]>(`return (function(...) ${REVERT_AT} end)(${row})`);
			const want = under.filter((id) => oracle.holds(id));
			trail.push(`revert at row ${row} (marked there: ${under.join(", ")}): reverted ${ids.join(", ")}`);
			if (JSON.stringify([...ids].sort()) !== JSON.stringify([...want].sort())) {
				return `seed ${seed}, step ${i}: reverted ${JSON.stringify(ids)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
			}
			for (const id of ids) oracle.revert(id);
		} else if (action < 5) {
			const row = int(count + 1);
			await w.nv.lua(`vim.api.nvim_buf_set_lines(0, ${row}, ${row}, false, { "u${i}" })`);
			oracle.insert(row, `u${i}`);
			trail.push(`insert above row ${row}`);
		} else if (action < 7) {
			// Half of them on a line a mark starts on: pi's line deleted, its mark slides onto the next line.
			const marks = int(2) === 0 ? await w.nv.lua<Mark[]>(MARKS) : [];
			const row = marks.length > 0 ? (marks[int(marks.length)]?.[1] ?? 0) : int(count);
			if (count < 3 || row >= count || oracle.besideGap(row)) continue;
			await w.nv.lua(`vim.api.nvim_buf_set_lines(0, ${row}, ${row + 1}, false, {})`);
			oracle.remove(row);
			trail.push(`delete row ${row}`);
		} else {
			await piMessage(w);
			oracle.message();
			trail.push("pi's next message");
		}
		const got = await lines(w.nv);
		if (JSON.stringify(got) !== JSON.stringify(oracle.text())) {
			return `seed ${seed}, step ${i}: the buffer ${JSON.stringify(got)}, the oracle ${JSON.stringify(oracle.text())}\n  ${trail.join("\n  ")}`;
		}
		const marked = [...new Set((await w.nv.lua<Mark[]>(MARKS)).map(([id]) => id))].sort();
		const want = oracle.marked().sort();
		if (JSON.stringify(marked) !== JSON.stringify(want)) {
			return `seed ${seed}, step ${i}: marked ${JSON.stringify(marked)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
		}
	}
	return undefined;
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi's marks follow their lines (seeded)`, () => {
		it(`${SEEDS} sequences of ${STEPS} steps: :PiIde revert, lines added and deleted, pi's next messages`, async (t) => {
			const w = await world(t, flavour);
			for (let seed = 1; seed <= SEEDS; seed++) {
				await w.nv.lua('require("pi-ide.review")._reset()');
				assert.equal(await runSequence(w, seed), undefined);
			}
			await assertNoErrors(w.nv);
		});
	});
});
