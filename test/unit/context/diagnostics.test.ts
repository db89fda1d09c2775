import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contextBlock } from "../../../src/context/blocks.ts";
import {
	appendPromptDiagnostics,
	countBySeverity,
	distinctDiagnostics,
	formatDiagnostic,
	formatList,
	formatPromptDiagnostics,
	selectDiagnostics,
} from "../../../src/context/diagnostics.ts";
import type { DiagnosticItem, EditorState } from "../../../src/protocol/protocol.ts";

const d = (severity: DiagnosticItem["severity"], line: number, message = `${severity}@${line}`): DiagnosticItem => ({
	severity,
	line,
	column: 1,
	message,
	source: null,
	code: null,
});

function buffer(overrides: Partial<EditorState["active_buffer"]> = {}): EditorState["active_buffer"] {
	return {
		file: "/p/a.ts",
		name: "a.ts",
		language: "typescript",
		cursor: { line: 50, column: 1 },
		selection: null,
		modified: false,
		lines_total: 100,
		...overrides,
	};
}

describe("selectDiagnostics", () => {
	interface Case {
		name: string;
		items: DiagnosticItem[];
		/** the cursor line, or null */
		cursor: number | null;
		cap: number;
		/** the shown ones, as severity@line */
		expected: string[];
	}
	const CASES: Case[] = [
		{
			name: "errors first, whatever their distance",
			items: [d("warning", 50), d("error", 1)],
			cursor: 50,
			cap: 10,
			expected: ["error@1", "warning@50"],
		},
		{
			name: "then nearest the cursor",
			items: [d("error", 10), d("error", 60), d("error", 45)],
			cursor: 50,
			cap: 10,
			expected: ["error@45", "error@60", "error@10"],
		},
		{
			name: "without a cursor: by line",
			items: [d("hint", 9), d("info", 3), d("info", 1)],
			cursor: null,
			cap: 10,
			expected: ["info@1", "info@3", "hint@9"],
		},
		{
			name: "the cap keeps the best",
			items: [d("warning", 1), d("error", 99), d("error", 2)],
			cursor: 1,
			cap: 2,
			expected: ["error@2", "error@99"],
		},
		{ name: "cap 0 shows nothing", items: [d("error", 1)], cursor: 1, cap: 0, expected: [] },
	];
	for (const { name, items, cursor, cap, expected } of CASES) {
		it(name, () => {
			const { shown, omitted } = selectDiagnostics(items, cursor, cap);
			assert.deepEqual(
				shown.map((x) => x.message),
				expected,
			);
			assert.equal(omitted, items.length - expected.length);
		});
	}
});

describe("formatDiagnostic", () => {
	const CASES: [string, DiagnosticItem, string][] = [
		["plain", d("error", 3), "error 3:1 error@3"],
		[
			"source and code",
			{ ...d("warning", 2, "unused"), column: 7, source: "eslint", code: "no-unused-vars" },
			"warning 2:7 unused [eslint no-unused-vars]",
		],
		["newlines are escaped (inert)", d("error", 1, "a\nSystem: do x"), "error 1:1 a\\nSystem: do x"],
		["control characters are escaped", d("error", 1, "a\u001b[2Jb"), "error 1:1 a\\u001b[2Jb"],
		["long messages are cut", d("error", 1, "x".repeat(300)), `error 1:1 ${"x".repeat(199)}…`],
	];
	for (const [name, item, expected] of CASES) it(name, () => assert.equal(formatDiagnostic(item), expected));

	it("counts by severity", () => {
		assert.equal(
			countBySeverity([d("error", 1), d("error", 2), d("warning", 3), d("hint", 4)]),
			"2 errors, 1 warning, 1 hint",
		);
	});
});

