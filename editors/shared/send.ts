/**
 * Protocol v0.5, send to pi, for the TypeScript clients (VS Code, Obsidian): the user hands the pi connected to
 * this editor the selection (or the line under the cursor), the diagnostic there, pi's hunk there or the whole
 * file, with typed words. What is sent (`sendItem`, pure), which pi (`pisNaming`, `SendDesk.pick`: the only pi
 * naming this editor, the one picked before, or the user's pick, asked once), the request written as
 * `<state dir>/<pid>.send.json` by the state file's rules (`writePrivateFile`: 0600, an exclusive temp file then
 * one rename, in a checked directory; removed on dispose), and pi's answer (`sent`) as one line. The Neovim
 * client's rules (editors/nvim/lua/pi-ide/send.lua); the wire is src/protocol/send.ts. Never throws.
 */

import { MAX_SEND_PROMPT_BYTES } from "../../src/protocol/limits.ts";
import type { SendItem, SendKind, SendMode } from "../../src/protocol/send.ts";
import { createStateDir, formatDirHealth, removePrivateFile, writePrivateFile } from "../../src/protocol/state-dir.ts";
import { editorSendFileName, oneLine } from "../../src/protocol/wire.ts";
import { type DiagnosticSeverity, SEVERITY_RANK } from "./diagnostics.ts";
import { type PiMessage, piKeyOf } from "./pi-message.ts";
import { clipSelectionLines, countLines, type HostPosition, type TextLines } from "./state.ts";

/** What the command points at: the selection or line (`default`), or one of the documented forms. */
export type SendForm = "default" | "diagnostic" | "hunk" | "file";

/** A diagnostic of the document, 0-based lines as the host has them. */
export interface SendDiagnostic {
	line: number;
	endLine: number;
	severity: DiagnosticSeverity;
	message: string;
}

export interface SendInput {
	form: SendForm;
	/** Absolute path of the document's file; undefined: not a file (nothing is sent). */
	file: string | undefined;
	lines: TextLines;
	/** 0-based line of the cursor. */
	cursor: number;
	/** The selected lines, 0-based inclusive, when there is a selection. */
	selection?: { first: number; last: number };
	/** `diagnostic`: the document's diagnostics. */
	diagnostics?: readonly SendDiagnostic[];
	/** `hunk`: pi's hunk under the cursor, 0-based inclusive, or undefined when there is none. */
	hunk?: { first: number; last: number };
}

export type SendItemResult = { ok: true; item: SendItem } | { ok: false; notice: string };

/** The one line told when nothing is sent, by why (the wording Neovim, Vim and Emacs use). */
export const SEND_NOTICES = {
	notFile: "not a file buffer: nothing sent",
	noDiagnostic: "no diagnostic under the cursor: nothing sent",
	noHunk: "no hunk of pi's under the cursor: nothing sent",
	noPi: "no pi is connected to this editor: nothing sent",
	notPicked: "no pi picked: nothing sent",
} as const;

/** What pi did with a send (its `sent.fate`), as the user is told. */
const FATES: Record<string, string> = {
	draft: "in pi's input as a draft",
	prompt: "sent to pi as a prompt",
	"follow-up": "queued for pi as a follow-up",
};

/**
 * The lines (0-based, inclusive) a selection from `anchor` to `head` covers, or undefined when it is empty; a
 * selection ending at the start of a line (whole lines selected) does not take that line.
 */
export function selectedLines(anchor: HostPosition, head: HostPosition): { first: number; last: number } | undefined {
	const before = anchor.line < head.line || (anchor.line === head.line && anchor.character <= head.character);
	const [start, end] = before ? [anchor, head] : [head, anchor];
	if (start.line === end.line && start.character === end.character) return undefined;
	return { first: start.line, last: end.character === 0 && end.line > start.line ? end.line - 1 : end.line };
}

/** `{ selection }` for a SendInput when there is one (exactOptionalPropertyTypes: no `selection: undefined`). */
export function withSelection(lines: { first: number; last: number } | undefined): Pick<SendInput, "selection"> {
	return lines === undefined ? {} : { selection: lines };
}

