import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	blockSentKey,
	canonicalState,
	keyedSections,
	parseBlock,
	selectionIdentity,
	sentLine,
	sentSelectionsIn,
} from "../../../src/context/block-sections.ts";
import { type BlockSections, blockText, type ContextBlock, formatContextBlock } from "../../../src/context/blocks.ts";
import { appendPromptDiagnostics } from "../../../src/context/diagnostics.ts";
import { formatSend } from "../../../src/link/send-deliver.ts";
import type { DiagnosticItem, EditorState, Selection } from "../../../src/protocol/protocol.ts";
import type { SendRequest } from "../../../src/protocol/send.ts";
import { specDatabaseView } from "../../fixtures/database-view.ts";
import { mulberry32 } from "../../helpers/seeded.ts";
import { makeState } from "../../helpers/state-files.ts";

/**
 * The block's sections and its text agree both ways: the text is rendered from the sections, and the one parser
 * (for text read back from the session) reads a block's own text as the sections it was rendered from, so what
 * the request check rebuilds from the session is what the decision saw. Any text, however odd (an older
 * version's, cut by a pruner), parses to sections that render back to exactly that text.
 */

const NOW = 1_800_000_000;

function state(buffer: Partial<EditorState["active_buffer"]> = {}, overrides: Partial<EditorState> = {}): EditorState {
	return { ...makeState({ cwd: "/p", timestamp: NOW - 1, active_buffer: buffer }), ...overrides };
}

function sel(text: string, start: number, end: number, age = 3, columns: [number, number] = [1, 9]): Selection {
	return {
		start: { line: start, column: columns[0] },
		end: { line: end, column: columns[1] },
		text,
		selected_at: NOW - age,
	};
}

const diagnostic = (line: number, message: string): DiagnosticItem => ({ severity: "error", line, column: 1, message });

/** Built sections and the parse of their text: the same text, the same keys, canonical form, identity, screen line. */
function assertAgrees(block: ContextBlock, label: string): void {
	const text = blockText(block.sections);
	assert.equal(block.text, text, `${label}: the block's text is rendered from its sections`);
	const parsed = parseBlock(text);
	assert.equal(blockText(parsed), text, `${label}: render(parse(render(s))) = render(s)`);
	const kinds = (b: BlockSections) => keyedSections(b).map(([key, s]) => `${key}:${s.kind}`);
	assert.deepEqual(kinds(parsed), kinds(block.sections), `${label}: same sections, same kinds`);
	assert.deepEqual(parsed.header, block.sections.header, `${label}: same header`);
	const identity = selectionIdentity(block.details, block.sections);
	assert.deepEqual(selectionIdentity(block.details, parsed), identity, `${label}: same selection identity`);
	assert.deepEqual(canonicalState(parsed, identity), canonicalState(block.sections, identity), `${label}: canonical`);
	assert.equal(sentLine(parsed, block.details), sentLine(block.sections, block.details), `${label}: screen line`);
}

