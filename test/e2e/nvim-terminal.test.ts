/**
 * pi started in the `:terminal` of one of two Neovims open in the same project (where the tiers cannot choose)
 * connects to that Neovim, and a selection made just before switching to the terminal goes with the prompt.
 * Real Neovim (0.7.2 and 0.10, each with a UI attached as a GUI would), real pi in print mode typed into the
 * terminal's shell, the fake model recording what pi sent. Once with PI_IDE_EDITOR_PID (what the client
 * exports), once without it (pi's process ancestry). And a headless Neovim without a UI next to them is
 * never a candidate.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { forEachNvim, type Nvim, type NvimFlavour, pollUntil, startNvim } from "../helpers/nvim.ts";
import { MODEL_ARG, type PiEnv, PRODUCT_EXTENSION, WAIT_MS } from "../helpers/pi-env.ts";
import { envFor, fileLine, firstFence, promptOnce, theBlock, touch } from "../helpers/scenario.ts";

const LINES = Array.from({ length: 8 }, (_, i) => `export const a${i + 1} = ${i + 1}; // line-${i + 1}`);
const PROMPT = "Why_is_this_here";

async function editorIn(t: Parameters<typeof envFor>[0], flavour: NvimFlavour, env: PiEnv, file: string) {
	const nv = await startNvim(t, flavour, {
		cwd: env.workDir,
		runtimeDir: env.runtimeDir,
		env: env.env,
		preCmds: ["set shell=/bin/sh"],
	});
	await nv.command(`edit ${file}`);
	await nv.until((s) => s.active_buffer.file === join(env.workDir, file), `${file} open`);
	return nv;
}

/** Type a command line into the terminal window's shell (terminal mode), as the user would. */
async function typeInTerminal(nv: Nvim, line: string): Promise<void> {
	await nv.input("i");
	await nv.call("nvim_input", `${line}<CR>`);
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi in a Neovim terminal`, { concurrency: 2 }, () => {
		it("a headless Neovim without a UI (a script) is never listed: the Neovim with a UI is the only candidate", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			touch(env.workDir, "a.ts", "export const a = 1;\n");
			touch(env.workDir, "script.ts", "export const s = 1;\n");
			const script = await startNvim(t, flavour, { cwd: env.workDir, runtimeDir: env.runtimeDir, ui: false });
			await script.command("edit script.ts");
			await script.command("PiIde enable");
			await editorIn(t, flavour, env, "a.ts");
			assert.equal((await script.status()).writes, 0, "the script wrote nothing");
			assert.equal(fileLine(theBlock(await promptOnce(env))), join(env.workDir, "a.ts"));
		});

		for (const via of ["PI_IDE_EDITOR_PID", "process ancestry"] as const) {
			it(`connects to that Neovim (${via}); the selection made before switching goes along`, async (t) => {
				const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
				touch(env.workDir, "a.ts", `${LINES.join("\n")}\n`);
				touch(env.workDir, "b.ts", "export const b = 2;\n");
				const script = join(env.root, "run-pi.sh");
				writeFileSync(
					script,
					`exec ${join(env.env["PATH"]?.split(":")[0] ?? "", "pi")} -p --offline --no-session -e ${PRODUCT_EXTENSION} --model ${MODEL_ARG} "$@"\n`,
				);
				const other = await editorIn(t, flavour, env, "b.ts");
				const nv = await editorIn(t, flavour, env, "a.ts");
				// A terminal below, then back to a.ts: select lines 3-4, switch to the terminal (visual mode ends).
				await nv.command("botright split | terminal");
				await nv.command("wincmd p");
				await nv.input("3GVj");
				await nv.input("<C-w>p");
				const state = await nv.until(
					(s) => s.active_buffer.selection?.end.line === 4 && typeof s.active_buffer.selection.selected_at === "number",
					"the selection recorded while the terminal is focused",
				);
				assert.equal(state.active_buffer.file, join(env.workDir, "a.ts"), "the terminal describes the file left");
				assert.equal(await nv.call("nvim_get_option_value", "buftype", {}), "terminal");
				await other.until(() => true, "the other Neovim's file: two editors in one project");

				const unset = via === "process ancestry" ? "env -u PI_IDE_EDITOR_PID " : "";
				await typeInTerminal(nv, `${unset}sh ${script} ${PROMPT}`);
				await pollUntil(
					() => (env.model.requests.length > 0 ? true : undefined),
					() => "pi (in the terminal) to call the model",
					WAIT_MS,
				);
				const injected = injectedAfter(env.model.requests[0], PROMPT);
				assert.equal(injected.length, 1, `one block: ${JSON.stringify(injected)}`);
				const block = injected[0] as string;
				assert.equal(fileLine(block), join(env.workDir, "a.ts"));
				assert.match(block, /^Selection \(lines 3-4, made [^)]+ ago\):$/m);
				assert.equal(firstFence(block)?.body, LINES.slice(2, 4).join("\n"));
			});
		}
	});
});
