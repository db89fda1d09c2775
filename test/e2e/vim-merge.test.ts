/**
 * Issue 26 items 2 and 3 end to end in Vim 9 (the Neovim twin: test/e2e/nvim-merge.test.ts): a real Vim in tmux, the
 * user's edit typed as keys and not saved, and a real pi whose fake model calls pi's own `edit` and `write`. pi's
 * change lands in the unsaved buffer beside the user's line (one typed `u` takes only pi's out), the disk has exactly
 * what the tool wrote, and the tool result says it was merged into the editor's unsaved buffer; a `write` touching
 * the user's line keeps the user's text and the result names the line and quotes it.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { it, type TestContext } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";
import { startVim } from "../helpers/vim.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);
/** Typed through tmux: no `;` (tmux's command separator at the end of an argument) and no quotes. */
const TYPED = "export const typed = 42 // UNSAVED IN VIM";

async function runTools(env: PiEnv, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
	env.model.respond = toolsThenReply(calls);
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	return toolResults(env.model.requests[1]).join("\n");
}

async function typedInVim(t: TestContext) {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const vim = await startVim(t, {
		dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
	});
	await vim.ex("edit src/app.ts");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "Vim reports src/app.ts");
	await vim.keys("3", "G", "c", "c");
	await vim.text(TYPED);
	await vim.keys("Escape");
	await vim.waitExpr(`mode() ==# 'n' && getline(3) ==# '${TYPED}'`);
	await vim.until((s) => (s["active_buffer"] as { modified: boolean }).modified, "Vim reports the unsaved change");
	return { env, vim, file };
}

it("vim + pi: an edit away from the typed line: both in the buffer, one u takes pi's out, the model told", async (t) => {
	const { env, vim, file } = await typedInVim(t);
	const toolText = await runTools(env, [
		{ name: "edit", arguments: { path: file, edits: [{ oldText: "// line 15", newText: "// line fifteen" }] } },
	]);
	const piText = `${ORIGINAL.map((l, i) => (i === 14 ? l.replace("line 15", "line fifteen") : l)).join("\n")}\n`;
	assert.equal(readFileSync(file, "utf8"), piText, "the disk has exactly what the tool wrote");
	assert.match(toolText, /merged this change into the editor's unsaved buffer/);
	const lines = await vim.expr<string[]>("getline(1, '$')");
	assert.equal(lines[2], TYPED);
	assert.equal(lines[14], "export const v15 = 15; // line fifteen");
	assert.equal(await vim.expr<number>("&modified"), 1);
	const tick = await vim.expr<number>("b:changedtick");
	await vim.keys("u");
	await vim.waitExpr(`b:changedtick != ${tick}`);
	const undone = await vim.expr<string[]>("getline(1, '$')");
	assert.equal(undone[2], TYPED, "the user's line stays");
	assert.equal(undone[14], ORIGINAL[14], "pi's line goes");
});

it("vim + pi: a write over the typed line: the user's text kept, the model told the line and the text", async (t) => {
	const { env, vim, file } = await typedInVim(t);
	const content = `${ORIGINAL.map((l, i) => (i === 2 ? "export const v3 = 'pi'; // line 3" : l)).join("\n")}\n`;
	const toolText = await runTools(env, [{ name: "write", arguments: { path: file, content } }]);
	assert.equal(readFileSync(file, "utf8"), content, "the disk has exactly what the tool wrote");
	assert.match(toolText, /Conflict/);
	assert.match(toolText, /line 3 of the user's unsaved buffer/);
	assert.ok(toolText.includes(TYPED), `the user's text quoted:\n${toolText}`);
	assert.match(toolText, /user decides/);
	assert.equal((await vim.expr<string[]>("getline(1, '$')"))[2], TYPED);
	assert.equal(await vim.expr<number>("&modified"), 1);
});
