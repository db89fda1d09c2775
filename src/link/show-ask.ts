/**
 * v0.5 show and ask, the decisions: pi's two tools (`ide_show`, `ide_open_files`) turn the model's call into a
 * request for the connected editor (src/protocol/show-ask.ts), and the editor's answer (or its silence) into the
 * tool's result, inert and capped. Pure: the I/O (the request file, the wait, the answers file) is ask-desk.ts.
 */
import { formatList, isCurrent } from "../context/diagnostics.ts";
import { oneLine } from "../protocol/inert.ts";
import { MAX_LINE_NUMBER, MAX_SHOW_NOTE_BYTES } from "../protocol/limits.ts";
import type {
	AskAnswer,
	AskMessage,
	AskRequest,
	ShowAnswer,
	ShowAskAnswer,
	ShowAskRequest,
	ShowRequest,
} from "../protocol/show-ask.ts";
import { isPisEntry } from "../protocol/wire.ts";
import { displayPath } from "./send-deliver.ts";

export const SHOW_TOOL = "ide_show";
export const ASK_TOOL = "ide_open_files";

/** What the model gives `ide_show`, checked. */
export interface ShowParams {
	path: string;
	line: number;
	endLine: number | null;
	note: string | null;
}

const isLine = (v: unknown): v is number =>
	Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_LINE_NUMBER;

/** The model's `ide_show` input, or why it is refused (pi's schema checks types; this checks the rest). */
export function parseShowParams(input: unknown): ShowParams | string {
	const o = input && typeof input === "object" ? (input as Record<string, unknown>) : {};
	const path = o["path"];
	if (typeof path !== "string" || path.trim() === "" || path.includes("\0")) return "path is not a file path";
	const line = o["line"];
	if (!isLine(line)) return "line is not a line number (1 or more)";
	const end = o["end_line"] ?? null;
	if (end !== null && (!isLine(end) || end < line)) return "end_line is not a line number at or after line";
	const rawNote = o["note"] ?? null;
	if (rawNote !== null && typeof rawNote !== "string") return "note is not text";
	return { path, line, endLine: end, note: rawNote === null || rawNote.trim() === "" ? null : capNote(rawNote) };
}

/** The note cut to MAX_SHOW_NOTE_BYTES of UTF-8 at a character boundary, on one line. */
export function capNote(note: string): string {
	const line = note.replace(/\s+/g, " ").trim();
	if (Buffer.byteLength(line, "utf8") <= MAX_SHOW_NOTE_BYTES) return line;
	let out = "";
	for (const ch of line) {
		if (Buffer.byteLength(`${out}${ch}…`, "utf8") > MAX_SHOW_NOTE_BYTES) break;
		out += ch;
	}
	return `${out}…`;
}

export function buildShow(id: string, editorFile: string, params: ShowParams, expires: number): ShowRequest {
	return {
		id,
		kind: "show",
		file: editorFile,
		line: params.line,
		end_line: params.endLine,
		note: params.note,
		expires,
	};
}

/** An ask for the diagnostics of `target`: a file (the editor's path), every open file, or none. */
export function buildAsk(id: string, target: string | "all" | "none", expires: number): AskRequest {
	if (target === "all" || target === "none") return { id, kind: "ask", diagnostics: target, file: null, expires };
	return { id, kind: "ask", diagnostics: "file", file: target, expires };
}

export function encodeAskMessage(input: {
	pid: number;
	pidNs: string | null;
	editorPid: number;
	now: number;
	requests: readonly ShowAskRequest[];
}): string {
	const message: AskMessage = {
		protocol: "0.5",
		kind: "pi-ask",
		pid: input.pid,
		...(input.pidNs ? { pid_ns: input.pidNs } : {}),
		editor_pid: input.editorPid,
		timestamp: input.now,
		requests: [...input.requests],
	};
	return JSON.stringify(message);
}

/** This pi's answer to request `id` among the editor's, if any (the newest, should it list two). */
export function findAnswer(
	answers: readonly ShowAskAnswer[],
	piPid: number,
	piNs: string | null,
	id: string,
): ShowAskAnswer | undefined {
	return answers.filter((a) => isPisEntry(a, piPid, piNs) && a.id === id).at(-1);
}

/** Why a call got no answer: no editor, an editor gone, pi's state dir refused, or silence for `waitedMs`. */
export type NoAnswer =
	| { kind: "no editor" }
	| { kind: "no answer"; editor: string; waitedMs: number }
	| { kind: "not written"; problem: string }
	| { kind: "wrong answer"; editor: string }
	| { kind: "aborted" };

export function describeNoAnswer(what: "show" | "ask", why: NoAnswer): string {
	const nothing = what === "show" ? "nothing was shown" : "pi cannot tell what is open";
	switch (why.kind) {
		case "no editor":
			return `No editor is connected to pi (the user can connect one with /ide): ${nothing}.`;
		case "no answer":
			return `${why.editor} did not answer within ${Math.round(why.waitedMs / 100) / 10} s (its pi-ide client may be older than protocol v0.5 show and ask, or busy): ${nothing}.`;
		case "not written":
			return `pi could not ask the editor (${oneLine(why.problem, 300)}): ${nothing}.`;
		case "wrong answer":
			return `${why.editor} answered with something else than was asked (a client bug): ${nothing}.`;
		case "aborted":
			return `The run was stopped before the editor answered: ${nothing}.`;
	}
}

