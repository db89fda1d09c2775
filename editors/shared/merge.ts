/**
 * Issue 26, pure: pi's change merged into a buffer with unsaved changes (PROTOCOL.md, "v0.5: pi's change merged
 * into an unsaved buffer"), for the TypeScript clients (VS Code). A three-way merge of line ranges:
 * - base: the file before pi's change(s), rebuilt from the file on disk (its hash checked against the newest
 *   change's `sha256`) by taking pi's hunks back out, newest change first;
 * - ours: the buffer's lines; the user's changes are the line diff base -> buffer (jsdiff, through the change
 *   set's own `diffHunks`, on windows around the places they differ: `diffWindowed`);
 * - theirs: pi's hunks from base.
 * A hunk of pi's that touches no change of the user's (shared base lines; an insertion in or at the edge of the
 * other's range) goes into the buffer at its place moved by the user's line-count changes above it; the others are
 * conflicts: the buffer keeps the user's text, and the conflict names the merged buffer's lines and quotes them.
 * The same rule as Neovim's pi-ide.inbox.merge (the conformance kit's merge cases hold the two together). The
 * client applies `textEdits` as one undo step of its own.
 */

import {
	MAX_CONFLICT_LINE_BYTES,
	MAX_CONFLICT_LINES,
	MAX_CONFLICTS,
	MAX_REVIEW_HUNKS_PER_FILE,
} from "../../src/protocol/limits.ts";
import { diffHunks } from "../../src/protocol/line-diff.ts";
import { splitLines } from "../../src/protocol/wire.ts";

export interface MergeHunk {
	old_start: number;
	old_lines: number;
	new_start: number;
	new_lines: number;
	old_text: string[];
	new_text: string[];
}

/** A changed entry's `merge`, checked. */
export interface MergeInfo {
	sha256: string;
	prev_seq: number | undefined;
	hunks: MergeHunk[];
}

/** One conflict of the report: the merged buffer's 1-based first line, how many lines, the user's text there. */
export interface MergeConflict {
	line: number;
	lines: number;
	text: string[];
}

/** An edit of the buffer's lines (0-based, half-open range of `ours`). */
export interface LineEdit {
	from: number;
	to: number;
	lines: string[];
}

/**
 * Where one hunk of pi's stands in the buffer (`ours`, 0-based half-open): a merged hunk's lines it replaces there,
 * a touching one's span of the user's lines (from the first to the last line of the hunk and of the user's changes
 * it touches). For approval's proposal against the buffer (issue 26 item 6).
 */
export interface HunkPlace {
	from: number;
	to: number;
	touches: boolean;
}

export interface MergePlan {
	edits: LineEdit[];
	merged: number;
	conflicts: MergeConflict[];
	conflictsTotal: number;
	/** One per hunk of pi's, in order. */
	places: HunkPlace[];
}

const isInt = (v: unknown, min: number): v is number =>
	typeof v === "number" && Number.isInteger(v) && v >= min && v <= 2 ** 31 - 1;
const isLines = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

/** `raw` (a changed entry's `merge`, untrusted JSON) checked: hunks ascending and apart, each as long as it says. */
export function parseMerge(raw: unknown): MergeInfo | undefined {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
	const { sha256, prev_seq, hunks } = raw as Record<string, unknown>;
	if (typeof sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(sha256)) return undefined;
	if (prev_seq !== undefined && prev_seq !== null && !isInt(prev_seq, 1)) return undefined;
	if (!Array.isArray(hunks) || hunks.length > MAX_REVIEW_HUNKS_PER_FILE) return undefined;
	let oldEnd = 1;
	let newEnd = 1;
	for (const h of hunks as unknown[]) {
		if (typeof h !== "object" || h === null) return undefined;
		const { old_start, old_lines, new_start, new_lines, old_text, new_text } = h as Record<string, unknown>;
		if (!isInt(old_start, 1) || !isInt(new_start, 1) || !isLines(old_text) || !isLines(new_text)) return undefined;
		if (old_lines !== old_text.length || new_lines !== new_text.length) return undefined;
		if (old_start < oldEnd || new_start < newEnd || new_start - newEnd !== old_start - oldEnd) return undefined;
		oldEnd = old_start + old_text.length;
		newEnd = new_start + new_text.length;
	}
	return {
		sha256: sha256.toLowerCase(),
		prev_seq: typeof prev_seq === "number" ? prev_seq : undefined,
		hunks: hunks as MergeHunk[],
	};
}

