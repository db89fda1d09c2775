/**
 * Protocol v0.5 show and ask in a TypeScript editor (PROTOCOL.md, "v0.5: the model shows a place and asks what is
 * open"), pure but for the one write of the answers file: the parser of `pi-<pid>[-<ns>].ask.json` (untrusted JSON
 * in, its requests or the one reason the file is refused out; a malformed request is left out, never the others),
 * the ask's answer from the host's open documents (the active one first, the caps of src/protocol/limits.ts), the
 * show's inert notice, and `AskResponder`, which answers each request once (by pi and id) and keeps the newest
 * MAX_ANSWERS answers in `<editor pid>.answers.json`, written under the state-file rules (0600, atomic). The host
 * shows a place in its own list and reads its documents; the file-system checks before parsing are pi-reader.ts's.
 */

import {
	MAX_ANSWERS,
	MAX_ANSWERS_FILE_BYTES,
	MAX_ASK_BUFFERS,
	MAX_ASK_DIAGNOSTIC_ITEMS,
	MAX_ASK_FILE_BYTES,
	MAX_ASK_REQUESTS,
	MAX_DIAGNOSTIC_ITEMS,
	MAX_ID_BYTES,
	MAX_SHOW_NOTE_BYTES,
} from "../../src/protocol/limits.ts";
import { removePrivateFile, writePrivateFile } from "../../src/protocol/state-dir.ts";
import {
	type AskAnswer,
	type AskBuffer,
	type AskRequest,
	editorAnswersFileName,
	PID_NAMESPACE_PATTERN,
	piIdentityKey,
	type ShowAnswer,
	type ShowAskAnswer,
	type ShowAskRequest,
	type ShowRequest,
} from "../../src/protocol/wire.ts";
import type { DiagnosticsReport } from "./diagnostics.ts";
import { isObject, isPid, parsePiObject } from "./pi-message.ts";
import { utf8Length } from "./utf16.ts";

export type { AskAnswer, AskBuffer, AskRequest, ShowAnswer, ShowAskAnswer, ShowAskRequest, ShowRequest };
// The request file's cap (src/protocol/limits.ts): a larger file is refused unread.
export { MAX_ASK_FILE_BYTES };

const MAX_LINE = 2 ** 31 - 1;
const isLine = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_LINE;
const isPath = (v: unknown): v is string =>
	typeof v === "string" && v.startsWith("/") && v.length <= 4095 && !v.includes("\0");

/** pi's request file as this editor keeps it: the editor asked, pi's namespace, the good requests. */
export interface AskFile {
	editorPid: number;
	/** v0.5: pi's `pid_ns` as its file said (echoed as `pi_ns`); none: the initial namespace. */
	piNs?: string;
	requests: ShowAskRequest[];
	/** The first malformed request's problem (left out, the others kept), if any. */
	problem?: string;
}

export type ParsedAskFile = { ok: true; file: AskFile } | { ok: false; problem: string };

/** One request, or why it is malformed. */
function parseRequest(r: unknown): ShowAskRequest | string {
	if (!isObject(r)) return "a request is not an object";
	const { id, kind, expires } = r;
	if (typeof id !== "string" || id.length === 0 || utf8Length(id) > MAX_ID_BYTES) {
		return `a request's id is not 1 to ${MAX_ID_BYTES} bytes`;
	}
	if (typeof expires !== "number" || !Number.isFinite(expires)) return "a request has no expires";
	if (kind === "show") {
		const { file, line } = r;
		const end = r["end_line"] ?? null;
		const note = r["note"] ?? null;
		if (!isPath(file) || !isLine(line)) return "a show has no absolute file and line";
		if (end !== null && (!isLine(end) || end < line)) return "a show's end_line is not a line at or after its line";
		if (note !== null && (typeof note !== "string" || utf8Length(note) > MAX_SHOW_NOTE_BYTES)) {
			return `a show's note is not text of at most ${MAX_SHOW_NOTE_BYTES} bytes`;
		}
		return { id, kind, file, line, end_line: end, note, expires };
	}
	if (kind === "ask") {
		const { diagnostics, file } = r;
		if (diagnostics !== "file" && diagnostics !== "all" && diagnostics !== "none") {
			return "an ask's diagnostics is not file, all or none";
		}
		if (diagnostics === "file" && !isPath(file)) return "an ask for a file's diagnostics names no absolute file";
		return { id, kind, diagnostics, file: diagnostics === "file" ? (file as string) : null, expires };
	}
	return "a request's kind is not show or ask";
}

