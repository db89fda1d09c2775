/**
 * The Vim client end to end with real pi (print mode, fake model): pi reads Vim's state file and the model
 * gets the file, cursor and fresh selection; pi's `write` tool reloads the open buffer in Vim (cursor kept)
 * and Vim's report reaches pi in time (no "did not answer" note in the tool result); with approval on
 * (`ideContext.approve: "edits"`), pi's edit waits until `:PiIde approve` or `:PiIde reject` in Vim and the
 * model reads which; review and undo (v0.4): over two runs of pi's edits Vim marks the newest run's hunks,
 * lists them in the quickfix list, reverts one in the buffer (never on disk, `u` brings it back), refuses one
 * the user edited, and the next prompt tells the model; and the zero-config path: `pi install`, one pi start, then a plain `vim` loads the client
 * pi linked into `~/.vim/pack`.
 */
import assert from "node:assert/strict";
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { type PiEnv, REPO, runPi, runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { envFor, PROMPT, promptOnce, theBlock, touch } from "../helpers/scenario.ts";
import { startVim, VIM_PLUGIN_DIR, type Vim, vimString } from "../helpers/vim.ts";

const ORIGINAL = Array.from({ length: 12 }, (_, i) => `export const v${i + 1} = ${i + 1};`);

async function openInVim(
	t: TestContext,
	settings?: Record<string, unknown>,
): Promise<{ env: PiEnv; vim: Vim; file: string }> {
	const env = await envFor(t, settings ? { settings } : {});
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const vim = await startVim(t, {
		dirs: {
			root: env.root,
			run: env.runtimeDir,
			home: env.home,
			work: env.workDir,
			stateDir: env.stateDir,
		},
	});
	await vim.ex("edit src/app.ts");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "Vim reports src/app.ts");
	return { env, vim, file };
}

describe("vim + pi", { concurrency: 2 }, () => {
	it("pi reads Vim's state file: the model gets the file, cursor and the selection just made", async (t) => {
		const { env, vim, file } = await openInVim(t);
		await vim.keys("3G", "V", "j", "Escape");
		await vim.waitExpr("mode() ==# 'n' && line(\"'>\") == 4");
		await vim.until(
			(s) =>
				(s["active_buffer"] as { selection: { text: string } | null }).selection?.text ===
				ORIGINAL.slice(2, 4).join("\n"),
			"the selection is written",
		);
		const block = theBlock(await promptOnce(env));
		assert.match(block, /\(Vim\)/);
		assert.match(block, new RegExp(`^File: ${file}$`, "m"));
		assert.match(block, /^Language: typescript$/m);
		assert.match(block, /^Cursor: line 4, column 1$/m);
		assert.match(block, /^Selection \(lines 3-4, made \d+ s ago\):$/m);
		assert.ok(block.includes(ORIGINAL.slice(2, 4).join("\n")), block);
	});

	it("pi's write reloads the open buffer in Vim, cursor kept, and Vim's report arrives in time", async (t) => {
		const { env, vim, file } = await openInVim(t);
		await vim.keys("10G", "3", "l");
		await vim.waitExpr("line('.') == 10 && col('.') == 4");
		const next = ORIGINAL.map((l, i) => (i === 4 ? "export const v5 = 'changed by pi';" : l));
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: `${next.join("\n")}\n` } }]);
		const result = await runPrint(env, [PROMPT]);
		assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
		const toolText = toolResults(env.model.requests[1]).join("\n");
		assert.match(toolText, /Successfully wrote/);
		assert.doesNotMatch(toolText, /did not answer/, toolText);
		await vim.waitExpr(`getline(5) ==# "export const v5 = 'changed by pi';"`);
		assert.deepEqual(await vim.expr("getline(1, '$')"), next);
		assert.deepEqual(await vim.expr("[line('.'), col('.'), &modified]"), [10, 4, 0]);
		const state = await vim.until(
			(s) => ((s["files"] as { file: string }[] | undefined) ?? []).some((f) => f.file === file),
			"a report on src/app.ts",
		);
		const report = (state["files"] as { file: string; status: string; version: number }[]).find((f) => f.file === file);
		assert.equal(report?.status, "reloaded");
		assert.equal(report?.version, (state["active_buffer"] as { version: number }).version);
		assert.equal(join(env.workDir, "src/app.ts"), file);
	});
});

