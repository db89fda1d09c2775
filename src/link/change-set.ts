/**
 * pi's change set (protocol v0.4, review): for each agent run, the files pi's tools changed, each with its content
 * from before pi first touched it in that run (the baseline) and the hunks between that baseline and what pi left,
 * with ids that stay the same while a hunk's text does. Baselines come from pi's own before and after, never from
 * git. Pure: the shell reads the files (before the tool runs, after it succeeded) and hands in their text; hunks
 * come from the `diff` package's line diff (jsdiff), not a diff of our own.
 */
import { createHash } from "node:crypto";
import {
	MAX_REVIEW_BYTES,
	MAX_REVIEW_FILE_BYTES,
	MAX_REVIEW_HUNKS_PER_FILE,
	MAX_REVIEW_RUNS,
} from "../protocol/limits.ts";
import { diffEditBound, diffHunks, MAX_DIFF_EDIT_LENGTH, type RawHunk } from "../protocol/line-diff.ts";

import {
	type ReviewFile,
	type ReviewHunk,
	type ReviewMessage,
	type ReviewNote,
	type ReviewRun,
	splitLines,
} from "../protocol/wire.ts";

export {
	diffEditBound,
	MAX_DIFF_EDIT_LENGTH,
	MAX_REVIEW_BYTES,
	MAX_REVIEW_FILE_BYTES,
	MAX_REVIEW_HUNKS_PER_FILE,
	MAX_REVIEW_RUNS,
	splitLines,
};

/** A file's content as the shell read it: its text, absent (no such file), or why its text is not carried. */
export type FileContent = { kind: "text"; text: string } | { kind: "absent" } | { kind: "note"; note: ReviewNote };

