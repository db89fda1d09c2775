/**
 * The `/ide` picker rows: one aligned line per live editor (connected marker,
 * name, argv fingerprint, short cwd, active file, age), in the order given
 * (best tier first). Widths are terminal cells from pi-tui's `visibleWidth`, so
 * CJK and emoji stay aligned; when the row is too wide the widest flexible
 * column gives way first. Every editor-supplied string has control characters
 * replaced, so a hostile state file cannot smuggle escape sequences into the
 * terminal. Truncation is done here, grapheme by grapheme, rather than with
 * `truncateToWidth`, which appends ANSI resets that RPC clients would show as
 * text. Pure: plain data in, strings out.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import { type Tier, windowsOf, withWindow } from "../discovery/tiers.ts";
import { inert } from "../protocol/inert.ts";
import { isInside } from "../protocol/paths.ts";
import type { EditorState } from "../protocol/protocol.ts";

export interface PickerEditor {
	state: EditorState;
	tier: Tier | null;
	/** Marks this row connected; default: its pid is `connectedPid` (one row per pid). */
	connected?: boolean;
}

export interface PickerOptions {
	/** Unix seconds (fractions allowed). */
	now: number;
	/** The user's home directory, shown as `~`; empty for none. */
	home: string;
	connectedPid: number | null;
	/** Terminal cells available for one row. */
	maxWidth: number;
}

/** Marks the connected editor's row; the others get a space of the same width. */
export const CONNECTED_MARKER = "●";

const ELLIPSIS = "…";
const GAP = "  ";

type Column = "name" | "argv" | "cwd" | "file";

interface ColumnSpec {
	key: Column;
	/** Narrowest the column shrinks to before the row is cut as a whole. */
	min: number;
	/** How the text is shortened: cut at the end, or as a path, from the left. */
	shorten: "end" | "path";
}

/** Flexible columns in display order. */
const COLUMNS: readonly ColumnSpec[] = [
	{ key: "name", min: 6, shorten: "end" },
	{ key: "argv", min: 6, shorten: "end" },
	{ key: "cwd", min: 8, shorten: "path" },
	{ key: "file", min: 10, shorten: "path" },
];

/** Columns given up, in this order, when even their minimum widths do not fit. */
const DROP_ORDER: readonly Column[] = ["argv", "cwd", "name"];

const segmenter = new Intl.Segmenter();

/**
 * One aligned row per editor for ctx.ui.select, best tier first as given: name
 * (product when present, else app), argv fingerprint (joined, shortened), short
 * cwd (home -> ~, long paths shortened from the left), active file (relative to
 * the editor cwd when inside it, else ~-shortened; "[No Name]" for null; the
 * database table for a database view), "5s ago"/"3m ago"/"2h ago"/"4d ago" from
 * timestamp, and a marker for the connected one. Columns aligned by display
 * width; total row width <= maxWidth.
 */
export function formatPickerRows(editors: readonly PickerEditor[], opts: PickerOptions): string[] {
	const maxWidth = Math.max(0, Math.floor(opts.maxWidth));
	const cells = editors.map((editor) => describeEditor(editor.state, opts));
	const ages = editors.map((editor) => formatAge(opts.now - editor.state.timestamp));
	const ageWidth = Math.max(0, ...ages.map(visibleWidth));

	const natural = new Map<Column, number>();
	for (const { key } of COLUMNS) natural.set(key, Math.max(0, ...cells.map((c) => visibleWidth(c[key]))));
	// A column nobody fills (argv from editors that do not send it) takes no space at all.
	let shown = COLUMNS.filter(({ key }) => (natural.get(key) ?? 0) > 0);
	const fixedWidth = (): number => visibleWidth(CONNECTED_MARKER) + (shown.length + 1) * GAP.length + ageWidth;
	let widths = new Map(natural);
	while (!shrinkColumns(widths, shown, maxWidth - fixedWidth())) {
		// Even at their minimums the columns do not fit: drop the least telling one and try again.
		const drop = DROP_ORDER.find((key) => shown.some((spec) => spec.key === key));
		if (drop === undefined) break;
		shown = shown.filter((spec) => spec.key !== drop);
		widths = new Map(natural);
	}

	return editors.map((editor, index) => {
		const row = cells[index];
		const connected = editor.connected ?? editor.state.pid === opts.connectedPid;
		const marker = connected ? CONNECTED_MARKER : " ".repeat(visibleWidth(CONNECTED_MARKER));
		const parts = [marker];
		for (const spec of shown) {
			const width = widths.get(spec.key) ?? 0;
			const text = row?.[spec.key] ?? "";
			parts.push(
				padEnd(spec.shorten === "path" ? shortenPath(text, "", width) : fitToWidth(text, width, "start"), width),
			);
		}
		const age = ages[index] ?? "";
		const line = `${parts.join(GAP)}${GAP}${" ".repeat(ageWidth - visibleWidth(age))}${age}`;
		// Only a terminal narrower than the columns' minimums gets here: cut the row rather than wrap it.
		return visibleWidth(line) <= maxWidth ? line : fitToWidth(line, maxWidth, "start");
	});
}

/** "5s ago", "3m ago", "2h ago", "4d ago"; negative (clock skew) counts as now. */
export function formatAge(seconds: number): string {
	if (!Number.isFinite(seconds)) return "?";
	const s = Math.max(0, Math.floor(seconds));
	if (s < 60) return `${s}s ago`;
	if (s < 3600) return `${Math.floor(s / 60)}m ago`;
	if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
	return `${Math.floor(s / 86400)}d ago`;
}

