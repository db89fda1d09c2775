/**
 * Flycheck diagnostics in the Emacs client's state file (protocol v0.3), in a real daemon started as a Debian
 * user's Emacs starts (Debian 12's elpa-flycheck activated by Emacs's own package system), with a real
 * Flycheck command checker (test/fixtures/marker-checker.ts, run by Node on a copy of the buffer): dated with the
 * buffer version (`buffer-chars-modified-tick`) when the check started, so an answer for content edited during
 * the check reads as old; an empty answer is none (not unknown); after pi's edit the report says a checker is
 * attached; Flymake and Flycheck in one buffer merge by version. Without Flycheck nothing changes
 * (test/emacs/diagnostics.test.ts runs Flymake under `emacs -Q`, where Flycheck is not even on the load path).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import type { EditorState } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";

const CHECKER = fileURLToPath(new URL("../fixtures/marker-checker.ts", import.meta.url));
const SOURCE = "pi-ide-test-checker";

/** A daemon with Debian's Flycheck and the test checker (checks on mode start and when asked; `automatic`: also as by default). */
async function startWithFlycheck(t: TestContext, automatic = false): Promise<Emacs> {
	return startEmacs(t, {
		sitePackages: true,
		preEval: [
			`(pi-ide-test-flycheck-setup ${elispString(process.execPath)} ${elispString(CHECKER)} ${automatic ? "t" : "nil"})`,
		],
	});
}

async function open(e: Emacs, file: string, text: string): Promise<number> {
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	return e.until(
		(s) => (s?.active_buffer.file === file && s.active_buffer.version != null ? s.active_buffer.version : undefined),
		"the file open",
	);
}

const rows = (s: EditorState) =>
	s.active_buffer.diagnostics?.items.map((i) => [
		i.severity,
		i.line,
		i.column,
		i.end_line,
		i.end_column,
		i.message,
		i.source,
		i.code,
	]);

