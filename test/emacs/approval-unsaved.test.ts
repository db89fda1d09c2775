/**
 * Issue 26 item 6 in Emacs (batch): pi's proposal against a buffer with unsaved changes (pi-ide-approval-rules.el
 * `pi-ide-state-unsaved-proposal`, the user's changes found by the `diff` program as the client finds them), seeded,
 * against the merge rule's oracle (test/fixtures/merge-oracle.ts `merge3`, on the cases of test/fixtures/merge-ranges.ts):
 * the buffer with the hunks that touch nothing placed is the three-way merge, each touching hunk's place holds the
 * user's text of its conflict, each placed hunk stands on the lines pi read. Then a table of the notice's words
 * (`pi-ide-state-touch-phrase`, the words the other clients use) and of the proposal view's diff.
 * `PI_IDE_SEEDS=<n>` runs more cases (default 300).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { againstCase } from "../fixtures/approval-against-oracle.ts";
import { merge3 } from "../fixtures/merge-oracle.ts";
import { mergeCase } from "../fixtures/merge-ranges.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

const run = promisify(execFile);
const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 300);

/** Run `form` in `emacs --batch` with the cases file as its argument; stdout. */
async function batch(form: string, input: unknown): Promise<string> {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-approval-unsaved-"));
	try {
		const file = join(dir, "input.json");
		writeFileSync(file, JSON.stringify(input));
		const { stdout } = await run(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "--eval", form, file], {
			cwd: REPO,
			encoding: "utf8",
			maxBuffer: 64 * 1024 * 1024,
			timeout: 300_000,
		});
		return stdout;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

const READ_INPUT = `(prog1 (with-temp-buffer (insert-file-contents (car command-line-args-left))
                 (json-parse-buffer :object-type 'alist :array-type 'list))
         (setq command-line-args-left nil))`;

/** Each case's view by Emacs: one JSON line per case (`null`: no view). */
const VIEW_ALL = `(progn
  (require 'pi-ide-approval-rules)
  (dolist (c ${READ_INPUT})
    (let* ((disk (alist-get 'base c)) (ours (alist-get 'ours c))
           (view (pi-ide-state-unsaved-proposal (alist-get 'hunks c) disk ours (pi-ide-merge--user-changes disk ours))))
      (princ (if view
                 (json-serialize (list (cons 'lines (vconcat (plist-get view :lines)))
                                       (cons 'places (vconcat (mapcar (lambda (p) (vector (nth 0 p) (nth 1 p) (if (nth 2 p) t :false)))
                                                                      (plist-get view :places))))))
               "null"))
      (terpri))))`;

describe("emacs: the proposal against an unsaved buffer, seeded, against the merge oracle", () => {
	it(`${SEEDS} cases`, async () => {
		const cases = Array.from({ length: SEEDS }, (_, i) => mergeCase(i + 1));
		const input = cases.map(({ base, ours, theirs }) => ({ base, ours, hunks: theirs }));
		const results = (await batch(VIEW_ALL, input))
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as { lines: string[]; places: [number, number, boolean][] } | null);
		assert.equal(results.length, cases.length);
		const failures: string[] = [];
		for (const [i, c] of cases.entries()) {
			const view = results[i];
			const oracle = merge3(c.base, c.ours, c.pis);
			const got = view && {
				lines: view.lines,
				touching: view.places.filter((p) => p[2]).map((p) => c.ours.slice(p[0], p[1])),
				placed: view.places.every(
					(p, k) => p[2] || JSON.stringify(c.ours.slice(p[0], p[1])) === JSON.stringify(c.theirs[k]?.old_text),
				),
			};
			const want = { lines: oracle.merged, touching: oracle.conflicts.map((k) => k.text), placed: true };
			if (JSON.stringify(got) !== JSON.stringify(want)) {
				failures.push(`seed ${i + 1}: got ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`);
			}
		}
		assert.deepEqual(failures.slice(0, 3), []);
	});

	it("a disk that no longer holds pi's lines: no view", async () => {
		const out = await batch(VIEW_ALL, [
			{ base: ["a", "x", "c"], ours: ["a", "b", "c", "d"], hunks: [hunk(2, ["b"], ["B"])] },
		]);
		assert.equal(out.trim(), "null");
	});
});

function hunk(old_start: number, old_text: string[], new_text: string[]) {
	return {
		old_start,
		old_lines: old_text.length,
		new_start: old_start,
		new_lines: new_text.length,
		old_text,
		new_text,
	};
}

