/**
 * pi learns what the user took back (v0.4 review): the editor's `reverted` list names pi's hunks the user
 * reverted in a buffer. With the next prompt the model is told, once per hunk and compactly, which ones (file,
 * line), so it does not silently put them back. Pure: the shell passes the editor's state and remembers what
 * was told.
 */
import { posix } from "node:path";
import { oneLine } from "../context/blocks.ts";
import type { EditorState, RevertedHunk } from "../protocol/protocol.ts";

/** Hunks listed in one note; more are counted. */
export const MAX_REVERTS_LISTED = 10;

/** The key a reverted hunk is told under: the same hunk reverted again is not news. */
export const revertKey = (r: RevertedHunk): string => `${r.pi_pid}:${r.run}:${r.id}`;

/** The editor's reverts of this pi's hunks (runs it knows, `runs`) not told yet, oldest first. */
export function newReverts(
	state: EditorState | undefined,
	piPid: number,
	runs: ReadonlySet<number>,
	told: ReadonlySet<string>,
): RevertedHunk[] {
	return (state?.reverted ?? []).filter((r) => r.pi_pid === piPid && runs.has(r.run) && !told.has(revertKey(r)));
}

/** The note for the model, or null when there is nothing new. Paths inside `cwd` are shown relative to it. */
export function formatRevertNote(reverts: RevertedHunk[], cwd: string): string | null {
	if (reverts.length === 0) return null;
	const where = (r: RevertedHunk) => {
		const rel = posix.relative(cwd, r.file);
		const shown = rel !== "" && !rel.startsWith("..") && !posix.isAbsolute(rel) ? rel : r.file;
		const span = r.lines > 1 ? `${r.line}-${r.line + r.lines - 1}` : `${r.line}`;
		return `- ${oneLine(shown)}:${span}${r.lines === 0 ? " (lines you deleted, put back)" : ""}`;
	};
	const shown = reverts.slice(0, MAX_REVERTS_LISTED).map(where);
	if (reverts.length > MAX_REVERTS_LISTED) shown.push(`- and ${reverts.length - MAX_REVERTS_LISTED} more`);
	const n = reverts.length;
	return [
		`Editor: the user reverted ${n === 1 ? "one of your changes" : `${n} of your changes`} in their editor ` +
			"(in the buffer: the file on disk keeps your version until they save). Do not re-apply " +
			`${n === 1 ? "it" : "them"} unless the user asks:`,
		...shown,
	].join("\n");
}
