/**
 * The Vim client's figures (issue 18): the client's own work per CursorMoved event, measured inside Vim with
 * reltime() over many calls of the handler (and, beside it, through Vim's autocmd dispatch, and in visual mode
 * where the handler also moves the selection tracker); the main-thread cost of a write; writes per second
 * while the cursor keeps moving (keys typed into real Vim in tmux, as a user's); and taking in pi's request for
 * approval with 500 hunks in a 10,000-line buffer (checked against the buffer, marked with signs and virtual
 * text); and pi's change set with 500 hunks in the same buffer: taken in (validated, checked, marked with signs),
 * and the revert of one hunk. Run alone: `node bench/vim.ts`.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildRequest } from "../src/link/approval.ts";
import { computeHunks } from "../src/link/change-set.ts";
import { makeVimDirs, startVim, vimString } from "../test/helpers/vim.ts";
import { header, median, row } from "./report.ts";

const BENCH_FUNCTIONS = `vim9script
# Per call, in µs, for each of \`batches\` batches of \`per\` calls.
def g:PiBenchMoved(batches: number, per: number): list<float>
  var out: list<float> = []
  for b in range(batches)
    var start = reltime()
    for i in range(per)
      pi_ide#Moved()
    endfor
    out->add(reltimefloat(reltime(start)) * 1000000.0 / per)
  endfor
  return out
enddef
def g:PiBenchAutocmd(batches: number, per: number): list<float>
  var out: list<float> = []
  for b in range(batches)
    var start = reltime()
    for i in range(per)
      doautocmd <nomodeline> PiIde CursorMoved
    endfor
    out->add(reltimefloat(reltime(start)) * 1000000.0 / per)
  endfor
  return out
enddef
# Per write, in ms: [the main-thread part (snapshot, encoding, checks, temp file, starting mv), the time
# until the file is in place (the mv job has ended, as Vim notices it)].
def g:PiBenchWrite(n: number): list<list<float>>
  var out: list<list<float>> = []
  for i in range(n)
    var start = reltime()
    pi_ide#WriteForTest()
    var sync = reltimefloat(reltime(start)) * 1000.0
    while pi_ide#Status().writing
      sleep 1m
    endwhile
    out->add([sync, reltimefloat(reltime(start)) * 1000.0])
  endfor
  return out
enddef
# Per call, in ms: ALE's results for one buffer (\`n\` loclist items, errors and warnings spread over lines,
# every tenth a duplicate) turned into the protocol's diagnostics, as at each ALELintPost.
def g:PiBenchBuild(n: number, calls: number): list<float>
  var items = mapnew(range(n), (i, _) => ({lnum: i % 10 == 9 ? i : i + 1, col: 1, type: i % 3 == 0 ? 'E' : 'W',
    text: i % 10 == 9 ? 'message ' .. (i - 1) : 'message ' .. i, linter_name: 'bench', nr: -1}))
  var out: list<float> = []
  for c in range(calls)
    var start = reltime()
    pi_ide#diagnostics#Build(items, 1)
    out->add(reltimefloat(reltime(start)) * 1000.0)
  endfor
  return out
enddef
# Per request, in ms: pi's approval request in \`path\` taken in (validated, checked against the buffer, its
# hunks marked), as when the poll reads it; forgotten (marks removed) between two, outside the measure.
def g:PiBenchApproval(path: string, calls: number): list<float>
  var msg = json_decode(join(readfile(path), "\\n"))
  msg.editor_pid = getpid()
  var out: list<float> = []
  for c in range(calls)
    var start = reltime()
    pi_ide#approval#Receive(msg, msg.pid, localtime())
    out->add(reltimefloat(reltime(start)) * 1000.0)
    pi_ide#approval#Forget(msg.pid)
  endfor
  return out
enddef
# Per change set, in ms: pi's change set in \`path\` taken in (validated, each hunk checked against the buffer,
# marked with signs), as after pi's message; forgotten (signs removed) between two, outside the measure.
def g:PiBenchReview(path: string, calls: number): list<float>
  var msg = json_decode(join(readfile(path), "\\n"))
  var out: list<float> = []
  for c in range(calls)
    var start = reltime()
    pi_ide#review#Receive(msg, msg.pid)
    out->add(reltimefloat(reltime(start)) * 1000.0)
    pi_ide#review#Forget(msg.pid)
  endfor
  return out
enddef
# Per revert, in ms: :PiIde revert's work on the hunk under the cursor, for \`calls\` hunks at \`lines\` (marked by
# the change set in \`path\`); the buffer reloaded and the set forgotten afterwards.
def g:PiBenchRevert(path: string, lines: list<number>): list<float>
  var msg = json_decode(join(readfile(path), "\\n"))
  pi_ide#review#Receive(msg, msg.pid)
  var out: list<float> = []
  for l in lines
    cursor(l, 1)
    var start = reltime()
    var said = pi_ide#review#Revert()
    out->add(reltimefloat(reltime(start)) * 1000.0)
    if said !~# 'reverted 1 '
      throw 'not reverted at line ' .. l .. ': ' .. said
    endif
  endfor
  pi_ide#review#Forget(msg.pid)
  edit!
  return out
enddef
# Per look, in ms: the state's \`reverted\` after a change of the buffer (its changedtick bumped: every revert in it is
# looked at again, for an undo), with the hunks at \`lines\` (of the change set in \`path\`) reverted, bottom up;
# \`calls\` looks. The buffer reloaded and the set forgotten afterwards.
def g:PiBenchReverted(path: string, lines: list<number>, calls: number): list<float>
  var msg = json_decode(join(readfile(path), "\\n"))
  pi_ide#review#Receive(msg, msg.pid)
  for l in reverse(copy(lines))
    cursor(l, 1)
    var said = pi_ide#review#Revert()
    if said !~# 'reverted 1 '
      throw 'not reverted at line ' .. l .. ': ' .. said
    endif
  endfor
  var out: list<float> = []
  for c in range(calls)
    setline('$', getline('$'))
    var start = reltime()
    var listed = pi_ide#review#Reverted()
    out->add(reltimefloat(reltime(start)) * 1000.0)
    if type(listed) != v:t_list || len(listed) != len(lines)
      throw 'reverts listed: ' .. string(listed)
    endif
  endfor
  pi_ide#review#Forget(msg.pid)
  edit!
  return out
enddef
# In ms: :PiIde revert file, every hunk of the change set in \`path\` at once; the buffer reloaded afterwards.
def g:PiBenchRevertFile(path: string): float
  var msg = json_decode(join(readfile(path), "\\n"))
  pi_ide#review#Receive(msg, msg.pid)
  var start = reltime()
  var said = pi_ide#review#Revert('file')
  var took = reltimefloat(reltime(start)) * 1000.0
  if said !~# 'reverted ' .. len(msg.runs[0].files[0].hunks) .. ' '
    throw 'not all reverted: ' .. said
  endif
  pi_ide#review#Forget(msg.pid)
  edit!
  return took
enddef
`;

export async function runVimBench(): Promise<void> {
	console.log("== Vim client ==");
	const dirs = makeVimDirs();
	const vim = await startVim(null, { dirs, cols: 120, rows: 40 });
	try {
		const lines = Array.from({ length: 400 }, (_, i) => `export const value${i} = compute(${i}, "text"); // line ${i}`);
		writeFileSync(join(vim.dirs.work, "bench.ts"), `${lines.join("\n")}\n`);
		writeFileSync(join(vim.dirs.root, "bench.vim"), BENCH_FUNCTIONS);
		await vim.ex("edit bench.ts | 200");
		await vim.ex(`source ${join(vim.dirs.root, "bench.vim")}`);
		await vim.until((s) => (s["active_buffer"] as { name: string }).name === "bench.ts", "bench.ts open");
		header();

		const moved = median(await vim.expr<number[]>("g:PiBenchMoved(100, 100)"));
		row("CursorMoved handler, median per call of 100 x 100", `${moved.toFixed(2)} µs`, "<= 20 µs", moved <= 20);
		const autocmd = median(await vim.expr<number[]>("g:PiBenchAutocmd(100, 100)"));
		row("  incl. Vim's autocmd dispatch (doautocmd PiIde CursorMoved)", `${autocmd.toFixed(2)} µs`, "(info)", true);
		await vim.keys("V", "j", "j");
		await vim.waitExpr("mode() ==# 'V'");
		const visual = median(await vim.expr<number[]>("g:PiBenchMoved(20, 100)"));
		row("  in visual mode (moves the selection's text property)", `${visual.toFixed(2)} µs`, "(info)", true);
		await vim.keys("Escape");
		await vim.waitExpr("mode() ==# 'n'");

		const writes = await vim.expr<[number, number][]>("g:PiBenchWrite(50)");
		const write = median(writes.map((w) => w[0]));
		// No target in the issue: shown so a regression is seen (most of it is job_start's fork of Vim).
		row("write, main-thread part (median of 50)", `${write.toFixed(3)} ms`, "(info)", true);
		const inPlace = median(writes.map((w) => w[1]));
		row("  until the file is in place (the mv job's end noticed)", `${inPlace.toFixed(1)} ms`, "(info)", true);

		for (const n of [20, 500]) {
			const build = median(await vim.expr<number[]>(`g:PiBenchBuild(${n}, 20)`));
			// No target in the issue: ALE's results are mapped once per finished lint, not per keystroke.
			row(`ALE results -> diagnostics, ${n} items (median of 20)`, `${build.toFixed(2)} ms`, "(info)", true);
		}

		// pi's request for approval: every 20th line of a 10,000-line file changed, 500 hunks.
		const big = join(vim.dirs.work, "big.txt");
		const before = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1} of the file`);
		const after = before.map((l, i) => (i % 20 === 10 ? `${l}, changed by pi` : l));
		writeFileSync(big, `${before.join("\n")}\n`);
		const now = Date.now() / 1000;
		const request = buildRequest({
			id: "bench",
			tool: "edit",
			file: big,
			before: { kind: "text", text: `${before.join("\n")}\n` },
			after: `${after.join("\n")}\n`,
			timeoutS: 3600,
			now,
		});
		const requestFile = join(vim.dirs.root, "request.json");
		writeFileSync(
			requestFile,
			JSON.stringify({ protocol: "0.4", kind: "pi-approval", pid: 1, editor_pid: 0, timestamp: now, request }),
		);
		await vim.ex("edit big.txt");
		const marking = median(await vim.expr<number[]>(`g:PiBenchApproval(${vimString(requestFile)}, 20)`));
		// Neovim's target for marking 500 hunks (issue 17); taken in once per request, not per keystroke.
		row(
			`approval request, ${request.hunks.length} hunks marked in 10,000 lines (median of 20)`,
			`${marking.toFixed(2)} ms`,
			"<= 10 ms",
			marking <= 10,
		);

		// pi's change set for the same edit: 500 hunks, marked where pi's lines stand; then one reverted at a time.
		writeFileSync(big, `${after.join("\n")}\n`);
		await vim.ex("edit!");
		const hunks = computeHunks(big, `${before.join("\n")}\n`, `${after.join("\n")}\n`);
		const reviewFile = join(vim.dirs.root, "review.json");
		writeFileSync(
			reviewFile,
			JSON.stringify({
				protocol: "0.4",
				kind: "pi-review",
				pid: 1,
				editor_pid: 0,
				timestamp: now,
				runs: [{ run: 1, files: [{ file: big, baseline: null, note: null, hunks, hunks_total: hunks.length }] }],
			}),
		);
		const review = median(await vim.expr<number[]>(`g:PiBenchReview(${vimString(reviewFile)}, 20)`));
		row(
			`change set, ${hunks.length} hunks marked in 10,000 lines (median of 20)`,
			`${review.toFixed(2)} ms`,
			"<= 10 ms",
			review <= 10,
		);
		const at = hunks.filter((_, i) => i % 25 === 0).map((h) => h.new_start);
		const revert = median(await vim.expr<number[]>(`g:PiBenchRevert(${vimString(reviewFile)}, ${JSON.stringify(at)})`));
		row(
			`revert of one hunk in 10,000 lines (median of ${at.length})`,
			`${revert.toFixed(3)} ms`,
			"<= 5 ms",
			revert <= 5,
		);
		const fifty = hunks.filter((_, i) => i % 10 === 0).map((h) => h.new_start);
		const looked = median(
			await vim.expr<number[]>(`g:PiBenchReverted(${vimString(reviewFile)}, ${JSON.stringify(fifty)}, 20)`),
		);
		// No target in the issue: once per state write after the buffer changed (the writes are debounced).
		row(
			`\`reverted\` with ${fifty.length} reverts looked at again after a change, 10,000 lines (median of 20)`,
			`${looked.toFixed(3)} ms`,
			"(info)",
			true,
		);
		const whole = await vim.expr<number>(`g:PiBenchRevertFile(${vimString(reviewFile)})`);
		// No target in the issue: one command for the whole file, not per keystroke.
		row(
			`revert of all ${hunks.length} hunks of the buffer (:PiIde revert file)`,
			`${whole.toFixed(1)} ms`,
			"(info)",
			true,
		);
		await vim.ex("edit bench.ts");

		// Continuous movement: j typed for 3 s (one line down per key, never back to a state already written),
		// as fast as tmux delivers keys.
		await vim.keys("g", "g");
		await vim.waitExpr("line('.') == 1");
		const writesBefore = await vim.expr<{ writes: number }>("pi_ide#Status()");
		const start = Date.now();
		let moves = 0;
		while (Date.now() - start < 3000) {
			await vim.keys("j");
			moves++;
		}
		const seconds = (Date.now() - start) / 1000;
		const afterMoving = await vim.expr<{ writes: number }>("pi_ide#Status()");
		const rate = (afterMoving.writes - writesBefore.writes) / seconds;
		row(`writes/s, continuous movement (${Math.round(moves / seconds)} moves/s)`, rate.toFixed(2), "<= 5", rate <= 5);
	} finally {
		vim.kill();
		rmSync(dirs.root, { recursive: true, force: true });
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runVimBench();
}
