/**
 * The Emacs client's state file in a real `emacs --daemon` with a tty client frame in tmux: what it
 * describes (the selected window's buffer, cursor in UTF-8 byte columns, the active region as the selection
 * and its clock), when it writes (only with a UI frame; removed at exit), PI_IDE_EDITOR_PID in its terminals,
 * and a refused state dir. Each test has its own daemon, socket and state dir.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

const nowSeconds = () => Date.now() / 1000;

describe("emacs: state file", { concurrency: 2 }, () => {
	it("describes the selected window's file: language, UTF-8 byte cursor, modified, lines", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "main.py");
		writeFileSync(file, "x = 'été'\ny = 2\n\nz = 3\n");
		await e.act(`(find-file ${elispString(file)})`);
		await e.act('(progn (goto-char (point-min)) (search-forward "t"))');
		const s = await e.until((s) => (s?.active_buffer.cursor.column === 9 ? s : undefined), "cursor after 'ét'");
		assert.equal(s.app, "emacs");
		assert.equal(s.pid, e.pid);
		assert.equal(s.cwd, e.dir);
		assert.deepEqual(
			{ ...s.active_buffer, version: undefined, diagnostics: undefined },
			{
				file,
				name: "main.py",
				language: "python",
				cursor: { line: 1, column: 9 },
				selection: null,
				modified: false,
				lines_total: 4,
				version: undefined,
				diagnostics: undefined,
			},
		);
		await e.act('(progn (goto-char (point-max)) (insert "w = 4\\n"))');
		const edited = await e.until((s) => (s?.active_buffer.modified ? s : undefined), "modified");
		assert.equal(edited.active_buffer.lines_total, 5);
		assert.deepEqual(edited.active_buffer.cursor, { line: 6, column: 1 });
	});

	it("a region is the selection, dated when made; deactivated or replaced it is none", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.ts");
		writeFileSync(file, "const a = 1;\nconst b = 2;\nconst c = 3;\n");
		await e.act(`(find-file ${elispString(file)})`);
		const before = nowSeconds();
		await e.act("(pi-ide-test-select 1 7 1 7)");
		const one = await e.until((s) => s?.active_buffer.selection ?? undefined, "one-char selection");
		assert.deepEqual(
			{ start: one.start, end: one.end, text: one.text },
			{ start: { line: 1, column: 7 }, end: { line: 1, column: 7 }, text: "a" },
		);
		assert.ok(one.selected_at !== null && one.selected_at >= before - 0.01 && one.selected_at <= nowSeconds());
		await e.act("(pi-ide-test-select 1 7 2 5)");
		const multi = await e.until(
			(s) => (s?.active_buffer.selection?.end.line === 2 ? s.active_buffer.selection : undefined),
			"two-line selection",
		);
		assert.equal(multi.text, "const a = 1;\nconst b = 2;");
		assert.deepEqual(multi.start, { line: 1, column: 7 });
		await e.act("(deactivate-mark)");
		await e.until((s) => (s?.active_buffer.selection === null ? true : undefined), "deactivated: none");
		// Replaced: delete-selection-mode replaces the region with what is typed.
		await e.act("(progn (delete-selection-mode 1) (pi-ide-test-select 3 1 3 5))");
		await e.until((s) => (s?.active_buffer.selection?.text === "const" ? true : undefined), "selected 'const'");
		await e.keys("x");
		const replaced = await e.until(
			(s) => (s?.active_buffer.modified && s.active_buffer.selection === null ? s : undefined),
			"typed over the region: no selection",
		);
		assert.equal(replaced.active_buffer.lines_total, 3);
	});

	it("a remote (TRAMP) buffer is not a file on this machine: file null, its name kept", async (t) => {
		const e = await startEmacs(t);
		await e.act(
			'(progn (switch-to-buffer (get-buffer-create "remote")) (setq buffer-file-name "/ssh:pi-ide-no-such-host:/etc/motd"))',
		);
		const s = await e.until((s) => (s?.active_buffer.name === "motd" ? s : undefined), "the remote buffer");
		assert.equal(s.active_buffer.file, null);
	});

	it("real keys: C-SPC and C-f make the selection through the command loop", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "k.js");
		writeFileSync(file, "// Title\nbody();\n");
		await e.act(`(find-file ${elispString(file)})`);
		await e.keys("C-Space", "C-f", "C-f");
		const sel = await e.until((s) => s?.active_buffer.selection ?? undefined, "selection from keys");
		assert.equal(sel.text, "//");
		assert.equal(e.readState()?.active_buffer.language, "javascript");
		await e.keys("C-g");
		await e.until((s) => (s?.active_buffer.selection === null ? true : undefined), "C-g deactivates");
	});

	it("a terminal or the minibuffer keeps describing the last file, with its region", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "f.lua");
		writeFileSync(file, "local x = 1\nreturn x\n");
		await e.act(`(find-file ${elispString(file)})`);
		await e.act("(pi-ide-test-select 2 1 2 6)");
		await e.until((s) => (s?.active_buffer.selection?.text === "return" ? true : undefined), "selection");
		// In the minibuffer (M-x), the target is still the file.
		await e.keys("M-x");
		await pollUntil(
			async () =>
				(await e.eval(
					"(list (minibufferp (window-buffer (selected-window))) (buffer-name (car (pi-ide--target))))",
				)) === '(t "f.lua")'
					? true
					: undefined,
			"M-x: the minibuffer is selected and the target is f.lua",
		);
		// Left as C-g leaves it (abort-recursive-edit, from a timer in the command loop), not by typing C-g: a C-g
		// that reaches Emacs while an emacsclient eval runs quits that eval, and the minibuffer stays open (tried:
		// a 1 s eval, C-g typed during it). The probe below is such an eval (a timeout in one run of 40).
		await e.eval("(progn (run-at-time 0 nil #'abort-recursive-edit) nil)");
		await pollUntil(
			async () => ((await e.eval("(minibufferp (window-buffer (selected-window)))")) === "nil" ? true : undefined),
			"out of the minibuffer",
		);
		await e.act('(progn (split-window) (other-window 1) (term "/bin/sh"))');
		await e.until((s) => (s ? true : undefined), "a write");
		await pollUntil(
			async () =>
				(await e.eval("(with-current-buffer (window-buffer (selected-window)) (derived-mode-p 'term-mode))")) !== "nil"
					? true
					: undefined,
			"in the terminal",
		);
		await e.act('(switch-to-buffer (get-buffer-create "*scratch-2*"))');
		const scratch = await e.until(
			(s) => (s?.active_buffer.name === "*scratch-2*" ? s : undefined),
			"a non-file text buffer is described itself",
		);
		assert.equal(scratch.active_buffer.file, null);
		await e.act('(term "/bin/sh")');
		const inTerm = await e.until(
			(s) => (s?.active_buffer.file === file ? s : undefined),
			"the terminal describes the last file",
		);
		assert.equal(inTerm.active_buffer.selection?.text, "return");
	});

	it("writes only with a UI frame; the file goes with the last frame and at exit", async (t) => {
		const e = await startEmacs(t, { ui: false });
		await e.eval("(pi-ide-write-now t)");
		assert.equal(existsSync(e.statePath), false, "a daemon without a client frame writes nothing");
		assert.match(await e.eval("(pi-ide-status)"), /no UI frame/);
		await e.attachUi();
		await e.until((s) => (s ? true : undefined), "a client frame starts the writes");
		await e.eval("(delete-frame (pi-ide-test-ui-frame) t)");
		await pollUntil(() => (existsSync(e.statePath) ? undefined : true), "the last frame's deletion removes the file");
		await e.attachUi();
		await e.until((s) => (s ? true : undefined), "a new frame writes again");
		await e.quit();
		assert.equal(existsSync(e.statePath), false, "kill-emacs removes the file");
	});

	it("exports PI_IDE_EDITOR_PID to term and eshell; disabling the mode removes it and the file", async (t) => {
		const e = await startEmacs(t);
		await e.until((s) => (s ? true : undefined), "first write");
		const out = join(e.dir, "term-env.txt");
		await e.act(`(make-term "pi-env" "/bin/sh" nil "-c" ${elispString(`echo "$PI_IDE_EDITOR_PID" > ${out}`)})`);
		await pollUntil(() => (existsSync(out) && readFileSync(out, "utf8").trim() !== "" ? true : undefined), "term");
		assert.equal(readFileSync(out, "utf8").trim(), String(e.pid));
		const outEshell = join(e.dir, "eshell-env.txt");
		await e.eval(
			`(progn (require 'eshell) (eshell-command ${elispString(`sh -c 'echo $PI_IDE_EDITOR_PID' > ${outEshell}`)}))`,
		);
		await pollUntil(() => (existsSync(outEshell) ? true : undefined), "eshell");
		assert.equal(readFileSync(outEshell, "utf8").trim(), String(e.pid));
		await e.eval("(pi-ide-mode -1)");
		assert.equal(await e.eval('(getenv "PI_IDE_EDITOR_PID")'), "nil");
		assert.equal(existsSync(e.statePath), false);
	});

	it("pi in M-x vterm (Debian's elpa-vterm) gets PI_IDE_EDITOR_PID; the state keeps the file", async (t) => {
		const e = await startEmacs(t, { sitePackages: true, preEval: ['(setq vterm-shell "/bin/sh")'] });
		const file = join(e.dir, "v.txt");
		writeFileSync(file, "v\n");
		await e.act(`(find-file ${elispString(file)})`);
		await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "the file open");
		await e.keys("M-x", "vterm", "Enter");
		await pollUntil(
			async () =>
				(await e.eval(
					"(with-current-buffer (window-buffer (frame-selected-window (pi-ide-test-ui-frame))) major-mode)",
				)) === "vterm-mode"
					? true
					: undefined,
			"vterm selected",
			{ timeoutMs: 20_000 },
		);
		// Typed into the shell vterm runs, through the tty frame, as a user types `pi`.
		const out = join(e.dir, "vterm-env.txt");
		await e.keys(`echo "pid=$PI_IDE_EDITOR_PID" > ${out}`, "Enter");
		await pollUntil(() => (existsSync(out) && readFileSync(out, "utf8").trim() !== "" ? true : undefined), "vterm");
		assert.equal(readFileSync(out, "utf8").trim(), `pid=${e.pid}`);
		assert.equal(e.readState()?.active_buffer.file, file, "the terminal keeps describing the file");
	});

	it("unchanged content is not written again", async (t) => {
		const e = await startEmacs(t);
		await e.until((s) => (s ? true : undefined), "first write");
		const writes = Number(await e.eval("(plist-get pi-ide--stats :writes)"));
		for (let i = 0; i < 5; i++) await e.act("(ignore)");
		await e.eval("(pi-ide-write-now)");
		assert.equal(Number(await e.eval("(plist-get pi-ide--stats :writes)")), writes);
		assert.ok(Number(await e.eval("(plist-get pi-ide--stats :skipped)")) >= 1);
	});

	it("a group-accessible state dir gets nothing, with one message", async (t) => {
		const e = await startEmacs(t, {
			ui: false,
			enable: false,
		});
		mkdirSync(e.stateDir, { recursive: true });
		chmodSync(e.stateDir, 0o750);
		await e.eval("(pi-ide-mode 1)");
		await e.attachUi();
		for (let i = 0; i < 3; i++) await e.act("(forward-char 0)");
		await e.eval("(pi-ide-write-now t)");
		assert.equal(existsSync(e.statePath), false);
		const said = (await e.messages()).filter((m) => m.includes("not writing the state file"));
		assert.equal(said.length, 1, said.join("\n"));
		assert.match(said[0] ?? "", /mode 750/);
	});
});
