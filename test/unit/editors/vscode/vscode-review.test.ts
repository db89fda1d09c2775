/**
 * pi's change set in the TypeScript clients (editors/shared/review.ts, read by pi-reader.ts): the parser, the file
 * checks on a real temp dir, placing pi's hunks in a document, following the user's edits, telling pi's lines from
 * edited ones, the revert edit, and the `reverted` list; then a seeded randomised test against an independent
 * oracle (every line tagged with where it came from), which catches a planted defect in the shift rule.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { readPiReview } from "../../../../editors/shared/pi-reader.ts";
import {
	addRevert,
	hasLinesAt,
	type LineChange,
	MAX_REVERTED_REPORTS,
	MAX_REVIEW_BYTES,
	type Mark,
	markStatus,
	newestEntry,
	noteIntact,
	parseReview,
	piReviewName,
	piVersion,
	placeMarks,
	planRevert,
	ReviewBook,
	type ReviewEntry,
	type ReviewFile,
	type ReviewRun,
	revertEdit,
	shiftMarks,
	type TextEdit,
} from "../../../../editors/shared/review.ts";
import { computeHunks, splitLines } from "../../../../src/link/change-set.ts";
import { piReviewFileName } from "../../../../src/protocol/wire.ts";
import { seededInts } from "../../../helpers/seeded.ts";
import { applyEdit, changeOf, doc, docOf, inverseOf } from "../../../helpers/text-edits.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-review-"));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => {
	const dir = join(root, `case-${++counter}`);
	mkdirSync(dir, { mode: 0o700 });
	return dir;
};

const FILE = "/p/a.txt";
function entryOf(baseline: string | null, after: string, extra: Partial<ReviewFile> = {}): ReviewEntry {
	const hunks = computeHunks(FILE, baseline ?? "", after);
	return { pid: 7, run: 3, entry: { file: FILE, baseline, note: null, hunks, hunks_total: hunks.length, ...extra } };
}

const review = (fields: Record<string, unknown>) =>
	JSON.stringify({ protocol: "0.4", kind: "pi-review", pid: 7, editor_pid: 9, timestamp: 1, runs: [], ...fields });
const hunk = {
	id: "h0123456789",
	old_start: 2,
	old_lines: 1,
	new_start: 2,
	new_lines: 1,
	old_text: ["b"],
	new_text: ["B"],
};
const fileEntry = (fields: Record<string, unknown> = {}) => ({
	file: FILE,
	baseline: "a\nb\n",
	note: null,
	hunks_total: 1,
	hunks: [hunk],
	...fields,
});

describe("parseReview", () => {
	const cases: [string, string, string | { runs: number; files: number; hunks: number; dropped: number }][] = [
		["not JSON", "{", "invalid JSON"],
		["an array", "[]", "not a JSON object"],
		["another kind", review({ kind: "pi" }), 'kind: not "pi-review"'],
		["another pid", review({ pid: 8 }), "pid field 8 does not match"],
		["runs not a list", review({ runs: {} }), "runs: not a list"],
		["empty", review({}), { runs: 0, files: 0, hunks: 0, dropped: 0 }],
		["one hunk", review({ runs: [{ run: 3, files: [fileEntry()] }] }), { runs: 1, files: 1, hunks: 1, dropped: 0 }],
		[
			"a bad run is dropped",
			review({
				runs: [
					{ run: -1, files: [] },
					{ run: 3, files: [fileEntry()] },
				],
			}),
			{ runs: 1, files: 1, hunks: 1, dropped: 1 },
		],
		[
			"a relative path is dropped",
			review({ runs: [{ run: 3, files: [fileEntry({ file: "a.txt" })] }] }),
			{ runs: 1, files: 0, hunks: 0, dropped: 1 },
		],
		[
			"a hunk without lines is dropped",
			review({ runs: [{ run: 3, files: [fileEntry({ hunks: [hunk, { ...hunk, new_text: "B" }] })] }] }),
			{ runs: 1, files: 1, hunks: 1, dropped: 1 },
		],
		[
			"a hunk at line 0 is dropped",
			review({ runs: [{ run: 3, files: [fileEntry({ hunks: [{ ...hunk, new_start: 0 }] })] }] }),
			{ runs: 1, files: 1, hunks: 0, dropped: 1 },
		],
		[
			"a long id is dropped",
			review({ runs: [{ run: 3, files: [fileEntry({ hunks: [{ ...hunk, id: "h".repeat(65) }] })] }] }),
			{ runs: 1, files: 1, hunks: 0, dropped: 1 },
		],
		[
			"a note carries no hunks",
			review({ runs: [{ run: 3, files: [fileEntry({ note: "binary", baseline: null })] }] }),
			{ runs: 1, files: 1, hunks: 0, dropped: 0 },
		],
		[
			"an unknown note is dropped",
			review({ runs: [{ run: 3, files: [fileEntry({ note: "weird" })] }] }),
			{ runs: 1, files: 0, hunks: 0, dropped: 1 },
		],
	];
	for (const [name, text, expected] of cases) {
		test(name, () => {
			const parsed = parseReview(text, 7);
			if (typeof expected === "string") {
				assert.equal(parsed.ok, false);
				assert.match(parsed.ok ? "" : parsed.problem, new RegExp(expected.replace(/[()]/g, "\\$&")));
				return;
			}
			assert.ok(parsed.ok, JSON.stringify(parsed));
			const files = parsed.runs.flatMap((r) => r.files);
			assert.deepEqual(
				{
					runs: parsed.runs.length,
					files: files.length,
					hunks: files.reduce((n, f) => n + f.hunks.length, 0),
					dropped: parsed.dropped,
				},
				expected,
			);
		});
	}

	test("the counts come from the texts, not from the file's claims", () => {
		const parsed = parseReview(
			review({ runs: [{ run: 3, files: [fileEntry({ hunks: [{ ...hunk, old_lines: 9, new_lines: 9 }] })] }] }),
			7,
		);
		assert.ok(parsed.ok);
		assert.deepEqual(
			[parsed.runs[0]?.files[0]?.hunks[0]?.old_lines, parsed.runs[0]?.files[0]?.hunks[0]?.new_lines],
			[1, 1],
		);
	});

	test("the file name is pi's", () => assert.equal(piReviewName(4242), piReviewFileName(4242)));
});

describe("readPiReview: the checks of pi's message, with an 8 MiB cap", () => {
	const good = review({ runs: [{ run: 3, files: [fileEntry()] }] });
	const cases: [string, (dir: string, path: string) => void, string][] = [
		["a good file", (_d, p) => writeFileSync(p, good, { mode: 0o600 }), "review"],
		["no file", () => {}, "gone"],
		["group-readable", (_d, p) => writeFileSync(p, good, { mode: 0o640 }), "mode 0640"],
		[
			"a symlink to a good file",
			(d, p) => {
				writeFileSync(join(d, "real.json"), good, { mode: 0o600 });
				symlinkSync(join(d, "real.json"), p);
			},
			"symbolic link",
		],
		["a FIFO (never blocks)", (_d, p) => execFileSync("mkfifo", ["-m", "600", p]), "not a regular file"],
		["a directory", (_d, p) => mkdirSync(p, { mode: 0o700 }), "not a regular file"],
		[
			"over 8 MiB",
			(_d, p) => writeFileSync(p, `${good}${" ".repeat(MAX_REVIEW_BYTES)}`, { mode: 0o600 }),
			"over the 8388608-byte limit",
		],
		["malformed", (_d, p) => writeFileSync(p, "{", { mode: 0o600 }), "invalid change set: invalid JSON"],
		["another pi's", (_d, p) => writeFileSync(p, review({ pid: 8 }), { mode: 0o600 }), "pid field 8"],
	];
	for (const [name, plant, expected] of cases) {
		test(name, () => {
			const dir = freshDir();
			plant(dir, join(dir, piReviewName(7)));
			const verdict = readPiReview(dir, 7);
			if (expected === "review" || expected === "gone") assert.equal(verdict.kind, expected);
			else assert.match(verdict.kind === "problem" ? verdict.problem : verdict.kind, new RegExp(expected));
		});
	}

	test("a file owned by another uid is refused", () => {
		const dir = freshDir();
		writeFileSync(join(dir, piReviewName(7)), good, { mode: 0o600 });
		const verdict = readPiReview(dir, 7, { uid: (process.getuid?.() ?? 0) + 1 });
		assert.match(verdict.kind === "problem" ? verdict.problem : "", /owned by uid/);
	});

	test("a mode change after the check is caught on the opened file", () => {
		const dir = freshDir();
		const path = join(dir, piReviewName(7));
		writeFileSync(path, good, { mode: 0o600 });
		chmodSync(path, 0o604);
		assert.match(JSON.stringify(readPiReview(dir, 7)), /readable or writable by others/);
	});
});

describe("newestEntry and piVersion", () => {
	const run = (n: number, files: string[]): ReviewRun => ({
		run: n,
		files: files.map((file) => ({ file, baseline: "", note: null, hunks: [], hunks_total: 0 })),
	});
	test("the newest run that changed the file, among pis", () => {
		const sets = new Map([
			[1, [run(2, ["/a", "/b"]), run(5, ["/a"])]],
			[2, [run(4, ["/b"])]],
		]);
		assert.deepEqual(
			["/a", "/b", "/c"].map((f) => {
				const found = newestEntry(sets, f);
				return found && [found.pid, found.run];
			}),
			[[1, 5], [2, 4], undefined],
		);
	});
	const versions: [string, string | null, string][] = [
		["a change", "a\nb\nc\n", "a\nB\nc\n"],
		["an insertion at the top", "a\nb\n", "x\na\nb\n"],
		["a deletion at the end", "a\nb\nc\n", "a\n"],
		["a new file", null, "x\ny\n"],
		["several", "1\n2\n3\n4\n5\n6\n", "0\n1\n3\nthree\n4\n6\n7\n"],
	];
	for (const [name, baseline, after] of versions) {
		test(`piVersion: ${name}`, () => assert.deepEqual(piVersion(entryOf(baseline, after).entry), splitLines(after)));
	}
	test("piVersion: unknown when hunks were left out at the cap", () => {
		assert.equal(piVersion({ ...entryOf("a\n", "b\n").entry, hunks_total: 2 }), undefined);
	});
});

describe("placeMarks, markStatus and revertEdit", () => {
	const BASE = "l1\nl2\nl3\nl4\nl5\n";
	// [name, pi's version, the document, expected places (1-based, null: not found), what a revert of the first hunk leaves]
	const cases: [string, string, string, (number | null)[], string][] = [
		["a change", "l1\nL2\nl3\nl4\nl5\n", "l1\nL2\nl3\nl4\nl5\n", [2], BASE],
		["an insertion", "l1\nl2\nnew\nl3\nl4\nl5\n", "l1\nl2\nnew\nl3\nl4\nl5\n", [3], BASE],
		["a deletion", "l1\nl2\nl4\nl5\n", "l1\nl2\nl4\nl5\n", [3], BASE],
		["a deletion at the end", "l1\nl2\nl3\n", "l1\nl2\nl3\n", [4], BASE],
		["the last line, no final newline", "l1\nl2\nl3\nl4\nL5", "l1\nl2\nl3\nl4\nL5", [5], "l1\nl2\nl3\nl4\nl5"],
		[
			"an addition at the end, no final newline",
			"l1\nl2\nl3\nl4\nl5\nx",
			"l1\nl2\nl3\nl4\nl5\nx",
			[6],
			BASE.slice(0, -1),
		],
		["a deletion at the end, no final newline", "l1\nl2", "l1\nl2", [3], "l1\nl2\nl3\nl4\nl5"],
		["two hunks", "L1\nl2\nl3\nl4\nL5\n", "L1\nl2\nl3\nl4\nL5\n", [1, 5], "l1\nl2\nl3\nl4\nL5\n"],
		["the document is not pi's yet", "l1\nL2\nl3\nl4\nl5\n", BASE, [null], BASE],
		["a deletion, the lines around not pi's", "l1\nl2\nl4\nl5\n", "l1\nl2\nXX\nl5\n", [null], ""],
	];
	for (const [name, pi, text, places, reverted] of cases) {
		test(name, () => {
			const found = entryOf(BASE.endsWith("\n") && !pi.endsWith("\n") ? BASE.slice(0, -1) : BASE, pi);
			const document = docOf(text);
			const marks = placeMarks([], found, document);
			assert.deepEqual(
				marks.map((m) => (m.line === undefined ? null : m.line + 1)),
				places,
			);
			const first = marks[0];
			assert.ok(first);
			if (first.line === undefined) {
				assert.equal(markStatus(first, document), "unplaced");
				assert.match(planRevert(marks, document, "\n", "all").problems[0] ?? "", /not in this document/);
				return;
			}
			assert.equal(markStatus(first, document), "pi");
			const after = applyEdit(text, revertEdit(first, document, "\n"));
			assert.equal(after, reverted);
			// The revert follows through shiftMarks (as VS Code's change event reports it): the mark says "reverted".
			const edit = revertEdit(first, document, "\n");
			const change: LineChange = {
				startLine: edit.start.line,
				endLine: edit.end.line,
				endCharacter: edit.end.character,
				text: edit.text,
			};
			const [moved] = shiftMarks([{ ...first, reverted: true }], [change]);
			assert.ok(moved);
			assert.equal(markStatus(moved, docOf(after)), "reverted");
		});
	}

	test("a CRLF document: pi's lines carry the CR, the document's do not; the revert writes CRLF", () => {
		const found = entryOf("a\r\nb\r\n", "a\r\nB\r\n");
		const document = doc(["a", "B", ""]);
		const [mark] = placeMarks([], found, document);
		assert.ok(mark);
		assert.equal(mark.line, 1);
		assert.equal(revertEdit(mark, document, "\r\n").text, "b\r\n");
	});

	test("a mark already placed keeps its place when the change set is read again (same id, same run)", () => {
		const found = entryOf(BASE, "l1\nL2\nl3\nl4\nl5\n");
		const [mark] = placeMarks([], found, docOf("l1\nL2\nl3\nl4\nl5\n"));
		assert.ok(mark);
		const userAbove = docOf("new\nl1\nL2\nl3\nl4\nl5\n");
		const [moved] = shiftMarks([mark], [{ startLine: 0, endLine: 0, endCharacter: 0, text: "new\n" }]);
		assert.ok(moved);
		assert.deepEqual(placeMarks([moved], found, userAbove)[0]?.line, 2);
		assert.deepEqual(
			placeMarks([moved], { ...found, run: 4 }, userAbove)[0]?.line,
			undefined,
			"a new run: placed anew",
		);
	});
});

describe("a mark on a line equal to the next one (baseline a q } b, pi's a } } b): an edit that takes pi's line", () => {
	const BASE = "a\nq\n}\nb\n";
	const PI = "a\n}\n}\nb\n";
	// [name, the change as VS Code reports it, the text after it, whether pi's hunk may still be reverted, its line]
	const cases: [string, LineChange, string, boolean, number][] = [
		["pi's line deleted whole", { startLine: 1, endLine: 2, endCharacter: 0, text: "" }, "a\n}\nb\n", false, 1],
		[
			"pi's line deleted from the end of the line above",
			{ startLine: 0, startCharacter: 1, endLine: 1, endCharacter: 1, text: "" },
			"a\n}\nb\n",
			false,
			1,
		],
		["pi's line and the next deleted", { startLine: 1, endLine: 3, endCharacter: 0, text: "" }, "a\nb\n", false, 1],
		["the line above deleted", { startLine: 0, endLine: 1, endCharacter: 0, text: "" }, "}\n}\nb\n", true, 0],
		["the line below deleted", { startLine: 2, endLine: 3, endCharacter: 0, text: "" }, "a\n}\nb\n", true, 1],
		[
			"the line below joined to pi's, from its end",
			{ startLine: 1, startCharacter: 1, endLine: 2, endCharacter: 0, text: "" },
			"a\n}}\nb\n",
			false,
			1,
		],
		["a line added below", { startLine: 2, endLine: 2, endCharacter: 0, text: "x\n" }, "a\n}\nx\n}\nb\n", true, 1],
	];
	for (const [name, change, after, revertible, line] of cases) {
		test(`${name}: ${revertible ? "reverted" : "refused"}`, () => {
			const b = new ReviewBook();
			const hunks = computeHunks(FILE, BASE, PI);
			b.setRuns(7, [{ run: 3, files: [{ file: FILE, baseline: BASE, note: null, hunks, hunks_total: 1 }] }]);
			b.sync(FILE, docOf(PI));
			assert.deepEqual(
				b.marks(FILE).map((m) => m.line),
				[1],
			);
			b.edited(FILE, [change], docOf(after));
			assert.deepEqual(
				b.marks(FILE).map((m) => m.line),
				[line],
			);
			const plan = planRevert(b.marks(FILE), docOf(after), "\n", { cursor: line });
			if (revertible) {
				assert.deepEqual(plan.problems, []);
				assert.equal(plan.edits.length, 1);
			} else {
				assert.equal(plan.edits.length, 0);
				assert.match(plan.problems[0] ?? "", /you changed these lines after pi's edit; not reverted/);
			}
		});
	}
});

describe("ReviewBook.discarded: a revert thrown away unsaved (File: Revert File, closed) is no longer told", () => {
	const BASE = "a\nb\nc\n";
	const PI = "a\nB\nc\n";
	// [what happens after the revert, the document's text when thrown away (null: closed), listed afterwards]
	const cases: [string[], string | null, number][] = [
		[[], PI, 0],
		[[], null, 0],
		[["save"], BASE, 1],
		[["save"], null, 1],
		[["save", "undo"], BASE, 1],
		[["save", "undo", "save"], PI, 0],
		[["undo"], PI, 0],
	];
	for (const [steps, thrown, listed] of cases) {
		test(`revert, ${[...steps, thrown === null ? "close" : "revert file"].join(", ")}: ${listed ? "still" : "no longer"} listed`, () => {
			const b = new ReviewBook();
			const hunks = computeHunks(FILE, BASE, PI);
			b.setRuns(7, [{ run: 3, files: [{ file: FILE, baseline: BASE, note: null, hunks, hunks_total: 1 }] }]);
			let text = PI;
			b.sync(FILE, docOf(text));
			const plan = planRevert(b.marks(FILE), docOf(text), "\n", { cursor: 1 });
			const edit = plan.edits[0] as TextEdit;
			const back = inverseOf(text, edit);
			text = applyEdit(text, edit);
			b.edited(FILE, [changeOf(edit)], docOf(text));
			b.markReverted(FILE, plan, docOf(text));
			assert.equal(b.reverted.length, 1);
			for (const step of steps) {
				if (step === "save") b.saved(FILE);
				else {
					text = applyEdit(text, back);
					b.edited(FILE, [changeOf(back)], docOf(text), true);
				}
			}
			const listedBefore = b.reverted.length;
			const changed = b.discarded(FILE, thrown === null ? undefined : docOf(thrown));
			assert.equal(b.reverted.length, listed);
			assert.equal(changed, listed !== listedBefore, "told to write the state file when the list changed");
			if (thrown === PI)
				assert.deepEqual(
					b.marks(FILE).map((m) => [m.line, markStatus(m, docOf(PI))]),
					[[1, "pi"]],
				);
		});
	}
});

describe("shiftMarks: edits above move a mark, edits on it leave it for markStatus", () => {
	// A mark of two lines at 0-based line 4.
	const mark: Mark = {
		pid: 1,
		run: 1,
		file: FILE,
		hunk: { id: "h1", old_start: 5, old_lines: 1, new_start: 5, new_lines: 2, old_text: ["o"], new_text: ["p", "q"] },
		line: 4,
		reverted: false,
	};
	const cases: [string, LineChange, number][] = [
		["a line typed above", { startLine: 1, endLine: 1, endCharacter: 3, text: "x\n" }, 5],
		["two lines deleted above", { startLine: 1, endLine: 3, endCharacter: 0, text: "" }, 2],
		["Enter at the start of its first line", { startLine: 4, endLine: 4, endCharacter: 0, text: "\n" }, 5],
		["the line before it deleted whole", { startLine: 3, endLine: 4, endCharacter: 0, text: "" }, 3],
		["a CR line break above", { startLine: 0, endLine: 0, endCharacter: 0, text: "x\r" }, 5],
		["a character typed on its first line", { startLine: 4, endLine: 4, endCharacter: 1, text: "y" }, 4],
		["an edit below", { startLine: 6, endLine: 9, endCharacter: 0, text: "" }, 4],
		["an edit from above into it", { startLine: 2, endLine: 5, endCharacter: 1, text: "" }, 4],
	];
	for (const [name, change, line] of cases) {
		test(name, () => assert.equal(shiftMarks([mark], [change])[0]?.line, line));
	}
	test("changes apply in order", () => {
		const changes: LineChange[] = [
			{ startLine: 0, endLine: 0, endCharacter: 0, text: "a\nb\n" },
			{ startLine: 0, endLine: 1, endCharacter: 0, text: "" },
		];
		assert.equal(shiftMarks([mark], changes)[0]?.line, 5);
	});
});

describe("planRevert and ReviewBook", () => {
	const BASE = "a\nb\nc\nd\ne\nf\n";
	const PI = "a\nB\nc\nd\ne\nF\nG\n";
	const book = () => {
		const b = new ReviewBook();
		const hunks = computeHunks(FILE, BASE, PI);
		b.setRuns(7, [{ run: 3, files: [{ file: FILE, baseline: BASE, note: null, hunks, hunks_total: hunks.length }] }]);
		return b;
	};

	test("the hunk under the cursor, the whole file, nothing under the cursor", () => {
		const b = book();
		const document = docOf(PI);
		b.sync(FILE, document);
		const under = (line: number) => planRevert(b.marks(FILE), document, "\n", { cursor: line });
		assert.deepEqual([under(1).chosen, under(5).chosen, under(6).chosen, under(0).chosen], [1, 1, 1, 0]);
		const all = planRevert(b.marks(FILE), document, "\n", "all");
		assert.equal(all.edits.length, 2);
		// Both edits computed against the same text, as one WorkspaceEdit applies them.
		const reverted = [...all.edits].reverse().reduce((text, e) => applyEdit(text, e), PI);
		assert.equal(reverted, BASE);
	});

	test("lines the user edited are refused with the line; unsaved edits elsewhere are kept", () => {
		const b = book();
		b.sync(FILE, docOf(PI));
		// The user edits pi's line 2 and adds a line at the top: the refused hunk names where it is now.
		const text = `top\na\nB!\nc\nd\ne\nF\nG\n`;
		b.edited(
			FILE,
			[
				{ startLine: 1, endLine: 1, endCharacter: 1, text: "!" },
				{ startLine: 0, endLine: 0, endCharacter: 0, text: "top\n" },
			],
			docOf(text),
		);
		const plan = planRevert(b.marks(FILE), docOf(text), "\n", "all");
		assert.deepEqual(plan.problems, ["line 3: you changed these lines after pi's edit; not reverted"]);
		assert.equal(plan.edits.length, 1);
		assert.equal(applyEdit(text, plan.edits[0] as TextEdit), "top\na\nB!\nc\nd\ne\nf\n");
		b.markReverted(FILE, plan, docOf("top\na\nB!\nc\nd\ne\nf\n"));
		assert.deepEqual(b.reverted, [{ pi_pid: 7, run: 3, id: plan.marks[0]?.hunk.id, file: FILE, line: 7, lines: 2 }]);
	});

	test("reverted, undone, then edited: refused as edited, not as already reverted", () => {
		const b = book();
		b.sync(FILE, docOf(PI));
		const plan = planRevert(b.marks(FILE), docOf(PI), "\n", { cursor: 1 });
		const edit = plan.edits[0] as TextEdit;
		const reverted = applyEdit(PI, edit);
		b.edited(FILE, [changeOf(edit)], docOf(reverted));
		b.markReverted(FILE, plan, docOf(reverted));
		// Undo: pi's line back, then the user types on it.
		const undo: TextEdit = { start: { line: 1, character: 0 }, end: { line: 2, character: 0 }, text: "B\n" };
		b.edited(FILE, [changeOf(undo)], docOf(PI), true);
		const typed = PI.replace("B\n", "B!\n");
		b.edited(FILE, [{ startLine: 1, endLine: 1, endCharacter: 1, text: "!" }], docOf(typed));
		assert.deepEqual(planRevert(b.marks(FILE), docOf(typed), "\n", { cursor: 1 }).problems, [
			"line 2: you changed these lines after pi's edit; not reverted",
		]);
	});

	// A revert the user undoes is no longer one: left out of `reverted` (pi is never told), the hunk pi's again;
	// a redo lists it again; reverting it a second time lists it once. A change, a deletion, an addition.
	const BASE2 = "a\nb\nc\nd\ne\n";
	const PI2 = "a\nB\nc\ne\nX\n";
	const UNDO_CASES = [
		{ name: "a change", line: 1 },
		{ name: "a deletion (put back)", line: 3 },
		{ name: "an addition", line: 4 },
	];
	for (const c of UNDO_CASES) {
		test(`${c.name} reverted, undone, redone, undone and reverted again: listed only while it holds, once`, () => {
			const b = new ReviewBook();
			const hunks = computeHunks(FILE, BASE2, PI2);
			assert.equal(hunks.length, 3);
			b.setRuns(7, [{ run: 3, files: [{ file: FILE, baseline: BASE2, note: null, hunks, hunks_total: 3 }] }]);
			let text = PI2;
			b.sync(FILE, docOf(text));
			const apply = (e: TextEdit, byUndo = false) => {
				const before = text;
				text = applyEdit(text, e);
				return { changed: b.edited(FILE, [changeOf(e)], docOf(text), byUndo), back: inverseOf(before, e) };
			};
			const revert = () => {
				const plan = planRevert(b.marks(FILE), docOf(text), "\n", { cursor: c.line });
				assert.deepEqual([plan.edits.length, plan.problems], [1, []], "pi's hunk under the cursor");
				const done = apply(plan.edits[0] as TextEdit);
				b.markReverted(FILE, plan, docOf(text));
				return { id: plan.marks[0]?.hunk.id, ...done };
			};
			const reverted = revert();
			const textReverted = text;
			assert.deepEqual(
				b.reverted.map((r) => r.id),
				[reverted.id],
			);
			const undo = apply(reverted.back, true);
			assert.equal(text, PI2);
			assert.equal(undo.changed, true, "the state file is written again");
			assert.equal(b.reverted.length, 0, "undone: not listed");
			assert.deepEqual(planRevert(b.marks(FILE), docOf(text), "\n", { cursor: c.line }).problems, [], "pi's again");
			const redo = apply(undo.back, true);
			assert.equal(text, textReverted);
			assert.equal(redo.changed, true);
			assert.deepEqual(
				b.reverted.map((r) => r.id),
				[reverted.id],
				"redone: listed again",
			);
			apply(redo.back, true);
			assert.equal(b.reverted.length, 0);
			revert();
			assert.deepEqual(
				b.reverted.map((r) => r.id),
				[reverted.id],
				"reverted again: listed once",
			);
		});
	}

	/** A book whose hunk on line 2 the user reverted: the book, and the revert's edit. */
	const revertedBook = () => {
		const b = book();
		b.sync(FILE, docOf(PI));
		const plan = planRevert(b.marks(FILE), docOf(PI), "\n", { cursor: 1 });
		const edit = plan.edits[0] as TextEdit;
		b.edited(FILE, [changeOf(edit)], docOf(applyEdit(PI, edit)));
		b.markReverted(FILE, plan, docOf(applyEdit(PI, edit)));
		return { b, edit };
	};

	test("reverted, undone, then edited: not listed", () => {
		const { b, edit } = revertedBook();
		b.edited(FILE, [changeOf(inverseOf(PI, edit))], docOf(PI), true);
		b.edited(FILE, [{ startLine: 1, endLine: 1, endCharacter: 1, text: "!" }], docOf(PI.replace("B\n", "B!\n")));
		assert.deepEqual(b.reverted, []);
	});

	test("the user typing pi's lines back is no undo: still listed; the editor's undo is", () => {
		const { b, edit } = revertedBook();
		assert.equal(b.edited(FILE, [changeOf(inverseOf(PI, edit))], docOf(PI)), false, "typed");
		assert.equal(b.reverted.length, 1);
		assert.equal(b.edited(FILE, [changeOf(edit)], docOf(applyEdit(PI, edit))), false);
		assert.equal(b.edited(FILE, [changeOf(inverseOf(PI, edit))], docOf(PI), true), true, "undone");
		assert.equal(b.reverted.length, 0);
	});

	test("a file pi no longer lists loses its marks; a forgotten pi takes its change set along", () => {
		const b = book();
		b.sync(FILE, docOf(PI));
		assert.equal(b.marks(FILE).length, 2);
		assert.equal(b.forget(7), true);
		b.sync(FILE, docOf(PI));
		assert.equal(b.marks(FILE).length, 0);
		assert.equal(b.forget(7), false);
	});

	test("`reverted` keeps the newest 50", () => {
		const mark = (i: number): Mark => ({
			pid: 1,
			run: 1,
			file: FILE,
			hunk: { id: `h${i}`, old_start: 1, old_lines: 0, new_start: 1, new_lines: 1, old_text: [], new_text: ["x"] },
			line: i,
			reverted: false,
		});
		let reverted = addRevert([], mark(0));
		for (let i = 1; i < 60; i++) reverted = addRevert(reverted, mark(i));
		assert.equal(reverted.length, MAX_REVERTED_REPORTS);
		assert.deepEqual([reverted[0]?.id, reverted.at(-1)?.id], ["h10", "h59"]);
	});
});

