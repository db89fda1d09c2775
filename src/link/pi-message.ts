/**
 * pi's side of protocol v0.3, as data: the log of files pi's tools changed (with an increasing seq), the
 * message pi publishes for editors (`pi-<pid>.json`), and the note appended to a write/edit tool result
 * once the editor has answered. Pure: no I/O, no pi imports.
 */
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { fenceFor } from "../context/blocks.ts";
import { formatList, isClean, isCurrent, TOOL_DIAGNOSTICS_CAP } from "../context/diagnostics.ts";
import { formatEditorName, inert, oneLine } from "../protocol/inert.ts";
import { MAX_PI_MERGE_BYTES } from "../protocol/limits.ts";
import {
	type EditorState,
	type FileReport,
	MAX_PI_CHANGED,
	MAX_PI_LAST_TURN,
	type PiChange,
	type PiMessage,
} from "../protocol/protocol.ts";
import { isPisEntry } from "../protocol/wire.ts";

/**
 * How long pi waits, after a write/edit, for the editor's report at all. An idle editor answers in ~20 ms
 * (bench/loop.ts); the cap is generous because CI runs four suites at once on two cores, and it is short so
 * that a suspended (Ctrl-Z) or busy editor costs the model one second, not two.
 */
export const ANSWER_WAIT_MS = 1000;
/** How long pi waits, from the same start, for diagnostics of the new content once the editor reloaded with a checker. */
export const DIAGNOSTICS_WAIT_MS = 2000;
/**
 * An editor still working through pi's changes when the answer cap comes (it answered another of this pi's
 * changes during the wait: busy, not suspended) gets another `answerMs`, and again while it keeps answering, up
 * to this in all from the end of the tool. pi writing 40 open files at once on a loaded machine needs it.
 */
export const ANSWER_WAIT_MAX_MS = 5000;
/** The answer cap grows by this for each other change of pi's the editor has to answer at the same time. */
export const ANSWER_WAIT_PER_CHANGE_MS = 50;

/** The two stages of the wait after a write/edit, in milliseconds from the end of the tool. */
export interface WaitCaps {
	/** For the editor's report on the file. */
	answerMs: number;
	/** The answer wait extended while the editor keeps answering this pi (ANSWER_WAIT_MAX_MS); none when left out. */
	answerMaxMs?: number;
	/** More per other change the editor has to answer at once (ANSWER_WAIT_PER_CHANGE_MS), within answerMaxMs. */
	answerPerChangeMs?: number;
	/** For current diagnostics, once the report says `reloaded` with `diagnostics_expected`. */
	diagnosticsMs: number;
}

/** The wait's caps for an answer cap of `answerMs` (the `answerWaitMs` setting): the others grow with it. */
export function waitCapsFor(answerMs: number): WaitCaps {
	const scale = answerMs / ANSWER_WAIT_MS;
	return {
		answerMs,
		answerMaxMs: Math.round(ANSWER_WAIT_MAX_MS * scale),
		answerPerChangeMs: Math.round(ANSWER_WAIT_PER_CHANGE_MS * scale),
		diagnosticsMs: Math.round(DIAGNOSTICS_WAIT_MS * scale),
	};
}

export const WAIT_CAPS: WaitCaps = {
	answerMs: ANSWER_WAIT_MS,
	answerMaxMs: ANSWER_WAIT_MAX_MS,
	answerPerChangeMs: ANSWER_WAIT_PER_CHANGE_MS,
	diagnosticsMs: DIAGNOSTICS_WAIT_MS,
};

/** How a wait for the editor's answer ended. */
export type WaitEnd = "settled" | "no answer" | "no diagnostics" | "aborted";

/** Tools whose input names the one file they wrote (pi's built-in `write` and `edit`). */
export const FILE_WRITING_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/**
 * The last seq handed out. Editors remember, per pi pid, the highest seq they handled, and pi accepts a report
 * answering "this seq or later": so the seqs of one pi process must only grow, across all the sessions it runs
 * (every session_start builds a new ChangeLog). The shell shares one counter per process (editor-link.ts).
 */
