/**
 * pi learns what the user took back (v0.4 review): the editor's `reverted` list names pi's hunks the user
 * reverted in a buffer. With the next prompt the model is told, once per hunk and compactly, which ones (file,
 * line, as pi's own change set has it), so it does not silently put them back. A revert the model was told of that the same editor no longer
 * lists (the user undid it: PROTOCOL.md "v0.4") is told once too, so the model does not go on believing it.
 * Pure: the shell passes the editor's state and remembers what was told, and to which editor.
 */
import { posix } from "node:path";
import { oneLine } from "../protocol/inert.ts";
import { MAX_REVERTED_REPORTS } from "../protocol/limits.ts";
import type { EditorState, RevertedHunk } from "../protocol/protocol.ts";
import { type ReviewHunk, type ReviewRun, revertKey } from "../protocol/wire.ts";

/** Hunks listed in one note; more are counted. */
export const MAX_REVERTS_LISTED = 10;

/** The key a reverted hunk is told under (the same hunk reverted again is not news): the wire's. */
export { revertKey };

/**
 * The editor's reverts of this pi's hunks not told yet, oldest first, each described by pi's own change set: only
 * an entry naming a hunk pi published (its pid, one of its runs `runs`, a hunk id of that run) counts, and it is
 * told with pi's path and pi's lines for that hunk, never the editor's `file`, `line` or `lines` (an editor can
 * list anything: a file pi never touched, made-up ids, words in a name). `excluded`: files the ignore rules keep
 * from the model (nothing is said about them).
 */
export function newReverts(
	state: EditorState | undefined,
	piPid: number,
	runs: readonly ReviewRun[],
	told: { has(key: string): boolean },
	excluded: (file: string) => boolean = () => false,
): RevertedHunk[] {
	const fresh: RevertedHunk[] = [];
	for (const r of state?.reverted ?? []) {
		if (r.pi_pid !== piPid || told.has(revertKey(r))) continue;
		const own = ownHunk(runs, r.run, r.id);
		if (own === undefined || excluded(own.file)) continue;
		fresh.push({
			pi_pid: piPid,
			run: r.run,
			id: r.id,
			file: own.file,
			line: own.hunk.new_start,
			lines: own.hunk.new_lines,
		});
	}
	return fresh;
}

/** Hunk `id` of run `run` in pi's change set, with its file; undefined when pi never published it. */
function ownHunk(runs: readonly ReviewRun[], run: number, id: string): { file: string; hunk: ReviewHunk } | undefined {
	for (const file of runs.find((r) => r.run === run)?.files ?? []) {
		const hunk = file.hunks.find((h) => h.id === id);
		if (hunk) return { file: file.file, hunk };
	}
	return undefined;
}

/** A revert the model was told of, and the editor (its pid) that listed it. */
export interface ToldRevert {
	revert: RevertedHunk;
	editorPid: number;
}

/**
 * The reverts told to the model that `editorPid`'s state no longer lists: the user undid them. Only while that
 * editor's list is under its cap (a full list drops its oldest entries) and only for the editor that listed
 * them (another editor, or this one restarted under another pid, knows nothing of them).
 */
export function undoneReverts(
	state: EditorState | undefined,
	editorPid: number,
	told: ReadonlyMap<string, ToldRevert>,
): RevertedHunk[] {
	if (state === undefined) return [];
	// No field: the editor lists none (every revert undone), or it is a v0.3 editor, which was never told of.
	const listed = state.reverted ?? [];
	if (listed.length >= MAX_REVERTED_REPORTS) return [];
	const keys = new Set(listed.map(revertKey));
	return [...told.entries()].filter(([key, t]) => t.editorPid === editorPid && !keys.has(key)).map(([, t]) => t.revert);
}

/** `file:12-14`, relative to `cwd` when inside it; editor-supplied names made inert. */
function where(r: RevertedHunk, cwd: string): string {
	const rel = posix.relative(cwd, r.file);
	const shown = rel !== "" && !rel.startsWith("..") && !posix.isAbsolute(rel) ? rel : r.file;
	const span = r.lines > 1 ? `${r.line}-${r.line + r.lines - 1}` : `${r.line}`;
	return `${oneLine(shown)}:${span}`;
}

/** The listed lines of a note: the first ten and a count. */
function listed(reverts: RevertedHunk[], line: (r: RevertedHunk) => string): string[] {
	const shown = reverts.slice(0, MAX_REVERTS_LISTED).map((r) => `- ${line(r)}`);
	if (reverts.length > MAX_REVERTS_LISTED) shown.push(`- and ${reverts.length - MAX_REVERTS_LISTED} more`);
	return shown;
}

const changes = (n: number) => (n === 1 ? "one of your changes" : `${n} of your changes`);

/** The note for the model, or null when there is nothing new. Paths inside `cwd` are shown relative to it. */
export function formatRevertNote(reverts: RevertedHunk[], cwd: string): string | null {
	if (reverts.length === 0) return null;
	const n = reverts.length;
	return [
		`Editor: the user reverted ${changes(n)} in their editor ` +
			"(in the buffer: the file on disk keeps your version until they save). Do not re-apply " +
			`${n === 1 ? "it" : "them"} unless the user asks:`,
		...listed(reverts, (r) => `${where(r, cwd)}${r.lines === 0 ? " (lines you deleted, put back)" : ""}`),
	].join("\n");
}

/** The note on reverts the user undid after the model was told of them, or null when there are none. */
export function formatUndoneNote(undone: RevertedHunk[], cwd: string): string | null {
	if (undone.length === 0) return null;
	const n = undone.length;
	return [
		`Editor: the user undid their revert of ${changes(n)} (told to you earlier): ` +
			`${n === 1 ? "it is" : "they are"} back in their editor's buffer as you made ${n === 1 ? "it" : "them"}:`,
		...listed(undone, (r) => where(r, cwd)),
	].join("\n");
}
