/**
 * The reader rules of PROTOCOL.md "Limits" (test/fixtures/reader-limits.ts: nesting, caps, line numbers) in the
 * JetBrains client's parsers of pi's message and approval request (PiMessage.java, Approval.java, through the core's
 * Ops driver). It reads no change set, so the table's change-set rows are not its.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { it } from "node:test";
import { PI_PID, READER_CASES, verdictHolds } from "../fixtures/reader-limits.ts";
import { buildJetBrains } from "../helpers/jetbrains.ts";
import { followJsonl } from "../helpers/jsonl-child.ts";

interface Reply {
	problem: string | null;
	kept: number;
}

it("jetbrains: pi's files too deep refused before they are built, a request over 500 hunks by its count, bad lines dropped", async () => {
	const build = await buildJetBrains();
	const child = spawn("java", ["-cp", build.coreJar, "pi.ide.driver.Ops"], { stdio: ["pipe", "pipe", "pipe"] });
	const ops = followJsonl<Reply>(child, { name: "jetbrains ops" });
	try {
		const cases = READER_CASES.filter((c) => c.kind !== "review");
		const wrong: string[] = [];
		for (const [i, c] of cases.entries()) {
			ops.send({ op: "pi-parse", kind: c.kind, pid: PI_PID, text: c.text });
			await ops.waitFor(() => ops.messages.length > i, i);
			const reply = ops.messages[i] as Reply;
			const why = reply.problem ?? "";
			if (!verdictHolds(c, why, reply.kept)) wrong.push(`${c.name}: ${why || `kept ${reply.kept}`}`);
		}
		assert.deepEqual(wrong, []);
	} finally {
		await ops.close();
	}
});