const APPROVALS: {
	/** What the user does in Vim; null: nothing, the timeout ends pi's wait. */
	command: string | null;
	timeoutS: number;
	content: (original: string, edited: string) => string;
	told: RegExp;
}[] = [
	{
		command: "PiIde approve",
		timeoutS: 60,
		content: (_original, edited) => edited,
		told: /the user approved this change to src\/app\.ts in Vim/,
	},
	{
		command: "PiIde reject",
		timeoutS: 60,
		content: (original) => original,
		told: /The user rejected this change in Vim: src\/app\.ts is unchanged\. Do not make it again/,
	},
	{
		command: null,
		// Long enough for Vim's 500 ms poll to see the request under load before pi's wait ends.
		timeoutS: 4,
		content: (original) => original,
		told: /No decision within 4 s .*src\/app\.ts is unchanged\. This is not a rejection: ask the user/,
	},
];

describe("vim + pi: approval on (v0.4)", { concurrency: 3 }, () => {
	for (const c of APPROVALS)
		it(`pi's edit waits for Vim; ${c.command ? `:${c.command} decides` : "no answer: the timeout, no rejection"}, and the model reads it`, async (t) => {
			const { env, vim, file } = await openInVim(t, {
				ideContext: { approve: "edits", approveTimeoutSeconds: c.timeoutS },
			});
			await vim.until((s) => Array.isArray(s["decisions"]), "Vim says it answers approvals");
			const original = readFileSync(file, "utf8");
			const edited = original.replace("export const v2 = 2;", "export const v2 = 'by pi';");
			env.model.respond = toolsThenReply([
				{
					name: "edit",
					arguments: {
						path: file,
						edits: [{ oldText: "export const v2 = 2;", newText: "export const v2 = 'by pi';" }],
					},
				},
			]);
			// pi -p has no dialog of its own: Vim alone is asked.
			const ran = runPrint(env, ["change v2"]);
			// pi starts and the model answers first: that takes pi's own wait under load, not a Vim one.
			await vim.waitExpr("pi_ide#Statusline() =~# 'approve?'", WAIT_MS);
			assert.equal(readFileSync(file, "utf8"), original, "nothing written while pi waits");
			if (c.command) await vim.ex(c.command);
			const result = await ran;
			assert.equal(result.code, 0, result.stderr);
			assert.equal(readFileSync(file, "utf8"), c.content(original, edited));
			assert.match(toolResults(env.model.requests[1]).join("\n"), c.told);
			await vim.waitExpr("pi_ide#Statusline() !~# 'approve?'");
			await vim.waitExpr(`getline(2) ==# ${vimString(c.content(original, edited).split("\n")[1] ?? "")}`);
		});
});

describe("zero-config Vim", () => {
	it("pi install + one pi start, then a plain `vim` (no vimrc, no plugin manager) writes its state file", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", REPO]);
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const run = await runPrint(env, [PROMPT], [], { extension: null });
		assert.equal(run.code, 0, run.stderr);
		const link = join(env.home, ".vim/pack/pi-ide-context/start/pi-ide");
		assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a link`);
		assert.equal(realpathSync(link), realpathSync(VIM_PLUGIN_DIR));

		const file = touch(env.workDir, "notes.md", "# notes\n");
		const vim = await startVim(t, {
			dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
			zeroConfig: true,
			args: ["notes.md"],
		});
		const s = await vim.until((x) => (x["active_buffer"] as { file: string }).file === file, "the state file", 10_000);
		assert.equal(s["app"], "vim");
		assert.equal(s["pid"], vim.pid);
		assert.equal((s["active_buffer"] as { language: string }).language, "markdown");
		await vim.quit();
		assert.equal(vim.state(), undefined, "removed on exit");
	});
});