describe("emacs: Flycheck diagnostics", { concurrency: 2 }, () => {
	it("are a real checker's errors, dated with the version the check started at, in UTF-8 byte columns", async (t) => {
		const e = await startWithFlycheck(t);
		assert.equal(await e.eval("(featurep 'flycheck)"), "t", "Debian's elpa-flycheck is loaded");
		const file = join(e.dir, "a.txt");
		const version = await open(e, file, 'x = "é" !error bad é\n  !warning careful\nfine\n!elsewhere in a header\n');
		await e.act("(flycheck-mode 1)");
		const s = await e.until((s) => (s?.active_buffer.diagnostics ? s : undefined), "Flycheck's diagnostics");
		assert.equal(s.active_buffer.diagnostics?.version, version);
		assert.equal(s.active_buffer.version, version);
		// The error in another file (a header) is not this buffer's.
		assert.equal(s.active_buffer.diagnostics?.total, 2);
		assert.deepEqual(rows(s), [
			// "x = "é" " is 8 characters, 9 bytes: the `!` is at byte column 10.
			["error", 1, 10, 1, 11, "bad é", SOURCE, null],
			["warning", 2, 3, 2, 4, "careful", SOURCE, null],
		]);
		assert.match(await e.eval("(pi-ide-status)"), /diagnostics: 2 from Flycheck, for the current content/);
	});

	it("an edit during the check dates its answer old; the next check is current", async (t) => {
		const e = await startWithFlycheck(t);
		const file = join(e.dir, "b.txt");
		const before = await open(e, file, "!error first\n");
		// The checker answers 1.5 s late: the edit below lands while it runs on the content of `before`.
		await e.eval('(setenv "PI_IDE_TEST_CHECK_DELAY_MS" "1500")');
		await e.act("(flycheck-mode 1)");
		await e.act('(progn (goto-char (point-max)) (insert "!warning second\\n"))');
		const old = await e.until((s) => (s?.active_buffer.diagnostics ? s : undefined), "the slow check's answer", 15_000);
		assert.equal(old.active_buffer.diagnostics?.version, before, "dated with the content it checked");
		assert.ok((old.active_buffer.version ?? 0) > before, "the buffer moved on");
		assert.deepEqual(
			old.active_buffer.diagnostics?.items.map((i) => i.message),
			["first"],
		);
		assert.match(
			await e.eval("(pi-ide-status)"),
			new RegExp(
				`diagnostics: 1 from Flycheck, for older content \\(version ${before}, the buffer is at ${old.active_buffer.version}\\)`,
			),
		);
		await e.eval('(setenv "PI_IDE_TEST_CHECK_DELAY_MS" nil)');
		await e.act("(flycheck-buffer)");
		const now = await e.until(
			(s) =>
				s?.active_buffer.diagnostics && s.active_buffer.diagnostics.version === s.active_buffer.version ? s : undefined,
			"the next check's answer",
		);
		assert.equal(now.active_buffer.version, old.active_buffer.version);
		assert.deepEqual(
			now.active_buffer.diagnostics?.items.map((i) => i.message),
			["first", "second"],
		);
	});

	it("an interrupted check leaves the last answer, dated with the content it was for", async (t) => {
		const e = await startWithFlycheck(t);
		const file = join(e.dir, "h.txt");
		const before = await open(e, file, "!error kept\n");
		await e.act("(flycheck-mode 1)");
		await e.until((s) => (s?.active_buffer.diagnostics?.total === 1 ? true : undefined), "the first answer");
		await e.eval('(setenv "PI_IDE_TEST_CHECK_DELAY_MS" "3000")');
		await e.act('(progn (goto-char (point-max)) (insert "!warning never checked\n") (flycheck-buffer))');
		await e.act("(flycheck-stop)");
		const s = await e.until((s) => (s && (s.active_buffer.version ?? 0) > before ? s : undefined), "the edit written");
		assert.equal(await e.eval("(flycheck-running-p)"), "nil", "the check was stopped");
		assert.equal(s.active_buffer.diagnostics?.version, before);
		assert.deepEqual(
			s.active_buffer.diagnostics?.items.map((i) => i.message),
			["kept"],
		);
	});

	it("an empty answer is none (not unknown); after pi's edit the report expects and gets the new content's", async (t) => {
		// Flycheck as a user has it by default: pi's reload changes the text, Flycheck checks again when idle.
		const e = await startWithFlycheck(t, true);
		await e.eval("(setq flycheck-idle-change-delay 0.1)");
		const file = join(e.dir, "c.py");
		const version = await open(e, file, "x = 1\n");
		await e.act("(flycheck-mode 1)");
		const clean = await e.until((s) => s?.active_buffer.diagnostics ?? undefined, "the clean answer");
		assert.deepEqual(clean, { version, total: 0, items: [] });
		writeFileSync(file, "x = 1 !error pi broke it\n");
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
			r.diagnostics?.items.map((i) => [i.severity, i.line, i.column, i.message]),
			[["error", 1, 7, "pi broke it"]],
		);
	});

	it("a buffer where no Flycheck checker applies expects none", async (t) => {
		const e = await startWithFlycheck(t);
		const file = join(e.dir, "d.json");
		await open(e, file, "{}\n");
		await e.act("(flycheck-mode 1)");
		writeFileSync(file, '{"a": 1}\n');
		const msg = makePiMessage({
			pid: process.pid,
			cwd: e.dir,
			editor_pid: e.pid,
			seq: 1,
			changed: [{ file, seq: 1, tool: "edit" }],
			last_turn: [file],
		});
		writeFileSync(join(e.stateDir, `pi-${process.pid}.json`), JSON.stringify(msg), { mode: 0o600 });
		const r = await e.until((s) => s?.files?.find((x) => x.file === file), "the report");
		assert.equal(r.status, "reloaded");
		assert.equal(r.diagnostics_expected, false);
		assert.equal(r.diagnostics ?? null, null);
	});

	it("Flymake and Flycheck in one buffer: both listed at one version; the newer one alone after an edit", async (t) => {
		const e = await startWithFlycheck(t);
		await e.eval("(setq flymake-no-changes-timeout nil)");
		const file = join(e.dir, "e.txt");
		const version = await open(e, file, "one\n!warning from flycheck\n");
		await e.act("(flycheck-mode 1)");
		await e.until((s) => (s?.active_buffer.diagnostics?.total === 1 ? true : undefined), "Flycheck's answer");
		await e.eval(`(pi-ide-test-set-diagnostics ${elispString(file)} '((1 1 "error" "from flymake")))`);
		const both = await e.until(
			(s) => (s?.active_buffer.diagnostics?.total === 2 ? s.active_buffer.diagnostics : undefined),
			"both answers",
		);
		assert.equal(both.version, version);
		assert.deepEqual(
			both.items.map((i) => [i.message, i.source]),
			[
				["from flymake", "pi-ide-test-flymake-backend"],
				["from flycheck", SOURCE],
			],
		);
		// Only Flymake checks the edited content: Flycheck's answer is for the old one and is left out.
		await e.act('(progn (goto-char (point-max)) (insert "two\\n") (flymake-start))');
		const s = await e.until(
			(s) =>
				s?.active_buffer.diagnostics &&
				s.active_buffer.diagnostics.version > version &&
				s.active_buffer.diagnostics.version === s.active_buffer.version
					? s
					: undefined,
			"Flymake's answer for the new content",
		);
		assert.deepEqual(
			s.active_buffer.diagnostics?.items.map((i) => i.message),
			["from flymake"],
		);
		await e.act("(flycheck-buffer)");
		const merged = await e.until(
			(s) => (s?.active_buffer.diagnostics?.total === 2 ? s.active_buffer.diagnostics : undefined),
			"Flycheck's answer for the new content",
		);
		assert.equal(merged.version, s.active_buffer.version);
	});

	it("no Flycheck: the client never loads it, and without it Flymake's diagnostics are as before", async (t) => {
		const installed = await startEmacs(t, { sitePackages: true });
		assert.equal(await installed.eval("(featurep 'flycheck)"), "nil", "installed but not loaded by pi-ide-mode");
		const bare = await startEmacs(t);
		assert.equal(await bare.eval('(locate-library "flycheck")'), "nil", "emacs -Q: not even on the load path");
		const file = join(bare.dir, "g.txt");
		await open(bare, file, "g\n");
		await bare.eval(`(pi-ide-test-set-diagnostics ${elispString(file)} '((1 1 "warning" "from flymake")))`);
		const d = await bare.until((s) => s?.active_buffer.diagnostics ?? undefined, "Flymake's diagnostics");
		assert.deepEqual(
			d.items.map((i) => i.message),
			["from flymake"],
		);
		assert.deepEqual(
			(await bare.messages()).filter((m) => m.includes("pi-ide")),
			[],
		);
	});

	it("Flycheck loaded after pi-ide-mode (as an autoload loads it) is followed; turned off, its answer is left out", async (t) => {
		const e = await startEmacs(t, { sitePackages: true });
		assert.equal(await e.eval("(featurep 'flycheck)"), "nil");
		await e.eval(`(pi-ide-test-flycheck-setup ${elispString(process.execPath)} ${elispString(CHECKER)})`);
		const file = join(e.dir, "f.txt");
		await open(e, file, "!info note\n");
		await e.act("(flycheck-mode 1)");
		await e.until((s) => (s?.active_buffer.diagnostics?.total === 1 ? true : undefined), "Flycheck's answer");
		await e.act("(flycheck-mode -1)");
		const s = await e.until(
			(s) => (s && s.active_buffer.diagnostics == null ? s : undefined),
			"no diagnostics once Flycheck is off",
		);
		assert.equal(s.active_buffer.file, file);
	});
});
