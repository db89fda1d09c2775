/**
 * pi under bubblewrap beside a Neovim on the host (issue 23): a container-like root (test/helpers/bwrap.ts), the
 * project bound at /workspace/<name>, the state directory at the same path, a new pid namespace. The editor
 * reports host paths; pi shows the model only paths its own tools open, and writes back the editor's paths.
 * Learnt from /proc/self/mountinfo by itself, or from `ideContext.paths` where the mount does not tell (a project
 * on another file system: the mount's root names that file system's directory, not the host's path).
 * pi is pid 2 inside (bwrap is 1), a pid that is live on the host too (kthreadd): the editor's reload of pi's edit
 * here tests the paths pi's message names, not how an editor judges a sandboxed pi's liveness (issue 23 item 3).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bwrapArgs, sandboxProject } from "../helpers/bwrap.ts";
import { DEFAULT_REPLY, injectedAfter, type RecordedRequest, toolResults } from "../helpers/fake-llm.ts";
import { NVIM_MATRIX, type Nvim, startNvim } from "../helpers/nvim.ts";
import { type PiEnv, runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, fileLine, PROMPT, touch } from "../helpers/scenario.ts";

const flavour = NVIM_MATRIX[0];
const CONTENT = "export const fromTheHost = 42;\n";

/** Every request pi sent, as text: no host path of the project may appear in any. */
const everything = (requests: readonly RecordedRequest[]) => JSON.stringify(requests);

async function sandboxedPrompt(env: PiEnv, project: string): Promise<void> {
	const result = await runPrint(env, [PROMPT], [], { wrap: bwrapArgs(env, project) });
	assert.equal(result.code, 0, `pi under bwrap failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
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
		await sandboxedPrompt(env, env.workDir);

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
		assert.equal(state.files?.find((f) => f.file === hostFile)?.status, "reloaded");
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
		const run = runPrint(env, [PROMPT], [], { wrap: bwrapArgs(env) });
		const pending = await pollUntil(
			async () =>
				(await nv.lua<string | null>(
					'for _, r in pairs(require("pi-ide.approval")._state().pending) do return r.file end return nil',
				)) ?? undefined,
			"Neovim has pi's request",
			WAIT_MS,
		);
		assert.equal(pending, hostFile);
		await nv.command("PiIde approve");
		const result = await run;
		assert.equal(result.code, 0, result.stderr);
		assert.equal(readFileSync(hostFile, "utf8"), "alpha\nBETA\n");
		assert.match(
			toolResults(env.model.requests[1]).join("\n"),
			/the user approved this change to notes\.txt in Neovim/,
		);
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
