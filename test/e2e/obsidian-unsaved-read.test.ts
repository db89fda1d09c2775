/**
 * Issue 26 item 1 end to end for Obsidian: the plugin's own code in this process against the fake Obsidian (Obsidian
 * cannot run here), a note's line changed in its editor and not yet on disk (Obsidian saves about two seconds after
 * the last key), and a real pi whose fake model calls pi's own `read`. The read's result is the note as the editor
 * holds it (the lines asked for, said to be unsaved), not the disk; once Obsidian has saved it (the file written, the
 * vault's `modify`), the plain disk read again.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { parseEditorState } from "../../src/protocol/protocol.ts";
import { fake, loadPlugin } from "../helpers/obsidian-host.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, readThroughPi, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `- item ${i + 1} of the list`);
const TYPED = "- typed in Obsidian, NOT SAVED YET";

it("obsidian + pi: a read of lines 2-4 holds the typed, unsaved line 3 and says so; once saved, the disk text", async (t) => {
	const env = await envFor(t);
	const file = touch(env.workDir, "notes/list.md", `${ORIGINAL.join("\n")}\n`);
	const { app } = await loadPlugin(t, env.workDir, env.runtimeDir);
	const view = new fake.MarkdownView(new fake.TFile("notes/list.md"), `${ORIGINAL.join("\n")}\n`);
	app.workspace.openView(view);
	app.workspace.trigger("file-open", view.file);
	view.editor.lines[2] = TYPED;
	app.workspace.trigger("editor-change", view.editor, view);
	const stateFile = join(env.runtimeDir, "pi-ide", `${process.pid}.json`);
	const state = () => {
		const parsed = parseEditorState(readFileSync(stateFile, "utf8"));
		return parsed.ok ? parsed.state : undefined;
	};
	await pollUntil(
		// No copy while no pi is connected: pi's read waits until the plugin has seen it and written one.
		() => (state()?.active_buffer.modified && state()?.buffers_serial === undefined) || undefined,
		"the state: the note modified, no copy while no pi is connected",
	);

	const unsaved = await readThroughPi(env, { path: "notes/list.md", offset: 2, limit: 3 });
	assert.match(unsaved, /is open in Obsidian with unsaved changes/);
	assert.ok(unsaved.includes(TYPED), `the typed line is in the result:\n${unsaved}`);
	assert.ok(unsaved.includes(ORIGINAL[1] as string) && unsaved.includes(ORIGINAL[3] as string), "lines 2 and 4");
	assert.ok(!unsaved.includes(ORIGINAL[2] as string), "not the disk's line 3");

	// Obsidian saves: the file written, the vault says so.
	writeFileSync(file, view.getViewData());
	app.vault.trigger("modify", view.file);
	await pollUntil(
		() => (state()?.active_buffer.modified === false && state()?.buffers_serial === undefined) || undefined,
		"saved: not modified, no unsaved buffers named",
	);
	const saved = await readThroughPi(env, { path: "notes/list.md", offset: 2, limit: 3 });
	assert.doesNotMatch(saved, /unsaved/);
	assert.equal(
		saved,
		`${[ORIGINAL[1], TYPED, ORIGINAL[3]].join("\n")}\n\n[17 more lines in file. Use offset=5 to continue.]`,
	);
});
