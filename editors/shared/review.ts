/**
 * Protocol v0.4, pi's change set (`pi-<pid>.review.json`) in a TypeScript editor, pure: the parser (untrusted
 * JSON in, the runs or one problem out), which run's entry a file shows, and pi's hunks in an open document.
 *
 * An editor has no marks that move with the text by themselves (Neovim's extmarks), so a hunk's place is kept
 * here: it is placed where pi's version has it (`new_start`) only when the document has pi's lines there, and
 * from then on follows the user's edits (`shiftMarks`, from the document's change events). Whether a hunk is
 * still pi's is never assumed: `markStatus` compares the lines at its place with pi's `new_text` each time,
 * so a hunk the user edited is never shown or reverted as pi's. The file-system checks that come before
 * parsing live in pi-reader.ts.
 */
import {
	MAX_ID_BYTES,
	MAX_REVERTED_REPORTS,
	MAX_REVIEW_BYTES,
	MAX_REVIEW_HUNKS_PER_FILE,
	MAX_REVIEW_RUNS,
} from "../../src/protocol/limits.ts";
import type { RevertedHunk } from "../../src/protocol/protocol.ts";
import {
	INITIAL_PID_NAMESPACE,
	piIdentityKey,
	piReviewFileName,
	REVIEW_NOTES,
	type ReviewFile,
	type ReviewHunk,
	type ReviewRun,
	splitLines,
} from "../../src/protocol/wire.ts";
import { isCount, isLineNumber, isObject, parsePiObject } from "./pi-message.ts";
import type { TextLines } from "./state.ts";
import { utf8Length } from "./utf16.ts";

export type { RevertedHunk, ReviewFile, ReviewHunk, ReviewRun };
// The caps are the protocol's (src/protocol/limits.ts).
export { MAX_REVERTED_REPORTS, MAX_REVIEW_BYTES };

/** `dropped`: entries (runs, files, hunks) that were malformed and left out. */
export type ParsedReview = { ok: true; runs: ReviewRun[]; dropped: number } | { ok: false; problem: string };

/** `pi-<pid>.review.json`: the name of the change set of a pi of the initial namespace (the wire's `piReviewFileName`). */
export const piReviewName = (pid: number): string => piReviewFileName(pid);

const isLines = (value: unknown): value is string[] =>
	Array.isArray(value) && value.every((line) => typeof line === "string");
const NOTES: ReadonlySet<string> = new Set(REVIEW_NOTES);

/**
 * One hunk of pi's (the change set's shape, also a request's in approval.ts), or undefined when malformed: its id
 * 1 to MAX_ID_BYTES bytes of UTF-8, `old_start` and `new_start` line numbers from 1 (PROTOCOL.md `hunks[]`).
 */
export function parseHunk(raw: unknown): ReviewHunk | undefined {
	if (!isObject(raw)) return undefined;
	const { id, old_start, new_start, old_text, new_text } = raw;
	if (typeof id !== "string" || id.length === 0 || utf8Length(id) > MAX_ID_BYTES) return undefined;
	if (!isLineNumber(old_start) || !isLineNumber(new_start) || old_start < 1 || new_start < 1) return undefined;
	if (!isLines(old_text) || !isLines(new_text)) return undefined;
	// The texts are what the editor compares and puts back: the counts are taken from them.
	return {
		id,
		old_start,
		old_lines: old_text.length,
		new_start,
		new_lines: new_text.length,
		old_text,
		new_text,
	};
}

function parseFile(raw: unknown, dropped: { n: number }): ReviewFile | undefined {
	if (!isObject(raw)) return undefined;
	const { file, baseline, note, hunks, hunks_total } = raw;
	if (typeof file !== "string" || !file.startsWith("/") || file.length > 4096) return undefined;
	if (baseline !== null && typeof baseline !== "string") return undefined;
	if (note !== null && note !== undefined && !(typeof note === "string" && NOTES.has(note))) return undefined;
	if (!Array.isArray(hunks)) return undefined;
	const good: ReviewHunk[] = [];
	for (const each of hunks) {
		const hunk = parseHunk(each);
		if (hunk) good.push(hunk);
		else dropped.n++;
	}
	return {
		file,
		baseline: note ? null : baseline,
		note: (note as ReviewFile["note"] | undefined) ?? null,
		hunks: note ? [] : good,
		hunks_total: isLineNumber(hunks_total) ? Math.max(hunks_total, good.length) : good.length,
	};
}

