/**
 * v0.5 show and ask, the pure parts: the model's `ide_show` input, the editor's answers file as pi validates it
 * (src/protocol/show-ask.ts), which answer is this pi's, and the words the model reads for an ask (inert, the
 * excluded files counted and never named, diagnostics dated against the buffer's version).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	type AskAnswer,
	capNote,
	describeAsk,
	describeNoAnswer,
	describeShow,
	findAnswer,
	parseShowParams,
} from "../../../src/link/show-ask.ts";
import { MAX_SHOW_NOTE_BYTES } from "../../../src/protocol/limits.ts";
import { parseAnswers, type ShowAskAnswer } from "../../../src/protocol/show-ask.ts";

describe("parseShowParams: the model's ide_show input", () => {
	const rows: { name: string; input: unknown; expect: ReturnType<typeof parseShowParams> }[] = [
		{ name: "a line", input: { path: "a.ts", line: 3 }, expect: { path: "a.ts", line: 3, endLine: null, note: null } },
		{
			name: "a range and a note (one line)",
			input: { path: "a.ts", line: 3, end_line: 5, note: " why\n here " },
			expect: { path: "a.ts", line: 3, endLine: 5, note: "why here" },
		},
		{
			name: "an empty note is none",
			input: { path: "a", line: 1, note: "  " },
			expect: { path: "a", line: 1, endLine: null, note: null },
		},
		{ name: "no path", input: { line: 1 }, expect: "path is not a file path" },
		{ name: "a blank path", input: { path: " ", line: 1 }, expect: "path is not a file path" },
		{ name: "a NUL in the path", input: { path: "a\0b", line: 1 }, expect: "path is not a file path" },
		{ name: "line 0", input: { path: "a", line: 0 }, expect: "line is not a line number (1 or more)" },
		{ name: "line 1.5", input: { path: "a", line: 1.5 }, expect: "line is not a line number (1 or more)" },
		{ name: "line 2^31", input: { path: "a", line: 2 ** 31 }, expect: "line is not a line number (1 or more)" },
		{
			name: "an end before the line",
			input: { path: "a", line: 3, end_line: 2 },
			expect: "end_line is not a line number at or after line",
		},
		{ name: "a note that is no text", input: { path: "a", line: 1, note: 5 }, expect: "note is not text" },
		{ name: "not an object", input: "a.ts:3", expect: "path is not a file path" },
	];
	for (const row of rows) test(row.name, () => assert.deepEqual(parseShowParams(row.input), row.expect));

	test("a long note is cut to the cap at a character boundary", () => {
		const note = capNote("é".repeat(MAX_SHOW_NOTE_BYTES));
		assert.ok(Buffer.byteLength(note) <= MAX_SHOW_NOTE_BYTES);
		assert.ok(note.endsWith("…") && !note.includes("\uFFFD"));
	});
});

const showAnswer = (extra: Record<string, unknown> = {}) => ({
	pi_pid: 42,
	id: "s1",
	kind: "show",
	status: "listed",
	list: "quickfix",
	...extra,
});
const askAnswer = (extra: Record<string, unknown> = {}) => ({
	pi_pid: 42,
	id: "a1",
	kind: "ask",
	buffers: [{ file: "/p/a.ts", modified: false, version: 3, lines_total: 1, active: true }],
	buffers_total: 1,
	...extra,
});
const file = (answers: unknown[], extra: Record<string, unknown> = {}) =>
	JSON.stringify({ protocol: "0.5", kind: "editor-answers", pid: 7, timestamp: 1, answers, ...extra });
const item = { severity: "error", line: 1, column: 1, message: "m" };

describe("parseAnswers: the editor's answers file as pi reads it", () => {
	const rows: {
		name: string;
		text: string;
		expect: { ok: false; reason: string } | { ids: string[]; dropped: number };
	}[] = [
		{ name: "a show and an ask", text: file([showAnswer(), askAnswer()]), expect: { ids: ["s1", "a1"], dropped: 0 } },
		{ name: "not JSON", text: "{", expect: { ok: false, reason: "not JSON" } },
		{
			name: "another kind",
			text: file([], { kind: "editor-buffers" }),
			expect: { ok: false, reason: "not an editor-answers file" },
		},
		{
			name: "another editor's pid",
			text: file([], { pid: 8 }),
			expect: { ok: false, reason: "pid does not match the file name" },
		},
		{
			name: "more than 16 answers",
			text: file(Array.from({ length: 17 }, (_, i) => showAnswer({ id: `s${i}` }))),
			expect: { ok: false, reason: "not an editor-answers file" },
		},
		{
			name: "an unknown status: dropped",
			text: file([showAnswer({ status: "maybe" }), askAnswer()]),
			expect: { ids: ["a1"], dropped: 1 },
		},
		{
			name: "an id over 64 bytes: dropped",
			text: file([showAnswer({ id: "é".repeat(33) })]),
			expect: { ids: [], dropped: 1 },
		},
		{ name: "an empty id: dropped", text: file([showAnswer({ id: "" })]), expect: { ids: [], dropped: 1 } },
		{
			name: "a bad pi_ns: dropped",
			text: file([showAnswer({ pi_ns: "4026531836" })]),
			expect: { ids: [], dropped: 1 },
		},
		{
			name: "101 items for one buffer: dropped",
			text: file([
				askAnswer({
					buffers: [
						{
							file: "/p/a.ts",
							modified: false,
							version: 3,
							lines_total: 1,
							diagnostics: { version: 3, total: 101, items: Array(101).fill(item) },
						},
					],
				}),
			]),
			expect: { ids: [], dropped: 1 },
		},
		{
			name: "201 items in all: dropped",
			text: file([
				askAnswer({
					buffers: [0, 1, 2].map((i) => ({
						file: `/p/${i}.ts`,
						modified: false,
						version: 3,
						lines_total: 1,
						diagnostics: { version: 3, total: 67, items: Array(i === 0 ? 67 : 67).fill(item) },
					})),
				}),
			]),
			expect: { ids: [], dropped: 1 },
		},
		{
			name: "a buffer without its version: dropped",
			text: file([askAnswer({ buffers: [{ file: "/p/a.ts", modified: true, lines_total: 1 }] })]),
			expect: { ids: [], dropped: 1 },
		},
	];
	for (const row of rows)
		test(row.name, () => {
			const parsed = parseAnswers(row.text, 7);
			if ("ok" in row.expect) assert.deepEqual(parsed, row.expect);
			else {
				assert.ok(parsed.ok, JSON.stringify(parsed));
				assert.deepEqual({ ids: parsed.answers.map((a) => a.id), dropped: parsed.dropped }, row.expect);
			}
		});
});

describe("findAnswer: this pi's answer to its request", () => {
	const answers = [
		{ ...showAnswer(), pi_pid: 41 },
		{ ...showAnswer(), pi_ns: "pid:[9]", status: "opened" },
		{ ...showAnswer(), id: "s2" },
		{ ...showAnswer(), status: "refused" },
	] as ShowAskAnswer[];
	const rows: { name: string; ns: string | null; id: string; expect: string | undefined }[] = [
		{ name: "the newest of the pi's with that id (no pi_ns: an older editor)", ns: null, id: "s1", expect: "refused" },
		{ name: "a pi of namespace 9 takes its own and those naming none", ns: "pid:[9]", id: "s1", expect: "refused" },
		{ name: "another id", ns: null, id: "s3", expect: undefined },
	];
	for (const row of rows)
		test(row.name, () =>
			assert.equal((findAnswer(answers, 42, row.ns, row.id) as { status?: string } | undefined)?.status, row.expect),
		);
	test("a pi of another namespace never takes an answer naming namespace 9", () => {
		const only = [{ ...showAnswer(), pi_ns: "pid:[9]" }] as ShowAskAnswer[];
		assert.equal(findAnswer(only, 42, "pid:[8]", "s1"), undefined);
		assert.equal(findAnswer(only, 42, null, "s1"), undefined);
	});
});

describe("describeAsk: what the model reads of an ask's answer", () => {
	const words = {
		editor: "Neovim",
		cwd: "/p",
		named: null,
		toPi: (f: string) => f.replace(/^\/host/, "/p"),
		excluded: (f: string) => f.endsWith(".env"),
	};
	const buffer = (f: string, extra: Record<string, unknown> = {}) => ({
		file: f,
		modified: false,
		version: 5,
		lines_total: 9,
		active: false,
		...extra,
	});
	const answer = (buffers: AskAnswer["buffers"], total = buffers.length): AskAnswer => ({
		pi_pid: 42,
		id: "a",
		kind: "ask",
		buffers,
		buffers_total: total,
	});
	const rows: { name: string; answer: AskAnswer; named?: string; expect: string[] }[] = [
		{
			name: "buffers, unsaved and active marked, mapped to pi's paths",
			answer: answer([buffer("/host/a.ts", { active: true }), buffer("/host/b.ts", { modified: true })]),
			expect: [
				"Open file buffers in Neovim (2; * = unsaved changes, the file on disk differs):",
				"- a.ts (active)",
				"- b.ts *",
			],
		},
		{
			name: "an excluded file is counted, never named, its diagnostics never shown",
			answer: answer([
				buffer("/p/.env", { diagnostics: { version: 5, total: 1, items: [{ ...item, message: "TOKEN" }] } }),
			]),
			expect: [
				"Open file buffers in Neovim (1; * = unsaved changes, the file on disk differs):",
				"- none",
				"- 1 more excluded by pi-ide-context's ignore rules (not named, nothing of them shown)",
			],
		},
		{
			name: "current diagnostics listed; older ones counted, never listed; none reported is unknown",
			answer: answer(
				[
					buffer("/p/a.ts", {
						diagnostics: { version: 5, total: 1, items: [{ ...item, line: 2, message: "bad\u001b[2J" }] },
					}),
					buffer("/p/b.ts", { version: 7, diagnostics: { version: 6, total: 3, items: [item] } }),
					buffer("/p/c.ts", { diagnostics: null }),
					buffer("/p/d.ts", { diagnostics: { version: 5, total: 0, items: [] } }),
				],
				6,
			),
			expect: [
				"Open file buffers in Neovim (6; * = unsaved changes, the file on disk differs):",
				"- a.ts",
				"- b.ts",
				"- c.ts",
				"- d.ts",
				"- 2 more the editor did not list (its cap)",
				"",
				"a.ts: Diagnostics (1 error):",
				"- error 2:1 bad\\u001b[2J",
				"b.ts: 3 diagnostics reported for an earlier version of the buffer (6, now 7); not shown, they may no longer apply.",
				"c.ts: no checker has reported diagnostics for it (unknown, not clean).",
				"d.ts: no diagnostics (current for version 5).",
			],
		},
		{
			name: "a named file that is not open",
			answer: answer([buffer("/p/a.ts")]),
			named: "/p/z.ts",
			expect: [
				"Open file buffers in Neovim (1; * = unsaved changes, the file on disk differs):",
				"- a.ts",
				"",
				"z.ts is not open in Neovim: the editor has no diagnostics for it.",
			],
		},
		{
			name: "a named file that is excluded",
			answer: answer([buffer("/p/a.ts")]),
			named: "/p/.env",
			expect: [
				"Open file buffers in Neovim (1; * = unsaved changes, the file on disk differs):",
				"- a.ts",
				"",
				"The file asked about is excluded by pi-ide-context's ignore rules: nothing of it is shown.",
			],
		},
		{
			name: "a file name with a control character stays one inert line",
			answer: answer([buffer("/p/a\nb.ts", { modified: true })]),
			expect: ["Open file buffers in Neovim (1; * = unsaved changes, the file on disk differs):", "- a\\nb.ts *"],
		},
	];
	for (const row of rows)
		test(row.name, () =>
			assert.deepEqual(describeAsk(row.answer, { ...words, named: row.named ?? null }).split("\n"), row.expect),
		);
});

describe("describeShow and describeNoAnswer: the words of every outcome", () => {
	const rows: { name: string; text: string; expect: RegExp }[] = [
		{
			name: "listed",
			text: describeShow(showAnswer() as never, "Neovim", "/p/a.ts", 3, 5, "/p"),
			expect: /^Shown in Neovim: a\.ts:3-5 is in the user's quickfix list .*cursor stayed/,
		},
		{
			name: "listed in Emacs's next-error list",
			text: describeShow(showAnswer({ list: "next-error" }) as never, "Emacs", "/p/a.ts", 3, null, "/p"),
			expect: /^Shown in Emacs: a\.ts:3 is in the user's list of places \(the \*pi-ide shown\* buffer, next-error\)/,
		},
		{
			name: "listed in VS Code's or a JetBrains IDE's places (list `places`): not a quickfix list",
			text: describeShow(showAnswer({ list: "places" }) as never, "IntelliJ IDEA", "/p/a.kt", 3, null, "/p"),
			expect:
				/^Shown in IntelliJ IDEA: a\.kt:3 is in the user's list of places \("pi's places"\) with a one-line notice/,
		},
		{
			name: "opened (follow)",
			text: describeShow(showAnswer({ status: "opened" }) as never, "Neovim", "/p/a.ts", 3, null, "/p"),
			expect: /^Shown in Neovim: a\.ts:3 was opened for the user \(their "follow" setting is on\)/,
		},
		{
			name: "refused, with the editor's reason made inert",
			text: describeShow(
				showAnswer({ status: "refused", reason: "no\u0007pe" }) as never,
				"Vim",
				"/p/a.ts",
				3,
				3,
				"/p",
			),
			expect: /^Vim refused to show a\.ts:3: no\\u0007pe\.$/,
		},
		{
			name: "no editor",
			text: describeNoAnswer("show", { kind: "no editor" }),
			expect: /^No editor is connected to pi/,
		},
		{
			name: "no answer in time",
			text: describeNoAnswer("ask", { kind: "no answer", editor: "Emacs", waitedMs: 1000 }),
			expect: /^Emacs did not answer within 1 s .*pi cannot tell what is open\.$/,
		},
	];
	for (const row of rows) test(row.name, () => assert.match(row.text, row.expect));
});
