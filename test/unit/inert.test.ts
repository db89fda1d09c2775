import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inert } from "../../src/inert.ts";

describe("inert: every unsafe character becomes a visible escape", () => {
	const cases: [string, string, string][] = [
		["plain text is unchanged", "src/main.ts", "src/main.ts"],
		["non-ASCII letters and emoji stay", "données/日本/🎉.md", "données/日本/🎉.md"],
		["newline (forges a report line)", "a\nState dir: ok", "a\\nState dir: ok"],
		["carriage return", "a\rb", "a\\rb"],
		["tab", "a\tb", "a\\tb"],
		["NUL", "a\u0000b", "a\\u0000b"],
		["ESC of a CSI sequence", "\u001b[2J", "\\u001b[2J"],
		["OSC title with BEL", "\u001b]0;pwned\u0007", "\\u001b]0;pwned\\u0007"],
		["DEL", "a\u007fb", "a\\u007fb"],
		["C1 CSI U+009B", "\u009b31m", "\\u009b31m"],
		["C1 NEL U+0085", "a\u0085b", "a\\u0085b"],
		["C1 OSC U+009D", "\u009d0;x", "\\u009d0;x"],
		["line separator U+2028", "a\u2028b", "a\\u2028b"],
		["paragraph separator U+2029", "a\u2029b", "a\\u2029b"],
		["right-to-left override U+202E", "exe.\u202etxt", "exe.\\u202etxt"],
		["left-to-right embedding U+202A", "\u202aa", "\\u202aa"],
		["right-to-left isolate U+2067", "\u2067a\u2069", "\\u2067a\\u2069"],
		["left-to-right and right-to-left marks", "\u200ea\u200f", "\\u200ea\\u200f"],
		["Arabic letter mark U+061C", "\u061ca", "\\u061ca"],
		["zero-width space", "a\u200bb", "a\\u200bb"],
		["zero-width joiner and non-joiner", "a\u200d\u200cb", "a\\u200d\\u200cb"],
		["word joiner U+2060", "a\u2060b", "a\\u2060b"],
		["byte-order mark / ZWNBSP", "\ufeffa", "\\ufeffa"],
		["interlinear annotation anchor", "\ufff9a", "\\ufff9a"],
	];
	for (const [description, input, expected] of cases) {
		it(description, () => assert.equal(inert(input), expected));
	}
});

describe("inert with lines kept", () => {
	const cases: [string, string, string][] = [
		["line feeds stay", "a\nb", "a\nb"],
		["everything else is still escaped", "a\r\n\u001b[1mb\u2028", "a\\r\n\\u001b[1mb\\u2028"],
		["tabs stay", "\tx", "\tx"],
	];
	for (const [description, input, expected] of cases) {
		it(description, () => assert.equal(inert(input, { lines: "keep" }), expected));
	}
});
