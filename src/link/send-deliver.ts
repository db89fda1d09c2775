/**
 * v0.5 send to pi, the decisions: whether pi takes an editor's send (src/protocol/send.ts parsed it), and the
 * text it puts into pi's input or sends. Pure. The I/O (reading the file, pi's input, pi's message) is
 * send-desk.ts.
 */
import { relative } from "node:path";
import { capText, fenceFor, fenceLanguage } from "../context/blocks.ts";
import { languageOfFile } from "../context/languages.ts";
import { inert, oneLine } from "../protocol/inert.ts";
import { SEND_MAX_AGE_SECONDS } from "../protocol/limits.ts";
import type { SendRequest } from "../protocol/send.ts";
import { isPisEntry } from "../protocol/wire.ts";

/**
 * What became of a send, as pi's message says it (`sent.fate`): put into pi's input as a draft, sent as a prompt,
 * queued as a follow-up of the run under way, or refused: the file is excluded by the ignore rules (nothing
 * reached the model), or the send was refused for `reason` (not from the editor pi is connected to, stale).
 */
export type SendFate = "draft" | "prompt" | "follow-up" | "excluded" | "refused";

export interface SendOutcome {
	editor_pid: number;
	id: string;
	fate: SendFate;
	/** With `refused`: why, one line. */
	reason?: string;
}

export interface SendJudgeInput {
	/** pi's own pid. */
	piPid: number;
	/** The `pid_ns` pi writes, or null when it writes none (v0.5 pi identity). */
	piNs?: string | null;
	/** The editor pi is connected to now, or null. */
	connectedPid: number | null;
	/** Seconds since the epoch. */
	now: number;
	/** This editor's id was taken already. */
	seen: boolean;
	excluded: (file: string) => boolean;
}

export type SendVerdict =
	/** Not for this pi, or taken already: pi says nothing (another pi answers, or answered). */
	{ kind: "ignore" } | { kind: "refuse"; fate: "refused" | "excluded"; reason: string } | { kind: "take" };

export function judgeSend(request: SendRequest, input: SendJudgeInput): SendVerdict {
	if (!isPisEntry(request, input.piPid, input.piNs) || input.seen) return { kind: "ignore" };
	if (input.connectedPid !== request.pid)
		return { kind: "refuse", fate: "refused", reason: "this pi is not connected to that editor" };
	if (input.now - request.timestamp > SEND_MAX_AGE_SECONDS)
		return { kind: "refuse", fate: "refused", reason: `older than ${SEND_MAX_AGE_SECONDS} s` };
	if (input.excluded(request.item.file))
		return { kind: "refuse", fate: "excluded", reason: "the file is excluded by pi-ide-context's ignore rules" };
	return { kind: "take" };
}

export interface SendCaps {
	maxLines: number;
	maxBytes: number;
}

const KIND_WORDS: Readonly<Record<SendRequest["item"]["kind"], string>> = {
	selection: "Selection",
	line: "Line",
	diagnostic: "Diagnostic",
	hunk: "pi's change",
	file: "File",
};

/** A file's name for the model: relative to pi's cwd when inside it, else absolute; one inert line. */
export function displayPath(file: string, cwd: string): string {
	const rel = relative(cwd, file);
	return oneLine(rel !== "" && !rel.startsWith("..") && !rel.startsWith("/") ? rel : file, 300);
}

/**
 * The text a send puts into pi's input (draft) or sends: the typed words first, then the reference (kind, file,
 * lines, the diagnostic's message) and the text fenced as the context block fences a selection, capped by the
 * same settings. The typed words keep their lines; every other character that could act is escaped (inert.ts).
 */
export function formatSend(request: SendRequest, cwd: string, caps: SendCaps): string {
	const { item } = request;
	const lines =
		item.start_line === item.end_line ? `line ${item.start_line}` : `lines ${item.start_line}-${item.end_line}`;
	const head = `${KIND_WORDS[item.kind]} from ${displayPath(item.file, cwd)}, ${lines}`;
	const parts: string[] = [];
	const prompt = inert(request.prompt.trim(), { lines: "keep" });
	if (prompt !== "") parts.push(prompt, "");
	parts.push(item.kind === "diagnostic" && item.message ? `${head}: ${oneLine(item.message, 500)}` : `${head}:`);
	const capped = capText(item.text, caps.maxLines, caps.maxBytes);
	const fence = fenceFor(capped.text);
	const language = languageOfFile(item.file) ?? "";
	parts.push(`${fence}${fenceLanguage(language)}`, capped.text, fence);
	if (capped.truncated || item.truncated)
		parts.push(
			`(cut: ${capped.lines} of ${capped.totalLines} lines${item.truncated ? ", cut by the editor too" : ""})`,
		);
	return parts.join("\n");
}
