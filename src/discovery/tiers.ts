/**
 * Which project is an editor in? Scores each editor state against pi's cwd into
 * the spec's tiers (0: same cwd; 1: cwd, absolute active file or an argv
 * directory inside pi's cwd; null: no evidence) and ranks editors best tier
 * first, most recent first. Paths are compared as real paths, so symlinks and
 * trailing slashes do not split one directory into two. Pure: every
 * file-system fact comes through the injected `PathProbe` (see path-probe.ts
 * for the node adapter), and only `node:path` string functions are used.
 */
import path from "node:path";
import { checkPathLength, isInside, type PathProbe, resolveReal } from "../protocol/paths.ts";
import type { EditorState, EditorWindow } from "../protocol/protocol.ts";

export type Tier = 0 | 1;

export interface Ranked<T> {
	item: T;
	tier: Tier | null;
}

/**
 * Most argv entries probed per editor. `nvim *.ts` can pass thousands of file
 * names; each costs a stat on every scan, and a project directory is in practice
 * among the first few arguments.
 */
export const MAX_ARGV_PROBES = 32;

/**
 * Score one editor against pi's cwd (an absolute path): 0 when the editor's cwd
 * is pi's cwd; 1 when its cwd is inside pi's cwd, or its absolute active file
 * is, or an argv entry resolves (against the editor's cwd) to an existing
 * directory equal to or inside pi's cwd; otherwise null. An editor cwd that is
 * an ancestor of pi's cwd is no evidence on its own.
 */
export function scoreEditor(state: EditorState, piCwd: string, probe: PathProbe): Tier | null {
	const project = resolveReal(piCwd, probe);
	const editorCwd = path.isAbsolute(state.cwd) ? resolveReal(state.cwd, probe) : null;
	if (editorCwd !== null) {
		if (editorCwd === project) return 0;
		if (isInside(editorCwd, project)) return 1;
	}
	const file = state.active_buffer.file;
	// Relative files (Obsidian's vault-relative paths) never count: their base is the very cwd being judged.
	if (file !== null && path.isAbsolute(file) && isInside(resolveReal(file, probe), project)) return 1;
	if (hasProjectArgv(state.argv ?? [], state.cwd, project, probe)) return 1;
	return null;
}

/**
 * Best tier first (0, 1, then null), then most recent state.timestamp first; stable.
 * `score` defaults to scoreEditor; callers that rescan often pass a memoised one.
 */
export function rankEditors<T extends { state: EditorState }>(
	items: readonly T[],
	piCwd: string,
	probe: PathProbe,
	score: typeof scoreEditor = scoreEditor,
): Ranked<T>[] {
	const ranked = items.map((item) => ({ item, tier: score(item.state, piCwd, probe) }));
	return ranked.sort(
		(a, b) => rankOfTier(a.tier) - rankOfTier(b.tier) || b.item.state.timestamp - a.item.state.timestamp,
	);
}

/** The editors in the best non-empty tier (empty when no editor has a tier), in their given order. */
export function bestTier<T>(ranked: readonly Ranked<T>[]): Ranked<T>[] {
	let best: Tier | null = null;
	for (const entry of ranked) {
		if (entry.tier !== null && (best === null || entry.tier < best)) best = entry.tier;
	}
	if (best === null) return [];
	return ranked.filter((entry) => entry.tier === best);
}

/** The window the top level of `state` describes, in the shape of a `windows` entry. */
function topWindow(state: EditorState): EditorWindow {
	const { cwd, argv, active_buffer, database } = state;
	return {
		cwd,
		...(argv === undefined ? {} : { argv }),
		active_buffer,
		...(database === undefined ? {} : { database }),
	};
}

/**
 * Every window a state file describes, the top level (the window the user touched last) first: one for an
 * editor without `windows` (PROTOCOL.md, "Several windows of one process").
 */
export function windowsOf(state: EditorState): EditorWindow[] {
	return [topWindow(state), ...(state.windows ?? [])];
}

/** `state` seen through `window`: that window's cwd, argv, buffer and view at the top level, the others listed. */
export function withWindow(state: EditorState, window: EditorWindow): EditorState {
	const all = windowsOf(state);
	const { cwd, argv, active_buffer, database, windows: _replaced, ...rest } = state;
	return {
		...rest,
		cwd: window.cwd,
		...(window.argv === undefined ? {} : { argv: window.argv }),
		active_buffer: window.active_buffer,
		...(window.database === undefined ? {} : { database: window.database }),
		windows: all.filter((w) => w !== all.find((candidate) => candidate.cwd === window.cwd)),
	};
}

/**
 * One process, several project windows: the state as pi should see it, with the window whose project is
 * pi's at the top level. `prefer` (a window's cwd the user picked in `/ide`) wins while that window is open;
 * otherwise the best tier for pi's cwd, the window touched last among equals. A state without `windows` comes
 * back unchanged (the same object), as does one whose top-level window is already the one.
 */
export function focusWindow(
	state: EditorState,
	piCwd: string,
	probe: PathProbe,
	prefer?: string,
	score: typeof scoreEditor = scoreEditor,
): EditorState {
	if (!state.windows || state.windows.length === 0) return state;
	const windows = windowsOf(state);
	let chosen = prefer === undefined ? undefined : windows.find((w) => w.cwd === prefer);
	if (chosen === undefined) {
		let best = rankOfTier(null);
		for (const window of windows) {
			const rank = rankOfTier(score(withWindow(state, window), piCwd, probe));
			if (rank < best) {
				best = rank;
				chosen = window;
			}
		}
	}
	return chosen === undefined || chosen === windows[0] ? state : withWindow(state, chosen);
}

function rankOfTier(tier: Tier | null): number {
	return tier ?? 2;
}

/**
 * Does an argv entry name a directory in the project? Entries are launch arguments, not checked paths
 * (protocol.ts refuses only over-long path fields): one that resolves to more than MAX_PATH_BYTES (a
 * `-c '<5 KB of Lua>'`, or a long relative entry on a long cwd) cannot name a directory and is never
 * probed, since walking it component by component would stall pi.
 */
function hasProjectArgv(argv: readonly string[], editorCwd: string, project: string, probe: PathProbe): boolean {
	const base = path.isAbsolute(editorCwd) ? editorCwd : null;
	for (const entry of argv.slice(0, MAX_ARGV_PROBES)) {
		if (entry === "") continue;
		let candidate: string;
		if (path.isAbsolute(entry)) candidate = path.resolve(entry);
		else if (base !== null) candidate = path.resolve(base, entry);
		else continue;
		if (checkPathLength(candidate) !== undefined) continue;
		if (!probe.isDirectory(candidate)) continue;
		if (isInside(resolveReal(candidate, probe), project)) return true;
	}
	return false;
}
