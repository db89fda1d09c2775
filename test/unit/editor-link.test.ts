/**
 * EditorLink against a real state dir (no editor process: the test writes the editor's answers): what pi
 * publishes and when, and what a write/edit's tool result gets for each kind of answer.
 */
import assert from "node:assert/strict";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { EditorLink } from "../../src/editor-link.ts";
import { type EditorState, type FileReport, parsePiMessage } from "../../src/protocol.ts";
import type { EditorRecord } from "../../src/scan.ts";

const UID = process.getuid?.() ?? 0;
const EDITOR = 4_000_001;
const PI = 4_000_002;
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function world(protocol: string | null = "0.3", capMs = 300) {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-link-"));
	roots.push(root);
	const dir = join(root, "pi-ide");
	mkdirSync(dir);
	chmodSync(dir, 0o700);
	const state: EditorState = {
		pid: EDITOR,
		cwd: "/w",
		timestamp: 1,
		app: "nvim",
		...(protocol ? { protocol } : {}),
		active_buffer: {
			file: "/w/a.ts",
			name: "a.ts",
			language: "typescript",
			cursor: { line: 1, column: 1 },
			selection: null,
			modified: false,
			lines_total: 1,
		},
	};
	let connected: EditorRecord | undefined = {
		path: join(dir, `${EDITOR}.json`),
		pid: EDITOR,
		state,
		writtenAt: state.timestamp,
		ino: 0,
	};
	const answer = (files: FileReport[]) => {
		const path = join(dir, `${EDITOR}.json`);
		writeFileSync(`${path}.x`, JSON.stringify({ ...state, files }), { mode: 0o600 });
		chmodSync(`${path}.x`, 0o600);
		renameSync(`${path}.x`, path);
	};
	const link = new EditorLink({
		stateDir: dir,
		uid: UID,
		pid: PI,
		cwd: "/w",
		home: "/home/u",
		connected: () => connected,
		capMs,
	});
	const message = () => {
		const parsed = parsePiMessage(readFileSync(join(dir, `pi-${PI}.json`), "utf8"), PI);
		assert.ok(parsed.ok, JSON.stringify(parsed));
		return parsed.message;
	};
	return {
		dir,
		link,
		answer,
		message,
		disconnect: () => {
			connected = undefined;
		},
	};
}

const report = (overrides: Partial<FileReport> = {}): FileReport => ({
	file: "/w/src/a.ts",
	seq: 1,
	status: "reloaded",
	version: 3,
	modified: false,
	diagnostics_expected: false,
	diagnostics: null,
	...overrides,
});

describe("EditorLink", () => {
	it("publishes when connected, follows the connection, removes its file on close", () => {
		const w = world();
		w.link.sync();
		assert.equal(w.message().editor_pid, EDITOR);
		assert.equal(w.message().seq, 0);
		w.disconnect();
		w.link.sync();
		assert.equal(w.message().editor_pid, null);
		w.link.close();
		assert.equal(existsSync(join(w.dir, `pi-${PI}.json`)), false);
	});

	it("does not write anything while never connected", async () => {
		const w = world();
		w.disconnect();
		w.link.sync();
		assert.equal(await w.link.afterTool("write", { path: "src/a.ts" }), null);
		assert.equal(existsSync(join(w.dir, `pi-${PI}.json`)), false);
	});

	it("records the change (resolved path, seq, tool) and last_turn at the turn's end", async () => {
		const w = world();
		w.link.startRun();
		w.answer([report({ status: "not-open", version: null })]);
		assert.equal(await w.link.afterTool("edit", { path: "@src/a.ts" }), null);
		assert.deepEqual(w.message().changed, [{ file: "/w/src/a.ts", seq: 1, tool: "edit" }]);
		assert.deepEqual(w.message().last_turn, []);
		w.link.endTurn();
		assert.deepEqual(w.message().last_turn, ["/w/src/a.ts"]);
	});

	it("ignores other tools and inputs without a path", async () => {
		const w = world();
		assert.equal(await w.link.afterTool("bash", { command: "rm -rf /" }), null);
		assert.equal(await w.link.afterTool("write", { content: "x" }), null);
		assert.equal(w.link.log.seq, 0);
	});

	it("an unsaved buffer in the editor: the model is told", async () => {
		const w = world();
		w.answer([report({ status: "modified", modified: true })]);
		const note = await w.link.afterTool("write", { path: "/w/src/a.ts" });
		assert.match(note ?? "", /open in Neovim with unsaved changes/);
	});

	it("reloaded with a checker but no fresh diagnostics: 'none arrived' at the cap", async () => {
		const w = world();
		w.answer([report({ diagnostics_expected: true, diagnostics: { version: 2, total: 1, items: [] } })]);
		const note = await w.link.afterTool("write", { path: "/w/src/a.ts" });
		assert.equal(note, "Neovim reloaded /w/src/a.ts; no diagnostics for the new content arrived within 300 ms.");
	});

	it("a v0.2 editor: published, but no wait and no note", { timeout: 30_000 }, async () => {
		// A 10-minute cap: were pi to wait for an editor that cannot answer, the test's timeout would fail it.
		const w = world(null, 600_000);
		assert.equal(await w.link.afterTool("write", { path: "/w/src/a.ts" }), null);
		assert.equal(w.message().seq, 1);
	});
});
