/**
 * The line diff pi's change set and the editors' merge (issue 26, editors/shared/merge.ts) share: the hunks between
 * two lists of lines, no context lines, from the `diff` package's line diff (jsdiff), bounded in work. Pure; moved
 * here from src/link/change-set.ts so the editors' shared code takes it from the protocol.
 */
import { diffArrays } from "diff";
import type { ReviewHunk } from "./wire.ts";

/**
 * The longest edit script (lines removed plus lines added) the line diff looks for. Myers' diff costs about the
 * lines compared times the edit script's length (a full rewrite of a 20,000-line file took 79 s on pi's main
 * thread before, issue 22), so the length is also held to DIFF_WORK_BUDGET divided by the lines compared: a
 * bound on the work, the same on every machine and under any load (a time limit would make the hunks depend on
 * how busy the machine is). Beyond it the changed region becomes one hunk (the lines the two texts share at either
 * end still stay out of it). About 30 ms for a 20,000-line rewrite at the bound.
 */
export const MAX_DIFF_EDIT_LENGTH = 500;
const DIFF_WORK_BUDGET = 10_000_000;

/** The edit length the diff may look for between `lines` compared lines (at least 1). */
export function diffEditBound(lines: number): number {
	return Math.max(1, Math.min(MAX_DIFF_EDIT_LENGTH, Math.floor(DIFF_WORK_BUDGET / Math.max(1, lines))));
}

/** A hunk before it has its id. */
export type RawHunk = Omit<ReviewHunk, "id">;

/**
 * The hunks between `oldLines` and `newLines` (no context lines), their line numbers shifted by `oldBase` and
 * `newBase` (where the two slices start in their files, 0-based).
 */
export function diffHunks(oldLines: string[], newLines: string[], oldBase = 0, newBase = 0): RawHunk[] {
	// Most edits touch one region of a long file: the lines both share at either end are no one's hunk, and
	// leaving them out of the diff makes a 10,000-line file cost what its changed region costs.
	let head = 0;
	while (head < oldLines.length && head < newLines.length && oldLines[head] === newLines[head]) head++;
	let tail = 0;
	while (
		tail < oldLines.length - head &&
		tail < newLines.length - head &&
		oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
	)
		tail++;
	const hunks: RawHunk[] = [];
	let oldAt = oldBase + head + 1;
	let newAt = newBase + head + 1;
	let open: RawHunk | undefined;
	const oldMiddle = oldLines.slice(head, oldLines.length - tail);
	const newMiddle = newLines.slice(head, newLines.length - tail);
	// Bounded (issue 22): past diffEditBound lines removed and added, the whole middle is one hunk. Still a true change set (replayed on the baseline it gives pi's version), only coarser.
	// Without a line in common (a full rewrite) the exact diff is that one hunk too, found without a search.
	const oldSet = new Set(oldMiddle);
	const common = newMiddle.some((line) => oldSet.has(line));
	const options = { maxEditLength: diffEditBound(oldMiddle.length + newMiddle.length) };
	const middle =
		(common ? diffArrays(oldMiddle, newMiddle, options) : undefined) ??
		[
			{ value: oldMiddle, count: oldMiddle.length, added: false, removed: true },
			{ value: newMiddle, count: newMiddle.length, added: true, removed: false },
		].filter((part) => part.count > 0);
	for (const part of middle) {
		const lines = part.value as string[];
		if (!part.added && !part.removed) {
			if (open) hunks.push(open);
			open = undefined;
			oldAt += lines.length;
			newAt += lines.length;
			continue;
		}
		open ??= { old_start: oldAt, old_lines: 0, new_start: newAt, new_lines: 0, old_text: [], new_text: [] };
		if (part.removed) {
			open.old_text.push(...lines);
			open.old_lines += lines.length;
			oldAt += lines.length;
		} else {
			open.new_text.push(...lines);
			open.new_lines += lines.length;
			newAt += lines.length;
		}
	}
	if (open) hunks.push(open);
	return hunks;
}