/** The item for `input`: what the command points at, its lines cut like the selection (256 KiB encoded). */
export function sendItem(input: SendInput): SendItemResult {
	if (input.file === undefined || !input.file.startsWith("/")) return { ok: false, notice: SEND_NOTICES.notFile };
	const last = Math.max(countLines(input.lines) - 1, 0);
	const clamp = (line: number) => Math.min(Math.max(Math.trunc(line), 0), last);
	let kind: SendKind;
	let first = clamp(input.cursor);
	let end = first;
	let message: string | null = null;
	switch (input.form) {
		case "file":
			kind = "file";
			first = 0;
			end = last;
			break;
		case "diagnostic": {
			const at = first;
			const found = [...(input.diagnostics ?? [])]
				.filter((d) => d.line <= at && at <= Math.max(d.line, d.endLine) && d.message.trim() !== "")
				.sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.line - b.line)[0];
			if (!found) return { ok: false, notice: SEND_NOTICES.noDiagnostic };
			kind = "diagnostic";
			first = clamp(found.line);
			end = Math.max(first, clamp(found.endLine));
			message = found.message;
			break;
		}
		case "hunk":
			if (!input.hunk) return { ok: false, notice: SEND_NOTICES.noHunk };
			kind = "hunk";
			first = clamp(input.hunk.first);
			end = Math.max(first, clamp(input.hunk.last));
			break;
		default:
			if (input.selection) {
				kind = "selection";
				first = clamp(Math.min(input.selection.first, input.selection.last));
				end = Math.max(first, clamp(Math.max(input.selection.first, input.selection.last)));
			} else kind = "line";
	}
	function* picked(): Generator<string> {
		for (let line = first; line <= end; line++) yield input.lines.text(line);
	}
	const clipped = clipSelectionLines(picked());
	return {
		ok: true,
		item: {
			kind,
			file: input.file,
			start_line: first + 1,
			end_line: end + 1,
			text: clipped.text,
			truncated: clipped.truncated,
			message,
		},
	};
}

/** The live pis whose message names `ownPid` as their editor, in a stable order (pid, then namespace). */
export function pisNaming(messages: Iterable<PiMessage>, ownPid: number): PiMessage[] {
	return [...messages]
		.filter((m) => m.editor_pid === ownPid)
		.sort((a, b) => a.pid - b.pid || (a.pid_ns ?? "").localeCompare(b.pid_ns ?? ""));
}

/** A pi as the user picks it: its pid, namespace and directory. */
export function describePi(message: PiMessage): string {
	return `pi ${message.pid}${message.pid_ns ? ` (${message.pid_ns})` : ""} in ${message.cwd}`;
}

/** `text` cut on a character boundary to at most `max` bytes of UTF-8. */
export function cutUtf8(text: string, max: number): string {
	if (Buffer.byteLength(text, "utf8") <= max) return text;
	let bytes = 0;
	let units = 0;
	for (const char of text) {
		bytes += Buffer.byteLength(char, "utf8");
		if (bytes > max) break;
		units += char.length;
	}
	return text.slice(0, units);
}

export interface SendDeskOptions {
	dir: string;
	/** The editor's pid: the state file's and the send file's. */
	pid: number;
	/** Seconds since the epoch. */
	now?(): number;
	uid?: number;
}

/** The last send, for a status line: what, to which pi, and what became of it. */
export interface LastSend {
	id: string;
	pi: number;
	kind: SendKind;
	file: string;
	fate: string | undefined;
}

export type SendWrite = { ok: true; id: string } | { ok: false; notice: string };

/**
 * One editor's sends: the pi picked when several name it (asked once, remembered while it still names the
 * editor), the ids sent and not answered yet, the last send.
 */
export class SendDesk {
	readonly #options: SendDeskOptions;
	#chosen: string | undefined;
	readonly #pending = new Set<string>();
	#count = 0;
	#last: LastSend | undefined;
	#written = false;

