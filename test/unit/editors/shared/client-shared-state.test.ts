/**
 * editors/shared/state.ts: UTF-16 -> UTF-8 byte columns, selection normalization (single vs multi-line,
 * line-break ends, surrogates), line counts, selected_at bookkeeping, and that every built state passes the
 * pi side's own v0.2 validator.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	buildEditorState,
	byteColumn,
	countLines,
	type DocumentSnapshot,
	describeSelection,
	encodeStateFile,
	fitStateFile,
	type HostPosition,
	jsonStringBytes,
	linesOf,
	MAX_SELECTION_TEXT_BYTES,
	NO_NAME,
	positionAt,
	SelectionClock,
	stateKey,
} from "../../../../editors/shared/state.ts";
import { utf8Length } from "../../../../editors/shared/utf16.ts";
import { validateEditorState } from "../../../../src/protocol/protocol.ts";

const at = (line: number, character: number): HostPosition => ({ line, character });

describe("jsonStringBytes: what a string costs inside the state file", () => {
	const cases: [string, string][] = [
		["ascii", "hello"],
		["quote and backslash", '"\\'],
		["short escapes", "\b\t\n\f\r"],
		["other C0 controls", "\u0000\u0001\u001b\u001f"],
		["DEL and C1 stay raw", "\u007f\u0085\u009b"],
		["two- and three-byte", "é漢"],
		["surrogate pair", "😀"],
		["lone high, lone low, reversed pair", "\ud800x\udc00\udc00\ud800"],
		["high surrogate at the end", "a\ud83d"],
		["U+2028/2029", "\u2028\u2029"],
	];
	for (const [name, text] of cases) {
		test(name, () => assert.equal(jsonStringBytes(text), Buffer.byteLength(JSON.stringify(text), "utf8") - 2));
	}
});

describe("utf8Length / byteColumn", () => {
	// [description, line, utf16 offset, expected 1-based byte column]
	const cases: [string, string, number, number][] = [
		["ascii start", "hello", 0, 1],
		["ascii middle", "hello", 3, 4],
		["ascii end (cursor past last char)", "hello", 5, 6],
		["past the end is clamped", "hello", 99, 6],
		["negative is clamped", "hello", -3, 1],
		["2-byte latin", "héllo", 2, 4],
		["3-byte CJK", "日本語x", 2, 7],
		["after CJK", "日本語x", 3, 10],
		["emoji is 2 UTF-16 units, 4 bytes", "a😀b", 3, 6],
		["inside a surrogate pair -> the pair's first byte", "a😀b", 2, 2],
		["two emoji", "😀😀", 2, 5],
		["ZWJ family: each part counts", "👩‍👧x", 5, 12],
		["combining accent: 2 code points", "e\u0301x", 2, 4],
		["lone high surrogate counts 3 bytes", "\ud800x", 1, 4],
		["tab is one byte", "\tx", 1, 2],
		["empty line", "", 0, 1],
	];
	for (const [name, line, character, expected] of cases) {
		test(`${name}: ${JSON.stringify(line)} @${character} -> ${expected}`, () => {
			assert.equal(byteColumn(line, character), expected);
		});
	}

	test("utf8Length matches Buffer.byteLength for well-formed text", () => {
		for (const text of ["", "abc", "héllo", "日本語", "a😀b", "👩‍👧", "ÿ\u07ff\u0800\uffff"]) {
			assert.equal(utf8Length(text), Buffer.byteLength(text, "utf8"), text);
		}
	});
});

describe("describeSelection", () => {
	const doc = linesOf(["const a = 1;", "日本語 text", "emoji 😀 here", "", "last line"].join("\n"));
	interface SelectionCase {
		name: string;
		anchor: HostPosition;
		head: HostPosition;
		/** Expected [line, column] of the start and end, and the text; all absent: no selection. */
		start?: [number, number];
		end?: [number, number];
		text?: string;
	}
	const cases: SelectionCase[] = [
		{ name: "empty (anchor == head)", anchor: at(0, 3), head: at(0, 3) },
		{ name: "single line, exact columns", anchor: at(0, 6), head: at(0, 7), start: [1, 7], end: [1, 7], text: "a" },
		{
			name: "single line, reversed (head before anchor)",
			anchor: at(0, 12),
			head: at(0, 6),
			start: [1, 7],
			end: [1, 12],
			text: "a = 1;",
		},
		{
			name: "single line with CJK: bytes, not UTF-16",
			anchor: at(1, 0),
			head: at(1, 3),
			start: [2, 1],
			end: [2, 9],
			text: "日本語",
		},
		{
			name: "single line ending on an emoji: end = its last byte",
			anchor: at(2, 6),
			head: at(2, 8),
			start: [3, 7],
			end: [3, 10],
			text: "😀",
		},
		{
			name: "single line after an emoji",
			anchor: at(2, 9),
			head: at(2, 13),
			start: [3, 12],
			end: [3, 15],
			text: "here",
		},
		{
			name: "multi-line: full lines",
			anchor: at(0, 6),
			head: at(2, 5),
			start: [1, 7],
			end: [3, 5],
			text: "const a = 1;\n日本語 text\nemoji 😀 here",
		},
		{
			name: "multi-line reversed",
			anchor: at(2, 5),
			head: at(0, 6),
			start: [1, 7],
			end: [3, 5],
			text: "const a = 1;\n日本語 text\nemoji 😀 here",
		},
		{
			name: "ends at column 0 of a later line: that line is not selected",
			anchor: at(0, 0),
			head: at(2, 0),
			start: [1, 1],
			end: [2, 14],
			text: "const a = 1;\n日本語 text",
		},
		{
			name: "whole line by shift+down: single line with its newline",
			anchor: at(1, 0),
			head: at(2, 0),
			start: [2, 1],
			end: [2, 14],
			text: "日本語 text\n",
		},
		{
			name: "only a line break: clamped onto the last character, like nvim",
			anchor: at(0, 12),
			head: at(1, 0),
			start: [1, 12],
			end: [1, 12],
			text: "\n",
		},
		{
			name: "through an empty line",
			anchor: at(2, 0),
			head: at(4, 4),
			start: [3, 1],
			end: [5, 4],
			text: "emoji 😀 here\n\nlast line",
		},
		{
			name: "positions past the document are clamped",
			anchor: at(4, 5),
			head: at(99, 99),
			start: [5, 6],
			end: [5, 9],
			text: "line",
		},
	];
	for (const { name, anchor, head, start, end, text } of cases) {
		test(name, () => {
			const range = describeSelection(doc, anchor, head);
			if (start === undefined || end === undefined || text === undefined) {
				assert.equal(range, null);
				return;
			}
			assert.deepEqual(range, {
				start: { line: start[0], column: start[1] },
				end: { line: end[0], column: end[1] },
				text,
			});
		});
	}

	test("a huge selection is cut at a line boundary below the cap, and says so", () => {
		const line = "x".repeat(1000);
		const huge = linesOf(Array.from({ length: 1000 }, () => line).join("\n"));
		const range = describeSelection(huge, at(0, 0), at(999, 1000));
		assert.ok(range);
		assert.ok(jsonStringBytes(range.text) <= MAX_SELECTION_TEXT_BYTES);
		// 1000 bytes per line plus 2 for each encoded "\n" between lines
		assert.equal(range.text.split("\n").length, Math.floor((MAX_SELECTION_TEXT_BYTES + 2) / 1002));
		assert.equal(range.truncated, true);
		assert.deepEqual(range.end, { line: 1000, column: 1000 }, "the range still says what was selected");
	});

	test("the cap counts encoded bytes: a line of control characters is cut to a sixth", () => {
		const range = describeSelection(
			linesOf("\u0001".repeat(MAX_SELECTION_TEXT_BYTES)),
			at(0, 0),
			at(0, MAX_SELECTION_TEXT_BYTES),
		);
		assert.ok(range);
		assert.equal(range.text.length, Math.floor(MAX_SELECTION_TEXT_BYTES / 6));
		assert.equal(range.truncated, true);
	});

	test("a select-all in a huge file reads lines only up to the cap", () => {
		const big = linesOf(Array.from({ length: 10_000 }, () => "x".repeat(1000)).join("\n"));
		let reads = 0;
		const counted = {
			count: big.count,
			text: (line: number) => {
				reads++;
				return big.text(line);
			},
		};
		const range = describeSelection(counted, at(0, 0), at(9_999, 1000));
		assert.ok(range);
		const kept = range.text.split("\n").length;
		// The kept lines, the one that passed the cap, and the edge lines read for the columns.
		assert.ok(reads <= kept + 4, `${reads} line reads for ${kept} kept lines`);
	});

	test("one over-long line is cut on a character boundary", () => {
		const long = linesOf("😀".repeat(MAX_SELECTION_TEXT_BYTES));
		const range = describeSelection(long, at(0, 0), at(0, 2 * MAX_SELECTION_TEXT_BYTES));
		assert.ok(range);
		assert.equal(utf8Length(range.text), MAX_SELECTION_TEXT_BYTES);
		assert.equal(Buffer.from(range.text, "utf8").toString("utf8"), range.text, "no broken surrogate");
	});
});

