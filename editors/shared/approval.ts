/**
 * Protocol v0.4's optional approval in a TypeScript editor, pure: the parser for `pi-<pid>.approval.json`
 * (untrusted JSON in, one request or one problem out), what a request is to this editor (its own, another
 * editor's, run out), the proposal (the request's hunks applied to the file's lines, in memory), the notice's words,
 * and the state file's `decisions` (newest last, capped). `ApprovalInbox` keeps the requests waiting, the one the
 * user was shown (PROTOCOL.md "An answer is for the request the user saw") and the decisions made; the host shows
 * them and hands in the user's answer. Nothing here writes a buffer or a file: a
 * decision is only ever a line in the state file, which pi reads. The file-system checks that come before parsing
 * live in pi-reader.ts.
 */

import {
	MAX_APPROVAL_BYTES,
	MAX_DECISIONS,
	MAX_ID_BYTES,
	MAX_REVIEW_HUNKS_PER_FILE,
} from "../../src/protocol/limits.ts";
import type { ApprovalDecision } from "../../src/protocol/protocol.ts";
import {
	type ApprovalRequest,
	PID_NAMESPACE_PATTERN,
	parsePiFileName,
	piApprovalFileName,
	piIdentityKey,
	REVIEW_NOTES,
	splitLines,
} from "../../src/protocol/wire.ts";
import { type HunkPlace, planMerge } from "./merge.ts";
import { isLineNumber, isObject, isPid, parsePiObject } from "./pi-message.ts";
import { applyHunks, overCap, parseHunk, type ReviewHunk } from "./review.ts";
import { utf8Length } from "./utf16.ts";

export type { ApprovalDecision, ApprovalRequest };
// The caps are the protocol's (src/protocol/limits.ts).
export { MAX_APPROVAL_BYTES, MAX_DECISIONS };

/** `pi-<pid>.approval.json`: the name of the request of a pi of the initial namespace (the wire's `piApprovalFileName`). */
export const piApprovalName = (pid: number): string => piApprovalFileName(pid);

/** The pid in a `pi-<pid>.approval.json` name (the wire's `parsePiFileName`; no namespace), else undefined. */
export function approvalPid(name: string): number | undefined {
	const parsed = parsePiFileName(name);
	return parsed?.kind === "approval" && parsed.ns === null ? parsed.pid : undefined;
}

/** A request as this editor keeps it: pi's fields, and the pi that waits on it. */
export interface PendingApproval extends ApprovalRequest {
	piPid: number;
	/** v0.5: the pi's `pid_ns` as its file said (echoed as `pi_ns` in the decision); none: the initial namespace. */
	piNs?: string;
	/** The editor pi asked. */
	editorPid: number | null;
}

/** `dropped`: malformed hunks left out (the request still counts: the user is asked all the same). */
export type ParsedApproval = { ok: true; request: PendingApproval; dropped: number } | { ok: false; problem: string };

const isTime = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
const NOTES: ReadonlySet<string> = new Set(REVIEW_NOTES);

/** Parse the text of pi `pid`'s approval file. Never throws; the whole file is refused unless it is such a request. */
export function parseApproval(text: string, pid: number): ParsedApproval {
	const head = parsePiObject(text, "pi-approval", pid);
	if (!head.ok) return head;
	const raw = head.raw;
	const editorPid = raw["editor_pid"];
	if (editorPid !== null && !isPid(editorPid)) return { ok: false, problem: "editor_pid: not a pid or null" };
	const piNs = raw["pid_ns"];
	if (piNs !== undefined && !(typeof piNs === "string" && PID_NAMESPACE_PATTERN.test(piNs))) {
		return { ok: false, problem: "pid_ns: not a pid namespace (pid:[<digits>])" };
	}
	const request = raw["request"];
	if (!isObject(request)) return { ok: false, problem: "request: not an object" };
	const { id, tool, file, created, note, hunks, hunks_total, timeout_s, expires } = request;
	if (typeof id !== "string" || id.length === 0 || utf8Length(id) > MAX_ID_BYTES) {
		return { ok: false, problem: `request.id: not a string of 1 to ${MAX_ID_BYTES} bytes` };
	}
	// Any string (PROTOCOL.md, approval's `request.tool`): it only picks the verb; no client caps it.
	if (typeof tool !== "string") {
		return { ok: false, problem: "request.tool: not a string" };
	}
	if (typeof file !== "string" || !file.startsWith("/") || file.length > 4096) {
		return { ok: false, problem: "request.file: not an absolute path" };
	}
	if (note !== null && note !== undefined && !(typeof note === "string" && NOTES.has(note))) {
		return { ok: false, problem: "request.note: not binary, too large, unreadable or null" };
	}
	if (!Array.isArray(hunks)) return { ok: false, problem: "request.hunks: not a list" };
	const over = overCap("request.hunks", hunks, MAX_REVIEW_HUNKS_PER_FILE);
	if (over) return { ok: false, problem: over };
	if (!isTime(timeout_s) || timeout_s <= 0) return { ok: false, problem: "request.timeout_s: not a positive number" };
	if (!isTime(expires)) return { ok: false, problem: "request.expires: not a time" };
	const good: ReviewHunk[] = [];
	let dropped = 0;
	for (const each of hunks) {
		const hunk = parseHunk(each);
		if (hunk) good.push(hunk);
		else dropped++;
	}
	const noted = (note ?? null) as ApprovalRequest["note"];
	return {
		ok: true,
		dropped,
		request: {
			piPid: pid,
			...(piNs === undefined ? {} : { piNs }),
			editorPid,
			id,
			tool,
			file,
			created: created === true,
			note: noted,
			hunks: noted === null ? good : [],
			// Dropped hunks count: a proposal without them is not pi's (proposalLines then shows none).
			hunks_total: Math.max(isLineNumber(hunks_total) ? hunks_total : 0, good.length + dropped),
			timeout_s,
			expires,
		},
	};
}

