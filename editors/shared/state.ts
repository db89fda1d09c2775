/**
 * Protocol v0.2 state building for the TypeScript editor clients (VS Code, Obsidian), pure: host-neutral
 * snapshots in, `EditorState` out. Hosts hand over positions the way their APIs do (0-based line, 0-based
 * UTF-16 column, as VS Code's `Position` and CodeMirror's `{line, ch}`), and this module turns them into the
 * wire's 1-based lines and 1-based UTF-8 byte columns. The wire types are the pi side's own
 * (`src/protocol/protocol.ts`), imported as types only so the bundles carry no schema library.
 */
import { MAX_SELECTION_TEXT_BYTES } from "../../src/protocol/limits.ts";
import type {
	ActiveBuffer,
	ApprovalDecision,
	EditorState,
	Position,
	RevertedHunk,
	Selection,
} from "../../src/protocol/protocol.ts";
import type { DiagnosticsReport } from "./diagnostics.ts";
import type { FileReport, HandledMessage } from "./pi-message.ts";
import { isHighSurrogate, isLowSurrogate, utf8Length } from "./utf16.ts";

export type { ActiveBuffer, EditorState, Position, Selection };

/** The optional protocol v0.3 fields a client may add (a reader treats a state without them as v0.2). */
export interface StateV03 {
	protocol?: string;
	files?: FileReport[];
	pi?: HandledMessage | null;
	active_buffer: ActiveBuffer & { version?: number; diagnostics?: DiagnosticsReport };
	/** v0.4: pi's hunks the user reverted here, newest last. */
	reverted?: RevertedHunk[];
	/** v0.4: the user's answers to pi's requests for approval, newest last. */
	decisions?: ApprovalDecision[];
}

/** A position as editor APIs report it: 0-based line, 0-based UTF-16 code unit offset in that line. */
export interface HostPosition {
	line: number;
	character: number;
}

/** Read access to a document's lines (0-based), without copying the whole text. */
export interface TextLines {
	count: number;
	text(line: number): string;
}

/** What a host knows about its active document at one moment. */
export interface DocumentSnapshot {
	/** Identity for the selection clock (a URI or vault path; untitled documents have one too). */
	key: string;
	/** Absolute path, vault-relative path (Obsidian), or null for an unnamed buffer. */
	file: string | null;
	name: string;
	language: string | null;
	lines: TextLines;
	/** null for hosts without a cursor at the moment (Obsidian reading mode, a PDF). */
	cursor: HostPosition | null;
	/** The primary selection as anchor/head; null or anchor == head means nothing is selected. */
	selection: { anchor: HostPosition; head: HostPosition } | null;
	modified: boolean;
	/** v0.3: the buffer's content version (VS Code `document.version`). */
	version?: number;
	/** v0.3: the buffer's diagnostics; absent while the host has none it can date. */
	diagnostics?: DiagnosticsReport;
}

export interface HostSnapshot {
	cwd: string;
	argv: string[];
	/** null when no document is active (every editor closed). */
	document: DocumentSnapshot | null;
	/**
	 * The active editor is no user document (an output pane, the proposal side of a diff): the state keeps the
	 * document, `cwd` and `argv` last written and takes only the other fields from here (`document` is ignored).
	 */
	keepDocument?: boolean;
	/** v0.3 top-level fields, written only when set. */
	protocol?: string;
	files?: FileReport[];
	pi?: HandledMessage | null;
	/** v0.4, written only when the user reverted something. */
	reverted?: RevertedHunk[];
	/** v0.4, written whenever set, empty too: an editor that answers approvals says so by writing it. */
	decisions?: ApprovalDecision[];
}

/** A normalized, non-empty selection before its `selected_at` stamp. */
export interface SelectionRange {
	start: Position;
	end: Position;
	text: string;
	/** Present (true) when `text` was cut at the cap; `start`/`end` still describe the whole selection. */
	truncated?: true;
}

/** Display name for a window without an active document (nvim's name for an unnamed buffer). */
export const NO_NAME = "[No Name]";

// The encoded selection cap is the protocol's (src/protocol/limits.ts, where it says why).
export { MAX_SELECTION_TEXT_BYTES };

/**
 * Bytes one UTF-16 unit takes inside a JSON string as `JSON.stringify` writes it, UTF-8 encoded: `"` `\\`
 * and the short escapes 2, other C0 controls 6 (`\u001b`), a lone surrogate 6 (well-formed stringify
 * escapes it); `next` tells a surrogate pair (4 bytes for both units, counted on the high one) from a lone one.
 */
