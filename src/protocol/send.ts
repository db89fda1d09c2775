/**
 * v0.5 send to pi: the request an editor writes as `<editor pid>.send.json` (PROTOCOL.md, "v0.5: send to pi"),
 * validated. Pure: text in, a request or the one reason it is refused out. The file's name, size, owner and
 * mode are checked by the reader (src/link/send-desk.ts) before this runs.
 */
import { MAX_ID_BYTES, MAX_LINE_NUMBER, MAX_SELECTION_TEXT_BYTES, MAX_SEND_PROMPT_BYTES } from "./limits.ts";
import { PID_NAMESPACE_PATTERN } from "./liveness.ts";

/** What is sent: the selection, the line under the cursor, the diagnostic there, pi's hunk there, the whole file. */
export const SEND_KINDS = ["selection", "line", "diagnostic", "hunk", "file"] as const;
export type SendKind = (typeof SEND_KINDS)[number];

/** `draft`: into pi's input for the user to finish; `now`: a prompt when pi is idle, a follow-up when busy. */
export type SendMode = "draft" | "now";

export interface SendItem {
	kind: SendKind;
	/** Absolute path of the file the text comes from. */
	file: string;
	/** 1-based, inclusive. */
	start_line: number;
	end_line: number;
	/** The lines sent (the selection's text, the line, the hunk's lines, the file). */
	text: string;
	/** The editor cut `text` to the cap. */
	truncated: boolean;
	/** `diagnostic`: its message (one line for the model). */
	message: string | null;
}

export interface SendRequest {
	/** The editor's pid: the number in the file's name. */
	pid: number;
	/** The pi it is for: the pid in that pi's `pi-<pid>.json`. */
	pi_pid: number;
	/** v0.5 pi identity: that pi's `pid_ns`, exactly as its file said; absent when it said none. */
	pi_ns?: string;
	/** 1 to 64 bytes; pi takes each id once. */
	id: string;
	/** Seconds since the epoch. */
	timestamp: number;
	mode: SendMode;
	/** The words typed in the editor, or "". */
	prompt: string;
	item: SendItem;
}

export type ParsedSend = { ok: true; request: SendRequest } | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isPid = (v: unknown): v is number =>
	Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 2 ** 31 - 1;
const isLine = (v: unknown): v is number =>
	Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_LINE_NUMBER;
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** Validate the JSON text of `<filePid>.send.json`. */
export function parseSendRequest(text: string, filePid: number): ParsedSend {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return { ok: false, reason: "not JSON" };
	}
	if (!isObject(value)) return { ok: false, reason: "not a JSON object" };
	if (value["kind"] !== "send") return { ok: false, reason: 'kind is not "send"' };
	if (typeof value["protocol"] !== "string") return { ok: false, reason: "protocol is missing" };
	if (value["pid"] !== filePid) return { ok: false, reason: "pid does not match the file name" };
	const piPid = value["pi_pid"];
	if (!isPid(piPid)) return { ok: false, reason: "pi_pid is not a pid" };
	const piNs = value["pi_ns"];
	if (piNs !== undefined && !(typeof piNs === "string" && PID_NAMESPACE_PATTERN.test(piNs)))
		return { ok: false, reason: "pi_ns is not a pid namespace" };
	const id = value["id"];
	if (typeof id !== "string" || bytes(id) < 1 || bytes(id) > MAX_ID_BYTES)
		return { ok: false, reason: `id is not 1 to ${MAX_ID_BYTES} bytes` };
	const timestamp = value["timestamp"];
	if (typeof timestamp !== "number" || !Number.isFinite(timestamp) || timestamp < 0)
		return { ok: false, reason: "timestamp is not a time" };
	const mode = value["mode"] ?? "draft";
	if (mode !== "draft" && mode !== "now") return { ok: false, reason: 'mode is not "draft" or "now"' };
	const prompt = value["prompt"] ?? "";
	if (typeof prompt !== "string") return { ok: false, reason: "prompt is not a string" };
	if (bytes(prompt) > MAX_SEND_PROMPT_BYTES)
		return { ok: false, reason: `prompt is over ${MAX_SEND_PROMPT_BYTES} bytes` };
	const item = parseItem(value["item"]);
	if (typeof item === "string") return { ok: false, reason: item };
	return {
		ok: true,
		request: {
			pid: filePid,
			pi_pid: piPid,
			...(piNs === undefined ? {} : { pi_ns: piNs }),
			id,
			timestamp,
			mode,
			prompt,
			item,
		},
	};
}

function parseItem(value: unknown): SendItem | string {
	if (!isObject(value)) return "item is not an object";
	const kind = value["kind"];
	if (typeof kind !== "string" || !(SEND_KINDS as readonly string[]).includes(kind))
		return `item.kind is not one of ${SEND_KINDS.join(", ")}`;
	const file = value["file"];
	if (typeof file !== "string" || !file.startsWith("/") || file.includes("\0") || bytes(file) > 4095)
		return "item.file is not an absolute path";
	const start = value["start_line"];
	const end = value["end_line"];
	if (!isLine(start) || !isLine(end) || end < start) return "item.start_line and end_line are not a range of lines";
	const text = value["text"];
	if (typeof text !== "string") return "item.text is not a string";
	if (bytes(text) > MAX_SELECTION_TEXT_BYTES) return `item.text is over ${MAX_SELECTION_TEXT_BYTES} bytes`;
	const truncated = value["truncated"] ?? false;
	if (typeof truncated !== "boolean") return "item.truncated is not a boolean";
	const message = value["message"] ?? null;
	if (message !== null && typeof message !== "string") return "item.message is not a string";
	if (kind === "diagnostic" && (message === null || message === "")) return "a diagnostic item has no message";
	return { kind: kind as SendKind, file, start_line: start, end_line: end, text, truncated, message };
}