/** Has the request's time run out (`now` in seconds since the epoch)? pi no longer waits on it then. */
export const isExpired = (request: Pick<ApprovalRequest, "expires">, now: number): boolean => now > request.expires;

/**
 * The proposal: `lines` (the file as it is, in the editor or on disk) with the request's hunks applied, or undefined
 * when it cannot be shown whole (a note, hunks left out, or `lines` no longer holds the lines pi read).
 */
export function proposalLines(request: PendingApproval, lines: readonly string[]): string[] | undefined {
	if (request.note !== null || request.hunks.length < request.hunks_total) return undefined;
	return applyHunks(lines, request.hunks);
}

/**
 * The proposal as text, from a document's lines as editors hold them (`text.split(eol)`: an empty last line after a
 * final line break), joined with `eol`; undefined as for proposalLines. pi's lines carry no final break, so the
 * document's is kept, and added when the proposal ends in an empty line (a text cannot end in one without it).
 */
export function proposalText(request: PendingApproval, document: readonly string[], eol: string): string | undefined {
	const hadBreak = document.length > 0 && document[document.length - 1] === "";
	const proposal = proposalLines(request, hadBreak ? document.slice(0, -1) : document);
	if (proposal === undefined) return undefined;
	const endsEmpty = proposal.length > 0 && proposal[proposal.length - 1] === "";
	return proposal.join(eol) + (proposal.length > 0 && (hadBreak || endsEmpty) ? eol : "");
}

/**
 * Issue 26 item 6: the proposal against a buffer with unsaved changes. `text`: the buffer with each of pi's hunks that
 * touches no unsaved change put in where the merge would put it (moved by the user's line-count changes above it),
 * the user's text kept where one does; `places`: one per hunk of the request, in order, its place in the buffer's
 * lines (0-based half-open; a touching hunk's: the user's lines it touches, from the first to the last line of the
 * hunk and of those changes); `touching`: those places as the notice names them (1-based, overlaps joined).
 */
export interface UnsavedProposal {
	text: string;
	places: HunkPlace[];
	touching: { line: number; lines: number }[];
}

/** Are `text`'s lines the file's split at `\n` (no CR, no BOM)? Else a proposal is not compared line by line. */
export const isSplitAtNewline = (text: string): boolean => !text.includes("\r") && text.charCodeAt(0) !== 0xfeff;

/**
 * The proposal against `buffer` (the unsaved text the user sees), the file on disk being `disk` (the text pi proposed
 * against): the merge's own rule (merge.ts `planMerge`: the user's changes are the line diff disk -> buffer). Undefined
 * when it cannot be shown whole (a note, hunks left out), the disk no longer holds the lines pi read, or either text's
 * lines are not split at `\n` (CR-LF, a BOM: PROTOCOL.md, such a buffer gets no marks). The text has
 * `\n` line ends, a final one when the buffer has one.
 */
