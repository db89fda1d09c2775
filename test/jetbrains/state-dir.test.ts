/**
 * The JetBrains client's state dir rules (editors/jetbrains/src/main/java/pi/ide/core/StateDir.java) against the
 * same table of cases as src/protocol/state-dir.ts and the Neovim writer (test/fixtures/state-dir-cases.ts), and
 * its pi message names against the shared name table: the Java, TypeScript and Lua rules cannot drift apart.
 * One JVM (the build's `pi.ide.driver.Ops`) answers every case, one JSON line each.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	CONTENT,
	expectedFor,
	observeCase,
	PI_MESSAGE_NAME_CASES,
	PID,
	type Problem,
	prepareCase,
	removeCase,
	STATE_DIR_CASES,
} from "../fixtures/state-dir-cases.ts";
import { coreOps } from "../helpers/jetbrains.ts";

interface Reply {
	problem?: string | null;
	pid?: number | null;
}

const ask = coreOps<Reply>();

describe("JetBrains client: StateDir.java against the state dir table", () => {
	for (const c of STATE_DIR_CASES) {
		it(`${c.op}: ${c.name}`, async () => {
			const prepared = prepareCase(c);
			try {
				const reply = await ask({ op: c.op, dir: prepared.dir, pid: PID, content: CONTENT, uid: prepared.uid });
				const problem = (reply.problem ?? null) as Problem | null;
				assert.deepEqual(observeCase(c, prepared, problem), expectedFor(c));
			} finally {
				removeCase(prepared);
			}
		});
	}

	for (const { name, pid } of PI_MESSAGE_NAME_CASES) {
		it(`pi message name ${JSON.stringify(name)} -> ${pid ?? "not pi's"}`, async () => {
			const reply = await ask({ op: "pi-name", name });
			assert.equal(reply.pid ?? undefined, pid);
		});
	}
});
