import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inert } from "../../../src/protocol/inert.ts";

interface Case {
	description: string;
	input: string;
	expected: string;
	/** `keep`: the variant for text shown as lines (line feeds and tabs stay); default one line. */
	lines?: "keep";
}

const cases: Case[] = [
	{ description: "plain text is unchanged", input: "src/main.ts", expected: "src/main.ts" },
	{ description: "non-ASCII letters and emoji stay", input: "données/日本/🎉.md", expected: "données/日本/🎉.md" },
	{ description: "no-break and ideographic spaces stay", input: "a\u00a0b\u3000c", expected: "a\u00a0b\u3000c" },
	{ description: "newline (forges a report line)", input: "a\nState dir: ok", expected: "a\\nState dir: ok" },
	{ description: "carriage return", input: "a\rb", expected: "a\\rb" },
	{ description: "tab", input: "a\tb", expected: "a\\tb" },
	{ description: "NUL", input: "a\u0000b", expected: "a\\u0000b" },
	{ description: "ESC of a CSI sequence", input: "\u001b[2J", expected: "\\u001b[2J" },
	{ description: "OSC title with BEL", input: "\u001b]0;pwned\u0007", expected: "\\u001b]0;pwned\\u0007" },
	{ description: "DEL", input: "a\u007fb", expected: "a\\u007fb" },
	{ description: "C1 CSI U+009B", input: "\u009b31m", expected: "\\u009b31m" },
	{ description: "C1 NEL U+0085", input: "a\u0085b", expected: "a\\u0085b" },
	{ description: "C1 OSC U+009D", input: "\u009d0;x", expected: "\\u009d0;x" },
	{ description: "line separator U+2028", input: "a\u2028b", expected: "a\\u2028b" },
	{ description: "paragraph separator U+2029", input: "a\u2029b", expected: "a\\u2029b" },
	{ description: "right-to-left override U+202E", input: "exe.\u202etxt", expected: "exe.\\u202etxt" },
	{ description: "left-to-right embedding U+202A", input: "\u202aa", expected: "\\u202aa" },
	{ description: "right-to-left isolate U+2067", input: "\u2067a\u2069", expected: "\\u2067a\\u2069" },
	{ description: "left-to-right and right-to-left marks", input: "\u200ea\u200f", expected: "\\u200ea\\u200f" },
	{ description: "Arabic letter mark U+061C", input: "\u061ca", expected: "\\u061ca" },
	{ description: "zero-width space", input: "a\u200bb", expected: "a\\u200bb" },
	{ description: "zero-width joiner and non-joiner", input: "a\u200d\u200cb", expected: "a\\u200d\\u200cb" },
	{ description: "word joiner U+2060", input: "a\u2060b", expected: "a\\u2060b" },
	{ description: "byte-order mark / ZWNBSP", input: "\ufeffa", expected: "\\ufeffa" },
	{ description: "interlinear annotation anchor", input: "\ufff9a", expected: "\\ufff9a" },
	{
		description: "tag characters (a hidden instruction), escaped with braces beyond U+FFFF",
		input: "a.ts\u{e0001}\u{e0069}\u{e0067}\u{e007f}",
		expected: "a.ts\\u{e0001}\\u{e0069}\\u{e0067}\\u{e007f}",
	},
	{ description: "soft hyphen U+00AD", input: "pass\u00adwd", expected: "pass\\u00adwd" },
	{ description: "deprecated format characters U+206A-206F", input: "\u206a\u206f", expected: "\\u206a\\u206f" },
	{ description: "combining grapheme joiner U+034F", input: "a\u034fb", expected: "a\\u034fb" },
	{
		description: "Hangul fillers U+115F, U+1160, U+3164, U+FFA0",
		input: "\u115f\u1160\u3164\uffa0",
		expected: "\\u115f\\u1160\\u3164\\uffa0",
	},
	{ description: "Mongolian vowel separator U+180E", input: "a\u180eb", expected: "a\\u180eb" },
	{
		description: "variation selectors (can carry hidden bytes)",
		input: "a\ufe0f\u{e0100}",
		expected: "a\\ufe0f\\u{e0100}",
	},
	{ description: "an unassigned default-ignorable U+2065", input: "a\u2065", expected: "a\\u2065" },
	{ description: "a lone surrogate", input: "a\ud800b", expected: "a\\ud800b" },
	{ description: "lines kept: line feeds stay", input: "a\nb", expected: "a\nb", lines: "keep" },
	{ description: "lines kept: tabs stay", input: "\tx", expected: "\tx", lines: "keep" },
	{
		description: "lines kept: everything else is still escaped",
		input: "a\r\n\u001b[1mb\u2028\u{e0041}",
		expected: "a\\r\n\\u001b[1mb\\u2028\\u{e0041}",
		lines: "keep",
	},
];

describe("inert: every unsafe character becomes a visible escape", () => {
	for (const { description, input, expected, lines } of cases) {
		it(description, () => assert.equal(inert(input, lines === undefined ? {} : { lines }), expected));
	}
});
