/**
 * Flymake diagnostics in the Emacs client's state file (protocol v0.3), in a real daemon: dated with the
 * buffer version (`buffer-chars-modified-tick`) of the content the backend checked, never presented as
 * current after an edit, a backend that has not reported since the change left out, and after pi's edit the
 * report says a checker is attached and gets the new content's diagnostics. The checker is a Flymake backend
 * of the test's (test/emacs/driver.el) that reports what the test sets.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";

async function openWithDiagnostics(e: Emacs, file: string, text: string, items: string): Promise<void> {
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	await e.eval(`(pi-ide-test-set-diagnostics ${elispString(file)} '${items})`);
}

describe("emacs: Flymake diagnostics", { concurrency: 2 }, () => {
	it("are dated with the version they were computed for, errors first, and go stale on an edit", async (t) => {
		// No re-check on changes: after the edit the diagnostics stay those of the old content.
		const e = await startEmacs(t, { preEval: ["(setq flymake-no-changes-timeout nil)"] });
		const file = join(e.dir, "a.py");
		await openWithDiagnostics(
			e,
			file,
			"import os\nx = 'é' + 1\n",
			'((1 1 "warning" "unused import") (2 11 "error" "bad operand"))',
		);
		const s = await e.until((s) => (s?.active_buffer.diagnostics ? s : undefined), "diagnostics");
		const d = s.active_buffer.diagnostics;
		assert.equal(d?.version, s.active_buffer.version);
		assert.equal(d?.total, 2);
		assert.deepEqual(
			d?.items.map((i) => [i.severity, i.line, i.column, i.end_line, i.end_column, i.message, i.source]),
			[
				["error", 2, 11, 2, 12, "bad operand", "pi-ide-test-flymake-backend"],
				["warning", 1, 1, 1, 2, "unused import", "pi-ide-test-flymake-backend"],
			],
		);
		await e.act('(progn (goto-char (point-max)) (insert "y = 1\\n"))');
		const edited = await e.until(
			(s) => (s && s.active_buffer.version !== d?.version ? s : undefined),
			"the version moves with the edit",
		);
		assert.equal(edited.active_buffer.diagnostics?.version, d?.version, "still dated with the old content");
		assert.ok((edited.active_buffer.diagnostics?.version ?? 0) < (edited.active_buffer.version ?? 0));
		await e.act("(save-buffer)");
		const saved = await e.until((s) => (s?.active_buffer.modified === false ? s : undefined), "saved");
		assert.equal(saved.active_buffer.version, edited.active_buffer.version, "saving moves no version");
	});

	it("a buffer without a checker has null diagnostics (unknown, not clean)", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "b.txt");
		writeFileSync(file, "b\n");
		await e.act(`(find-file ${elispString(file)})`);
		const s = await e.until((s) => (s?.active_buffer.file === file ? s : undefined), "open");
		assert.equal(s.active_buffer.diagnostics ?? null, null);
		assert.equal(typeof s.active_buffer.version, "number");
	});

	it("a second backend that has not reported since the change is left out", async (t) => {
		const e = await startEmacs(t, { preEval: ["(setq flymake-no-changes-timeout nil)"] });
		const file = join(e.dir, "c.py");
		await openWithDiagnostics(e, file, "a\n", '((1 1 "error" "from the first"))');
		// A second backend that reports once, for the first content, then never again.
		await e.eval(`(with-current-buffer (find-buffer-visiting ${elispString(file)})
			(defvar-local pi-ide-test--once nil)
			(add-hook 'flymake-diagnostic-functions
				(lambda (report-fn &rest _)
					(unless pi-ide-test--once
						(setq pi-ide-test--once t)
						(funcall report-fn (list (flymake-make-diagnostic (current-buffer) 1 2 :warning "from the second"))))) nil t)
			(flymake-start))`);
		const first = await e.until(
			(s) => (s?.active_buffer.diagnostics?.total === 2 ? s.active_buffer.diagnostics.version : undefined),
			"both backends reported for the first content",
		);
		await e.act('(progn (goto-char (point-max)) (insert "b\\n") (flymake-start))');
		const s = await e.until(
			(s) =>
				s?.active_buffer.diagnostics &&
				s.active_buffer.diagnostics.version > first &&
				s.active_buffer.diagnostics.version === s.active_buffer.version
					? s
					: undefined,
			"the first backend's report for the new content",
		);
		assert.deepEqual(
			s.active_buffer.diagnostics?.items.map((i) => i.message),
			["from the first"],
		);
		assert.equal(s.active_buffer.diagnostics?.total, 1);
	});

	it("after pi's edit the report expects diagnostics and gets the new content's", async (t) => {
		const e = await startEmacs(t, { preEval: ["(setq flymake-no-changes-timeout 0.1)"] });
		const file = join(e.dir, "d.json");
		await openWithDiagnostics(e, file, "{}\n", '((1 1 "info" "ok"))');
		await e.until((s) => (s?.active_buffer.diagnostics ? true : undefined), "first diagnostics");
		writeFileSync(file, '{"a": 1,}\n');
		const msg = makePiMessage({
			pid: process.pid,
			cwd: e.dir,
			editor_pid: e.pid,
			seq: 1,
			changed: [{ file, seq: 1, tool: "edit" }],
			last_turn: [file],
		});
		writeFileSync(join(e.stateDir, `pi-${process.pid}.json`), JSON.stringify(msg), { mode: 0o600 });
		const r = await e.until((s) => {
			const r = s?.files?.find((x) => x.file === file);
			return r?.diagnostics && r.version !== null && r.diagnostics.version >= r.version ? r : undefined;
		}, "the report with diagnostics of the reloaded content");
		assert.equal(r.status, "reloaded");
		assert.equal(r.diagnostics_expected, true);
		assert.deepEqual(
			r.diagnostics?.items.map((i) => i.message),
			["ok"],
		);
	});
});
