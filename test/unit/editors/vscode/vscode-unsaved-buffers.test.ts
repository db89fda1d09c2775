/**
 * The VS Code extension's unsaved documents (protocol v0.5; editors/vscode/src/extension.ts with
 * editors/shared/unsaved-buffers.ts) against the fake VS Code API, through the conformance kit's adapter: a
 * document that is not the active one, changed in the background (a refactoring, a search-and-replace) while a pi
 * is connected, is handed over at once with its new text; with no pi connected the same change writes nothing.
 * The kit's cases (cases/unsaved-buffers.ts) cover the rest on every client.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseEditorBuffers } from "../../../../src/context/unsaved-read.ts";
import { editorBuffersFileName } from "../../../../src/protocol/wire.ts";
import { adapters } from "../../../conformance/adapters/vscode.ts";
import { activeFile, nowSeconds, quietPeriod, startEditor } from "../../../conformance/kit.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../../helpers/editors.ts";

const adapter = adapters[0];
if (adapter === undefined) throw new Error("no VS Code adapter");

test("a background document changed while pi is connected is handed over with its new text; without pi, nothing", async (t) => {
	const { editor, dispose } = await startEditor(adapter);
	t.after(dispose);
	const pi = await spawnLiveEditor();
	t.after(() => pi.kill());
	const name = editorBuffersFileName(editor.session.pid);
	const path = join(editor.stateDir, name);
	const behind = editor.file("behind.txt", "one\ntwo\n");
	const front = editor.file("front.txt", "front\n");
	await editor.session.open(behind);
	await editor.session.open(front);
	await editor.until((s) => activeFile(s) === front, "front.txt active");

	// No pi: a background change looks at nothing and writes nothing.
	await editor.session.setLines(behind, ["changed", "with no pi"]);
	await quietPeriod();
	assert.equal(existsSync(path), false, `no ${name} without a pi`);

	const message = writeRawStateFile(
		editor.stateDir,
		`pi-${pi.pid}.json`,
		JSON.stringify(
			makePiMessage({
				pid: pi.pid,
				cwd: editor.project,
				timestamp: nowSeconds(),
				editor_pid: editor.session.pid,
				seq: 0,
				changed: [],
				last_turn: [],
			}),
		),
	);
	t.after(() => existsSync(message) && unlinkSync(message));
	const first = await editor.until((s) => typeof s.buffers_serial === "number", "a copy once pi connects");
	const serial = first.buffers_serial as number;

	// The user stays in front.txt; behind.txt changes in the background: a newer copy, with the new text.
	await editor.session.setLines(behind, ["changed", "in the background"]);
	const later = await editor.until(
		(s) => activeFile(s) === front && typeof s.buffers_serial === "number" && s.buffers_serial > serial,
		"a newer copy after the background change",
	);
	const parsed = parseEditorBuffers(readFileSync(path, "utf8"), editor.session.pid, later.buffers_serial as number);
	assert.ok(parsed.ok, parsed.ok ? "" : parsed.problem);
	assert.deepEqual(
		parsed.buffers.map((b) => [b.file, b.text]),
		[[behind, "changed\nin the background"]],
	);
});