function jsonUnitBytes(code: number, next: number): number {
	if (code === 0x22 || code === 0x5c) return 2;
	if (code < 0x20) return code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d ? 2 : 6;
	if (code < 0x80) return 1;
	if (code < 0x800) return 2;
	if (isHighSurrogate(code)) return isLowSurrogate(next) ? 4 : 6;
	if (isLowSurrogate(code)) return 6;
	return 3;
}

/** UTF-8 bytes of `JSON.stringify(text)` without its two quotes. */
export function jsonStringBytes(text: string): number {
	let bytes = 0;
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
		bytes += jsonUnitBytes(code, next);
		if (isHighSurrogate(code) && isLowSurrogate(next)) i++;
	}
	return bytes;
}

/** Move a UTF-16 offset that falls inside a surrogate pair back to the pair's start, and clamp it to the line. */
function characterStart(line: string, character: number): number {
	const at = Math.max(0, Math.min(Math.trunc(character), line.length));
	if (at > 0 && at < line.length && isLowSurrogate(line.charCodeAt(at)) && isHighSurrogate(line.charCodeAt(at - 1))) {
		return at - 1;
	}
	return at;
}

/**
 * 1-based UTF-8 byte column of the character at UTF-16 offset `character` in `line` (the line's length
 * gives the column just past its end, where a cursor can sit). Offsets inside a surrogate pair count as
 * the pair's first byte; offsets past the end are clamped.
 */
export function byteColumn(line: string, character: number): number {
	return utf8Length(line.slice(0, characterStart(line, character))) + 1;
}

/** UTF-16 offset of the last character that ends at `end` (exclusive), stepping over a whole surrogate pair. */
function lastCharacterBefore(line: string, end: number): number {
	const at = characterStart(line, end);
	if (at >= 2 && isLowSurrogate(line.charCodeAt(at - 1)) && isHighSurrogate(line.charCodeAt(at - 2))) return at - 2;
	return Math.max(0, at - 1);
}

/**
 * Line count as the user sees it: hosts count an empty last "line" after a final newline (VS Code's
 * `lineCount`, CodeMirror's `doc.lines`), nvim and `wc -l` do not. A buffer that is empty counts 1 line.
 */
export function countLines(lines: TextLines): number {
	if (lines.count > 1 && lines.text(lines.count - 1) === "") return lines.count - 1;
	return Math.max(lines.count, 0);
}

function compare(a: HostPosition, b: HostPosition): number {
	return a.line - b.line || a.character - b.character;
}

function clampLine(lines: TextLines, line: number): number {
	return Math.max(0, Math.min(Math.trunc(line), Math.max(lines.count - 1, 0)));
}

/** Cursor for the wire: 1-based line, 1-based byte column. */
export function toWirePosition(lines: TextLines, position: HostPosition): Position {
	const line = clampLine(lines, position.line);
	return { line: line + 1, column: byteColumn(lines.text(line), position.character) };
}

/**
 * Normalize a host selection to the protocol's shape, or null when it is empty.
 *
 * `start`/`end` are 1-based, inclusive byte columns, as the Neovim client reports them: `start` is the first
 * byte of the first selected character, `end` the last byte of the last one (a selected "é" is 1-2). A
 * selection that stops at column 0 of a later line ends with the previous line's line break: its last line
 * is that previous line, and like nvim's `v$` the newline is clamped to the line's last byte. Columns are
 * never below 1 (an empty line is column 1). Single-line selections carry their exact text; multi-line
 * ones carry whole lines joined with "\n".
 */