describe("block sections: rendered text and parsed sections round-trip", () => {
	const cases: Array<{ name: string; state: EditorState; caps?: { lines: number; bytes: number } }> = [
		{ name: "file, language, cursor, buffer", state: state() },
		{
			name: "no language, no cursor",
			state: state({ file: "/p/README", language: null, cursor: { line: null, column: null } }),
		},
		{ name: "cursor without a column, one line", state: state({ cursor: { line: 3, column: null }, lines_total: 1 }) },
		{ name: "unsaved changes", state: state({ modified: true }) },
		{ name: "selection on one line", state: state({ selection: sel("run(argv)", 40, 40, 0, [5, 14]) }) },
		{ name: "selection over lines, 59 s old", state: state({ selection: sel("a\nb\nc", 40, 42, 59) }) },
		{ name: "selection holding fences", state: state({ selection: sel("```ts\nx\n````\n", 1, 4) }) },
		{ name: "empty selection text", state: state({ selection: sel("", 7, 7) }) },
		{ name: "selection cut by the editor", state: state({ selection: { ...sel("a\nb", 1, 2), truncated: true } }) },
		{
			name: "selection cut to the caps (KiB)",
			state: state({
				selection: sel(Array.from({ length: 400 }, (_, i) => `line ${i} ${"x".repeat(20)}`).join("\n"), 1, 400),
			}),
			caps: { lines: 100, bytes: 2000 },
		},
		{ name: "a language no fence takes", state: state({ language: "c++ (gnu)", selection: sel("int x;", 1, 1) }) },
		{
			name: "a file name with an age, key words and a newline",
			state: state({ file: "/p/made 5 s ago\nCursor: line 1.ts" }),
		},
		{
			name: "diagnostics",
			state: state({
				version: 2,
				diagnostics: { version: 2, total: 2, items: [diagnostic(3, "Cursor: line 9"), diagnostic(9, "```")] },
			}),
		},
		{ name: "diagnostics: none", state: state({ version: 1, diagnostics: { version: 1, total: 0, items: [] } }) },
		{
			name: "database view",
			state: state({ file: null, name: "rooms" }, { app: "datagrip", database: specDatabaseView() }),
		},
	];
	for (const c of cases) {
		it(c.name, () => {
			const s = c.state;
			const file = s.database ? null : s.active_buffer.file;
			const options = { now: NOW, maxSelectionLines: c.caps?.lines, maxSelectionBytes: c.caps?.bytes };
			const block = formatContextBlock(s, file, options);
			assert.ok(block);
			assertAgrees(appendPromptDiagnostics(block, s), c.name);
		});
	}

	const texts: Array<{ name: string; text: string; kinds: string[] }> = [
		{
			name: "an older version's selection head (150 s: never written so) stays as its lines",
			text: "The user's editor (Vim) shows this file:\nFile: /a\nSelection (lines 1-2, made 150 s ago):\n```\na\nb\n```",
			kinds: ["File:file", "Selection:text"],
		},
		{
			name: "a selection cut by a pruner inside its fence",
			text: "The user's editor (Vim) shows this file:\nFile: /a\nSelection (lines 1-2, made 3 s ago):\n```\na",
			kinds: ["File:file", "Selection:text"],
		},
		{
			name: "a cursor of another shape, an unknown key, an indented item",
			text: "Editor update (Vim), the rest as before:\nCursor: line 4, col 2\nMarks (2):\n  - a\nBuffer: 2 lines, saved",
			kinds: ["Cursor:text", "Marks:text", "Buffer:buffer"],
		},
		{ name: "no sections, an empty text", text: "", kinds: [] },
		{ name: "lines before any key", text: "header\nlower case\n```\nFile: inside\n```", kinds: ["Text:text"] },
	];
	for (const c of texts) {
		it(`text from a session: ${c.name}`, () => {
			const parsed = parseBlock(c.text);
			assert.equal(blockText(parsed), c.text);
			assert.deepEqual(
				keyedSections(parsed).map(([key, s]) => `${key}:${s.kind}`),
				c.kinds,
			);
		});
	}
});

/**
 * Seeded: random editor states (odd names, fences in selections, caps, ages, diagnostics, database views) built
 * into blocks must agree with the parse of their text; random texts (key-like lines, fences, cut sections) must
 * parse to sections that render back to exactly that text. PI_IDE_SECTIONS_SEED replays one seed.
 */