/**
 * Why a list of pi's (a change set's `runs`, a file's or a request's `hunks`) is over the protocol's cap, or
 * undefined: checked by its length, before any work per entry (PROTOCOL.md "Limits").
 */
export function overCap(what: string, list: readonly unknown[], cap: number): string | undefined {
	return list.length > cap ? `${what}: ${list.length}, over the cap of ${cap}: refused` : undefined;
}

/** Why a change set's runs or a file's hunks are over the protocol's caps, or undefined. */
function reviewOverCaps(runs: unknown[]): string | undefined {
	const tooMany = overCap("runs", runs, MAX_REVIEW_RUNS);
	if (tooMany) return tooMany;
	for (const run of runs) {
		if (!isObject(run) || !Array.isArray(run["files"])) continue;
		for (const file of run["files"]) {
			if (isObject(file) && Array.isArray(file["hunks"])) {
				const over = overCap("hunks of a file", file["hunks"], MAX_REVIEW_HUNKS_PER_FILE);
				if (over) return over;
			}
		}
	}
	return undefined;
}

/**
 * Parse the text of pi `pid`'s change set. Never throws. The whole file is refused when it is not a change set of
 * that pi, or over a cap; a malformed run, file or hunk is left out and counted (a newer pi's additions are ignored).
 */
export function parseReview(text: string, pid: number): ParsedReview {
	const head = parsePiObject(text, "pi-review", pid);
	if (!head.ok) return head;
	const raw = head.raw;
	if (!Array.isArray(raw["runs"])) return { ok: false, problem: "runs: not a list" };
	const over = reviewOverCaps(raw["runs"]);
	if (over) return { ok: false, problem: over };
	const dropped = { n: 0 };
	const runs: ReviewRun[] = [];
	for (const run of raw["runs"]) {
		if (!isObject(run) || !isCount(run["run"]) || !Array.isArray(run["files"])) {
			dropped.n++;
			continue;
		}
		const files: ReviewFile[] = [];
		for (const each of run["files"]) {
			const file = parseFile(each, dropped);
			if (file) files.push(file);
			else dropped.n++;
		}
		runs.push({ run: run["run"], files });
	}
	return { ok: true, runs, dropped: dropped.n };
}

/** A file's entry in the newest run that changed it, among the change sets of all connected pis. */
export interface ReviewEntry {
	pid: number;
	/** v0.5: the pi's namespace (`pid_ns`), none for the initial one: a pi is (pid, pid_ns). */
	piNs?: string | undefined;
	run: number;
	entry: ReviewFile;
}

/** Who a change set's key names: a pid (a pi of the initial namespace) as it is, else the book's record. */
type PiOf<K> = (key: K) => { pid: number; piNs?: string | undefined };
const byPid: PiOf<number> = (pid) => ({ pid });

/** The newest run's entry for `file` (the Neovim client's rule: a later run's baseline has the earlier runs in it). */
export function newestEntry<K = number>(
	sets: ReadonlyMap<K, readonly ReviewRun[]>,
	file: string,
	piOf: PiOf<K> = byPid as unknown as PiOf<K>,
): ReviewEntry | undefined {
	let best: ReviewEntry | undefined;
	for (const [key, runs] of sets) {
		for (const run of runs) {
			const entry = run.files.find((f) => f.file === file);
			if (entry && (best === undefined || run.run > best.run)) best = { ...piOf(key), run: run.run, entry };
		}
	}
	return best;
}

/** The newest run among all connected pis (what "pi's changes" lists), with its pi. */
export function newestRun<K = number>(
	sets: ReadonlyMap<K, readonly ReviewRun[]>,
	piOf: PiOf<K> = byPid as unknown as PiOf<K>,
): { pid: number; piNs?: string | undefined; run: ReviewRun } | undefined {
	let best: { pid: number; piNs?: string | undefined; run: ReviewRun } | undefined;
	for (const [key, runs] of sets) {
		const run = runs[runs.length - 1];
		if (run && (best === undefined || run.run > best.run.run)) best = { ...piOf(key), run };
	}
	return best;
}

/** pi's lines without a CR (a CRLF file's hunks carry it; editors hand out lines without their terminator). */
const bare = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);

