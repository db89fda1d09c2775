/**
 * pi's side of protocol v0.3, as data: the log of files pi's tools changed (with an increasing seq), the
 * message pi publishes for editors (`pi-<pid>.json`), and the note appended to a write/edit tool result
 * once the editor has answered. Pure: no I/O, no pi imports.
 */
import { formatEditorName, oneLine } from "./blocks.ts";
import { formatList, isCurrent, TOOL_DIAGNOSTICS_CAP } from "./diagnostics.ts";
import {
	type EditorState,
	type FileReport,
	MAX_PI_CHANGED,
	MAX_PI_LAST_TURN,
	type PiChange,
	type PiMessage,
} from "./protocol.ts";

/** How long pi waits, after a write/edit, for the editor's diagnostics of the new content. */
export const DIAGNOSTICS_WAIT_MS = 2000;

/** Tools whose input names the one file they wrote (pi's built-in `write` and `edit`). */
export const FILE_WRITING_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/** Files pi changed: every change gets the next seq; the files of the current run become `last_turn`. */
export class ChangeLog {
	seq = 0;
	changed: PiChange[] = [];
	lastTurn: string[] = [];
	readonly #run = new Set<string>();

	/** Record a change; returns its seq. */
	record(file: string, tool: string): number {
		this.seq += 1;
		this.changed.push({ file, seq: this.seq, tool });
		if (this.changed.length > MAX_PI_CHANGED) this.changed.splice(0, this.changed.length - MAX_PI_CHANGED);
		this.#run.delete(file);
		this.#run.add(file);
		return this.seq;
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
		changed: input.log.changed.map((c) => ({ ...c })),
		last_turn: [...input.log.lastTurn],
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
 * The editor's report on `file` answering change `seq` or a later one, of this pi (`piPid`) when the report
 * says whose message it answers.
 */
export function findReport(state: EditorState, file: string, seq: number, piPid?: number): FileReport | undefined {
	let found: FileReport | undefined;
	for (const report of state.files ?? []) {
		if (piPid !== undefined && report.pi_pid !== undefined && report.pi_pid !== piPid) continue;
		if (report.file === file && report.seq >= seq && (!found || report.seq >= found.seq)) found = report;
	}
	return found;
}

/** Is the wait over? Yes once the editor answered, and, when it reloaded with a checker attached, once current diagnostics are in. */
export function isSettled(report: FileReport | undefined): boolean {
	if (!report) return false;
	if (report.status !== "reloaded" || !report.diagnostics_expected) return true;
	return report.diagnostics !== null && isCurrent(report.diagnostics, report.version);
}

/**
 * What the model reads after the tool's own result, or null when there is nothing worth saying (the editor
 * does not have the file open, or reloaded it with no checker attached). Diagnostics older than the reloaded
 * version are never shown.
 */
export function formatToolNote(
	editor: Pick<EditorState, "app" | "product">,
	file: string,
	report: FileReport | undefined,
	waitedMs = DIAGNOSTICS_WAIT_MS,
): string | null {
	if (!report) return null;
	const name = formatEditorName(editor);
	const path = oneLine(file);
	if (report.status === "modified") {
		return `Note: ${path} is open in ${name} with unsaved changes. The editor kept the user's version and did not reload it; the user's buffer differs from the file on disk.`;
	}
	if (report.status !== "reloaded" || !report.diagnostics_expected) return null;
	const diagnostics = report.diagnostics;
	if (!diagnostics || !isCurrent(diagnostics, report.version)) {
		return `${name} reloaded ${path}; no diagnostics for the new content arrived within ${formatWait(waitedMs)}.`;
	}
	if (diagnostics.items.length === 0) return `${name} reloaded ${path}: no diagnostics for the new content.`;
	const lines = formatList(diagnostics, null, TOOL_DIAGNOSTICS_CAP, "errors first");
	return [`${name} reloaded ${path}. ${lines[0]}`, ...lines.slice(1)].join("\n");
}

function formatWait(ms: number): string {
	return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The absolute path pi's tools wrote for a `path` argument, resolved as pi resolves it (`@` prefix, `~`). */
export function resolveToolPath(path: string, cwd: string, home: string): string {
	let p = path.startsWith("@") ? path.slice(1) : path;
	if (p === "~") p = home;
	else if (p.startsWith("~/")) p = `${home}${p.slice(1)}`;
	return posixResolve(cwd, p);
}

/** path.posix.resolve without importing node:path into the pure core's browser-free surface. */
function posixResolve(base: string, p: string): string {
	const parts = (p.startsWith("/") ? p : `${base}/${p}`).split("/");
	const out: string[] = [];
	for (const part of parts) {
		if (part === "" || part === ".") continue;
		if (part === "..") out.pop();
		else out.push(part);
	}
	return `/${out.join("/")}`;
}
