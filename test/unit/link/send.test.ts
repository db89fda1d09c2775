/**
 * v0.5 send to pi, the pure half: the send file's name, the request's validation (a table), pi's verdict and the
 * text it puts into its input.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatSend, judgeSend, type SendJudgeInput } from "../../../src/link/send-deliver.ts";
import { MAX_SELECTION_TEXT_BYTES, MAX_SEND_PROMPT_BYTES, SEND_MAX_AGE_SECONDS } from "../../../src/protocol/limits.ts";
import { editorSendFileName, parseSendFileName, parseSendRequest } from "../../../src/protocol/wire.ts";

const NOW = 1_800_000_000;

function request(over: Record<string, unknown> = {}, item: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		protocol: "0.5",
		kind: "send",
		pid: 42,
		pi_pid: 7,
		id: "s1",
		timestamp: NOW,
		mode: "draft",
		prompt: "why?",
		item: { kind: "selection", file: "/p/a.ts", start_line: 3, end_line: 4, text: "x\ny", truncated: false, ...item },
		...over,
	};
}

describe("send file names", () => {
	const cases: [string, number | undefined][] = [
		["42.send.json", 42],
		["042.send.json", undefined],
		["42.json", undefined],
		["pi-42.send.json", undefined],
		["42.send.json.tmp", undefined],
		["2147483647.send.json", 2147483647],
		["2147483648.send.json", undefined],
		["-1.send.json", undefined],
	];
	for (const [name, pid] of cases) it(`${name} -> ${pid}`, () => assert.equal(parseSendFileName(name), pid));
	it("round-trips", () => assert.equal(parseSendFileName(editorSendFileName(123)), 123));
});

describe("parseSendRequest", () => {
	const bad: { name: string; value: unknown; reason: RegExp; filePid?: number }[] = [
		{ name: "not JSON", value: "{", reason: /not JSON/ },
		{ name: "an array", value: [], reason: /not a JSON object/ },
		{ name: "wrong kind", value: request({ kind: "state" }), reason: /kind/ },
		{ name: "no protocol", value: request({ protocol: undefined }), reason: /protocol/ },
		{ name: "pid not the file's", value: request(), filePid: 43, reason: /pid does not match/ },
		{ name: "pi_pid 0", value: request({ pi_pid: 0 }), reason: /pi_pid/ },
		{ name: "pi_pid 1.5", value: request({ pi_pid: 1.5 }), reason: /pi_pid/ },
		{ name: "pi_ns a number", value: request({ pi_ns: 4026531999 }), reason: /pi_ns/ },
		{ name: "pi_ns not pid:[digits]", value: request({ pi_ns: "net:[4026531999]" }), reason: /pi_ns/ },
		{ name: "pi_ns null", value: request({ pi_ns: null }), reason: /pi_ns/ },
		{ name: "empty id", value: request({ id: "" }), reason: /id is not/ },
		{ name: "65-byte id", value: request({ id: "é".repeat(33) }), reason: /id is not/ },
		{ name: "timestamp a string", value: request({ timestamp: "now" }), reason: /timestamp/ },
		{ name: "mode other", value: request({ mode: "steer" }), reason: /mode/ },
		{ name: "prompt a number", value: request({ prompt: 1 }), reason: /prompt is not/ },
		{ name: "prompt over the cap", value: request({ prompt: "a".repeat(MAX_SEND_PROMPT_BYTES + 1) }), reason: /over/ },
		{ name: "no item", value: request({ item: null }), reason: /item is not/ },
		{ name: "item kind other", value: request({}, { kind: "buffer" }), reason: /item.kind/ },
		{ name: "relative file", value: request({}, { file: "a.ts" }), reason: /absolute/ },
		{ name: "NUL in file", value: request({}, { file: "/a\0b" }), reason: /absolute/ },
		{ name: "end before start", value: request({}, { start_line: 4, end_line: 3 }), reason: /range/ },
		{ name: "line 0", value: request({}, { start_line: 0 }), reason: /range/ },
		{ name: "line 2^31", value: request({}, { end_line: 2 ** 31 }), reason: /range/ },
		{ name: "text missing", value: request({}, { text: undefined }), reason: /item.text/ },
		{
			name: "text over the cap",
			value: request({}, { text: "a".repeat(MAX_SELECTION_TEXT_BYTES + 1) }),
			reason: /item.text is over/,
		},
		{ name: "truncated a string", value: request({}, { truncated: "yes" }), reason: /truncated/ },
		{ name: "diagnostic without message", value: request({}, { kind: "diagnostic" }), reason: /no message/ },
		{ name: "message a number", value: request({}, { message: 3 }), reason: /message/ },
	];
	for (const c of bad)
		it(`refuses ${c.name}`, () => {
			const text = typeof c.value === "string" ? c.value : JSON.stringify(c.value);
			const parsed = parseSendRequest(text, c.filePid ?? 42);
			assert.equal(parsed.ok, false);
			if (!parsed.ok) assert.match(parsed.reason, c.reason);
		});

	const good: { name: string; value: Record<string, unknown>; mode: string; prompt: string }[] = [
		{ name: "a full request", value: request(), mode: "draft", prompt: "why?" },
		{
			name: "mode and prompt left out",
			value: request({ mode: undefined, prompt: undefined }),
			mode: "draft",
			prompt: "",
		},
		{ name: "now", value: request({ mode: "now" }), mode: "now", prompt: "why?" },
		{
			name: "a diagnostic",
			value: request({}, { kind: "diagnostic", message: "bad" }),
			mode: "draft",
			prompt: "why?",
		},
		{
			name: "a prompt at the cap",
			value: request({ prompt: "a".repeat(MAX_SEND_PROMPT_BYTES) }),
			mode: "draft",
			prompt: "a".repeat(MAX_SEND_PROMPT_BYTES),
		},
	];
	for (const c of good)
		it(`takes ${c.name}`, () => {
			const parsed = parseSendRequest(JSON.stringify(c.value), 42);
			assert.ok(parsed.ok, parsed.ok ? "" : parsed.reason);
			assert.equal(parsed.request.mode, c.mode);
			assert.equal(parsed.request.prompt, c.prompt);
		});
});

describe("judgeSend", () => {
	const parsed = parseSendRequest(JSON.stringify(request()), 42);
	assert.ok(parsed.ok);
	const base: SendJudgeInput = { piPid: 7, connectedPid: 42, now: NOW, seen: false, excluded: () => false };
	const cases: { name: string; over: Partial<typeof base>; timestamp?: number; verdict: string }[] = [
		{ name: "from the connected editor", over: {}, verdict: "take" },
		{ name: "for another pi", over: { piPid: 8 }, verdict: "ignore" },
		{ name: "taken already", over: { seen: true }, verdict: "ignore" },
		{ name: "from an editor pi is not connected to", over: { connectedPid: 41 }, verdict: "refused" },
		{ name: "with no editor connected", over: { connectedPid: null }, verdict: "refused" },
		{ name: "stale", over: { now: NOW + SEND_MAX_AGE_SECONDS + 1 }, verdict: "refused" },
		{ name: "just fresh", over: { now: NOW + SEND_MAX_AGE_SECONDS }, verdict: "take" },
		{ name: "of an excluded file", over: { excluded: (f: string) => f === "/p/a.ts" }, verdict: "excluded" },
	];
	for (const c of cases)
		it(c.name, () => {
			const v = judgeSend(parsed.request, { ...base, ...c.over });
			assert.equal(v.kind === "refuse" ? v.fate : v.kind, c.verdict);
		});

	// v0.5 pi identity: a send names pi by pi_pid and, when pi's file said one, pi_ns; a pid of another namespace
	// is another pi.
	const NS = "pid:[4026531999]";
	const OTHER = "pid:[4026532000]";
	const nsCases: { name: string; piNs: string | undefined; own: string | null; verdict: string }[] = [
		{ name: "no pi_ns, pi writes none", piNs: undefined, own: null, verdict: "take" },
		{ name: "no pi_ns, pi writes one (an editor before v0.5)", piNs: undefined, own: NS, verdict: "take" },
		{ name: "pi_ns pi's own", piNs: NS, own: NS, verdict: "take" },
		{ name: "pi_ns another namespace's", piNs: OTHER, own: NS, verdict: "ignore" },
		{ name: "pi_ns given, pi writes none", piNs: NS, own: null, verdict: "ignore" },
	];
	for (const c of nsCases)
		it(`pi_ns: ${c.name}`, () => {
			const p = parseSendRequest(JSON.stringify(request({ pi_ns: c.piNs })), 42);
			assert.ok(p.ok, p.ok ? "" : p.reason);
			assert.equal(p.request.pi_ns, c.piNs);
			const v = judgeSend(p.request, { ...base, piNs: c.own });
			assert.equal(v.kind === "refuse" ? v.fate : v.kind, c.verdict);
		});
});

describe("formatSend", () => {
	const caps = { maxLines: 500, maxBytes: 50_000 };
	const format = (over: Record<string, unknown>, item: Record<string, unknown> = {}, c = caps) => {
		const parsed = parseSendRequest(JSON.stringify(request(over, item)), 42);
		assert.ok(parsed.ok);
		return formatSend(parsed.request, "/p", c);
	};
	const cases: {
		name: string;
		over?: Record<string, unknown>;
		item?: Record<string, unknown>;
		caps?: typeof caps;
		text: string;
	}[] = [
		{ name: "a selection with a prompt", text: "why?\n\nSelection from a.ts, lines 3-4:\n```typescript\nx\ny\n```" },
		{ name: "no prompt", over: { prompt: "  " }, text: "Selection from a.ts, lines 3-4:\n```typescript\nx\ny\n```" },
		{
			name: "a line outside pi's cwd",
			over: { prompt: "" },
			item: { kind: "line", file: "/q/b.unknownext", start_line: 9, end_line: 9, text: "z" },
			text: "Line from /q/b.unknownext, line 9:\n```\nz\n```",
		},
		{
			name: "a diagnostic's message on one line",
			over: { prompt: "" },
			item: { kind: "diagnostic", message: "bad\nthing", start_line: 3, end_line: 3, text: "x" },
			text: "Diagnostic from a.ts, line 3: bad\\nthing\n```typescript\nx\n```",
		},
		{
			name: "backticks in the text: a longer fence",
			over: { prompt: "" },
			item: { text: "````" },
			text: "Selection from a.ts, lines 3-4:\n`````typescript\n````\n`````",
		},
		{
			name: "escape sequences in the prompt and the file name are inert; lines kept",
			over: { prompt: "a\u001b[31m\nb" },
			item: { file: "/p/x\u202e.ts", text: "x" },
			text: "a\\u001b[31m\nb\n\nSelection from x\\u202e.ts, lines 3-4:\n```typescript\nx\n```",
		},
		{
			name: "capped by the selection caps, and said",
			over: { prompt: "" },
			item: { text: "1\n2\n3", truncated: true },
			caps: { maxLines: 2, maxBytes: 100 },
			text: "Selection from a.ts, lines 3-4:\n```typescript\n1\n2\n```\n(cut: 2 of 3 lines, cut by the editor too)",
		},
	];
	for (const c of cases) it(c.name, () => assert.equal(format(c.over ?? {}, c.item ?? {}, c.caps ?? caps), c.text));
});
