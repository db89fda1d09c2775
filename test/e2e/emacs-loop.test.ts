/**
 * The Emacs client end to end with the real pi: a real `emacs --daemon` with a tty client frame in tmux,
 * pi in print mode with the fake model. The model receives the block built from Emacs's state file (file,
 * cursor, the fresh region as the selection); pi's `write` tool reloads the open buffer, cursor kept, Emacs
 * reports it and pi appends the buffer's Flymake diagnostics for the new content to the tool result; the same
 * with Debian's Flycheck and a real command checker (test/fixtures/marker-checker.ts), checking the reloaded
 * content as Flycheck does by default. With approval on (v0.4, `ideContext.approve: "edits"`) and no UI in pi, Emacs
 * alone is asked: `pi-ide-approve` lets the edit run and the model reads that it was approved in Emacs;
 * `pi-ide-reject` leaves the file as it is and the model reads that the user rejected it in Emacs; with pi in RPC
 * mode, pi's own dialog answering first takes the request (and its marks) out of Emacs; Emacs exiting while pi
 * waits is no rejection, and the model is told so. Review (v0.4): pi in RPC mode edits two places of an open
 * file; Emacs marks both hunks on their lines, `M-x pi-ide-revert-hunk` (typed) puts one back in the buffer and not
 * on disk, refuses the other once the user edited it; `C-_` before the next prompt takes the revert back, so the
 * model is not told of it (and the hunk is marked again); reverted again, the next prompt tells the model which
 * hunk the user reverted, and `C-_` brings pi's version back.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { DIALOG_ACCEPT } from "../../src/link/approval.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { type RecordedRequest, toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startRpc, type UiRequest } from "../helpers/rpc.ts";
import { envFor, PROMPT, promptOnce, theBlock, touch } from "../helpers/scenario.ts";

const CHECKER = fileURLToPath(new URL("../fixtures/marker-checker.ts", import.meta.url));
const ORIGINAL = Array.from({ length: 12 }, (_, i) => `v${i + 1} = ${i + 1}  # line ${i + 1}`);

/** Everything the model read in a request, as one text. */
const requestText = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? {});

const bufferText = (e: Emacs, file: string) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);

