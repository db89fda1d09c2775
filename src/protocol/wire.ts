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
 * - the editor's send to pi `<pid>.send.json` (v0.5): `SendRequest` (send.ts), named by `editorSendFileName`;
 * - the limits: limits.ts.
 * Types and names only: no I/O, no imports but the protocol's own modules.
 */
export * from "./limits.ts";
export {
	type ActiveBuffer,
	type ApprovalDecision,
	type Cursor,
	type DatabaseView,
	type DiagnosticItem,
	type Diagnostics,
	type EditorState,
	type EditorWindow,
	type FileReport,
	type FileStatus,
	PID_NAMESPACE_PATTERN,
	type PiChange,
	type PiMessage,
	type Position,
	type RevertedHunk,
	type Selection,
} from "./protocol.ts";

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
 * The key of a revert in the editor's `reverted` list: the same hunk (`id`) of the same run of the same pi. pi and
 * every TypeScript client key by it; the other clients' copies are held together by test/fixtures/revert-key.ts.
 */
export const revertKey = (r: { pi_pid: number; run: number; id: string }): string => `${r.pi_pid}:${r.run}:${r.id}`;

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

/**
 * `pi-<pid>.json`: never an editor's `<pid>.json`, so v0.2 readers skip it. Readers take the pid from the
 * name with piMessagePid (editors/shared/pi-message.ts, the state file name rule behind the prefix).
 */
export function piMessageFileName(pid: number): string {
	return `${PI_FILE_PREFIX}${pid}.json`;
}

/** pi's edit waiting for the user's approval (v0.4): `pi-<pid>.approval.json`, beside the change set. */
export function piApprovalFileName(pid: number): string {
	return `${PI_FILE_PREFIX}${pid}.approval.json`;
}

/** pi's change set for review (v0.4): `pi-<pid>.review.json`, a name no v0.2 or v0.3 reader takes for its own. */
export function piReviewFileName(pid: number): string {
	return `${PI_FILE_PREFIX}${pid}.review.json`;
}

/** Why a file's content is not in the change set. */
export type ReviewNote = "binary" | "too large" | "unreadable";

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