export interface SeqCounter {
	last: number;
}

/** Files pi changed: every change gets the next seq; the files of the current run become `last_turn`. */
export class ChangeLog {
	changed: PiChange[] = [];
	lastTurn: string[] = [];
	readonly #run = new Set<string>();
	readonly #counter: SeqCounter;
	/** Each file's latest seq (a change's `merge.prev_seq`: the editor merges only a chain it has whole). */
	readonly #lastSeq = new Map<string, number>();

	/** `counter`: where seqs come from (default: a new one, starting at 1). */
	constructor(counter: SeqCounter = { last: 0 }) {
		this.#counter = counter;
	}

	/** The newest seq of this pi process (the message's `seq`): never lower than a previous session's. */
	get seq(): number {
		return this.#counter.last;
	}

	/** Record a change (with what an editor needs to merge it into an unsaved buffer, when known); returns its seq. */
	record(file: string, tool: string, merge?: Omit<ChangeMerge, "prev_seq">): number {
		this.#counter.last += 1;
		const seq = this.#counter.last;
		const prev = this.#lastSeq.get(file);
		this.#lastSeq.set(file, seq);
		const entry: PiChange = { file, seq, tool };
		if (merge) entry.merge = { ...merge, ...(prev === undefined ? {} : { prev_seq: prev }) };
		this.changed.push(entry);
		if (this.changed.length > MAX_PI_CHANGED) this.changed.splice(0, this.changed.length - MAX_PI_CHANGED);
		this.#run.delete(file);
		this.#run.add(file);
		return seq;
	}

	/** A new prompt's run begins: its changes will make the next `last_turn`. */
	startRun(): void {
		this.#run.clear();
	}

