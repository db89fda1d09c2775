/**
 * The Emacs client in `emacs --batch`: the ERT tables of its pure builders (test/emacs/pi-ide-state-tests.el), a
 * seeded random test of regions against an oracle (test/emacs/pi-ide-region-tests.el; shown to catch a planted
 * defect in the end-of-line rules), a seeded random test of the approval marks read back as drawn against the hunks
 * applied on their own (test/emacs/pi-ide-approval-tests.el; shown to catch insertions placed one line late), a
 * seeded random test of pi's hunks reverted in a buffer against the baseline with the other hunks applied, then
 * undone one at a time and redone against the stack rule, also where lines repeat (test/emacs/pi-ide-review-tests.el;
 * shown to catch a deletion put back one line late, a revert's place followed by a marker that an undo's text
 * moves, and an undo told by the text (main's lines-around rule); a table of reverts undone and redone at the
 * buffer's edges and among equal lines, and one beside the user's own edits, pi's lines typed back, several undone
 * by one command and an undo of an undo),
 * every file byte-compiled with warnings as errors and checkdoc-clean (test/emacs/lint.el), and the package
 * loading in batch without writing anything (no UI: nobody looks).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { EMACS_BIN, EMACS_CLIENT_DIR, REPO } from "../helpers/emacs.ts";

const run = promisify(execFile);

async function emacsBatch(args: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
	try {
		const { stdout, stderr } = await run(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, ...args], {
			cwd: REPO,
			env: { ...process.env, ...env },
			encoding: "utf8",
			timeout: 120_000,
		});
		return { code: 0, output: stdout + stderr };
	} catch (error) {
		const e = error as { code?: number; stdout?: string; stderr?: string };
		return { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
	}
}

const SOURCES = readdirSync(EMACS_CLIENT_DIR)
	.filter((f) => f.endsWith(".el") && !f.endsWith("-pkg.el"))
	.map((f) => join(EMACS_CLIENT_DIR, f));

describe("emacs --batch", () => {
	it("ERT: the pure builders' tables pass", async () => {
		const r = await emacsBatch(["-l", "test/emacs/pi-ide-state-tests.el", "-f", "ert-run-tests-batch-and-exit"]);
		assert.equal(r.code, 0, r.output);
		assert.match(r.output, /Ran \d+ tests, (\d+) results as expected, 0 unexpected/);
	});

	it("ERT: 2,000 seeded random regions agree with a position-based oracle", async () => {
		const r = await emacsBatch(["-l", "test/emacs/pi-ide-region-tests.el", "-f", "ert-run-tests-batch-and-exit"]);
		assert.equal(r.code, 0, r.output);
		assert.match(r.output, /Ran 1 tests, 1 results as expected, 0 unexpected/);
	});

	it("ERT: 2,000 seeded random proposals, marked in a buffer and read back as drawn, are the proposed file", async () => {
		const r = await emacsBatch(["-l", "test/emacs/pi-ide-approval-tests.el", "-f", "ert-run-tests-batch-and-exit"]);
		assert.equal(r.code, 0, r.output);
		assert.match(r.output, /Ran 1 tests, 1 results as expected, 0 unexpected/);
	});

	it("ERT: 1,500 seeded random change sets, hunks reverted in a buffer, are the baseline with the rest applied; undo, redo; the tables", async () => {
		const r = await emacsBatch([
			"-L",
			"test/emacs",
			"-l",
			"test/emacs/pi-ide-review-tests.el",
			"--eval",
			'(ert-run-tests-batch-and-exit "pi-ide-review-test")',
		]);
		assert.equal(r.code, 0, r.output);
		assert.match(r.output, /Ran 3 tests, 3 results as expected, 0 unexpected/);
	});

	it("every file byte-compiles with warnings as errors and is checkdoc-clean", async () => {
		const r = await emacsBatch(["-l", "test/emacs/lint.el", ...SOURCES]);
		assert.equal(r.code, 0, r.output);
		assert.doesNotMatch(r.output, /LINT:/);
		assert.deepEqual(
			readdirSync(EMACS_CLIENT_DIR).filter((f) => f.endsWith(".elc")),
			[],
			"no .elc left behind",
		);
	});

	it("installs with package-install-file; pi-ide-mode and pi-ide-status are autoloaded", async () => {
		const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-pkg-")));
		try {
			const elpa = join(root, "elpa");
			const install = await emacsBatch(
				[
					"--eval",
					`(progn (require 'package) (setq package-user-dir "${elpa}") (package-initialize) (package-install-file "${EMACS_CLIENT_DIR}/") (princ (format "installed=%S\n" (package-installed-p 'pi-ide))))`,
				],
				{ HOME: root },
			);
			assert.equal(install.code, 0, install.output);
			assert.match(install.output, /installed=t/);
			const after = await emacsBatch(
				[
					"--eval",
					`(progn (require 'package) (setq package-user-dir "${elpa}") (package-initialize) (princ (format "autoload=%S command=%S loaded=%S\n" (autoloadp (symbol-function 'pi-ide-mode)) (commandp 'pi-ide-status) (featurep 'pi-ide))))`,
				],
				{ HOME: root },
			);
			assert.match(after.output, /autoload=t command=t loaded=nil/, after.output);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});

	it("turning the mode off removes every hook, advice, timer and variable it added", async (t) => {
		const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-batch-")));
		t.after(() => rmSync(root, { recursive: true, force: true }));
		const r = await emacsBatch(
			[
				"--eval",
				`(progn
			   (require 'pi-ide) (require 'flymake)
			   (let ((before (mapcar (lambda (h) (cons (car h) (and (boundp (car h)) (copy-sequence (default-value (car h)))))) pi-ide--hooks))
			         (env-before (getenv "PI_IDE_EDITOR_PID")))
			     (pi-ide-mode 1)
			     (princ (format "on: hooks=%S advice=%S flycheck=%S env=%S\n"
			                    (cl-every (lambda (h) (memq (cdr h) (default-value (car h)))) pi-ide--hooks)
			                    (and (advice-member-p #'pi-ide-diagnostics--handle-report 'flymake--handle-report) t)
			                    (and (memq #'pi-ide-diagnostics--flycheck-before (default-value 'flycheck-before-syntax-check-hook))
			                         (memq #'pi-ide-diagnostics--flycheck-after (default-value 'flycheck-after-syntax-check-hook)) t)
			                    (equal (getenv "PI_IDE_EDITOR_PID") (number-to-string (emacs-pid)))))
			     (pi-ide-mode -1)
			     (princ (format "off: same-hooks=%S advice=%S flycheck=%S timer=%S watch=%S env=%S\n"
			                    (cl-every (lambda (h) (equal (default-value (car h)) (cdr (assq (car h) before)))) pi-ide--hooks)
			                    (or (advice-member-p #'pi-ide-diagnostics--handle-report 'flymake--handle-report)
			                        (advice-member-p #'pi-ide-diagnostics--run-backend 'flymake--run-backend))
			                    (or (default-value 'flycheck-before-syntax-check-hook) (default-value 'flycheck-after-syntax-check-hook))
			                    pi-ide--timer (pi-ide-inbox-method)
			                    (equal (getenv "PI_IDE_EDITOR_PID") env-before)))))`,
			],
			{ XDG_RUNTIME_DIR: root },
		);
		assert.equal(r.code, 0, r.output);
		assert.match(r.output, /on: hooks=t advice=t flycheck=t env=t/);
		assert.match(r.output, /off: same-hooks=t advice=nil flycheck=nil timer=nil watch=nil env=t/);
	});

	it("in --batch the mode turns on but writes nothing (no UI frame)", async () => {
		const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-batch-")));
		try {
			mkdirSync(join(root, "run"), { mode: 0o700 });
			const r = await emacsBatch(
				[
					"--eval",
					'(progn (require \'pi-ide) (pi-ide-mode 1) (pi-ide-write-now t) (princ (format "ui=%S mode=%S\\n" (pi-ide--ui-p) pi-ide-mode)))',
				],
				{ XDG_RUNTIME_DIR: join(root, "run") },
			);
			assert.equal(r.code, 0, r.output);
			assert.match(r.output, /ui=nil mode=t/);
			const dir = join(root, "run", "pi-ide");
			assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], []);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
});
