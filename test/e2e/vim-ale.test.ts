/**
 * Protocol v0.3 diagnostics from Vim end to end: real pi (print mode, fake model), real Vim 9 in tmux with a
 * real ALE (`packadd ale`) running a linter the test defines (test/helpers/vim-ale.ts: `bad` is an error,
 * `meh` a warning). pi's `edit` tool fixes the error ALE reported before and introduces a warning; Vim reloads
 * the buffer, ALE lints the new content, and the tool result of the same run carries the warning for the new
 * content, never the old error. With a linter that takes a while (0.6 s), pi still waits for it. And a
 * prompt's block lists the diagnostics ALE reported for the content the user sees.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, promptOnce, theBlock, touch } from "../helpers/scenario.ts";
import { startVim, type Vim } from "../helpers/vim.ts";
import { aleVimrc, setAleSlow } from "../helpers/vim-ale.ts";

const ORIGINAL = ["export const a = 1;", "export const b = bad;", "export const c = 3;"];

interface Diagnostics {
	version: number;
	total: number;
	items: { message: string }[];
}
const active = (s: Record<string, unknown>) =>
	s["active_buffer"] as { file: string; version: number; diagnostics: Diagnostics | null };

async function openWithAle(t: TestContext): Promise<{ env: PiEnv; vim: Vim; file: string; checker: string }> {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const checker = join(env.root, "checker");
	const vim = await startVim(t, {
		dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
		vimrc: aleVimrc(checker, ["typescript"]),
	});
	await vim.ex("edit src/app.ts");
	await vim.until(
		(s) => active(s).file === file && active(s).diagnostics?.items[0]?.message === "found bad",
		"ALE's error on the original content",
	);
	return { env, vim, file, checker };
}

/** The model's first answer: pi's `edit` fixing line 2 and making line 3 "meh". */
function editFixingAndBreaking(env: PiEnv, file: string): void {
	env.model.respond = toolsThenReply([
		{
			name: "edit",
			arguments: {
				path: file,
				edits: [
					{ oldText: "b = bad;", newText: "b = 2;" },
					{ oldText: "c = 3;", newText: "c = meh;" },
				],
			},
		},
	]);
}

describe("vim + ALE + pi", { concurrency: 2 }, () => {
	for (const slow of [0, 0.6]) {
		it(`after pi's edit the tool result carries ALE's diagnostic for the new content${slow ? ` (a linter taking ${slow} s)` : ""}, not the old one`, async (t) => {
			const { env, vim, file, checker } = await openWithAle(t);
			setAleSlow(checker, slow);
			editFixingAndBreaking(env, file);
			const result = await runPrint(env, [PROMPT]);
			assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
			const toolText = toolResults(env.model.requests[1]).join("\n");
			assert.match(toolText, /Vim reloaded .*app\.ts\. Diagnostics \(1 warning\):/, toolText);
			assert.match(toolText, /^- warning 3:18 found meh \[pikit\]$/m, toolText);
			assert.ok(!toolText.includes("found bad"), `the old error is not presented: ${toolText}`);
			assert.deepEqual(await vim.expr("getline(1, '$')"), [
				"export const a = 1;",
				"export const b = 2;",
				"export const c = meh;",
			]);
		});
	}

	it("a prompt's block lists ALE's diagnostics for the content the user sees", async (t) => {
		const { env } = await openWithAle(t);
		const block = theBlock(await promptOnce(env));
		assert.match(block, /\(Vim\)/);
		assert.match(block, /^Diagnostics \(1 error\):$/m, block);
		assert.match(block, /^- error 2:18 found bad \[pikit\]$/m, block);
	});
});
