/**
 * Seeded, in a real Emacs: which of pi's hunks Emacs lists as reverted (pi-ide-review.el's
 * `pi-ide-review-report', what the state file gets), over random sequences of `pi-ide-revert-hunk', undo, redo
 * and the user's own edits, against the stack oracle of test/fixtures/revert-oracle.ts (which knows nothing of
 * text), with Emacs's own undo: `undo-only' and `undo-redo', which walk the undo list as a stack, as the oracle
 * does. The change set is pi's own (src/link/change-set.ts via the shared fixture); each step is its own command
 * (an undo boundary before it, post-command-hook after it: the state file is written after each, as for a user).
 * The steps lean the way a user goes (an edit next to a mark, then a revert of the hunk beside it, then its undo),
 * so the ways the text-based rules went wrong show: an edit beside a hunk before its revert hid the undo of it, an
 * edit in pi's lines after an undo made it a revert again, lines the user copies make equal lines at a place's
 * edges, and pi's lines typed back by hand after a revert (an edit, no undo: the revert holds) read as its undo.
 * Every step is checked; only Emacs's undo decides (pi-ide-review.el's `pi-ide-review--undone`): the text as of
 * main's lines-around rule fails seed 1 (pi's lines typed back).
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 6).
 */
import assert from "node:assert/strict";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { RevertOracle, revertVersions } from "../fixtures/revert-oracle.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors } from "../helpers/editors.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { seededInts } from "../helpers/seeded.ts";

after(killAllEditors);

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 6);
const STEPS = 16;

/** Put `text` at `<state dir>/<name>` whole, as pi does (temp file, rename). */
function place(e: Emacs, name: string, text: string | Buffer): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, text, { mode: 0o600 });
	renameSync(tmp, join(e.stateDir, name));
}

/** In the buffer of `file`, as one command: an undo boundary first, as the command loop puts between commands. */
const inBuffer = (file: string, body: string) =>
	`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (undo-boundary) ${body})`;

/** The first lines of pi's marks in the buffer, top to bottom. */
const MARK_LINES = `(vconcat (sort (delete-dups (mapcar (lambda (o) (line-number-at-pos (overlay-start o) t))
	(cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max))))) #'<))`;

/** `pi-ide-revert-hunk' on `line`: the ids of the hunks it reverted (two where a line carries two marks). */
const revertAt = (line: number) => `(let ((before pi-ide-review--reverted))
	(goto-char (point-min)) (forward-line ${line - 1})
	(pi-ide-revert-hunk)
	(vconcat (cl-loop for r in pi-ide-review--reverted unless (memq r before) collect (alist-get 'id r))))`;

/** What the state file's `reverted` would list now. */
const LISTED = "(vconcat (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))";