/**
 * The oracle: the document as lines tagged with where they came from (pi's hunk and line, or the user), edited by
 * the same random operations; a hunk is pi's exactly when all its tagged lines are there, unchanged and together.
 */
interface Tagged {
	text: string;
	tag: string | null;
}

type Op = { change: LineChange; apply(lines: Tagged[]): Tagged[] };

function randomOp(lines: Tagged[], int: (n: number) => number, n: number): Op {
	const at = int(lines.length);
	const user = (k: number) => Array.from({ length: k }, (_, i) => ({ text: `u${n}.${i}`, tag: null }));
	const kind = int(5);
	const line = lines[at] as Tagged;
	if (kind === 0) {
		const k = 1 + int(2);
		const text = user(k)
			.map((l) => `${l.text}\n`)
			.join("");
		return {
			change: { startLine: at, endLine: at, endCharacter: 0, text },
			apply: (ls) => [...ls.slice(0, at), ...user(k), ...ls.slice(at)],
		};
	}
	if (kind === 1 && at + 1 < lines.length) {
		const k = 1 + int(Math.min(2, lines.length - 1 - at));
		return {
			change: { startLine: at, endLine: at + k, endCharacter: 0, text: "" },
			apply: (ls) => [...ls.slice(0, at), ...ls.slice(at + k)],
		};
	}
	if (kind === 2) {
		return {
			change: { startLine: at, endLine: at, endCharacter: line.text.length, text: "!" },
			apply: (ls) => ls.map((l, i) => (i === at ? { text: `${l.text}!`, tag: null } : l)),
		};
	}
	if (kind === 3 && at + 1 < lines.length) {
		// Join with the next line: an empty side leaves the other line as it was.
		const next = lines[at + 1] as Tagged;
		const joined: Tagged =
			line.text === "" ? next : next.text === "" ? line : { text: line.text + next.text, tag: null };
		return {
			// From the end of the line, as VS Code reports a join.
			change: { startLine: at, startCharacter: line.text.length, endLine: at + 1, endCharacter: 0, text: "" },
			apply: (ls) => [...ls.slice(0, at), joined, ...ls.slice(at + 2)],
		};
	}
	// Enter at the end of a line: the line stays, an empty one follows.
	return {
		change: { startLine: at, endLine: at, endCharacter: line.text.length, text: "\n" },
		apply: (ls) => [...ls.slice(0, at + 1), { text: "", tag: null }, ...ls.slice(at + 1)],
	};
}

