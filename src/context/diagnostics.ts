/**
 * Editor diagnostics for the model: which ones matter (errors first, then nearest the cursor), and how they
 * read (one compact line each). Pure. Every message, source and code came from the editor, so each is made
 * inert (one line, control characters escaped, cut) before it reaches the model.
 *
 * Staleness is decided here too: diagnostics carry the buffer version they were computed for, and ones older
 * than the content they would describe are never presented as current.
 */

import { oneLine } from "../protocol/inert.ts";
import type { DiagnosticItem, Diagnostics, EditorState, Severity } from "../protocol/protocol.ts";
import { type ContextBlock, contextBlock } from "./blocks.ts";

/** Most diagnostics shown in a prompt's context block. */
export const PROMPT_DIAGNOSTICS_CAP = 10;
/** Most diagnostics appended to a write/edit tool result. */
export const TOOL_DIAGNOSTICS_CAP = 20;
/** Longest message shown, in characters (the editor already capped it at 500). */
const MESSAGE_CHARS = 200;

const RANK: Readonly<Record<Severity, number>> = { error: 0, warning: 1, info: 2, hint: 3 };

/** Errors first, then by distance to `cursorLine` (by line when there is no cursor), then by position. */
export function selectDiagnostics(
	items: readonly DiagnosticItem[],
	cursorLine: number | null,
	cap: number,
): { shown: DiagnosticItem[]; omitted: number } {
	const near = cursorLine ?? 0;
	const sorted = [...items].sort(
		(a, b) =>
			RANK[a.severity] - RANK[b.severity] ||
			Math.abs(a.line - near) - Math.abs(b.line - near) ||
			a.line - b.line ||
			a.column - b.column,
	);
	const shown = sorted.slice(0, Math.max(0, cap));
	return { shown, omitted: items.length - shown.length };
}

/** `error 12:5 Cannot find name 'x'. [typescript 2304]` */
export function formatDiagnostic(item: DiagnosticItem): string {
	const origin = [item.source, item.code]
		.filter((v): v is string => typeof v === "string" && v.trim() !== "")
		.map((v) => oneLine(v.trim(), 40))
		.join(" ");
	const message = oneLine(item.message.trim(), MESSAGE_CHARS);
	return `${item.severity} ${item.line}:${item.column} ${message}${origin ? ` [${origin}]` : ""}`;
}

/** "2 errors, 1 warning" over the items the editor sent. */
export function countBySeverity(items: readonly DiagnosticItem[]): string {
	const counts = new Map<Severity, number>();
	for (const item of items) counts.set(item.severity, (counts.get(item.severity) ?? 0) + 1);
	const parts: string[] = [];
	for (const severity of Object.keys(RANK) as Severity[]) {
		const n = counts.get(severity);
		if (n)
			parts.push(`${n} ${severity === "info" || severity === "hint" ? severity : `${severity}${n === 1 ? "" : "s"}`}`);
	}
	return parts.join(", ");
}

/** Two items are one diagnostic when everything the protocol says of them is the same. */
function sameDiagnostic(a: DiagnosticItem, b: DiagnosticItem): boolean {
	return (
		a.severity === b.severity &&
		a.line === b.line &&
		a.column === b.column &&
		(a.end_line ?? null) === (b.end_line ?? null) &&
		(a.end_column ?? null) === (b.end_column ?? null) &&
		a.message === b.message &&
		(a.source ?? null) === (b.source ?? null) &&
		(a.code ?? null) === (b.code ?? null)
	);
}

/**
 * The diagnostics with exact duplicates listed and counted once (two clients of one server, or an editor
 * that merges its checkers' lists, report each problem twice; the model must read it once). The first of
 * each is kept, in the editor's order. Each item is compared only with the kept items of its message.
 */
export function distinctDiagnostics(diagnostics: Diagnostics): Diagnostics {
	const byMessage = new Map<string, DiagnosticItem[]>();
	const items: DiagnosticItem[] = [];
	for (const item of diagnostics.items) {
		const kept = byMessage.get(item.message);
		if (kept?.some((k) => sameDiagnostic(k, item))) continue;
		if (kept) kept.push(item);
		else byMessage.set(item.message, [item]);
		items.push(item);
	}
	const removed = diagnostics.items.length - items.length;
	if (removed === 0) return diagnostics;
	return { ...diagnostics, total: Math.max(items.length, diagnostics.total - removed), items };
}

/** Diagnostics are current for `version` when they were computed for it or later. */
export function isCurrent(diagnostics: Diagnostics, version: number | null | undefined): boolean {
	return version === null || version === undefined || diagnostics.version >= version;
}

/**
 * The lines added to the prompt's context block for the active buffer, or none when the editor sent no
 * diagnostics (a v0.2 editor, or a v0.3 editor that has none to say). Stale ones are counted, never listed.
 */
export function formatPromptDiagnostics(buffer: EditorState["active_buffer"], cap = PROMPT_DIAGNOSTICS_CAP): string[] {
	if (!buffer.diagnostics) return [];
	const diagnostics = distinctDiagnostics(buffer.diagnostics);
	if (!isCurrent(diagnostics, buffer.version)) {
		return [
			`Diagnostics: ${diagnostics.total} reported for an earlier version of the buffer (${diagnostics.version}, now ${buffer.version}); not shown, they may no longer apply`,
		];
	}
	if (isClean(diagnostics)) return ["Diagnostics: none"];
	return formatList(diagnostics, buffer.cursor.line, cap, "errors first, then nearest the cursor");
}

/** No diagnostics at all: none listed and none counted (an editor may count more than it lists). */
export function isClean(diagnostics: Diagnostics): boolean {
	return diagnostics.items.length === 0 && diagnostics.total === 0;
}

/**
 * Lines for a header plus one line per shown diagnostic (exact duplicates once). The header counts what the
 * editor reported: by severity over the items it listed, plus how many more it counted but did not list (its
 * own cap), so the counts always add up to the total; then how many of them follow, when not all.
 */
export function formatList(reported: Diagnostics, cursorLine: number | null, cap: number, order: string): string[] {
	const diagnostics = distinctDiagnostics(reported);
	const { shown } = selectDiagnostics(diagnostics.items, cursorLine, cap);
	const total = Math.max(diagnostics.total, diagnostics.items.length);
	const unlisted = total - diagnostics.items.length;
	const listed = countBySeverity(diagnostics.items);
	const summary =
		unlisted === 0
			? listed
			: diagnostics.items.length === 0
				? `${total} reported, none listed by the editor`
				: `${total} in all: ${listed}, ${unlisted} more the editor did not list`;
	const showing =
		diagnostics.items.length > 0 && shown.length < total ? `; showing ${shown.length} of ${total}, ${order}` : "";
	return [`Diagnostics (${summary}${showing}):`, ...shown.map((d) => `- ${formatDiagnostic(d)}`)];
}

/** The context block with the active buffer's diagnostics as its last section (unchanged when there are none). */
export function appendPromptDiagnostics(block: ContextBlock, state: EditorState): ContextBlock {
	if (state.database) return block;
	const lines = formatPromptDiagnostics(state.active_buffer);
	if (lines.length === 0) return block;
	const { header, sections } = block.sections;
	return contextBlock({ header, sections: [...sections, { kind: "text", key: "Diagnostics", lines }] }, block.details);
}