/** Does `document` have `lines` at 0-based line `at`? */
export function hasLinesAt(document: TextLines, at: number, lines: readonly string[]): boolean {
	if (at < 0 || at + lines.length > document.count) return false;
	return lines.every((line, i) => document.text(at + i) === bare(line));
}

/**
 * `lines` with `hunks` applied (in order, no overlaps), or undefined when a hunk's old lines are not where it says
 * (pi's hunks are from the text pi read: any other text is not theirs to change). Line ends are compared without
 * a CR, as editors hand lines out.
 */
export function applyHunks(lines: readonly string[], hunks: readonly ReviewHunk[]): string[] | undefined {
	const out: string[] = [];
	let at = 0; // next line (0-based) not yet copied
	for (const hunk of hunks) {
		// With `old_lines` 0 pi inserts before line `old_start`: the same index either way.
		const start = hunk.old_start - 1;
		if (start < at || start + hunk.old_text.length > lines.length) return undefined;
		if (!hunk.old_text.every((line, i) => bare(lines[start + i] ?? "") === bare(line))) return undefined;
		out.push(...lines.slice(at, start), ...hunk.new_text);
		at = start + hunk.old_text.length;
	}
	out.push(...lines.slice(at));
	return out;
}

/**
 * pi's version of the file (baseline with every hunk applied), or undefined when it cannot be known exactly (no
 * baseline for an existing file, hunks left out at the cap, hunks that do not fit the baseline).
 */
export function piVersion(entry: ReviewFile): string[] | undefined {
	if (entry.note !== null || entry.hunks.length < entry.hunks_total) return undefined;
	return applyHunks(splitLines(entry.baseline ?? ""), entry.hunks);
}

/** One of pi's hunks in an open document. */
export interface Mark {
	pid: number;
	/** v0.5: the pi's namespace, none for the initial one. */
	piNs?: string | undefined;
	run: number;
	file: string;
	hunk: ReviewHunk;
	/** Its first line in the document now (0-based; for a deletion, the line it stood before); undefined: not found. */
	line: number | undefined;
	/** Reverted here by the user (a deletion's or a pure addition's text alone cannot tell). */
	reverted: boolean;
	/**
	 * Set by a revert: the document as it was just before it and just after it (hashLines). An undo of the
	 * revert returns the document to exactly the first, a redo to exactly the second: the editor's undo restores
	 * states, whatever lines are alike or were typed around the place.
	 */
	revertStates?: RevertStates;
	/**
	 * Set when an edit took away one of pi's lines (shiftMarks): the mark stays on the line that follows, which can
	 * read the same as pi's (the baseline `a q } b`, pi's `a } } b`, pi's line deleted), so the text can no longer
	 * tell; the hunk is edited for good, as an overlay of Emacs's evaporates.
	 */
	lost?: boolean;
	/** Whether pi's lines stood whole at the mark after the last edit (noteIntact): only then can an edit take one. */
	intact?: boolean;
}

/** hashLines of a document before a revert, and after it. */
export interface RevertStates {
	before: number;
	after: number;
}

/** pi's lines are there; the user reverted it; the lines there are no longer pi's; never found in the document. */
export type MarkStatus = "pi" | "reverted" | "edited" | "unplaced";

/**
 * Where pi's version has `hunk`, if the document has pi's lines there: the hunk's own lines, and for a deletion
 * the lines around the place (from pi's version, when known), so it is never placed on a stranger's lines.
 */
function placeOf(hunk: ReviewHunk, document: TextLines, pi: string[] | undefined): number | undefined {
	const at = hunk.new_start - 1;
	if (hunk.new_text.length > 0) return hasLinesAt(document, at, hunk.new_text) ? at : undefined;
	if (at > document.count) return undefined;
	if (pi === undefined) return at;
	const before = at > 0 ? [pi[at - 1] ?? ""] : [];
	const after = at < pi.length ? [pi[at] ?? ""] : [];
	return hasLinesAt(document, at - before.length, [...before, ...after]) ? at : undefined;
}

/**
 * The marks of `entry` in `document`: a hunk already marked (same id, same run) keeps its place; the others are
 * placed where pi's version has them, when the document has pi's lines there.
 */
