/**
 * The wire, in one place: the shapes and names of every file pi and the editors exchange in the state directory
 * (PROTOCOL.md), and their limits. pi and the TypeScript clients (editors/shared) take them from here; the other
 * clients keep copies held together by the limits-agree tests of each language and the conformance kit.
 *
 * - the editor's state file `<pid>.json` (v0.2, v0.3, v0.5 `pid_ns`): `EditorState` and its parts, validated by
 *   `parseEditorState` (protocol.ts, typebox schemas);
 * - pi's message `pi-<pid>.json` (v0.3): `PiMessage`;
 * - pi's change set `pi-<pid>.review.json` (v0.4): `ReviewMessage` and its runs, files and hunks (below);
 * - pi's approval request `pi-<pid>.approval.json` (v0.4): `ApprovalMessage` (below); the editor's answers are its
 *   state file's `decisions`;
 * - the editor's unsaved buffers `<pid>.buffers.json` (v0.5): `EditorBuffers` (below), named by its state file's
 *   `buffers_serial`;
 * - the editor's send to pi `<pid>.send.json` (v0.5): `SendRequest` (send.ts), named by `editorSendFileName`;
 * - pi's show and ask requests `pi-<pid>.ask.json` and the editor's `<pid>.answers.json` (v0.5): `AskMessage`, `EditorAnswers`
 *   (below), validated by `parseAnswers` (show-ask.ts);
 * - the limits: limits.ts.
 * Types and names only: no I/O, no imports but the protocol's own modules.
 */
import { INITIAL_PID_NAMESPACE, PID_NAMESPACE_PATTERN } from "./liveness.ts";
import type { Diagnostics } from "./protocol.ts";
import { parseStateFileName } from "./state-dir.ts";

// What makes a text from a file safe to show (one line, escapes): pi and every TypeScript client show such text.
export { inert, oneLine } from "./inert.ts";
export * from "./limits.ts";
export type {
	ActiveBuffer,
	ApprovalDecision,
	Cursor,
	DatabaseView,
	DiagnosticItem,
	Diagnostics,
	EditorState,
	EditorWindow,
	FileReport,
	FileStatus,
	PiChange,
	PiMessage,
	Position,
	RevertedHunk,
	Selection,
} from "./protocol.ts";
export { INITIAL_PID_NAMESPACE, PID_NAMESPACE_PATTERN };

/**
 * The lines a hunk's line numbers count (the change set's and the approval request's): a text's lines without
 * the terminator of the last one, so "a\n" and "a" are both ["a"].
 */
export function splitLines(text: string): string[] {
	if (text === "") return [];
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	return lines;
}

/**
 * The key of a revert in the editor's `reverted` list: the same hunk (`id`) of the same run of the same pi, the pi
 * being (`pi_pid`, `pi_ns`, absent read as the initial namespace: v0.5). pi and every TypeScript client key by it;
 * the other clients' copies are held together by test/fixtures/revert-key.ts.
 */
export const revertKey = (r: { pi_pid: number; pi_ns?: string | undefined; run: number; id: string }): string =>
	`${r.pi_pid}:${r.pi_ns ?? INITIAL_PID_NAMESPACE}:${r.run}:${r.id}`;

/**
 * One pi, as an editor keys what it keeps per pi (v0.5: the highest seq, reports, reverts, answered requests): its
 * pid and its namespace, a `pid_ns` left out read as the initial one.
 */
export const piIdentityKey = (pid: number, pidNs: string | null | undefined): string =>
	`${pid}@${pidNs ?? INITIAL_PID_NAMESPACE}`;

/**
 * Is an editor's entry (a report, a revert, a decision) this pi's? Its `pi_pid` is pi's pid and its `pi_ns` is
 * left out (an editor before v0.5, or a pi that wrote no `pid_ns`) or is exactly the `pid_ns` pi writes (`ownNs`,
 * null when pi writes none).
 */
export function isPisEntry(
	entry: { pi_pid?: number | undefined; pi_ns?: string | undefined },
	pid: number,
	ownNs: string | null | undefined,
): boolean {
	return entry.pi_pid === pid && (entry.pi_ns === undefined || entry.pi_ns === (ownNs ?? undefined));
}

export {
	type ParsedSend,
	parseSendRequest,
	SEND_KINDS,
	type SendItem,
	type SendKind,
	type SendMode,
	type SendRequest,
} from "./send.ts";

