/**
 * Reading pi's messages (`<state dir>/pi-<pid>.json`, protocol v0.3) with the same distrust pi applies to
 * editor files: only a regular file (lstat, then open with O_NOFOLLOW and check the opened file is the one
 * lstat saw), owned by us, without any group/other permission bit, at most 64 KiB, whose `pid` matches its
 * name and belongs to a live process of ours. pi's change set (`pi-<pid>.review.json`, v0.4) is read through
 * the same checks, with its own 8 MiB cap, and so are a request for approval (`pi-<pid>.approval.json`, v0.4, 1 MiB)
 * and pi's show and ask requests (`pi-<pid>.ask.json`, v0.5, 64 KiB).
 * Every failure is a value, never an exception.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { INITIAL_PID_NAMESPACE, type Liveness, probePid } from "../../src/protocol/liveness.ts";
import { readOwnPidNamespace, readPrivateFile, refusePrivate } from "../../src/protocol/state-dir.ts";
import { parsePiFileName, piFileName, piNamespaceAgrees } from "../../src/protocol/wire.ts";
import { isExpired, MAX_APPROVAL_BYTES, type PendingApproval, parseApproval, piApprovalName } from "./approval.ts";
import { MAX_PI_MESSAGE_BYTES, type PiMessage, parsePiMessage } from "./pi-message.ts";
import { MAX_REVIEW_BYTES, parseReview, piReviewName, type ReviewRun } from "./review.ts";
import { type AskFile, MAX_ASK_FILE_BYTES, parseAskFile } from "./show-ask.ts";

/** Is pi `pid` running, and is it ours? pi's own probe (src/protocol/liveness.ts) unless a test injects one. */
export type PidProbe = (pid: number) => Liveness;

// The one `kill(pid, 0)` probe, pi's: the editors ask the same question about pi that pi asks about them.
export { probePid };

export type PiMessageVerdict =
	| { kind: "message"; message: PiMessage }
	/** Missing, or replaced while being read: nothing to say (the next event brings the new file). */
	| { kind: "gone" }
	/** The pi that wrote it is no longer running (a leftover of a killed pi). */
	| { kind: "dead"; pid: number }
	| { kind: "problem"; problem: string };

export interface ReadOptions {
	/** Owner the file must have; default the process uid. */
	uid?: number;
	probe?: PidProbe;
	/** This editor's pid namespace (v0.5); default read once from /proc (null: unknown, counted the initial one). */
	ownNs?: string | null;
}

let ownNamespace: string | null | undefined;

/**
 * May this editor judge pi's pid by kill(pid, 0)? Only when pi's namespace (`pid_ns`, absent: the initial one) is
 * its own (PROTOCOL.md v0.5); an editor that cannot read its own counts itself in the initial namespace.
 */
export function judgesPiPid(piNs: string | undefined, ownNs: string | null | undefined = undefined): boolean {
	if (ownNs === undefined) {
		ownNamespace ??= readOwnPidNamespace();
		ownNs = ownNamespace;
	}
	return (piNs ?? INITIAL_PID_NAMESPACE) === (ownNs ?? INITIAL_PID_NAMESPACE);
}

