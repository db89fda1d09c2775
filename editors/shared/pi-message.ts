/**
 * Protocol v0.3, pi → editor, pure: the message pi writes to `<state dir>/pi-<pid>.json`, its parser
 * (untrusted JSON in, a typed message or one problem out), which of its changes an editor still has to act
 * on, and the `files` / `pi` reports the editor writes back in its state file. The file-system checks that
 * come before parsing live in pi-reader.ts.
 */
import {
	KEPT_FILE_REPORTS,
	MAX_FILE_REPORTS,
	MAX_LINE_NUMBER,
	MAX_PI_CHANGED,
	MAX_PI_FILE_DEPTH,
	MAX_PI_LAST_TURN,
	MAX_PI_MESSAGE_BYTES,
} from "../../src/protocol/limits.ts";
import { parseStateFileName } from "../../src/protocol/state-dir.ts";
import { PI_FILE_PREFIX, PID_NAMESPACE_PATTERN, piIdentityKey } from "../../src/protocol/wire.ts";
import type { DiagnosticsReport } from "./diagnostics.ts";

// The caps (message size, its lists, the editor's `files`, nesting) are the protocol's: src/protocol/limits.ts.
export {
	KEPT_FILE_REPORTS,
	MAX_FILE_REPORTS,
	MAX_PI_CHANGED,
	MAX_PI_FILE_DEPTH,
	MAX_PI_LAST_TURN,
	MAX_PI_MESSAGE_BYTES,
};

export interface ChangedFile {
	file: string;
	/** pi's change seq this entry belongs to. */
	seq: number;
	tool: string;
	/** Issue 26 (v0.5): the change's hunks and hash for a merge into an unsaved buffer, unchecked (merge.ts parses it). */
	merge?: unknown;
}

export interface PiMessage {
	protocol: string;
	kind: "pi";
	pid: number;
	cwd: string;
	timestamp: number;
	/** The editor pi is connected to, null when none. */
	editor_pid: number | null;
	seq: number;
	/** Newest last. */
	changed: ChangedFile[];
	last_turn: string[];
	/** v0.5: pi's pid namespace (`pid:[<digits>]`); left out: the initial one. pi is (pid, pid_ns). */
	pid_ns?: string;
	/** v0.5 send to pi: what became of the latest send pi answered; left out when absent or malformed. */
	sent?: SentAnswer;
}

/** pi's `sent` (v0.5): the latest send it answered and its fate. */
export interface SentAnswer {
	editor_pid: number;
	id: string;
	fate: string;
	reason?: string;
}

/** `sent` when well formed, else undefined: an optional field never makes the whole message bad. */
function parseSent(raw: unknown): SentAnswer | undefined {
	if (!isObject(raw)) return undefined;
	const { editor_pid, id, fate, reason } = raw;
	if (!isPid(editor_pid) || typeof id !== "string" || id === "" || typeof fate !== "string") return undefined;
	return { editor_pid, id, fate, ...(typeof reason === "string" ? { reason } : {}) };
}

export type FileStatus =
	| "reloaded"
	| "unchanged"
	| "modified"
	| "not-open"
	| "gone"
	| "refused"
	// Issue 26: only for a change whose entry carried `merge`.
	| "merged"
	| "conflict";

/** One entry of the state file's `files`: what this editor did about a file pi said it changed. */
export interface FileReport {
	file: string;
	seq: number;
	status: FileStatus;
	version: number | null;
	modified: boolean;
	diagnostics_expected: boolean;
	diagnostics: DiagnosticsReport | null;
	/** The pi whose message this answers (two pis connected to one editor number their changes separately). */
	pi_pid?: number;
	/** v0.5: that pi's `pid_ns`, exactly as its message said; left out when it said none. */
	pi_ns?: string;
	/** Issue 26, with `merged` and `conflict`: pi's hunks, those merged, the user's lines where the others would go. */
	merge?: { hunks: number; merged: number; conflicts: { line: number; lines: number; text: string[] }[] };
}

/** The key of the pi that sent `message`: its pid and namespace (PROTOCOL.md v0.5), for all kept per pi. */
export const piKeyOf = (message: Pick<PiMessage, "pid" | "pid_ns">): string =>
	piIdentityKey(message.pid, message.pid_ns);

/** The key of the pi a report answers. */
const reportPiKey = (report: FileReport): string => piIdentityKey(report.pi_pid ?? 0, report.pi_ns);

/** The state file's `pi`: the last pi message this editor handled. */
export interface HandledMessage {
	pid: number;
	seq: number;
}

