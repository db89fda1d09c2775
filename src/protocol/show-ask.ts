/**
 * v0.5 show and ask (PROTOCOL.md, "v0.5: the model shows a place and asks what is open"): pi's request file
 * `pi-<pid>[-<ns>].ask.json` and the editor's answers `<editor pid>.answers.json`, their shapes and the validator
 * of the answers. Pure: text in, typed values or the one reason they are refused out. The files' names, sizes,
 * owners and modes are checked by the readers before this runs.
 */
import { Type } from "typebox";
import { Compile } from "typebox/compile";
import {
	MAX_ANSWERS,
	MAX_ASK_BUFFERS,
	MAX_ASK_DIAGNOSTIC_ITEMS,
	MAX_DIAGNOSTIC_ITEMS,
	MAX_ID_BYTES,
	MAX_LINE_NUMBER,
} from "./limits.ts";
import { DiagnosticsSchema, PID_NAMESPACE_PATTERN } from "./protocol.ts";
import { SHOW_STATUSES, type ShowAskAnswer } from "./wire.ts";

export {
	type AskAnswer,
	type AskBuffer,
	type AskMessage,
	type AskRequest,
	type EditorAnswers,
	editorAnswersFileName,
	SHOW_STATUSES,
	type ShowAnswer,
	type ShowAskAnswer,
	type ShowAskRequest,
	type ShowRequest,
	type ShowStatus,
} from "./wire.ts";

const Id = Type.String({ minLength: 1 });
const Head = {
	pi_pid: Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1 }),
	pi_ns: Type.Optional(Type.String({ pattern: PID_NAMESPACE_PATTERN.source })),
	id: Id,
};
const ShowAnswerSchema = Type.Object({
	...Head,
	kind: Type.Literal("show"),
	status: Type.Union(SHOW_STATUSES.map((s) => Type.Literal(s))),
	list: Type.Optional(Type.Union([Type.String(), Type.Null()])),
	reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const AskBufferSchema = Type.Object({
	file: Type.String({ minLength: 1, maxLength: 4095 }),
	modified: Type.Boolean(),
	version: Type.Integer({ minimum: 0 }),
	lines_total: Type.Integer({ minimum: 0, maximum: MAX_LINE_NUMBER }),
	active: Type.Optional(Type.Boolean()),
	diagnostics: Type.Optional(Type.Union([DiagnosticsSchema, Type.Null()])),
});
const AskAnswerSchema = Type.Object({
	...Head,
	kind: Type.Literal("ask"),
	buffers: Type.Array(AskBufferSchema, { maxItems: MAX_ASK_BUFFERS }),
	buffers_total: Type.Integer({ minimum: 0 }),
});
const AnswersHeadSchema = Type.Object({
	kind: Type.Literal("editor-answers"),
	protocol: Type.String(),
	pid: Type.Integer(),
	answers: Type.Array(Type.Unknown(), { maxItems: MAX_ANSWERS }),
});
const answersHead = Compile(AnswersHeadSchema);
const showAnswer = Compile(ShowAnswerSchema);
const askAnswer = Compile(AskAnswerSchema);

export type ParsedAnswers = { ok: true; answers: ShowAskAnswer[]; dropped: number } | { ok: false; reason: string };

const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/**
 * Validate `<filePid>.answers.json`. The file as a whole must be editor `filePid`'s, with at most MAX_ANSWERS
 * answers; a malformed answer is dropped (counted), never the others. An ask's answer over the caps (more than
 * MAX_DIAGNOSTIC_ITEMS items for one buffer, more than MAX_ASK_DIAGNOSTIC_ITEMS in all) is malformed.
 */
export function parseAnswers(text: string, filePid: number): ParsedAnswers {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return { ok: false, reason: "not JSON" };
	}
	if (!answersHead.Check(value)) return { ok: false, reason: "not an editor-answers file" };
	if (value.pid !== filePid) return { ok: false, reason: "pid does not match the file name" };
	const answers: ShowAskAnswer[] = [];
	let dropped = 0;
	for (const entry of value.answers) {
		const answer = parseAnswer(entry);
		if (answer) answers.push(answer);
		else dropped++;
	}
	return { ok: true, answers, dropped };
}

function parseAnswer(entry: unknown): ShowAskAnswer | undefined {
	if (showAnswer.Check(entry)) {
		if (bytes(entry.id) > MAX_ID_BYTES) return undefined;
		return {
			pi_pid: entry.pi_pid,
			...(entry.pi_ns === undefined ? {} : { pi_ns: entry.pi_ns }),
			id: entry.id,
			kind: "show",
			status: entry.status,
			list: entry.list ?? null,
			reason: entry.reason ?? null,
		};
	}
	if (askAnswer.Check(entry)) {
		if (bytes(entry.id) > MAX_ID_BYTES) return undefined;
		let items = 0;
		for (const b of entry.buffers) {
			const n = b.diagnostics?.items.length ?? 0;
			if (n > MAX_DIAGNOSTIC_ITEMS) return undefined;
			items += n;
		}
		if (items > MAX_ASK_DIAGNOSTIC_ITEMS) return undefined;
		return {
			pi_pid: entry.pi_pid,
			...(entry.pi_ns === undefined ? {} : { pi_ns: entry.pi_ns }),
			id: entry.id,
			kind: "ask",
			buffers: entry.buffers.map((b) => ({
				file: b.file,
				modified: b.modified,
				version: b.version,
				lines_total: b.lines_total,
				active: b.active ?? false,
				...(b.diagnostics === undefined ? {} : { diagnostics: b.diagnostics }),
			})),
			buffers_total: Math.max(entry.buffers_total, entry.buffers.length),
		};
	}
	return undefined;
}
