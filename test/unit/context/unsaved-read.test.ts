/** The read of a file the editor holds unsaved (src/context/unsaved-read.ts, PROTOCOL.md v0.5). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { formatUnsavedRead, parseEditorBuffers, type ReadCaps } from "../../../src/context/unsaved-read.ts";
import { MAX_UNSAVED_BUFFERS } from "../../../src/protocol/limits.ts";
import type { UnsavedBuffer } from "../../../src/protocol/wire.ts";

const PID = 321;
const file = (over: Record<string, unknown> = {}, buffers: unknown[] = []) =>
	JSON.stringify({ protocol: "0.5", kind: "editor-buffers", pid: PID, serial: 4, timestamp: 1, buffers, ...over });
const entry = (over: Record<string, unknown> = {}) => ({
	file: "/p/a.ts",
	version: 9,
	lines_total: 2,
	text: "one\ntwo",
	...over,
});

describe("parseEditorBuffers: the editor's file, validated", () => {
	const cases: { name: string; text: string; ok: boolean; kept?: number; dropped?: number; problem?: RegExp }[] = [
		{ name: "one entry", text: file({}, [entry()]), ok: true, kept: 1, dropped: 0 },
		{
			name: "too large: note, no text",
			text: file({}, [entry({ text: undefined, note: "too_large" })]),
			ok: true,
			kept: 1,
		},
		{ name: "not JSON", text: "{", ok: false, problem: /invalid JSON/ },
		{ name: "a list", text: "[]", ok: false, problem: /not an object/ },
		{ name: "another kind", text: file({ kind: "pi" }), ok: false, problem: /kind/ },
		{ name: "another pid", text: file({ pid: 322 }), ok: false, problem: /pid field 322/ },
		{ name: "an older serial", text: file({ serial: 3 }), ok: false, problem: /^serial 3/ },
		{ name: "buffers not a list", text: file({ buffers: {} }), ok: false, problem: /not a list/ },
		{
			name: "relative path dropped",
			text: file({}, [entry({ file: "a.ts" }), entry()]),
			ok: true,
			kept: 1,
			dropped: 1,
		},
		{ name: "negative version dropped", text: file({}, [entry({ version: -1 })]), ok: true, kept: 0, dropped: 1 },
		{ name: "fractional lines dropped", text: file({}, [entry({ lines_total: 1.5 })]), ok: true, kept: 0, dropped: 1 },
		{ name: "text not a string dropped", text: file({}, [entry({ text: 5 })]), ok: true, kept: 0, dropped: 1 },
		{
			name: "unknown note dropped",
			text: file({}, [entry({ text: undefined, note: "x" })]),
			ok: true,
			kept: 0,
			dropped: 1,
		},
		{ name: "text and note: text wins", text: file({}, [entry({ note: "too_large" })]), ok: true, kept: 1 },
		{
			name: "capped at MAX_UNSAVED_BUFFERS",
			text: file(
				{},
				Array.from({ length: MAX_UNSAVED_BUFFERS + 5 }, (_, i) => entry({ file: `/p/${i}` })),
			),
			ok: true,
			kept: MAX_UNSAVED_BUFFERS,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const parsed = parseEditorBuffers(c.text, PID, 4);
			assert.equal(parsed.ok, c.ok, JSON.stringify(parsed));
			if (parsed.ok) {
				if (c.kept !== undefined) assert.equal(parsed.buffers.length, c.kept);
				if (c.dropped !== undefined) assert.equal(parsed.dropped, c.dropped);
			} else if (c.problem) assert.match(parsed.problem, c.problem);
		});
	}
});

describe("formatUnsavedRead: the buffer's lines for the read's offset and limit", () => {
	const caps: ReadCaps = { maxLines: 2000, maxBytes: 50 * 1024 };
	const ten: UnsavedBuffer = {
		file: "/p/a.ts",
		version: 17,
		lines_total: 10,
		text: Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"),
	};
	const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
	const cases: {
		name: string;
		buffer?: UnsavedBuffer;
		offset?: unknown;
		limit?: unknown;
		caps?: ReadCaps;
		kind: "replace" | "note";
		body?: string[];
		tail?: RegExp | null;
		has?: RegExp[];
		lacks?: RegExp[];
	}[] = [
		{ name: "whole buffer", kind: "replace", body: lines(1, 10), tail: null },
		{ name: "offset 4", offset: 4, kind: "replace", body: lines(4, 10), tail: null },
		{
			name: "offset 3 limit 2",
			offset: 3,
			limit: 2,
			kind: "replace",
			body: lines(3, 4),
			tail: /^\[Showing lines 3-4 of 10 \(6 more\)\. Use offset=5 to continue\.\]$/,
		},
		{ name: "limit past the end", offset: 9, limit: 50, kind: "replace", body: lines(9, 10), tail: null },
		{ name: "offset 0 is the first line", offset: 0, kind: "replace", body: lines(1, 10) },
		{ name: "a string offset is ignored", offset: "5", kind: "replace", body: lines(1, 10) },
		{
			name: "cut by read's line cap",
			caps: { maxLines: 3, maxBytes: 1024 },
			kind: "replace",
			body: lines(1, 3),
			tail: /^\[Showing lines 1-3 of 10\. Use offset=4 to continue\.\]$/,
		},
		{
			name: "cut by read's byte cap",
			offset: 2,
			caps: { maxLines: 100, maxBytes: 13 },
			kind: "replace",
			body: lines(2, 3),
			tail: /^\[Showing lines 2-3 of 10\. Use offset=4 to continue\.\]$/,
		},
		{
			name: "offset past the end",
			offset: 11,
			kind: "replace",
			has: [/Offset 11 is beyond the end of the unsaved buffer \(10 lines\)/],
		},
		{
			name: "too large: a note, the disk read stays",
			buffer: { file: "/p/a.ts", version: 3, lines_total: 90000, note: "too_large" },
			kind: "note",
			has: [/unsaved changes/, /too large/, /file on disk/, /90000 lines/],
		},
		{
			name: "controls made inert, layout kept",
			buffer: { file: "/p/a.ts", version: 1, lines_total: 2, text: "a\u001b[31mred\tx\nb\u202e" },
			kind: "replace",
			body: ["a\\u001b[31mred\tx", "b\\u202e"],
		},
		{
			name: "a fence longer than the buffer's backticks",
			buffer: { file: "/p/a.md", version: 1, lines_total: 1, text: "````js" },
			kind: "replace",
			has: [/^`{5}$/m],
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const out = formatUnsavedRead({
				path: "a.ts",
				editor: "Neovim",
				buffer: c.buffer ?? ten,
				offset: c.offset,
				limit: c.limit,
				caps: c.caps ?? caps,
			});
			assert.equal(out.kind, c.kind);
			const text = out.text;
			if (c.kind === "replace" && !c.has?.some((r) => r.source.includes("beyond"))) {
				assert.match(text, /^\[a\.ts is open in Neovim with unsaved changes\. Below is the editor's unsaved buffer/);
				assert.match(text, /not the file on disk/);
			}
			if (c.body) {
				const [, ...rest] = text.split("\n");
				const fence = rest[0] as string;
				assert.match(fence, /^`{3,}$/);
				const close = rest.indexOf(fence, 1);
				assert.deepEqual(rest.slice(1, close), c.body);
				const after = rest.slice(close + 1);
				if (c.tail === null) assert.deepEqual(after, []);
				else if (c.tail) {
					assert.equal(after.length, 1);
					assert.match(after[0] as string, c.tail);
				}
			}
			for (const r of c.has ?? []) assert.match(text, r);
			for (const r of c.lacks ?? []) assert.doesNotMatch(text, r);
		});
	}

	test("the path the model wrote is shown on one line, inert", () => {
		const out = formatUnsavedRead({ path: "a\nb.ts", editor: "Vim", buffer: ten, caps });
		assert.match(out.text.split("\n")[0] as string, /^\[a\\nb\.ts is open in Vim/);
	});
});

describe("formatUnsavedRead against a split-everything oracle (seeded)", () => {
	/** The rule written plainly: split the whole buffer, take offset/limit, then whole lines within the caps. */
	function oracle(text: string, offset: number | undefined, limit: number | undefined, caps: ReadCaps) {
		const all = text.split("\n");
		const start = offset !== undefined && offset >= 1 ? offset - 1 : 0;
		if (start >= all.length) return { beyond: true, total: all.length, body: [] as string[], tail: false };
		const end = limit === undefined ? all.length : Math.min(all.length, start + limit);
		const body: string[] = [];
		let bytes = 0;
		for (const line of all.slice(start, end)) {
			if (body.length >= caps.maxLines) break;
			const cost = Buffer.byteLength(line) + (body.length > 0 ? 1 : 0);
			if (bytes + cost > caps.maxBytes) {
				if (body.length === 0) {
					let cut = "";
					for (const ch of line) {
						if (Buffer.byteLength(cut + ch) > caps.maxBytes) break;
						cut += ch;
					}
					body.push(cut);
				}
				break;
			}
			body.push(line);
			bytes += cost;
		}
		return { beyond: false, total: all.length, body, tail: start + body.length < all.length };
	}
	/** mulberry32: a small seeded generator, so a failure replays from its seed. */
	function rng(seed: number): () => number {
		let a = seed >>> 0;
		return () => {
			a = (a + 0x6d2b79f5) >>> 0;
			let t = a;
			t = Math.imul(t ^ (t >>> 15), t | 1);
			t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
			return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
		};
	}
	const PIECES = ["a", "bb", "é", "日本", "", " ", "x".repeat(30)];
	test("500 random buffers, offsets, limits and caps", () => {
		const seed = Number(process.env["SEED"] ?? 26);
		const next = rng(seed);
		const int = (n: number) => Math.floor(next() * n);
		for (let round = 0; round < 500; round++) {
			const lineCount = int(30);
			const lines = Array.from({ length: lineCount }, () =>
				Array.from({ length: int(4) }, () => PIECES[int(PIECES.length)]).join(""),
			);
			const text = lines.join("\n");
			const offset = next() < 0.3 ? undefined : int(lineCount + 3);
			const limit = next() < 0.4 ? undefined : int(lineCount + 2);
			const caps: ReadCaps = { maxLines: 1 + int(20), maxBytes: 1 + int(120) };
			const out = formatUnsavedRead({
				path: "f",
				editor: "Neovim",
				buffer: { file: "/f", version: 1, lines_total: lineCount, text },
				offset,
				limit,
				caps,
			});
			const want = oracle(text, offset, limit, caps);
			const where = `seed ${seed} round ${round}: ${JSON.stringify({ text, offset, limit, caps })}\n${out.text}`;
			const all = out.text.split("\n");
			assert.match(all[0] as string, new RegExp(`buffer version 1, ${want.total} lines?\\)`), where);
			if (want.beyond) {
				assert.match(out.text, /is beyond the end of the unsaved buffer/, where);
				continue;
			}
			const fence = all[1] as string;
			const close = all.lastIndexOf(fence);
			assert.deepEqual(all.slice(2, close), want.body.join("\n").split("\n"), where);
			assert.equal(close < all.length - 1, want.tail, where);
		}
	});
});