/** The lines before a change, from `after` and its `hunks`; undefined when `after` lacks the hunks' new lines. */
export function unapplyHunks(after: string[], hunks: MergeHunk[]): string[] | undefined {
	const before: string[] = [];
	let at = 0; // 0-based
	for (const h of hunks) {
		if (h.new_start - 1 > after.length) return undefined;
		for (; at < h.new_start - 1; at++) before.push(after[at] as string);
		for (let i = 0; i < h.new_text.length; i++) if (after[h.new_start - 1 + i] !== h.new_text[i]) return undefined;
		if (before.length + 1 !== h.old_start) return undefined;
		before.push(...h.old_text);
		at = h.new_start - 1 + h.new_lines;
	}
	for (; at < after.length; at++) before.push(after[at] as string);
	return before;
}

/** A change as 0-based half-open ranges of its two sides. */
export interface Range2 {
	a: number;
	aEnd: number;
	b: number;
	bEnd: number;
}

const rangeOf = (h: MergeHunk): Range2 => ({
	a: h.old_start - 1,
	aEnd: h.old_start - 1 + h.old_lines,
	b: h.new_start - 1,
	bEnd: h.new_start - 1 + h.new_lines,
});

const equalRun = (a: string[], i: number, b: string[], j: number, n: number): boolean => {
	for (let k = 0; k < n; k++) if (a[i + k] !== b[j + k]) return false;
	return true;
};

/**
 * A change at a[i], b[j] that only inserts lines (up to where a[i] comes back in b) or only deletes some (up to where
 * b[j] comes back in a), the nearer, when DIFF_WINDOW lines after it are equal on both sides; else undefined. Diffing
 * growing windows that hold nothing in common would cost the square of their size.
 */
function block(a: string[], b: string[], i: number, j: number, ea: number, eb: number): Range2 | undefined {
	const w = DIFF_WINDOW;
	const k = i < ea ? b.indexOf(a[i] as string, j) : -1;
	const l = j < eb ? a.indexOf(b[j] as string, i) : -1;
	const ins = k > j && k + w <= eb && i + w <= ea && equalRun(a, i, b, k, w);
	const del = l > i && l + w <= ea && j + w <= eb && equalRun(a, l, b, j, w);
	if (ins && (!del || k - j <= l - i)) return { a: i, aEnd: i, b: j, bEnd: k };
	if (del) return { a: i, aEnd: l, b: j, bEnd: j };
	return undefined;
}

/** The first window `diffWindowed` diffs around a place where the lists differ (lines each side). */
export const DIFF_WINDOW = 16;

/**
 * The line changes from `a` to `b` (ascending), found without diffing the whole lists: the lines both share are
 * walked over, and only a window around each place they differ is diffed (`diffHunks`), its changes taken up to the
 * first that reaches into the window's last half (the lines past the window could change it), all of them once the
 * window reaches both ends; a window without one taken grows fourfold, after a look for a block only inserted or
 * only deleted (`block`). A few edits in a long file cost what their
 * windows cost (issue 26: a merge into a 10,000-line buffer). Where lines repeat, a diff of the whole lists could
 * place a change elsewhere; both are true diffs. The same walk as Neovim's linemap.hunks_windowed and Vim's Diff.
 */