export function describeSelection(lines: TextLines, anchor: HostPosition, head: HostPosition): SelectionRange | null {
	const [from, to] = compare(anchor, head) <= 0 ? [anchor, head] : [head, anchor];
	const startLine = clampLine(lines, from.line);
	const endLine = clampLine(lines, to.line);
	const startText = lines.text(startLine);
	const startChar = characterStart(startText, from.character);
	const endText = lines.text(endLine);
	const endChar = characterStart(endText, to.character);
	if (startLine === endLine && startChar === endChar) return null;

	const endsAtLineBreak = endChar === 0 && endLine > startLine;
	const lastLine = endsAtLineBreak ? endLine - 1 : endLine;
	const lastText = lines.text(lastLine);
	// A start on the line break itself (end of line) is clamped onto the line's last character.
	const firstChar = startChar >= startText.length ? lastCharacterBefore(startText, startText.length) : startChar;
	const start: Position = { line: startLine + 1, column: byteColumn(startText, firstChar) };
	const lastByte = utf8Length(endsAtLineBreak ? lastText : lastText.slice(0, endChar));
	const end: Position = { line: lastLine + 1, column: Math.max(1, lastByte) };

	if (startLine === lastLine) {
		const text = endsAtLineBreak ? `${startText.slice(startChar)}\n` : startText.slice(startChar, endChar);
		return withText(start, end, clipText([text]));
	}
	// Lines are fetched lazily: clipText stops pulling at the cap, so a select-all in a huge file costs the cap.
	function* picked(): Generator<string> {
		for (let line = startLine; line <= lastLine; line++) yield lines.text(line);
	}
	return withText(start, end, clipText(picked()));
}

/** The selected text and whether it was cut. */
export interface ClippedText {
	text: string;
	truncated: boolean;
}

/**
 * Join lines with "\n", stopping before the line whose encoded bytes would pass `budget` (a first line that
 * alone passes it is cut on a character boundary).
 */
function clipText(parts: Iterable<string>, budget = MAX_SELECTION_TEXT_BYTES): ClippedText {
	let bytes = 0;
	const kept: string[] = [];
	for (const part of parts) {
		const cost = jsonStringBytes(part) + (kept.length > 0 ? 2 : 0); // the joining "\n" is encoded as \n
		if (bytes + cost > budget) {
			if (kept.length === 0) kept.push(clipLine(part, budget));
			return { text: kept.join("\n"), truncated: true };
		}
		bytes += cost;
		kept.push(part);
	}
	return { text: kept.join("\n"), truncated: false };
}

/** The longest prefix of `line`, cut on a character boundary, whose encoded bytes fit `budget`. */
function clipLine(line: string, budget: number): string {
	let bytes = 0;
	let units = 0;
	for (const char of line) {
		bytes += jsonStringBytes(char);
		if (bytes > budget) break;
		units += char.length;
	}
	return line.slice(0, units);
}

/** Lines joined and cut as the selection's text is (256 KiB encoded): what a send to pi hands over (v0.5). */
export function clipSelectionLines(lines: Iterable<string>): ClippedText {
	return clipText(lines);
}

function withText(start: Position, end: Position, clipped: ClippedText): SelectionRange {
	return clipped.truncated ? { start, end, text: clipped.text, truncated: true } : { start, end, text: clipped.text };
}

/**
 * Remembers when each document's current selection was made, so `selected_at` is the moment the user made
 * the selection, kept while it stays, and not the time of the latest write. Per document, so switching
 * away and back to an untouched selection keeps its age. Bounded to the most recently used documents.
 */
export class SelectionClock {
	readonly #made = new Map<string, { range: string; at: number }>();
	readonly #limit: number;

	constructor(limit = 64) {
		this.#limit = limit;
	}

	/** `now` in unix seconds; returns the `selected_at` for `range` in document `key`, null without a selection. */
	stamp(key: string, range: SelectionRange | null, now: number): number | null {
		if (range === null) {
			this.#made.delete(key);
			return null;
		}
		const signature = `${range.start.line}:${range.start.column}-${range.end.line}:${range.end.column}`;
		const previous = this.#made.get(key);
		const at = previous?.range === signature ? previous.at : now;
		this.#made.delete(key); // re-insert: Map order is the recency order
		this.#made.set(key, { range: signature, at });
		if (this.#made.size > this.#limit) {
			const oldest = this.#made.keys().next();
			if (!oldest.done) this.#made.delete(oldest.value);
		}
		return at;
	}
}

export interface StateContext {
	pid: number;
	/** The editor's pid namespace (v0.5 `pid_ns`), null when unknown: read once with `ownPidNamespace`. */
	pidNamespace?: string | null;
	app: string;
	/** Unix seconds. */
	now: number;
	clock: SelectionClock;
}