describe("countLines", () => {
	const cases: [string, string, number][] = [
		["empty buffer", "", 1],
		["one line, no newline", "a", 1],
		["one line with final newline", "a\n", 1],
		["two lines", "a\nb", 2],
		["two lines with final newline", "a\nb\n", 2],
		["trailing blank line kept", "a\n\n", 2],
		["CRLF", "a\r\nb\r\n", 2],
	];
	for (const [name, text, expected] of cases) {
		test(`${name} -> ${expected}`, () => assert.equal(countLines(linesOf(text)), expected));
	}
});

describe("positionAt", () => {
	const cases: [string, number, HostPosition][] = [
		["ab\ncd", 0, at(0, 0)],
		["ab\ncd", 2, at(0, 2)],
		["ab\ncd", 3, at(1, 0)],
		["ab\r\ncd", 5, at(1, 1)],
		["a😀\nb", 3, at(0, 3)],
		["ab", 99, at(0, 2)],
	];
	for (const [text, offset, expected] of cases) {
		test(`${JSON.stringify(text)} @${offset}`, () => assert.deepEqual(positionAt(text, offset), expected));
	}
});

describe("SelectionClock", () => {
	const range = (line: number) => ({ start: { line, column: 1 }, end: { line, column: 3 }, text: "abc" });

	test("selected_at is kept while the selection stays, reset when it changes or goes", () => {
		const clock = new SelectionClock();
		// key: the document; line: the selected range's line (null = no selection); expected: selected_at
		const steps: { step: string; key: string; line: number | null; now: number; expected: number | null }[] = [
			{ step: "select", key: "a", line: 1, now: 100, expected: 100 },
			{ step: "same selection later", key: "a", line: 1, now: 150, expected: 100 },
			{ step: "extended", key: "a", line: 2, now: 160, expected: 160 },
			{ step: "other document", key: "b", line: 1, now: 170, expected: 170 },
			{ step: "back to a, untouched", key: "a", line: 2, now: 200, expected: 160 },
			{ step: "cleared", key: "a", line: null, now: 210, expected: null },
			{ step: "same range again is a new selection", key: "a", line: 2, now: 220, expected: 220 },
		];
		for (const { step, key, line, now, expected } of steps) {
			assert.equal(clock.stamp(key, line === null ? null : range(line), now), expected, step);
		}
	});

	test("only the most recent documents are remembered", () => {
		const clock = new SelectionClock(2);
		clock.stamp("a", range(1), 1);
		clock.stamp("b", range(1), 2);
		clock.stamp("c", range(1), 3);
		assert.equal(clock.stamp("b", range(1), 9), 2);
		assert.equal(clock.stamp("a", range(1), 9), 9, "a was evicted");
	});
});

