/**
 * editors/obsidian/src/snapshot.ts: languages by extension, vault-relative files with the vault root as cwd,
 * editing mode (CodeMirror positions -> byte columns), reading mode (rendered selection located in the
 * source, or dropped), and files without a Markdown view.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	type ActiveView,
	type EditorLike,
	type FileLike,
	languageForExtension,
	locateInSource,
	snapshotVault,
} from "../../../../editors/obsidian/src/snapshot.ts";
import { buildEditorState, MAX_SELECTION_TEXT_BYTES, SelectionClock } from "../../../../editors/shared/state.ts";
import { MAX_STATE_FILE_BYTES, validateEditorState } from "../../../../src/protocol/protocol.ts";
import { checkCappedSelection, endOf, HUGE_SELECTIONS } from "../../../fixtures/huge-selections.ts";

const VAULT = "/home/me/Vault";

function file(path: string): FileLike {
	const name = path.split("/").pop() ?? path;
	const dot = name.lastIndexOf(".");
	return { path, name, extension: dot > 0 ? name.slice(dot + 1) : "" };
}

function editor(text: string, anchor: [number, number], head: [number, number] = anchor): EditorLike {
	const lines = text.split("\n");
	const pos = ([line, ch]: [number, number]) => ({ line, ch });
	return {
		lineCount: () => lines.length,
		getLine: (line) => lines[line] ?? "",
		getCursor: (side) => (side === "anchor" ? pos(anchor) : pos(head)),
	};
}

/** The whole state file's content for `view`, checked against pi's validator. */
const buildState = (view: ActiveView) => {
	const state = buildEditorState(snapshotVault(view, VAULT), {
		pid: 99,
		app: "obsidian",
		now: 500,
		clock: new SelectionClock(),
	});
	const valid = validateEditorState(state);
	assert.ok(valid.ok, JSON.stringify(valid));
	assert.equal(state.cwd, VAULT);
	assert.deepEqual(state.argv, [VAULT]);
	assert.equal(state.app, "obsidian");
	return state;
};

const build = (view: ActiveView) => buildState(view).active_buffer;

describe("languageForExtension", () => {
	const cases: [string, string | null][] = [
		["md", "markdown"],
		["MD", "markdown"],
		["canvas", "json"],
		["base", "yaml"],
		["ts", "typescript"],
		["pdf", "pdf"],
		["excalidraw", "excalidraw"],
		["", null],
	];
	for (const [ext, expected] of cases) {
		test(`${JSON.stringify(ext)} -> ${expected}`, () => assert.equal(languageForExtension(ext), expected));
	}
});

describe("locateInSource", () => {
	const source = "# Title\n\nSome **bold** text.\nA line.\nA line.\n";
	const cases: [string, string, { from: number; to: number } | null][] = [
		["plain text", "Some ", { from: 9, to: 14 }],
		["across lines", "text.\nA line.", { from: 23, to: 36 }],
		["first of two occurrences", "A line.", { from: 29, to: 36 }],
		["rendered bold is not in the source", "Some bold text.", null],
		["whitespace only", " \n ", null],
		["empty", "", null],
		["CRLF from the clipboard-ish DOM", "text.\r\nA line.", { from: 23, to: 36 }],
	];
	for (const [name, selected, expected] of cases) {
		test(name, () => assert.deepEqual(locateInSource(source, selected), expected));
	}
});

