/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and a real
 * Emacs (daemon with a tty frame in tmux, Flymake): `ide_show` puts the place in `*pi-ide shown*` (next-error's
 * list) with one message line while the selected window, its buffer and point stay; `ide_open_files` answers with
 * every file-visiting buffer, its modified flag and the named file's diagnostics dated with its version; a file the
 * ignore rules exclude is refused (show) or only counted (ask), never named. Follows test/e2e/nvim-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { elispString, startEmacs } from "../helpers/emacs.ts";
import { type FakeToolCall, type RecordedRequest, requestMessages, toolResults } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";

function callTools(calls: FakeToolCall[]) {
	return (request: RecordedRequest) =>
		requestMessages(request).at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: calls };
}

it("emacs + pi: show to *pi-ide shown*, focus kept, one message; ask: buffers, modified, Flymake's diagnostics; excluded never named", async (t) => {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	const a = touch(env.workDir, "src/a.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
	const b = touch(env.workDir, "src/b.ts", "let x = 1;\nlet y = 2;\nlet z = 3;\n");
	const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
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

	env.model.respond = callTools([
		{ name: "ide_show", arguments: { path: "src/b.ts", line: 2, end_line: 3, note: "y is\u001b[31m never used" } },
		{ name: "ide_open_files", arguments: { path: "src/b.ts" } },
		{ name: "ide_show", arguments: { path: "secret.env", line: 1 } },
	]);
	const run = await runPrint(env, ["Where is it?"]);
	assert.equal(run.code, 0, run.stderr);
	const results = toolResults(env.model.requests.at(-1));
	assert.equal(
		results[0],
		"Shown in Emacs: src/b.ts:2-3 is in the user's list of places (the *pi-ide shown* buffer, next-error) with a one-line notice; the user's window and cursor stayed where they were (the user opens it when they choose).",
	);
	const ask = results[1] ?? "";
	assert.match(ask, /^Open file buffers in Emacs \(3; \* = unsaved changes/);
	assert.match(ask, /\n- src\/a\.ts \(active\)\n- src\/b\.ts \*\n- 1 more excluded by pi-ide-context's ignore rules/);
	assert.match(ask, /\nsrc\/b\.ts: Diagnostics \(1 error\):\n- error 2:5 y is unused/);
	assert.match(results[2] ?? "", /^Not shown: pi-ide-context's ignore rules exclude this file/);
	for (const result of results) assert.ok(!result.includes("secret"), result);

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