describe("buildEditorState", () => {
	const document = (overrides: Partial<DocumentSnapshot> = {}): DocumentSnapshot => ({
		key: "file:///w/a.ts",
		file: "/w/a.ts",
		name: "a.ts",
		language: "typescript",
		lines: linesOf("let x = '😀';\nlet y = 2;\n"),
		cursor: at(0, 11),
		selection: { anchor: at(0, 9), head: at(0, 11) },
		modified: true,
		...overrides,
	});

	// [description, document, expected active_buffer subset]
	const cases: [string, DocumentSnapshot | null, Record<string, unknown>][] = [
		[
			"file with a single-line selection",
			document(),
			{
				file: "/w/a.ts",
				cursor: { line: 1, column: 14 },
				selection: { start: { line: 1, column: 10 }, end: { line: 1, column: 13 }, text: "😀", selected_at: 1000 },
				modified: true,
				lines_total: 2,
			},
		],
		[
			"untitled: file null",
			document({ key: "untitled:Untitled-1", file: null, name: "Untitled-1", selection: null }),
			{ file: null, name: "Untitled-1", selection: null },
		],
		["empty path counts as unnamed", document({ file: "" }), { file: null }],
		["no cursor (reading mode)", document({ cursor: null, selection: null }), { cursor: { line: null, column: null } }],
		[
			"no document",
			null,
			{ file: null, name: NO_NAME, language: null, cursor: { line: null, column: null }, lines_total: 0 },
		],
	];
	for (const [name, doc, expected] of cases) {
		test(name, () => {
			const state = buildEditorState(
				{ cwd: "/w", argv: ["/w"], document: doc },
				{ pid: 4242, app: "vscode", now: 1000, clock: new SelectionClock() },
			);
			const valid = validateEditorState(state);
			assert.ok(valid.ok, JSON.stringify(valid));
			assert.equal(state.app, "vscode");
			assert.deepEqual(state.argv, ["/w"]);
			for (const [key, value] of Object.entries(expected)) {
				assert.deepEqual((state.active_buffer as Record<string, unknown>)[key], value, key);
			}
		});
	}

	test("stateKey ignores only the timestamp", () => {
		const clock = new SelectionClock();
		const build = (now: number, doc: DocumentSnapshot) =>
			buildEditorState({ cwd: "/w", argv: [], document: doc }, { pid: 1, app: "vscode", now, clock });
		const first = build(1000, document());
		assert.equal(stateKey(build(1005, document())), stateKey(first), "same selection, later write");
		assert.notEqual(stateKey(build(1006, document({ modified: false }))), stateKey(first));
	});
});

