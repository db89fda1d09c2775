/**
 * The reader rules of PROTOCOL.md "Limits" (nesting, caps, line numbers; test/fixtures/reader-limits.ts) in the
 * TypeScript clients' parsers of pi's files (editors/shared: VS Code, Obsidian), and the byte scan that refuses a
 * deep file before JSON.parse sees it. The same table runs in Neovim, Vim, Emacs and JetBrains.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseApproval } from "../../editors/shared/approval.ts";
import { nestingDepth, parsePiMessage } from "../../editors/shared/pi-message.ts";
import { parseReview } from "../../editors/shared/review.ts";
import { PI_PID, READER_CASES, type ReaderCase, randomNestedTexts } from "../fixtures/reader-limits.ts";

/** The TypeScript reader's verdict on a row: its problem, or the hunks it keeps. */
function read(c: ReaderCase): { problem: string } | { kept: number } {
	if (c.kind === "message") {
		const parsed = parsePiMessage(c.text);
		return parsed.ok ? { kept: 0 } : { problem: parsed.problem };
	}
	if (c.kind === "review") {
		const parsed = parseReview(c.text, PI_PID);
		if (!parsed.ok) return { problem: parsed.problem };
		return { kept: parsed.runs.flatMap((r) => r.files).reduce((n, f) => n + f.hunks.length, 0) };
	}
	const parsed = parseApproval(c.text, PI_PID);
	return parsed.ok ? { kept: parsed.request.hunks.length } : { problem: parsed.problem };
}

describe("TypeScript readers of pi's files: nesting, caps and line numbers (PROTOCOL.md Limits)", () => {
	for (const c of READER_CASES) {
		test(c.name, () => {
			const verdict = read(c);
			if (c.refused) {
				assert.ok("problem" in verdict, `not refused: ${JSON.stringify(verdict)}`);
				assert.match(verdict.problem, c.refused);
			} else assert.deepEqual(verdict, { kept: c.kept });
		});
	}
});

describe("nestingDepth: the levels of `[` and `{` outside strings, up to one past the limit", () => {
	const cases: { text: string; max?: number; depth: number }[] = [
		{ text: "1", depth: 0 },
		{ text: "{}", depth: 1 },
		{ text: '{"a":[{"b":[]}]}', depth: 4 },
		{ text: '["[[[", "{{{"]', depth: 1 },
		{ text: '["\\"[[", "\\\\", []]', depth: 2 },
		{ text: "[[], [], [[]]]", depth: 3 },
		{ text: "[".repeat(1000), max: 16, depth: 17 },
		{ text: "[".repeat(1000), max: 3, depth: 4 },
	];
	for (const c of cases) test(c.text.slice(0, 30), () => assert.equal(nestingDepth(c.text, c.max), c.depth));
});

test("nestingDepth on 500 seeded random texts around the limit is the depth of their values (PI_IDE_SEED replays one)", () => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 2026);
	const wrong = randomNestedTexts(seed, 500).flatMap(({ text, depth }, i) => {
		const scanned = nestingDepth(text, 64);
		return scanned === depth ? [] : [`seed ${seed} #${i}: scanned ${scanned}, is ${depth}: ${text.slice(0, 200)}`];
	});
	assert.deepEqual(wrong, []);
});
