/**
 * Issue 26 item 6 in the JetBrains client (ApprovalAgainst.java `against`, `touchPhrase`): seeded proposals against
 * seeded unsaved documents, each checked against the rule's oracle (test/fixtures/approval-against-oracle.ts, written
 * from PROTOCOL.md): every hunk's place in the document (where the merge would put it, or on the user's lines it
 * touches), the document with the hunks placed (what "Show change" shows), and the words naming the touched lines.
 * The request is an approval message as pi writes it, parsed by the client. A failure names its seed
 * (PI_IDE_SEED=<n> replays from it).
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { type AgainstCase, againstCase } from "../fixtures/approval-against-oracle.ts";
import { coreOps } from "../helpers/jetbrains.ts";

const SEED = Number(process.env["PI_IDE_SEED"] ?? 20261205);
const CASES = Array.from({ length: 400 }, (_, i) => againstCase(SEED + i));
const PI = 4242;
const text = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

interface Reply {
	problem: string | null;
	view: { places: unknown[]; proposed: string[]; phrase: string } | null;
}

const ask = coreOps<Reply>();

/** The case's hunks as pi's approval message carries them. */
function message(c: AgainstCase): string {
	const hunks = c.hunks.map((h, i) => ({
		id: `h${i}`,
		old_start: h.old_start,
		new_start: h.old_start,
		old_text: h.old_text,
		new_text: h.new_text,
	}));
	const request = {
		id: `r${c.seed}`,
		tool: "edit",
		file: "/p/f.txt",
		created: false,
		note: null,
		hunks,
		hunks_total: hunks.length,
		timeout_s: 120,
		expires: 121,
	};
	return JSON.stringify({ protocol: "0.4", kind: "pi-approval", pid: PI, editor_pid: 7, timestamp: 1, request });
}

it(`jetbrains: approval against the user's unsaved document: ${CASES.length} seeded proposals (from seed ${SEED}) agree with the rule's oracle`, async () => {
	const failures: string[] = [];
	for (const c of CASES) {
		const got = await ask({ op: "against", message: message(c), pid: PI, disk: text(c.disk), document: text(c.ours) });
		const want = { places: c.places, proposed: c.proposed, phrase: c.phrase };
		if (got.problem !== null || JSON.stringify(got.view) !== JSON.stringify(want)) {
			failures.push(
				`seed ${c.seed} (PI_IDE_SEED=${c.seed}): got ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`,
			);
		}
	}
	assert.deepEqual(failures.slice(0, 3), []);
	// The cases reach every form of the words: none touched, one line, a span, several places, more than five.
	const phrases = CASES.map((c) => c.phrase);
	assert.ok(phrases.some((p) => p === ""));
	assert.ok(phrases.some((p) => / line \d+$/.test(p)));
	assert.ok(phrases.some((p) => /lines \d+-\d+/.test(p)));
	assert.ok(phrases.some((p) => /, \d/.test(p)));
});
