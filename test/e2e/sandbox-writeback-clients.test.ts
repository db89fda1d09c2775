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
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { hostDeadPid, isAlive, sandboxAt, toolResultFor, writeAsAsked } from "../helpers/sandbox.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startVim } from "../helpers/vim.ts";

const ORIGINAL = "export const a = 1;\n";

interface Report {
	file: string;
	status: string;
	pi_pid?: number;
	pi_ns?: string;
}

describe("write-back from a sandbox: a real pi under unshare --pid writes a file open in Vim, Emacs, JetBrains", () => {
	it("vim: the buffer reloads, the report names the sandboxed pi by pid and namespace, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const vim = await startVim(t, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		});
		await vim.ex("edit src/a.ts");
		await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "Vim reports src/a.ts");

		const piPid = hostDeadPid();
		env.model.respond = writeAsAsked;
		const result = await runPrint(env, [`WRITE ${file} from_the_sandbox;`], [], { wrap: sandboxAt(piPid) });
		assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
		assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host: judging it would have refused pi's message`);

		const toolText = toolResultFor(env.model.requests, file);
		assert.match(toolText, /Successfully wrote/, toolText);
		assert.doesNotMatch(toolText, /did not answer|not reloaded/, toolText);
		assert.deepEqual(await vim.expr<string[]>("getline(1, '$')"), ["from_the_sandbox;"]);
		const report = ((vim.state()?.["files"] as Report[] | undefined) ?? []).find((f) => f.file === file);
		assert.equal(report?.status, "reloaded");
		assert.equal(report?.pi_pid, piPid, "the report names pi by the pid it has in its namespace");
		assert.match(report?.pi_ns ?? "", /^pid:\[\d+\]$/);
		assert.notEqual(report?.pi_ns, INITIAL_PID_NAMESPACE, "pi's namespace, not the host's");
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

		const piPid = hostDeadPid();
		env.model.respond = writeAsAsked;
		const [host, box] = await Promise.all([
			runPrint(env, [`WRITE ${hostFile} from_the_host;`]),
			runPrint(env, [`WRITE ${boxFile} from_the_sandbox;`], [], { wrap: sandboxAt(piPid) }),
		]);
		assert.equal(host.code, 0, host.stderr);
		assert.equal(box.code, 0, box.stderr);
		for (const [file, text] of [
			[hostFile, "from_the_host;"],
			[boxFile, "from_the_sandbox;"],
		] as const) {
			const toolText = toolResultFor(env.model.requests, file);
			assert.match(toolText, /Successfully wrote/, `${file}: ${toolText}`);
			assert.doesNotMatch(toolText, /did not answer|not reloaded/, toolText);
			assert.deepEqual(
				await vim.expr<string[]>(`getbufline(bufnr(${JSON.stringify(file)}), 1, "$")`),
				[text],
				`${file} reloaded`,
			);
		}
		const reports = (vim.state()?.["files"] as Report[] | undefined) ?? [];
		const boxReport = reports.find((f) => f.file === boxFile);
		const hostReport = reports.find((f) => f.file === hostFile);
		assert.equal(boxReport?.pi_pid, piPid);
		assert.match(boxReport?.pi_ns ?? "", /^pid:\[\d+\]$/);
		assert.notEqual(hostReport?.pi_ns ?? INITIAL_PID_NAMESPACE, boxReport?.pi_ns, "two pis, two namespaces");
	});

	it("emacs: the buffer reloads, the report names the sandboxed pi by pid and namespace, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await e.act(`(find-file ${elispString(file)})`);
		await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "Emacs reports src/a.ts");

		const piPid = hostDeadPid();
		env.model.respond = writeAsAsked;
		const result = await runPrint(env, [`WRITE ${file} from_the_sandbox;`], [], { wrap: sandboxAt(piPid) });
		assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
		assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host: judging it would have refused pi's message`);

		const toolText = toolResultFor(env.model.requests, file);
		assert.match(toolText, /Successfully wrote/, toolText);
		assert.doesNotMatch(toolText, /did not answer|not reloaded/, toolText);
		assert.equal(
			await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`),
			"from_the_sandbox;\n",
		);
		const report = ((e.readState()?.files ?? []) as Report[]).find((f) => f.file === file);
		assert.equal(report?.status, "reloaded");
		assert.equal(report?.pi_pid, piPid, "the report names pi by the pid it has in its namespace");
		assert.match(report?.pi_ns ?? "", /^pid:\[\d+\]$/);
		assert.notEqual(report?.pi_ns, INITIAL_PID_NAMESPACE, "pi's namespace, not the host's");
	});

	it("jetbrains (headless driver): the buffer reloads, the report names the sandboxed pi, pi hears in time", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/a.ts", ORIGINAL);
		const driver = await startJetBrainsDriver({ project: env.workDir, env: env.env, file, product: "IntelliJ IDEA" });
		t.after(() => driver.kill());

		const piPid = hostDeadPid();
		env.model.respond = writeAsAsked;
		const result = await runPrint(env, [`WRITE ${file} from_the_sandbox;`], [], { wrap: sandboxAt(piPid) });
		assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
		assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host: judging it would have refused pi's message`);

		const toolText = toolResultFor(env.model.requests, file);
		assert.match(toolText, /Successfully wrote/, toolText);
		assert.doesNotMatch(toolText, /did not answer|not reloaded/, toolText);
		const reply = await driver.command({ cmd: "buffer", file });
		assert.deepEqual(reply["buffer"], { text: "from_the_sandbox;\n", modified: false });
		const report = await pollUntil(() => {
			const s = JSON.parse(readFileSync(driver.stateFile, "utf8")) as { files?: Report[] };
			return s.files?.find((f) => f.file === file);
		}, "the driver's report");
		assert.equal(report.status, "reloaded");
		assert.equal(report.pi_pid, piPid, "the report names pi by the pid it has in its namespace");
		assert.match(report.pi_ns ?? "", /^pid:\[\d+\]$/);
		assert.notEqual(report.pi_ns, INITIAL_PID_NAMESPACE, "pi's namespace, not the host's");
	});
});
