/**
 * What pi's `read` tool returns for a file the connected editor holds with unsaved changes (v0.5, issue 26): the
 * editor's buffer, the lines the read asked for (its offset and limit), said to be the unsaved buffer and not the
 * file on disk. The editor hands its modified buffers over in `<pid>.buffers.json` (PROTOCOL.md, v0.5); this module
 * validates that file and renders the tool result from one entry. Pure: the shell (EditorLink) reads the files and
 * applies the ignore rules.
 *
 * Why the buffer's lines rather than a diff against the disk: the model asked for lines, and gets the lines the
 * user sees, numbered as on screen, with read's own continuation notes; a diff would need the disk text too and
 * make the model apply it in its head. The note says the disk still has the saved text.
 */
import { inert, oneLine } from "../protocol/inert.ts";
import {
	type EditorBuffers,
	MAX_LINE_NUMBER,
	MAX_UNSAVED_BUFFERS,
	type UnsavedBuffer,
	type UnsavedBufferNote,
} from "../protocol/wire.ts";
import { capText, fenceFor } from "./blocks.ts";

export type ParsedBuffers = { ok: true; buffers: UnsavedBuffer[]; dropped: number } | { ok: false; problem: string };

const NOTES: ReadonlySet<string> = new Set<UnsavedBufferNote>(["too_large"]);

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_LINE_NUMBER;
}

/** One entry, or undefined when malformed: an absolute path, a version and a line count, and text or a known note. */
function parseEntry(raw: unknown): UnsavedBuffer | undefined {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
	const e = raw as Record<string, unknown>;
	if (typeof e["file"] !== "string" || !e["file"].startsWith("/")) return undefined;
	if (!Number.isSafeInteger(e["version"]) || (e["version"] as number) < 0) return undefined;
	if (!isCount(e["lines_total"])) return undefined;
	const text = e["text"];
	const note = e["note"];
	if (typeof text === "string")
		return { file: e["file"], version: e["version"] as number, lines_total: e["lines_total"], text };
	if (text === undefined && typeof note === "string" && NOTES.has(note))
		return {
			file: e["file"],
			version: e["version"] as number,
			lines_total: e["lines_total"],
			note: note as UnsavedBufferNote,
		};
	return undefined;
}

/**
 * Validate `<pid>.buffers.json`'s text: it must be editor `pid`'s and the `serial` its state file names (an older
 * or newer copy is not the buffers the state describes). Malformed entries are dropped and counted; at most
 * MAX_UNSAVED_BUFFERS are kept. Never throws.
 */
export function parseEditorBuffers(text: string, pid: number, serial: number): ParsedBuffers {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		return { ok: false, problem: `invalid JSON: ${(error as Error).message}` };
	}
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, problem: "not an object" };
	const file = raw as Partial<Record<keyof EditorBuffers, unknown>>;
	if (file.kind !== "editor-buffers") return { ok: false, problem: "kind is not editor-buffers" };
	if (file.pid !== pid) return { ok: false, problem: `pid field ${String(file.pid)} is not ${pid}` };
	if (file.serial !== serial)
		return { ok: false, problem: `serial ${String(file.serial)} is not the state's ${serial}` };
	if (!Array.isArray(file.buffers)) return { ok: false, problem: "buffers is not a list" };
	const buffers: UnsavedBuffer[] = [];
	let dropped = 0;
	for (const entry of file.buffers.slice(0, MAX_UNSAVED_BUFFERS)) {
		const parsed = parseEntry(entry);
		if (parsed) buffers.push(parsed);
		else dropped++;
	}
	return { ok: true, buffers, dropped };
}

/** The caps of pi's `read` on one result (pi's DEFAULT_MAX_LINES and DEFAULT_MAX_BYTES). */
export interface ReadCaps {
	maxLines: number;
	maxBytes: number;
}

export interface UnsavedReadInput {
	/** The path as the model wrote it in the read (shown back to it). */
	path: string;
	/** The editor's name (formatEditorName). */
	editor: string;
	buffer: UnsavedBuffer;
	/** The read's own arguments, as the model sent them. */
	offset?: unknown;
	limit?: unknown;
	caps: ReadCaps;
}

