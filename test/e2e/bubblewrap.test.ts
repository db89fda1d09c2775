/**
 * pi under bubblewrap beside a Neovim on the host (issue 23): a container-like root (test/helpers/bwrap.ts), the
 * project bound at /workspace/<name>, the state directory at the same path, a new pid namespace. The editor
 * reports host paths; pi shows the model only paths its own tools open, and writes back the editor's paths.
 * Learnt from /proc/self/mountinfo by itself, or from `ideContext.paths` where the mount does not tell (a project
 * on another file system: the mount's root names that file system's directory, not the host's path).
 * pi runs at a pid that no process has on the host (test/helpers/sandbox.ts: a shell inside sets ns_last_pid), not
 * at 2, which is live on the host too (kthreadd): an editor that judged a sandboxed pi's pid from the host would
 * refuse its messages, so the reload and the approval here need the editor to follow pi's identity (pid, pid_ns)
 * (issue 23 items 3-4). The reports and the approval request name that pid, dead on the host.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { INITIAL_PID_NAMESPACE } from "../../src/protocol/liveness.ts";
import { readOwnPidNamespace } from "../../src/protocol/state-dir.ts";
import { bwrapArgs, sandboxProject } from "../helpers/bwrap.ts";
import { DEFAULT_REPLY, injectedAfter, type RecordedRequest, toolResults } from "../helpers/fake-llm.ts";
import { NVIM_MATRIX, type Nvim, startNvim } from "../helpers/nvim.ts";
import { type PiEnv, runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { hostDeadPid, isAlive, toolResultFor, writeAsAsked } from "../helpers/sandbox.ts";
import { envFor, fileLine, PROMPT, touch } from "../helpers/scenario.ts";

const flavour = NVIM_MATRIX[0];
const CONTENT = "export const fromTheHost = 42;\n";

/** Every request pi sent, as text: no host path of the project may appear in any. */
const everything = (requests: readonly RecordedRequest[]) => JSON.stringify(requests);

/** pi under bubblewrap at a pid dead on the host, checked again after the run; returns that pid. */
async function sandboxedPrompt(env: PiEnv, project: string, prompt = PROMPT): Promise<number> {
	const piPid = hostDeadPid();
	const result = await runPrint(env, [prompt], [], { wrap: bwrapArgs(env, project, { piPid }) });
	assert.equal(result.code, 0, `pi under bwrap failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host: judging it would refuse pi's messages`);
	return piPid;
}

async function nvimIn(t: Parameters<typeof envFor>[0], env: PiEnv, cwd: string, file: string): Promise<Nvim> {
	assert.ok(flavour);
	const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd });
	await nv.command(`edit ${file}`);
	await nv.until((s) => s.active_buffer.file === file && s.protocol !== undefined, `Neovim reports ${file}`);
	return nv;
}