export function proposalAgainstBuffer(
	request: PendingApproval,
	disk: string,
	buffer: string,
): UnsavedProposal | undefined {
	if (request.note !== null || request.hunks.length < request.hunks_total) return undefined;
	if (!isSplitAtNewline(disk) || !isSplitAtNewline(buffer)) return undefined;
	const base = splitLines(disk);
	if (applyHunks(base, request.hunks) === undefined) return undefined;
	const ours = splitLines(buffer);
	const plan = planMerge(base, ours, request.hunks);
	let lines = ours;
	for (const ed of [...plan.edits].reverse()) lines = [...lines.slice(0, ed.from), ...ed.lines, ...lines.slice(ed.to)];
	const touching: { line: number; lines: number }[] = [];
	for (const place of plan.places) {
		if (!place.touches) continue;
		const last = touching.at(-1);
		if (last && place.from <= last.line - 1 + last.lines) {
			last.lines = Math.max(last.lines, place.to - (last.line - 1));
		} else touching.push({ line: place.from + 1, lines: place.to - place.from });
	}
	const eol = buffer.endsWith("\n") || (lines.length > 0 && lines[lines.length - 1] === "") ? "\n" : "";
	return { text: lines.join("\n") + (lines.length > 0 ? eol : ""), places: plan.places, touching };
}

/**
 * The notice's words for hunks that touch the user's unsaved lines ("1 of 2 hunks touches your unsaved lines 7-8: if
 * accepted, the file gets pi's text and your buffer keeps yours there"), or undefined when none does.
 */
export function describeUnsaved(view: Pick<UnsavedProposal, "places">, { short = false } = {}): string | undefined {
	const n = view.places.filter((p) => p.touches).length;
	if (n === 0) return undefined;
	const total = view.places.length;
	// The touched spans in order (0-based half-open), those that overlap or meet joined: one place named once; where
	// the user deleted, the row the place stands on.
	const spans: { from: number; to: number }[] = [];
	for (const p of view.places) {
		if (!p.touches) continue;
		const to = Math.max(p.to, p.from + 1);
		const last = spans.at(-1);
		if (last && p.from <= last.to) last.to = Math.max(last.to, to);
		else spans.push({ from: p.from, to });
	}
	const span = (s: { from: number; to: number }) => (s.to === s.from + 1 ? `${s.to}` : `${s.from + 1}-${s.to}`);
	const one = spans.length === 1 && spans[0]?.to === (spans[0]?.from ?? 0) + 1;
	// At most 5 places named, as every client names them.
	const named = spans.slice(0, 5).map(span).join(", ") + (spans.length > 5 ? ", …" : "");
	const where = `${one ? "line" : "lines"} ${named}`;
	const phrase = `${n} of ${total} ${total === 1 ? "hunk" : "hunks"} ${n === 1 ? "touches" : "touch"} your unsaved ${where}`;
	return short ? phrase : `${phrase}: if accepted, the file gets pi's text and your buffer keeps yours there`;
}

/** The request as a unified diff, for when the proposal cannot be shown beside the file (the Neovim client's rule). */
export function proposalDiff(request: PendingApproval): string[] {
	const out = [`--- ${request.file}`, `+++ ${request.file} (pi's proposal)`];
	if (request.note !== null) out.push(`(no preview: ${request.note})`);
	for (const h of request.hunks) {
		out.push(`@@ -${h.old_start},${h.old_text.length} +${h.new_start},${h.new_text.length} @@`);
		out.push(...h.old_text.map((l) => `-${l}`), ...h.new_text.map((l) => `+${l}`));
	}
	if (request.hunks.length < request.hunks_total) {
		out.push(`(${request.hunks_total - request.hunks.length} more hunks not carried)`);
	}
	return out;
}

/** What pi would do to the file: `create`, `overwrite` (write) or `edit`. */
export function approvalVerb(request: Pick<ApprovalRequest, "created" | "tool">): string {
	return request.created ? "create" : request.tool === "write" ? "overwrite" : "edit";
}

/** The notice's one line: "pi wants to edit src/a.ts: 2 hunks" (`shown`: the path as the user knows it). */
export function describeApproval(request: PendingApproval, shown: string): string {
	const size =
		request.note !== null
			? `${request.note}, no preview`
			: `${request.hunks_total} ${request.hunks_total === 1 ? "hunk" : "hunks"}`;
	return `pi wants to ${approvalVerb(request)} ${shown}: ${size}`;
}

/** `decisions` with `decision` added, newest last, at most MAX_DECISIONS. */
export function addDecision(
	decisions: readonly ApprovalDecision[],
	decision: ApprovalDecision,
	max = MAX_DECISIONS,
): ApprovalDecision[] {
	return [...decisions, decision].slice(-max);
}

/** The answer to the user's decision: made (pi reads it), or nothing to decide, and why. */
export type DecideOutcome =
	| { kind: "decided"; request: PendingApproval; decision: ApprovalDecision["decision"] }
	/** No such request waits: already decided, answered elsewhere, or pi gone. */
	| { kind: "gone" }
	/**
	 * A command's answer: the request the user saw no longer waits and `request` does, which the user was not shown.
	 * Nothing is decided; `request` is now the one shown (tell the user), so the same command again answers it.
	 */
	| { kind: "moved"; request: PendingApproval }
	| { kind: "expired"; request: PendingApproval };