export type ParsedPiMessage = { ok: true; message: PiMessage } | { ok: false; problem: string };

/**
 * The pid in a `pi-<pid>.json` name, or undefined for any other name (temp files included): the state file
 * name rule (canonical decimal, at most 2^31-1, so `pi-042.json` is not pi 42's) behind the prefix.
 */
export function piMessagePid(name: string): number | undefined {
	return name.startsWith(PI_FILE_PREFIX) ? parseStateFileName(name.slice(PI_FILE_PREFIX.length)) : undefined;
}

/** A JSON object's fields, and the checks every reader of pi's files makes of them. */
export type Fields = Record<string, unknown>;

export const isObject = (value: unknown): value is Fields =>
	typeof value === "object" && value !== null && !Array.isArray(value);
export const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
export const isPid = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;
/** A line number or line count from pi's files: an integer 0 to MAX_LINE_NUMBER (PROTOCOL.md "Limits"). */
export const isLineNumber = (value: unknown): value is number =>
	Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_LINE_NUMBER;

/**
 * How deep `text` nests arrays and objects, counted over its bytes (`[` and `{` outside strings) without decoding
 * it, up to `max + 1`: the rule of PROTOCOL.md "Limits" that refuses a deeper file of pi's before any decoder
 * sees it. Malformed text is the decoder's to refuse.
 */
export function nestingDepth(text: string, max: number = MAX_PI_FILE_DEPTH): number {
	let depth = 0;
	let deepest = 0;
	let inString = false;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (inString) {
			if (c === 0x5c)
				i++; // a backslash: the next character is escaped
			else if (c === 0x22) inString = false;
		} else if (c === 0x22) inString = true;
		else if (c === 0x5b || c === 0x7b) {
			depth++;
			if (depth > deepest) {
				deepest = depth;
				if (deepest > max) return deepest;
			}
		} else if (c === 0x5d || c === 0x7d) depth--;
	}
	return deepest;
}

/**
 * The head every file pi writes is read with: JSON, an object, of `kind`, and (given `pid`, the pid its name
 * carries) of that pi. Never throws.
 */
export function parsePiObject(
	text: string,
	kind: string,
	pid?: number,
): { ok: true; raw: Fields } | { ok: false; problem: string } {
	if (nestingDepth(text) > MAX_PI_FILE_DEPTH) {
		return { ok: false, problem: `nested deeper than ${MAX_PI_FILE_DEPTH} levels: refused unread` };
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		return { ok: false, problem: `invalid JSON: ${error instanceof Error ? error.message : String(error)}` };
	}
	if (!isObject(raw)) return { ok: false, problem: "not a JSON object" };
	if (raw["kind"] !== kind) return { ok: false, problem: `kind: not "${kind}"` };
	if (pid !== undefined && raw["pid"] !== pid)
		return { ok: false, problem: `pid field ${String(raw["pid"])} does not match the file name` };
	return { ok: true, raw };
}
const isAbsolutePath = (value: unknown): value is string =>
	typeof value === "string" && value.length > 0 && value.length <= 4096 && value.startsWith("/");

function parseChanged(raw: unknown): ChangedFile[] | string {
	if (!Array.isArray(raw)) return "changed: not an array";
	const changed: ChangedFile[] = [];
	for (const [index, entry] of raw.entries()) {
		if (!isObject(entry)) return `changed[${index}]: not an object`;
		const { file, seq, tool } = entry;
		if (!isAbsolutePath(file)) return `changed[${index}].file: not an absolute path`;
		if (!isCount(seq)) return `changed[${index}].seq: not a non-negative integer`;
		if (typeof tool !== "string") return `changed[${index}].tool: not a string`;
		changed.push(entry["merge"] === undefined ? { file, seq, tool } : { file, seq, tool, merge: entry["merge"] });
	}
	return changed.slice(-MAX_PI_CHANGED);
}

/**
 * Parse the text of a pi message. Never throws. Unknown fields are accepted (newer pis); lists longer than
 * the protocol's caps are cut to them (`changed` keeps its newest entries).
 */
