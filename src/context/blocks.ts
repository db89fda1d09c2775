/**
 * What the model reads: the context block built from one editor snapshot. Pure
 * and deterministic (the clock comes in as `now`). Every value that came from a
 * state file is treated as untrusted text: single-line fields are escaped so a
 * file name cannot start a new line of the block, and selection text is fenced
 * with a fence longer than any backtick run inside it, so it can never close it.
 *
 * A block is data first (`BlockSections`: its header and its sections, ages and
 * sizes as numbers) and its text is rendered from that data in one place
 * (`sectionLines`, `blockText`): the decision (model-view.ts) works on the
 * sections, and never reads back the text it was given.
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

/**
 * The block as data: its header and its sections in order. Every string in it is already inert (escaped,
 * capped, fenced by the rules above); numbers (lines, ages, sizes) are rendered by `sectionLines`. The text
 * the model reads is `blockText` of this, and nothing reads the text back to decide (block-sections.ts).
 */
export interface BlockSections {
	header: BlockHeader;
	sections: BlockSection[];
}

/** "The user's editor (Neovim) shows this file:"; `text`: a header line of another shape (parsed from a session). */
export type BlockHeader = { kind: "editor"; editor: string; shows: "file" | "table" } | { kind: "text"; line: string };

export type BlockSection =
	| { kind: "file"; path: string }
	| { kind: "language"; language: string }
	| { kind: "cursor"; line: number; column: number | null }
	| { kind: "buffer"; lines: number; modified: boolean }
	| SelectionSection
	/** Lines under a key of their own (diagnostics, a database view's rows, a section of an older version). */
	| { kind: "text"; key: string; lines: string[] };

export interface SelectionSection {
	kind: "selection";
	/** Columns only for a selection on one line. */
	range: { first: number; last: number; columns: [number, number] | null };
	/** How long ago it was made, in seconds (not news: the canonical form leaves it out). */
	ageSeconds: number;
	/** Bytes of the selection as the editor sent it, when the editor says it cut it. */
	editorCut: number | null;
	/** pi's own cut to the selection caps. */
	cut: { lines: number; totalLines: number; bytes: number; totalBytes: number } | null;
	/** After the opening fence (```ts), or "". */
	fenceLanguage: string;
	/** The fenced text, as sent (capped). */
	text: string;
}

export interface ContextBlock {
	sections: BlockSections;
	/** `blockText(sections)`: made once, by `contextBlock`. */
	text: string;
	details: ContextDetails;
}

/** A block of `sections`, with its text rendered from them. */
export function contextBlock(sections: BlockSections, details: ContextDetails): ContextBlock {
	return { sections, text: blockText(sections), details };
}

/** The one key each section is known by (`File`, `Selection`, a text section's own). */
export function sectionKey(section: BlockSection): string {
	return section.kind === "text" ? section.key : SECTION_KEYS[section.kind];
}

const SECTION_KEYS = {
	file: "File",
	language: "Language",
	cursor: "Cursor",
	buffer: "Buffer",
	selection: "Selection",
} as const satisfies Record<Exclude<BlockSection["kind"], "text">, string>;

export function headerLine(header: BlockHeader): string {
	if (header.kind === "text") return header.line;
	return `The user's editor (${header.editor}) shows ${header.shows === "file" ? "this file" : "a database table"}:`;
}

/**
 * The lines of one section as the model reads them: the one place a section becomes text. `ages: false` leaves
 * the ages out ("made ago"), for the canonical form.
 */
export function sectionLines(section: BlockSection, ages = true): string[] {
	switch (section.kind) {
		case "file":
			return [`File: ${section.path}`];
		case "language":
			return [`Language: ${section.language}`];
		case "cursor":
			return [
				section.column !== null
					? `Cursor: line ${section.line}, column ${section.column}`
					: `Cursor: line ${section.line}`,
			];
		case "buffer":
			return [
				`Buffer: ${section.lines} ${section.lines === 1 ? "line" : "lines"}, ${section.modified ? "unsaved changes" : "saved"}`,
			];
		case "selection": {
			const { range, cut } = section;
			const where = range.columns
				? `line ${range.first}, columns ${range.columns[0]}-${range.columns[1]}`
				: `lines ${range.first}-${range.last}`;
			const age = ages ? `${formatSeconds(section.ageSeconds)} ago` : "ago";
			const cutByEditor = section.editorCut !== null ? `; cut by the editor to ${formatBytes(section.editorCut)}` : "";
			const cutHere = cut
				? `; cut to the first ${cut.lines} of ${cut.totalLines} lines (${formatBytes(cut.bytes)} of ${formatBytes(cut.totalBytes)})`
				: "";
			const fence = fenceFor(section.text);
			return [
				`Selection (${where}, made ${age}${cutByEditor}${cutHere}):`,
				`${fence}${section.fenceLanguage}`,
				...section.text.split("\n"),
				fence,
			];
		}
		case "text":
			return section.lines;
	}
}

