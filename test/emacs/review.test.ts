/**
 * Protocol v0.4 in a real Emacs (pi-ide-review.el): pi's change set, built by pi's own code
 * (src/link/change-set.ts) and written as pi writes it before its message, from a live stand-in pi of the same
 * user (the test runner). The buffer pi's message reloaded marks pi's hunks (changed, added, deleted) on the right
 * lines; `pi-ide-revert-hunk` puts one hunk's baseline lines back in the buffer, never on disk, one undo brings
 * pi's version back, and the revert reaches the state file's `reverted`; undone, a revert leaves `reverted` (pi
 * never tells its model of it) and its hunk is marked again, a redo lists it again and takes that mark away, and a
 * hunk reverted again is listed once; an undo is told by Emacs's undo beside the user's edits, and stays an undo
 * when the user then edits pi's lines; a hunk the user edited is refused; edits elsewhere do not stop a revert; the
 * option switches the marks off. Bad change sets: one message each, no marks,
 * no error; a change set of a pi connected to another editor, or of a pi that is gone, is not read.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { PiMessage } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { deadPid, killAllEditors } from "../helpers/editors.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

after(killAllEditors);

const BASELINE = "a\nb\nc\nd\ne\nf\n";
/** b changed (line 2), d deleted (before line 4), g added (line 6). */
const PI_VERSION = "a\nB\nc\ne\nf\ng\n";

/** Put `text` at `<state dir>/<name>` whole, as pi does (temp file, rename). */
function place(e: Emacs, name: string, text: string | Buffer, mode = 0o600): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, text, { mode });
	renameSync(tmp, join(e.stateDir, name));
}

/** The change set pi writes for one run that changed `file` from `before` to `after`. */
function reviewText(e: Emacs, file: string, before: string, after: string, pid = process.pid): Buffer {
	return oneRunReview([{ file, before, after }], { pid, editorPid: e.pid });
}

function message(e: Emacs, seq: number, files: string[], overrides: Partial<PiMessage> = {}): PiMessage {
	return makePiMessage({
		pid: process.pid,
		cwd: e.dir,
		editor_pid: e.pid,
		seq,
		changed: files.map((file) => ({ file, seq, tool: "edit" })),
		last_turn: files,
		...overrides,
	});
}

/** pi's message, after its change set; returns once Emacs handled it. */
async function announce(e: Emacs, seq: number, files: string[], overrides: Partial<PiMessage> = {}): Promise<void> {
	const msg = message(e, seq, files, overrides);
	place(e, `pi-${msg.pid}.json`, JSON.stringify(msg));
	await e.until((s) => (s?.pi?.seq === seq ? true : undefined), `pi's message ${seq} is handled`);
}

/** pi changes `file` to its version, writes its change set, then its message. */
async function piChanges(e: Emacs, file: string, seq = 1): Promise<void> {
	writeFileSync(file, PI_VERSION);
	place(e, `pi-${process.pid}.review.json`, reviewText(e, file, BASELINE, PI_VERSION));
	await announce(e, seq, [file]);
}

async function openFile(e: Emacs, file: string, text = BASELINE): Promise<void> {
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), `${file} open`);
}

/** The review marks of FILE's buffer: [first line, lines covered, kind]. */
const marks = (e: Emacs, file: string) =>
	e.json<[number, number, string][]>(`(with-current-buffer (find-buffer-visiting ${elispString(file)})
		(vconcat (mapcar (lambda (o) (vector (line-number-at-pos (overlay-start o) t)
			(count-lines (overlay-start o) (overlay-end o))
			(if (overlay-get o 'line-prefix) "deleted" (symbol-name (overlay-get o 'face)))))
			(sort (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max)))
				(lambda (a b) (< (overlay-start a) (overlay-start b)))))))`);

/** The buffers a user sees in the buffer list (not Emacs's internal ones). */
const VISIBLE_BUFFERS = `(cl-remove-if (lambda (n) (string-prefix-p " " n)) (mapcar #'buffer-name (buffer-list)))`;

const MARKED: [number, number, string][] = [
	[2, 1, "pi-ide-review-changed"],
	[4, 1, "deleted"],
	[6, 1, "pi-ide-review-added"],
];

const bufferText = (e: Emacs, file: string) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);