export function parsePiMessage(text: string): ParsedPiMessage {
	const head = parsePiObject(text, "pi");
	if (!head.ok) return head;
	const raw = head.raw;
	const { protocol, pid, cwd, timestamp, editor_pid, seq, last_turn } = raw;
	if (typeof protocol !== "string") return { ok: false, problem: "protocol: not a string" };
	if (!isPid(pid)) return { ok: false, problem: "pid: not a positive integer" };
	if (typeof cwd !== "string") return { ok: false, problem: "cwd: not a string" };
	if (typeof timestamp !== "number" || !Number.isFinite(timestamp)) {
		return { ok: false, problem: "timestamp: not a number" };
	}
	if (editor_pid !== null && !isPid(editor_pid)) return { ok: false, problem: "editor_pid: not a pid or null" };
	if (!isCount(seq)) return { ok: false, problem: "seq: not a non-negative integer" };
	const changed = parseChanged(raw["changed"]);
	if (typeof changed === "string") return { ok: false, problem: changed };
	if (!Array.isArray(last_turn) || !last_turn.every(isAbsolutePath)) {
		return { ok: false, problem: "last_turn: not a list of absolute paths" };
	}
	const pidNs = raw["pid_ns"];
	if (pidNs !== undefined && !(typeof pidNs === "string" && PID_NAMESPACE_PATTERN.test(pidNs))) {
		return { ok: false, problem: "pid_ns: not a pid namespace (pid:[<digits>])" };
	}
	const sent = parseSent(raw["sent"]);
	return {
		ok: true,
		message: {
			protocol,
			kind: "pi",
			pid,
			cwd,
			timestamp,
			editor_pid,
			seq,
			changed,
			last_turn: last_turn.slice(0, MAX_PI_LAST_TURN),
			...(pidNs === undefined ? {} : { pid_ns: pidNs }),
			...(sent === undefined ? {} : { sent }),
		},
	};
}

/**
 * The changes of `message` this editor (`ownPid`) still has to act on, one per file (its newest entry):
 * none unless pi names this editor; entries newer than `handledSeq`, the last seq this editor handled from
 * that pi; for a pi not handled before, only its newest batch (older changes were made before this editor
 * was listening, and the files were read from disk since).
 */
export function pendingChanges(message: PiMessage, ownPid: number, handledSeq: number | undefined): ChangedFile[] {
	if (message.editor_pid !== ownPid) return [];
	const newest = message.changed.reduce((max, entry) => Math.max(max, entry.seq), -1);
	const since = handledSeq ?? newest - 1;
	const byFile = new Map<string, ChangedFile>();
	for (const entry of message.changed) {
		if (entry.seq <= since) continue;
		byFile.delete(entry.file); // re-insert: the newest entry of a file sets its place
		byFile.set(entry.file, entry);
	}
	return [...byFile.values()];
}

/** Per pi (its identity key: piKeyOf), the changes its newest message lists (`changed`): PROTOCOL.md `files`. */
export type ListedChanges = ReadonlyMap<string, readonly Pick<ChangedFile, "file" | "seq">[]>;

/**
 * `held` (newest last) with `report` replacing any earlier report of the same pi on the same file, then retained
 * (`retainReports`). Keyed by pi too: with two pis on one editor, one pi's report must not replace the other's
 * before it read it.
 */
export function addReport(held: readonly FileReport[], report: FileReport, listed: ListedChanges): FileReport[] {
	const same = (h: FileReport) => h.file === report.file && reportPiKey(h) === reportPiKey(report);
	return retainReports([...held.filter((h) => !same(h)), report], listed);
}

/**
 * PROTOCOL.md's retention of `files` reports (held newest last), timing-free: each pi's newest KEPT_FILE_REPORTS,
 * and every report on a change (file and seq) its pi's newest message still lists (`listed`), at most
 * MAX_FILE_REPORTS in all, the newest. One pi's listing keeps only that pi's reports.
 */
export function retainReports(held: readonly FileReport[], listed: ListedChanges): FileReport[] {
	const lists = new Map<string, Set<string>>();
	const listedBy = (key: string): Set<string> => {
		let set = lists.get(key);
		if (!set) {
			set = new Set((listed.get(key) ?? []).map((c) => changeKey(c.file, c.seq)));
			lists.set(key, set);
		}
		return set;
	};
	const perPi = new Map<string, number>();
	const kept: FileReport[] = [];
	for (let i = held.length - 1; i >= 0 && kept.length < MAX_FILE_REPORTS; i--) {
		const h = held[i] as FileReport;
		const key = reportPiKey(h);
		const count = (perPi.get(key) ?? 0) + 1;
		perPi.set(key, count);
		if (count <= KEPT_FILE_REPORTS || listedBy(key).has(changeKey(h.file, h.seq))) kept.push(h);
	}
	return kept.reverse();
}

/** One change as a lookup key (a NUL cannot be in a path pi names). */
const changeKey = (file: string, seq: number): string => `${seq}\u0000${file}`;