/** The text the model reads for `block`. */
export function blockText(block: BlockSections): string {
	return [headerLine(block.header), ...block.sections.flatMap((s) => sectionLines(s))].join("\n");
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
		return contextBlock(
			{ header: { kind: "editor", editor, shows: "table" }, sections: databaseSections(state.database) },
			{ pid: state.pid, editor, file: null, language: null, table: state.database.table },
		);
	}
	if (file === null) return null;
	const language = buffer.language?.trim() || languageOfFile(file) || "";
	const sections: BlockSection[] = [{ kind: "file", path: oneLine(file) }];
	if (language) sections.push({ kind: "language", language: oneLine(language, 60) });
	if (buffer.cursor.line !== null)
		sections.push({ kind: "cursor", line: buffer.cursor.line, column: buffer.cursor.column });
	sections.push({ kind: "buffer", lines: buffer.lines_total, modified: buffer.modified });
	const details: ContextDetails = { pid: state.pid, editor, file, language: language || null };
	const selection = buffer.selection;
	const freshness = checkFreshness(selection, options.now);
	if (selection && freshness.fresh) {
		const capped = capText(
			selection.text,
			options.maxSelectionLines ?? DEFAULT_MAX_SELECTION_LINES,
			options.maxSelectionBytes ?? DEFAULT_MAX_SELECTION_BYTES,
		);
		sections.push({
			kind: "selection",
			range: {
				first: selection.start.line,
				last: selection.end.line,
				columns: selection.start.line === selection.end.line ? [selection.start.column, selection.end.column] : null,
			},
			ageSeconds: freshness.ageSeconds,
			editorCut: selection.truncated === true ? capped.totalBytes : null,
			cut: capped.truncated
				? { lines: capped.lines, totalLines: capped.totalLines, bytes: capped.bytes, totalBytes: capped.totalBytes }
				: null,
			fenceLanguage: fenceLanguage(language),
			text: capped.text,
		});
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
	return contextBlock({ header: { kind: "editor", editor, shows: "file" }, sections }, details);
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

/** A database view's sections: one line each, under its own key (`Foreign key` repeats). */
function databaseSections(db: DatabaseView): BlockSection[] {
	const line = (key: string, text: string): BlockSection => ({ kind: "text", key, lines: [text] });
	const qualified = db.schema ? `${db.schema}.${db.table}` : db.table;
	const source = db.data_source ? ` (data source ${oneLine(db.data_source, 120)})` : "";
	const sections = [line("Table", `Table: ${oneLine(qualified, 200)}${source}`)];
	if (db.primary_key && db.primary_key.length > 0)
		sections.push(line("Primary key", `Primary key: ${db.primary_key.map((c) => oneLine(c, 80)).join(", ")}`));
	if (db.columns && db.columns.length > 0) {
		const total = db.columns_total ?? db.columns.length;
		const count = total > db.columns.length ? `${db.columns.length} of ${total}` : `${db.columns.length}`;
		const list = db.columns.map((c) =>
			c.type ? `${oneLine(c.name, 80)} ${oneLine(c.type, 40)}` : oneLine(c.name, 80),
		);
		sections.push(line("Columns", `Columns (${count}): ${list.join(", ")}`));
	}
	for (const fk of db.foreign_keys ?? []) {
		const onDelete = fk.on_delete ? ` ON DELETE ${oneLine(fk.on_delete, 40)}` : "";
		sections.push(
			line(
				"Foreign key",
				`Foreign key: (${fk.columns.map((c) => oneLine(c, 80)).join(", ")}) -> ${oneLine(fk.ref_table, 120)}(${fk.ref_columns.map((c) => oneLine(c, 80)).join(", ")})${onDelete}`,
			),
		);
	}
	if (db.filter) sections.push(line("Filter", `Filter: ${oneLine(db.filter)}`));
	if (db.row_count !== undefined && db.row_count !== null) sections.push(line("Rows", `Rows: ${db.row_count}`));
	if (db.cell) {
		const type = db.cell.type ? ` (${oneLine(db.cell.type, 40)})` : "";
		const value = db.cell.value === null ? "NULL" : oneLine(db.cell.value, MAX_CELL_CHARS);
		sections.push(
			line(
				"Selected cell",
				`Selected cell: row ${db.cell.row}, column ${oneLine(db.cell.column, 80)}${type} = ${value}`,
			),
		);
	}
	return sections;
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
export function fenceLanguage(language: string): string {
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
