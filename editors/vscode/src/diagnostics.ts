/**
 * VS Code diagnostics to protocol v0.3's wire items, pure: `DiagnosticSeverity` (Error 0, Warning 1,
 * Information 2, Hint 3) to names, 0-based UTF-16 ranges to 1-based lines and UTF-8 byte columns, `code`
 * (a string, a number or `{ value, target }`) to a string. Takes structural look-alikes of VS Code's types.
 */
import {
	type DiagnosticCaps,
	type DiagnosticSeverity,
	type DiagnosticsReport,
	MAX_DIAGNOSTIC_ITEMS,
	SEVERITY_RANK,
	summarizeDiagnostics,
	type WireDiagnostic,
} from "../../shared/diagnostics.ts";
import { type HostPosition, type TextLines, toWirePosition } from "../../shared/state.ts";

export interface DiagnosticLike {
	severity: number;
	range: { start: HostPosition; end: HostPosition };
	message: string;
	source?: string | undefined;
	code?: string | number | { value: string | number } | undefined;
}

/** Indexed by VS Code's `DiagnosticSeverity`. */
const SEVERITIES = ["error", "warning", "info", "hint"] as const satisfies readonly DiagnosticSeverity[];

function codeOf(code: DiagnosticLike["code"]): string | null {
	if (code === undefined || code === null) return null;
	if (typeof code === "object") return String(code.value);
	return String(code);
}

/** One VS Code diagnostic on the wire; positions are read against `lines` (the document's current text). */
export function toWireDiagnostic(diagnostic: DiagnosticLike, lines: TextLines): WireDiagnostic {
	const start = toWirePosition(lines, diagnostic.range.start);
	const end = toWirePosition(lines, diagnostic.range.end);
	return {
		severity: SEVERITIES[diagnostic.severity] ?? "info",
		line: start.line,
		column: start.column,
		end_line: end.line,
		end_column: end.column,
		message: diagnostic.message,
		source: diagnostic.source ?? null,
		code: codeOf(diagnostic.code),
	};
}

const rankOf = (d: DiagnosticLike) => SEVERITY_RANK[SEVERITIES[d.severity] ?? "info"];

/**
 * The wire report for a document's diagnostics, current for document `version`. Sorted in VS Code's terms
 * first (a UTF-16 offset orders the same as a byte column), so only the kept ones are converted.
 */
export function reportDiagnostics(
	diagnostics: readonly DiagnosticLike[],
	lines: TextLines,
	version: number,
	caps: DiagnosticCaps = {},
): DiagnosticsReport {
	const first = [...diagnostics]
		.sort(
			(a, b) =>
				rankOf(a) - rankOf(b) ||
				a.range.start.line - b.range.start.line ||
				a.range.start.character - b.range.start.character,
		)
		.slice(0, caps.maxItems ?? MAX_DIAGNOSTIC_ITEMS);
	return summarizeDiagnostics(
		first.map((d) => toWireDiagnostic(d, lines)),
		version,
		caps,
		diagnostics.length,
	);
}

/**
 * Languages VS Code's built-in extensions report diagnostics for without any setup (the JSON, TypeScript /
 * JavaScript and CSS language features): a document in one of them is expected to get diagnostics after a
 * reload even before the first diagnostics event was seen for it.
 */
export const BUILTIN_DIAGNOSTIC_LANGUAGES: ReadonlySet<string> = new Set([
	"json",
	"jsonc",
	"typescript",
	"typescriptreact",
	"javascript",
	"javascriptreact",
	"css",
	"scss",
	"less",
]);