export function diffWindowed(a: string[], b: string[]): Range2[] {
	let i = 0;
	while (i < a.length && i < b.length && a[i] === b[i]) i++;
	let j = i;
	let ea = a.length;
	let eb = b.length;
	while (ea > i && eb > j && a[ea - 1] === b[eb - 1]) {
		ea--;
		eb--;
	}
	const out: Range2[] = [];
	let w = DIFF_WINDOW;
	while (i < ea || j < eb) {
		const wa = Math.min(w, ea - i);
		const wb = Math.min(w, eb - j);
		const whole = i + wa === ea && j + wb === eb;
		let took: Range2 | undefined;
		for (const h of diffHunks(a.slice(i, i + wa), b.slice(j, j + wb))) {
			const r = rangeOf(h);
			if (!whole && (r.aEnd > wa - w / 2 || r.bEnd > wb - w / 2)) break;
			took = r;
			out.push({ a: r.a + i, aEnd: r.aEnd + i, b: r.b + j, bEnd: r.bEnd + j });
		}
		if (!took && !whole && w === DIFF_WINDOW) {
			took = block(a, b, i, j, ea, eb);
			if (took) out.push(took);
			if (took) took = { a: 0, aEnd: took.aEnd - i, b: 0, bEnd: took.bEnd - j };
		}
		if (!took) {
			if (whole) break; // not reached: the window's first lines differ, so its diff has a change
			w *= 4;
			continue;
		}
		i += took.aEnd;
		j += took.bEnd;
		w = DIFF_WINDOW;
		while (i < ea && j < eb && a[i] === b[j]) {
			i++;
			j++;
		}
	}
	return out;
}

/** Does a change of base range [a1, e1) touch one of [a2, e2)? Shared lines; an insertion in or at the edge. */
function touches(a1: number, e1: number, a2: number, e2: number): boolean {
	if (a1 < e1 && a2 < e2) return a1 < e2 && a2 < e1;
	return a1 <= e2 && a2 <= e1;
}

const encoder = new TextEncoder();

/** `line` cut to at most MAX_CONFLICT_LINE_BYTES of UTF-8, at a character's edge. */
function cutLine(line: string): string {
	if (line.length * 3 <= MAX_CONFLICT_LINE_BYTES || encoder.encode(line).length <= MAX_CONFLICT_LINE_BYTES) return line;
	let bytes = 0;
	let out = "";
	for (const ch of line) {
		bytes += encoder.encode(ch).length;
		if (bytes > MAX_CONFLICT_LINE_BYTES) break;
		out += ch;
	}
	return out;
}

/** Merge pi's hunks (`theirs`, from `base`) into `ours` (the buffer's lines): the edits of `ours` and the conflicts. */
export function planMerge(base: string[], ours: string[], theirs: MergeHunk[]): MergePlan {
	const user = diffWindowed(base, ours);
	const out: MergePlan = { edits: [], merged: 0, conflicts: [], conflictsTotal: 0, places: [] };
	let u = 0; // the first user change not wholly before the current hunk of pi's
	let delta = 0; // the user's line-count change above it
	let shift = 0; // the line-count change of pi's hunks merged above it
	for (const h of theirs) {
		const a = h.old_start - 1;
		const e = a + h.old_lines;
		for (let c = user[u]; c && c.aEnd <= a && !touches(c.a, c.aEnd, a, e); c = user[u]) {
			delta += c.bEnd - c.b - (c.aEnd - c.a);
			u++;
		}
		let last = u - 1;
		for (let c = user[last + 1]; c && touches(c.a, c.aEnd, a, e); c = user[last + 1]) last++;
		const first = user[u];
		const final = user[last];
		if (last < u || !first || !final) {
			out.edits.push({ from: a + delta, to: e + delta, lines: h.new_text });
			out.places.push({ from: a + delta, to: e + delta, touches: false });
			out.merged++;
			shift += h.new_text.length - h.old_lines;
			continue;
		}
		out.conflictsTotal++;
		const from = Math.min(a + delta, first.b);
		let grown = 0;
		for (let i = u; i <= last; i++) {
			const c = user[i] as Range2;
			grown += c.bEnd - c.b - (c.aEnd - c.a);
		}
		const to = Math.max(e + delta + grown, final.bEnd);
		out.places.push({ from, to, touches: true });
		if (out.conflicts.length < MAX_CONFLICTS) {
			const text = ours.slice(from, Math.min(to, from + MAX_CONFLICT_LINES)).map(cutLine);
			out.conflicts.push({ line: from + shift + 1, lines: to - from, text });
		}
	}
	return out;
}