describe("fitStateFile: the whole encoded file stays within the limit (PROTOCOL.md, Limits)", () => {
	/** A small limit, so the cases are small; the client passes pi's 1 MiB. */
	const LIMIT = 4096;
	const numbered = Array.from({ length: 200 }, (_, i) => `line ${String(i).padStart(4, "0")}`).join("\n");
	const escapeHeavy = Array.from({ length: 200 }, () => '"\\\u0001é😀').join("\n");

	interface Case {
		description: string;
		/** The window's folders (VS Code's argv): the part of the file that is not the selection. */
		argv: string[];
		/** The document, selected whole; null for no document. */
		text: string | null;
		expected: "as built" | "cut" | "refused";
	}
	const cases: Case[] = [
		{ description: "a file within the limit is written as built", argv: ["/w"], text: numbered, expected: "as built" },
		{
			description: "long folder paths: the selection is cut further and marked truncated",
			argv: [`/${"f".repeat(2500)}`],
			text: numbered,
			expected: "cut",
		},
		{
			description: "escape-heavy text is cut by its encoded size",
			argv: [`/${"f".repeat(2500)}`],
			text: escapeHeavy,
			expected: "cut",
		},
		{
			description: "even an empty selection would not fit: nothing to write",
			argv: [`/${"f".repeat(LIMIT)}`],
			text: numbered,
			expected: "refused",
		},
		{
			description: "too big without a selection: nothing to write",
			argv: [`/${"f".repeat(LIMIT)}`],
			text: null,
			expected: "refused",
		},
	];

	const build = (argv: string[], text: string | null) => {
		const lines = text === null ? null : linesOf(text);
		const last = lines === null ? 0 : lines.count - 1;
		const document: DocumentSnapshot | null =
			lines === null
				? null
				: {
						key: "k",
						file: "/w/a.txt",
						name: "a.txt",
						language: "plaintext",
						lines,
						cursor: at(0, 0),
						selection: { anchor: at(0, 0), head: at(last, lines.text(last).length) },
						modified: false,
					};
		return buildEditorState(
			{ cwd: "/w", argv, document },
			{ pid: 7, app: "vscode", now: 100, clock: new SelectionClock() },
		);
	};

	for (const { description, argv, text, expected } of cases) {
		test(description, () => {
			const state = build(argv, text);
			const fitted = fitStateFile(state, LIMIT);
			if (expected === "refused") {
				assert.deepEqual(fitted, { ok: false, bytes: encodeStateFile(state).length });
				return;
			}
			assert.ok(fitted.ok);
			assert.ok(fitted.content.length <= LIMIT, `${fitted.content.length} bytes`);
			assert.deepEqual(fitted.content, encodeStateFile(fitted.state));
			const valid = validateEditorState(JSON.parse(fitted.content.toString("utf8")));
			assert.ok(valid.ok, JSON.stringify(valid));
			if (expected === "as built") {
				assert.deepEqual(fitted.state, state);
				return;
			}
			const before = state.active_buffer.selection;
			const after = fitted.state.active_buffer.selection;
			assert.ok(before !== null && after !== null);
			assert.equal(before.truncated, undefined, "the text was whole before");
			assert.equal(after.truncated, true);
			assert.deepEqual([after.start, after.end], [before.start, before.end], "start/end still the whole selection");
			assert.ok(before.text.startsWith(after.text) && after.text.length < before.text.length);
			// Cut at a line boundary, so at most one line (plus its newline) of room is left unused.
			const longestLine = Math.max(...before.text.split("\n").map((line) => jsonStringBytes(line)));
			assert.ok(fitted.content.length > LIMIT - longestLine - 2, `${fitted.content.length} bytes: cut too much`);
		});
	}
});