/**
 * Which request an answer is for: the one a notice or menu showed (`piPid`, `id`), or (`"current"`, a command that
 * names none) the one the user was last shown and has not answered.
 */
export type DecisionTarget = { piPid: number; piNs?: string | undefined; id: string } | "current";

/** The pi a request or target is of: its pid and namespace (v0.5), as everything per pi is keyed. */
const piOf = (r: { piPid: number; piNs?: string | undefined }): string => piIdentityKey(r.piPid, r.piNs);

/**
 * The requests waiting for this editor's answer (one per pi: pi asks about one change at a time) and the decisions
 * made, for the state file. Pure: the host reads the files, keeps the time, and shows what this returns.
 */
export class ApprovalInbox {
	/** By pi (piOf: pid and namespace). */
	readonly #pending = new Map<string, PendingApproval>();
	#decisions: ApprovalDecision[] = [];
	/** The request the user was last shown and has not answered: the one a `"current"` answer is for. */
	#seen: { pi: string; id: string } | undefined;

	/** The state file's `decisions`: always a list (empty before the first), which tells pi this editor answers. */
	get decisions(): ApprovalDecision[] {
		return this.#decisions;
	}

	get pending(): PendingApproval[] {
		return [...this.#pending.values()];
	}

	/** The request that runs out first, if any waits. */
	current(): PendingApproval | undefined {
		let best: PendingApproval | undefined;
		for (const each of this.#pending.values()) if (best === undefined || each.expires < best.expires) best = each;
		return best;
	}

	/**
	 * pi `request.piPid` waits on `request` (read, checked, for this editor, not run out). Returns what it replaced:
	 * `new` (tell the user), `same` (a rewrite of the one already told), or `replaced` with the one that ended. A
	 * request told becomes the one shown only when no request shown is still unanswered: the user may be answering
	 * that one.
	 */
	receive(request: PendingApproval): { kind: "new" } | { kind: "same" } | { kind: "replaced"; ended: PendingApproval } {
		const before = this.#pending.get(piOf(request));
		this.#pending.set(piOf(request), request);
		if (before?.id !== request.id && this.#seen === undefined) this.shown(request);
		if (before === undefined) return { kind: "new" };
		return before.id === request.id ? { kind: "same" } : { kind: "replaced", ended: before };
	}

	/** The user is shown `request` (its proposal, a menu of it): a `"current"` answer is for it from now on. */
	shown(request: Pick<PendingApproval, "piPid" | "piNs" | "id">): void {
		this.#seen = { pi: piOf(request), id: request.id };
	}

	/** The request a `"current"` answer is for: the one the user was shown, while it waits. */
	seen(): PendingApproval | undefined {
		const seen = this.#seen;
		const request = seen && this.#pending.get(seen.pi);
		return request?.id === seen?.id ? request : undefined;
	}

	/**
	 * pi (`piPid`, v0.5 `piNs`) waits on nothing here any more (decided elsewhere, timed out, gone): the request it
	 * had, if any.
	 */
	end(piPid: number, piNs?: string): PendingApproval | undefined {
		const key = piOf({ piPid, piNs });
		const request = this.#pending.get(key);
		this.#pending.delete(key);
		return request;
	}

	/** The requests run out by `now`, removed. */
	expire(now: number): PendingApproval[] {
		const ended = [...this.#pending.values()].filter((r) => isExpired(r, now));
		for (const request of ended) this.#pending.delete(piOf(request));
		return ended;
	}

	/**
	 * The user's answer: recorded for pi when its request still waits and has not run out. A `"current"` answer
	 * never goes to a request the user was not shown: `moved` names the one that waits instead.
	 */
	decide(decision: ApprovalDecision["decision"], target: DecisionTarget, now: number): DecideOutcome {
		if (target === "current" && this.seen() === undefined) {
			const instead = this.current();
			this.#seen = undefined;
			if (instead === undefined) return { kind: "gone" };
			this.shown(instead);
			return { kind: "moved", request: instead };
		}
		const request = target === "current" ? this.seen() : this.#pending.get(piOf(target));
		if (request === undefined || (target !== "current" && request.id !== target.id)) return { kind: "gone" };
		this.#seen = undefined;
		this.#pending.delete(piOf(request));
		if (isExpired(request, now)) return { kind: "expired", request };
		const pi = { pi_pid: request.piPid, ...(request.piNs === undefined ? {} : { pi_ns: request.piNs }) };
		this.#decisions = addDecision(this.#decisions, { ...pi, id: request.id, decision });
		return { kind: "decided", request, decision };
	}
}
