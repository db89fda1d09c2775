/**
 * A smoke test of the conformance kit's Emacs adapter (test/conformance/adapters/emacs.ts): started as the
 * kit starts it (its own cwd and env), it opens a file, moves, selects and clears, the state file follows;
 * headless it writes nothing until its UI attaches; a clean quit removes the file. The kit's Emacs loads the client
 * byte-compiled (`compiled`).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import type { EditorState } from "../../src/protocol/protocol.ts";
import { parseEditorState } from "../../src/protocol/protocol.ts";
import { adapters } from "../conformance/adapters/emacs.ts";
import type { ClientSession } from "../conformance/client.ts";
import { EMACS_CLIENT_DIR, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

const adapter = adapters[0];

function kitDirs(t: TestContext): { cwd: string; env: Record<string, string>; statePath: (pid: number) => string } {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-kit-")));
	t.after(() => rmSync(root, { recursive: true, force: true }));
	const cwd = join(root, "project");
	const run = join(root, "run");
	mkdirSync(cwd);
	mkdirSync(join(root, "home"));
	mkdirSync(run, { mode: 0o700 });
	return {
		cwd,
		env: { HOME: join(root, "home"), XDG_RUNTIME_DIR: run, PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
		statePath: (pid) => join(run, "pi-ide", `${pid}.json`),
	};
}

function stateOf(path: string): EditorState | undefined {
	if (!existsSync(path)) return undefined;
	const parsed = parseEditorState(readFileSync(path, "utf8"));
	return parsed.ok ? parsed.state : undefined;
}

const until = <T>(path: string, accept: (s: EditorState) => T | undefined, what: string) =>
	pollUntil(
		() => {
			const s = stateOf(path);
			return s ? accept(s) : undefined;
		},
		() => `${what}; last: ${JSON.stringify(stateOf(path))}`,
		{ timeoutMs: 10_000, intervalMs: 20 },
	);

describe("the conformance kit's Emacs adapter", { concurrency: 2 }, () => {
	it("is named for the Emacs it drives and claims what it can do", () => {
		assert.ok(adapter);
		assert.match(adapter.name, /^emacs \d+$/);
		assert.equal(adapter.app, "emacs");
		assert.deepEqual([...adapter.capabilities].sort(), [
			"approval",
			"approval-marks",
			"ask",
			"diagnostics",
			"edit",
			"editor-per-row",
			"merge",
			"pi-identity",
			"reload",
			"review",
			"selection",
			"send",
			"show",
			"ui-gate",
			"unsaved-buffers",
		]);
	});

	it("start, open, move, select, clear, edit, quit: the state file follows", async (t) => {
		assert.ok(adapter);
		const dirs = kitDirs(t);
		const file = join(dirs.cwd, "a.py");
		writeFileSync(file, "one = 1\ntwo = 2\nthree = 3\n");
		let s: ClientSession | undefined = await adapter.start({ cwd: dirs.cwd, env: dirs.env });
		t.after(() => s?.dispose());
		const path = dirs.statePath(s.pid);
		await s.open(file);
		await s.moveCursor({ line: 2, column: 3 });
		const moved = await until(path, (x) => (x.active_buffer.cursor.line === 2 ? x : undefined), "moved");
		assert.deepEqual(moved.active_buffer.cursor, { line: 2, column: 3 });
		assert.equal(moved.app, "emacs");
		assert.equal(moved.cwd, dirs.cwd);
		await s.select({ line: 1, column: 1 }, { line: 1, column: 3 });
		const sel = await until(path, (x) => x.active_buffer.selection ?? undefined, "selected");
		assert.deepEqual([sel.start, sel.end, sel.text], [{ line: 1, column: 1 }, { line: 1, column: 3 }, "one"]);
		await s.clearSelection();
		await until(path, (x) => (x.active_buffer.selection === null ? true : undefined), "cleared");
		await s.setLines(file, ["edited"]);
		assert.deepEqual(await s.buffer(file), { text: "edited\n", modified: true });
		assert.deepEqual(await s.loadedFiles(), [file]);
		await s.save(file);
		assert.equal(readFileSync(file, "utf8"), "edited\n");
		await s.setDiagnostics(file, [{ severity: "error", line: 1, column: 1, message: "bad" }]);
		const d = await until(path, (x) => x.active_buffer.diagnostics ?? undefined, "diagnostics");
		assert.equal(d.items[0]?.message, "bad");
		await s.quit();
		assert.equal(existsSync(path), false);
		await s.dispose();
		s = undefined;
	});

	it("headless writes nothing until the UI attaches", async (t) => {
		assert.ok(adapter);
		const dirs = kitDirs(t);
		const file = join(dirs.cwd, "b.txt");
		writeFileSync(file, "b\n");
		const s = await adapter.start({ cwd: dirs.cwd, env: dirs.env, headless: true, file });
		t.after(() => s.dispose());
		await s.moveCursor({ line: 1, column: 1 });
		assert.equal(existsSync(dirs.statePath(s.pid)), false);
		await s.attachUi?.();
		await until(dirs.statePath(s.pid), (x) => (x.pid === s.pid ? true : undefined), "written once a UI attached");
	});

	it("compiled: the client loads byte-compiled from a copy, as package.el installs it (the kit's Emacs)", async (t) => {
		const e = await startEmacs(t, { ui: false, compiled: true });
		const loaded = JSON.parse(await e.eval("(symbol-file 'pi-ide-mode)")) as string;
		assert.match(loaded, /\/pi-ide\.elc$/);
		assert.equal(loaded.startsWith(`${EMACS_CLIENT_DIR}/`), false, "a copy, not the repository's directory");
		assert.equal(await e.eval("(and (byte-code-function-p (symbol-function 'pi-ide-mode)) t)"), "t");
	});
});
