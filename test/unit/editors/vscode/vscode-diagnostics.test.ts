/**
 * Diagnostics for protocol v0.3: VS Code's severities, UTF-16 ranges and code forms mapped to wire items
 * (editors/vscode/src/diagnostics.ts), and the shared sort / cap / clip (editors/shared/diagnostics.ts).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	clipText,
	MAX_DIAGNOSTIC_ITEMS,
	MAX_DIAGNOSTIC_LABEL,
	MAX_DIAGNOSTIC_MESSAGE_CHARS,
	summarizeDiagnostics,
	type WireDiagnostic,
} from "../../../../editors/shared/diagnostics.ts";
import { linesOf } from "../../../../editors/shared/state.ts";
import {
	type DiagnosticLike,
	reportDiagnostics,
	toWireDiagnostic,
} from "../../../../editors/vscode/src/diagnostics.ts";

const range = (l1: number, c1: number, l2 = l1, c2 = c1) => ({
	start: { line: l1, character: c1 },
	end: { line: l2, character: c2 },
});
const diag = (overrides: Partial<DiagnosticLike> = {}): DiagnosticLike => ({
	severity: 0,
	range: range(0, 0, 0, 1),
	message: "m",
	...overrides,
});
const wire = (severity: WireDiagnostic["severity"], line: number, column = 1): WireDiagnostic => ({
	severity,
	line,
	column,
	message: `${severity}@${line}:${column}`,
	source: null,
	code: null,
});

describe("toWireDiagnostic", () => {
	const text = 'const s = "héllo 😀 x";\n\tbad();\n';
	// [description, diagnostic, expected fields]
	const cases: [string, DiagnosticLike, Partial<WireDiagnostic>][] = [
		["Error → error", diag({ severity: 0 }), { severity: "error" }],
		["Warning → warning", diag({ severity: 1 }), { severity: "warning" }],
		["Information → info", diag({ severity: 2 }), { severity: "info" }],
		["Hint → hint", diag({ severity: 3 }), { severity: "hint" }],
		["unknown severity → info", diag({ severity: 7 }), { severity: "info" }],
		[
			"UTF-16 columns → 1-based byte columns (é is 2 bytes, 😀 is 2 units and 4 bytes)",
			diag({ range: range(0, 17, 0, 20) }),
			{ line: 1, column: 19, end_line: 1, end_column: 24 },
		],
		["second line, after a tab", diag({ range: range(1, 1, 1, 4) }), { line: 2, column: 2, end_column: 5 }],
		["a range past the end is clamped", diag({ range: range(9, 0, 9, 99) }), { line: 3, column: 1 }],
		["no source, no code → null", diag(), { source: null, code: null }],
		["string code and source", diag({ source: "json", code: "514" }), { source: "json", code: "514" }],
		["number code → string", diag({ code: 2322 }), { code: "2322" }],
		["{ value, target } code → its value", diag({ code: { value: "no-unused" } }), { code: "no-unused" }],
	];
	for (const [name, input, expected] of cases) {
		test(name, () => {
			const item = toWireDiagnostic(input, linesOf(text));
			for (const [key, value] of Object.entries(expected)) {
				assert.deepEqual(item[key as keyof WireDiagnostic], value, key);
			}
		});
	}
});

describe("summarizeDiagnostics", () => {
	test("errors first, then by line and column; version and total kept", () => {
		const items = [wire("hint", 1), wire("warning", 2), wire("error", 9), wire("error", 3, 5), wire("error", 3, 2)];
		const report = summarizeDiagnostics(items, 7);
		assert.equal(report.version, 7);
		assert.equal(report.total, 5);
		assert.deepEqual(
			report.items.map((i) => i.message),
			["error@3:2", "error@3:5", "error@9:1", "warning@2:1", "hint@1:1"],
		);
		assert.equal(items[0]?.severity, "hint", "the input is not sorted in place");
	});

	// [description, item count, caps, expected kept]
	const caps: [string, number, Parameters<typeof summarizeDiagnostics>[2], number][] = [
		["default cap", 250, undefined, MAX_DIAGNOSTIC_ITEMS],
		["item cap", 50, { maxItems: 10 }, 10],
		["byte cap", 50, { maxBytes: 300 }, 3],
		["under every cap", 3, undefined, 3],
	];
	for (const [name, count, cap, kept] of caps) {
		test(`cap: ${name}`, () => {
			const items = Array.from({ length: count }, (_, i) => wire("error", i + 1));
			const report = summarizeDiagnostics(items, 1, cap);
			assert.equal(report.items.length, kept);
			assert.equal(report.total, count);
		});
	}

	test("long messages, sources and codes are clipped; an emoji is not split", () => {
		const long = { ...wire("error", 1), message: "x".repeat(1000), source: "s".repeat(300), code: "c".repeat(300) };
		const [item] = summarizeDiagnostics([long], 1).items;
		assert.equal(item?.message.length, MAX_DIAGNOSTIC_MESSAGE_CHARS);
		assert.ok(item?.message.endsWith("…"));
		assert.equal(item?.source?.length, MAX_DIAGNOSTIC_LABEL);
		assert.equal(item?.code?.length, MAX_DIAGNOSTIC_LABEL);
	});
});

describe("clipText", () => {
	const cases: [string, string, number, string][] = [
		["short text unchanged", "abc", 5, "abc"],
		["exact length unchanged", "abcde", 5, "abcde"],
		["cut with an ellipsis", "abcdef", 5, "abcd…"],
		["a surrogate pair is not split", "abc😀def", 5, "abc…"],
	];
	for (const [name, text, max, expected] of cases) test(name, () => assert.equal(clipText(text, max), expected));
});

test("reportDiagnostics: only the kept ones are converted, total counts all", () => {
	let reads = 0;
	const lines = {
		count: 1000,
		text: () => {
			reads++;
			return "x".repeat(20);
		},
	};
	const many = Array.from({ length: 500 }, (_, i) => diag({ severity: i % 2, range: range(999 - i, 2) }));
	const report = reportDiagnostics(many, lines, 3);
	assert.equal(report.total, 500);
	assert.equal(report.items.length, MAX_DIAGNOSTIC_ITEMS);
	assert.ok(report.items.every((i) => i.severity === "error"));
	assert.deepEqual(
		report.items.slice(0, 2).map((i) => i.line),
		[502, 504],
		"errors sorted by line",
	);
	assert.equal(reads, MAX_DIAGNOSTIC_ITEMS * 2, "two line reads (start, end) per kept item");
});

test("reportDiagnostics: maps, dates and caps in one go", () => {
	const report = reportDiagnostics(
		[diag({ severity: 1 }), diag({ severity: 0, range: range(1, 0) })],
		linesOf("a\nb"),
		4,
	);
	assert.deepEqual(
		report.items.map((i) => [i.severity, i.line]),
		[
			["error", 2],
			["warning", 1],
		],
	);
	assert.equal(report.version, 4);
});