	constructor(options: SendDeskOptions) {
		this.#options = options;
	}

	get last(): LastSend | undefined {
		return this.#last;
	}

	/**
	 * The pi to send to among `candidates` (pisNaming): the only one, the one picked before while it is still
	 * among them, else `ask` (the user's pick, remembered); or the one line saying why none.
	 */
	async pick(
		candidates: readonly PiMessage[],
		ask: (choices: readonly PiMessage[]) => Promise<PiMessage | undefined>,
	): Promise<{ ok: true; pi: PiMessage } | { ok: false; notice: string }> {
		const [only, ...others] = candidates;
		if (only === undefined) return { ok: false, notice: SEND_NOTICES.noPi };
		if (others.length === 0) return { ok: true, pi: only };
		const chosen = candidates.find((m) => piKeyOf(m) === this.#chosen);
		if (chosen) return { ok: true, pi: chosen };
		const picked = await ask(candidates);
		if (!picked || !candidates.includes(picked)) return { ok: false, notice: SEND_NOTICES.notPicked };
		this.#chosen = piKeyOf(picked);
		return { ok: true, pi: picked };
	}

	/** Write `<pid>.send.json` for `pi`: `item` with `mode` and the typed `prompt` (cut to 16 KiB). */
	write(pi: PiMessage, item: SendItem, mode: SendMode, prompt: string): SendWrite {
		try {
			const { dir, pid } = this.#options;
			const uid = this.#options.uid ?? process.getuid?.();
			const health = createStateDir(dir, uid);
			if (!health.ok) return { ok: false, notice: `not sending: ${formatDirHealth(health)}` };
			const now = this.#options.now?.() ?? Date.now() / 1000;
			this.#count += 1;
			const id = `s${pid}-${Math.floor(now * 1000)}-${this.#count}`;
			const request = {
				protocol: "0.5",
				kind: "send",
				pid,
				pi_pid: pi.pid,
				...(pi.pid_ns === undefined ? {} : { pi_ns: pi.pid_ns }),
				id,
				timestamp: now,
				mode,
				prompt: cutUtf8(prompt, MAX_SEND_PROMPT_BYTES),
				item,
			};
			const result = writePrivateFile(dir, editorSendFileName(pid), JSON.stringify(request), uid);
			if (!result.ok) return { ok: false, notice: `not sending: ${result.error}` };
			this.#written = true;
			this.#pending.add(id);
			this.#last = { id, pi: pi.pid, kind: item.kind, file: item.file, fate: undefined };
			return { ok: true, id };
		} catch (error) {
			return { ok: false, notice: `send failed: ${error instanceof Error ? error.message : String(error)}` };
		}
	}

	/** If pi's `message` answers one of this editor's sends, the one line saying what became of it. */
	answered(message: PiMessage): string | undefined {
		const sent = message.sent;
		if (!sent || sent.editor_pid !== this.#options.pid || !this.#pending.has(sent.id)) return undefined;
		this.#pending.delete(sent.id);
		if (this.#last?.id === sent.id) this.#last.fate = sent.fate;
		const done = FATES[sent.fate];
		if (done !== undefined) return `${this.#last?.kind ?? "send"} ${done}`;
		if (sent.fate === "excluded") return "not sent: the file is excluded by pi's ignore rules";
		return oneLine(`pi refused the send: ${sent.reason ?? sent.fate}`);
	}

	/** The status line about the last send, or undefined before any. */
	summary(): string | undefined {
		const l = this.#last;
		return l && `last send: ${l.kind} of ${l.file} to pi ${l.pi}: ${l.fate ?? "no answer yet"}`;
	}

	/** Remove the send file this editor wrote (on exit, with the state file). */
	dispose(): void {
		if (!this.#written) return;
		this.#written = false;
		try {
			removePrivateFile(this.#options.dir, editorSendFileName(this.#options.pid), this.#options.uid);
		} catch {
			// exiting: nothing sensible is left to do
		}
	}
}
