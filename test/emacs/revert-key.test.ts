/**
 * The revert key `(pi_pid, run, id)` (test/fixtures/revert-key.ts) in the Emacs client's `reverted' list
 * (pi-ide-state-remember-revert: a hunk reverted again is one entry), in `emacs --batch`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { expectedAfterBoth, REVERT_KEY_CASES, type Revert } from "../fixtures/revert-key.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

// Each revert as the client makes one: ENTRY (the file's entry: pid, run, file), HUNK (its id and pi's lines), LINE.
const SCRIPT = `
(require 'pi-ide-review-rules)
(let* ((dir (getenv "REVERT_DIR"))
       (pairs (with-temp-buffer
                (insert-file-contents (expand-file-name "in.json" dir))
                (json-parse-buffer :object-type 'alist :array-type 'list)))
       (add (lambda (list r)
              (pi-ide-state-remember-revert
               list
               (list :pid (alist-get 'pi_pid r) :run (alist-get 'run r) :file (alist-get 'file r))
               (list (cons 'id (alist-get 'id r)) (cons 'new_text (make-list (alist-get 'lines r) "y")))
               (alist-get 'line r)))))
  (with-temp-file (expand-file-name "out.json" dir)
    (insert (json-serialize
             (vconcat (mapcar (lambda (pair) (vconcat (funcall add (funcall add nil (car pair)) (cadr pair))))
                              pairs))))))
`;

it("emacs: pi-ide-state-remember-revert keeps one entry per (pi_pid, run, id), two when one field differs", (t) => {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-emacs-revert-key-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	writeFileSync(join(dir, "in.json"), JSON.stringify(REVERT_KEY_CASES.map((c) => [c.first, c.second])));
	const script = join(dir, "revert-key.el");
	writeFileSync(script, SCRIPT);
	execFileSync(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", script], {
		cwd: REPO,
		env: { ...process.env, REVERT_DIR: dir },
		encoding: "utf8",
		timeout: 60_000,
	});
	const lists = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as Revert[][];
	const wrong = REVERT_KEY_CASES.flatMap((c, i) => {
		const list = lists[i] ?? [];
		const { count, newest } = expectedAfterBoth(c);
		return list.length === count && isDeepStrictEqual(list.at(-1), newest)
			? []
			: [`${c.name}: ${JSON.stringify(list)}`];
	});
	assert.deepEqual(wrong, []);
});
