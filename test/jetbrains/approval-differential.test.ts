/**
 * The JetBrains client's proposal (Approval.java: pi's approval hunks applied in memory to the text the user
 * sees, what "Show change" diffs against) against pi itself, the independent oracle: on seeded random files and
 * edits, pi's own request (src/link/approval.ts buildRequest, its hunks from pi's change-set code, encoded as pi
 * writes it) applied by the Java core to the file must give exactly the text pi's tool would leave. Insertions,
 * deletions, replacements, edits at either end, repeated lines, empty files. A failure prints its seed;
 * PI_IDE_SEED=<n> replays one case.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import { coreOps } from "../helpers/jetbrains.ts";
import { mulberry32 as random } from "../helpers/seeded.ts";

interface Reply {
	problem: string | null;
	proposal: string | null;
}

/** Few distinct lines, so the diff meets repeated lines and ambiguous alignments. */
const LINES = ["a", "b", "c", "", "  x = 1;", "é€😀", "b"];

function caseFor(seed: number): { before: string; after: string } {
	const next = random(seed);
	const pick = (n: number) => Math.floor(next() * n);
	const lines: string[] = [];
	for (let i = pick(12); i > 0; i--) lines.push(LINES[pick(LINES.length)] ?? "");
	const edited = [...lines];
	for (let edits = 1 + pick(4); edits > 0; edits--) {
		const at = pick(edited.length + 1);
		const removed = pick(3);
		const added: string[] = [];
		for (let i = pick(3); i > 0; i--) added.push(LINES[pick(LINES.length)] ?? "");
		edited.splice(at, removed, ...added);
	}
	// The hunks do not carry a final newline: pi's edit keeps the file's, so the cases keep it too. Without one,
	// a last empty line would be no line at all to pi's split: such a text ends in a word instead.
	const newline = lines.length === 0 || next() < 0.8;
	const text = (l: string[]) => {
		if (l.length === 0) return "";
		if (!newline && l[l.length - 1] === "") l.push("end");
		return l.join("\n") + (newline ? "\n" : "");
	};
	return { before: text(lines), after: text(edited) };
}

const ask = coreOps<Reply>();

it("Approval.java's proposal is the text pi's tool would leave, on 400 seeded files and edits", async () => {
	const only = process.env["PI_IDE_SEED"];
	const seeds = only ? [Number(only)] : Array.from({ length: 400 }, (_, i) => 5000 + i);
	for (const seed of seeds) {
		const c = caseFor(seed);
		const request = buildRequest({
			id: `r${seed}`,
			tool: "edit",
			file: "/p/f.txt",
			before: c.before === "" ? { kind: "absent" } : { kind: "text", text: c.before },
			after: c.after,
			timeoutS: 120,
			now: 1,
		});
		const message = encodeApprovalMessage({
			protocol: "0.4",
			kind: "pi-approval",
			pid: 4242,
			editor_pid: 7,
			timestamp: 1,
			request,
		});
		const java = await ask({ op: "proposal", pid: 4242, message, text: c.before });
		assert.deepEqual(
			java,
			{ problem: null, proposal: c.after },
			`seed ${seed} (replay: PI_IDE_SEED=${seed}): ${JSON.stringify(c)} hunks ${JSON.stringify(request.hunks)}`,
		);
	}
});