export function placeMarks(previous: readonly Mark[], found: ReviewEntry, document: TextLines): Mark[] {
	const ofPi = (m: Mark) => m.run === found.run && m.pid === found.pid && m.piNs === found.piNs;
	const kept = new Map(previous.filter(ofPi).map((m) => [m.hunk.id, m]));
	const pi = piVersion(found.entry);
	return found.entry.hunks.map((hunk) => {
		const old = kept.get(hunk.id);
		if (old && old.line !== undefined) return { ...old, hunk };
		return {
			pid: found.pid,
			...(found.piNs === undefined ? {} : { piNs: found.piNs }),
			run: found.run,
			file: found.entry.file,
			hunk,
			line: placeOf(hunk, document, pi),
			reverted: false,
		};
	});
}

/** Marks not found yet, tried again (VS Code reloaded the document from disk after pi's change set arrived). */
export function placeUnplaced(marks: readonly Mark[], found: ReviewEntry, document: TextLines): Mark[] {
	if (marks.every((m) => m.line !== undefined)) return [...marks];
	const pi = piVersion(found.entry);
	return marks.map((m) => (m.line === undefined ? { ...m, line: placeOf(m.hunk, document, pi) } : m));
}

/**
 * One change of a document, as VS Code's change event gives it (applied in order, each to the text the previous
 * one left): lines `startLine`..`endLine` (0-based, the range ending at `endCharacter`) replaced by `text`.
 */
export interface LineChange {
	startLine: number;
	/** Where the change starts in its line (0 when not given). */
	startCharacter?: number;
	endLine: number;
	endCharacter: number;
	text: string;
}

const lineBreaks = (text: string): number => {
	let n = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c === 10) n++;
		else if (c === 13 && text.charCodeAt(i + 1) !== 10) n++;
	}
	return n;
};

/**
 * Marks moved through the user's edits: an edit wholly above a mark's first line (ending on an earlier line, or
 * ending at the start of it having replaced whole lines) moves it by the lines it added or removed; an edit that
 * touches the mark's lines leaves it in place, and `markStatus` then says whether they are still pi's. A reverted
 * addition has no lines left: lines inserted at its place (an undo putting pi's back) go below it, not above.
 * An edit that takes away one of pi's lines marks the hunk `lost` (see Mark), but for the editor's undo or redo
 * (`byUndo`).
 */
export function shiftMarks(marks: readonly Mark[], changes: readonly LineChange[], byUndo = false): Mark[] {
	return marks.map((mark) => {
		if (mark.line === undefined) return mark;
		const emptyPlace = mark.reverted && mark.hunk.old_text.length === 0 && mark.hunk.new_text.length > 0;
		// An undo or redo puts back states (ReviewBook.edited tells a revert's): it takes no line of pi's.
		const lost =
			!byUndo &&
			!mark.reverted &&
			!mark.lost &&
			mark.intact !== false &&
			takesLine(mark.line, mark.hunk.new_text, changes);
		const line = shiftLine(mark.line, changes, emptyPlace);
		if (lost) return { ...mark, line, lost };
		return line === mark.line ? mark : { ...mark, line };
	});
}

/**
 * Whether `changes` (in order) take away a line of pi's `lines` at `line` (0-based): a change that removes a line
 * break, starting before the end of pi's last line and ending past the start of its first. One ending at the start
 * of its first line is above it (shiftLine); one starting at the end of its last line (not empty) leaves pi's text
 * whole, and the text then tells.
 */
function takesLine(line: number, lines: readonly string[], changes: readonly LineChange[]): boolean {
	if (lines.length === 0) return false;
	const lastLength = (lines[lines.length - 1] ?? "").length;
	let at = line;
	for (const change of changes) {
		const last = at + lines.length - 1;
		const startsAfter =
			change.startLine > last ||
			(change.startLine === last && lastLength > 0 && (change.startCharacter ?? 0) >= lastLength);
		const endsBefore = change.endLine < at || (change.endLine === at && change.endCharacter === 0);
		if (change.endLine > change.startLine && !startsAfter && !endsBefore) return true;
		at = shiftLine(at, [change]);
	}
	return false;
}