/** v0.5: what the editor hands pi (send to pi), `<editor pid>.send.json`: not `<digits>.json`, so older pis skip it. */
export const SEND_FILE_SUFFIX = ".send.json";

export function editorSendFileName(pid: number): string {
	return `${pid}${SEND_FILE_SUFFIX}`;
}

/** The editor pid a send file's name stands for (canonical decimal, as state files), or undefined. */
export function parseSendFileName(name: string): number | undefined {
	const m = /^([1-9][0-9]{0,9})\.send\.json$/.exec(name);
	if (!m) return undefined;
	const pid = Number(m[1]);
	return pid <= 2 ** 31 - 1 ? pid : undefined;
}

/** Every file pi writes for the editors starts so; no editor's `<pid>.json` does. */
export const PI_FILE_PREFIX = "pi-";

/** pi's files: its message, its change set (v0.4), its approval request (v0.4), its show and ask requests (v0.5). */
export type PiFileKind = "message" | "review" | "approval" | "ask";

const KIND_SUFFIX: Record<PiFileKind, string> = {
	message: ".json",
	review: ".review.json",
	approval: ".approval.json",
	ask: ".ask.json",
};

/** The digits of a pid namespace `pid:[<digits>]` in a pi file's name (v0.5): canonical, 1 to 20, as text. */
const NS_DIGITS = /^[1-9][0-9]{0,19}$/;

/** The digits of `pid:[<digits>]`, or undefined for anything else. */
const namespaceDigits = (pidNs: string): string | undefined => /^pid:\[([0-9]{1,20})\]$/.exec(pidNs)?.[1];

/**
 * The name of pi's `kind` file (PROTOCOL.md "pi's message file", v0.5): `pi-<pid>.json` (`.review.json`,
 * `.approval.json`) for a pi of the initial namespace or not knowing its own (`pidNs` null or undefined), and
 * `pi-<pid>-<ns digits>.json` for a pi of any other. Temp files add `.tmp` to it.
 */
export function piFileName(kind: PiFileKind, pid: number, pidNs?: string | null): string {
	const digits =
		pidNs === null || pidNs === undefined || pidNs === INITIAL_PID_NAMESPACE ? undefined : namespaceDigits(pidNs);
	return `${PI_FILE_PREFIX}${pid}${digits === undefined ? "" : `-${digits}`}${KIND_SUFFIX[kind]}`;
}

/** What a pi file's name says: which file, whose pid, and its namespace's digits (null: the initial namespace's). */
export interface PiFileName {
	kind: PiFileKind;
	pid: number;
	ns: string | null;
}

/**
 * The one parser of pi's file names (v0.5, test/fixtures/state-dir-cases.ts PI_FILE_NAME_CASES): the pid by the
 * state file name rule (canonical decimal, at most 2^31-1), the namespace's digits canonical and never the initial
 * namespace's (whose pi is `pi-<pid>.json`), so no other spelling aliases a pi. Temp files and anything else:
 * undefined.
 */
export function parsePiFileName(name: string): PiFileName | undefined {
	const match = /^pi-([0-9]+)(?:-([0-9]+))?(\.review\.json|\.approval\.json|\.ask\.json|\.json)$/.exec(name);
	if (!match?.[1] || !match[3]) return undefined;
	const pid = parseStateFileName(`${match[1]}.json`);
	if (pid === undefined) return undefined;
	const ns = match[2] ?? null;
	if (ns !== null && (!NS_DIGITS.test(ns) || `pid:[${ns}]` === INITIAL_PID_NAMESPACE)) return undefined;
	const kind = (Object.keys(KIND_SUFFIX) as PiFileKind[]).find((k) => KIND_SUFFIX[k] === match[3]) ?? "message";
	return { kind, pid, ns };
}

/**
 * Does a pi file's `pid_ns` field agree with its name? A name with a namespace needs exactly that `pid:[<digits>]`;
 * a name without one takes no `pid_ns` or the initial namespace's. Otherwise the file is malformed.
 */
export function piNamespaceAgrees(name: PiFileName, pidNs: unknown): boolean {
	if (name.ns !== null) return pidNs === `pid:[${name.ns}]`;
	return pidNs === undefined || pidNs === INITIAL_PID_NAMESPACE;
}

