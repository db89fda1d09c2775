/**
 * pi's change set (src/link/change-set.ts): hunks between the baseline and what pi left, their stable ids, the
 * runs kept, and the size cap of the encoded message. A seeded randomised check replays every hunk list on the
 * baseline (an independent oracle: applying the hunks must give pi's version, and reverting them the baseline);
 * two more compare the cached paths (lines split only where a text changed, each file's JSON encoded once) with
 * the plain computation (splitLines; JSON.stringify and the size cap applied from scratch).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	ChangeSet,
	computeHunks,
	contentOf,
	diffEditBound,
	encodeReviewMessage,
	MAX_DIFF_EDIT_LENGTH,
	MAX_REVIEW_HUNKS_PER_FILE,
	MAX_REVIEW_RUNS,
	splitLines,
	splitLinesAfter,
} from "../../../src/link/change-set.ts";
import type { ReviewHunk, ReviewMessage, ReviewRun } from "../../../src/protocol/wire.ts";
import { seededInts } from "../../helpers/seeded.ts";

const text = (t: string) => ({ kind: "text" as const, text: t });
const pick = (h: ReviewHunk) => [h.old_start, h.old_lines, h.new_start, h.new_lines, h.old_text, h.new_text];

describe("computeHunks", () => {
	const cases: { name: string; before: string; after: string; hunks: unknown[] }[] = [
		{ name: "no change", before: "a\nb\n", after: "a\nb\n", hunks: [] },
		{ name: "one line replaced", before: "a\nb\nc\n", after: "a\nB\nc\n", hunks: [[2, 1, 2, 1, ["b"], ["B"]]] },
		{ name: "lines inserted", before: "a\nc\n", after: "a\nb1\nb2\nc\n", hunks: [[2, 0, 2, 2, [], ["b1", "b2"]]] },
		{ name: "lines deleted", before: "a\nb\nc\n", after: "a\n", hunks: [[2, 2, 2, 0, ["b", "c"], []]] },
		{
			name: "two hunks",
			before: "1\n2\n3\n4\n5\n",
			after: "one\n2\n3\n4\nfive\n",
			hunks: [
				[1, 1, 1, 1, ["1"], ["one"]],
				[5, 1, 5, 1, ["5"], ["five"]],
			],
		},
		{ name: "new file", before: "", after: "x\ny\n", hunks: [[1, 0, 1, 2, [], ["x", "y"]]] },
		{ name: "emptied", before: "x\n", after: "", hunks: [[1, 1, 1, 0, ["x"], []]] },
		{ name: "final newline only", before: "a", after: "a\n", hunks: [] },
	];
	for (const c of cases) {
		test(c.name, () => assert.deepEqual(computeHunks("/p/f", c.before, c.after).map(pick), c.hunks));
	}

	test("ids: stable for the same text, different per file and per repeated hunk", () => {
		const one = computeHunks("/p/f", "a\nx\nb\nx\n", "a\ny\nb\ny\n");
		const again = computeHunks("/p/f", "a\nx\nb\nx\n", "a\ny\nb\ny\n");
		const other = computeHunks("/p/g", "a\nx\nb\nx\n", "a\ny\nb\ny\n");
		assert.equal(one.length, 2);
		assert.deepEqual(
			one.map((h) => h.id),
			again.map((h) => h.id),
		);
		assert.notEqual(one[0]?.id, one[1]?.id);
		assert.notEqual(one[0]?.id, other[0]?.id);
		assert.match(one[0]?.id ?? "", /^h[0-9a-f]{10}$/);
	});

	test("an edit elsewhere keeps the ids of the hunks it does not touch", () => {
		const first = computeHunks("/p/f", "a\nb\nc\nd\n", "A\nb\nc\nd\n");
		const second = computeHunks("/p/f", "a\nb\nc\nd\n", "A\nb\nc\nD\n");
		assert.equal(second[0]?.id, first[0]?.id);
	});
});

/** Apply `hunks` to `before` (the oracle: a plain splice, independent of the diff that made them). */
function apply(before: string[], hunks: ReviewHunk[]): string[] {
	const out = [...before];
	for (const h of [...hunks].reverse()) out.splice(h.old_start - 1, h.old_lines, ...h.new_text);
	return out;
}
function revert(after: string[], hunks: ReviewHunk[]): string[] {
	const out = [...after];
	for (const h of [...hunks].reverse()) out.splice(h.new_start - 1, h.new_lines, ...h.old_text);
	return out;
}