describe("emacs + pi end to end", { concurrency: 2 }, () => {
	it("the model gets the Emacs block with the region's text", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.act("(pi-ide-test-select 3 1 4 5)");
		await e.until((s) => (s?.active_buffer.selection?.end.line === 4 ? true : undefined), "the region is written");
		const block = theBlock(await promptOnce(env));
		assert.match(block, /^The user's editor \(Emacs\) shows this file:$/m);
		assert.match(block, new RegExp(`^File: ${file.replaceAll("/", "\\/")}$`, "m"));
		assert.match(block, /^Language: python$/m);
		assert.match(block, /^Selection \(lines 3-4, made \d+ s ago\):$/m);
		assert.ok(block.includes(`${ORIGINAL[2]}\n${ORIGINAL[3]}`), block);
	});

	it("pi's write reloads the buffer, cursor kept; the tool result carries Emacs's diagnostics", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
		const e = await startEmacs(t, {
			runtimeDir: env.runtimeDir,
			cwd: env.workDir,
			preEval: ["(setq flymake-no-changes-timeout 0.1)"],
		});
		await e.act(`(find-file ${elispString(file)})`);
		await e.eval(`(pi-ide-test-set-diagnostics ${elispString(file)} '((1 1 "error" "v1 is not allowed")))`);
		await e.act("(progn (goto-char (point-min)) (forward-line 9) (forward-char 3))");
		await e.until(
			(s) => (s?.active_buffer.diagnostics && s.active_buffer.cursor.line === 10 ? true : undefined),
			"Emacs reports the file, its diagnostics and the cursor",
		);
		const next = ORIGINAL.map((l, i) => (i === 4 ? "v5 = 'changed by pi'" : l));
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: `${next.join("\n")}\n` } }]);
		const result = await runPrint(env, [PROMPT]);
		assert.equal(result.code, 0, result.stderr);
		const toolText = toolResults(env.model.requests[1]).join("\n");
		assert.match(toolText, /Successfully wrote/);
		assert.match(toolText, /error 1:1 v1 is not allowed/, toolText);
		assert.equal(
			await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`),
			readFileSync(file, "utf8"),
		);
		const s = await e.until(
			(s) => (s?.files?.find((f) => f.file === file) ? s : undefined),
			"Emacs's report on the file",
		);
		assert.equal(s.files?.find((f) => f.file === file)?.status, "reloaded");
		assert.deepEqual(s.active_buffer.cursor, { line: 10, column: 4 });
		assert.equal(s.active_buffer.modified, false);
	});

	it("with Flycheck: the tool result carries the checker's errors for pi's content", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
		const e = await startEmacs(t, {
			runtimeDir: env.runtimeDir,
			cwd: env.workDir,
			sitePackages: true,
			preEval: [
				`(pi-ide-test-flycheck-setup ${elispString(process.execPath)} ${elispString(CHECKER)} t)`,
				"(setq flycheck-idle-change-delay 0.1)",
			],
		});
		await e.act(`(progn (find-file ${elispString(file)}) (flycheck-mode 1))`);
		await e.until(
			(s) => (s?.active_buffer.diagnostics?.total === 0 ? true : undefined),
			"Flycheck's clean answer for the original",
		);
		const next = ORIGINAL.map((l, i) => (i === 4 ? "v5 = 5  !error pi broke v5" : l));
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: `${next.join("\n")}\n` } }]);
		const result = await runPrint(env, [PROMPT]);
		assert.equal(result.code, 0, result.stderr);
		const toolText = toolResults(env.model.requests[1]).join("\n");
		assert.match(toolText, /Successfully wrote/);
		assert.match(toolText, /error 5:9 pi broke v5/, toolText);
	});

	const APPROVALS: { command: string; content: (edited: string) => string; told: RegExp }[] = [
		{
			command: "pi-ide-approve",
			content: (edited) => edited,
			told: /Approval: the user approved this change to src\/app\.py in Emacs\./,
		},
		{
			command: "pi-ide-reject",
			content: () => `${ORIGINAL.join("\n")}\n`,
			told: /The user rejected this change in Emacs: src\/app\.py is unchanged\. Do not make it again/,
		},
	];
	for (const c of APPROVALS)
		it(`approval on, pi -p: Emacs alone is asked; ${c.command} decides and the model is told`, async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
			const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await e.act(`(find-file ${elispString(file)})`);
			await e.until(
				(s) => (s?.active_buffer.file === file && Array.isArray(s.decisions) ? true : undefined),
				"Emacs reports the file and answers approvals",
			);
			const edited = `${ORIGINAL.map((l, i) => (i === 4 ? "v5 = 'changed by pi'" : l)).join("\n")}\n`;
			env.model.respond = toolsThenReply([
				{
					name: "edit",
					arguments: { path: file, edits: [{ oldText: ORIGINAL[4], newText: "v5 = 'changed by pi'" }] },
				},
			]);
			const ran = runPrint(env, ["change v5"]);
			// pi starts and the model answers first: that takes pi's own wait under load, not an Emacs one.
			await pollUntil(
				async () => ((await e.eval("(length pi-ide-approval--pending)")) === "1" ? true : undefined),
				"Emacs has pi's request",
				WAIT_MS,
			);
			assert.equal(readFileSync(file, "utf8"), `${ORIGINAL.join("\n")}\n`, "nothing written while pi waits");
			assert.match(await e.eval("(pi-ide-mode-line)"), /approve\?/);
			await e.act(`(${c.command})`);
			const result = await ran;
			assert.equal(result.code, 0, result.stderr);
			assert.equal(readFileSync(file, "utf8"), c.content(edited));
			assert.match(toolResults(env.model.requests[1]).join("\n"), c.told);
			await pollUntil(
				async () => ((await e.eval("(length pi-ide-approval--pending)")) === "0" ? true : undefined),
				"the request is gone",
			);
			assert.equal(await bufferText(e, file), c.content(edited), "an approved edit reloads the buffer");
		});

	it("approval on, pi -p: Emacs exits while pi waits: not applied, not a rejection, the model is told", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.until(
			(s) => (s?.active_buffer.file === file && Array.isArray(s.decisions) ? true : undefined),
			"Emacs reports the file and answers approvals",
		);
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written by pi\n" } }]);
		const ran = runPrint(env, ["rewrite it"]);
		await pollUntil(
			async () => ((await e.eval("(length pi-ide-approval--pending)")) === "1" ? true : undefined),
			"Emacs has pi's request",
			WAIT_MS,
		);
		await e.quit();
		const result = await ran;
		assert.equal(result.code, 0, result.stderr);
		assert.equal(readFileSync(file, "utf8"), `${ORIGINAL.join("\n")}\n`);
		assert.match(
			toolResults(env.model.requests[1]).join("\n"),
			/Emacs closed while this change waited for approval: the change was not applied.*This is not a rejection/,
		);
	});

	it("approval on, pi with a UI: pi's dialog answers first, and the request leaves Emacs (marks, mode line)", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.until(
			(s) => (s?.active_buffer.file === file && Array.isArray(s.decisions) ? true : undefined),
			"Emacs reports the file and answers approvals",
		);
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		env.model.respond = toolsThenReply([
			{
				name: "edit",
				arguments: { path: file, edits: [{ oldText: ORIGINAL[4], newText: "v5 = 'changed by pi'" }] },
			},
		]);
		const since = rpc.records.length;
		const prompted = rpc.prompt("change v5");
		await pollUntil(
			async () => ((await e.eval("(length pi-ide-approval--pending)")) === "1" ? true : undefined),
			"Emacs has pi's request",
			WAIT_MS,
		);
		const marked = `(with-current-buffer (find-buffer-visiting ${elispString(file)})
			(cl-count-if (lambda (o) (overlay-get o 'pi-ide-approval)) (overlays-in (point-min) (point-max))))`;
		assert.equal(await e.eval(marked), "1", "line 5 marked, the proposed line after it");
		const dialog = await rpc.waitFor<UiRequest>(
			(r) => r.type === "extension_ui_request" && r.method === "select",
			undefined,
			since,
		);
		rpc.respond(dialog.id, { value: DIALOG_ACCEPT });
		await prompted;
		assert.match(
			toolResults(env.model.requests[1]).join("\n"),
			/the user approved this change to src\/app\.py in pi's approval dialog/,
		);
		await pollUntil(
			async () => ((await e.eval("(length pi-ide-approval--pending)")) === "0" ? true : undefined),
			"the request leaves Emacs",
		);
		assert.equal(await e.eval(marked), "0");
		assert.doesNotMatch(await e.eval("(pi-ide-mode-line)"), /approve/);
		assert.deepEqual(e.readState()?.decisions, [], "Emacs decided nothing");
	});

	it("review: pi's hunks marked, one reverted in the buffer (typed), another refused; undone, not told; reverted, told", async (t) => {
		const env = await envFor(t);
		const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
		const file = touch(env.workDir, "notes.txt", `${lines.join("\n")}\n`);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "Emacs reports notes.txt");
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		env.model.respond = toolsThenReply([
			{
				name: "edit",
				arguments: {
					path: file,
					edits: [
						{ oldText: "line 2\n", newText: "line 2, by pi\n" },
						{ oldText: "line 9\n", newText: "line 9, by pi\nand one more\n" },
					],
				},
			},
		]);
		await rpc.prompt("change lines 2 and 9");
		const piVersion = readFileSync(file, "utf8");
		assert.match(piVersion, /line 2, by pi\n[\s\S]*line 9, by pi\nand one more\n/);
		const marks = `(with-current-buffer (find-buffer-visiting ${elispString(file)})
			(vconcat (mapcar (lambda (o) (vector (line-number-at-pos (overlay-start o) t) (count-lines (overlay-start o) (overlay-end o))))
				(sort (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max)))
					(lambda (a b) (< (overlay-start a) (overlay-start b)))))))`;
		await pollUntil(
			async () => (JSON.stringify(await e.json(marks)) === "[[2,1],[9,2]]" ? true : undefined),
			"pi's two hunks marked on lines 2 and 9-10",
		);

		// The user edits pi's line 2: its revert is refused. Line 9's is taken back, typed as a user would.
		await e.act(`(progn (goto-char (point-min)) (forward-line 1) (end-of-line) (insert "!"))`);
		await e.act("(progn (goto-char (point-min)) (forward-line 1))");
		await e.keys("M-x", "pi-ide-revert-hunk", "Enter");
		await pollUntil(
			async () => ((await e.messages()).some((m) => /line 2: you changed these lines/.test(m)) ? true : undefined),
			"the edited hunk is refused",
		);
		await e.act("(progn (goto-char (point-min)) (forward-line 8))");
		await e.keys("M-x", "pi-ide-revert-hunk", "Enter");
		const expected = piVersion
			.replace("line 2, by pi\n", "line 2, by pi!\n")
			.replace("line 9, by pi\nand one more\n", "line 9\n");
		await pollUntil(
			async () => ((await bufferText(e, file)) === expected ? true : undefined),
			"line 9's hunk reverted in the buffer",
		);
		assert.equal(readFileSync(file, "utf8"), piVersion, "the disk keeps pi's version");
		const listed = (s: unknown) => (s as { reverted?: unknown[] } | null)?.reverted?.length;
		await e.until((s) => (listed(s) === 1 ? true : undefined), "reported");

		// Undone before the prompt (typed): no revert any more, so the model is not told of one; marked again.
		await e.keys("C-_");
		await e.until((s) => (s !== null && listed(s) === undefined ? true : undefined), "the undone revert unlisted");
		assert.equal(await bufferText(e, file), piVersion.replace("line 2, by pi\n", "line 2, by pi!\n"));
		assert.equal(JSON.stringify(await e.json(marks)), "[[2,1],[9,2]]", "line 9's hunk marked again");
		await rpc.prompt("anything?");
		assert.doesNotMatch(requestText(env.model.requests.at(-1)), /the user reverted/);

		await e.act("(progn (goto-char (point-min)) (forward-line 8))");
		await e.keys("M-x", "pi-ide-revert-hunk", "Enter");
		await pollUntil(
			async () => ((await bufferText(e, file)) === expected ? true : undefined),
			"line 9's hunk reverted again",
		);
		await e.until((s) => (listed(s) === 1 ? true : undefined), "reported, once");

		await rpc.prompt("what now?");
		const told = requestText(env.model.requests.at(-1));
		assert.match(told, /the user reverted one of your changes in their editor/);
		assert.match(told, /notes\.txt:9-10/);

		await e.keys("C-_");
		await pollUntil(
			async () => ((await bufferText(e, file)).includes("line 9, by pi\nand one more\n") ? true : undefined),
			"one undo brings pi's lines back",
		);
		assert.equal(await bufferText(e, file), piVersion.replace("line 2, by pi\n", "line 2, by pi!\n"));
	});
});
