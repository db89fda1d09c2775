/**
 * Protocol v0.5, the editor's unsaved buffers (PROTOCOL.md, "v0.5: the editor's unsaved buffers"): a file buffer
 * with unsaved changes has its text in `<pid>.buffers.json` (0600, beside the state file, atomically), and the
 * state file's `buffers_serial` names the current copy; the copy follows the buffer's version; it goes once no
 * buffer is modified; a buffer over the 2 MiB cap is listed with `note: "too_large"` and no text. Read as pi reads
 * it (src/context/unsaved-read.ts). Only while a live pi's message names the editor (issue 26: nothing is added to
 * a keystroke while no pi is connected): the "pi" here is a live process of ours whose message says so.
 */
import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { parseEditorBuffers } from "../../../src/context/unsaved-read.ts";
import { MAX_BUFFERS_FILE_BYTES, MAX_UNSAVED_TEXT_BYTES } from "../../../src/protocol/limits.ts";
import { type EditorState, editorBuffersFileName, type UnsavedBuffer } from "../../../src/protocol/wire.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import {
	activeFile,
	assertNoTempLeft,
	type Editor,
	type KitCase,
	nowSeconds,
	quietPeriod,
	stateDirEntries,
	WRITE_WAIT_MS,
} from "../kit.ts";

const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const TEXT = `${LINES.join("\n")}\n`;

/** The editor's unsaved buffers as pi reads them, for the serial its state file names now. */
function readBuffers(editor: Editor, serial: number): UnsavedBuffer[] {
	const path = join(editor.stateDir, editorBuffersFileName(editor.session.pid));
	const stats = lstatSync(path);
	assert.ok(stats.isFile(), `${path} is a regular file`);
	assert.equal(stats.mode & 0o777, 0o600, `${path} has mode 0600`);
	assert.ok(stats.size <= MAX_BUFFERS_FILE_BYTES, `${path} is ${stats.size} bytes, over pi's limit`);
	const parsed = parseEditorBuffers(readFileSync(path, "utf8"), editor.session.pid, serial);
	assert.ok(parsed.ok, `pi refuses ${path}: ${parsed.ok ? "" : parsed.problem}`);
	assert.equal(parsed.dropped, 0, "no malformed entry");
	return parsed.buffers;
}

interface Pi {
	pid: number;
	/** Write its message (seq 0) naming `editorPid` (default: the editor), as pi does when it connects. */
	say(editorPid?: number): string;
	/** Its message file removed (pi exits), then the process killed. */
	exit(): Promise<void>;
	/** The process killed (SIGKILL: its message file stays). */
	kill(): Promise<void>;
}

/** A live "pi" (a process of ours) for `editor`: not connected until it says so. */
async function livePi(editor: Editor): Promise<Pi> {
	const child = await spawnLiveEditor();
	let path = "";
	return {
		pid: child.pid,
		say: (editorPid = editor.session.pid) => {
			const message = makePiMessage({
				pid: child.pid,
				cwd: editor.project,
				timestamp: nowSeconds(),
				editor_pid: editorPid,
				seq: 0,
				changed: [],
				last_turn: [],
			});
			path = writeRawStateFile(editor.stateDir, `pi-${child.pid}.json`, JSON.stringify(message));
			return path;
		},
		exit: async () => {
			if (path !== "" && existsSync(path)) unlinkSync(path);
			await child.kill();
		},
		kill: child.kill,
	};
}

/** A live pi connected to `editor`: its message written and handled (the state echoes it). */
async function connected(editor: Editor): Promise<Pi> {
	const pi = await livePi(editor);
	pi.say();
	await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === 0, "pi's message is handled");
	return pi;
}

/** Open a fresh copy of the 20 lines as `name`, change it without saving, and wait until the state names a copy. */
async function modified(editor: Editor, name: string, lines: string[]): Promise<{ file: string; serial: number }> {
	const file = editor.file(name, TEXT);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	await editor.session.setLines(file, lines);
	const state = await editor.until(
		(s) => activeFile(s) === file && s.active_buffer.modified && typeof s.buffers_serial === "number",
		`${name} modified, and the state naming the unsaved buffers`,
	);
	return { file, serial: state.buffers_serial as number };
}

/**
 * Wait until the copy the state file names (its serial newer than `after`) lists `file` with exactly `lines`: an
 * editor that applies a change in steps (Vim typing the lines) may name a copy of a step first, and a copy named a
 * moment ago may be replaced by a newer one while it is read (then look again).
 */