	/** A turn ended: `last_turn` = the files changed since the run began. Returns true when it changed. */
	endTurn(): boolean {
		const next = [...this.#run].slice(-MAX_PI_LAST_TURN);
		const same = next.length === this.lastTurn.length && next.every((f, i) => f === this.lastTurn[i]);
		this.lastTurn = next;
		return !same;
	}
}

export interface PiMessageInput {
	pid: number;
	cwd: string;
	/** Unix seconds. */
	now: number;
	editorPid: number | null;
	log: ChangeLog;
	/** pi's pid namespace (v0.5 `pid_ns`); null: unknown, not written. */
	pidNamespace?: string | null;
	/** v0.5: the latest send's fate, or null. */
	sent?: PiMessage["sent"] | null;
}

/** A change's `merge` field (issue 26). */
export type ChangeMerge = NonNullable<PiChange["merge"]>;

/**
 * Copies of `changed` whose `merge` fields take at most `maxBytes` in all once JSON-encoded: the newest keep
 * theirs; from the first that would pass it, that change and every older one go without (an editor reports those
 * `modified`, as before: it merges a file's changes only as a whole chain).
 */
export function capMerges(changed: readonly PiChange[], maxBytes = MAX_PI_MERGE_BYTES): PiChange[] {
	let used = 0;
	let full = false;
	const out: PiChange[] = [];
	for (let i = changed.length - 1; i >= 0; i--) {
		const { merge, ...rest } = changed[i] as PiChange;
		if (merge && !full) {
			used += Buffer.byteLength(JSON.stringify(merge));
			full = used > maxBytes;
		}
		out.unshift(merge && !full ? { ...rest, merge } : rest);
	}
	return out;
}

export function buildPiMessage(input: PiMessageInput): PiMessage {
	return {
		protocol: "0.3",
		kind: "pi",
		pid: input.pid,
		cwd: input.cwd,
		timestamp: input.now,
		editor_pid: input.editorPid,
		seq: input.log.seq,
		changed: capMerges(input.log.changed),
		last_turn: [...input.log.lastTurn],
		...(input.pidNamespace ? { pid_ns: input.pidNamespace } : {}),
		...(input.sent ? { sent: { ...input.sent } } : {}),
	};
}

/** JSON text without the timestamp (to skip writes that change nothing) and the full text. */
export function encodePiMessage(message: PiMessage): { content: string; text: string } {
	const { timestamp, ...rest } = message;
	const content = JSON.stringify(rest);
	return { content, text: JSON.stringify(message) };
}

/** The editor speaks v0.3, so it answers pi's messages with `files` reports. */
export function speaksV03(state: EditorState): boolean {
	return typeof state.protocol === "string" && /^0\.(?:[3-9]|\d{2,})/.test(state.protocol);
}

/**
 * The editor's report on `file` answering change `seq` or a later one, of this pi (`piPid`, and v0.5 its
 * namespace `piNs`, the `pid_ns` pi writes) when the report says whose message it answers (wire.ts isPisEntry).
 */
export function findReport(
	state: EditorState,
	file: string,
	seq: number,
	piPid?: number,
	piNs?: string | null,
): FileReport | undefined {
	let found: FileReport | undefined;
	for (const report of state.files ?? []) {
		if (piPid !== undefined && report.pi_pid !== undefined && !isPisEntry(report, piPid, piNs)) continue;
		if (report.file === file && report.seq >= seq && (!found || report.seq >= found.seq)) found = report;
	}
	return found;
}

/**
 * The newest of this pi's changes the editor has answered: the highest `seq` among its reports for this pi (0
 * when none). A wait sees the editor at work on pi's changes when it grows.
 */
export function newestAnswered(state: EditorState, piPid?: number, piNs?: string | null): number {
	let newest = 0;
	for (const report of state.files ?? []) {
		if (piPid !== undefined && report.pi_pid !== undefined && !isPisEntry(report, piPid, piNs)) continue;
		if (report.seq > newest) newest = report.seq;
	}
	return newest;
}

/** Is the wait over? Yes once the editor answered, and, when it reloaded with a checker attached, once current diagnostics are in. */
export function isSettled(report: FileReport | undefined): boolean {
	if (!report) return false;
	if (report.status !== "reloaded" || !report.diagnostics_expected) return true;
	return report.diagnostics !== null && isCurrent(report.diagnostics, report.version);
}

/**
 * What the model reads after the tool's own result, or null when there is nothing worth saying (the editor
 * does not have the file open, or reloaded it with no checker attached, or the wait was aborted before any
 * answer). Diagnostics older than the reloaded version are never shown.
 */
export function formatToolNote(
	editor: Pick<EditorState, "app" | "product">,
	file: string,
	outcome: { report: FileReport | undefined; ended: WaitEnd; waitedMs?: number },
	caps: WaitCaps = WAIT_CAPS,
): string | null {
	const name = formatEditorName(editor);
	const path = oneLine(file);
	const report = outcome.report;
	if (!report) {
		return outcome.ended === "no answer"
			? `${name} did not answer within ${formatWait(answerWaited(outcome.waitedMs, caps))} (suspended or busy?): it may still show the old content of ${path}.`
			: null;
	}
	if (report.status === "merged" || report.status === "conflict") return formatMergeNote(name, path, report);
	if (report.status === "modified") {
		return `Note: ${path} is open in ${name} with unsaved changes. The editor kept the user's version and did not reload it; the user's buffer differs from the file on disk.`;
	}
	if (report.status !== "reloaded" || !report.diagnostics_expected) return null;
	const diagnostics = report.diagnostics;
	if (!diagnostics || !isCurrent(diagnostics, report.version)) {
		return `${name} reloaded ${path}; no diagnostics for the new content arrived within ${formatWait(caps.diagnosticsMs)}.`;
	}
	if (isClean(diagnostics)) return `${name} reloaded ${path}: no diagnostics for the new content.`;
	const lines = formatList(diagnostics, null, TOOL_DIAGNOSTICS_CAP, "errors first");
	return [`${name} reloaded ${path}. ${lines[0]}`, ...lines.slice(1)].join("\n");
}

/** "line N" or "lines N-M". */
function formatLines(line: number, lines: number): string {
	return lines <= 1 ? `line ${line}` : `lines ${line}-${line + lines - 1}`;
}

/**
 * Issue 26: the note for a change the editor merged into the user's unsaved buffer, or merged in part: each
 * conflict names the buffer's lines and quotes the user's unsaved text there (inert, fenced).
 */
export function formatMergeNote(name: string, path: string, report: FileReport): string {
	const unsaved = `${path} is open in ${name} with unsaved changes`;
	const merge = report.merge;
	if (report.status === "merged" || !merge || merge.conflicts.length === 0) {
		return `Note: ${unsaved}; ${name} merged this change into the editor's unsaved buffer, beside the user's unsaved edits (not saved: the file on disk has exactly what the tool wrote).`;
	}
	const merged = merge.merged;
	const parts = [
		`Note: ${unsaved}. Conflict: ${merge.hunks - merged} of this change's ${merge.hunks} hunks touch lines the user changed and has not saved; the editor's buffer keeps the user's text there${merged > 0 ? `, and the other ${merged} were merged into the unsaved buffer` : ""}. The file on disk has exactly what the tool wrote. The user decides which version to keep: do not overwrite the user's lines without asking.`,
	];
	for (const c of merge.conflicts) {
		const body = inert(c.text.join("\n"), { lines: "keep" });
		const fence = fenceFor(body);
		const cut = c.text.length < c.lines ? ` (first ${c.text.length} of ${c.lines} lines)` : "";
		parts.push(
			c.lines === 0
				? `- at ${formatLines(c.line, 1)} of the buffer: the user deleted the lines there.`
				: `- ${formatLines(c.line, c.lines)} of the user's unsaved buffer${cut}:\n${fence}\n${body}\n${fence}`,
		);
	}
	return parts.join("\n");
}

/** How long pi waited for an answer that never came: the cap, or the whole second it was extended to. */
function answerWaited(waitedMs: number | undefined, caps: WaitCaps): number {
	if (waitedMs === undefined || waitedMs < caps.answerMs + 500) return caps.answerMs;
	return Math.round(waitedMs / 1000) * 1000;
}

function formatWait(ms: number): string {
	return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The spaces pi's tools read as a plain space in a path (pi's utils/paths.js UNICODE_SPACES). */
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/**
 * The absolute path pi's `write` and `edit` tools wrote for a `path` argument, or null when pi could not
 * have used it. Exactly pi's rule (`resolveToCwd` in pi's core/tools/path-utils.js, over `normalizePath` and
 * `resolvePath` in utils/paths.js), in its order: unicode spaces become plain spaces, then a leading `@` goes,
 * then `~` and `~/` expand to the home directory, then a `file://` URL becomes its path, then the result is
 * resolved against the working directory (which gets the same `~` and `file://` treatment). POSIX only, as
 * the state directory is.
 */
export function resolveToolPath(path: string, cwd: string, home: string): string | null {
	try {
		const normalized = normalizeToolPath(path.replace(UNICODE_SPACES, " ").replace(/^@/, ""), home);
		return posix.resolve(normalizeToolPath(cwd, home), normalized);
	} catch {
		// A file URL pi would refuse too (a host, an encoded slash): its tool failed, nothing was written.
		return null;
	}
}

/** pi's `normalizePath` after its optional steps: `~` expansion, then a `file://` URL to its path. */
function normalizeToolPath(p: string, home: string): string {
	if (p === "~") return home;
	if (p.startsWith("~/")) return posix.join(home, p.slice(2));
	if (/^file:\/\//.test(p)) return fileURLToPath(p);
	return p;
}