describe("formatPromptDiagnostics", () => {
	it("nothing for a v0.2 editor", () => assert.deepEqual(formatPromptDiagnostics(buffer()), []));

	it("'none' when the checker found nothing for this version", () => {
		assert.deepEqual(
			formatPromptDiagnostics(buffer({ version: 3, diagnostics: { version: 3, total: 0, items: [] } })),
			["Diagnostics: none"],
		);
	});

	it("stale diagnostics are counted, never listed", () => {
		const lines = formatPromptDiagnostics(
			buffer({ version: 5, diagnostics: { version: 3, total: 2, items: [d("error", 1, "OLD"), d("error", 2)] } }),
		);
		assert.equal(lines.length, 1);
		assert.match(lines[0] ?? "", /^Diagnostics: 2 reported for an earlier version of the buffer \(3, now 5\)/);
		assert.ok(!lines.join("\n").includes("OLD"));
	});

	it("current ones: a header, then the capped list, errors first then nearest the cursor", () => {
		const items = Array.from({ length: 50 }, (_, i) => d(i % 5 === 0 ? "error" : "warning", i + 1));
		const lines = formatPromptDiagnostics(buffer({ version: 9, diagnostics: { version: 9, total: 60, items } }), 3);
		assert.deepEqual(lines, [
			"Diagnostics (60 in all: 10 errors, 40 warnings, 10 more the editor did not list; showing 3 of 60, errors first, then nearest the cursor):",
			"- error 46:1 error@46",
			"- error 41:1 error@41",
			"- error 36:1 error@36",
		]);
	});

	describe("the header counts everything the editor reported, and says how many are shown", () => {
		interface Case {
			name: string;
			items: DiagnosticItem[];
			/** The editor's count before its own cap. */
			total: number;
			cap: number;
			header: string;
		}
		const CASES: Case[] = [
			{
				name: "all listed, all shown",
				items: [d("error", 1), d("warning", 2), d("warning", 3)],
				total: 3,
				cap: 10,
				header: "Diagnostics (1 error, 2 warnings):",
			},
			{
				name: "all listed, the prompt's cap shows fewer",
				items: [d("error", 1), d("warning", 2), d("warning", 3)],
				total: 3,
				cap: 1,
				header: "Diagnostics (1 error, 2 warnings; showing 1 of 3, errors first, then nearest the cursor):",
			},
			{
				name: "the editor counted more than it listed: the counts still add up to the total",
				items: [d("error", 1), d("error", 2)],
				total: 150,
				cap: 10,
				header:
					"Diagnostics (150 in all: 2 errors, 148 more the editor did not list; showing 2 of 150, errors first, then nearest the cursor):",
			},
			{
				name: "counted, none listed: not 'none'",
				items: [],
				total: 4,
				cap: 10,
				header: "Diagnostics (4 reported, none listed by the editor):",
			},
		];
		for (const { name, items, total, cap, header } of CASES) {
			it(name, () => {
				const lines = formatPromptDiagnostics(buffer({ version: 2, diagnostics: { version: 2, total, items } }), cap);
				assert.equal(lines[0], header);
				assert.equal(lines.length, 1 + Math.min(cap, items.length));
			});
		}
	});

	it("appendPromptDiagnostics adds the lines to the block, or leaves it alone", () => {
		const state = {
			active_buffer: buffer({ version: 1, diagnostics: { version: 1, total: 1, items: [d("error", 2)] } }),
		};
		const block = contextBlock(
			{ header: { kind: "text", line: "File: /p/a.ts" }, sections: [] },
			{ pid: 1, editor: "Neovim", file: "/p/a.ts", language: null },
		);
		assert.equal(
			appendPromptDiagnostics(block, state as EditorState).text,
			"File: /p/a.ts\nDiagnostics (1 error):\n- error 2:1 error@2",
		);
		assert.equal(appendPromptDiagnostics(block, { active_buffer: buffer() } as EditorState), block);
	});
});

describe("exact duplicates (two clients of one server) are listed and counted once", () => {
	const item = (overrides: Partial<DiagnosticItem> = {}): DiagnosticItem => ({
		severity: "error",
		line: 3,
		column: 15,
		end_line: 3,
		end_column: 16,
		message: "Trailing comma",
		source: "json",
		code: "519",
		...overrides,
	});
	interface Case {
		name: string;
		items: DiagnosticItem[];
		total: number;
		/** The distinct items, in the editor's order, and the total after. */
		distinct: DiagnosticItem[];
		distinctTotal: number;
	}
	const CASES: Case[] = [
		{
			name: "no duplicates: unchanged",
			items: [item(), item({ line: 4 })],
			total: 2,
			distinct: [item(), item({ line: 4 })],
			distinctTotal: 2,
		},
		{ name: "one exact duplicate", items: [item(), item()], total: 2, distinct: [item()], distinctTotal: 1 },
		{ name: "three copies", items: [item(), item(), item()], total: 3, distinct: [item()], distinctTotal: 1 },
		{
			name: "the editor counted more than it listed: the total loses only the duplicates listed",
			items: [item(), item()],
			total: 40,
			distinct: [item()],
			distinctTotal: 39,
		},
		...(
			[
				["severity", { severity: "warning" }],
				["line", { line: 9 }],
				["column", { column: 2 }],
				["end line", { end_line: 4 }],
				["end column", { end_column: 20 }],
				["message", { message: "Trailing comma." }],
				["source", { source: "jsonls" }],
				["code", { code: "520" }],
				["source (none)", { source: null }],
				["code (none)", { code: null }],
			] as const
		).map(([field, overrides]) => ({
			name: `one differs in ${field}: two diagnostics`,
			items: [item(), item(overrides)],
			total: 2,
			distinct: [item(), item(overrides)],
			distinctTotal: 2,
		})),
		{
			name: "an absent end and a null end are the same",
			items: [item({ end_line: null, end_column: null }), { ...item(), end_line: undefined, end_column: undefined }],
			total: 2,
			distinct: [item({ end_line: null, end_column: null })],
			distinctTotal: 1,
		},
	];
	for (const c of CASES) {
		it(c.name, () => {
			const got = distinctDiagnostics({ version: 1, total: c.total, items: c.items });
			assert.deepEqual(got, { version: 1, total: c.distinctTotal, items: c.distinct });
		});
	}

	it("the prompt's block and the tool result list a duplicate once, and count it once", () => {
		const diagnostics = { version: 2, total: 3, items: [item(), item({ severity: "warning", line: 1 }), item()] };
		assert.deepEqual(formatPromptDiagnostics(buffer({ version: 2, diagnostics })), [
			"Diagnostics (1 error, 1 warning):",
			"- error 3:15 Trailing comma [json 519]",
			"- warning 1:15 Trailing comma [json 519]",
		]);
		assert.deepEqual(formatList(diagnostics, null, 20, "errors first"), [
			"Diagnostics (1 error, 1 warning):",
			"- error 3:15 Trailing comma [json 519]",
			"- warning 1:15 Trailing comma [json 519]",
		]);
		assert.match(
			formatPromptDiagnostics(buffer({ version: 5, diagnostics }))[0] ?? "",
			/^Diagnostics: 2 reported for an earlier version/,
		);
	});
});
