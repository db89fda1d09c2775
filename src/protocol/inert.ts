/**
 * Editor-supplied text made inert before it reaches a terminal (the `/ide status`
 * report, notifications, picker rows, the quote) or a single-line field the model
 * reads. A state file is written by another program: a file name, cwd or table
 * name can carry a newline (forging a line of the report), an escape sequence
 * (ESC, OSC, CSI as C1 U+009B) that the terminal would obey, or invisible
 * characters that reorder or hide text (bidi controls, zero-width characters,
 * tag characters that spell out a hidden message to the model).
 * Each such character becomes a visible escape (`\n`, `\t`, `\u001b`, `\u{e0041}`),
 * so the text still says what it said and can be reported, but nothing in it acts.
 * Pure. This is the only place that decides which characters are unsafe.
 */

import type { EditorState } from "./protocol.ts";

/**
 * Whole Unicode classes rather than a hand-kept list of ranges, so a new invisible
 * character is covered the day the engine's Unicode tables know it:
 * - Cc: C0 controls (newline and tab included), DEL, C1 controls (CSI U+009B, NEL U+0085, OSC...);
 * - Cf: format characters: bidi controls, zero-width characters, soft hyphen, BOM, tag characters
 *   (U+E0000-E007F), the deprecated format characters U+206A-206F, interlinear annotation marks;
 * - Zl, Zp: the line and paragraph separators;
 * - Default_Ignorable_Code_Point: what renderers draw as nothing although it is not a format character:
 *   the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner U+034F, variation
 *   selectors (which can carry hidden bytes), and code points reserved to be ignorable;
 * - Cs: a lone surrogate (a JSON `\ud800`), which no terminal can show and which would be lost as U+FFFD.
 * Ordinary spaces (U+00A0, U+3000) are visible as spaces and stay.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}]/gu;

/** Kept as they are in text shown as lines (`lines: "keep"`): line feed and tab. */
const LINE_LAYOUT = new Set(["\n", "\t"]);

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `\u001b` for the Basic Multilingual Plane, `\u{e0041}` beyond it (four hex digits would be ambiguous). */
function toEscape(char: string): string {
	const named = NAMED[char];
	if (named !== undefined) return named;
	const hex = (char.codePointAt(0) ?? 0).toString(16);
	return hex.length <= 4 ? `\\u${hex.padStart(4, "0")}` : `\\u{${hex}}`;
}

/**
 * Replace every unsafe character with a visible escape. `lines: "keep"` leaves
 * line feeds and tabs alone (multi-line text shown as lines); the default escapes them
 * too, for text that must stay on one line.
 */
export function inert(text: string, options: { lines?: "escape" | "keep" } = {}): string {
	const keep = options.lines === "keep";
	return text.replace(UNSAFE, (char) => (keep && LINE_LAYOUT.has(char) ? char : toEscape(char)));
}

/** How long a single-line field may get before `oneLine` cuts it. */
const MAX_FIELD_CHARS = 500;

/**
 * Make an untrusted value safe for one line of the block or the terminal:
 * unsafe characters (see `inert` above) become visible escapes, and overlong values are cut.
 */
export function oneLine(value: string, maxChars = MAX_FIELD_CHARS): string {
	const escaped = inert(value);
	const chars = Array.from(escaped);
	return chars.length > maxChars ? `${chars.slice(0, maxChars - 1).join("")}…` : escaped;
}

const APP_NAMES: Readonly<Record<string, string>> = {
	nvim: "Neovim",
	vim: "Vim",
	vscode: "VS Code",
	obsidian: "Obsidian",
	jetbrains: "JetBrains IDE",
	zed: "Zed",
	emacs: "Emacs",
	helix: "Helix",
};

/** `product` when present (WebStorm), else a readable name for `app`. */
export function formatEditorName(state: Pick<EditorState, "app" | "product">): string {
	const product = state.product?.trim();
	if (product) return oneLine(product, 60);
	return APP_NAMES[state.app] ?? oneLine(state.app, 60);
}
