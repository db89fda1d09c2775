/**
 * Seeded, in real Vim 9 under tmux: which of pi's hunks stay marked and which may be reverted while the user adds and
 * deletes lines (pi's among them), reverts hunks (which changes the line count) and pi sends further messages (each
 * with its change set written again), against the identity oracle of test/fixtures/marks-oracle.ts: after every
 * step the buffer's text, the hunks marked and the hunks a `:PiIde revert` reverted must be the oracle's. The
 * Neovim client's test is test/nvim/review-marks-random.test.ts.
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 12: quick).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, it } from "node:test";
import { MarksOracle, marksVersions, type OracleHunk } from "../fixtures/marks-oracle.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { seededInts } from "../helpers/seeded.ts";
import { startVim, type Vim, vimString } from "../helpers/vim.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 12);
const STEPS = 20;

/**
 * The test's Vim functions: `:PiIde revert` with the cursor on line `lnum`, returning the ids of the hunks it
 * reverted; and pi's marks in the current buffer, [hunk id, the lines of its signs].
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
	"function! PiTestMarks() abort",
	"  let known = get(get(pi_ide#review#Debug().marks, string(bufnr()), {}), 'hunks', {})",
	"  let out = {}",
	"  for s in sign_getplaced(bufnr(), {'group': 'pi_ide_review'})[0].signs",
	"    let info = get(known, string(s.id), {})",
	"    if !empty(info)",
	"      let out[info.hunk.id] = get(out, info.hunk.id, []) + [s.lnum]",
	"    endif",
	"  endfor",
	"  return items(out)",
	"endfunction",
];

type Mark = [string, number[]];

let seq = 0;
/** pi's change set written again (a new timestamp: Vim reads it again), then its message; handled. */
async function piMessage(vim: Vim, piPid: number, review: () => Buffer): Promise<void> {
	writeRawStateFile(vim.dirs.stateDir, `pi-${piPid}.review.json`, review().toString());
	seq += 1;
	const msg = { protocol: "0.4", kind: "pi", pid: piPid, cwd: vim.dirs.work, timestamp: Date.now() / 1000 };
	writeRawStateFile(
		vim.dirs.stateDir,
		`pi-${piPid}.json`,
		JSON.stringify({ ...msg, editor_pid: vim.pid, seq, changed: [], last_turn: [] }),
	);
	const want = seq;
	await vim.until((s) => (s["pi"] as { seq?: number } | null | undefined)?.seq === want, "pi's message is handled");
}

async function runSequence(vim: Vim, piPid: number, seed: number): Promise<string | undefined> {
	const int = seededInts(seed);
	const { base, pi } = marksVersions(int);
	const file = join(vim.dirs.work, `seed-${seed}.txt`);
	writeFileSync(file, pi);
	const before = await vim.expr<number>("bufnr()");
	await vim.ex(`silent edit ${file}`);
	if (seed > 1) await vim.ex(`bwipeout! ${before}`);
	const review = () => oneRunReview([{ file, before: base, after: pi }], { pid: piPid, editorPid: vim.pid });
	const hunks = (JSON.parse(review().toString()) as { runs: { files: { hunks: OracleHunk[] }[] }[] }).runs[0]?.files[0]
		?.hunks;
	assert.ok(hunks, `seed ${seed}: pi's change set has the file`);
	await piMessage(vim, piPid, review);
	await vim.waitExpr(`has_key(pi_ide#review_rules#Newest(pi_ide#review#Debug().sets), ${vimString(file)})`);
	const oracle = new MarksOracle(pi.replace(/\n$/, "").split("\n"), hunks);
	const trail: string[] = [];
	for (let i = 0; i <= STEPS; i++) {
		const action = i === 0 ? -1 : int(10);
		const count = oracle.lines.length;
		if (action < 0) {
			trail.push("pi's first message");
		} else if (action < 3) {
			const marks = await vim.expr<Mark[]>("PiTestMarks()");
			const mark = marks[int(marks.length)];
			if (!mark) continue;
			const line = Math.min(mark[1][0] ?? 1, count);
			const under = marks.filter(([, lines]) => lines.includes(line)).map(([id]) => id);
			const ids = await vim.expr<string[]>(`PiTestRevertAt(${line})`);
			const want = under.filter((id) => oracle.holds(id));
			trail.push(`revert at line ${line} (marked there: ${under.join(", ")}): reverted ${ids.join(", ")}`);
			if (JSON.stringify([...ids].sort()) !== JSON.stringify([...want].sort())) {
				return `seed ${seed}, step ${i}: reverted ${JSON.stringify(ids)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
			}
			for (const id of ids) oracle.revert(id);
		} else if (action < 5) {
			const row = int(count + 1);
			await vim.ex(`call append(${row}, 'u${i}')`);
			oracle.insert(row, `u${i}`);
			trail.push(`insert above row ${row}`);
		} else if (action < 7) {
			// Half of them on a line a mark starts on: pi's line deleted, its signs move onto the next line.
			const marks = int(2) === 0 ? await vim.expr<Mark[]>("PiTestMarks()") : [];
			const row = marks.length > 0 ? (marks[int(marks.length)]?.[1][0] ?? 1) - 1 : int(count);
			if (count < 3 || row >= count || oracle.besideGap(row)) continue;
			await vim.ex(`call deletebufline(bufnr(), ${row + 1})`);
			oracle.remove(row);
			trail.push(`delete row ${row}`);
		} else {
			await piMessage(vim, piPid, review);
			oracle.message();
			trail.push("pi's next message");
		}
		const got = await vim.expr<string[]>("getline(1, '$')");
		if (JSON.stringify(got) !== JSON.stringify(oracle.text())) {
			return `seed ${seed}, step ${i}: the buffer ${JSON.stringify(got)}, the oracle ${JSON.stringify(oracle.text())}\n  ${trail.join("\n  ")}`;
		}
		const marked = (await vim.expr<Mark[]>("PiTestMarks()")).map(([id]) => id).sort();
		const want = oracle.marked().sort();
		if (JSON.stringify(marked) !== JSON.stringify(want)) {
			return `seed ${seed}, step ${i}: marked ${JSON.stringify(marked)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
		}
	}
	return undefined;
}

it(`vim: pi's marks follow their lines (seeded): ${SEEDS} sequences of ${STEPS} steps of :PiIde revert, lines added and deleted, pi's next messages`, async (t) => {
	const vim = await startVim(t, { cols: 80, rows: 24, vimrc: VIMRC });
	const pi = await spawnLiveEditor();
	for (let seed = 1; seed <= SEEDS; seed++) {
		assert.equal(await runSequence(vim, pi.pid, seed), undefined);
	}
	const said = await vim.expr<string>("execute('messages')");
	assert.doesNotMatch(said, /E\d{2,4}:|Error/, said);
});
