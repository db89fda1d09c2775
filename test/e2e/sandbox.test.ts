/**
 * pi in another pid namespace than the editor (issue 23): real pi under `unshare --pid --fork --mount-proc` (what
 * bubblewrap, docker and podman do to pids), a real Neovim on the host, the state directory shared. Inside the
 * namespace `kill(editor pid, 0)` answers ESRCH for every host pid: pi must not take that for "the editor is gone"
 * (it removed the live editor's state file, for every pi on the host), and connects to it as on the host.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { deadPid, makeState, writeStateFile } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { NVIM_MATRIX, startNvim } from "../helpers/nvim.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { envFor, fileLine, PROMPT, touch } from "../helpers/scenario.ts";

const UNSHARE_PID = ["unshare", "--pid", "--fork", "--mount-proc"];
const flavour = NVIM_MATRIX[0];

describe("pi in another pid namespace beside a host editor", () => {
	it("keeps the live editor's state file and sends its block, on the first prompt, with no /ide", async (t) => {
		assert.ok(flavour);
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command("edit src/main.ts");
		await nv.until((s) => s.active_buffer.file === file, "Neovim reports src/main.ts");
		const stateFile = join(env.runtimeDir, "pi-ide", `${nv.pid}.json`);
		assert.ok(existsSync(stateFile));

		const result = await runPrint(env, [PROMPT], [], { wrap: UNSHARE_PID });
		assert.equal(result.code, 0, result.stderr);
		assert.ok(existsSync(stateFile), "the live editor's state file stays");
		const injected = injectedAfter(env.model.requests.at(-1), PROMPT);
		assert.equal(injected.length, 1, JSON.stringify(injected));
		assert.equal(fileLine(injected[0] ?? ""), file);
	});

	it("a dead editor's leftover stays for a pi in the namespace (it cannot tell), and goes for a pi on the host", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const stateFile = writeStateFile(
			join(env.runtimeDir, "pi-ide"),
			makeState({ pid: await deadPid(), cwd: env.workDir, active_buffer: { file } }),
		);

		const inside = await runPrint(env, [PROMPT], [], { wrap: UNSHARE_PID });
		assert.equal(inside.code, 0, inside.stderr);
		assert.ok(existsSync(stateFile), "pi in the namespace cannot prove the editor gone: the file stays");

		const host = await runPrint(env, [PROMPT]);
		assert.equal(host.code, 0, host.stderr);
		assert.ok(!existsSync(stateFile), "pi on the host removes the dead editor's leftover as always");
	});
});
