/**
 * A smoke test of the JetBrains conformance adapter (test/conformance/adapters/jetbrains.ts): every session
 * method once against the real headless driver, checked in the state file it writes, so the kit's cases fail
 * on the client, never on the adapter.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { adapters } from "../conformance/adapters/jetbrains.ts";
import { pollUntil } from "../helpers/poll.ts";

interface State {
	app: string;
	pid: number;
	cwd: string;
	active_buffer: {
		file: string;
		cursor: { line: number; column: number };
		selection: { text: string; selected_at: number } | null;
		modified: boolean;
		diagnostics?: { total: number; items: { message: string }[] } | null;
	};
}

it("jetbrains adapter: each session method drives the headless driver", async (t) => {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-jb-kit-")));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const project = join(root, "project");
	const runtime = join(root, "run");
	mkdirSync(project);
	mkdirSync(runtime, { mode: 0o700 });
	const file = join(project, "notes.md");
	writeFileSync(file, "# Title\nsome text\n");
	const adapter = adapters[0];
	assert.ok(adapter);
	assert.equal(adapter.app, "jetbrains");
	assert.ok(adapter.missing["ui-gate"], "what it cannot do is said, not silently passed");
	const session = await adapter.start({
		cwd: project,
		env: { HOME: root, XDG_RUNTIME_DIR: runtime, PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
		file,
	});
	t.after(() => session.dispose());
	const stateFile = join(runtime, "pi-ide", `${session.pid}.json`);
	const until = (accept: (s: State) => boolean, what: string) =>
		pollUntil(
			() => {
				if (!existsSync(stateFile)) return undefined;
				const s = JSON.parse(readFileSync(stateFile, "utf8")) as State;
				return accept(s) ? s : undefined;
			},
			what,
			5000,
		);

	const first = await until((s) => s.active_buffer.file === file, "the file in the state");
	assert.equal(first.app, "jetbrains");
	assert.equal(first.cwd, project);
	await session.moveCursor({ line: 2, column: 6 });
	await until((s) => s.active_buffer.cursor.line === 2 && s.active_buffer.cursor.column === 6, "the cursor");
	await session.select({ line: 2, column: 1 }, { line: 2, column: 4 });
	await until((s) => s.active_buffer.selection?.text === "some", "the selection");
	await session.clearSelection();
	await until((s) => s.active_buffer.selection === null, "no selection");
	await session.setLines(file, ["changed"]);
	assert.deepEqual(await session.buffer(file), { text: "changed\n", modified: true });
	await until((s) => s.active_buffer.modified, "modified");
	await session.setDiagnostics(file, [{ severity: "error", line: 1, column: 1, message: "bad", source: "kit" }]);
	await until((s) => s.active_buffer.diagnostics?.items[0]?.message === "bad", "the diagnostics");
	await session.save(file);
	assert.equal(readFileSync(file, "utf8"), "changed\n");
	assert.deepEqual(await session.loadedFiles(), [file]);
	assert.equal(await session.buffer(join(project, "other.md")), undefined);
	assert.deepEqual(await session.messages(), []);
	await session.quit();
	assert.equal(existsSync(stateFile), false, "a clean exit removes the state file");
});
