/**
 * Write-back from a sandbox (issue 23 items 3-4, PROTOCOL.md "pi's identity is (pid, pid_ns)"): a real pi under
 * `unshare --pid --fork --mount-proc` writes a file open in a real Neovim on the host. pi names its files by its
 * identity (`pi-<pid>-<ns>.json`), Neovim acts on them without kill(pi's pid, 0) (that pid names nothing on the
 * host), reloads the buffer, and its report reaches pi in time: the tool result never says the editor did not
 * answer (pi waits at most 1 s after the write for the report naming it; without one it says so).
 *
 * As root, host pids 1-3 are live, and pi would be pid 1 in a bare `unshare --fork`: a check of that pid on the
 * host would pass by accident. So pi runs under a shell in the namespace that first sets ns_last_pid
 * (test/helpers/sandbox.ts, shared with the other sandbox tests), making pi's pid one that no process has on the
 * host (checked before and after): a client that judged it by kill(pid, 0) would refuse the message. The reports
 * name that pid and pi's namespace.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { INITIAL_PID_NAMESPACE } from "../../src/protocol/liveness.ts";
import { readOwnPidNamespace } from "../../src/protocol/state-dir.ts";
import { NVIM_MATRIX, startNvim } from "../helpers/nvim.ts";
import { assertSandboxedReport, assertTwoNamespaces, coexistingWrites, sandboxedWrite } from "../helpers/sandbox.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const flavour = NVIM_MATRIX[0];

const ORIGINAL = "export const a = 1;\n";

describe("write-back from a sandbox: a real pi under unshare --pid writes a file open in Neovim on the host", () => {
	it("the buffer reloads, the report names the sandboxed pi by pid and namespace, the tool result says reloaded", async (t) => {
		assert.ok(flavour);
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command("edit src/a.ts");
		await nv.until((s) => s.active_buffer.file === file && s.protocol === "0.3", "Neovim reports src/a.ts (v0.3)");

		// A reload without a checker adds nothing to the tool result (PROTOCOL.md "Tool results"); without the
		// editor's report within 1 s it would say the editor did not answer.
		const piPid = await sandboxedWrite(env, file, "export_const_a_2;");
		assert.deepEqual(await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), [
			"export_const_a_2;",
		]);
		assert.equal(await nv.lua<boolean>("return vim.bo.modified"), false);
		assertSandboxedReport(
			nv.readState()?.files?.find((f) => f.file === file),
			piPid,
			readOwnPidNamespace() ?? INITIAL_PID_NAMESPACE,
		);
	});

	it("coexistence: a host pi and a sandboxed pi at once both get the editor and both writes reload", async (t) => {
		assert.ok(flavour);
		const env = await envFor(t);
		const hostFile = touch(env.workDir, "src/host.ts", ORIGINAL);
		const boxFile = touch(env.workDir, "src/box.ts", ORIGINAL);
		const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command("edit src/box.ts");
		await nv.command("edit src/host.ts");
		await nv.until((s) => s.active_buffer.file === hostFile && s.protocol === "0.3", "Neovim reports src/host.ts");

		const piPid = await coexistingWrites(
			env,
			{ file: hostFile, text: "from_the_host;" },
			{ file: boxFile, text: "from_the_sandbox;" },
		);
		for (const [file, text] of [
			[hostFile, "from_the_host;"],
			[boxFile, "from_the_sandbox;"],
		] as const) {
			const lines = await nv.lua<string[]>(
				"local f = ...; return vim.api.nvim_buf_get_lines(vim.fn.bufnr(f), 0, -1, false)",
				file,
			);
			assert.deepEqual(lines, [text], `${file} reloaded`);
		}
		const reports = nv.readState()?.files ?? [];
		assertTwoNamespaces(
			reports.find((f) => f.file === hostFile),
			reports.find((f) => f.file === boxFile),
			piPid,
			INITIAL_PID_NAMESPACE,
		);
	});
});
