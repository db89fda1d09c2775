/**
 * A context block as sections (blocks.ts builds them): the canonical form the model view compares (ages left
 * out, the selection replaced by its identity), and the text rendered from sections (a whole block, an update, a
 * selection as a reference, pi's one-line screen note). The one parser of a block's text (`parseBlock`) is here
 * too, for text that comes from the session, never for a block built now. Pure.
 */
import { hash } from "node:crypto";
import { basename } from "node:path";
import {
	type BlockHeader,
	type BlockSection,
	type BlockSections,
	type ContextDetails,
	headerLine,
	type SelectionSection,
	sectionKey,
	sectionLines,
} from "./blocks.ts";

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
/** A selection whose text the model has in a user message (a send from the editor, src/link/send-deliver.ts). */
export const USER_REFERENCE_WORDS = "the selection the user sent in their message";

/** Where the model has a referenced selection's text: an earlier ide-context message, or a user message. */
export type SelectionRef = "earlier" | "user";

/**
 * The key of a selection's text as it reads in a user message and in a block: the file's base name, the lines and
 * the fenced text (sha256, 16 hex digits). A send names the file relative to pi's cwd and a block absolutely; the
 * base name is what both say alike, and the text is what the model has.
 */
export function sentSelectionKey(file: string, first: number, last: number, text: string): string {
	return `${basename(file)}\u0000${first}-${last}\u0000${hash("sha256", text).slice(0, 16)}`;
}

/** A `sentSelectionKey` without its text: the file and lines (a later send of them says what they hold now). */
export function sentSlot(key: string): string {
	return key.slice(0, key.lastIndexOf("\u0000"));
}

/** The block's selection as a `sentSelectionKey` (null: no selection, or no file). */
export function blockSentKey(block: BlockSections, file: string | null): string | null {
	const section = block.sections.find((s) => s.kind === "selection");
	if (section?.kind !== "selection" || file === null) return null;
	return sentSelectionKey(file, section.range.first, section.range.last, section.text);
}

/** A send's head line as formatSend writes it for a selection: `Selection from <file>, lines 3-5:` (or `line 3`). */
const SENT_HEAD = /^Selection from (.+), (?:line (\d+)|lines (\d+)-(\d+)):$/;

/**
 * The selections a user message holds as pi formatted a send from the editor (formatSend): the head line, then the
 * fenced text intact up to its closing fence. A user who changed or cut the text in the draft did not send it: its
 * text is not the block's and its key differs (or the fence no longer closes). Each key once, in order.
 */
export function sentSelectionsIn(text: string): string[] {
	if (!text.includes("Selection from ")) return [];
	const lines = text.split("\n");
	const out: string[] = [];
	for (let i = 0; i < lines.length - 2; i++) {
		const head = SENT_HEAD.exec(lines[i] as string);
		if (!head) continue;
		const fence = /^(`{3,})[^`]*$/.exec(lines[i + 1] as string)?.[1];
		if (fence === undefined) continue;
		const close = lines.indexOf(fence, i + 2);
		if (close < 0) continue;
		const first = Number(head[2] ?? head[3]);
		const last = Number(head[2] ?? head[4]);
		const key = sentSelectionKey(head[1] as string, first, last, lines.slice(i + 2, close).join("\n"));
		if (!out.includes(key)) out.push(key);
		i = close;
	}
	return out;
}

/** Each section with its key, a repeated key numbered from its second time on (`Foreign key#2`). */
export function keyedSections(block: BlockSections): Array<[key: string, section: BlockSection]> {
	const seen = new Map<string, number>();
	return block.sections.map((section) => {
		const base = sectionKey(section);
		const count = (seen.get(base) ?? 0) + 1;
		seen.set(base, count);
		return [count === 1 ? base : `${base}#${count}`, section];
	});
}

/**
 * The one parser of a block's text. It exists for text pi did not just build: an ide-context message read back
 * from the session (written by this version, an older one, or cut by a pruner or another extension), which the
 * request check puts back whole. A decision on a block built now works on the sections blocks.ts returned.
 *
 * The text splits into its header line and sections. A section starts at a line that begins with a capitalised
 * key followed by ":" or " (" (`Cursor: ...`, `Selection (lines 1-3, ...):`); other lines (indented items,
 * fenced text) belong to the section before them. A section is read as its typed form only when that form
 * renders back to exactly its lines; any other is kept as lines under its key. So `blockText(parseBlock(t))` is
 * `t` for any text, and for a block's own text the sections are the ones it was rendered from.
 */