/** Where the oracle has hunk `id`'s `n` lines together and unchanged (0-based), or undefined. */
function oraclePlace(lines: Tagged[], id: string, n: number): number | undefined {
	const first = lines.findIndex((l) => l.tag === `${id}:0`);
	if (first < 0) return undefined;
	for (let k = 0; k < n; k++) if (lines[first + k]?.tag !== `${id}:${k}`) return undefined;
	return first;
}

type Shift = typeof shiftMarks;

/** One seeded scenario: pi edits a file, the user edits the document; every mark checked against the oracle. */
function runScenario(seed: number, shift: Shift): string | undefined {
	const int = seededInts(seed);
	const base = Array.from({ length: 6 + int(10) }, (_, i) => `b${i}`);
	const pi: string[] = [];
	for (const [i, l] of base.entries()) {
		const what = int(6);
		if (what === 0) continue; // deleted
		if (what === 1)
			pi.push(`p${i}`); // changed
		else if (what === 2)
			pi.push(l, `n${i}`); // a line added
		else pi.push(l);
	}
	const baseline = `${base.join("\n")}\n`;
	const found = entryOf(baseline, `${pi.join("\n")}\n`);
	let lines: Tagged[] = [...pi, ""].map((text) => ({ text, tag: null }));
	for (const h of found.entry.hunks) {
		for (let k = 0; k < h.new_lines; k++) (lines[h.new_start - 1 + k] as Tagged).tag = `${h.id}:${k}`;
	}
	const view = () => doc(lines.map((l) => l.text));
	let marks = noteIntact(placeMarks([], found, view()), view());
	for (let step = 0; step < 8; step++) {
		const op = randomOp(lines, int, step);
		lines = op.apply(lines);
		marks = noteIntact(shift(marks, [op.change]), view());
		for (const mark of marks) {
			const n = mark.hunk.new_text.length;
			if (n === 0) continue;
			const status = markStatus(mark, view());
			const place = oraclePlace(lines, mark.hunk.id, n);
			const where = `seed ${seed}, step ${step}, hunk at pi's line ${mark.hunk.new_start}`;
			if (place !== undefined && (status !== "pi" || mark.line !== place)) {
				return `${where}: pi's lines are at ${place}, the mark says ${status} at ${mark.line}`;
			}
			if (status === "pi" && !hasLinesAt(view(), mark.line ?? -1, mark.hunk.new_text)) {
				return `${where}: marked as pi's on other lines`;
			}
			if (status === "pi" && place === undefined && mark.hunk.new_text.every((t) => !t.startsWith("u"))) {
				// Text equal to pi's but made by the user cannot happen with these texts: a wrong place.
				return `${where}: marked as pi's at ${mark.line}, the oracle has them edited`;
			}
			if (status === "pi") {
				const [plan] = [planRevert([mark], view(), "\n", "all")];
				const reverted = applyEdit(lines.map((l) => l.text).join("\n"), plan.edits[0] as TextEdit).split("\n");
				const expected = [
					...lines.slice(0, place).map((l) => l.text),
					...mark.hunk.old_text,
					...lines.slice((place ?? 0) + n).map((l) => l.text),
				];
				if (JSON.stringify(reverted) !== JSON.stringify(expected)) return `${where}: the revert left other lines`;
			}
		}
	}
	return undefined;
}

describe("seeded: marks follow random user edits, checked against a tagged-lines oracle", () => {
	test("300 scenarios", () => {
		for (let seed = 1; seed <= 300; seed++) assert.equal(runScenario(seed, shiftMarks), undefined);
	});

	test("a planted defect (edits above no longer move marks) is caught", () => {
		const planted: Shift = (marks) => [...marks];
		const failures = Array.from({ length: 300 }, (_, i) => runScenario(i + 1, planted)).filter(Boolean);
		assert.ok(failures.length > 10, `only ${failures.length} failures`);
	});

	test("a planted defect (an edit on a mark's first line moves it) is caught", () => {
		const planted: Shift = (marks, changes) =>
			shiftMarks(marks, changes).map((m, i) => {
				const before = marks[i];
				const touched = changes.some((c) => before?.line !== undefined && c.startLine === before.line);
				return touched && m.line !== undefined ? { ...m, line: m.line + 1 } : m;
			});
		const failures = Array.from({ length: 300 }, (_, i) => runScenario(i + 1, planted)).filter(Boolean);
		assert.ok(failures.length > 10, `only ${failures.length} failures`);
	});
});
