/**
 * The state file's shape and limits (PROTOCOL.md, "Where the files live", "Limits", "The fields", "The
 * selection and its clock"): every file a client writes is read by pi's own validator (kit.ts, readAsPi),
 * named `<pid>.json` in canonical decimal with its `pid` field, 0600, no temp file left; positions are
 * 1-based with UTF-8 byte columns; the encoded selection text stays within 256 KiB, cut with `truncated`.
 */
import assert from "node:assert/strict";
import { closeSync, constants, openSync, readSync, statSync } from "node:fs";
import { basename } from "node:path";
import { MAX_SELECTION_TEXT_BYTES, MAX_STATE_FILE_BYTES } from "../../../src/protocol/limits.ts";
import { parseStateFileName } from "../../../src/protocol/state-dir.ts";
import { binaryishLines } from "../../helpers/nvim.ts";
import {
	activeFile,
	assertNoTempLeft,
	type Editor,
	encodedStringField,
	type KitCase,
	readAsPi,
	stateDirEntries,
} from "../kit.ts";

const TEXT = "first line\nsecond line\nthird line\n";

/** A line whose characters take 1, 2, 3 and 4 bytes: byte columns differ from character columns. */
const MULTIBYTE = "aé日😀x";

/** Open `name` (with `text`) in the shared editor and wait until the state file says so. */
async function openInShared(editor: Editor, name: string, text: string): Promise<string> {
	const file = editor.file(name, text);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} is the active buffer`);
	return file;
}

/**
 * A reader of `editor`'s state file, every 5 ms until `stop`, as pi reads it (`readAsPi` fails on a partial file),
 * that keeps the file of the version it last read open. A client that replaces the file (a temp file renamed over
 * it) leaves the file a reader holds as it was; one that writes the file in place changes it under the reader, and
 * `stop` fails then however briefly a partial file was there to see (the check needs no luck in timing).
 */
function holdingReader(editor: Editor): { versions: () => number; stop: () => void } {
	let held: { fd: number; text: string } | undefined;
	let versions = 0;
	let failure: unknown;
	const poll = () => {
		let fd: number;
		try {
			fd = openSync(editor.statePath, constants.O_RDONLY | constants.O_NOFOLLOW);
		} catch {
			return; // not there (yet): a replace never leaves the path empty, but the first write may be to come
		}
		const text = readWhole(fd);
		if (text === held?.text) return closeSync(fd);
		try {
			readAsPi(text, editor.statePath);
			if (held !== undefined && readWhole(held.fd) !== held.text) {
				throw new Error(
					"the state file a reader held changed under it: the client writes the file in place, not by replacing it",
				);
			}
		} catch (error) {
			closeSync(fd);
			throw error;
		}
		if (held !== undefined) closeSync(held.fd);
		held = { fd, text };
		versions++;
	};
	/** One poll, its failure kept for `stop` (a timer's callback must not throw); none after the first failure. */
	const step = () => {
		try {
			if (failure === undefined) poll();
		} catch (error) {
			failure = error;
		}
	};
	const timer = setInterval(step, 5);
	return {
		versions: () => versions,
		stop: () => {
			clearInterval(timer);
			step();
			if (held !== undefined) closeSync(held.fd);
			if (failure !== undefined) throw failure;
		},
	};
}

/** The whole content of the open file `fd`, read from its start (whatever its offset). */
function readWhole(fd: number): string {
	const chunks: Buffer[] = [];
	for (let at = 0; ; ) {
		const chunk = Buffer.alloc(64 * 1024);
		const n = readSync(fd, chunk, 0, chunk.length, at);
		if (n === 0) return Buffer.concat(chunks).toString("utf8");
		chunks.push(chunk.subarray(0, n));
		at += n;
	}
}

const CURSOR_CASES: { name: string; line: string; at: number; column: number }[] = [
	{ name: "the first column is 1", line: "abc", at: 0, column: 1 },
	{ name: "after a 2-byte character", line: MULTIBYTE, at: 2, column: 4 },
	{ name: "after 1+2+3+4 bytes of characters", line: MULTIBYTE, at: 4, column: 11 },
];

export const cases: KitCase[] = [
	{
		name: "state file: <pid>.json in canonical decimal, its pid, 0600, valid for pi, no temp file left",
		run: async (kit) => {
			const editor = await kit.shared();
			const file = await openInShared(editor, "shape.txt", TEXT);
			const state = editor.readState();
			assert.ok(state);
			const name = basename(editor.statePath);
			assert.equal(parseStateFileName(name), editor.session.pid, `${name} is the canonical name of the pid`);
			assert.equal(state.pid, editor.session.pid);
			assert.equal(state.app, kit.adapter.app);
			assert.equal(state.cwd, editor.project);
			assert.equal(activeFile(state), file);
			assert.equal(state.active_buffer.name, "shape.txt");
			assert.equal(state.active_buffer.lines_total, 3);
			assert.equal(state.active_buffer.modified, false);
			assert.ok(Math.abs(state.timestamp - Date.now() / 1000) < 60, "timestamp is unix seconds of now");
			assert.equal(statSync(editor.statePath).mode & 0o777, 0o600, "the state file is 0600");
			assert.equal(statSync(editor.stateDir).mode & 0o777, 0o700, "the state dir is 0700");
			const entries = stateDirEntries(editor);
			assert.ok(entries.includes(name));
			await assertNoTempLeft(editor);
		},
	},
	...CURSOR_CASES.map(
		(c): KitCase => ({
			name: `cursor: 1-based UTF-8 byte column, ${c.name}`,
			run: async (kit) => {
				const editor = await kit.shared();
				const chars = [...c.line];
				// A file per case: the shared editor keeps earlier ones open.
				const file = await openInShared(editor, `cursor-${c.column}.txt`, `${c.line}\nline two\n`);
				// Away first, so the wait below needs a new write.
				await editor.session.moveCursor({ line: 2, column: 1 });
				await editor.until((s) => s.active_buffer.cursor.line === 2, "the cursor on line 2");
				const column = Buffer.byteLength(chars.slice(0, c.at).join("")) + 1;
				assert.equal(column, c.column, "the table's column is the byte column");
				await editor.session.moveCursor({ line: 1, column });
				const state = await editor.until((s) => s.active_buffer.cursor.line === 1, "the cursor on line 1");
				assert.equal(activeFile(state), file);
				assert.deepEqual(state.active_buffer.cursor, { line: 1, column: c.column });
			},
		}),
	),
	{
		name: "selection: a single-line selection carries its exact columns and text, selected_at now",
		needs: ["selection"],
		run: async (kit) => {
			const editor = await kit.shared();
			await openInShared(editor, "single.txt", `${MULTIBYTE} tail\nline two\n`);
			const before = Date.now() / 1000;
			// From the 2-byte é (byte 2) to the 4-byte emoji (bytes 7-10), inclusive.
			await editor.session.select({ line: 1, column: 2 }, { line: 1, column: 7 });
			const state = await editor.until(
				(s) => (s.active_buffer.selection?.end.column ?? 0) >= 7,
				"the selection up to the emoji",
			);
			const selection = state.active_buffer.selection;
			assert.ok(selection);
			assert.equal(selection.text, "é日😀");
			assert.deepEqual(selection.start, { line: 1, column: 2 });
			assert.equal(selection.end.line, 1);
			// Inclusive end: the last selected character starts at byte 7 (some clients name its last byte, 10).
			assert.ok(selection.end.column >= 7 && selection.end.column <= 10, `end column ${selection.end.column}`);
			assert.ok(selection.selected_at !== null && selection.selected_at >= Math.floor(before) - 1);
			assert.ok(selection.selected_at <= Date.now() / 1000 + 1, "selected_at is not in the future");
			assert.ok(selection.truncated !== true, "a small selection is whole");
			await editor.session.clearSelection();
		},
	},
	{
		name: "selection: a multi-line selection carries whole lines, start before end",
		needs: ["selection"],
		run: async (kit) => {
			const editor = await kit.shared();
			await openInShared(editor, "multi.txt", "alpha\nbravo\ncharlie\ndelta\n");
			await editor.session.select({ line: 2, column: 3 }, { line: 3, column: 2 });
			const state = await editor.until((s) => s.active_buffer.selection?.end.line === 3, "the selection of lines 2-3");
			const selection = state.active_buffer.selection;
			assert.ok(selection);
			assert.equal(selection.text, "bravo\ncharlie");
			assert.equal(selection.end.line, 3);
			await editor.session.clearSelection();
		},
	},
	{
		name: "atomic replace: each of 10 writes of a 100 KB selection replaces the file whole: a reader never sees a partial file, and the file a reader holds never changes under it",
		needs: ["selection"],
		run: async (kit) => {
			const editor = await kit.shared();
			const lines = Array.from({ length: 2000 }, (_, i) => `${i} ${"abcdefghij".repeat(5)}`);
			await openInShared(editor, "atomic.txt", `${lines.join("\n")}\n`);
			const reader = holdingReader(editor);
			try {
				for (let i = 0; i < 5; i++) {
					await editor.session.select({ line: 1, column: 1 }, { line: 2000 - i, column: 1 });
					await editor.until((s) => s.active_buffer.selection?.end.line === 2000 - i, `selection ${i}`);
					await editor.session.clearSelection();
					await editor.session.moveCursor({ line: 1 + i, column: 1 });
					await editor.until((s) => s.active_buffer.cursor.line === 1 + i, `cursor ${i}`);
				}
			} finally {
				reader.stop();
			}
			assert.ok(reader.versions() >= 5, `the reader saw ${reader.versions()} different whole files`);
		},
	},
	{
		name: `limits: a huge selection is cut to ${MAX_SELECTION_TEXT_BYTES / 1024} KiB once encoded, with truncated; start/end keep the whole`,
		needs: ["selection"],
		run: async (kit) => {
			const editor = await kit.shared();
			// Control bytes encode sixfold (\u0001): ~200 KB of raw text is several times the cap once encoded.
			const lines = binaryishLines(200 * 1024).map((l) => l.replaceAll("\u0000", "\u0001"));
			await openInShared(editor, "huge.txt", `${lines.join("\n")}\n`);
			const last = lines.length;
			await editor.session.select({ line: 1, column: 1 }, { line: last, column: 1 });
			const state = await editor.until((s) => s.active_buffer.selection?.end.line === last, "the huge selection");
			const raw = editor.rawState();
			assert.ok(raw);
			const selection = state.active_buffer.selection;
			assert.ok(selection);
			assert.equal(selection.truncated, true);
			assert.deepEqual(selection.start, { line: 1, column: 1 });
			const encoded = encodedStringField(raw, "text");
			assert.ok(encoded !== undefined, "the file spells selection.text");
			assert.ok(
				Buffer.byteLength(encoded) <= MAX_SELECTION_TEXT_BYTES,
				`the encoded text is ${Buffer.byteLength(encoded)} bytes`,
			);
			assert.ok(Buffer.byteLength(raw) <= MAX_STATE_FILE_BYTES);
			assert.ok(selection.text.length > 0, "the text is cut, not dropped");
			assert.ok(lines.join("\n").startsWith(selection.text), "the text is a prefix of the selection");
			await editor.session.clearSelection();
		},
	},
];
