/**
 * What the model reads: the context block built from one editor snapshot. Pure
 * and deterministic (the clock comes in as `now`). Every value that came from a
 * state file is treated as untrusted text: single-line fields are escaped so a
 * file name cannot start a new line of the block, and selection text is fenced
 * with a fence longer than any backtick run inside it, so it can never close it.
 */
import { basename } from "node:path";
import { formatEditorName, oneLine } from "../protocol/inert.ts";
import type { DatabaseView, EditorState, Selection } from "../protocol/protocol.ts";
import { MAX_CLOCK_SKEW_SECONDS, SELECTION_FRESH_SECONDS } from "../protocol/protocol.ts";
import { languageOfFile } from "./languages.ts";

export const DEFAULT_MAX_SELECTION_LINES = 1000;
export const DEFAULT_MAX_SELECTION_BYTES = 64 * 1024;

/** Longest single-line value (path, filter, cell) copied into the block. */
/** Longest selection preview in the quote, in characters. */
const PREVIEW_CHARS = 60;
/** Longest database cell value shown. */
const MAX_CELL_CHARS = 200;

export interface BlockOptions {
	/** Unix seconds. */
	now: number;
	maxSelectionLines?: number;
	maxSelectionBytes?: number;
}

/** The selection as injected: enough to quote it and to record it, without the text itself. */
export interface InjectedSelection {
	file: string;
	name: string;
	start: { line: number; column: number };
	end: { line: number; column: number };
	selectedAt: number;
	/** Lines and UTF-8 bytes of the selection as the editor sent it. */
	lines: number;
	bytes: number;
	/** True when the text was cut to the caps. */
	truncated: boolean;
	/** The first words, whitespace collapsed, for the one-line quote. */
	preview: string;
}

export interface ContextDetails {
	pid: number;
	editor: string;
	file: string | null;
	language: string | null;
	selection?: InjectedSelection;
	table?: string;
}

export interface ContextBlock {
	text: string;
	details: ContextDetails;
}

export type Freshness =
	| { fresh: true; ageSeconds: number }
	| { fresh: false; ageSeconds: number | null; reason: "no selection" | "no timestamp" | "stale" | "in the future" };

/**
 * Fresh = made at most SELECTION_FRESH_SECONDS ago. A `selected_at` up to
 * MAX_CLOCK_SKEW_SECONDS ahead of pi's clock (another clock, rounding) counts as
 * just made; further ahead it is invalid, not fresh for ever: a client writing
 * milliseconds instead of seconds would otherwise send every stale selection.
 */
export function checkFreshness(selection: Selection | null, now: number): Freshness {
	if (!selection) return { fresh: false, ageSeconds: null, reason: "no selection" };
	if (selection.selected_at === null) return { fresh: false, ageSeconds: null, reason: "no timestamp" };
	const age = now - selection.selected_at;
	if (age < -MAX_CLOCK_SKEW_SECONDS) return { fresh: false, ageSeconds: age, reason: "in the future" };
	return age <= SELECTION_FRESH_SECONDS
		? { fresh: true, ageSeconds: Math.max(0, age) }
		: { fresh: false, ageSeconds: age, reason: "stale" };
}

/**
 * Build the block for an editor showing a file (`file` already resolved to an
 * absolute path) or a database view. Returns null for an unnamed buffer with
 * no database view: there is nothing useful to say.
 */
export function formatContextBlock(
	state: EditorState,
	file: string | null,
	options: BlockOptions,
): ContextBlock | null {
	const editor = formatEditorName(state);
	const buffer = state.active_buffer;
	if (state.database) {
		return {
			text: formatDatabaseBlock(editor, state.database),
			details: { pid: state.pid, editor, file: null, language: null, table: state.database.table },
		};
	}
	if (file === null) return null;
	const language = buffer.language?.trim() || languageOfFile(file) || "";
	const lines = [`The user's editor (${editor}) shows this file:`, `File: ${oneLine(file)}`];
	if (language) lines.push(`Language: ${oneLine(language, 60)}`);
	if (buffer.cursor.line !== null) {
		lines.push(
			buffer.cursor.column !== null
				? `Cursor: line ${buffer.cursor.line}, column ${buffer.cursor.column}`
				: `Cursor: line ${buffer.cursor.line}`,
		);
	}
	lines.push(
		`Buffer: ${buffer.lines_total} ${buffer.lines_total === 1 ? "line" : "lines"}, ${buffer.modified ? "unsaved changes" : "saved"}`,
	);
	const details: ContextDetails = { pid: state.pid, editor, file, language: language || null };
	const selection = buffer.selection;
	const freshness = checkFreshness(selection, options.now);
	if (selection && freshness.fresh) {
		const capped = capText(
			selection.text,
			options.maxSelectionLines ?? DEFAULT_MAX_SELECTION_LINES,
			options.maxSelectionBytes ?? DEFAULT_MAX_SELECTION_BYTES,
		);
		const range =
			selection.start.line === selection.end.line
				? `line ${selection.start.line}, columns ${selection.start.column}-${selection.end.column}`
				: `lines ${selection.start.line}-${selection.end.line}`;
		const cutByEditor = selection.truncated === true ? `; cut by the editor to ${formatBytes(capped.totalBytes)}` : "";
		const cut = capped.truncated
			? `; cut to the first ${capped.lines} of ${capped.totalLines} lines (${formatBytes(capped.bytes)} of ${formatBytes(capped.totalBytes)})`
			: "";
		const fence = fenceFor(capped.text);
		lines.push(
			`Selection (${range}, made ${formatSeconds(freshness.ageSeconds)} ago${cutByEditor}${cut}):`,
			`${fence}${fenceLanguage(language)}`,
			capped.text,
			fence,
		);
		details.selection = {
			file,
			name: basename(file),
			start: selection.start,
			end: selection.end,
			selectedAt: selection.selected_at ?? options.now,
			lines: capped.totalLines,
			bytes: capped.totalBytes,
			truncated: capped.truncated || selection.truncated === true,
			preview: previewText(selection.text),
		};
	}
	return { text: lines.join("\n"), details };
}