function describe(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code} (${e.message})` : String(error);
}

type TrustedRead = { kind: "text"; text: string } | { kind: "gone" } | { kind: "problem"; problem: string };

/** `<dir>/<name>` if it passes the checks above (lstat first, then again on the opened file), at most `maxBytes`. */
function readTrusted(dir: string, name: string, uid: number | undefined, maxBytes: number): TrustedRead {
	const path = join(dir, name);
	let stats: Stats | undefined;
	try {
		stats = lstatSync(path, { throwIfNoEntry: false });
	} catch (error) {
		return { kind: "problem", problem: `cannot inspect: ${describe(error)}` };
	}
	if (!stats) return { kind: "gone" };
	const refused = refusePrivate(stats, uid, maxBytes);
	if (refused) return { kind: "problem", problem: refused };
	const read = readPrivateFile(path, stats, { maxBytes, refuse: (opened) => refusePrivate(opened, uid, maxBytes) });
	return read.kind === "problem" ? { kind: "problem", problem: read.message } : read;
}

/** Read and check `<dir>/<name>`; `name` must be `pi-<pid>.json` or (v0.5) `pi-<pid>-<ns>.json`. */
export function readPiMessage(dir: string, name: string, options: ReadOptions = {}): PiMessageVerdict {
	const parsedName = parsePiFileName(name);
	if (parsedName?.kind !== "message") return { kind: "problem", problem: "is not named pi-<pid>.json" };
	const pidFromName = parsedName.pid;
	const uid = options.uid ?? process.getuid?.();
	const read = readTrusted(dir, name, uid, MAX_PI_MESSAGE_BYTES);
	if (read.kind !== "text") return read;
	const parsed = parsePiMessage(read.text);
	if (!parsed.ok) return { kind: "problem", problem: `invalid message: ${parsed.problem}` };
	if (parsed.message.pid !== pidFromName) {
		return { kind: "problem", problem: `pid field ${parsed.message.pid} does not match the file name` };
	}
	if (!piNamespaceAgrees(parsedName, parsed.message.pid_ns)) {
		return { kind: "problem", problem: `pid_ns ${parsed.message.pid_ns ?? "(none)"} does not match the file name` };
	}
	// v0.5: a pi of another pid namespace cannot be checked from here (its pid names another process, or none).
	if (!judgesPiPid(parsed.message.pid_ns, options.ownNs)) return { kind: "message", message: parsed.message };
	const liveness = (options.probe ?? probePid)(pidFromName);
	if (liveness === "alive") return { kind: "message", message: parsed.message };
	if (liveness === "dead") return { kind: "dead", pid: pidFromName };
	if (liveness === "foreign") return { kind: "problem", problem: "its pid belongs to another user's process: refused" };
	return { kind: "problem", problem: `cannot tell whether its pi is running (${liveness.unknown}): ignored` };
}

export type PiReviewVerdict =
	| { kind: "review"; runs: ReviewRun[]; dropped: number }
	/** No change set (pi changed nothing yet, or is older than v0.4), or it was replaced while being read. */
	| { kind: "gone" }
	| { kind: "problem"; problem: string };

/**
 * Read and check pi `pid`'s change set, `<dir>/pi-<pid>.review.json`. The caller reads it only for a pi whose
 * message (already read, live) names this editor as connected (PROTOCOL.md "v0.4").
 */
export function readPiReview(
	dir: string,
	pid: number,
	options: Pick<ReadOptions, "uid"> = {},
	piNs?: string,
): PiReviewVerdict {
	// v0.5: a pi of another namespace names its change set `pi-<pid>-<ns>.review.json`.
	const name = piNs === undefined ? piReviewName(pid) : piFileName("review", pid, piNs);
	const read = readTrusted(dir, name, options.uid ?? process.getuid?.(), MAX_REVIEW_BYTES);
	if (read.kind !== "text") return read;
	const parsed = parseReview(read.text, pid);
	if (!parsed.ok) return { kind: "problem", problem: `invalid change set: ${parsed.problem}` };
	const parsedName = parsePiFileName(name);
	const fileNs: unknown = (JSON.parse(read.text) as { pid_ns?: unknown }).pid_ns;
	if (parsedName && !piNamespaceAgrees(parsedName, fileNs)) {
		return { kind: "problem", problem: `pid_ns ${String(fileNs ?? "(none)")} does not match the file name` };
	}
	return { kind: "review", runs: parsed.runs, dropped: parsed.dropped };
}

export type PiApprovalVerdict =
	/** A request of a live pi of ours that asks this editor and has not run out. */
	| { kind: "request"; request: PendingApproval; dropped: number }
	/** No request (pi waits on nothing, or no longer), or it was replaced while being read. */
	| { kind: "gone" }
	/** The pi is no longer running (a leftover of a killed pi): its request is not read. */
	| { kind: "dead" }
	/** A good request that asks another editor: not this editor's to answer. */
	| { kind: "elsewhere" }
	/** Its time ran out: pi no longer waits on it. */
	| { kind: "expired"; request: PendingApproval }
	| { kind: "problem"; problem: string };

export interface ApprovalReadOptions extends ReadOptions {
	/** This editor's pid: only a request naming it is this editor's. */
	ownPid: number;
	/** Seconds since the epoch. */
	now: number;
}

/**
 * Read and check pi `pid`'s request for approval, `<dir>/pi-<pid>.approval.json` (PROTOCOL.md "Approval"): the
 * pi is probed first (a dead or another user's pi's file is not read), then the file passes the checks above.
 */
export function readPiApproval(
	dir: string,
	pid: number,
	options: ApprovalReadOptions,
	piNs?: string,
): PiApprovalVerdict {
	// v0.5: a pi of another namespace (`pi-<pid>-<ns>.approval.json`) is not probed: its pid means nothing here.
	const liveness = judgesPiPid(piNs, options.ownNs) ? (options.probe ?? probePid)(pid) : "alive";
	if (liveness === "dead") return { kind: "dead" };
	if (liveness === "foreign") return { kind: "problem", problem: "its pid belongs to another user's process: refused" };
	if (liveness !== "alive") {
		return { kind: "problem", problem: `cannot tell whether its pi is running (${liveness.unknown}): ignored` };
	}
	const name = piNs === undefined ? piApprovalName(pid) : piFileName("approval", pid, piNs);
	const read = readTrusted(dir, name, options.uid ?? process.getuid?.(), MAX_APPROVAL_BYTES);
	if (read.kind !== "text") return read;
	const parsed = parseApproval(read.text, pid);
	if (!parsed.ok) return { kind: "problem", problem: `invalid request: ${parsed.problem}` };
	const parsedName = parsePiFileName(name);
	if (parsedName && !piNamespaceAgrees(parsedName, parsed.request.piNs)) {
		return { kind: "problem", problem: `pid_ns ${parsed.request.piNs ?? "(none)"} does not match the file name` };
	}
	if (parsed.request.editorPid !== options.ownPid) return { kind: "elsewhere" };
	if (isExpired(parsed.request, options.now)) return { kind: "expired", request: parsed.request };
	return { kind: "request", request: parsed.request, dropped: parsed.dropped };
}

export type PiAskVerdict =
	/** A request file of a live pi of ours that asks this editor. */
	| { kind: "ask"; file: AskFile }
	/** No request file (pi waits on nothing, or no longer), its pi is dead, or it asks another editor. */
	| { kind: "gone" }
	| { kind: "problem"; problem: string };

/**
 * Read and check pi `pid`'s show and ask requests, `<dir>/pi-<pid>[-<ns>].ask.json` (PROTOCOL.md v0.5): the pi is
 * probed first (a dead or another user's pi's file is not read), then the file passes the checks above, at most
 * MAX_ASK_FILE_BYTES; a file asking another editor is nothing to this one.
 */
export function readPiAsk(
	dir: string,
	pid: number,
	options: Omit<ApprovalReadOptions, "now">,
	piNs?: string,
): PiAskVerdict {
	const liveness = judgesPiPid(piNs, options.ownNs) ? (options.probe ?? probePid)(pid) : "alive";
	if (liveness === "dead") return { kind: "gone" };
	if (liveness === "foreign") return { kind: "problem", problem: "its pid belongs to another user's process: refused" };
	if (liveness !== "alive") {
		return { kind: "problem", problem: `cannot tell whether its pi is running (${liveness.unknown}): ignored` };
	}
	const name = piFileName("ask", pid, piNs);
	const read = readTrusted(dir, name, options.uid ?? process.getuid?.(), MAX_ASK_FILE_BYTES);
	if (read.kind !== "text") return read;
	const parsed = parseAskFile(read.text, pid);
	if (!parsed.ok) return { kind: "problem", problem: `invalid request: ${parsed.problem}` };
	const parsedName = parsePiFileName(name);
	if (parsedName && !piNamespaceAgrees(parsedName, parsed.file.piNs)) {
		return { kind: "problem", problem: `pid_ns ${parsed.file.piNs ?? "(none)"} does not match the file name` };
	}
	if (parsed.file.editorPid !== options.ownPid) return { kind: "gone" };
	return { kind: "ask", file: parsed.file };
}