test("randomised: applying the hunks to the baseline gives pi's version, reverting them gives the baseline", () => {
	const seed = Number(process.env["CHANGE_SET_SEED"] ?? 20261202);
	const rounds = Number(process.env["CHANGE_SET_ROUNDS"] ?? 300);
	const rand = seededInts(seed);
	for (let round = 0; round < rounds; round++) {
		const before = Array.from({ length: rand(30) }, () => `l${rand(8)}`);
		const after = [...before];
		for (let edits = rand(5); edits > 0; edits--) {
			const at = rand(after.length + 1);
			const op = rand(3);
			if (op === 0) after.splice(at, 0, ...Array.from({ length: 1 + rand(3) }, () => `n${rand(8)}`));
			else if (op === 1) after.splice(at, 1 + rand(3));
			else after.splice(at, 1, `c${rand(8)}`);
		}
		const join = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");
		const hunks = computeHunks("/p/f", join(before), join(after));
		const where = `seed ${seed}, round ${round}`;
		assert.deepEqual(apply(before, hunks), after, where);
		assert.deepEqual(revert(after, hunks), before, where);
		for (const [i, h] of hunks.entries()) {
			const next = hunks[i + 1];
			if (next) assert.ok(next.old_start >= h.old_start + h.old_lines, `${where}: hunks overlap`);
		}
	}
});

describe("a large rewrite: one coarse hunk past the diff's bound (issue 22)", () => {
	const join = (lines: string[]) => `${lines.join("\n")}\n`;
	/** `n` lines, every second one rewritten: an exact diff has n/2 hunks and an edit script of n lines. */
	const rewrite = (n: number) => {
		const before = Array.from({ length: n }, (_, i) => `const v${i} = ${i};`);
		return { before, after: before.map((l, i) => (i % 2 ? `${l} // rewritten` : l)) };
	};
	const cases: { name: string; lines: number; via: "computeHunks" | "ChangeSet" }[] = [
		{ name: "just past the bound", lines: MAX_DIFF_EDIT_LENGTH + 2, via: "computeHunks" },
		{ name: "20,000 lines, the approval request's path", lines: 20_000, via: "computeHunks" },
		{ name: "20,000 lines, the change set's path", lines: 20_000, via: "ChangeSet" },
	];
	for (const c of cases) {
		test(c.name, () => {
			const { before, after } = rewrite(c.lines);
			let hunks: ReviewHunk[];
			let total: number;
			if (c.via === "computeHunks") {
				hunks = computeHunks("/p/f", join(before), join(after));
				total = hunks.length;
			} else {
				const set = new ChangeSet();
				set.startRun();
				set.before("/p/f", text(join(before)), 1);
				set.after("/p/f", text(join(after)));
				const file = set.runs()[0]?.files[0];
				hunks = file?.hunks ?? [];
				total = file?.hunks_total ?? -1;
			}
			// From the first changed line (the second) to the last (the last): the first line stays out of it.
			assert.deepEqual(hunks.map(pick), [[2, c.lines - 1, 2, c.lines - 1, before.slice(1), after.slice(1)]]);
			assert.equal(total, 1);
			assert.match(hunks[0]?.id ?? "", /^h[0-9a-f]{10}$/);
		});
	}

	test("the bound is on the work, not the clock: 500 up to 20,000 lines compared, less beyond", () => {
		const rows: [number, number][] = [
			[0, 500],
			[2_000, 500],
			[20_000, 500],
			[100_000, 100],
			[1_000_000, 10],
			[50_000_000, 1],
		];
		for (const [lines, bound] of rows) assert.equal(diffEditBound(lines), bound, `${lines} lines`);
	});

	test("just under the bound: still the exact hunks", () => {
		const { before, after } = rewrite(MAX_DIFF_EDIT_LENGTH - 2);
		const hunks = computeHunks("/p/f", join(before), join(after));
		assert.equal(hunks.length, (MAX_DIFF_EDIT_LENGTH - 2) / 2);
		assert.ok(hunks.length <= MAX_REVIEW_HUNKS_PER_FILE);
		assert.deepEqual(apply(before, hunks), after);
	});

	test("randomised: edits before, inside and after a coarse hunk still apply and revert exactly", () => {
		const seed = Number(process.env["CHANGE_SET_SEED"] ?? 22);
		const rounds = Number(process.env["CHANGE_SET_ROUNDS"] ?? 8);
		const rand = seededInts(seed);
		for (let round = 0; round < rounds; round++) {
			const before = Array.from({ length: 200 + rand(1500) }, (_, i) => `l${i} ${rand(4)}`);
			const set = new ChangeSet();
			set.startRun();
			set.before("/p/f", text(join(before)), 1);
			// A rewrite of a stretch with more changed lines than the bound, then small edits anywhere.
			const from = rand(before.length);
			const length = MAX_DIFF_EDIT_LENGTH / 2 + 1 + rand(MAX_DIFF_EDIT_LENGTH);
			const after = [...before];
			after.splice(from, length, ...Array.from({ length: length + rand(9) - 4 }, (_, i) => `r${i} ${rand(4)}`));
			for (let step = 0; step < 4; step++) {
				if (step > 0) {
					for (let edits = 1 + rand(3); edits > 0; edits--) {
						const at = rand(after.length + 1);
						const op = rand(3);
						if (op === 0) after.splice(at, 0, ...Array.from({ length: 1 + rand(3) }, () => `n${rand(6)}`));
						else if (op === 1) after.splice(at, 1 + rand(3));
						else after.splice(at, 1, `c${rand(6)}`);
					}
				}
				set.after("/p/f", text(join(after)));
				const file = set.runs()[0]?.files[0];
				const hunks = file?.hunks ?? [];
				const where = `seed ${seed}, round ${round}, step ${step}`;
				assert.equal(file?.hunks_total, hunks.length, `${where}: every hunk carried`);
				assert.deepEqual(apply(before, hunks), after, where);
				assert.deepEqual(revert(after, hunks), before, where);
				for (const [i, h] of hunks.entries()) {
					assert.equal(h.old_text.length, h.old_lines, where);
					assert.equal(h.new_text.length, h.new_lines, where);
					const next = hunks[i + 1];
					if (next) assert.ok(next.new_start > h.new_start + h.new_lines, `${where}: hunks overlap or touch`);
				}
			}
		}
	});
});