/** The length of the longest common prefix of `a` and `b`, found by halving with native compares. */
function commonPrefixLength(a: string, b: string): number {
	let lo = 0;
	let hi = Math.min(a.length, b.length);
	while (lo < hi) {
		const mid = (lo + hi + 1) >>> 1;
		if (a.slice(lo, mid) === b.slice(lo, mid)) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/** The length of the longest common suffix of `a` and `b`, at most `max`. */
function commonSuffixLength(a: string, b: string, max: number): number {
	let lo = 0;
	let hi = Math.min(a.length, b.length, max);
	while (lo < hi) {
		const mid = (lo + hi + 1) >>> 1;
		if (a.slice(a.length - mid, a.length - lo) === b.slice(b.length - mid, b.length - lo)) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/**
 * `splitLines(next)`, given `prevLines = splitLines(prev)`: the lines `next` shares whole with `prev` at either
 * end are `prev`'s own strings, and only the region between them is split. An edit of a long file then costs
 * what its region costs, and the line compares that follow (updateHunks) find the shared lines identical at once.
 */
export function splitLinesAfter(prev: string, prevLines: string[], next: string): string[] {
	const prefix = commonPrefixLength(prev, next);
	const suffix = commonSuffixLength(prev, next, Math.min(prev.length, next.length) - prefix);
	// Where each line of prev starts; a line is shared when it and the newline after it (before it, at the end)
	// lie in the common prefix (suffix).
	const starts = new Array<number>(prevLines.length);
	let at = 0;
	for (let i = 0; i < prevLines.length; i++) {
		starts[i] = at;
		at += (prevLines[i]?.length ?? 0) + 1;
	}
	let head = 0;
	while (head < prevLines.length && (starts[head] ?? 0) + (prevLines[head]?.length ?? 0) + 1 <= prefix) head++;
	let tail = prevLines.length;
	while (tail > head && (starts[tail - 1] ?? 0) - 1 >= prev.length - suffix) tail--;
	const middleFrom = head < prevLines.length ? (starts[head] ?? 0) : prev.length;
	if (tail === prevLines.length) return prevLines.slice(0, head).concat(splitLines(next.slice(middleFrom)));
	// The shared tail starts right after a newline in the common suffix, past the common prefix: it ends the
	// middle's last line (so the middle has at least one line, maybe empty).
	const middleTo = (starts[tail] ?? 0) - prev.length + next.length - 1;
	return prevLines.slice(0, head).concat(next.slice(middleFrom, middleTo).split("\n"), prevLines.slice(tail));
}

function hunkId(file: string, oldText: string[], newText: string[], occurrence: number): string {
	const hash = createHash("sha1");
	hash.update(file);
	for (const part of [oldText.join("\n"), newText.join("\n"), String(occurrence)]) hash.update(`\0${part}`);
	return `h${hash.digest("hex").slice(0, 10)}`;
}

/** Ids for `raw`: from the file, each hunk's text and its occurrence among hunks of the same text. */
function withIds(file: string, raw: RawHunk[]): ReviewHunk[] {
	const seen = new Map<string, number>();
	return raw.map((h) => {
		const key = `${h.old_text.join("\n")}\0${h.new_text.join("\n")}`;
		const occurrence = seen.get(key) ?? 0;
		seen.set(key, occurrence + 1);
		return { id: hunkId(file, h.old_text, h.new_text, occurrence), ...h };
	});
}

/** The hunks between `before` and `after` (no context lines), with stable ids. */
export function computeHunks(file: string, before: string, after: string): ReviewHunk[] {
	return withIds(file, diffHunks(splitLines(before), splitLines(after)));
}

/**
 * Issue 26: what an editor needs to merge pi's change (`before` -> `after`, as the tool found and left the file)
 * into a buffer with unsaved changes: the change's hunks and the SHA-256 of the text the tool left (the editor
 * checks the file it reads is that text). Undefined when either side is not text, or past the change set's hunk cap.
 */
export function mergeInfo(
	before: FileContent,
	after: FileContent,
): { hunks: Omit<ReviewHunk, "id">[]; sha256: string } | undefined {
	if (after.kind !== "text" || before.kind === "note") return undefined;
	const hunks = diffHunks(splitLines(before.kind === "text" ? before.text : ""), splitLines(after.text));
	if (hunks.length > MAX_REVIEW_HUNKS_PER_FILE) return undefined;
	return { hunks, sha256: createHash("sha256").update(after.text, "utf8").digest("hex") };
}

/**
 * The hunks from `base` to `next`, given those from `base` to `prev` (`hunks`): only the region where `next`
 * differs from `prev`, widened to the hunks it touches, is diffed again; the hunks before it stay and those
 * after it move by the change in length. pi's next edit of a long file costs what its region costs, not the
 * whole file (a file with hunks far apart would otherwise be diffed end to end on every edit).
 */
export function updateHunks(base: string[], prev: string[], hunks: RawHunk[], next: string[]): RawHunk[] {
	let p = 0;
	while (p < prev.length && p < next.length && prev[p] === next[p]) p++;
	let s = 0;
	while (s < prev.length - p && s < next.length - p && prev[prev.length - 1 - s] === next[next.length - 1 - s]) s++;
	if (p === prev.length && p === next.length) return hunks;
	// The changed region in `prev`, 0-based [from, to), widened to every hunk it touches (a boundary counts),
	// until no hunk outside it touches it.
	let from = p;
	let to = prev.length - s;
	const span = (h: RawHunk) => [h.new_start - 1, h.new_start - 1 + h.new_lines] as const;
	for (let widened = true; widened; ) {
		widened = false;
		for (const h of hunks) {
			const [hs, he] = span(h);
			if (he < from || hs > to) continue;
			if (hs < from || he > to) widened = true;
			from = Math.min(from, hs);
			to = Math.max(to, he);
		}
	}
	const before = hunks.filter((h) => span(h)[1] < from);
	const after = hunks.filter((h) => span(h)[0] > to);
	const shift = (list: RawHunk[]) => list.reduce((sum, h) => sum + h.new_lines - h.old_lines, 0);
	const shiftBefore = shift(before);
	const shiftInside = shift(hunks.filter((h) => span(h)[1] >= from && span(h)[0] <= to));
	const baseFrom = from - shiftBefore;
	const baseTo = to - shiftBefore - shiftInside;
	const grow = next.length - prev.length;
	const inside = diffHunks(base.slice(baseFrom, baseTo), next.slice(from, to + grow), baseFrom, from);
	return [...before, ...inside, ...after.map((h) => ({ ...h, new_start: h.new_start + grow }))];
}

function describe(file: string, tracked: TrackedFile): ReviewFile {
	const { before, after } = tracked;
	const note = before.kind === "note" ? before.note : after?.kind === "note" ? after.note : null;
	const baseline = before.kind === "text" && note === null ? before.text : null;
	const left = after?.kind === "text" && note === null ? after.text : null;
	let raw: RawHunk[] = [];
	if (note === null) {
		tracked.baseLines ??= splitLines(baseline ?? "");
		const base = tracked.baseLines;
		const text = left ?? "";
		const next =
			tracked.text !== undefined && tracked.lines
				? splitLinesAfter(tracked.text, tracked.lines, text)
				: splitLines(text);
		raw = tracked.lines && tracked.raw ? updateHunks(base, tracked.lines, tracked.raw, next) : diffHunks(base, next);
		tracked.lines = next;
		tracked.text = text;
		tracked.raw = raw;
	}
	const hunks = withIds(file, raw);
	return {
		file,
		baseline,
		note,
		hunks: hunks.slice(0, MAX_REVIEW_HUNKS_PER_FILE),
		hunks_total: hunks.length,
	};
}

interface TrackedFile {
	before: FileContent;
	after: FileContent | undefined;
	/** The baseline's lines, the lines of the last `after` described, and its hunks: the next update starts there. */
	baseLines?: string[];
	lines?: string[];
	/** The text `lines` were split from. */
	text?: string;
	raw?: RawHunk[];
	/** The file as described by the last `runs()`, until `after` changes it. */
	described?: ReviewFile | null;
}

/**
 * The change sets of the last few runs. `startRun` opens a run; `before` is called ahead of each write/edit
 * (only the first call for a file in a run counts: that is the baseline), `after` once the tool succeeded.
 */
export class ChangeSet {
	readonly #runs: { run: number; files: Map<string, TrackedFile> }[] = [];
	#open = false;

	/** A prompt's run begins: the next change opens a new run. */
	startRun(): void {
		this.#open = false;
	}

	/** Whether `file` already has a baseline in the current run (the shell then need not read it). */
	hasBaseline(file: string): boolean {
		return this.#open && (this.#runs.at(-1)?.files.has(file) ?? false);
	}

	/** Ahead of a tool writing `file`: its content now, the baseline when this is pi's first touch in the run. */
	before(file: string, content: FileContent, seq: number): void {
		if (!this.#open) {
			this.#runs.push({ run: seq, files: new Map() });
			if (this.#runs.length > MAX_REVIEW_RUNS) this.#runs.splice(0, this.#runs.length - MAX_REVIEW_RUNS);
			this.#open = true;
		}
		const files = this.#runs.at(-1)?.files;
		if (files && !files.has(file)) files.set(file, { before: content, after: undefined });
	}

	/** After the tool succeeded: what pi left in `file`. Ignored for a file without a baseline. */
	after(file: string, content: FileContent): boolean {
		const tracked = this.#open ? this.#runs.at(-1)?.files.get(file) : undefined;
		if (!tracked) return false;
		tracked.after = content;
		tracked.described = undefined;
		return true;
	}

	/** The runs, newest last, with files that pi changed (a tool that failed or left the file as it was drops out). */
	runs(): ReviewRun[] {
		const runs: ReviewRun[] = [];
		for (const { run, files } of this.#runs) {
			const described: ReviewFile[] = [];
			for (const [file, tracked] of files) {
				const { before, after } = tracked;
				if (!after) continue;
				if (tracked.described === undefined) {
					const entry = describe(file, tracked);
					const same = entry.note === null && entry.hunks_total === 0 && before.kind === after.kind;
					tracked.described = same ? null : entry;
				}
				if (tracked.described) described.push(tracked.described);
			}
			if (described.length > 0) runs.push({ run, files: described });
		}
		return runs;
	}
}

/**
 * Each file's JSON as UTF-8 bytes, encoded once: a run's files are re-sent with every change, but only the changed
 * one is new. Bytes, not strings: the message is a few MB of baselines, and joining strings then measuring and
 * encoding the joined string copied and scanned all of it on every change; chunks' sizes are summed, and they are
 * written as they are.
 */
const encodedFiles = new WeakMap<ReviewFile, Buffer[]>();
/**
 * Each baseline's JSON bytes, by run and file: the same for every change of the file in a run, so encoded once
 * (a model editing two long files in turn would otherwise re-encode one of them with every change). Kept only for
 * the files of the last message encoded.
 */
const baselines = new Map<string, { text: string; json: Buffer }>();
const NULL_JSON = Buffer.from("null");
const COMMA = Buffer.from(",");
/** Ends a run (its files, then the run) and the message (its runs, then the message). */
const CLOSE_LIST_AND_OBJECT = Buffer.from("]}");

const baselineKey = (run: number, file: string) => `${run}\0${file}`;

function encodeBaseline(key: string, baseline: string | null): Buffer {
	if (baseline === null) return NULL_JSON;
	let cached = baselines.get(key);
	if (cached?.text !== baseline) {
		cached = { text: baseline, json: Buffer.from(JSON.stringify(baseline)) };
		baselines.set(key, cached);
	}
	return cached.json;
}

function encodeFile(run: number, file: ReviewFile): Buffer[] {
	let chunks = encodedFiles.get(file);
	if (chunks === undefined) {
		const { baseline, ...rest } = file;
		const json = encodeBaseline(baselineKey(run, file.file), baseline);
		chunks = [Buffer.from('{"baseline":'), json, Buffer.from(`,${JSON.stringify(rest).slice(1)}`)];
		encodedFiles.set(file, chunks);
	}
	return chunks;
}

const byteSize = (chunks: Buffer[]) => chunks.reduce((sum, chunk) => sum + chunk.length, 0);

/**
 * The change set as written to `pi-<pid>.review.json` (UTF-8, in chunks to be written one after the other),
 * kept under MAX_REVIEW_BYTES: the oldest runs go first, then the largest files of what is left lose their
 * contents and hunks (note "too large").
 */
export function encodeReviewChunks(message: ReviewMessage, maxBytes = MAX_REVIEW_BYTES): Buffer[] {
	const runs = message.runs.map((run) => ({ run: run.run, files: [...run.files] }));
	const { runs: _, ...head } = message;
	const encode = () => {
		const chunks: Buffer[] = [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"runs":[`)];
		for (const [r, run] of runs.entries()) {
			chunks.push(Buffer.from(`${r > 0 ? "," : ""}{"run":${run.run},"files":[`));
			for (const [f, file] of run.files.entries()) {
				if (f > 0) chunks.push(COMMA);
				chunks.push(...encodeFile(run.run, file));
			}
			chunks.push(CLOSE_LIST_AND_OBJECT);
		}
		chunks.push(CLOSE_LIST_AND_OBJECT);
		return chunks;
	};
	let chunks = encode();
	while (byteSize(chunks) > maxBytes) {
		if (runs.length > 1) runs.shift();
		else {
			const files = runs[0]?.files ?? [];
			let largest = -1;
			let largestSize = -1;
			for (const [index, f] of files.entries()) {
				const size = byteSize(encodeFile(runs[0]?.run ?? 0, f));
				if (f.note === null && size > largestSize) [largest, largestSize] = [index, size];
			}
			const f = files[largest];
			if (!f) break;
			files[largest] = { ...f, baseline: null, note: "too large", hunks: [] };
		}
		chunks = encode();
	}
	const kept = new Set(runs.flatMap((run) => run.files.map((f) => baselineKey(run.run, f.file))));
	for (const key of baselines.keys()) if (!kept.has(key)) baselines.delete(key);
	return chunks;
}

/** `encodeReviewChunks`, joined. */
export function encodeReviewMessage(message: ReviewMessage, maxBytes = MAX_REVIEW_BYTES): Buffer {
	return Buffer.concat(encodeReviewChunks(message, maxBytes));
}

/** How the shell turns bytes read from disk into a FileContent: NUL bytes or invalid UTF-8 are binary. */
export function contentOf(bytes: Uint8Array | undefined, maxBytes = MAX_REVIEW_FILE_BYTES): FileContent {
	if (bytes === undefined) return { kind: "absent" };
	if (bytes.byteLength > maxBytes) return { kind: "note", note: "too large" };
	if (bytes.includes(0)) return { kind: "note", note: "binary" };
	try {
		return { kind: "text", text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
	} catch {
		return { kind: "note", note: "binary" };
	}
}
