/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and the
 * Obsidian plugin's own code in this process against the fake Obsidian (test/helpers/obsidian-host.ts; Obsidian
 * cannot run here), its vault pi's project: `ide_show` puts the place in the plugin's list of pi's places with one
 * Notice line while the active note and its cursor stay; `ide_open_files` answers with the notes open in Markdown
 * tabs and `modified` (the editor's text against the file on disk), no diagnostics (Obsidian has none: "unknown",
 * never clean); a note the ignore rules exclude is refused by pi (show) or only counted (ask), never named.
 * Follows test/e2e/emacs-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { it } from "node:test";
import type { Place } from "../../editors/obsidian/src/show-ask.ts";
import { type FakeToolCall, type RecordedRequest, requestMessages, toolResults } from "../helpers/fake-llm.ts";
import { fake, loadPlugin } from "../helpers/obsidian-host.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";

function callTools(calls: FakeToolCall[]) {
	return (request: RecordedRequest) =>
		requestMessages(request).at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: calls };
}

it("obsidian + pi: show to pi's places, the note and cursor kept, one Notice; ask: open notes, modified; excluded never named", async (t) => {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.md\n");
	const a = touch(env.workDir, "notes/a.md", "# A\n\none\ntwo\n");
	const b = touch(env.workDir, "notes/b.md", "# B\n\nthree\nfour\n");
	const secret = touch(env.workDir, "secret.md", "TOKEN=hunter2\n");

	const { app, host } = await loadPlugin(t, env.workDir, env.runtimeDir);
	const open = (file: string, text = "") => {
		const view = new fake.MarkdownView(new fake.TFile(relative(env.workDir, file)), text);
		app.workspace.openView(view);
		app.workspace.trigger("file-open", view.file);
		return view;
	};
	open(secret, "TOKEN=hunter2\n");
	open(b, "# B\n\nTHREE\nfour\n"); // typed, not saved yet
	const active = open(a, "# A\n\none\ntwo\n");
	active.editor.setCursor(2, 0);
	host.dispatchEditorUpdate({ selectionSet: true });
	const noticesBefore = fake.Notice.shown.length;

	env.model.respond = callTools([
		{ name: "ide_show", arguments: { path: "notes/b.md", line: 3, end_line: 4, note: "three is\u001b[31m loud" } },
		{ name: "ide_open_files", arguments: { path: "notes/b.md" } },
		{ name: "ide_show", arguments: { path: "secret.md", line: 1 } },
	]);
	const run = await runPrint(env, ["Where is it?"]);
	assert.equal(run.code, 0, run.stderr);
	const results = toolResults(env.model.requests.at(-1));
	assert.match(results[0] ?? "", /^Shown in [^:]+: notes\/b\.md:3-4 is in the user's .* with a one-line notice;/);
	const ask = results[1] ?? "";
	assert.match(ask, /^Open file buffers in [^(]+\(3; \* = unsaved changes/);
	assert.match(
		ask,
		/\n- notes\/a\.md \(active\)\n- notes\/b\.md \*\n- 1 more excluded by pi-ide-context's ignore rules/,
	);
	assert.doesNotMatch(ask, /Diagnostics \(/, "Obsidian reports no diagnostics");
	assert.match(results[2] ?? "", /^Not shown: pi-ide-context's ignore rules exclude this file/);
	for (const result of results) assert.ok(!result.includes("secret") && !result.includes("hunter2"), result);

	// Obsidian: the active note and its cursor stayed; the place is in pi's places; one Notice, inert.
	assert.equal(app.workspace.activeView, active);
	assert.equal(active.editor.getCursor().line, 2);
	const places = host.commands.find((c) => c.id === "show-places");
	await places?.callback?.();
	const picker = fake.Modal.shown.at(-1);
	assert.ok(picker instanceof fake.SuggestModal);
	assert.deepEqual(
		(picker.getSuggestions("") as Place[]).map((p) => [p.file, p.line, p.end_line, p.text]),
		[[b, 3, 4, "pi: three is [31m loud"]],
	);
	picker.close();
	const added = await pollUntil(() => {
		const now = fake.Notice.shown.slice(noticesBefore);
		return now.length > 0 ? now : undefined;
	}, "the Notice");
	assert.deepEqual(added, ["pi shows notes/b.md:3-4: three is [31m loud"]);
});
