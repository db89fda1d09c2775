/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and a real
 * Emacs (daemon with a tty frame in tmux, Flymake): `ide_show` puts the place in `*pi-ide shown*` (next-error's
 * list) with one message line while the selected window, its buffer and point stay; `ide_open_files` answers with
 * every file-visiting buffer, its modified flag and the named file's diagnostics dated with its version; a file the
 * ignore rules exclude is refused (show) or only counted (ask), never named. Follows test/e2e/nvim-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor } from "../helpers/scenario.ts";
import { showAndAsk, showAskProject } from "../helpers/show-ask-scenario.ts";

it("emacs + pi: show to *pi-ide shown*, focus kept, one message; ask: buffers, modified, Flymake's diagnostics; excluded never named", async (t) => {
	const env = await envFor(t);
	const { a, b, secret } = showAskProject(env);
	const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await e.act(`(find-file ${elispString(secret)})`);
	await e.act(`(find-file ${elispString(b)})`);
	await e.act('(progn (goto-char (point-min)) (delete-region (point) (line-end-position)) (insert "let x = 10;"))');
	await e.eval(`(pi-ide-test-set-diagnostics ${elispString(b)} '((2 5 "error" "y is unused")))`);
	await pollUntil(
		async () =>
			(await e.json<number>(
				`(length (with-current-buffer (find-buffer-visiting ${elispString(b)}) (flymake-diagnostics)))`,
			)) === 1 || undefined,
		"Flymake's diagnostic",
	);
	await e.act(`(find-file ${elispString(a)})`);
	await e.act("(progn (goto-char (point-min)) (forward-line 2))");
	await e.until((s) => (s?.active_buffer.file === a && s.active_buffer.cursor.line === 3 ? true : undefined), "a.ts:3");
	const where =
		"(vector (selected-window) (buffer-file-name (window-buffer (selected-window))) (with-selected-window (selected-window) (line-number-at-pos)) (length (window-list)))";
	const before = await e.json<unknown[]>(`(let ((v ${where})) (aset v 0 (format "%s" (aref v 0))) v)`);
	const messagesBefore = (await e.messages()).length;

	await showAndAsk(env, "Emacs", "list of places (the *pi-ide shown* buffer, next-error)");

	// Emacs: the place is in *pi-ide shown*; the selected window, its buffer and point stayed; one message.
	const state = e.readState();
	assert.deepEqual([state?.active_buffer.file, state?.active_buffer.cursor.line], [a, 3], "the state file: a.ts:3");
	assert.deepEqual(await e.json<unknown[]>(`(let ((v ${where})) (aset v 0 (format "%s" (aref v 0))) v)`), before);
	assert.deepEqual(
		await e.json(
			"(vconcat (mapcar (lambda (p) (vector (plist-get p :file) (plist-get p :line) (plist-get p :end) (plist-get p :text))) (pi-ide-ask-places)))",
		),
		[[b, 2, 3, "pi (lines 2-3): y is?[31m never used"]],
	);
	const added = await pollUntil(async () => {
		const now = (await e.messages()).slice(messagesBefore).filter((m) => m.startsWith("(pi-ide) pi shows"));
		return now.length > 0 ? now : undefined;
	}, "the message");
	assert.equal(added.length, 1, added.join("\n"));
	assert.match(
		added[0] ?? "",
		/^\(pi-ide\) pi shows .*src\/b\.ts:2-3: y is\?\[31m never used \(1 in \*pi-ide shown\*, M-g n\)$/,
	);
});