describe("ChangeSet", () => {
	test("the baseline is the content before pi's first touch in the run; after is the last", () => {
		const set = new ChangeSet();
		set.startRun();
		set.before("/p/a", text("v1\n"), 1);
		set.after("/p/a", text("v2\n"));
		assert.equal(set.hasBaseline("/p/a"), true);
		set.before("/p/a", text("v2\n"), 2);
		set.after("/p/a", text("v3\n"));
		const [run] = set.runs();
		assert.equal(run?.run, 1);
		assert.equal(run?.files[0]?.baseline, "v1\n");
		assert.deepEqual(run?.files[0]?.hunks.map(pick), [[1, 1, 1, 1, ["v1"], ["v3"]]]);
	});

	test("a new run starts a new baseline; only the last runs are kept", () => {
		const set = new ChangeSet();
		for (let run = 1; run <= MAX_REVIEW_RUNS + 2; run++) {
			set.startRun();
			set.before("/p/a", text(`v${run}\n`), run * 10);
			set.after("/p/a", text(`v${run + 1}\n`));
		}
		const runs = set.runs();
		assert.equal(runs.length, MAX_REVIEW_RUNS);
		assert.deepEqual(
			runs.map((r) => r.run),
			[30, 40, 50],
		);
		assert.equal(runs.at(-1)?.files[0]?.baseline, "v5\n");
	});

	test("a tool that failed (no after) or changed nothing leaves no file; a deleted-then-absent file stays out", () => {
		const set = new ChangeSet();
		set.startRun();
		set.before("/p/failed", text("x\n"), 1);
		set.before("/p/same", text("x\n"), 2);
		set.after("/p/same", text("x\n"));
		set.before("/p/new", { kind: "absent" }, 3);
		set.after("/p/new", text("fresh\n"));
		assert.deepEqual(
			set.runs()[0]?.files.map((f) => [f.file, f.baseline]),
			[["/p/new", null]],
		);
	});

	test("binary or too large: a note, no contents, no hunks", () => {
		const set = new ChangeSet();
		set.startRun();
		set.before("/p/bin", { kind: "note", note: "binary" }, 1);
		set.after("/p/bin", text("now text\n"));
		const [file] = set.runs()[0]?.files ?? [];
		assert.deepEqual([file?.note, file?.baseline, file?.hunks], ["binary", null, []]);
	});
});

