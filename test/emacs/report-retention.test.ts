/**
 * Report retention (PROTOCOL.md `files`, v0.5): the shared table and seeded random cases of
 * test/fixtures/report-retention-cases.ts against the Emacs client's `pi-ide-state-retain-reports`, in
 * `emacs --batch`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { RETENTION_CASES, RETENTION_SEED, randomRetentionCases } from "../fixtures/report-retention-cases.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

// Each case: its reports (each with its index `i`) and its listings, keyed as the client keys a pi
// (`pi-ide-state-key-of-record` of the listing's pi_pid and pi_ns); out: the indices kept.
const SCRIPT = `
(require 'pi-ide-state)
(let* ((dir (getenv "RETENTION_DIR"))
       (cases (with-temp-buffer
                (insert-file-contents (expand-file-name "in.json" dir))
                (json-parse-buffer :object-type 'alist :array-type 'list))))
  (with-temp-file (expand-file-name "out.json" dir)
    (insert (json-serialize
             (vconcat
              (mapcar (lambda (c)
                        (let ((listed (mapcar (lambda (l) (cons (pi-ide-state-key-of-record l) (alist-get 'changed l)))
                                              (alist-get 'listed c))))
                          (vconcat (mapcar (lambda (r) (alist-get 'i r))
                                           (pi-ide-state-retain-reports (alist-get 'reports c) listed)))))
                      cases))))))
`;

it(`emacs: pi-ide-state-retain-reports keeps each pi's newest 20 and what its message lists (seed ${RETENTION_SEED})`, (t) => {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-emacs-retention-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	const cases = [...RETENTION_CASES, ...randomRetentionCases(RETENTION_SEED, 100)];
	writeFileSync(
		join(dir, "in.json"),
		JSON.stringify(cases.map((c) => ({ reports: c.reports.map((r, i) => ({ ...r, i })), listed: c.listed }))),
	);
	const script = join(dir, "retention.el");
	writeFileSync(script, SCRIPT);
	execFileSync(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", script], {
		cwd: REPO,
		env: { ...process.env, RETENTION_DIR: dir },
		encoding: "utf8",
		timeout: 60_000,
	});
	const kept = JSON.parse(readFileSync(join(dir, "out.json"), "utf8")) as number[][];
	assert.deepEqual(
		cases.map((c, i) => ({ name: c.name, kept: kept[i] })),
		cases.map((c) => ({ name: c.name, kept: c.kept })),
	);
});
