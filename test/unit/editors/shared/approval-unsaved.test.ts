/**
 * Issue 26 item 6 in the TypeScript clients (editors/shared/approval.ts `proposalAgainstBuffer`, `describeUnsaved`):
 * pi's proposal shown against a buffer with unsaved changes. A table of cases, then a seeded test against the merge
 * rule's oracle (test/fixtures/merge-oracle.ts `merge3`, written from PROTOCOL.md, not from the code): the proposal
 * placed into the buffer is the three-way merge of disk, buffer and pi's text; each touching hunk's place is a
 * conflict's span of the user's lines.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	describeUnsaved,
	type PendingApproval,
	parseApproval,
	proposalAgainstBuffer,
} from "../../../../editors/shared/approval.ts";
import { buildRequest } from "../../../../src/link/approval.ts";
import { againstCase } from "../../../fixtures/approval-against-oracle.ts";
import { merge3 } from "../../../fixtures/merge-oracle.ts";
import { mergeCase } from "../../../fixtures/merge-ranges.ts";

const PI = 4242;
const NOW = 1_700_000_000;

/** pi's own request (src/link/approval.ts) for `before` -> `after`, parsed as a client parses it. */
function request(before: string, after: string, note?: string): PendingApproval {
	const built = buildRequest({
		id: "r",
		tool: "edit",
		file: "/p/notes.txt",
		before: { kind: "text", text: before },
		after,
		timeoutS: 120,
		now: NOW,
	});
	const raw = { protocol: "0.4", kind: "pi-approval", pid: PI, editor_pid: 7, timestamp: NOW, request: built };
	if (note !== undefined) Object.assign(raw.request, { note, hunks: [] });
	const parsed = parseApproval(JSON.stringify(raw), PI);
	assert.ok(parsed.ok);
	return parsed.request;
}

const lines = (...l: string[]) => `${l.join("\n")}\n`;
const DISK = lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
/** pi replaces line 2 and line 8. */
const PI_TEXT = lines("1", "TWO", "3", "4", "5", "6", "7", "EIGHT", "9", "10");

interface Case {
	name: string;
	buffer: string;
	disk?: string;
	note?: string;
	/** The buffer with pi's hunks placed; undefined: no view. */
	text?: string;
	places?: [number, number, boolean][];
	notice?: string;
}