/** Line `line` moved through `changes` (shiftMarks' rule); `stays`: lines inserted at its start go below it. */
function shiftLine(line: number, changes: readonly LineChange[], stays = false): number {
	let at = line;
	for (const change of changes) {
		const wholeLines = change.text === "" || change.text.endsWith("\n") || change.text.endsWith("\r");
		const atPlace = stays && change.startLine === at;
		const above = change.endLine < at || (change.endLine === at && change.endCharacter === 0 && wholeLines && !atPlace);
		if (above) at += lineBreaks(change.text) - (change.endLine - change.startLine);
	}
	return Math.max(0, at);
}

/** `marks` with `intact` noted from `document` (the text after the edits shiftMarks followed). */
export function noteIntact(marks: readonly Mark[], document: TextLines): Mark[] {
	return marks.map((mark) => {
		const intact = markStatus(mark, document) === "pi";
		return mark.intact === intact ? mark : { ...mark, intact };
	});
}

/** What a mark is now in `document` (see MarkStatus). */
export function markStatus(mark: Mark, document: TextLines): MarkStatus {
	const { line, hunk } = mark;
	if (line === undefined) return "unplaced";
	if (mark.lost) return "edited";
	// A revert holds until ReviewBook.edited sees it undone: the text at the mark's line can look like pi's (an
	// added line like the one after it) and must not offer the revert again.
	if (mark.reverted && mark.revertStates !== undefined) return "reverted";
	if (hunk.new_text.length === 0) {
		// A deletion put back sits just above the place (the insertion moved the place down past it); the user
		// editing it since makes it theirs (an undo of the revert is seen by ReviewBook.edited, which clears
		// `reverted`).
		if (mark.reverted) return hasLinesAt(document, line - hunk.old_text.length, hunk.old_text) ? "reverted" : "edited";
		return line <= document.count ? "pi" : "edited";
	}
	if (hasLinesAt(document, line, hunk.new_text)) return "pi";
	if (mark.reverted || (hunk.old_text.length > 0 && hasLinesAt(document, line, hunk.old_text))) return "reverted";
	return "edited";
}

/** A text edit in an editor's terms: 0-based lines, UTF-16 characters. */
export interface TextEdit {
	start: { line: number; character: number };
	end: { line: number; character: number };
	text: string;
}

/** Why a hunk cannot be reverted, in the words the user reads; undefined when it can. */
export function revertProblem(mark: Mark, document: TextLines): string | undefined {
	const status = markStatus(mark, document);
	const where = mark.line === undefined ? "" : `line ${Math.min(mark.line + 1, Math.max(document.count, 1))}: `;
	if (status === "pi") return undefined;
	if (status === "reverted") return `${where}already reverted`;
	if (status === "unplaced") return "pi's lines are not in this document (it does not show pi's version)";
	return `${where}you changed these lines after pi's edit; not reverted`;
}

/**
 * The edit that puts the baseline's lines back for `mark` (status "pi"), with `eol` between lines: the buffer's
 * lines replaced, never anything else. A hunk that ends at the last line of a document without a final line
 * break keeps it that way.
 */
export function revertEdit(mark: Mark, document: TextLines, eol: string): TextEdit {
	const at = mark.line ?? 0;
	const n = mark.hunk.new_text.length;
	const old = mark.hunk.old_text.map(bare);
	const endOfLine = (line: number) => ({ line, character: document.text(line).length });
	if (n === 0) {
		if (at < document.count) {
			return {
				start: { line: at, character: 0 },
				end: { line: at, character: 0 },
				text: old.map((l) => l + eol).join(""),
			};
		}
		const last = endOfLine(document.count - 1);
		return { start: last, end: last, text: old.map((l) => eol + l).join("") };
	}
	if (at + n < document.count) {
		return {
			start: { line: at, character: 0 },
			end: { line: at + n, character: 0 },
			text: old.map((l) => l + eol).join(""),
		};
	}
	// The hunk runs to the document's last line, which has no line break after it.
	const end = endOfLine(at + n - 1);
	if (old.length > 0) return { start: { line: at, character: 0 }, end, text: old.join(eol) };
	return { start: at > 0 ? endOfLine(at - 1) : { line: 0, character: 0 }, end, text: "" };
}

/**
 * The key of a hunk's revert, for a mark or a listed revert: the wire's `revertKey` spelled out (pi's; the copies
 * are held together by test/fixtures/revert-key.ts).
 */
