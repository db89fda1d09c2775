/**
 * Issue 26, seeded, in a real Emacs (batch): Emacs's merge of pi's hunks into a buffer's lines (pi-ide-merge.el: the
 * user's edits found by the `diff` program as the client finds them, `pi-ide-merge-plan`, its edits made) against
 * the rule's oracle (test/fixtures/merge-oracle.ts `merge3`), on the cases the TypeScript merge is checked with
 * (test/fixtures/merge-ranges.ts): the merged lines and every conflict (line, lines, the user's text).
 * `PI_IDE_SEEDS=<n>` runs more cases (default 300).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { merge3 } from "../fixtures/merge-oracle.ts";
import { mergeCase } from "../fixtures/merge-ranges.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

const run = promisify(execFile);
const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 300);

/** Each case's merged lines and conflicts, by Emacs: one JSON line per case. */
const MERGE_ALL = `(progn
  (require 'pi-ide-merge)
  (let ((cases (with-temp-buffer (insert-file-contents (car command-line-args-left))
                 (json-parse-buffer :object-type 'alist :array-type 'list))))
    (setq command-line-args-left nil)
    (dolist (c cases)
      (let* ((base (alist-get 'base c)) (ours (alist-get 'ours c))
             (theirs (mapcar (lambda (h) (list :old-start (alist-get 'old_start h) :old-lines (alist-get 'old_lines h)
                                               :new-lines (alist-get 'new_lines h) :new-text (alist-get 'new_text h)))
                             (alist-get 'theirs c)))
             (plan (pi-ide-merge-plan ours (pi-ide-merge--user-changes base ours) theirs))
             (merged (with-temp-buffer
                       (insert (mapconcat (lambda (l) (concat l "\\n")) ours ""))
                       (pi-ide-merge--apply (plist-get plan :edits))
                       (pi-ide-merge-split (buffer-string)))))
        (princ (json-serialize
                (list (cons 'merged (vconcat merged))
                      (cons 'conflicts (vconcat (mapcar (lambda (k) (list (assq 'line k) (assq 'lines k)
                                                                          (cons 'text (vconcat (alist-get 'text k)))))
                                                        (plist-get plan :conflicts)))))))
        (terpri)))))`;

describe("emacs: the merge against the rule's oracle, seeded", () => {
	it(`${SEEDS} cases`, async () => {
		const dir = mkdtempSync(join(tmpdir(), "pi-ide-merge-random-"));
		try {
			const cases = Array.from({ length: SEEDS }, (_, i) => mergeCase(i + 1));
			const input = join(dir, "cases.json");
			writeFileSync(input, JSON.stringify(cases.map(({ base, ours, theirs }) => ({ base, ours, theirs }))));
			const { stdout } = await run(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "--eval", MERGE_ALL, input], {
				cwd: REPO,
				encoding: "utf8",
				maxBuffer: 64 * 1024 * 1024,
				timeout: 300_000,
			});
			const results = stdout
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l) as unknown);
			assert.equal(results.length, cases.length);
			const failures: string[] = [];
			for (const [i, c] of cases.entries()) {
				const oracle = merge3(c.base, c.ours, c.pis);
				const want = { merged: oracle.merged, conflicts: oracle.conflicts };
				if (JSON.stringify(results[i]) !== JSON.stringify(want)) {
					failures.push(`seed ${i + 1}: got ${JSON.stringify(results[i])}\n  want ${JSON.stringify(want)}`);
				}
			}
			assert.deepEqual(failures.slice(0, 3), []);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
