/**
 * A context block as sections: its header line and its sections by their leading key (`File:`, `Cursor:`,
 * `Selection (...)`, or any key another part of the extension adds later), parsed from the block's text; the
 * canonical form the model view compares (ages removed, the selection replaced by its identity), and the text
 * rendered back from sections (a whole block, an update, a selection as a reference, pi's one-line screen note).
 * Pure.
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import type { ContextDetails } from "./blocks.ts";

/** The canonical form of a block: the header line and its sections in order, ages removed. */
export interface CanonicalState {
	header: string;
	sections: Array<[key: string, value: string]>;
}

/** A selection as the model received it: same editor, file, range, time and text means the same selection. */
export interface SelectionIdentity {
	pid: number;
	file: string;
	range: string;
	selectedAt: number;
	/** sha256 of the selection text as it appears in the block, first 16 hex digits. */
	hash: string;
}

/** The key that identifies a selection across messages. */
export function selectionKey(selection: SelectionIdentity): string {
	return `${selection.pid}\u0000${selection.file}\u0000${selection.range}\u0000${selection.selectedAt}\u0000${selection.hash}`;
}

export const SELECTION_KEY = "Selection";
export const REFERENCE_WORDS = "the same selection as in an earlier editor context";

export interface Section {
	key: string;
	lines: string[];
}

export interface ParsedBlock {
	header: string;
	sections: Section[];
}

/**
 * Split a block into its header line and sections. A section starts at a line
 * that begins with a capitalised key followed by ":" or " (" (`Cursor: ...`,
 * `Selection (lines 1-3, ...):`); other lines (indented items, fenced text)
 * belong to the section before them. A repeated key gets a `#n` suffix.
 */
export function parseBlock(text: string): ParsedBlock {
	const [header = "", ...rest] = text.split("\n");
	const sections: Section[] = [];
	const seen = new Map<string, number>();
	let fence: string | null = null;
	for (const line of rest) {
		const current = sections.at(-1);
		if (fence !== null) {
			current?.lines.push(line);
			if (/^`+\s*$/.test(line) && line.trim().length >= fence.length) fence = null;
			continue;
		}
		const opening = /^(`{3,})/.exec(line);
		if (opening && current) {
			fence = opening[1] as string;
			current.lines.push(line);
			continue;
		}
		const key = /^([A-Z][A-Za-z0-9 _-]*?)(?::| \()/.exec(line)?.[1];
		if (key === undefined && current) {
			current.lines.push(line);
			continue;
		}
		const base = key ?? "Text";
		const count = (seen.get(base) ?? 0) + 1;
		seen.set(base, count);
		sections.push({ key: count === 1 ? base : `${base}#${count}`, lines: [line] });
	}
	return { header, sections };
}

/** Ages move on by themselves; they are not news. */
export function withoutAges(text: string): string {
	return text.replace(/\b\d+ (?:s|min|h) ago\b/g, "ago");
}

export function canonicalState(parsed: ParsedBlock, selection: SelectionIdentity | null): CanonicalState {
	return {
		header: withoutAges(parsed.header),
		sections: parsed.sections.map(({ key, lines }) => [
			key,
			key === SELECTION_KEY && selection ? `selection ${selectionKey(selection)}` : withoutAges(lines.join("\n")),
		]),
	};
}

/** The selection's identity, from the details and the fenced text in the block. */
export function selectionIdentity(details: ContextDetails, parsed: ParsedBlock): SelectionIdentity | null {
	const selection = details.selection;
	if (!selection) return null;
	const section = parsed.sections.find((s) => s.key === SELECTION_KEY);
	const body = section ? section.lines.slice(2, -1).join("\n") : "";
	return {
		pid: details.pid,
		file: selection.file,
		range: `${selection.start.line}:${selection.start.column}-${selection.end.line}:${selection.end.column}`,
		selectedAt: selection.selectedAt,
		hash: createHash("sha256")
			.update(`${selection.lines}:${selection.bytes}:${selection.truncated}\n${body}`)
			.digest("hex")
			.slice(0, 16),
	};
}

/** The selection section's first line, turned into a reference to the copy the model already has. */
export function selectionReference(section: Section): string {
	const head = (section.lines[0] ?? "Selection:").replace(/:\s*$/, "");
	return `${head}: ${REFERENCE_WORDS} of this conversation; not repeated.`;
}

function renderSection(section: Section, referenceSelection: boolean): string[] {
	return section.key === SELECTION_KEY && referenceSelection ? [selectionReference(section)] : section.lines;
}

/** The block again, with the selection as a reference when `referenceSelection`. */
export function renderBlock(parsed: ParsedBlock, referenceSelection: boolean): string {
	return [parsed.header, ...parsed.sections.flatMap((s) => renderSection(s, referenceSelection))].join("\n");
}

export function renderUpdate(
	editor: string,
	parsed: ParsedBlock,
	changed: readonly string[],
	removed: readonly string[],
	selectionKnown: boolean,
): string {
	const lines = [`Editor update (${editor}), the rest as before:`];
	for (const section of parsed.sections) {
		if (changed.includes(section.key)) lines.push(...renderSection(section, selectionKnown));
	}
	for (const key of removed) lines.push(REMOVED_WORDING[displayKey(key)] ?? `${displayKey(key)}: none now`);
	return lines.join("\n");
}

/**
 * A section the new block no longer has, in words that cannot be mistaken for another state: no Diagnostics
 * section means the editor sends none for the current content (unknown), never that the checker found none
 * (that is `Diagnostics: none`, a section of its own).
 */
const REMOVED_WORDING: Readonly<Record<string, string>> = {
	Diagnostics: "Diagnostics: unknown now; earlier ones may not apply",
};

/** Sections a full block's screen line leaves out: the file names itself, the rest is not news to the user. */
const UNSHOWN_KEYS = new Set(["File", "Language", "Buffer", "Table", SELECTION_KEY]);

/**
 * The line pi shows under the prompt for what it sent: the file (or table) and the first line of each section
 * worth a glance (cursor, diagnostics), or an update's changed sections. Every part came from the block, which
 * already made the editor's text inert.
 */
export function sentLine(kind: "full" | "update" | "stale", text: string, details: ContextDetails): string {
	const { sections } = parseBlock(text);
	const firstLines = (keep: (key: string) => boolean) =>
		sections.filter((s) => keep(displayKey(s.key))).map((s) => (s.lines[0] ?? "").replace(/:$/, ""));
	if (kind === "update")
		return `editor update: ${firstLines((key) => key !== SELECTION_KEY).join(" · ") || "selection"}`;
	const name = details.table ?? (details.file ? basename(details.file) : details.editor);
	return [`editor context: ${name}`, ...firstLines((key) => !UNSHOWN_KEYS.has(key))].join(" · ");
}

export function displayKey(key: string): string {
	return key.replace(/#\d+$/, "");
}