/** Parse the text of pi `pid`'s request file (the name's pid). Never throws. */
export function parseAskFile(text: string, pid: number): ParsedAskFile {
	const head = parsePiObject(text, "pi-ask", pid);
	if (!head.ok) return head;
	const raw = head.raw;
	const editorPid = raw["editor_pid"];
	if (!isPid(editorPid)) return { ok: false, problem: "editor_pid: not a pid" };
	const piNs = raw["pid_ns"];
	if (piNs !== undefined && !(typeof piNs === "string" && PID_NAMESPACE_PATTERN.test(piNs))) {
		return { ok: false, problem: "pid_ns: not a pid namespace (pid:[<digits>])" };
	}
	const list = raw["requests"];
	if (!Array.isArray(list) || list.length > MAX_ASK_REQUESTS) {
		return { ok: false, problem: `requests: not a list of at most ${MAX_ASK_REQUESTS}` };
	}
	const requests: ShowAskRequest[] = [];
	let problem: string | undefined;
	for (const each of list) {
		const request = parseRequest(each);
		if (typeof request === "string") problem ??= request;
		else requests.push(request);
	}
	return {
		ok: true,
		file: {
			editorPid,
			...(piNs === undefined ? {} : { piNs }),
			requests,
			...(problem === undefined ? {} : { problem }),
		},
	};
}

/** The model's note as one line of inert text: control characters (line breaks, escapes) become spaces. */
export function inertNote(note: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
	return note.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
}

/** The show's one notice: "pi shows src/b.ts:2-3: look here" (`shown`: the path as the user knows it). */
export function describeShow(request: Pick<ShowRequest, "line" | "end_line" | "note">, shown: string): string {
	const lines =
		request.end_line !== null && request.end_line !== request.line
			? `${request.line}-${request.end_line}`
			: `${request.line}`;
	const note = request.note === null ? "" : inertNote(request.note);
	return `pi shows ${shown}:${lines}${note === "" ? "" : `: ${note}`}`;
}

/** An open document as the host knows it, for an ask's answer. */
export interface OpenDocument {
	/** Absolute path. */
	file: string;
	modified: boolean;
	version: number;
	lines_total: number;
	active: boolean;
	/** Is this the document of `file` (the ask's, as pi names it: by path, or by real path)? */
	is(file: string): boolean;
	/** Its diagnostics dated with the version they were computed for, at most `maxItems`; null: none reported. */
	diagnostics(maxItems: number): DiagnosticsReport | null;
}

/**
 * The answer to `request` (without its head) from the open file documents: the active one first, at most
 * MAX_ASK_BUFFERS; the named file's diagnostics (or every one's), at most MAX_DIAGNOSTIC_ITEMS each and
 * MAX_ASK_DIAGNOSTIC_ITEMS in all (`total` still counts them all).
 */
export function answerAsk(
	request: AskRequest,
	documents: readonly OpenDocument[],
): Pick<AskAnswer, "kind" | "buffers" | "buffers_total"> {
	const ordered = [...documents.filter((d) => d.active), ...documents.filter((d) => !d.active)];
	let room = MAX_ASK_DIAGNOSTIC_ITEMS;
	const buffers = ordered.slice(0, MAX_ASK_BUFFERS).map((d): AskBuffer => {
		const buffer: AskBuffer = {
			file: d.file,
			modified: d.modified,
			version: d.version,
			lines_total: d.lines_total,
			active: d.active,
		};
		const named = request.diagnostics === "all" || (request.diagnostics === "file" && d.is(request.file ?? ""));
		if (!named) return buffer;
		const report = d.diagnostics(Math.min(room, MAX_DIAGNOSTIC_ITEMS));
		if (report !== null) room -= report.items.length;
		return { ...buffer, diagnostics: report };
	});
	return { kind: "ask", buffers, buffers_total: ordered.length };
}