describe("contentOf", () => {
	const cases: { name: string; bytes: Uint8Array | undefined; max?: number; kind: string; note?: string }[] = [
		{ name: "absent", bytes: undefined, kind: "absent" },
		{ name: "utf-8 text", bytes: new TextEncoder().encode("héllo\n"), kind: "text" },
		{ name: "a NUL byte", bytes: Uint8Array.of(0x61, 0, 0x62), kind: "note", note: "binary" },
		{ name: "invalid UTF-8", bytes: Uint8Array.of(0xff, 0xfe, 0x41), kind: "note", note: "binary" },
		{ name: "over the cap", bytes: new Uint8Array(11).fill(0x61), max: 10, kind: "note", note: "too large" },
	];
	for (const c of cases) {
		test(c.name, () => {
			const content = contentOf(c.bytes, c.max);
			assert.equal(content.kind, c.kind);
			if (content.kind === "note") assert.equal(content.note, c.note);
		});
	}
	test("text round-trips", () => assert.deepEqual(contentOf(new TextEncoder().encode("a\nb")), text("a\nb")));
});

describe("encodeReviewMessage", () => {
	const message = (runs: ReviewMessage["runs"]): ReviewMessage => ({
		protocol: "0.4",
		kind: "pi-review",
		pid: 7,
		editor_pid: 9,
		timestamp: 1,
		runs,
	});
	const file = (name: string, size: number) => ({
		file: name,
		baseline: "x".repeat(size),
		note: null,
		hunks: computeHunks(name, "x".repeat(size), "y".repeat(size)),
		hunks_total: 1,
	});

	test("under the cap: written as it is", () => {
		const m = message([{ run: 1, files: [file("/p/a", 10)] }]);
		assert.deepEqual(JSON.parse(encodeReviewMessage(m).toString()), m);
	});

	test("over the cap: older runs go first, then the largest file becomes a note", () => {
		const m = message([
			{ run: 1, files: [file("/p/old", 400)] },
			{ run: 2, files: [file("/p/big", 600), file("/p/small", 10)] },
		]);
		const decoded = JSON.parse(encodeReviewMessage(m, 2000).toString()) as ReviewMessage;
		assert.deepEqual(
			decoded.runs.map((r) => r.run),
			[2],
		);
		const [big, small] = decoded.runs[0]?.files ?? [];
		assert.deepEqual([big?.note, big?.baseline, big?.hunks.length], ["too large", null, 0]);
		assert.equal(small?.baseline, "x".repeat(10));
		assert.ok(encodeReviewMessage(m, 2000).length <= 2000);
	});

	test("splitLines drops only the last terminator", () => {
		assert.deepEqual(splitLines("a\n\nb\n"), ["a", "", "b"]);
		assert.deepEqual(splitLines(""), []);
		assert.deepEqual(splitLines("\n"), [""]);
	});
});

test("randomised: a run of several edits (hunks updated region by region) still applies and reverts exactly", () => {
	const seed = Number(process.env["CHANGE_SET_SEED"] ?? 7);
	const rounds = Number(process.env["CHANGE_SET_ROUNDS"] ?? 200);
	const rand = seededInts(seed);
	const join = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");
	for (let round = 0; round < rounds; round++) {
		const before = Array.from({ length: rand(40) }, () => `l${rand(6)}`);
		const set = new ChangeSet();
		set.startRun();
		set.before("/p/f", text(join(before)), 1);
		const after = [...before];
		for (let step = 0; step < 1 + rand(6); step++) {
			for (let edits = 1 + rand(3); edits > 0; edits--) {
				const at = rand(after.length + 1);
				const op = rand(3);
				if (op === 0) after.splice(at, 0, ...Array.from({ length: 1 + rand(3) }, () => `n${rand(6)}`));
				else if (op === 1) after.splice(at, 1 + rand(3));
				else after.splice(at, 1, `c${rand(6)}`);
			}
			set.after("/p/f", text(join(after)));
			const hunks = set.runs()[0]?.files[0]?.hunks ?? [];
			const where = `seed ${seed}, round ${round}, step ${step}`;
			assert.deepEqual(apply(before, hunks), after, where);
			assert.deepEqual(revert(after, hunks), before, where);
			for (const [i, h] of hunks.entries()) {
				assert.equal(h.old_text.length, h.old_lines, where);
				assert.equal(h.new_text.length, h.new_lines, where);
				const next = hunks[i + 1];
				if (next) assert.ok(next.new_start >= h.new_start + h.new_lines, `${where}: hunks overlap`);
			}
		}
	}
});

