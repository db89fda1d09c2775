/**
 * The reader rules of PROTOCOL.md "Limits" (nesting, caps, line numbers; test/fixtures/reader-limits.ts) in the
 * TypeScript clients' parsers of pi's files (editors/shared: VS Code, Obsidian), and the byte scan that refuses a
 * deep file before JSON.parse sees it. The same table runs in Neovim, Vim, Emacs and JetBrains.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseApproval } from "../../../../editors/shared/approval.ts";
import { nestingDepth, parsePiMessage } from "../../../../editors/shared/pi-message.ts";
import { parseHunk, parseReview } from "../../../../editors/shared/review.ts";
import { computeHunks } from "../../../../src/link/change-set.ts";
import {
	HUNK_STARTS,
	PI_PID,
	READER_CASES,
	type ReaderCase,
	randomNestedTexts,
} from "../../../fixtures/reader-limits.ts";
import { seededInts } from "../../../helpers/seeded.ts";

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

describe("the hunk starts the table keeps are pi's own output (src/link/change-set.ts)", () => {
	const pis: Record<string, [before: string, after: string]> = {
		"a deletion at the top of a file (pi's: old 1,1 new 1,0)": ["one\ntwo\n", "two\n"],
		"an insertion at the top of a file (pi's: old 1,0 new 1,1)": ["one\ntwo\n", "zero\none\ntwo\n"],
		"a deletion after the last line (pi's: old 2,1 new 2,0)": ["one\ntwo\n", "one\n"],
	};
	for (const row of HUNK_STARTS.filter((r) => r.valid)) {
		test(row.name, () => {
			const [before, after] = pis[row.name] ?? assert.fail(`no pi edit for ${row.name}`);
			const [only, ...more] = computeHunks("/p/a.txt", before, after);
			assert.deepEqual(more, []);
			const { id: _, ...fields } = only ?? assert.fail("no hunk");
			assert.deepEqual(fields, row.fields);
		});
	}
});

test("every hunk pi computes for 400 seeded random edits passes the readers' hunk rules (PI_IDE_SEED replays one)", () => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 2026);
	const pick = seededInts(seed);
	const words = ["", "a", "b", "é", "\u{1F600}", "a b"];
	const text = (n: number) => Array.from({ length: n }, () => words[pick(words.length)]).join("\n");
	const refused: string[] = [];
	for (let i = 0; i < 400; i++) {
		// Empty files, files without a final newline, edits at either end: what puts a start at its edge.
		const before = text(pick(6)) + (pick(2) ? "\n" : "");
		const after = text(pick(6)) + (pick(2) ? "\n" : "");
		for (const hunk of computeHunks(`/p/${"é".repeat(pick(300))}`, before, after)) {
			if (parseHunk(hunk) === undefined) refused.push(`seed ${seed} #${i}: ${JSON.stringify({ before, after, hunk })}`);
		}
	}
	assert.deepEqual(refused, []);
});
