/**
 * Write-back from a sandbox (issue 23 items 3-5) in Vim, Emacs and the JetBrains client (its headless driver): a
 * real pi under `unshare --pid --fork --mount-proc`, at a pid that is dead on the host (test/helpers/sandbox.ts),
 * writes a file open in the editor on the host. pi names its files by its identity (`pi-<pid>-<ns>.json`); the editor acts on them without
 * judging that pid, reloads the buffer, and its report (naming pi by `pi_pid` and `pi_ns`) reaches pi in time: the
 * tool result never says the editor did not answer. (Neovim: test/e2e/sandbox-writeback.test.ts.)
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { INITIAL_PID_NAMESPACE } from "../../src/protocol/liveness.ts";
import { elispString, startEmacs } from "../helpers/emacs.ts";
import { startJetBrainsDriver } from "../helpers/jetbrains.ts";
import { pollUntil } from "../helpers/poll.ts";
import {
	assertSandboxedReport,
	assertTwoNamespaces,
	coexistingWrites,
	type SandboxReport,
	sandboxedWrite,
} from "../helpers/sandbox.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startVim } from "../helpers/vim.ts";

const ORIGINAL = "export const a = 1;\n";

describe("write-back from a sandbox: a real pi under unshare --pid writes a file open in Vim, Emacs, JetBrains", () => {
	it("vim: the buffer reloads, the report names the sandboxed pi by pid and namespace, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const vim = await startVim(t, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		});
		await vim.ex("edit src/a.ts");
		await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "Vim reports src/a.ts");

		const piPid = await sandboxedWrite(env, file, "from_the_sandbox;");
		assert.deepEqual(await vim.expr<string[]>("getline(1, '$')"), ["from_the_sandbox;"]);
		const report = ((vim.state()?.["files"] as SandboxReport[] | undefined) ?? []).find((f) => f.file === file);
		assertSandboxedReport(report, piPid, INITIAL_PID_NAMESPACE);
	});

	it("vim, coexistence: a host pi and a sandboxed pi at once both get Vim and both writes reload", async (t) => {
		const env = await envFor(t);
		const hostFile = touch(env.workDir, "src/host.ts", ORIGINAL);
		const boxFile = touch(env.workDir, "src/box.ts", ORIGINAL);
		const vim = await startVim(t, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		});
		// Both loaded (a buffer Vim abandoned without 'hidden' is unloaded: "not-open").
		await vim.ex("edit src/box.ts");
		await vim.ex("split src/host.ts");
		await vim.until((s) => (s["active_buffer"] as { file: string }).file === hostFile, "Vim reports src/host.ts");

		const piPid = await coexistingWrites(
			env,
			{ file: hostFile, text: "from_the_host;" },
			{ file: boxFile, text: "from_the_sandbox;" },
		);
		for (const [file, text] of [
			[hostFile, "from_the_host;"],
			[boxFile, "from_the_sandbox;"],
		] as const) {
			assert.deepEqual(
				await vim.expr<string[]>(`getbufline(bufnr(${JSON.stringify(file)}), 1, "$")`),
				[text],
				`${file} reloaded`,
			);
		}
		const reports = (vim.state()?.["files"] as SandboxReport[] | undefined) ?? [];
		assertTwoNamespaces(
			reports.find((f) => f.file === hostFile),
			reports.find((f) => f.file === boxFile),
			piPid,
			INITIAL_PID_NAMESPACE,
		);
	});

	it("emacs: the buffer reloads, the report names the sandboxed pi by pid and namespace, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "Emacs reports src/a.ts");

		const piPid = await sandboxedWrite(env, file, "from_the_sandbox;");
		assert.equal(
			await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`),
			"from_the_sandbox;\n",
		);
		const report = ((e.readState()?.files ?? []) as SandboxReport[]).find((f) => f.file === file);
		assertSandboxedReport(report, piPid, INITIAL_PID_NAMESPACE);
	});

	it("jetbrains (headless driver): the buffer reloads, the report names the sandboxed pi, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const driver = await startJetBrainsDriver({ project: env.workDir, env: env.env, file, product: "IntelliJ IDEA" });
		t.after(() => driver.kill());

		const piPid = await sandboxedWrite(env, file, "from_the_sandbox;");
		const reply = await driver.command({ cmd: "buffer", file });
		assert.deepEqual(reply["buffer"], { text: "from_the_sandbox;\n", modified: false });
		const report = await pollUntil(() => {
			const s = JSON.parse(readFileSync(driver.stateFile, "utf8")) as { files?: SandboxReport[] };
			return s.files?.find((f) => f.file === file);
		}, "the driver's report");
		assertSandboxedReport(report, piPid, INITIAL_PID_NAMESPACE);
	});
});