/** `pi-<pid>.json` (or `pi-<pid>-<ns>.json`, v0.5): never an editor's `<pid>.json`, so v0.2 readers skip it. */
export function piMessageFileName(pid: number, pidNs?: string | null): string {
	return piFileName("message", pid, pidNs);
}

/** pi's edit waiting for the user's approval (v0.4): `pi-<pid>.approval.json`, beside the change set. */
export function piApprovalFileName(pid: number, pidNs?: string | null): string {
	return piFileName("approval", pid, pidNs);
}

/** pi's change set for review (v0.4): `pi-<pid>.review.json`, a name no v0.2 or v0.3 reader takes for its own. */
export function piReviewFileName(pid: number, pidNs?: string | null): string {
	return piFileName("review", pid, pidNs);
}

/** Why a file's content is not in the change set (or a request's hunks are not carried): `files[].note`, `request.note`. */
export const REVIEW_NOTES = ["binary", "too large", "unreadable"] as const;
export type ReviewNote = (typeof REVIEW_NOTES)[number];

/** One hunk: baseline lines `old_text` at `old_start` became `new_text` at `new_start` in pi's version. */
export interface ReviewHunk {
	/** Stable while the hunk's file and text stay the same: `h` and 10 hex digits. */
	id: string;
	/** 1-based. With `old_lines` 0, the baseline line before which pi inserted. */
	old_start: number;
	old_lines: number;
	/** 1-based. With `new_lines` 0, the line of pi's version before which pi deleted. */
	new_start: number;
	new_lines: number;
	old_text: string[];
	new_text: string[];
}

export interface ReviewFile {
	/** Absolute path, resolved as pi's write/edit tools resolve theirs. */
	file: string;
	/** The content before pi first touched the file in this run; null when it did not exist or is not carried. */
	baseline: string | null;
	/** Why the contents are not carried (then there are no hunks). */
	note: ReviewNote | null;
	hunks: ReviewHunk[];
	/** Hunks in all, when more than MAX_REVIEW_HUNKS_PER_FILE. */
	hunks_total: number;
}

export interface ReviewRun {
	/** The seq of the run's first change: unique and growing for the life of the pi process. */
	run: number;
	files: ReviewFile[];
}

/** `pi-<pid>.review.json`. */
export interface ReviewMessage {
	protocol: "0.4";
	kind: "pi-review";
	pid: number;
	editor_pid: number | null;
	timestamp: number;
	runs: ReviewRun[];
	/** v0.5: pi's pid namespace. */
	pid_ns?: string;
}

/** One proposed change, as the editor reads it. */
export interface ApprovalRequest {
	/** Unique for the life of the pi process: the editor's decision names it. */
	id: string;
	tool: string;
	/** Absolute path, resolved as pi's tools resolve theirs. */
	file: string;
	/** The file does not exist yet: `write` creates it. */
	created: boolean;
	/** Why the hunks are not carried (the file is binary, too large, unreadable): then `hunks` is empty. */
	note: ReviewNote | null;
	/** From the file as it is now to what the tool would leave (no context lines), as in the change set. */
	hunks: ReviewHunk[];
	hunks_total: number;
	/** The stated timeout, and when it runs out (seconds since the epoch). */
	timeout_s: number;
	expires: number;
}

/** `pi-<pid>.approval.json`: present only while a request waits. */
export interface ApprovalMessage {
	protocol: "0.4";
	kind: "pi-approval";
	pid: number;
	editor_pid: number | null;
	timestamp: number;
	request: ApprovalRequest;
	/** v0.5: pi's pid namespace. */
	pid_ns?: string;
}

/**
 * v0.5: the editor's unsaved buffers, `<pid>.buffers.json` beside its state file `<pid>.json` (never
 * `<digits>.json`, so no older reader takes it for a state file). Present only while some file buffer has unsaved
 * changes; its `serial` is the state file's `buffers_serial`.
 */
export function editorBuffersFileName(pid: number): string {
	return `${pid}.buffers.json`;
}

/** Why an unsaved buffer's text is not carried: it would pass MAX_UNSAVED_TEXT_BYTES. */
export type UnsavedBufferNote = "too_large";

