/**
 * Protocol v0.3 diagnostics for the TypeScript clients, pure: the wire shape of `active_buffer.diagnostics`
 * and of `files[].diagnostics`, and `summarizeDiagnostics`, which sorts (errors first, then by position),
 * caps the list and clips long texts so the state file stays far below the reader's 1 MiB limit. Hosts map
 * their own diagnostics to `WireDiagnostic` first (1-based lines, 1-based UTF-8 byte columns).
 */
import { MAX_DIAGNOSTIC_ITEMS, MAX_DIAGNOSTIC_MESSAGE_CHARS } from "../../src/protocol/limits.ts";
import { utf8Length } from "./utf16.ts";

export type DiagnosticSeverity = "error" | "warning" | "info" | "hint";

export interface WireDiagnostic {
	severity: DiagnosticSeverity;
	line: number;
	column: number;
	end_line?: number;
	end_column?: number;
	message: string;
	source: string | null;
	code: string | null;
}

/** `version`: the buffer version these were current for; `total`: how many there were before the cap. */
export interface DiagnosticsReport {
	version: number;
	total: number;
	items: WireDiagnostic[];
}

// Protocol caps (at most 100 items, messages at most 500 characters): src/protocol/limits.ts.
export { MAX_DIAGNOSTIC_ITEMS, MAX_DIAGNOSTIC_MESSAGE_CHARS };
/** `source` and `code` are short names; anything longer is clipped to this. */
export const MAX_DIAGNOSTIC_LABEL = 100;

export interface DiagnosticCaps {
	/** Most items kept (default MAX_DIAGNOSTIC_ITEMS). */
	maxItems?: number;
	/**
	 * Most bytes of JSON the kept items may take (default 128 KiB). A message of control characters triples
	 * or sextuples when escaped, so the item count alone does not bound the file size.
	 */
	maxBytes?: number;
}

export const DEFAULT_DIAGNOSTICS_BYTES = 128 * 1024;

export const SEVERITY_RANK = { error: 0, warning: 1, info: 2, hint: 3 } as const satisfies Record<
	DiagnosticSeverity,
	number
>;

/** Cut `text` to at most `max` UTF-16 units without splitting a surrogate pair; "…" marks a cut. */
export function clipText(text: string, max: number): string {
	if (text.length <= max) return text;
	let end = max - 1;
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return `${text.slice(0, end)}…`;
}

function clipLabel(value: string | null): string | null {
	return value === null ? null : clipText(value, MAX_DIAGNOSTIC_LABEL);
}

function compareDiagnostics(a: WireDiagnostic, b: WireDiagnostic): number {
	return SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.line - b.line || a.column - b.column;
}

/**
 * Sort, cap and clip `items` into the wire report for buffer `version`. Does not modify `items`. `total`
 * is the count before any cap, for a host that already dropped items past the cap (default: all of them).
 */
export function summarizeDiagnostics(
	items: readonly WireDiagnostic[],
	version: number,
	caps: DiagnosticCaps = {},
	total = items.length,
): DiagnosticsReport {
	const maxItems = caps.maxItems ?? MAX_DIAGNOSTIC_ITEMS;
	const maxBytes = caps.maxBytes ?? DEFAULT_DIAGNOSTICS_BYTES;
	const kept: WireDiagnostic[] = [];
	let bytes = 0;
	for (const item of [...items].sort(compareDiagnostics)) {
		if (kept.length >= maxItems) break;
		const clipped: WireDiagnostic = {
			...item,
			message: clipText(item.message, MAX_DIAGNOSTIC_MESSAGE_CHARS),
			source: clipLabel(item.source),
			code: clipLabel(item.code),
		};
		bytes += utf8Length(JSON.stringify(clipped)) + 1;
		if (bytes > maxBytes) break;
		kept.push(clipped);
	}
	return { version, total, items: kept };
}