async function runSequence(e: Emacs, file: string, seed: number): Promise<string | undefined> {
	const int = seededInts(seed);
	const { base, pi } = revertVersions(int);
	// The buffer shows the baseline, unmodified, nothing reverted; pi writes its version and announces it: Emacs
	// reloads and marks.
	writeFileSync(file, base);
	await e.eval(
		inBuffer(
			file,
			"(revert-buffer t t) (setq buffer-undo-list nil pi-ide-review--reverted nil pi-ide-review--reverts nil)",
		),
	);
	writeFileSync(file, pi);
	place(
		e,
		`pi-${process.pid}.review.json`,
		oneRunReview([{ file, before: base, after: pi }], { pid: process.pid, editorPid: e.pid }),
	);
	const msg = makePiMessage({
		pid: process.pid,
		cwd: e.dir,
		editor_pid: e.pid,
		seq: seed,
		changed: [{ file, seq: seed, tool: "edit" }],
		last_turn: [file],
	});
	place(e, `pi-${process.pid}.json`, JSON.stringify(msg));
	await e.until((s) => (s?.pi?.seq === seed ? true : undefined), `seed ${seed}: pi's message is handled`);
	const markLines = () =>
		e.json<number[]>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) ${MARK_LINES})`);
	const text = () =>
		e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);
	assert.equal(await text(), pi, `seed ${seed}: Emacs shows pi's version`);
	// The buffer's text after each step applied, beside the oracle: Emacs's undo walks the same stack.
	const oracle = new RevertOracle<string>();
	const trail: string[] = [];
	let shown = pi;
	let edited: number | undefined;
	let last: "revert" | "undo" | "redo" | "edit" | undefined;
	// A step that cannot be taken (nothing to undo, no mark) is drawn again: STEPS steps taken, at most 4 × drawn.
	for (let i = 0, drawn = 0; i < STEPS && drawn < 4 * STEPS; drawn++) {
		// As a user goes: after an edit, often a revert (of the hunk beside it, below); after a revert, often its undo,
		// or pi's lines typed back by hand (10: an edit of the user's, no undo: the revert holds).
		const afterRevert = () => (int(3) === 0 ? 10 : 3);
		const action = last === "edit" && int(2) === 0 ? 0 : last === "revert" && int(2) === 0 ? afterRevert() : int(10);
		const count = shown.replace(/\n$/, "").split("\n").length;
		if (action < 3) {
			const marked = await markLines();
			if (marked.length === 0) continue;
			// Half the time the mark nearest the user's last edit: an edit beside a hunk, then its revert.
			const nearest = (l: number) => marked.reduce((a, b) => (Math.abs(b - l) < Math.abs(a - l) ? b : a));
			const line = edited !== undefined && int(2) === 0 ? nearest(edited) : (marked[int(marked.length)] ?? 1);
			await e.act(inBuffer(file, `(setq pi-ide-test--ids ${revertAt(line)})`));
			const ids = await e.json<string[]>("pi-ide-test--ids");
			if (ids.length === 0) continue;
			shown = await text();
			oracle.step(shown, ids);
			trail.push(`revert ${ids.join(" and ")} at line ${line}`);
			last = "revert";
		} else if (action === 10) {
			// The text before the revert typed back where it differs (one change: its shared start and end kept).
			const was = oracle.applied.at(-2)?.data ?? pi;
			let head = 0;
			while (head < was.length && head < shown.length && was[head] === shown[head]) head++;
			let tail = 0;
			while (tail < was.length - head && tail < shown.length - head && was.at(-1 - tail) === shown.at(-1 - tail))
				tail++;
			const typed = was.slice(head, was.length - tail);
			await e.act(
				inBuffer(
					file,
					`(goto-char ${head + 1}) (delete-char ${shown.length - head - tail}) (insert ${elispString(typed)})`,
				),
			);
			shown = await text();
			assert.equal(shown, was, `seed ${seed}: pi's lines typed back`);
			oracle.step(shown);
			last = "edit";
			trail.push("pi's lines typed back");
		} else if (action < 5) {
			const step = oracle.undo();
			if (!step) continue;
			await e.act(inBuffer(file, "(undo-only 1)"));
			shown = oracle.applied.at(-1)?.data ?? pi;
			trail.push("undo");
			last = "undo";
		} else if (action < 7) {
			const step = oracle.redo();
			if (!step) continue;
			await e.act(inBuffer(file, "(undo-redo 1)"));
			shown = step.data;
			trail.push("redo");
			last = "redo";
		} else {
			// Two times in three next to one of pi's marks (its first line, or the line above it): where a later
			// revert takes the lines around its place as the user left them, or in pi's lines after an undo.
			const marked = int(3) > 0 ? await markLines() : [];
			const near = marked[int(marked.length)];
			const line = near === undefined ? 1 + int(count) : Math.max(1, near - int(2));
			// Or the line copied above itself: equal lines at a place's edges, as the user types them.
			const kind = action < 9 ? "append to" : int(2) === 0 ? "insert above" : "copy above itself";
			const edit = {
				"append to": `(end-of-line) (insert "!${i}")`,
				"insert above": `(insert "u${i}\\n")`,
				"copy above itself": `(insert (buffer-substring-no-properties (line-beginning-position) (line-end-position)) "\\n")`,
			}[kind];
			await e.act(inBuffer(file, `(goto-char (point-min)) (forward-line ${line - 1}) ${edit}`));
			shown = await text();
			oracle.step(shown);
			edited = line;
			last = "edit";
			trail.push(`${kind} line ${line}`);
		}
		i += 1;
		const where = () => `seed ${seed}, step ${i}\n  ${trail.join("\n  ")}`;
		assert.equal(await text(), shown, `${where()}\nEmacs's undo is the oracle's stack`);
		const got = await e.json<string[]>(inBuffer(file, LISTED));
		const want = oracle.listed();
		if (JSON.stringify(got) !== JSON.stringify(want)) {
			return `${where()}\nlisted ${JSON.stringify(got)}, the oracle ${JSON.stringify(want)}`;
		}
		// The state file, written after the step, says the same (the field left out when none).
		await e.until(
			(s) =>
				s !== null && JSON.stringify((s.reverted ?? []).map((r) => r.id)) === JSON.stringify(want) ? true : undefined,
			`${where()}\nthe state file lists ${JSON.stringify(want)}`,
		);
	}
	return undefined;
}

describe("emacs: reverts listed while they hold (seeded)", () => {
	it(`${SEEDS} sequences of ${STEPS} steps: pi-ide-revert-hunk, undo, redo and the user's edits`, async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		writeFileSync(file, "");
		await e.act(`(find-file ${elispString(file)})`);
		await e.eval("(defvar pi-ide-test--ids nil)");
		for (let seed = 1; seed <= SEEDS; seed++) assert.equal(await runSequence(e, file, seed), undefined);
		const errors = (await e.messages()).filter((m) => /error|Error/.test(m));
		assert.deepEqual(errors, []);
	});
});