/** What the host does with a request: a show's outcome, or the open documents for an ask. */
export interface ShowAskHost {
	/** Put the place in the editor's list (and open it, with the user's follow setting); tell the user once. */
	show(request: ShowRequest): Pick<ShowAnswer, "status" | "list" | "reason">;
	/** The open file documents now. */
	documents(): OpenDocument[];
}

/** How many answered requests are remembered (each is answered once). */
const MAX_DONE = 64;

/**
 * The answers of one editor (`pid`): each request of a live pi naming this editor answered once, by pi and id,
 * the newest MAX_ANSWERS kept in `<dir>/<pid>.answers.json`.
 */
export class AskResponder {
	readonly #dir: string;
	readonly #pid: number;
	readonly #uid: number | undefined;
	#answers: ShowAskAnswer[] = [];
	readonly #done: string[] = [];
	#wrote = false;

	constructor(dir: string, pid: number, uid: number | undefined = process.getuid?.()) {
		this.#dir = dir;
		this.#pid = pid;
		this.#uid = uid;
	}

	get answers(): readonly ShowAskAnswer[] {
		return this.#answers;
	}

	/**
	 * Answer the new, unexpired requests in pi `piPid`'s file (read and checked: a live pi of ours, naming this
	 * editor). Returns why the answers could not be written, if they could not. A host failure on one request
	 * answers it refused (a show) or empty (an ask), never throws.
	 */
	receive(piPid: number, file: AskFile, host: ShowAskHost, now: number): string | undefined {
		const pi = piIdentityKey(piPid, file.piNs);
		let answered = false;
		for (const request of file.requests) {
			const key = `${pi}:${request.id}`;
			if (this.#done.includes(key) || request.expires < now) continue;
			this.#done.push(key);
			if (this.#done.length > MAX_DONE) this.#done.shift();
			const head = { pi_pid: piPid, ...(file.piNs === undefined ? {} : { pi_ns: file.piNs }), id: request.id };
			this.#answers.push({ ...head, ...answerOf(request, host) } as ShowAskAnswer);
			answered = true;
		}
		if (!answered) return undefined;
		this.#answers = this.#answers.slice(-MAX_ANSWERS);
		return this.#write(now);
	}

	/** Remove the answers file this editor wrote (a clean exit). */
	dispose(): void {
		if (this.#wrote) removePrivateFile(this.#dir, editorAnswersFileName(this.#pid), this.#uid);
		this.#wrote = false;
	}

	#write(now: number): string | undefined {
		for (;;) {
			const text = JSON.stringify({
				protocol: "0.5",
				kind: "editor-answers",
				pid: this.#pid,
				timestamp: now,
				answers: this.#answers,
			});
			if (Buffer.byteLength(text, "utf8") <= MAX_ANSWERS_FILE_BYTES) {
				const result = writePrivateFile(this.#dir, editorAnswersFileName(this.#pid), text, this.#uid);
				if (!result.ok) return result.error;
				this.#wrote = true;
				return undefined;
			}
			if (this.#answers.length === 0) return "the answers would not fit in their file";
			this.#answers.shift();
		}
	}
}

function answerOf(request: ShowAskRequest, host: ShowAskHost): object {
	try {
		if (request.kind === "show") return { kind: "show", ...host.show(request) };
		return answerAsk(request, host.documents());
	} catch (error) {
		const why = error instanceof Error ? error.message : String(error);
		return request.kind === "show"
			? { kind: "show", status: "refused", list: null, reason: `the editor failed: ${why}`.slice(0, 200) }
			: { kind: "ask", buffers: [], buffers_total: 0 };
	}
}