const CASES: Case[] = [
	{
		name: "no unsaved change: the proposal itself",
		buffer: DISK,
		text: PI_TEXT,
		places: [
			[1, 2, false],
			[7, 8, false],
		],
	},
	{
		name: "two lines typed at the top: both hunks moved down two lines",
		buffer: lines("u1", "u2", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"),
		text: lines("u1", "u2", "1", "TWO", "3", "4", "5", "6", "7", "EIGHT", "9", "10"),
		places: [
			[3, 4, false],
			[9, 10, false],
		],
	},
	{
		name: "lines 4-5 deleted: the second hunk moved up two lines",
		buffer: lines("1", "2", "3", "6", "7", "8", "9", "10"),
		text: lines("1", "TWO", "3", "6", "7", "EIGHT", "9", "10"),
		places: [
			[1, 2, false],
			[5, 6, false],
		],
	},
	{
		name: "line 8 changed: its hunk touches, the user's text kept there",
		buffer: lines("1", "2", "3", "4", "5", "6", "7", "mine", "9", "10"),
		text: lines("1", "TWO", "3", "4", "5", "6", "7", "mine", "9", "10"),
		places: [
			[1, 2, false],
			[7, 8, true],
		],
		notice:
			"1 of 2 hunks touches your unsaved line 8: if accepted, the file gets pi's text and your buffer keeps yours there",
	},
	{
		name: "lines 7-8 changed, a line typed at the top: named where the user sees them",
		buffer: lines("top", "1", "2", "3", "4", "5", "6", "my7", "my8", "9", "10"),
		text: lines("top", "1", "TWO", "3", "4", "5", "6", "my7", "my8", "9", "10"),
		places: [
			[2, 3, false],
			[7, 9, true],
		],
		notice:
			"1 of 2 hunks touches your unsaved lines 8-9: if accepted, the file gets pi's text and your buffer keeps yours there",
	},
	{
		name: "both hunks touch",
		buffer: lines("1", "my2", "3", "4", "5", "6", "my7", "my8", "9", "10"),
		text: lines("1", "my2", "3", "4", "5", "6", "my7", "my8", "9", "10"),
		places: [
			[1, 2, true],
			[6, 8, true],
		],
		notice:
			"2 of 2 hunks touch your unsaved lines 2, 7-8: if accepted, the file gets pi's text and your buffer keeps yours there",
	},
	{
		name: "line 8 deleted: the place is where it was",
		buffer: lines("1", "2", "3", "4", "5", "6", "7", "9", "10"),
		text: lines("1", "TWO", "3", "4", "5", "6", "7", "9", "10"),
		places: [
			[1, 2, false],
			[7, 7, true],
		],
		notice:
			"1 of 2 hunks touches your unsaved line 8: if accepted, the file gets pi's text and your buffer keeps yours there",
	},
	{
		name: "a line typed right after pi's line 2 (an insertion at its edge): touches",
		buffer: lines("1", "2", "new", "3", "4", "5", "6", "7", "8", "9", "10"),
		text: lines("1", "2", "new", "3", "4", "5", "6", "7", "EIGHT", "9", "10"),
		places: [
			[1, 3, true],
			[8, 9, false],
		],
		notice:
			"1 of 2 hunks touches your unsaved lines 2-3: if accepted, the file gets pi's text and your buffer keeps yours there",
	},
	{
		name: "CR-LF buffer (lines not split at \\n): no view",
		buffer: "1\r\n2\r\n3\r\n4\r\nmine\r\n6\r\n7\r\n8\r\n9\r\n10\r\n",
	},
	{ name: "a BOM on disk: no view", buffer: DISK, disk: `\ufeff${DISK}` },
	{ name: "the file saved since (pi's lines not on disk): no view", buffer: DISK, disk: lines("1", "x", "3") },
	{ name: "a request with a note: no view", buffer: DISK, note: "too large" },
];

describe("describeUnsaved: the notice's words", () => {
	const at = (from: number, to: number) => ({ from, to, touches: true });
	const cases: [string, Parameters<typeof describeUnsaved>[0], string | undefined][] = [
		["no hunk touches", { places: [{ from: 1, to: 2, touches: false }] }, undefined],
		["the only hunk", { places: [at(2, 3)] }, "1 of 1 hunk touches your unsaved line 3"],
		[
			"six places: five named",
			{ places: [0, 2, 4, 6, 8, 10].map((n) => at(n, n + 1)) },
			"6 of 6 hunks touch your unsaved lines 1, 3, 5, 7, 9, …",
		],
		[
			"two hunks on one change of the user's: its lines named once",
			{ places: [at(6, 8), at(6, 8)] },
			"2 of 2 hunks touch your unsaved lines 7-8",
		],
		["spans that meet: joined", { places: [at(6, 8), at(8, 9)] }, "2 of 2 hunks touch your unsaved lines 7-9"],
		[
			"where the user deleted (no lines), then the next line: joined",
			{ places: [{ from: 1, to: 2, touches: false }, at(4, 4), at(5, 6)] },
			"2 of 3 hunks touch your unsaved lines 5-6",
		],
		["where the user deleted, alone: one line", { places: [at(4, 4)] }, "1 of 1 hunk touches your unsaved line 5"],
	];
	for (const [name, view, want] of cases) {
		test(name, () => {
			assert.equal(describeUnsaved(view, { short: true }), want);
			assert.equal(
				describeUnsaved(view),
				want && `${want}: if accepted, the file gets pi's text and your buffer keeps yours there`,
			);
		});
	}
});

describe("proposalAgainstBuffer: the proposal against the user's unsaved buffer", () => {
	for (const c of CASES) {
		test(c.name, () => {
			const r = c.note === undefined ? request(DISK, PI_TEXT) : request(DISK, PI_TEXT, c.note);
			const view = proposalAgainstBuffer(r, c.disk ?? DISK, c.buffer);
			if (c.text === undefined) {
				assert.equal(view, undefined);
				return;
			}
			assert.ok(view);
			assert.equal(view.text, c.text);
			assert.deepEqual(
				view.places.map((p) => [p.from, p.to, p.touches]),
				c.places,
			);
			assert.equal(describeUnsaved(view), c.notice);
		});
	}
});

// ---- seeded: against the merge rule's oracle ----------------------------------------------------------------------

const text = (l: string[]) => (l.length === 0 ? "" : `${l.join("\n")}\n`);

/** One seeded case: undefined when the view agrees with the oracle, else what differs. */
function runCase(seed: number): string | undefined {
	const { base, ours, pis } = mergeCase(seed);
	const r = request(text(base), text(pis));
	const view = proposalAgainstBuffer(r, text(base), text(ours));
	const oracle = merge3(base, ours, pis);
	if (view === undefined) return `seed ${seed}: no view`;
	const got = {
		text: view.text,
		// Each touching hunk's place: how many of the user's lines, and their text.
		touching: view.places.filter((p) => p.touches).map((p) => ours.slice(p.from, p.to)),
		hunks: view.places.length,
		// Each placed hunk stands on the lines pi read (the base's lines are unique: the place is exact).
		placed: view.places.every(
			(p, i) => p.touches || JSON.stringify(ours.slice(p.from, p.to)) === JSON.stringify(r.hunks[i]?.old_text),
		),
	};
	const want = {
		text: text(oracle.merged),
		touching: oracle.conflicts.map((c) => c.text),
		hunks: oracle.hunks,
		placed: true,
	};
	if (JSON.stringify(got) === JSON.stringify(want)) return undefined;
	return `seed ${seed}: base ${JSON.stringify(base)}, ours ${JSON.stringify(ours)}, pi ${JSON.stringify(pis)}\n  got ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`;
}

describe("seeded: the proposal against the buffer agrees with the merge oracle", () => {
	test("500 cases", () => {
		const failures: string[] = [];
		for (let seed = 1; seed <= 500; seed++) {
			const failure = runCase(seed);
			if (failure) failures.push(failure);
		}
		assert.deepEqual(failures.slice(0, 3), []);
	});
});

test("describeUnsaved names the places as the rule's oracle does (seeded, test/fixtures/approval-against-oracle.ts)", () => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 20261205);
	for (let i = 0; i < 500; i++) {
		const c = againstCase(seed + i);
		const places = c.places.map((p) => ({ from: p.row, to: p.row + p.rows, touches: p.touches }));
		assert.equal(
			describeUnsaved({ places }, { short: true }) ?? "",
			c.phrase,
			`seed ${c.seed} (PI_IDE_SEED=${c.seed})`,
		);
	}
});