export function parseBlock(text: string): BlockSections {
	const [first = "", ...rest] = text.split("\n");
	const raw: Array<{ key: string; lines: string[] }> = [];
	let fence: string | null = null;
	for (const line of rest) {
		const current = raw.at(-1);
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
		raw.push({ key: key ?? "Text", lines: [line] });
	}
	return { header: parseHeader(first), sections: raw.map(({ key, lines }) => parseSection(key, lines)) };
}

function parseHeader(line: string): BlockHeader {
	const m = /^The user's editor \((.*)\) shows (this file|a database table):$/.exec(line);
	const header: BlockHeader = m
		? { kind: "editor", editor: m[1] as string, shows: m[2] === "this file" ? "file" : "table" }
		: { kind: "text", line };
	return headerLine(header) === line ? header : { kind: "text", line };
}

function parseSection(key: string, lines: string[]): BlockSection {
	const typed = typedSection(key, lines);
	const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((l, i) => l === b[i]);
	return typed && same(sectionLines(typed), lines) ? typed : { kind: "text", key, lines };
}

/** The typed form a section's lines seem to have (parseSection checks it renders back to them). */
function typedSection(key: string, lines: string[]): BlockSection | undefined {
	if (key === SELECTION_KEY) return parseSelection(lines);
	const rule = Object.hasOwn(ONE_LINE_SECTIONS, key) ? ONE_LINE_SECTIONS[key] : undefined;
	const m = rule?.pattern.exec(lines[0] ?? "");
	return rule && m ? rule.read(m) : undefined;
}

const ONE_LINE_SECTIONS: Readonly<
	Record<string, { pattern: RegExp; read: (m: RegExpExecArray) => BlockSection } | undefined>
> = {
	File: { pattern: /^File: (.*)$/, read: (m) => ({ kind: "file", path: m[1] as string }) },
	Language: { pattern: /^Language: (.*)$/, read: (m) => ({ kind: "language", language: m[1] as string }) },
	Cursor: {
		pattern: /^Cursor: line (\d+)(?:, column (\d+))?$/,
		read: (m) => ({ kind: "cursor", line: Number(m[1]), column: m[2] === undefined ? null : Number(m[2]) }),
	},
	Buffer: {
		pattern: /^Buffer: (\d+) lines?, (unsaved changes|saved)$/,
		read: (m) => ({ kind: "buffer", lines: Number(m[1]), modified: m[2] === "unsaved changes" }),
	},
};

const SECONDS_PER = { s: 1, min: 60, h: 3600 } as const;
const BYTES_PER = { B: 1, KiB: 1024 } as const;