/** `pi-ide-state-touch-phrase` on each of a list of places lists: one JSON line each (null: no words). */
async function touchPhrases(places: [number, number, boolean][][]): Promise<(string | null)[]> {
	const form = `(progn
	  (require 'pi-ide-approval-rules)
	  (dolist (places ${READ_INPUT})
	    (princ (json-serialize (or (pi-ide-state-touch-phrase (mapcar (lambda (p) (list (nth 0 p) (nth 1 p) (eq (nth 2 p) t))) places)) :null)))
	    (terpri)))`;
	return (await batch(form, places))
		.trim()
		.split("\n")
		.map((l) => JSON.parse(l) as string | null);
}

const TAIL = ": if accepted, the file gets pi's text and your buffer keeps yours there";

describe("emacs: the notice's words and the proposal view", () => {
	const PHRASES: { name: string; places: [number, number, boolean][]; want: string | null }[] = [
		{ name: "none touches", places: [[1, 2, false]], want: null },
		{ name: "the only hunk, one line", places: [[7, 8, true]], want: `1 of 1 hunk touches your unsaved line 8${TAIL}` },
		{
			name: "1 of 2, two lines",
			places: [
				[1, 2, false],
				[6, 8, true],
			],
			want: `1 of 2 hunks touches your unsaved lines 7-8${TAIL}`,
		},
		{
			name: "the user deleted the lines: where they were",
			places: [
				[3, 3, true],
				[9, 10, true],
			],
			want: `2 of 2 hunks touch your unsaved lines 4, 10${TAIL}`,
		},
		{
			name: "six places: five named",
			places: [0, 2, 4, 6, 8, 10].map((n) => [n, n + 1, true] as [number, number, boolean]),
			want: `6 of 6 hunks touch your unsaved lines 1, 3, 5, 7, 9, …${TAIL}`,
		},
		{
			name: "two hunks on one change of the user's: its lines named once",
			places: [
				[6, 8, true],
				[6, 8, true],
			],
			want: `2 of 2 hunks touch your unsaved lines 7-8${TAIL}`,
		},
		{
			name: "where the user deleted, then the next line: joined",
			places: [
				[4, 4, true],
				[5, 6, true],
			],
			want: `2 of 2 hunks touch your unsaved lines 5-6${TAIL}`,
		},
	];
	it("pi-ide-state-touch-phrase: a table", async () => {
		assert.deepEqual(
			await touchPhrases(PHRASES.map((c) => c.places)),
			PHRASES.map((c) => c.want),
		);
	});

	it("pi-ide-state-touch-phrase names the places as the rule's oracle does (seeded, test/fixtures/approval-against-oracle.ts)", async () => {
		const seed = Number(process.env["PI_IDE_SEED"] ?? 20261205);
		const cases = Array.from({ length: 300 }, (_, i) => againstCase(seed + i));
		const out = await touchPhrases(
			cases.map((c) => c.places.map((p): [number, number, boolean] => [p.row, p.row + p.rows, p.touches])),
		);
		for (const [i, c] of cases.entries()) {
			assert.equal(out[i], c.phrase === "" ? null : `${c.phrase}${TAIL}`, `seed ${c.seed} (PI_IDE_SEED=${c.seed})`);
		}
	});

	it("pi-ide-state-unsaved-diff: the buffer beside itself with the hunks that touch nothing placed", async () => {
		// Disk 1..6; the user typed a line at the top and changed line 5; pi changes 2 and 5.
		const form = `(progn
		  (require 'pi-ide-approval-rules)
		  (let* ((c ${READ_INPUT})
		         (disk (alist-get 'disk c)) (ours (alist-get 'ours c)) (hunks (alist-get 'hunks c))
		         (view (pi-ide-state-unsaved-proposal hunks disk ours (pi-ide-merge--user-changes disk ours))))
		    (princ (json-serialize (vconcat (pi-ide-state-unsaved-diff '(:file "/p/a.txt") hunks view ours))))))`;
		const out = await batch(form, {
			disk: ["1", "2", "3", "4", "5", "6"],
			ours: ["top", "1", "2", "3", "4", "mine", "6"],
			hunks: [hunk(2, ["2"], ["TWO", "TWO b"]), hunk(5, ["5"], ["FIVE"])],
		});
		assert.deepEqual(JSON.parse(out), [
			`(pi-ide) 1 of 2 hunks touches your unsaved line 6${TAIL}`,
			"--- /p/a.txt (your unsaved buffer)",
			"+++ /p/a.txt (pi's proposal in your unsaved buffer)",
			"@@ -3,1 +3,2 @@",
			"-2",
			"+TWO",
			"+TWO b",
		]);
	});
});
