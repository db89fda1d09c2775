/**
 * End to end with a real Neovim running the client and a real pi talking to the fake model: lines selected in
 * Neovim reach the model exactly; with the file matched by an ignore rule, nothing about it does. Once per
 * Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { requestMessages } from "../helpers/fake-llm.ts";
import { binaryishLines, forEachNvim, type NvimFlavour, startNvim } from "../helpers/nvim.ts";
import type { PiEnv } from "../helpers/pi-env.ts";
import { assertNoBlock, envFor, fileLine, firstFence, promptOnce, theBlock, touch } from "../helpers/scenario.ts";

const LINES = Array.from({ length: 12 }, (_, i) => `export const value${i + 1} = ${(i + 1) * 7}; // marker-${i + 1}`);

/** pi's env plus a Neovim in pi's work dir with src/calc.ts open and lines 4-6 selected (visual mode left). */
async function selectInNvim(t: TestContext, flavour: NvimFlavour, env: PiEnv): Promise<string> {
	const file = touch(env.workDir, "src/calc.ts", `${LINES.join("\n")}\n`);
	const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await nv.command("edit src/calc.ts");
	await nv.input("4GVjj<Esc>");
	const s = await nv.until(
		(x) => x.active_buffer.file === file && x.active_buffer.selection?.end.line === 6,
		"lines 4-6 selected in Neovim",
	);
	assert.equal(s.cwd, env.workDir);
	assert.equal(typeof s.active_buffer.selection?.selected_at, "number");
	return file;
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name} + pi + fake model`, { concurrency: 4 }, () => {
		it("the model receives exactly the lines selected in Neovim", async (t) => {
			const env = await envFor(t);
			const file = await selectInNvim(t, flavour, env);
			const block = theBlock(await promptOnce(env));
			assert.equal(fileLine(block), file);
			assert.match(block, /^Language: typescript$/m);
			assert.match(block, /^Selection \(lines 4-6, made [^)]+ ago\):$/m);
			assert.equal(firstFence(block)?.body, LINES.slice(3, 6).join("\n"));
		});

		it("ggVG on a 3 MB file with binary-ish bytes: still connected, and the block says the editor cut it", async (t) => {
			const env = await envFor(t);
			const lines = binaryishLines(3_000_000);
			const file = touch(env.workDir, "dump.txt", `${lines.join("\n")}\n`);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit dump.txt");
			await nv.input("ggVG");
			const s = await nv.until((x) => x.active_buffer.selection?.end.line === lines.length, "ggVG written");
			assert.equal(s.active_buffer.selection?.truncated, true);
			assert.ok(statSync(nv.statePath).size < 1024 * 1024, "under pi's 1 MiB limit");
			const block = theBlock(await promptOnce(env));
			assert.equal(fileLine(block), file);
			assert.match(
				block,
				new RegExp(
					`^Selection \\(lines 1-${lines.length}, made [^;]+ ago; cut by the editor to \\d+ KiB; cut to the first \\d+ of \\d+ lines`,
					"m",
				),
			);
			assert.ok(firstFence(block)?.body.startsWith(lines[0] ?? "?"), "the selection's first line reaches the model");
		});

		it("a file matched by an ignore rule: no block, no selected text anywhere in the request", async (t) => {
			const env = await envFor(t);
			writeFileSync(join(env.agentDir, "ide-context.ignore"), "src/calc.ts\n");
			await selectInNvim(t, flavour, env);
			const outcome = await promptOnce(env);
			assertNoBlock(outcome);
			const everything = JSON.stringify(requestMessages(env.model.requests[0]));
			for (const marker of ["marker-4", "marker-5", "marker-6", "calc.ts"]) {
				assert.ok(!everything.includes(marker), `${marker} must not reach the model`);
			}
		});
	});
});