/**
 * The tool result: `replace` the disk read with the buffer's lines, or add a `note` to it (the editor did not hand
 * the text over: too large).
 */
export type UnsavedRead = { kind: "replace"; text: string } | { kind: "note"; text: string };

/** 1-based offset as pi's read takes it: a missing or non-positive one is the first line. */
function startLineOf(offset: unknown): number {
	return typeof offset === "number" && Number.isFinite(offset) && offset >= 1 ? Math.floor(offset) - 1 : 0;
}

function limitOf(limit: unknown): number | undefined {
	return typeof limit === "number" && Number.isInteger(limit) && limit >= 0 ? limit : undefined;
}

/** Lines `start`.. of `text`, at most `max` of them and `maxBytes` in all (UTF-8, `\n` between them), and the total. */
interface LineWindow {
	lines: string[];
	total: number;
	/** Stopped by the caps (more lines were asked for). */
	capped: boolean;
}

/**
 * The window a read shows, found without splitting the whole buffer (a 10,000-line buffer is read a window at a
 * time): skip to `start`, keep whole lines within the caps (a first line over `maxBytes` is cut at a character
 * boundary, as for the block's selection), then count the rest.
 */
function windowOf(text: string, start: number, wanted: number, caps: ReadCaps): LineWindow {
	let pos = 0;
	let index = 0;
	while (index < start && pos <= text.length) {
		const nl = text.indexOf("\n", pos);
		pos = nl === -1 ? text.length + 1 : nl + 1;
		index++;
	}
	const lines: string[] = [];
	let bytes = 0;
	let capped = false;
	while (pos <= text.length && lines.length < wanted) {
		if (lines.length >= caps.maxLines) {
			capped = true;
			break;
		}
		const nl = text.indexOf("\n", pos);
		const end = nl === -1 ? text.length : nl;
		const line = text.slice(pos, end);
		const cost = Buffer.byteLength(line, "utf8") + (lines.length > 0 ? 1 : 0);
		if (bytes + cost > caps.maxBytes) {
			if (lines.length === 0) {
				lines.push(capText(line, 1, caps.maxBytes).text);
				pos = end + 1;
			}
			capped = true;
			break;
		}
		lines.push(line);
		bytes += cost;
		pos = end + 1;
	}
	let total = index + lines.length;
	for (; pos <= text.length; total++) {
		const nl = text.indexOf("\n", pos);
		pos = nl === -1 ? text.length + 1 : nl + 1;
	}
	return { lines, total, capped };
}

/** Render the read's result from the editor's unsaved buffer. */
export function formatUnsavedRead(input: UnsavedReadInput): UnsavedRead {
	const { buffer, caps } = input;
	const path = oneLine(input.path, 300);
	const where = `${path} is open in ${input.editor} with unsaved changes`;
	if (buffer.text === undefined) {
		return {
			kind: "note",
			text: `[${where} (${buffer.lines_total} lines in the buffer), too large for the editor to hand over: the text above is the file on disk and may differ from what the user sees.]`,
		};
	}
	const start = startLineOf(input.offset);
	const limit = limitOf(input.limit);
	const shown = windowOf(buffer.text, start, limit ?? Number.POSITIVE_INFINITY, caps);
	const total = shown.total;
	const head = `[${where}. Below is the editor's unsaved buffer (what the user sees, buffer version ${buffer.version}, ${total} ${total === 1 ? "line" : "lines"}), not the file on disk, which does not have the unsaved changes.]`;
	if (start >= total) {
		return {
			kind: "replace",
			text: `${head}\n[Offset ${start + 1} is beyond the end of the unsaved buffer (${total} lines).]`,
		};
	}
	const body = inert(shown.lines.join("\n"), { lines: "keep" });
	const fence = fenceFor(body);
	const out = [head, fence, body, fence];
	const shownEnd = start + shown.lines.length;
	if (shownEnd < total) {
		const why = shown.capped ? "" : ` (${total - shownEnd} more)`;
		out.push(`[Showing lines ${start + 1}-${shownEnd} of ${total}${why}. Use offset=${shownEnd + 1} to continue.]`);
	}
	return { kind: "replace", text: out.join("\n") };
}