test("randomised: splitLinesAfter (only the changed region split) gives splitLines' lines", () => {
	const seed = Number(process.env["CHANGE_SET_SEED"] ?? 11);
	const rounds = Number(process.env["CHANGE_SET_ROUNDS"] ?? 2000);
	const rand = seededInts(seed);
	// Few distinct characters, newlines among them, so prefixes, suffixes and line ends collide often.
	const chars = ["a", "b", "\n", "\n", "é"];
	const randomText = (n: number) => Array.from({ length: n }, () => chars[rand(chars.length)]).join("");
	for (let round = 0; round < rounds; round++) {
		const prev = randomText(rand(24));
		let next = prev;
		for (let edits = 1 + rand(3); edits > 0; edits--) {
			const at = rand(next.length + 1);
			next = next.slice(0, at) + randomText(rand(4)) + next.slice(at + rand(4));
		}
		const where = `seed ${seed}, round ${round}: ${JSON.stringify(prev)} -> ${JSON.stringify(next)}`;
		assert.deepEqual(splitLinesAfter(prev, splitLines(prev), next), splitLines(next), where);
	}
});

test("randomised: the encoded change set (each file's JSON cached) is the plain JSON, with the same size cap", () => {
	const seed = Number(process.env["CHANGE_SET_SEED"] ?? 13);
	const rounds = Number(process.env["CHANGE_SET_ROUNDS"] ?? 60);
	const rand = seededInts(seed);
	const join = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");
	const head = { protocol: "0.4" as const, kind: "pi-review" as const, pid: 7, editor_pid: 9, timestamp: 1 };
	// The oracle: the whole message through JSON.stringify; over the cap, drop the oldest run, then turn the
	// largest carried file of the one left (by its JSON's bytes, the first of equals) into a note.
	const plain = (runs: ReviewRun[], maxBytes: number): unknown => {
		let kept = runs.map((r) => ({ run: r.run, files: [...r.files] }));
		const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
		while (size({ ...head, runs: kept }) > maxBytes) {
			if (kept.length > 1) kept = kept.slice(1);
			else {
				const files = kept[0]?.files ?? [];
				const carried = files.filter((f) => f.note === null);
				if (carried.length === 0) break;
				const largest = carried.reduce((a, b) => (size(b) > size(a) ? b : a));
				files[files.indexOf(largest)] = { ...largest, baseline: null, note: "too large", hunks: [] };
			}
		}
		return { ...head, runs: kept };
	};
	for (let round = 0; round < rounds; round++) {
		const set = new ChangeSet();
		const contents = new Map<string, string[]>();
		for (let step = 0; step < 1 + rand(12); step++) {
			if (rand(4) === 0) set.startRun();
			const file = `/p/f${rand(3)}`;
			const lines = contents.get(file) ?? Array.from({ length: rand(20) }, () => `l${rand(5)} ${"é".repeat(rand(3))}`);
			set.before(file, text(join(lines)), step + 1);
			const after = [...lines];
			after.splice(rand(after.length + 1), rand(3), ...Array.from({ length: rand(3) }, () => `n${rand(5)}`));
			contents.set(file, after);
			set.after(file, text(join(after)));
			const runs = set.runs();
			const maxBytes = rand(3) === 0 ? 300 + rand(900) : 1_000_000;
			const where = `seed ${seed}, round ${round}, step ${step}, cap ${maxBytes}`;
			const encoded = encodeReviewMessage({ ...head, runs }, maxBytes);
			assert.deepEqual(JSON.parse(encoded.toString()), plain(runs, maxBytes), where);
		}
	}
});