async function handedOver(
	editor: Editor,
	file: string,
	lines: string[],
	after = -1,
): Promise<{ entry: UnsavedBuffer; state: EditorState }> {
	let entry: UnsavedBuffer | undefined;
	const state = await editor.until((s) => {
		if (typeof s.buffers_serial !== "number" || s.buffers_serial <= after) return false;
		const path = join(editor.stateDir, editorBuffersFileName(editor.session.pid));
		const parsed = parseEditorBuffers(readFileSync(path, "utf8"), editor.session.pid, s.buffers_serial);
		entry = parsed.ok ? parsed.buffers.find((b) => b.file === file) : undefined;
		return entry?.text === lines.join("\n");
	}, `${file}'s unsaved text handed over`);
	assert.ok(entry);
	return { entry, state };
}

const noSerial = (s: { buffers_serial?: number | null }) => s.buffers_serial === undefined || s.buffers_serial === null;

export const cases: KitCase[] = [
	{
		name: "unsaved buffer: a modified buffer's text is handed over, and follows its version",
		ownEditors: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			const editor = await kit.start();
			const pi = await connected(editor);
			try {
				// JSON's escapes (quotes, a backslash, a tab) and UTF-8 beyond ASCII come back exactly.
				const first = [...LINES.slice(0, 2), 'UNSAVED 3 "quoted" \\ back\tslash é 日本', ...LINES.slice(3)];
				const { file } = await modified(editor, "unsaved.txt", first);
				const { entry, state } = await handedOver(editor, file, first);
				const serial = state.buffers_serial as number;
				const listed = readBuffers(editor, serial).find((b) => b.file === file);
				assert.ok(listed, `${file} is listed`);
				assert.equal(entry.lines_total, first.length);
				assert.equal(entry.note, undefined);
				await assertNoTempLeft(editor);
				// Another change: a newer copy, named by a newer serial, with the newer text and version.
				const second = [...first, "UNSAVED 21"];
				await editor.session.setLines(file, second);
				const { entry: next, state: later } = await handedOver(editor, file, second, serial);
				assert.ok(next.version > entry.version, `version ${next.version} after ${entry.version}`);
				if (later.active_buffer.version !== undefined) assert.equal(next.version, later.active_buffer.version);
			} finally {
				await pi.exit();
			}
		},
	},
	{
		name: "unsaved buffer: a modified buffer that is not the current one is handed over too, the current one first",
		ownEditors: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			const editor = await kit.start();
			const pi = await connected(editor);
			try {
				const behind = ["behind", "the current", "one"];
				const { file: hidden } = await modified(editor, "hidden.txt", behind);
				const front = ["in", "front"];
				const { file: current } = await modified(editor, "current.txt", front);
				const both = await editor.until((s) => {
					if (activeFile(s) !== current || typeof s.buffers_serial !== "number") return false;
					// A copy named a moment ago may be replaced by a newer one while it is read: look again.
					const path = join(editor.stateDir, editorBuffersFileName(editor.session.pid));
					const parsed = parseEditorBuffers(readFileSync(path, "utf8"), editor.session.pid, s.buffers_serial);
					return parsed.ok && parsed.buffers.length === 2;
				}, "both modified buffers listed");
				const listed = readBuffers(editor, both.buffers_serial as number);
				assert.deepEqual(
					listed.map((b) => [b.file, b.text]),
					[
						[current, front.join("\n")],
						[hidden, behind.join("\n")],
					],
					"the current buffer first, then the one behind it, each with its own text",
				);
				// The current one saved: the buffer behind it is still handed over, alone.
				await editor.session.save(current);
				const alone = await editor.until(
					(s) =>
						!s.active_buffer.modified &&
						typeof s.buffers_serial === "number" &&
						s.buffers_serial > (both.buffers_serial as number),
					"a newer copy once the current buffer is saved",
				);
				assert.deepEqual(
					readBuffers(editor, alone.buffers_serial as number).map((b) => [b.file, b.text]),
					[[hidden, behind.join("\n")]],
				);
			} finally {
				await pi.exit();
			}
		},
	},
	{
		name: "unsaved buffer: the copy is removed once the buffer is saved",
		ownEditors: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			// An editor of its own: the shared one may hold other cases' unsaved buffers.
			const editor = await kit.start();
			const pi = await connected(editor);
			try {
				const { file } = await modified(editor, "saved.txt", ["only", "line"]);
				const name = editorBuffersFileName(editor.session.pid);
				assert.ok(stateDirEntries(editor).includes(name), `${name} is there while the buffer is unsaved`);
				await editor.session.save(file);
				await editor.until(
					(s) => !s.active_buffer.modified && noSerial(s),
					"the saved buffer, and no unsaved buffers named",
				);
				await editor.until(() => !stateDirEntries(editor).includes(name), `${name} removed after the save`);
				await assertNoTempLeft(editor);
			} finally {
				await pi.exit();
			}
		},
	},
	{
		name: "unsaved buffer: a copy removed from under the editor is written again with its next write",
		ownEditors: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			const editor = await kit.start();
			const pi = await connected(editor);
			try {
				const lines = ["gone", "and", "back"];
				const { file } = await modified(editor, "again.txt", lines);
				const path = join(editor.stateDir, editorBuffersFileName(editor.session.pid));
				rmSync(path);
				// Any write: the cursor moves, the buffer is as it was.
				await editor.session.moveCursor({ line: 3, column: 2 });
				// The copy is written before the state naming it: wait for a state whose copy is there.
				const state = await editor.until(
					(s) =>
						s.active_buffer.cursor.line === 3 &&
						typeof s.buffers_serial === "number" &&
						existsSync(path) &&
						parseEditorBuffers(readFileSync(path, "utf8"), editor.session.pid, s.buffers_serial).ok,
					`${path} written again, and named`,
				);
				const serial = state.buffers_serial as number;
				assert.equal(readBuffers(editor, serial).find((b) => b.file === file)?.text, lines.join("\n"));
			} finally {
				await pi.exit();
			}
		},
	},
	{
		name: "unsaved buffer: a buffer over the 2 MiB cap is listed without its text",
		ownEditors: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			const editor = await kit.start();
			const pi = await connected(editor);
			try {
				// 4,000 lines of 600 characters: 2.4 MB of text, over MAX_UNSAVED_TEXT_BYTES once encoded.
				const big = Array.from({ length: 4000 }, (_, i) => `${String(i + 1).padStart(8, "0")} ${"x".repeat(591)}`);
				assert.ok(big.join("\n").length > MAX_UNSAVED_TEXT_BYTES);
				const { file, serial } = await modified(editor, "big.txt", big);
				const entry = readBuffers(editor, serial).find((b) => b.file === file);
				assert.ok(entry, `${file} is listed`);
				assert.equal(entry.note, "too_large");
				assert.equal(entry.text, undefined);
				assert.equal(entry.lines_total, big.length);
			} finally {
				await pi.exit();
			}
		},
	},
	{
		name: "unsaved buffer: no pi connected: no copy written; one is written as a pi connects, and goes with it",
		ownEditors: true,
		long: true,
		needs: ["edit", "unsaved-buffers"],
		run: async (kit) => {
			const editor = await kit.start();
			const name = editorBuffersFileName(editor.session.pid);
			const file = editor.file("alone.txt", TEXT);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "alone.txt open");
			const lines = ["nobody", "is", "listening"];
			await editor.session.setLines(file, lines);
			await editor.until((s) => activeFile(s) === file && s.active_buffer.modified, "alone.txt modified");
			// A pi that names another editor is no pi of ours; nor is a dead one's message.
			const elsewhere = await livePi(editor);
			elsewhere.say(editor.session.pid + 100_000);
			try {
				await editor.session.moveCursor({ line: 2, column: 1 });
				await editor.until((s) => s.active_buffer.cursor.line === 2, "a write after the cursor moved");
				await quietPeriod();
				const alone = await editor.until(() => true, "the state");
				assert.ok(noSerial(alone), `no unsaved buffers named without a pi: ${alone.buffers_serial}`);
				assert.ok(!stateDirEntries(editor).includes(name), `no ${name} without a pi`);
			} finally {
				await elsewhere.exit();
			}
			// The ways a pi stops being connected: it exits (its message removed), it is killed (the message stays),
			// it connects to another editor. Each time the copy goes; the next pi to connect gets one at once.
			const departures: [string, (pi: Pi) => Promise<void>][] = [
				["exits", (pi) => pi.exit()],
				["is killed", (pi) => pi.kill()],
				["connects elsewhere", async (pi) => void pi.say(editor.session.pid + 100_000)],
			];
			for (const [how, leave] of departures) {
				const pi = await livePi(editor);
				try {
					pi.say();
					// No other change: the copy comes with pi's connection alone.
					const state = await editor.until(
						(s) => s.pi?.pid === pi.pid && typeof s.buffers_serial === "number",
						`(before pi ${how}) the state names the unsaved buffers once pi connects`,
					);
					const entry = readBuffers(editor, state.buffers_serial as number).find((b) => b.file === file);
					assert.equal(entry?.text, lines.join("\n"), `(before pi ${how}) the buffer's text`);
					await leave(pi);
					// A killed pi's message stays: the editor learns it is gone at its next probe of pi's pid (each second in
					// VS Code and Obsidian: editors/shared/pi-watcher.ts), then writes.
					await editor.until(noSerial, `no unsaved buffers named after pi ${how}`, 2 * WRITE_WAIT_MS);
					await editor.until(() => !stateDirEntries(editor).includes(name), `${name} removed after pi ${how}`);
				} finally {
					await pi.exit();
				}
			}
			await assertNoTempLeft(editor);
		},
	},
];