/**
 * `~` for the home directory, then, when still wider than `max` cells, shortened
 * from the left: whole trailing components after "…/" where they fit, else the
 * tail of the last component after "…".
 */
export function shortenPath(path: string, home: string, max: number): string {
	const short = replaceHome(path, home);
	if (visibleWidth(short) <= max) return short;
	if (max <= 0) return "";
	const parts = short.split("/");
	let tail = parts.pop() ?? "";
	const prefix = `${ELLIPSIS}/`;
	if (visibleWidth(prefix + tail) > max) return fitToWidth(short, max, "end");
	for (let part = parts.pop(); part !== undefined; part = parts.pop()) {
		const candidate = `${part}/${tail}`;
		if (visibleWidth(prefix + candidate) > max) break;
		tail = candidate;
	}
	return prefix + tail;
}

function describeEditor(state: EditorState, opts: PickerOptions): Record<Column, string> {
	const clean = (text: string): string => inert(text);
	const cwd = clean(state.cwd);
	return {
		name: clean(state.product?.trim() || state.app),
		argv: clean((state.argv ?? []).join(" ")),
		// Only ~ here: cwd and file are shortened to their column's width once the widths are known.
		cwd: shortenPath(cwd, opts.home, Number.POSITIVE_INFINITY),
		file: describeFile(state, cwd, opts.home),
	};
}

function describeFile(state: EditorState, cwd: string, home: string): string {
	const database = state.database;
	if (database !== undefined) {
		const table = database.schema ? `${database.schema}.${database.table}` : database.table;
		return inert(`table ${table}`);
	}
	const file = state.active_buffer.file;
	if (file === null) return "[No Name]";
	const clean = inert(file);
	if (!clean.startsWith("/")) return clean;
	if (cwd.startsWith("/") && isInside(clean, cwd)) {
		// Below the cwd: the rest of the path (nothing is left when the file is the cwd itself).
		const relative = clean.slice(cwd.endsWith("/") ? cwd.length : cwd.length + 1);
		if (relative !== "") return relative;
	}
	return shortenPath(clean, home, Number.POSITIVE_INFINITY);
}

function replaceHome(path: string, home: string): string {
	const root = home.endsWith("/") ? home.slice(0, -1) : home;
	if (root === "") return path;
	if (path === root || path === `${root}/`) return "~";
	return path.startsWith(`${root}/`) ? `~${path.slice(root.length)}` : path;
}

/**
 * Take cells from the widest flexible column, one at a time, until the row fits
 * (true) or all are at their minimum (false).
 */
function shrinkColumns(widths: Map<Column, number>, shown: readonly ColumnSpec[], budget: number): boolean {
	let total = shown.reduce((sum, { key }) => sum + (widths.get(key) ?? 0), 0);
	while (total > budget) {
		let widest: ColumnSpec | undefined;
		for (const spec of shown) {
			const width = widths.get(spec.key) ?? 0;
			if (width > spec.min && (widest === undefined || width > (widths.get(widest.key) ?? 0))) widest = spec;
		}
		if (widest === undefined) return false;
		widths.set(widest.key, (widths.get(widest.key) ?? 0) - 1);
		total--;
	}
	return true;
}

/** Shorten to at most `width` cells with an ellipsis, keeping the start or the end; whole graphemes only. */
function fitToWidth(text: string, width: number, keep: "start" | "end"): string {
	if (visibleWidth(text) <= width) return text;
	if (width <= 0) return "";
	const graphemes = Array.from(segmenter.segment(text), (s) => s.segment);
	if (keep === "end") graphemes.reverse();
	const kept: string[] = [];
	let used = visibleWidth(ELLIPSIS);
	for (const grapheme of graphemes) {
		const cells = visibleWidth(grapheme);
		if (used + cells > width) break;
		kept.push(grapheme);
		used += cells;
	}
	if (keep === "end") return ELLIPSIS + kept.reverse().join("");
	return kept.join("") + ELLIPSIS;
}

function padEnd(text: string, width: number): string {
	return text + " ".repeat(Math.max(0, width - visibleWidth(text)));
}

/** What picking a row does. `window`: the cwd of the project window picked, for an editor that lists several (PROTOCOL.md, windows). */
export type PickerAction = { kind: "connect"; pid: number; window?: string } | { kind: "disconnect" };

/**
 * Rows for `/ide`, aligned, with a disconnect row when connected: one per editor, and for an editor with
 * several project windows one per window (the window pi sees first; picking a row picks its window).
 */
export function formatPickerChoices(
	editors: ReadonlyArray<{ state: EditorState; tier: Tier | null }>,
	connected: number | null,
	opts: Omit<PickerOptions, "connectedPid">,
): { rows: string[]; actions: PickerAction[] } {
	const entries = editors.flatMap((e) => {
		const windows = windowsOf(e.state);
		return windows.map((window, index) => ({
			state: index === 0 ? e.state : withWindow(e.state, window),
			tier: index === 0 ? e.tier : null,
			window: windows.length > 1 ? window.cwd : undefined,
			connected: index === 0 && e.state.pid === connected,
		}));
	});
	const rows = formatPickerRows(
		entries.map((e) => ({ state: e.state, tier: e.tier, connected: e.connected })),
		{ ...opts, connectedPid: connected },
	);
	const actions: PickerAction[] = entries.map((e) =>
		e.window === undefined
			? { kind: "connect", pid: e.state.pid }
			: { kind: "connect", pid: e.state.pid, window: e.window },
	);
	if (connected !== null) {
		rows.push("Disconnect (stop sending editor context in this project, remembered until /ide auto)");
		actions.push({ kind: "disconnect" });
	}
	return { rows, actions };
}