/** A buffer's text edit: replace [start, end) (0-based line and UTF-16 character) with `text`. */
export interface TextEdit {
	start: { line: number; character: number };
	end: { line: number; character: number };
	text: string;
}

/**
 * `edits` (of `ours`, the lines of `text` split as pi splits a file) as text edits of `text`, ascending. A last
 * line without a newline keeps having none.
 */
export function textEditsOf(text: string, edits: LineEdit[]): TextEdit[] {
	const count = splitLines(text).length;
	const noEol = text !== "" && !text.endsWith("\n");
	const lastLength = noEol ? text.length - text.lastIndexOf("\n") - 1 : 0;
	const at = (line: number) =>
		noEol && line >= count ? { line: count - 1, character: lastLength } : { line, character: 0 };
	return edits.map((ed) => {
		let body = ed.lines.map((l) => `${l}\n`).join("");
		if (noEol && ed.to >= count && body !== "") {
			// The edit reaches the end of a text without a final newline: its lines end there without one too, and
			// lines put after that last line come after a newline.
			body = ed.from >= count ? `\n${body.slice(0, -1)}` : body.slice(0, -1);
		}
		return { start: at(ed.from), end: at(ed.to), text: body };
	});
}

/** What a merge would do, or why it cannot. */
export type MergeOutcome =
	| {
			ok: true;
			status: "merged" | "conflict";
			hunks: number;
			plan: MergePlan;
	  }
	| { ok: false; why: string };

/** A change of this pi's, with its `merge` field as the message had it. */
export interface ChainLink {
	seq: number;
	merge?: unknown;
}

/**
 * Merge pi's `chain` (its new changes of one file, oldest first; `handled`: the seq the editor handled of this pi
 * before) into `buffer` (the document's text), the file on disk being `disk` whose SHA-256 is `diskSha256`.
 */
export function mergeChain(
	chain: ChainLink[],
	handled: number,
	disk: string,
	diskSha256: string,
	buffer: string,
): MergeOutcome {
	const infos: MergeInfo[] = [];
	for (const [i, link] of chain.entries()) {
		const info = parseMerge(link.merge);
		if (!info) return { ok: false, why: "a change carries no merge" };
		const prev = info.prev_seq;
		if ((i === 0 && prev !== undefined && prev > handled) || (i > 0 && prev !== chain[i - 1]?.seq)) {
			return { ok: false, why: "a change of this file in between is not in the message" };
		}
		infos.push(info);
	}
	const newest = infos.at(-1);
	if (!newest) return { ok: false, why: "no change" };
	// A text whose lines are not the file's split at "\n" (CR-LF, a BOM) is not compared line by line.
	if (disk.includes("\r") || buffer.includes("\r") || disk.charCodeAt(0) === 0xfeff) {
		return { ok: false, why: "the lines are not split at \\n" };
	}
	if (diskSha256 !== newest.sha256) return { ok: false, why: "the file is not what pi's tool wrote" };
	const now = splitLines(disk);
	let base: string[] | undefined = now;
	for (let i = infos.length - 1; i >= 0 && base; i--) base = unapplyHunks(base, (infos[i] as MergeInfo).hunks);
	if (!base) return { ok: false, why: "pi's hunks do not fit the file" };
	const theirs = infos.length === 1 ? newest.hunks : diffHunks(base, now);
	const plan = planMerge(base, splitLines(buffer), theirs);
	return { ok: true, status: plan.conflictsTotal > 0 ? "conflict" : "merged", hunks: theirs.length, plan };
}

/** "line N" or "lines N-M": a conflict's place, as the client's notice and pi's tool result say it. */
export const linesPhrase = (c: MergeConflict): string =>
	c.lines <= 1 ? `line ${c.line}` : `lines ${c.line}-${c.line + c.lines - 1}`;