/** The one-line quote shown under the user's message: `↳ main.ts:40-45 · first words`. */
export function formatQuote(selection: InjectedSelection): string {
	const range =
		selection.start.line === selection.end.line
			? `${selection.start.line}`
			: `${selection.start.line}-${selection.end.line}`;
	const name = oneLine(selection.name, 80);
	// The preview was made inert when the block was built, but a quote is also drawn from a saved session,
	// which an older pi (with a narrower rule) may have written: the rule is applied again here.
	const preview = oneLine(selection.preview, PREVIEW_CHARS);
	return preview ? `↳ ${name}:${range} · ${preview}` : `↳ ${name}:${range}`;
}

function formatDatabaseBlock(editor: string, db: DatabaseView): string {
	const qualified = db.schema ? `${db.schema}.${db.table}` : db.table;
	const source = db.data_source ? ` (data source ${oneLine(db.data_source, 120)})` : "";
	const lines = [`The user's editor (${editor}) shows a database table:`, `Table: ${oneLine(qualified, 200)}${source}`];
	if (db.primary_key && db.primary_key.length > 0)
		lines.push(`Primary key: ${db.primary_key.map((c) => oneLine(c, 80)).join(", ")}`);
	if (db.columns && db.columns.length > 0) {
		const total = db.columns_total ?? db.columns.length;
		const count = total > db.columns.length ? `${db.columns.length} of ${total}` : `${db.columns.length}`;
		const list = db.columns.map((c) =>
			c.type ? `${oneLine(c.name, 80)} ${oneLine(c.type, 40)}` : oneLine(c.name, 80),
		);
		lines.push(`Columns (${count}): ${list.join(", ")}`);
	}
	for (const fk of db.foreign_keys ?? []) {
		const onDelete = fk.on_delete ? ` ON DELETE ${oneLine(fk.on_delete, 40)}` : "";
		lines.push(
			`Foreign key: (${fk.columns.map((c) => oneLine(c, 80)).join(", ")}) -> ${oneLine(fk.ref_table, 120)}(${fk.ref_columns.map((c) => oneLine(c, 80)).join(", ")})${onDelete}`,
		);
	}
	if (db.filter) lines.push(`Filter: ${oneLine(db.filter)}`);
	if (db.row_count !== undefined && db.row_count !== null) lines.push(`Rows: ${db.row_count}`);
	if (db.cell) {
		const type = db.cell.type ? ` (${oneLine(db.cell.type, 40)})` : "";
		const value = db.cell.value === null ? "NULL" : oneLine(db.cell.value, MAX_CELL_CHARS);
		lines.push(`Selected cell: row ${db.cell.row}, column ${oneLine(db.cell.column, 80)}${type} = ${value}`);
	}
	return lines.join("\n");
}

/** A backtick fence longer than the longest backtick run in `text` (at least three). */
export function fenceFor(text: string): string {
	let longest = 0;
	for (const run of text.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
	return "`".repeat(Math.max(3, longest + 1));
}

export interface CappedText {
	text: string;
	truncated: boolean;
	lines: number;
	bytes: number;
	totalLines: number;
	totalBytes: number;
}

/** Keep whole lines up to `maxLines` and `maxBytes` (UTF-8); a single line longer than `maxBytes` is cut at a character boundary. */
export function capText(text: string, maxLines: number, maxBytes: number): CappedText {
	const all = text.split("\n");
	const totalBytes = Buffer.byteLength(text, "utf8");
	if (all.length <= maxLines && totalBytes <= maxBytes) {
		return { text, truncated: false, lines: all.length, bytes: totalBytes, totalLines: all.length, totalBytes };
	}
	const kept: string[] = [];
	let bytes = 0;
	for (const line of all) {
		if (kept.length >= maxLines) break;
		const cost = Buffer.byteLength(line, "utf8") + (kept.length > 0 ? 1 : 0);
		if (bytes + cost > maxBytes) {
			if (kept.length === 0) kept.push(cutToBytes(line, maxBytes));
			break;
		}
		kept.push(line);
		bytes += cost;
	}
	const result = kept.join("\n");
	return {
		text: result,
		truncated: true,
		lines: kept.length,
		bytes: Buffer.byteLength(result, "utf8"),
		totalLines: all.length,
		totalBytes,
	};
}

function cutToBytes(line: string, maxBytes: number): string {
	let bytes = 0;
	let out = "";
	for (const char of line) {
		const size = Buffer.byteLength(char, "utf8");
		if (bytes + size > maxBytes) break;
		out += char;
		bytes += size;
	}
	return out;
}

function previewText(text: string): string {
	const words = text.replace(/\s+/g, " ").trim();
	return oneLine(words, PREVIEW_CHARS);
}

/** A language id safe after a fence (```ts): letters, digits and a few marks, or nothing. */
function fenceLanguage(language: string): string {
	return /^[A-Za-z0-9_+#.-]{1,40}$/.test(language) ? language : "";
}

/** "12 s", "3 min", "2 h", for ages in block and status text. */
export function formatSeconds(seconds: number): string {
	const s = Math.round(seconds);
	if (s < 120) return `${s} s`;
	if (s < 7200) return `${Math.round(s / 60)} min`;
	return `${Math.round(s / 3600)} h`;
}

function formatBytes(bytes: number): string {
	return bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KiB`;
}