/** Undo (or redo) in FILE's buffer as one command: the state file is written after it. */
const undo = (e: Emacs, file: string, how: "undo" | "undo-redo" = "undo") =>
	e.act(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (undo-boundary) (${how} 1))`);

/** Revert the hunk on LINE as the command does; what it said. */
const revertAt = (e: Emacs, file: string, line: number) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)})
		(goto-char (point-min)) (forward-line ${line - 1}) (undo-boundary) (pi-ide-revert-hunk))`);

interface Reverted {
	pi_pid: number;
	run: number;
	id: string;
	file: string;
	line: number;
	lines: number;
}
const revertedOf = (s: unknown): Reverted[] | undefined => (s as { reverted?: Reverted[] } | null)?.reverted;
/** The state file once it lists no revert (the field left out). */
const untilNoneListed = (e: Emacs, what: string) =>
	e.until((s) => (s !== null && !("reverted" in s) ? true : undefined), what);

const untilMarks = (e: Emacs, file: string, want: unknown) =>
	pollUntil(
		async () => (JSON.stringify(await marks(e, file)) === JSON.stringify(want) ? true : undefined),
		`marks ${JSON.stringify(want)}`,
	);

describe("emacs: reviewing pi's change set (v0.4)", { concurrency: 2 }, () => {
	it("marks pi's hunks on the reloaded buffer, on the right lines; nothing opened for files not open", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		const closed = join(e.dir, "closed.txt");
		writeFileSync(closed, PI_VERSION);
		const buffers = await e.eval(VISIBLE_BUFFERS);
		writeFileSync(file, PI_VERSION);
		place(
			e,
			`pi-${process.pid}.review.json`,
			oneRunReview(
				[
					{ file, before: BASELINE, after: PI_VERSION },
					{ file: closed, before: BASELINE, after: PI_VERSION },
				],
				{ pid: process.pid, editorPid: e.pid },
			),
		);
		await announce(e, 2, [file, closed]);
		assert.equal(await bufferText(e, file), PI_VERSION);
		assert.deepEqual(await marks(e, file), MARKED);
		assert.equal(await e.eval(VISIBLE_BUFFERS), buffers, "nothing opened for the change set");
		// A file opened later is marked.
		await e.act(`(find-file ${elispString(closed)})`);
		assert.deepEqual(await marks(e, closed), MARKED);
		assert.match(await e.pane(), /^▁e$/m, "the deletion's mark on screen, before the line that followed it");
		// The list of pi's hunks and the baseline: shown, not selected; the file's buffer untouched.
		const selected = "(list (buffer-name (window-buffer (selected-window))) (point))";
		const before = await e.eval(selected);
		await e.act("(pi-ide-hunks)");
		assert.equal(await e.eval(selected), before, "nothing selected, point kept");
		const view = (name: string) =>
			e.json<{ text: string; readOnly: boolean; mode: string; shown: boolean }>(
				`(with-current-buffer ${elispString(name)}
					(list (cons 'text (buffer-string)) (cons 'readOnly (if buffer-read-only t :false))
						(cons 'mode (symbol-name major-mode)) (cons 'shown (if (get-buffer-window (current-buffer) t) t :false))))`,
			);
		const listed = [2, 4, 6].map((line, i) => `${file}:${line}: pi ${["+1 -1  B", "+0 -1  d", "+1 -0  g"][i]}`);
		const closedListed = listed.map((l) => l.replace(file, closed));
		assert.deepEqual(await view("*pi-ide hunks*"), {
			text: `${[...listed, ...closedListed].join("\n")}\n`,
			readOnly: true,
			mode: "compilation-mode",
			shown: true,
		});
		await e.act(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (pi-ide-baseline))`);
		assert.equal(await e.eval(selected), before, "nothing selected, point kept");
		assert.deepEqual(await view("*pi-ide baseline*"), {
			text: BASELINE,
			readOnly: true,
			mode: "fundamental-mode",
			shown: true,
		});
		assert.equal(await bufferText(e, file), PI_VERSION);
		assert.match(
			await e.eval("(with-temp-buffer (pi-ide-baseline))"),
			/pi has not changed this buffer's file in its last runs/,
		);
		// Off: no marks; on again: back.
		await e.eval("(customize-set-variable 'pi-ide-review-marks nil)");
		assert.deepEqual(await marks(e, file), []);
		await e.eval("(customize-set-variable 'pi-ide-review-marks t)");
		assert.deepEqual(await marks(e, file), MARKED);
		// pi's session ends: its message and change set go, and so do the marks.
		unlinkSync(join(e.stateDir, `pi-${process.pid}.review.json`));
		unlinkSync(join(e.stateDir, `pi-${process.pid}.json`));
		await untilMarks(e, file, []);
		assert.equal((await e.messages()).filter((m) => /error|Error/.test(m)).length, 0);
	});

	const HUNKS: { name: string; line: number; text: string; reverted: Omit<Reverted, "pi_pid" | "file" | "id"> }[] = [
		{ name: "a changed line", line: 2, text: "a\nb\nc\ne\nf\ng\n", reverted: { run: 1, line: 2, lines: 1 } },
		{ name: "a deletion", line: 4, text: "a\nB\nc\nd\ne\nf\ng\n", reverted: { run: 1, line: 4, lines: 0 } },
		{ name: "an added line", line: 6, text: "a\nB\nc\ne\nf\n", reverted: { run: 1, line: 6, lines: 1 } },
	];
	it("reverts each hunk in the buffer only; undone it is no revert (marked again, not listed), redone it is", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		let seq = 1;
		for (const c of HUNKS) {
			assert.match(await revertAt(e, file, c.line), /reverted pi's hunk at line \d+ \(in the buffer; undo/, c.name);
			assert.equal(await bufferText(e, file), c.text, c.name);
			assert.equal(readFileSync(file, "utf8"), PI_VERSION, `${c.name}: the disk keeps pi's version`);
			// The hunks reverted and undone before are not listed: this one alone.
			const s = await e.until((s) => (revertedOf(s)?.length === 1 ? s : undefined), `${c.name}: reported`);
			const r = revertedOf(s)?.at(-1);
			assert.deepEqual({ run: r?.run, line: r?.line, lines: r?.lines }, c.reverted, c.name);
			assert.equal(r?.pi_pid, process.pid);
			assert.equal(r?.file, file);
			assert.match(r?.id ?? "", /^h[0-9a-f]{10}$/);
			// The mark went with the revert, the others stayed on their lines (moved by the lines put back).
			const unmarked = await marks(e, file);
			assert.deepEqual(
				unmarked.map((m) => m[2]),
				MARKED.filter((m) => m[0] !== c.line).map((m) => m[2]),
				c.name,
			);
			await undo(e, file);
			assert.equal(await bufferText(e, file), PI_VERSION, `${c.name}: one undo brings pi's version back`);
			assert.equal(
				await e.eval(`(buffer-modified-p (find-buffer-visiting ${elispString(file)}))`),
				"nil",
				`${c.name}: as saved`,
			);
			// Undone: no longer a revert, so pi is not told of it, and the hunk is marked again on pi's lines.
			await untilNoneListed(e, `${c.name}: the undone revert leaves the state file`);
			assert.deepEqual(await marks(e, file), MARKED, `${c.name}: marked again`);
			// Redone: a revert again, listed as it was, that mark gone.
			await undo(e, file, "undo-redo");
			assert.equal(await bufferText(e, file), c.text, `${c.name}: redone`);
			const again = revertedOf(
				await e.until((s) => (revertedOf(s)?.length === 1 ? s : undefined), `${c.name}: listed again`),
			);
			assert.deepEqual(again, revertedOf(s), c.name);
			assert.deepEqual(await marks(e, file), unmarked, `${c.name}: unmarked again`);
			await undo(e, file);
			await untilNoneListed(e, `${c.name}: undone again`);
			seq += 1;
			await piChanges(e, file, seq); // pi's change set read again: marked anew, each hunk once
			assert.deepEqual(await marks(e, file), MARKED, c.name);
		}
		// All three, bottom up and top down alike: the baseline; each hunk, reverted before, listed once.
		for (const line of [6, 4, 2]) await revertAt(e, file, line);
		assert.equal(await bufferText(e, file), BASELINE);
		const ids = revertedOf(await e.until((s) => (revertedOf(s)?.length === 3 ? s : undefined), "three reverts"));
		assert.equal(new Set(ids?.map((r) => r.id)).size, 3, "each hunk's stable id");
		assert.equal(readFileSync(file, "utf8"), PI_VERSION);
		assert.match(await revertAt(e, file, 1), /no hunk of pi's under the cursor/);
		const status = await e.eval("(pi-ide-status)");
		assert.match(status, /pi's last run: 3 hunks \(M-x pi-ide-hunks/);
		assert.match(status, /reverted here: 3 of pi's hunks/);
	});

	it("a revert's undo beside the user's edits told by Emacs's undo; undone, pi's lines edited stay undone", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		const inFile = (form: string) => `(with-current-buffer (find-buffer-visiting ${elispString(file)}) ${form})`;
		const appendTo = (line: number, text: string) =>
			e.act(
				inFile(`(undo-boundary) (goto-char (point-min)) (forward-line ${line - 1}) (end-of-line) (insert "${text}")`),
			);
		const listed = () =>
			e.json<string[]>(inFile("(vconcat (mapcar (lambda (r) (alist-get 'id r)) (pi-ide-review-report)))"));
		// The line after pi's deletion edited, then the deletion reverted and undone: its place is as the user left it.
		await appendTo(4, "!");
		assert.match(await revertAt(e, file, 4), /reverted pi's hunk at line 4/);
		assert.equal(await bufferText(e, file), "a\nB\nc\nd\ne!\nf\ng\n");
		await e.until((s) => (revertedOf(s)?.length === 1 ? true : undefined), "the deletion's revert reported");
		await undo(e, file);
		assert.equal(await bufferText(e, file), "a\nB\nc\ne!\nf\ng\n");
		await untilNoneListed(e, "the deletion's revert undone beside the user's edit");
		assert.deepEqual(await marks(e, file), MARKED, "marked again");
		// pi's changed line reverted, undone, then edited by the user: still undone (not listed), its mark kept.
		await revertAt(e, file, 2);
		await e.until((s) => (revertedOf(s)?.length === 1 ? true : undefined), "the change's revert reported");
		await undo(e, file);
		await untilNoneListed(e, "the change's revert undone");
		await appendTo(2, "?");
		assert.equal(await bufferText(e, file), "a\nB?\nc\ne!\nf\ng\n");
		assert.deepEqual(await listed(), [], "an edit of pi's lines after the undo makes no revert");
		assert.equal(revertedOf(e.readState()), undefined);
		assert.deepEqual(await marks(e, file), MARKED);
	});

	it("a hunk the user edited is refused; unsaved edits elsewhere do not stop a revert", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		await e.act(`(progn (goto-char (point-min)) (forward-line 1) (end-of-line) (insert "!"))`);
		await e.act(`(progn (goto-char (point-min)) (end-of-line) (insert " mine"))`);
		assert.match(await revertAt(e, file, 2), /line 2: you changed these lines after pi's edit; not reverted/);
		assert.equal(await bufferText(e, file), "a mine\nB!\nc\ne\nf\ng\n");
		assert.match(await revertAt(e, file, 6), /reverted pi's hunk at line 6/);
		assert.equal(await bufferText(e, file), "a mine\nB!\nc\ne\nf\n");
		assert.equal(readFileSync(file, "utf8"), PI_VERSION);
		// Lines typed above the marks move them along: still on pi's lines.
		await e.act(`(progn (goto-char (point-min)) (insert "new first line\\n"))`);
		assert.match(await revertAt(e, file, 5), /reverted pi's hunk at line 5/);
		assert.equal(await bufferText(e, file), "new first line\na mine\nB!\nc\nd\ne\nf\n");
		await e.until((s) => (revertedOf(s)?.length === 2 ? true : undefined), "two reverts reported");
	});

	it("an undone revert stays marked at its place: lines typed above, pi's change set read again", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		await revertAt(e, file, 6);
		await e.until((s) => (revertedOf(s)?.length === 1 ? true : undefined), "reported");
		await undo(e, file);
		await untilNoneListed(e, "the undone revert leaves the state file");
		await e.act(`(progn (goto-char (point-min)) (insert "mine\\n"))`);
		await untilMarks(
			e,
			file,
			MARKED.map(([line, n, kind]) => [line + 1, n, kind]),
		);
		// Not reloaded (unsaved lines): pi's hunks are no longer at pi's line numbers, but their marks moved with
		// them and stay, the one whose revert was undone too.
		await e.until((s) => (s?.active_buffer.lines_total === 7 ? true : undefined), "the line typed is written");
		await piChanges(e, file, 2);
		assert.deepEqual(
			await marks(e, file),
			MARKED.map(([line, n, kind]) => [line + 1, n, kind]),
		);
		assert.equal(await bufferText(e, file), `mine\n${PI_VERSION}`);
		assert.equal(revertedOf(e.readState()), undefined);
	});

	it("a buffer with unsaved lines above pi's hunks (not reloaded) marks nothing: never on wrong lines", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await e.act(`(progn (goto-char (point-min)) (insert "mine\n"))`);
		await piChanges(e, file);
		assert.equal(await bufferText(e, file), `mine\n${BASELINE}`, "unsaved: not reloaded");
		assert.deepEqual(await marks(e, file), []);
		assert.match(await revertAt(e, file, 4), /no hunk of pi's under the cursor/);
		assert.equal(await bufferText(e, file), `mine\n${BASELINE}`);
	});

	it("pi-ide-revert-file: every hunk still pi's in one change, the edited one refused; one undo, none listed", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		await e.act(`(progn (goto-char (point-min)) (forward-line 1) (end-of-line) (insert "!"))`);
		const said = await e.json<string>(
			`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (undo-boundary) (pi-ide-revert-file))`,
		);
		assert.match(said, /reverted 2 of pi's hunks \(in the buffer; undo .*; 1 refused: line 2: you changed these lines/);
		assert.equal(await bufferText(e, file), "a\nB!\nc\nd\ne\nf\n");
		assert.equal(readFileSync(file, "utf8"), PI_VERSION);
		const first = revertedOf(
			await e.until((s) => (revertedOf(s)?.length === 2 ? s : undefined), "two reverts reported"),
		);
		await undo(e, file);
		assert.equal(await bufferText(e, file), "a\nB!\nc\ne\nf\ng\n", "one undo brings both back");
		// Both undone: neither listed, both marked again beside the refused one.
		await untilNoneListed(e, "the undone reverts leave the state file");
		assert.deepEqual(await marks(e, file), MARKED);
		// Reverted again: each listed once.
		assert.match(
			await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (pi-ide-revert-file))`),
			/reverted 2 of pi's hunks \(in the buffer; undo .*; 1 refused: line 2/,
		);
		const again = revertedOf(await e.until((s) => (revertedOf(s)?.length === 2 ? s : undefined), "reverted again"));
		assert.deepEqual(
			again?.map((r) => r.id),
			first?.map((r) => r.id),
		);
		assert.deepEqual(await marks(e, file), [[2, 1, "pi-ide-review-changed"]]);
	});

	// The user deleted pi's line: the baseline's own `}` that follows reads like pi's. Its overlay went with the
	// line (it evaporates), so nothing is reverted there, by either command.
	const SLID = [
		{ command: "pi-ide-revert-hunk", said: /no hunk of pi's under the cursor/ },
		{ command: "pi-ide-revert-file", said: /no hunks of pi's to revert here/ },
	];
	for (const c of SLID) {
		it(`baseline a q } b, pi's a } } b, pi's line deleted: ${c.command} reverts nothing`, async (t) => {
			const e = await startEmacs(t);
			const file = join(e.dir, "a.txt");
			await openFile(e, file, "a\nq\n}\nb\n");
			writeFileSync(file, "a\n}\n}\nb\n");
			place(e, `pi-${process.pid}.review.json`, reviewText(e, file, "a\nq\n}\nb\n", "a\n}\n}\nb\n"));
			await announce(e, 1, [file]);
			await untilMarks(e, file, [[2, 1, "pi-ide-review-changed"]]);
			await e.act(
				`(progn (goto-char (point-min)) (forward-line 1) (delete-region (point) (progn (forward-line 1) (point))))`,
			);
			const said = await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)})
				(goto-char (point-min)) (forward-line 1) (${c.command}))`);
			assert.match(said, c.said);
			assert.equal(await bufferText(e, file), "a\n}\nb\n");
			assert.equal(revertedOf(e.readState()), undefined);
		});
	}

	it("marks follow their lines: lines typed above, a revert that removes a line, pi's change set read again", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		await piChanges(e, file);
		await e.act(`(progn (goto-char (point-min)) (insert "mine\n"))`);
		assert.match(await revertAt(e, file, 7), /reverted pi's hunk at line 7/);
		await e.until((s) => (revertedOf(s)?.length === 1 ? true : undefined), "the revert is listed");
		// pi's next message, with its change set written again.
		place(e, `pi-${process.pid}.review.json`, reviewText(e, file, BASELINE, PI_VERSION));
		await announce(e, 2, []);
		await untilMarks(e, file, [
			[3, 1, "pi-ide-review-changed"],
			[5, 1, "deleted"],
		]);
		assert.match(await revertAt(e, file, 3), /reverted pi's hunk at line 3/);
		assert.equal(await bufferText(e, file), "mine\na\nb\nc\ne\nf\n");
	});

	// A revert lives in the buffer until saved: thrown away with the buffer's text it is no longer a revert.
	const DISCARDS = [
		{ name: "revert-buffer", form: "(revert-buffer t t)", saved: false },
		{ name: "kill-buffer", form: "(progn (set-buffer-modified-p nil) (kill-buffer))", saved: false },
		{ name: "save-buffer, revert-buffer", form: "(progn (save-buffer) (revert-buffer t t))", saved: true },
		{ name: "save-buffer, kill-buffer", form: "(progn (save-buffer) (kill-buffer))", saved: true },
	];
	for (const c of DISCARDS) {
		it(`a revert, then ${c.name}: ${c.saved ? "still" : "no longer"} told`, async (t) => {
			const e = await startEmacs(t);
			const file = join(e.dir, "a.txt");
			await openFile(e, file);
			await piChanges(e, file);
			assert.match(await revertAt(e, file, 2), /reverted pi's hunk at line 2/);
			await e.until((s) => (revertedOf(s)?.length === 1 ? true : undefined), "the revert is listed");
			await e.act(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) ${c.form})`);
			const listed = await e.json<number>("(length (pi-ide-review-report))");
			assert.equal(listed, c.saved ? 1 : 0);
		});
	}

	it("bad change sets: one message each, no marks, no error; another editor's pi is not read", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file);
		writeFileSync(file, PI_VERSION);
		const name = `pi-${process.pid}.review.json`;
		const good = reviewText(e, file, BASELINE, PI_VERSION);
		const cases: { name: string; make: () => void; why: RegExp }[] = [
			{ name: "malformed JSON", make: () => place(e, name, "{not json"), why: /not valid JSON/ },
			{
				name: "oversized",
				make: () => place(e, name, good.toString().padEnd(8 * 1024 * 1024 + 1, " ")),
				why: /over the 8388608-byte limit/,
			},
			{ name: "group-readable", make: () => place(e, name, good, 0o640), why: /group\/other permissions/ },
			{
				name: "another pi's",
				make: () => place(e, name, reviewText(e, file, BASELINE, PI_VERSION, process.pid + 1)),
				why: /does not match the file name/,
			},
			{ name: "not a change set", make: () => place(e, name, '{"kind":"pi","pid":1}'), why: /not a pi change set/ },
			{
				name: "symlinked",
				make: () => {
					unlinkSync(join(e.stateDir, name));
					writeFileSync(join(e.dir, "planted.json"), good, { mode: 0o600 });
					symlinkSync(join(e.dir, "planted.json"), join(e.stateDir, name));
				},
				why: /is a link, not a regular file/,
			},
			{
				name: "a FIFO",
				make: () => {
					unlinkSync(join(e.stateDir, name));
					execFileSync("mkfifo", ["-m", "600", join(e.stateDir, name)]);
				},
				why: /is a fifo, not a regular file/,
			},
		];
		let seq = 0;
		for (const c of cases) {
			c.make();
			seq += 1;
			await announce(e, seq, [file]);
			seq += 1;
			await announce(e, seq, [file]); // read again: no second message
			const said = (await e.messages()).filter((m) => m.includes(`ignoring ${name}`) && c.why.test(m));
			assert.equal(said.length, 1, `${c.name}: ${said.join(" | ")}`);
			assert.deepEqual(await marks(e, file), [], c.name);
		}
		unlinkSync(join(e.stateDir, name));
		// A pi connected to another editor: its change set is not this Emacs's to read.
		place(e, name, good);
		seq += 1;
		const other = message(e, seq, [file], { editor_pid: e.pid + 1 });
		place(e, `pi-${process.pid}.json`, JSON.stringify(other));
		await pollUntil(
			async () => ((await e.eval("(length pi-ide-inbox--pis)")) === "0" ? true : undefined),
			"the message for another editor is read",
		);
		assert.deepEqual(await marks(e, file), []);
		// A stale change set: its pi is gone (its files left behind by a crash): silent, not read.
		const dead = await deadPid();
		place(e, `pi-${dead}.review.json`, reviewText(e, file, BASELINE, PI_VERSION, dead));
		place(e, `pi-${dead}.json`, JSON.stringify(message(e, 1, [file], { pid: dead })));
		await e.eval(`(pi-ide-inbox-process ${elispString(`pi-${dead}.json`)})`);
		assert.deepEqual(await marks(e, file), []);
		assert.equal((await e.messages()).filter((m) => m.includes(`pi-${dead}`)).length, 0);
		// The good one, named for this Emacs: marked.
		seq += 1;
		await announce(e, seq, [file]);
		assert.deepEqual(await marks(e, file), MARKED);
		assert.equal((await e.messages()).filter((m) => /error|Error/.test(m)).length, 0);
	});
});