const revertKeyOf = (
	r: { pid: number; piNs?: string | undefined; run: number; hunk: { id: string } } | RevertedHunk,
): string =>
	"hunk" in r
		? `${r.pid}:${r.piNs ?? INITIAL_PID_NAMESPACE}:${r.run}:${r.hunk.id}`
		: `${r.pi_pid}:${r.pi_ns ?? INITIAL_PID_NAMESPACE}:${r.run}:${r.id}`;

/**
 * A hash of a document's text (53 bits, cyrb53's mixing), to recognise the states a revert left and an undo or
 * redo brings back without keeping the text.
 */
export function hashLines(document: TextLines): number {
	let h1 = 0xdeadbeef;
	let h2 = 0x41c6ce57;
	for (let line = 0; line < document.count; line++) {
		const text = document.text(line);
		for (let i = 0; i <= text.length; i++) {
			const c = i < text.length ? text.charCodeAt(i) : 10; // each line ends with a line break
			h1 = Math.imul(h1 ^ c, 2654435761);
			h2 = Math.imul(h2 ^ c, 1597334677);
		}
	}
	h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
	h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
	return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * Whether an undo took back a revert (`mark` reverted): the document (its hash `now`) is as it was just before
 * the revert. (`document`: for rules that would read it; this one does not.)
 */
export function revertUndone(mark: Mark, now: number, _document: TextLines): boolean {
	return mark.revertStates?.before === now;
}

/** Whether a redo brought back an undone revert: the document is as the revert left it. */
export function revertRedone(mark: Mark, now: number, _document: TextLines): boolean {
	return mark.revertStates?.after === now;
}

/** The two rules that decide whether a revert holds (a seam for the seeded test's planted defects). */
export interface RevertRules {
	undone: typeof revertUndone;
	redone: typeof revertRedone;
}

export const REVERT_RULES: RevertRules = { undone: revertUndone, redone: revertRedone };

/**
 * `reverted` with `mark` (reverted at its place now) added, newest last, capped; an earlier revert of the same
 * hunk (undone since) is replaced, not listed twice.
 */
export function addRevert(reverted: readonly RevertedHunk[], mark: Mark): RevertedHunk[] {
	const entry: RevertedHunk = {
		pi_pid: mark.pid,
		...(mark.piNs === undefined ? {} : { pi_ns: mark.piNs }),
		run: mark.run,
		id: mark.hunk.id,
		file: mark.file,
		line: (mark.line ?? 0) + 1,
		lines: mark.hunk.new_text.length,
	};
	const key = revertKeyOf(mark);
	return [...reverted.filter((r) => revertKeyOf(r) !== key), entry].slice(-MAX_REVERTED_REPORTS);
}

/** Which of a document's marks a revert takes: the hunk under the cursor (0-based line), or all of them. */
export type RevertScope = { cursor: number } | "all";

/** A revert worked out for one document: the edits to apply together (one undo step), and what was refused. */
export interface RevertPlan {
	/** hashLines of the document the plan was made on: the state an undo of the revert returns to. */
	before: number;
	edits: TextEdit[];
	/** The marks those edits revert, in the same order. */
	marks: Mark[];
	problems: string[];
	/** Marks the scope took (0: nothing of pi's there). */
	chosen: number;
}

const covers = (mark: Mark, line: number, document: TextLines): boolean => {
	if (mark.line === undefined) return false;
	const n = mark.hunk.new_text.length;
	// A deletion is shown on the line that now follows it (the last line, for one at the end).
	if (n === 0) return line === Math.min(mark.line, Math.max(document.count - 1, 0));
	return line >= mark.line && line < mark.line + n;
};

/**
 * The lines (0-based, inclusive) of pi's live hunk under `line` of `document`, or undefined: what a send to pi's
 * `hunk` form hands over (v0.5). A deletion has no lines of its own: the line it is shown on.
 */
export function hunkLinesAt(
	marks: readonly Mark[],
	document: TextLines,
	line: number,
): { first: number; last: number } | undefined {
	const mark = marks.find((m) => markStatus(m, document) !== "reverted" && covers(m, line, document));
	if (mark?.line === undefined) return undefined;
	const n = mark.hunk.new_text.length;
	const first = n === 0 ? Math.min(mark.line, Math.max(document.count - 1, 0)) : mark.line;
	return { first, last: first + Math.max(n, 1) - 1 };
}

/** The edits that revert `scope` of `marks` in `document`, refusing hunks whose lines are no longer pi's. */
export function planRevert(marks: readonly Mark[], document: TextLines, eol: string, scope: RevertScope): RevertPlan {
	// Reverted hunks are done; hunks never found are refused by name in a whole-file revert (they have no place).
	const live = marks.filter((m) => markStatus(m, document) !== "reverted");
	const chosen = scope === "all" ? live : live.filter((m) => covers(m, scope.cursor, document));
	const plan: RevertPlan = { before: 0, edits: [], marks: [], problems: [], chosen: chosen.length };
	for (const mark of chosen) {
		const problem = revertProblem(mark, document);
		if (problem !== undefined) plan.problems.push(problem);
		else {
			plan.edits.push(revertEdit(mark, document, eol));
			plan.marks.push(mark);
		}
	}
	if (plan.edits.length > 0) plan.before = hashLines(document);
	return plan;
}

/**
 * What an editor knows of pi's change sets: the runs of each connected pi, pi's hunks in each open document of a
 * changed file, and what the user reverted (the state file's `reverted`). Pure: the host hands in documents as
 * lines and their changes; it reads the files and draws the marks.
 */
export class ReviewBook {
	/** By pi's identity key (piIdentityKey), and who each key names. */
	readonly #sets = new Map<string, ReviewRun[]>();
	readonly #pis = new Map<string, { pid: number; piNs?: string }>();
	readonly #marks = new Map<string, Mark[]>();
	#reverted: RevertedHunk[] = [];
	/** Reverts the user undid (revertKeyOf): left out of `reverted` until a redo, so pi is never told of them. */
	readonly #undone = new Set<string>();
	/** Reverts the file has (revertKeyOf): the document's last save since the revert had it (`saved`). */
	readonly #saved = new Set<string>();
	readonly #rules: RevertRules;

	constructor(rules: RevertRules = REVERT_RULES) {
		this.#rules = rules;
	}

	/** By pi's identity key (pid and namespace, v0.5). */
	get sets(): ReadonlyMap<string, readonly ReviewRun[]> {
		return this.#sets;
	}

	/** The state file's `reverted`, newest last: the reverts that hold (one undone is left out). */
	get reverted(): RevertedHunk[] {
		return this.#undone.size === 0 ? this.#reverted : this.#reverted.filter((r) => !this.#undone.has(revertKeyOf(r)));
	}

	/** Files of open documents with marks. */
	get markedFiles(): string[] {
		return [...this.#marks.keys()];
	}

	/** pi (`pid`, v0.5 `piNs`)'s change set. */
	setRuns(pid: number, runs: ReviewRun[], piNs?: string): void {
		const key = piIdentityKey(pid, piNs);
		this.#sets.set(key, runs);
		this.#pis.set(key, { pid, ...(piNs === undefined ? {} : { piNs }) });
	}

	/** pi (`pid`, v0.5 `piNs`) is gone or no longer connected; true when it had a change set. */
	forget(pid: number, piNs?: string): boolean {
		const key = piIdentityKey(pid, piNs);
		this.#pis.delete(key);
		return this.#sets.delete(key);
	}

	#piOf = (key: string): { pid: number; piNs?: string | undefined } => this.#pis.get(key) ?? { pid: 0 };

	entryFor(file: string): ReviewEntry | undefined {
		return newestEntry(this.#sets, file, this.#piOf);
	}

	newestRun(): { pid: number; piNs?: string | undefined; run: ReviewRun } | undefined {
		return newestRun(this.#sets, this.#piOf);
	}

	/** The open document of `file` (its lines now): mark the hunks of its newest entry, or drop its marks. */
	sync(file: string, document: TextLines): void {
		const found = this.entryFor(file);
		if (found === undefined) this.#marks.delete(file);
		else this.#marks.set(file, noteIntact(placeMarks(this.#marks.get(file) ?? [], found, document), document));
	}

	/**
	 * The document of `file` changed (`changes`, in order), and now has `document`'s lines; `byUndo`: the change
	 * was the editor's undo or redo (only those take a revert back or bring it back: the user's own edits of the
	 * lines never do). Returns whether `reverted` changed.
	 */
	edited(file: string, changes: readonly LineChange[] | undefined, document: TextLines, byUndo = false): boolean {
		const marks = this.#marks.get(file);
		if (marks === undefined) return false;
		const found = this.entryFor(file);
		if (found === undefined || changes === undefined) {
			// Without the changes the places cannot be followed: placed again from pi's version.
			this.#marks.set(file, []);
			this.sync(file, document);
			return false;
		}
		const moved = noteIntact(placeUnplaced(shiftMarks(marks, changes, byUndo), found, document), document);
		if (!byUndo || !moved.some((m) => m.revertStates !== undefined)) {
			this.#marks.set(file, moved);
			return false;
		}
		const now = hashLines(document);
		const listed = new Set(this.#reverted.map(revertKeyOf));
		const next = moved.map((m) => {
			const key = revertKeyOf(m);
			// A revert undone: the hunk is pi's again (marked again, not listed for pi), and a later edit of it
			// makes it edited, not reverted.
			if (m.reverted && this.#rules.undone(m, now, document)) {
				if (listed.has(key)) this.#undone.add(key);
				return { ...m, reverted: false };
			}
			// Redone: the revert holds again.
			if (!m.reverted && this.#undone.has(key) && this.#rules.redone(m, now, document)) {
				this.#undone.delete(key);
				return { ...m, reverted: true };
			}
			return m;
		});
		this.#marks.set(file, noteIntact(next, document));
		// Every change of the undone set comes with a change of its mark's `reverted`.
		return next.some((m, i) => m.reverted !== moved[i]?.reverted);
	}

	closed(file: string): void {
		this.#marks.delete(file);
	}

	/** The document of `file` was saved: the reverts its file now has (those that hold), or no longer has. */
	saved(file: string): void {
		for (const mark of this.#marks.get(file) ?? []) {
			const key = revertKeyOf(mark);
			if (mark.reverted && mark.revertStates !== undefined && !this.#undone.has(key)) this.#saved.add(key);
			else this.#saved.delete(key);
		}
	}

	/**
	 * The document of `file` was thrown away for its file's text (File: Revert File, a reload, closed unsaved):
	 * `document`, its lines now, or undefined when closed. A revert its file does not have (no save since had it) is
	 * gone with the text: out of `reverted`, so pi never tells its model of it; one the file has holds, even if
	 * undone in the text thrown away. The marks are placed anew. Returns whether `reverted` changed.
	 */
	discarded(file: string, document: TextLines | undefined): boolean {
		const listed = this.reverted.map(revertKeyOf).join(" ");
		const gone = new Set<string>();
		for (const r of this.#reverted) {
			if (r.file !== file) continue;
			const key = revertKeyOf(r);
			if (this.#saved.has(key)) this.#undone.delete(key);
			else gone.add(key);
		}
		if (gone.size > 0) {
			this.#reverted = this.#reverted.filter((r) => !gone.has(revertKeyOf(r)));
			for (const key of gone) this.#undone.delete(key);
		}
		if (document === undefined) this.#marks.delete(file);
		else if (this.#marks.has(file)) {
			this.#marks.set(file, []);
			this.sync(file, document);
		}
		return this.reverted.map(revertKeyOf).join(" ") !== listed;
	}

	marks(file: string): readonly Mark[] {
		return this.#marks.get(file) ?? [];
	}

	/**
	 * The marks of `plan` were reverted, and the document of `file` is now `document` (the plan's edits applied):
	 * remember and report them, with the states an undo and a redo of the revert return the document to.
	 */
	markReverted(file: string, plan: Pick<RevertPlan, "marks" | "before">, document: TextLines): void {
		const { marks } = plan;
		const ids = new Set(marks.map((m) => m.hunk.id));
		const revertStates = { before: plan.before, after: hashLines(document) };
		const current = this.#marks.get(file);
		if (current)
			this.#marks.set(
				file,
				// The revert's own edit took pi's lines (shiftMarks): not the user's.
				current.map((m) => (ids.has(m.hunk.id) ? { ...m, reverted: true, revertStates, lost: false } : m)),
			);
		for (const mark of marks) {
			this.#reverted = addRevert(this.#reverted, mark);
			this.#undone.delete(revertKeyOf(mark));
		}
		// Entries the cap dropped take their undone keys along.
		if (this.#undone.size > 0) {
			const listed = new Set(this.#reverted.map(revertKeyOf));
			for (const key of this.#undone) if (!listed.has(key)) this.#undone.delete(key);
		}
	}
}