/** One loaded file buffer with unsaved changes, as the editor holds it. */
export interface UnsavedBuffer {
	/** Absolute path of the file the buffer edits. */
	file: string;
	/** The buffer's content version (Neovim and Vim `changedtick`), as the state file's `active_buffer.version`. */
	version: number;
	lines_total: number;
	/** The buffer's lines joined with `\n` (no final newline); absent with `note`. */
	text?: string;
	note?: UnsavedBufferNote;
}

/** `<pid>.buffers.json` (v0.5). */
export interface EditorBuffers {
	protocol: "0.5";
	kind: "editor-buffers";
	pid: number;
	/** Grows with every write of this file, for the life of the editor process; the state file names the current one. */
	serial: number;
	timestamp: number;
	buffers: UnsavedBuffer[];
}

/* v0.5 show and ask (show-ask.ts validates the answers). */

/** A show: put `file` at `line` (to `end_line`) where the user finds it, without taking the user's focus. */
export interface ShowRequest {
	id: string;
	kind: "show";
	/** Absolute path, as the editor knows it. */
	file: string;
	/** 1-based, inclusive. */
	line: number;
	end_line: number | null;
	/** The model's short note, or null: text for the user, inert in the editor. */
	note: string | null;
	/** Seconds since the epoch after which the editor ignores the request (pi no longer waits). */
	expires: number;
}

/**
 * An ask: the open file buffers, with the diagnostics of `file` (`diagnostics: "file"`, absolute, as the editor
 * knows it), of every one (`"all"`), or of none (`"none"`).
 */
export interface AskRequest {
	id: string;
	kind: "ask";
	diagnostics: "file" | "all" | "none";
	/** With `diagnostics: "file"`: the file; otherwise null. */
	file: string | null;
	expires: number;
}

export type ShowAskRequest = ShowRequest | AskRequest;

/** `pi-<pid>.ask.json` (`pi-<pid>-<ns digits>.ask.json` outside the initial namespace): present only while pi waits. */
export interface AskMessage {
	protocol: "0.5";
	kind: "pi-ask";
	pid: number;
	/** pi's pid namespace, as in its message. */
	pid_ns?: string;
	/** The editor asked: only it answers. */
	editor_pid: number;
	timestamp: number;
	/** At most MAX_ASK_REQUESTS, oldest first. */
	requests: ShowAskRequest[];
}

/** What became of a show: in the editor's list (quickfix), opened too (the user's `follow` setting), or refused. */
export const SHOW_STATUSES = ["listed", "opened", "refused"] as const;
export type ShowStatus = (typeof SHOW_STATUSES)[number];

/** One open file buffer in an ask's answer. */
export interface AskBuffer {
	/** Absolute path, as the editor knows it. */
	file: string;
	/** Unsaved changes. */
	modified: boolean;
	/** The buffer's content version (`changedtick`), as the state file's `active_buffer.version`. */
	version: number;
	lines_total: number;
	/** The buffer the user is in. */
	active: boolean;
	/**
	 * Present only for the buffers the ask named (one, or every one): its diagnostics, dated with the version they
	 * were computed for (as the state file's), or null when no checker has reported for it.
	 */
	diagnostics?: Diagnostics | null;
}

interface AnswerHead {
	pi_pid: number;
	/** pi's `pid_ns` exactly as its request file said; absent when it said none. */
	pi_ns?: string;
	id: string;
}

export interface ShowAnswer extends AnswerHead {
	kind: "show";
	status: ShowStatus;
	/** The editor's list it went to (`quickfix`, `location`), or null. */
	list: string | null;
	/** With `refused`: why, one line. */
	reason: string | null;
}

export interface AskAnswer extends AnswerHead {
	kind: "ask";
	/** Every loaded file buffer, the active one first, at most MAX_ASK_BUFFERS. */
	buffers: AskBuffer[];
	/** How many there were before the cap. */
	buffers_total: number;
}

export type ShowAskAnswer = ShowAnswer | AskAnswer;

/** `<editor pid>.answers.json`: the editor's newest answers (at most MAX_ANSWERS, newest last). */
export interface EditorAnswers {
	protocol: "0.5";
	kind: "editor-answers";
	pid: number;
	timestamp: number;
	answers: ShowAskAnswer[];
}

/** `<editor pid>.answers.json`: not `<digits>.json`, so no older pi reads it. */
export function editorAnswersFileName(pid: number): string {
	return `${pid}.answers.json`;
}
