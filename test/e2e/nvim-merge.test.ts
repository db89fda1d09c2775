/**
 * Issue 26 items 2 and 3 end to end: a real Neovim with a UI, the user's edits typed as keys and not saved, and a real
 * pi whose fake model calls pi's own `edit` and `write`. pi's change lands in the unsaved buffer beside the user's
 * lines (one `u` takes only pi's out), the disk has exactly what the tool wrote, and the tool result says it was
 * merged into the editor's unsaved buffer; a `write` touching the user's line keeps the user's text and the result
 * names the line and quotes it. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { forEachNvim, type Nvim, startNvim } from "../helpers/nvim.ts";
import { type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);
const TYPED = "export const typed = 'UNSAVED BY THE USER';";

async function runTools(env: PiEnv, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
	env.model.respond = toolsThenReply(calls);
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	return toolResults(env.model.requests[1]).join("\n");
}

const bufferLines = (nv: Nvim) => nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");

async function typedInNvim(t: Parameters<typeof envFor>[0], flavour: Parameters<typeof startNvim>[1]) {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await nv.command("edit src/app.ts");
	await nv.until((s) => s.active_buffer.file === file && s.protocol === "0.3", "Neovim reports src/app.ts");
	await nv.input(`3Gcc${TYPED}<Esc>`);
	await nv.until((s) => s.active_buffer.modified, "Neovim reports the unsaved change");
	return { env, nv, file };
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi's edits merged into the user's unsaved buffer`, { concurrency: 2 }, () => {
		it("an edit away from the typed line: both in the buffer, one u takes pi's out, the model told", async (t) => {
			const { env, nv, file } = await typedInNvim(t, flavour);
			const toolText = await runTools(env, [
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "// line 15", newText: "// line fifteen" }] } },
			]);
			const piText = `${ORIGINAL.map((l, i) => (i === 14 ? l.replace("line 15", "line fifteen") : l)).join("\n")}\n`;
			assert.equal(readFileSync(file, "utf8"), piText, "the disk has exactly what the tool wrote");
			assert.match(toolText, /merged this change into the editor's unsaved buffer/);
			const lines = await bufferLines(nv);
			assert.equal(lines[2], TYPED);
			assert.equal(lines[14], "export const v15 = 15; // line fifteen");
			assert.equal(await nv.lua("return vim.bo.modified"), true);
			assert.equal((await nv.call<{ blocking: boolean }>("nvim_get_mode")).blocking, false, "no prompt");
			await nv.input("u");
			const undone = await bufferLines(nv);
			assert.equal(undone[2], TYPED, "the user's line stays");
			assert.equal(undone[14], ORIGINAL[14], "pi's line goes");
		});

		it("a write over the typed line: the user's text kept, the model told the line and the text", async (t) => {
			const { env, nv, file } = await typedInNvim(t, flavour);
			const content = `${ORIGINAL.map((l, i) => (i === 2 ? "export const v3 = 'pi'; // line 3" : l)).join("\n")}\n`;
			const toolText = await runTools(env, [{ name: "write", arguments: { path: file, content } }]);
			assert.equal(readFileSync(file, "utf8"), content, "the disk has exactly what the tool wrote");
			assert.match(toolText, /Conflict/);
			assert.match(toolText, /line 3 of the user's unsaved buffer/);
			assert.ok(toolText.includes(TYPED), `the user's text quoted:\n${toolText}`);
			assert.match(toolText, /user decides/);
			assert.equal((await bufferLines(nv))[2], TYPED);
			assert.equal(await nv.lua("return vim.bo.modified"), true);
		});
	});
});