const lines = (line: number, end: number | null) => (end === null || end === line ? `${line}` : `${line}-${end}`);

/** The tool's result for the editor's answer to a show of `piFile` (pi's own path). */
export function describeShow(
	answer: ShowAnswer,
	editor: string,
	piFile: string,
	line: number,
	end: number | null,
	cwd: string,
): string {
	const where = `${displayPath(piFile, cwd)}:${lines(line, end)}`;
	const list =
		answer.list === "location"
			? "location list"
			: answer.list === "next-error"
				? "list of places (the *pi-ide shown* buffer, next-error)"
				: answer.list === "places"
					? `list of places ("pi's places")`
					: "quickfix list";
	switch (answer.status) {
		case "listed":
			return `Shown in ${editor}: ${where} is in the user's ${list} with a one-line notice; the user's window and cursor stayed where they were (the user opens it when they choose).`;
		case "opened":
			return `Shown in ${editor}: ${where} was opened for the user (their "follow" setting is on) and is in the ${list}.`;
		case "refused":
			return `${editor} refused to show ${where}${answer.reason ? `: ${oneLine(answer.reason, 300)}` : ""}.`;
	}
}

/** Most diagnostics listed per file in an ask's result. */
export const ASK_DIAGNOSTICS_PER_FILE = 20;
/** The longest ask result, in characters. */
export const MAX_ASK_RESULT_CHARS = 32 * 1024;

export interface AskWords {
	editor: string;
	cwd: string;
	/** The file the ask named (pi's path), or null: every open file's diagnostics. */
	named: string | null;
	/** An editor's path as pi knows it. */
	toPi: (file: string) => string;
	excluded: (file: string) => boolean;
}

/**
 * The tool's result for the editor's answer to an ask: each open file buffer (relative to pi's directory, inert),
 * `*` when it has unsaved changes, the active one marked; the files the ignore rules exclude only counted, never
 * named, and nothing of them shown; then the diagnostics of the named (or every) file, dated against the buffer's
 * version: older ones are counted, never listed. Capped at MAX_ASK_RESULT_CHARS.
 */
export function describeAsk(answer: AskAnswer, words: AskWords): string {
	const shown: string[] = [];
	const diagnostics: string[] = [];
	let excluded = 0;
	for (const b of answer.buffers) {
		const file = words.toPi(b.file);
		if (safeExcluded(words, file)) {
			excluded++;
			continue;
		}
		const name = displayPath(file, words.cwd);
		shown.push(`- ${name}${b.modified ? " *" : ""}${b.active ? " (active)" : ""}`);
		if (b.diagnostics === undefined) continue;
		diagnostics.push(...diagnosticLines(name, b.version, b.diagnostics));
	}
	const unlisted = answer.buffers_total - answer.buffers.length;
	const head = `Open file buffers in ${words.editor} (${answer.buffers_total}; * = unsaved changes, the file on disk differs):`;
	const out = [head, ...shown];
	if (shown.length === 0) out.push("- none");
	if (excluded > 0)
		out.push(`- ${excluded} more excluded by pi-ide-context's ignore rules (not named, nothing of them shown)`);
	if (unlisted > 0) out.push(`- ${unlisted} more the editor did not list (its cap)`);
	if (words.named !== null) {
		const name = displayPath(words.named, words.cwd);
		if (safeExcluded(words, words.named))
			out.push("", "The file asked about is excluded by pi-ide-context's ignore rules: nothing of it is shown.");
		else if (!answer.buffers.some((b) => words.toPi(b.file) === words.named))
			out.push("", `${name} is not open in ${words.editor}: the editor has no diagnostics for it.`);
	}
	if (diagnostics.length > 0) out.push("", ...diagnostics);
	const text = out.join("\n");
	return text.length <= MAX_ASK_RESULT_CHARS
		? text
		: `${text.slice(0, MAX_ASK_RESULT_CHARS - 40)}\n… (cut: the answer was too long)`;
}

function safeExcluded(words: AskWords, file: string): boolean {
	try {
		return words.excluded(file);
	} catch {
		return true;
	}
}

function diagnosticLines(name: string, version: number, d: AskAnswer["buffers"][number]["diagnostics"]): string[] {
	if (d === null || d === undefined)
		return [`${name}: no checker has reported diagnostics for it (unknown, not clean).`];
	if (!isCurrent(d, version))
		return [
			`${name}: ${d.total} diagnostics reported for an earlier version of the buffer (${d.version}, now ${version}); not shown, they may no longer apply.`,
		];
	if (d.total === 0 && d.items.length === 0) return [`${name}: no diagnostics (current for version ${version}).`];
	const [header, ...rest] = formatList(d, null, ASK_DIAGNOSTICS_PER_FILE, "errors first, then by line");
	return [`${name}: ${header ?? ""}`, ...rest];
}

export type { AskAnswer, ShowAnswer };