describe("snapshotVault -> state", () => {
	const note = "# 日記\n\nToday 😀 I wrote\nsome notes.\n";

	test("no active file: unnamed buffer, vault root as cwd", () => {
		const buffer = build({ kind: "none" });
		assert.equal(buffer.file, null);
		assert.equal(buffer.lines_total, 0);
	});

	test("editing mode: vault-relative path, markdown, byte columns", () => {
		const buffer = build({ kind: "editing", file: file("Journal/2026/日記.md"), editor: editor(note, [2, 8]) });
		assert.equal(buffer.file, "Journal/2026/日記.md");
		assert.equal(buffer.name, "日記.md");
		assert.equal(buffer.language, "markdown");
		assert.deepEqual(buffer.cursor, { line: 3, column: 11 }, "after 'Today 😀' = 6 + 4 bytes");
		assert.equal(buffer.selection, null);
		assert.equal(buffer.lines_total, 4);
		assert.equal(buffer.modified, false);
	});

	// anchor/head: the editor's [line, ch], 0-based UTF-16; start/end: the state's [line, byte column], 1-based
	type Pos = [number, number];
	const selections: { name: string; anchor: Pos; head: Pos; start: Pos; end: Pos; text: string }[] = [
		{ name: "single line with an emoji", anchor: [2, 6], head: [2, 8], start: [3, 7], end: [3, 10], text: "😀" },
		{ name: "single line, backwards", anchor: [0, 4], head: [0, 2], start: [1, 3], end: [1, 8], text: "日記" },
		{
			name: "multi-line: whole lines",
			anchor: [2, 9],
			head: [3, 4],
			start: [3, 12],
			end: [4, 4],
			text: "Today 😀 I wrote\nsome notes.",
		},
	];
	for (const { name, anchor, head, start, end, text } of selections) {
		test(`editing mode selection: ${name}`, () => {
			const buffer = build({ kind: "editing", file: file("a.md"), editor: editor(note, anchor, head) });
			assert.deepEqual(buffer.selection, {
				start: { line: start[0], column: start[1] },
				end: { line: end[0], column: end[1] },
				text,
				selected_at: 500,
			});
		});
	}

	test("reading mode: no cursor; a selection found in the source is reported with its lines", () => {
		const buffer = build({ kind: "reading", file: file("a.md"), source: note, selectedText: "I wrote\nsome" });
		assert.deepEqual(buffer.cursor, { line: null, column: null });
		assert.deepEqual(buffer.selection, {
			start: { line: 3, column: 12 },
			end: { line: 4, column: 4 },
			text: "Today 😀 I wrote\nsome notes.",
			selected_at: 500,
		});
	});

	test("reading mode: a selection that is not in the source is not reported", () => {
		const buffer = build({ kind: "reading", file: file("a.md"), source: "**bold** x", selectedText: "bold x" });
		assert.equal(buffer.selection, null);
		assert.equal(buffer.lines_total, 1);
	});

	test("a file without a Markdown view (PDF): path and language, no cursor, no lines", () => {
		const buffer = build({ kind: "file", file: file("Papers/paper.pdf") });
		assert.equal(buffer.file, "Papers/paper.pdf");
		assert.equal(buffer.language, "pdf");
		assert.deepEqual(buffer.cursor, { line: null, column: null });
		assert.equal(buffer.lines_total, 0);
	});
});

describe("a select-all of a huge note keeps the whole state file under pi's 1 MiB limit, and says it was cut", () => {
	const limits = { file: MAX_STATE_FILE_BYTES, selection: MAX_SELECTION_TEXT_BYTES };
	for (const { name, text } of HUGE_SELECTIONS) {
		test(`editing mode: ${name}`, () => {
			const end = endOf(text);
			const view: ActiveView = {
				kind: "editing",
				file: file("big.md"),
				editor: editor(text, [0, 0], [end.line, end.character]),
			};
			checkCappedSelection(buildState(view), text, limits);
		});
	}

	test("reading mode: a huge rendered selection found in the source", () => {
		const text = HUGE_SELECTIONS[0]?.text ?? assert.fail("no fixture");
		const view: ActiveView = { kind: "reading", file: file("big.md"), source: text, selectedText: text };
		checkCappedSelection(buildState(view), text, limits);
	});

	test("a selection that fits is sent whole, without the field", () => {
		const view: ActiveView = { kind: "editing", file: file("a.md"), editor: editor("ab\ncd", [0, 0], [1, 1]) };
		const selection = build(view).selection;
		assert.deepEqual(selection && { text: selection.text, truncated: "truncated" in selection }, {
			text: "ab\ncd", // multi-line selections carry whole lines
			truncated: false,
		});
	});
});