describe("block sections: seeded round trips", () => {
	const SEEDS = process.env["PI_IDE_SECTIONS_SEED"]
		? [Number(process.env["PI_IDE_SECTIONS_SEED"])]
		: Array.from({ length: 40 }, (_, i) => 7001 + i);
	const pick = <T>(random: () => number, xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
	const WORDS = ["a", "`", "```", "````", "Cursor: line 2", "made 3 s ago", "é", "\t", " ", "x (y):", "\n", "- item"];
	const words = (random: () => number, n: number) =>
		Array.from({ length: Math.floor(random() * n) }, () => pick(random, WORDS)).join(pick(random, ["", " ", "\n"]));

	function randomState(random: () => number): { state: EditorState; caps: { lines: number; bytes: number } } {
		const int = (n: number) => Math.floor(random() * n);
		const caps = { lines: pick(random, [1, 3, 1000]), bytes: pick(random, [10, 1500, 5000, 64 * 1024]) };
		if (random() < 0.15) {
			const db = { ...specDatabaseView(), filter: random() < 0.5 ? words(random, 6) : null };
			return { state: state({ file: null }, { app: "datagrip", database: db }), caps };
		}
		const first = 1 + int(500);
		const last = first + pick(random, [0, 0, 1, 5, 300]);
		const text = Array.from({ length: last - first + 1 }, () => words(random, 8)).join("\n");
		const selection =
			random() < 0.7
				? {
						...sel(text, first, last, int(75) - 5, [1 + int(9), 1 + int(90)]),
						...(random() < 0.3 ? { truncated: random() < 0.5 } : {}),
					}
				: null;
		const version = int(3);
		return {
			state: state({
				file: `/p/${words(random, 4)}.ts`,
				language: pick(random, [null, "typescript", "", "c++ (gnu)", words(random, 3)]),
				cursor:
					random() < 0.2
						? { line: null, column: null }
						: { line: 1 + int(900), column: random() < 0.2 ? null : int(80) },
				modified: random() < 0.5,
				lines_total: int(3) === 0 ? 1 : int(100_000),
				selection,
				version,
				...(random() < 0.5
					? {
							diagnostics: {
								version: version - int(2),
								total: int(4),
								items: Array.from({ length: int(4) }, () => diagnostic(1 + int(50), words(random, 4))),
							},
						}
					: {}),
			}),
			caps,
		};
	}

	const LINES = [
		"File: /a",
		"Cursor: line 3, column 1",
		"Cursor: line x",
		"Buffer: 1 line, saved",
		"Buffer: 2 line, saved",
		"Language: ts",
		"Selection (lines 1-2, made 3 s ago):",
		"Selection (line 1, columns 2-3, made 2 min ago; cut by the editor to 5 KiB):",
		"Selection (lines 1-9, made 150 s ago):",
		"```",
		"````ts",
		"  - item",
		"Diagnostics (1 error):",
		"lower",
		"",
		"Foreign key: (a) -> b(c)",
	];

	for (const seed of SEEDS) {
		it(`seed ${seed}`, () => {
			const random = mulberry32(seed);
			for (let round = 0; round < 25; round++) {
				const { state: s, caps } = randomState(random);
				const file = s.database ? null : s.active_buffer.file;
				const block = formatContextBlock(s, file, {
					now: NOW,
					maxSelectionLines: caps.lines,
					maxSelectionBytes: caps.bytes,
				});
				if (block) assertAgrees(appendPromptDiagnostics(block, s), `seed ${seed}, round ${round}`);
				const text = Array.from({ length: Math.floor(random() * 12) }, () => pick(random, LINES)).join("\n");
				assert.equal(blockText(parseBlock(text)), text, `seed ${seed}, round ${round}: ${JSON.stringify(text)}`);
			}
		});
	}
});

/**
 * A selection sent from the editor, as pi formats it into the user's message (formatSend), is found there with the
 * key of the same selection in a block (blockSentKey); a draft the user changed inside the fence is not.
 */
describe("sentSelectionsIn: the selections a user message holds as pi formatted a send", () => {
	const TEXT = "const a = 1;\nconst b = `x`;\n```inner fence```";
	const block = formatContextBlock(state({ file: "/p/src/a.ts", selection: sel(TEXT, 3, 5) }), "/p/src/a.ts", {
		now: NOW,
	});
	assert.ok(block);
	const key = blockSentKey(block.sections, "/p/src/a.ts");
	const send = (over: Partial<SendRequest["item"]> = {}, prompt = "why?") =>
		formatSend(
			{
				pid: 42,
				pi_pid: 7,
				id: "s1",
				timestamp: NOW,
				mode: "now",
				prompt,
				item: {
					kind: "selection",
					file: "/p/src/a.ts",
					start_line: 3,
					end_line: 5,
					text: TEXT,
					truncated: false,
					message: null,
					...over,
				},
			},
			"/p",
			{ maxLines: 1000, maxBytes: 64 * 1024 },
		);
	const cases: Array<{ name: string; text: string; found: boolean }> = [
		{ name: "the send as pi formatted it", text: send(), found: true },
		{ name: "without typed words", text: send({}, ""), found: true },
		{ name: "with words the user added after it", text: `${send()}\n\nand make it faster`, found: true },
		{
			name: "named absolutely (outside pi's cwd): the base name, lines and text agree",
			text: send({ file: "/elsewhere/src/a.ts" }),
			found: true,
		},
		{ name: "the text edited in the draft", text: send().replace("const b", "const c"), found: false },
		{ name: "a line of the text deleted", text: send().replace("const a = 1;\n", ""), found: false },
		{ name: "the closing fence deleted", text: send().replace(/\n`+$/, ""), found: false },
		{ name: "the head line deleted", text: send().replace(/^Selection from .*\n/m, ""), found: false },
		{ name: "other lines", text: send({ start_line: 4, end_line: 6 }), found: false },
		{ name: "another file's", text: send({ file: "/p/src/b.ts" }), found: false },
		{ name: "a line, not a selection", text: send({ kind: "line" }), found: false },
		{ name: "plain words", text: "Selection from a.ts please", found: false },
	];
	for (const c of cases)
		it(c.name, () => {
			assert.equal(sentSelectionsIn(c.text).includes(key as string), c.found, c.text);
		});

	it("two sends in one message: both, each once", () => {
		const other = send({ start_line: 10, end_line: 12 });
		assert.equal(sentSelectionsIn(`${send()}\n\n${other}\n\n${send()}`).length, 2);
	});
});
