/**
 * pi's file names with its identity (protocol v0.5: `pi-<pid>.json`, `pi-<pid>-<ns digits>.json`, `.review.json`
 * and `.approval.json` likewise) in the JetBrains client (editors/jetbrains/src/main/java/pi/ide/core/PiIdentity.java)
 * against the shared table test/fixtures/state-dir-cases.ts `PI_FILE_NAME_CASES`, through one JVM (the build's
 * `pi.ide.driver.Ops`). What the client does with the files: PiIdentityTest (JUnit) and the conformance kit's
 * identity cases (test/conformance/cases/identity.ts).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { PI_FILE_NAME_CASES } from "../fixtures/state-dir-cases.ts";
import { coreOps, startJetBrainsDriver } from "../helpers/jetbrains.ts";

interface Reply {
	name?: { kind: string; pid: number; ns: string | null } | null;
}

const ask = coreOps<Reply>();

describe("JetBrains client: PiIdentity.parse against the shared table of pi's file names", () => {
	for (const { name, expect } of PI_FILE_NAME_CASES) {
		it(`${JSON.stringify(name)} -> ${expect === undefined ? "not pi's" : JSON.stringify(expect)}`, async () => {
			const reply = await ask({ op: "pi-file-name", name });
			assert.deepEqual(reply.name ?? undefined, expect);
		});
	}
});

describe("JetBrains client: the state file says the IDE's pid namespace (v0.5 pid_ns)", () => {
	it("the headless driver's state file carries pid_ns, as readlink /proc/self/ns/pid says", async (t) => {
		const root = mkdtempSync(join(tmpdir(), "pi-ide-jb-ns-"));
		t.after(() => rmSync(root, { recursive: true, force: true }));
		const driver = await startJetBrainsDriver({
			project: root,
			env: { ...process.env, XDG_RUNTIME_DIR: root, HOME: root },
		});
		t.after(() => driver.kill());
		const state = JSON.parse(readFileSync(driver.stateFile, "utf8")) as { pid_ns?: string };
		assert.equal(state.pid_ns, readlinkSync("/proc/self/ns/pid"));
	});
});