/** Build the full state file for one snapshot; stamps the selection on `context.clock`. */
export function buildEditorState(snapshot: HostSnapshot, context: StateContext): EditorState & StateV03 {
	return {
		...(snapshot.protocol === undefined ? {} : { protocol: snapshot.protocol }),
		pid: context.pid,
		...(context.pidNamespace ? { pid_ns: context.pidNamespace } : {}),
		cwd: snapshot.cwd,
		timestamp: context.now,
		app: context.app,
		argv: snapshot.argv,
		active_buffer: buildActiveBuffer(snapshot.document, context),
		...(snapshot.files === undefined ? {} : { files: snapshot.files }),
		...(snapshot.pi === undefined ? {} : { pi: snapshot.pi }),
		...(snapshot.reverted === undefined || snapshot.reverted.length === 0 ? {} : { reverted: snapshot.reverted }),
		...(snapshot.decisions === undefined ? {} : { decisions: snapshot.decisions }),
	};
}

function buildActiveBuffer(document: DocumentSnapshot | null, context: StateContext): StateV03["active_buffer"] {
	if (document === null) {
		return {
			file: null,
			name: NO_NAME,
			language: null,
			cursor: { line: null, column: null },
			selection: null,
			modified: false,
			lines_total: 0,
		};
	}
	const range = document.selection
		? describeSelection(document.lines, document.selection.anchor, document.selection.head)
		: null;
	const selectedAt = context.clock.stamp(document.key, range, context.now);
	const cursor = document.cursor ? toWirePosition(document.lines, document.cursor) : { line: null, column: null };
	return {
		file: document.file === "" ? null : document.file,
		name: document.name,
		language: document.language,
		cursor,
		selection: range ? { ...range, selected_at: selectedAt } : null,
		modified: document.modified,
		lines_total: countLines(document.lines),
		...(document.version === undefined ? {} : { version: document.version }),
		...(document.diagnostics === undefined ? {} : { diagnostics: document.diagnostics }),
	};
}

/** The state file's bytes: the state as one line of JSON. */
export function encodeStateFile(state: EditorState): Buffer {
	return Buffer.from(`${JSON.stringify(state)}\n`, "utf8");
}

/** The state as written (the selection maybe cut further) and its bytes; or, when nothing fits, the size. */
export type FittedStateFile =
	| { ok: true; state: EditorState & StateV03; content: Buffer }
	| { ok: false; bytes: number };

/**
 * Keep the whole encoded state file within `maxBytes` (PROTOCOL.md, "Limits"). The selection is capped on
 * its own already, but long paths or many workspace folders can still push the file over: then the
 * selection text is cut further, at a line boundary, to the room the rest of the file leaves, and marked
 * `truncated` (`start`/`end` still describe the whole selection). `ok: false` when even an empty text does
 * not fit: a file pi refuses unread would make the editor vanish from pi, so the client writes nothing.
 */
export function fitStateFile(state: EditorState & StateV03, maxBytes: number): FittedStateFile {
	const content = encodeStateFile(state);
	if (content.length <= maxBytes) return { ok: true, state, content };
	const selection = state.active_buffer.selection;
	if (selection === null || selection.text === "") return { ok: false, bytes: content.length };
	const withText = (text: string): EditorState & StateV03 => ({
		...state,
		active_buffer: { ...state.active_buffer, selection: { ...selection, text, truncated: true } },
	});
	const room = maxBytes - encodeStateFile(withText("")).length;
	if (room < 0) return { ok: false, bytes: content.length };
	const cut = withText(clipText(selection.text.split("\n"), room).text);
	const cutContent = encodeStateFile(cut);
	// jsonStringBytes counts what JSON.stringify writes, so this holds; checked, not assumed, as the cost of a
	// miscount is an editor pi no longer sees.
	return cutContent.length <= maxBytes
		? { ok: true, state: cut, content: cutContent }
		: { ok: false, bytes: content.length };
}

/** The state without its write time: two states with the same key need no second write. */
export function stateKey(state: EditorState): string {
	const { timestamp: _ignored, ...rest } = state;
	return JSON.stringify(rest);
}

/** `TextLines` over a whole text (Obsidian reading mode, tests). */
export function linesOf(text: string): TextLines {
	const split = text.split(/\r\n|\r|\n/);
	return { count: split.length, text: (line) => split[line] ?? "" };
}

/** The 0-based position of a UTF-16 offset in `text` (for hosts that report offsets). */
export function positionAt(text: string, offset: number): HostPosition {
	const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
	const lineStart = Math.max(before.lastIndexOf("\n"), before.lastIndexOf("\r")) + 1;
	const line = before.split(/\r\n|\r|\n/).length - 1;
	return { line, character: before.length - lineStart };
}
