/**
 * Issue 26, seeded: the JetBrains client's merge of pi's change into an unsaved document (Merge.java) against the
 * rule's oracle (test/fixtures/merge-oracle.ts `merge3`), on the cases the TypeScript, Emacs and Vim merges are
 * checked with (test/fixtures/merge-ranges.ts): the merged lines and every conflict (line, lines, the user's text).
 * Twice: the plan alone (`Merge.plan`, its edits made as the driver makes them), and the whole chain as the inbox
 * runs it (`Merge.chain`: pi's own `merge` field from its change-set code, the hash of the file on disk, pi's hunks
 * taken back out for the base, the document's text edited). `PI_IDE_SEEDS=<n>` runs more cases (default 500).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contentOf, mergeInfo } from "../../src/link/change-set.ts";
import { merge3 } from "../fixtures/merge-oracle.ts";
import { mergeCase } from "../fixtures/merge-ranges.ts";
import { coreOps } from "../helpers/jetbrains.ts";

const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 500);
const text = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);
const linesOf = (t: string) => (t === "" ? [] : t.replace(/\n$/, "").split("\n"));

interface Conflict {
	line: number;
	lines: number;
	text: string[];
}
interface Reply {
	merged?: string[];
	conflicts?: Conflict[];
	why?: string | null;
	status?: string | null;
	merge?: { hunks: number; merged: number; conflicts: Conflict[] } | null;
	document?: string | null;
}

const ask = coreOps<Reply>();

describe("jetbrains: the merge against the rule's oracle, seeded", () => {
	it(`Merge.plan: ${SEEDS} cases`, async () => {
		const failures: string[] = [];
		for (let seed = 1; seed <= SEEDS; seed++) {
			const c = mergeCase(seed);
			const got = await ask({ op: "merge", base: c.base, ours: c.ours, theirs: c.theirs });
			const oracle = merge3(c.base, c.ours, c.pis);
			const want = { merged: oracle.merged, conflicts: oracle.conflicts };
			if (JSON.stringify({ merged: got.merged, conflicts: got.conflicts }) !== JSON.stringify(want)) {
				failures.push(`seed ${seed}: got ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`);
			}
		}
		assert.deepEqual(failures.slice(0, 3), []);
	});

	it(`Merge.chain with pi's own merge field and the file's hash: ${SEEDS} cases`, async () => {
		const failures: string[] = [];
		for (let seed = 1; seed <= SEEDS; seed++) {
			const c = mergeCase(seed);
			const merge = mergeInfo(contentOf(Buffer.from(text(c.base))), contentOf(Buffer.from(text(c.pis))));
			if (!merge) continue; // pi's tool changed nothing: no change to merge
			const got = await ask({
				op: "merge-chain",
				chain: [{ seq: 1, merge }],
				handled: 0,
				disk: text(c.pis),
				document: text(c.ours),
			});
			const oracle = merge3(c.base, c.ours, c.pis);
			const want = {
				status: oracle.conflicts.length > 0 ? "conflict" : "merged",
				merged: oracle.merged,
				report: { hunks: oracle.hunks, merged: oracle.taken, conflicts: oracle.conflicts },
			};
			const have = { status: got.status, merged: linesOf(got.document ?? ""), report: got.merge };
			if (JSON.stringify(have) !== JSON.stringify(want)) {
				failures.push(`seed ${seed}: ${got.why ?? ""} got ${JSON.stringify(have)}\n  want ${JSON.stringify(want)}`);
			}
		}
		assert.deepEqual(failures.slice(0, 3), []);
	});
});
