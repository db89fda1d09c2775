/**
 * Editor-supplied text made inert before it reaches a terminal (the `/ide status`
 * report, notifications, picker rows, the quote) or a single-line field the model
 * reads. A state file is written by another program: a file name, cwd or table
 * name can carry a newline (forging a line of the report), an escape sequence
 * (ESC, OSC, CSI as C1 U+009B) that the terminal would obey, or invisible
 * characters that reorder or hide text (bidi controls, zero-width characters).
 * Each such character becomes a visible escape (`\n`, `\t`, `\u001b`), so the
 * text still says what it said and can be reported, but nothing in it acts.
 * Pure. This is the only place that decides which characters are unsafe.
 */

/**
 * C0 controls (newline and tab included), DEL, C1 controls (U+0080-U+009F: CSI,
 * NEL U+0085, OSC...), the line and paragraph separators, bidi controls (ALM,
 * LRM, RLM, LRE..RLO, LRI..PDI) and zero-width or invisible format characters
 * (ZWSP, ZWNJ, ZWJ, WJ, invisible operators, BOM, Mongolian vowel separator,
 * interlinear annotation marks).
 */
const UNSAFE =
	// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
	/[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]/g;

/** The same set without line feed and tab, for text shown as lines (a selection in the status report). */
const UNSAFE_IN_LINES = new RegExp(UNSAFE.source.replace("\\u0000-\\u001f", "\\u0000-\\u0008\\u000b-\\u001f"), "g");

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function toEscape(char: string): string {
	return NAMED[char] ?? `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`;
}

/**
 * Replace every unsafe character with a visible escape. `lines: "keep"` leaves
 * line feeds and tabs alone (multi-line text shown as lines); the default escapes them
 * too, for text that must stay on one line.
 */
export function inert(text: string, options: { lines?: "escape" | "keep" } = {}): string {
	return text.replace(options.lines === "keep" ? UNSAFE_IN_LINES : UNSAFE, toEscape);
}
