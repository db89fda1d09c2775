/**
 * The reader rules of PROTOCOL.md "Limits" (test/fixtures/reader-limits.ts: nesting, caps, line numbers) in the
 * Emacs client, in `emacs --batch`: each row written as a file of pi's and read through its one reader
 * (pi-ide-inbox--read: the checks of a private file, the nesting scan, then json-parse-string) and its validators
 * of a message, a change set and a request. (Emacs took over two minutes on a change set of 60,000 hunks.)
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { MAX_PI_FILE_DEPTH } from "../../src/protocol/limits.ts";
import { PI_PID, READER_CASES, randomNestedTexts, verdictHolds } from "../fixtures/reader-limits.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

const SCRIPT = `
(require 'pi-ide-inbox)
(require 'json)
(let* ((dir (getenv "READER_DIR"))
       (kinds (split-string (getenv "READER_KINDS") ","))
       (i 0) (out nil))
  (setq pi-ide-inbox--dir dir)
  (dolist (kind kinds)
    (let* ((max (pcase kind ("message" pi-ide-state-max-message-bytes)
                  ("review" pi-ide-state-max-review-bytes) (_ pi-ide-state-max-approval-bytes)))
           (read (pi-ide-inbox--read (format "case-%d.json" i) max))
           (msg (car read)) (why (cdr read)) (kept 0))
      (unless why
        (pcase kind
          ("message" (setq why (pi-ide-state-validate-message msg ${PI_PID})))
          ("review"
           (let ((v (pi-ide-state-validate-review msg ${PI_PID})))
             (setq why (cdr v))
             (dolist (run (car v))
               (dolist (f (plist-get run :files))
                 (setq kept (+ kept (length (plist-get f :hunks))))))))
          (_
           (let ((v (pi-ide-state-validate-approval msg ${PI_PID} (float-time))))
             (setq why (cdr v))
             (setq kept (length (plist-get (car v) :hunks)))))))
      (push (vector (or why "") kept) out)
      (setq i (1+ i))))
  (with-temp-file (expand-file-name "out.json" dir)
    (insert (json-encode (vconcat (nreverse out))))))
`;

it("emacs: pi's files too deep refused before decoding, lists over a cap by their count, bad lines dropped", (t) => {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-emacs-readers-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	for (const [i, c] of READER_CASES.entries()) writeFileSync(join(dir, `case-${i}.json`), c.text, { mode: 0o600 });
	const script = join(dir, "read.el");
	writeFileSync(script, SCRIPT);
	execFileSync(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", script], {
		cwd: REPO,
		env: { ...process.env, READER_DIR: dir, READER_KINDS: READER_CASES.map((c) => c.kind).join(",") },
		encoding: "utf8",
		timeout: 120_000,
	});
	const out = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as [string, number][];
	// Every row's verdict, so one run names every row that fails.
	const wrong = READER_CASES.flatMap((c, i) => {
		const [why, kept] = out[i] ?? ["missing", -1];
		return verdictHolds(c, why, kept) ? [] : [`${c.name}: ${why || `kept ${kept}`}`];
	});
	assert.deepEqual(wrong, []);
});

it("emacs: pi-ide-state-too-deep refuses exactly the seeded random texts nested deeper than the limit (PI_IDE_SEED)", (t) => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 2026);
	const texts = randomNestedTexts(seed, 300);
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-emacs-nesting-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	writeFileSync(join(dir, "in.json"), JSON.stringify(texts.map((x) => x.text)));
	const script = join(dir, "scan.el");
	writeFileSync(
		script,
		`(require 'pi-ide-protocol)
(let* ((dir (getenv "READER_DIR"))
       (texts (with-temp-buffer
                (insert-file-contents (expand-file-name "in.json" dir))
                (json-parse-buffer :array-type 'list))))
  (with-temp-file (expand-file-name "out.json" dir)
    (insert (json-serialize (vconcat (mapcar (lambda (text) (or (pi-ide-state-too-deep text) "")) texts))))))
`,
	);
	execFileSync(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", script], {
		cwd: REPO,
		env: { ...process.env, READER_DIR: dir },
		encoding: "utf8",
		timeout: 120_000,
	});
	const whys = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as string[];
	const wrong = texts.flatMap(({ text, depth }, i) => {
		const why = whys[i] ?? "missing";
		const right = depth > MAX_PI_FILE_DEPTH ? /nested deeper than/.test(why) : why === "";
		return right ? [] : [`seed ${seed} #${i} (depth ${depth}): ${why || "taken"}: ${text.slice(0, 200)}`];
	});
	assert.deepEqual(wrong, []);
});
