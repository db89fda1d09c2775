/**
 * The Emacs client's writer (editors/emacs/pi-ide-writer.el) against the same table of state dir cases as
 * src/protocol/state-dir.ts and the Neovim client (test/fixtures/state-dir-cases.ts), in real Emacs: the
 * Emacs Lisp, Lua and TypeScript rules cannot drift apart unnoticed. Every case is laid out first, one
 * `emacs --batch` runs all the operations, then each case compares what is left on disk.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import {
	CONTENT,
	expectedFor,
	observeCase,
	PID,
	type PreparedCase,
	type Problem,
	prepareCase,
	removeCase,
	STATE_DIR_CASES,
} from "../fixtures/state-dir-cases.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, elispString } from "../helpers/emacs.ts";

const run = promisify(execFile);

/** One operation of the table, the way the Emacs client does it; the problem's name or "". */
const RUN_CASE = `
(defun pi-ide-test-run-case (op dir pid content uid)
  (let ((problem (pcase op
                   ("check" (pi-ide-writer-check dir uid))
                   ("create" (pi-ide-writer-ensure-dir dir uid))
                   ("write" (or (pi-ide-writer-ensure-dir dir uid) (pi-ide-writer-write dir pid content uid)))
                   ("remove" (pi-ide-writer-remove dir pid uid)))))
    (cond ((null problem) "")
          ((not (and (stringp (cdr problem)) (> (length (cdr problem)) 0))) "(no message)")
          (t (symbol-name (car problem))))))`;

describe("emacs: pi-ide-writer.el against the state dir table", () => {
	const prepared: PreparedCase[] = [];
	let kinds: string[] = [];
	before(async () => {
		for (const c of STATE_DIR_CASES) prepared.push(prepareCase(c));
		const calls = STATE_DIR_CASES.map(
			(c, i) =>
				`(pi-ide-test-run-case ${elispString(c.op)} ${elispString(prepared[i]?.dir ?? "")} ${PID} ${elispString(CONTENT)} ${prepared[i]?.uid})`,
		).join(" ");
		const script = join(prepared[0]?.root ?? "", "run-cases.el");
		writeFileSync(script, `(require 'pi-ide-writer)\n${RUN_CASE}\n(princ (json-serialize (vector ${calls})))\n`);
		const { stdout } = await run(EMACS_BIN, ["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", script], {
			encoding: "utf8",
			timeout: 60_000,
		});
		kinds = JSON.parse(stdout) as string[];
	});
	after(() => {
		for (const p of prepared) removeCase(p);
	});

	STATE_DIR_CASES.forEach((c, i) => {
		it(`${c.op}: ${c.name}`, () => {
			const kind = kinds[i] ?? "(not run)";
			const problem = kind === "" ? null : (kind as Problem);
			const p = prepared[i];
			assert.ok(p);
			assert.deepEqual(observeCase(c, p, problem), expectedFor(c));
		});
	});
});