function parseSelection(lines: string[]): SelectionSection | undefined {
	const m =
		/^Selection \((?:line (\d+), columns (\d+)-(\d+)|lines (\d+)-(\d+)), made (\d+) (s|min|h) ago(?:; cut by the editor to (\d+) (B|KiB))?(?:; cut to the first (\d+) of (\d+) lines \((\d+) (B|KiB) of (\d+) (B|KiB)\))?\):$/.exec(
			lines[0] ?? "",
		);
	const opening = /^(`{3,})(.*)$/.exec(lines[1] ?? "");
	if (!m || !opening || lines.length < 4) return undefined;
	const n = (i: number) => Number(m[i]);
	const bytes = (i: number) => n(i) * BYTES_PER[m[i + 1] as keyof typeof BYTES_PER];
	const oneLine = m[1] !== undefined;
	return {
		kind: "selection",
		range: oneLine ? { first: n(1), last: n(1), columns: [n(2), n(3)] } : { first: n(4), last: n(5), columns: null },
		ageSeconds: n(6) * SECONDS_PER[m[7] as keyof typeof SECONDS_PER],
		editorCut: m[8] === undefined ? null : bytes(8),
		cut: m[10] === undefined ? null : { lines: n(10), totalLines: n(11), bytes: bytes(12), totalBytes: bytes(14) },
		fenceLanguage: opening[2] as string,
		text: lines.slice(2, -1).join("\n"),
	};
}

export function canonicalState(block: BlockSections, selection: SelectionIdentity | null): CanonicalState {
	return {
		header: headerLine(block.header),
		sections: keyedSections(block).map(([key, section]) => [
			key,
			key === SELECTION_KEY && selection
				? `selection ${selectionKey(selection)}`
				: sectionLines(section, false).join("\n"),
		]),
	};
}

/** The selection's identity, from the details and the selection's text in the block. */
export function selectionIdentity(details: ContextDetails, block: BlockSections): SelectionIdentity | null {
	const selection = details.selection;
	if (!selection) return null;
	const section = block.sections.find((s) => s.kind === "selection");
	const body = section?.kind === "selection" ? section.text : "";
	return {
		pid: details.pid,
		file: selection.file,
		range: `${selection.start.line}:${selection.start.column}-${selection.end.line}:${selection.end.column}`,
		selectedAt: selection.selectedAt,
		hash: selectionHash(`${selection.lines}:${selection.bytes}:${selection.truncated}\n${body}`),
	};
}

/** The last selection hashed: a cursor moved with the selection kept asks for the same digest again. */
let lastSelection: { input: string; hash: string } | undefined;

/** sha256 of `input`, first 16 hex digits (one-shot `hash`: no Hash object built), remembered for the last input. */
function selectionHash(input: string): string {
	if (lastSelection?.input !== input) lastSelection = { input, hash: hash("sha256", input).slice(0, 16) };
	return lastSelection.hash;
}

/** The selection section's first line, turned into a reference to the copy the model already has (`where`). */
export function selectionReference(section: BlockSection | undefined, where: SelectionRef = "earlier"): string {
	const head = ((section && sectionLines(section)[0]) ?? "Selection:").replace(/:\s*$/, "");
	return where === "user"
		? `${head}: ${USER_REFERENCE_WORDS}; not repeated.`
		: `${head}: ${REFERENCE_WORDS} of this conversation; not repeated.`;
}

/**
 * A selection section's first line up to its first ")" (`Selection (lines 1-3, made 2 s ago`): its range, for
 * a note about a selection whose text is gone; `Selection` when the section is missing or of another shape.
 */
export function selectionHead(section: BlockSection | undefined): string {
	return /^Selection \([^)]*\)/.exec((section && sectionLines(section)[0]) ?? "")?.[0] ?? SELECTION_KEY;
}

function renderSection(key: string, section: BlockSection, referenceSelection: boolean | SelectionRef): string[] {
	if (key !== SELECTION_KEY || referenceSelection === false) return sectionLines(section);
	return [selectionReference(section, referenceSelection === true ? "earlier" : referenceSelection)];
}

/** The block's text, with the selection as a reference (to where the model has it) when `referenceSelection`. */
export function renderBlock(block: BlockSections, referenceSelection: boolean | SelectionRef): string {
	return [
		headerLine(block.header),
		...keyedSections(block).flatMap(([key, s]) => renderSection(key, s, referenceSelection)),
	].join("\n");
}

export function renderUpdate(
	editor: string,
	block: BlockSections,
	changed: readonly string[],
	removed: readonly string[],
	selectionKnown: boolean | SelectionRef,
): string {
	const lines = [`Editor update (${editor}), the rest as before:`];
	for (const [key, section] of keyedSections(block)) {
		if (changed.includes(key)) lines.push(...renderSection(key, section, selectionKnown));
	}
	for (const key of removed) lines.push(removedLine(key));
	return lines.join("\n");
}

function removedLine(key: string): string {
	return REMOVED_WORDING[displayKey(key)] ?? `${displayKey(key)}: none now`;
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
 * worth a glance (cursor, diagnostics), or an update's changed and removed sections (`update`). Every part came
 * from the block, which already made the editor's text inert.
 */
export function sentLine(
	block: BlockSections,
	details: ContextDetails,
	update?: { changed: readonly string[]; removed: readonly string[] },
): string {
	const firstLine = (lines: readonly string[]) => (lines[0] ?? "").replace(/:$/, "");
	const keyed = keyedSections(block);
	if (update) {
		const shown = (key: string) => displayKey(key) !== SELECTION_KEY;
		const parts = [
			...keyed.filter(([key]) => update.changed.includes(key) && shown(key)).map(([, s]) => firstLine(sectionLines(s))),
			...update.removed.filter(shown).map((key) => firstLine([removedLine(key)])),
		];
		return `editor update: ${parts.join(" · ") || "selection"}`;
	}
	const name = details.table ?? (details.file ? basename(details.file) : details.editor);
	const parts = keyed.filter(([key]) => !UNSHOWN_KEYS.has(displayKey(key))).map(([, s]) => firstLine(sectionLines(s)));
	return [`editor context: ${name}`, ...parts].join(" · ");
}

export function displayKey(key: string): string {
	return key.replace(/#\d+$/, "");
}