describe("pi under bubblewrap, the project at /workspace/<name>", () => {
	it("mountinfo tells: the block, the model's read, pi's edit reloading the host buffer; no host path in any request", async (t) => {
		const env = await envFor(t);
		const hostFile = touch(env.workDir, "src/main.ts", CONTENT);
		const inside = `${sandboxProject(env.workDir)}/src/main.ts`;
		const nv = await nvimIn(t, env, env.workDir, hostFile);
		// A checker on the buffer (clean after every change or reload), so the tool result says what Neovim did.
		await nv.lua(
			`local buf = vim.api.nvim_get_current_buf()
			local ns = vim.api.nvim_create_namespace("bwrap-lint")
			vim.b[buf].pi_ide_diagnostics_expected = true
			local function lint() vim.schedule(function() vim.diagnostic.set(ns, buf, {}) end) end
			vim.api.nvim_buf_attach(buf, false, { on_lines = lint, on_reload = lint })
			lint()`,
		);
		env.model.respond = (_request, index) => {
			if (index === 0) return { toolCalls: [{ name: "read", arguments: { path: inside } }] };
			if (index === 1)
				return {
					toolCalls: [{ name: "edit", arguments: { path: inside, edits: [{ oldText: "42", newText: "43" }] } }],
				};
			return { text: DEFAULT_REPLY };
		};
		const piPid = await sandboxedPrompt(env, env.workDir);

		const [first, second, third] = env.model.requests;
		const block = injectedAfter(first, PROMPT);
		assert.equal(block.length, 1, JSON.stringify(block));
		assert.equal(fileLine(block[0] ?? ""), inside, "the block names the file as pi's tools open it");
		assert.match(toolResults(second).join("\n"), /fromTheHost = 42/, "the model's read of that path worked");
		const note = toolResults(third).join("\n");
		assert.match(note, /Successfully replaced/);
		// The editor's report names its own path: read in pi's, it answers pi's edit (never "did not answer").
		assert.ok(note.includes(`Neovim reloaded ${inside}: no diagnostics for the new content.`), note);
		assert.ok(!everything(env.model.requests).includes(env.workDir), "no host path of the project in any request");
		// pi's message named the file as the editor knows it: the open, unmodified buffer was reloaded.
		assert.equal(readFileSync(hostFile, "utf8"), "export const fromTheHost = 43;\n");
		await pollUntil(
			async () =>
				(await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))[0]?.includes("43") || undefined,
			() => "the host buffer shows pi's edit",
		);
		const state = await nv.until((s) => (s.files ?? []).some((f) => f.file === hostFile), "a report on src/main.ts");
		const report = state.files?.find((f) => f.file === hostFile);
		assert.equal(report?.status, "reloaded");
		assert.equal(report?.pi_pid, piPid, "the report names pi by its pid inside, dead on the host");
		assert.match(report?.pi_ns ?? "", /^pid:\[\d+\]$/);
		assert.notEqual(report?.pi_ns, readOwnPidNamespace() ?? INITIAL_PID_NAMESPACE, "pi's namespace, not the host's");
	});

	it("approval: Neovim is asked about the file as it knows it, and its approval applies pi's edit", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits", approveTimeoutSeconds: 60 } } });
		const hostFile = touch(env.workDir, "notes.txt", "alpha\nbeta\n");
		assert.ok(flavour);
		const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command("edit notes.txt");
		await nv.until((s) => s.active_buffer.file === hostFile && Array.isArray(s.decisions), "Neovim answers approvals");
		const inside = `${sandboxProject(env.workDir)}/notes.txt`;
		env.model.respond = (_request, index) =>
			index === 0
				? { toolCalls: [{ name: "edit", arguments: { path: inside, edits: [{ oldText: "beta", newText: "BETA" }] } }] }
				: { text: DEFAULT_REPLY };
		const piPid = hostDeadPid();
		const run = runPrint(env, [PROMPT], [], { wrap: bwrapArgs(env, env.workDir, { piPid }) });
		const pending = await pollUntil(
			async () =>
				(await nv.lua<{ file: string; pi_pid: number } | null>(
					'for _, r in pairs(require("pi-ide.approval")._state().pending) do return { file = r.file, pi_pid = r.pi_pid } end return nil',
				)) ?? undefined,
			"Neovim has pi's request",
			WAIT_MS,
		);
		assert.deepEqual(
			pending,
			{ file: hostFile, pi_pid: piPid },
			"asked by the sandboxed pi, at a pid dead on the host",
		);
		await nv.command("PiIde approve");
		const result = await run;
		assert.equal(result.code, 0, result.stderr);
		assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host`);
		assert.equal(readFileSync(hostFile, "utf8"), "alpha\nBETA\n");
		assert.match(
			toolResults(env.model.requests[1]).join("\n"),
			/the user approved this change to notes\.txt in Neovim/,
		);
	});

	it("coexistence: a host pi and a bwrap pi at once both get Neovim and both writes reload", async (t) => {
		const env = await envFor(t);
		const hostFile = touch(env.workDir, "src/host.ts", CONTENT);
		const boxFile = touch(env.workDir, "src/box.ts", CONTENT);
		const boxInside = `${sandboxProject(env.workDir)}/src/box.ts`;
		const nv = await nvimIn(t, env, env.workDir, boxFile);
		await nv.command(`split ${hostFile}`); // both buffers loaded and shown
		await nv.until((s) => s.active_buffer.file === hostFile, "Neovim reports src/host.ts");

		const piPid = hostDeadPid();
		env.model.respond = writeAsAsked;
		const [host, box] = await Promise.all([
			runPrint(env, [`WRITE ${hostFile} from_the_host;`]),
			runPrint(env, [`WRITE ${boxInside} from_the_sandbox;`], [], { wrap: bwrapArgs(env, env.workDir, { piPid }) }),
		]);
		assert.equal(host.code, 0, host.stderr);
		assert.equal(box.code, 0, box.stderr);
		assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host`);
		for (const [file, called, text] of [
			[hostFile, hostFile, "from_the_host;"],
			[boxFile, boxInside, "from_the_sandbox;"],
		] as const) {
			const toolText = toolResultFor(env.model.requests, called);
			assert.match(toolText, /Successfully wrote/, `${called}: ${toolText}`);
			assert.doesNotMatch(toolText, /did not answer|not reloaded/, toolText);
			assert.equal(readFileSync(file, "utf8"), `${text}\n`);
			assert.deepEqual(
				await nv.lua<string[]>(
					`return vim.api.nvim_buf_get_lines(vim.fn.bufnr(${JSON.stringify(file)}), 0, -1, false)`,
				),
				[text],
				`${file} reloaded`,
			);
		}
		const files = ((await nv.until((s) => (s.files ?? []).length >= 2, "two reports")).files ?? []) as {
			file: string;
			status: string;
			pi_pid?: number;
			pi_ns?: string;
		}[];
		const boxReport = files.find((f) => f.file === boxFile);
		assert.equal(boxReport?.pi_pid, piPid, "the bwrap pi's report: its pid inside");
		assert.match(boxReport?.pi_ns ?? "", /^pid:\[\d+\]$/);
		const hostPi = files.find((f) => f.file === hostFile)?.pi_pid;
		assert.ok(hostPi !== undefined && hostPi !== piPid, `the host pi's report names the host pi: ${hostPi}`);
		const hostNs = files.find((f) => f.file === hostFile)?.pi_ns ?? INITIAL_PID_NAMESPACE;
		assert.notEqual(hostNs, boxReport?.pi_ns, "two pis, two namespaces");
	});

	it("ignore rules name pi's paths; a host file outside every mapped directory is never shown", async (t) => {
		const env = await envFor(t);
		// A rule written for pi's view: anchored at pi's project, as pi sees it.
		writeFileSync(join(env.agentDir, "ide-context.ignore"), "/src/secret.ts\n");
		const main = touch(env.workDir, "src/main.ts", CONTENT);
		const secret = touch(env.workDir, "src/secret.ts", "export const token = 'SECRET-IN-PROJECT';\n");
		const nv = await nvimIn(t, env, env.workDir, main);
		const prompt = async (): Promise<string[]> => {
			env.model.requests.length = 0;
			await sandboxedPrompt(env, env.workDir);
			return injectedAfter(env.model.requests.at(-1), PROMPT);
		};
		const open = async (file: string) => {
			await nv.command(`edit ${file}`);
			await nv.until((s) => s.active_buffer.file === file, `Neovim reports ${file}`);
		};
		const block = await prompt();
		assert.equal(fileLine(block[0] ?? ""), `${sandboxProject(env.workDir)}/src/main.ts`, "connected: a block");

		await open(secret);
		assert.deepEqual(await prompt(), [], "the ignored file: no block");
		assert.ok(!everything(env.model.requests).includes("SECRET-IN-PROJECT"));

		// A file of the host that no mount brings into the sandbox: nothing pi's tools could open.
		const outside = touch(env.root, "elsewhere/notes.md", "HOST-ONLY-NOTES\n");
		await open(outside);
		assert.deepEqual(await prompt(), [], "the host-only file: no block");
		const sent = everything(env.model.requests);
		assert.ok(!sent.includes(env.root) && !sent.includes("HOST-ONLY"), "no host path in any request");
	});

	it("mountinfo does not tell (another file system): ideContext.paths maps the project", async (t) => {
		const env = await envFor(t);
		// /dev/shm is a tmpfs: its mount's root field names /<dir>, not the host's /dev/shm/<dir>.
		const shm = mkdtempSync("/dev/shm/pi-ide-bwrap-");
		t.after(() => rmSync(shm, { recursive: true, force: true }));
		const project = join(shm, "proj");
		mkdirSync(project);
		const hostFile = touch(project, "src/main.ts", CONTENT);
		await nvimIn(t, env, project, hostFile);

		await sandboxedPrompt(env, project);
		assert.deepEqual(injectedAfter(env.model.requests.at(-1), PROMPT), [], "without the setting: no match, no block");

		env.writeSettings({ ideContext: { paths: { [project]: sandboxProject(project) } } });
		env.model.requests.length = 0;
		await sandboxedPrompt(env, project);
		const block = injectedAfter(env.model.requests.at(-1), PROMPT);
		assert.equal(block.length, 1, JSON.stringify(block));
		assert.equal(fileLine(block[0] ?? ""), `${sandboxProject(project)}/src/main.ts`);
		assert.ok(!everything(env.model.requests).includes(project), "no host path of the project in any request");
	});
});
