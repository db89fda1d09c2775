/**
 * Protocol v0.3 with a real language server: Neovim (0.10, and 0.7.2 where reloads close and reopen the
 * document and the server first publishes an empty "clear") runs vscode-json-language-server (the
 * vscode-langservers-extracted devDependency) on a JSON file; pi's fake model edits the file with pi's `edit`
 * tool. The edit fixes the error the server reported before and introduces another: the model must receive
 * the server's diagnostic for the new content in the tool result of the same run, and never the old one.
 * Detection is the product's own: an attached LSP client means `diagnostics_expected`.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DEFAULT_REPLY, type FakeReply, toolResults } from "../helpers/fake-llm.ts";
import { NVIM_MATRIX, requireBin, startNvim } from "../helpers/nvim.ts";
import { BIN, runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const SERVER = join(BIN, "vscode-json-language-server");

for (const flavour of NVIM_MATRIX) {
	describe(`nvim ${flavour.name} + vscode-json-language-server + pi`, () => {
		it("after pi's edit the model gets the server's diagnostic for the new content, not the old one", async (t) => {
			requireBin(flavour);
			assert.ok(existsSync(SERVER), `${SERVER} is missing: npm ci installs vscode-langservers-extracted`);
			const env = await envFor(t);
			const file = touch(env.workDir, "config.json", '{\n  "name": "demo"\n  "port": 8080\n}\n');
			const nv = await startNvim(t, flavour, {
				runtimeDir: env.runtimeDir,
				cwd: env.workDir,
				env: { PATH: `${BIN}:${process.env["PATH"] ?? "/usr/bin:/bin"}` },
			});
			await nv.command("edit config.json");
			// vim.lsp.start is 0.8+; start_client + buf_attach_client is what it does, on 0.7 too.
			await nv.lua(
				`local config = { name = 'jsonls', cmd = { ..., '--stdio' }, root_dir = vim.fn.getcwd() }
			local id = vim.lsp.start_client(config)
			vim.lsp.buf_attach_client(0, id)`,
				SERVER,
			);
			const before = await nv.until(
				(s) => s.active_buffer.diagnostics?.items.some((d) => d.message === "Expected comma") === true,
				"the server reports the missing comma",
				30_000,
			);
			assert.equal(before.active_buffer.diagnostics?.items[0]?.source, "json");
			assert.equal(before.active_buffer.diagnostics?.version, before.active_buffer.version);

			env.model.respond = (_request, index): FakeReply =>
				index === 0
					? {
							toolCalls: [
								{
									name: "edit",
									arguments: {
										path: file,
										edits: [
											{ oldText: '"demo"\n', newText: '"demo",\n' },
											{ oldText: "8080\n", newText: "8080,\n" },
										],
									},
								},
							],
						}
					: { text: DEFAULT_REPLY };
			const result = await runPrint(env, [PROMPT]);
			assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
			const toolText = toolResults(env.model.requests[1]).join("\n");
			assert.match(toolText, /Neovim reloaded .*config\.json\. Diagnostics \(1 error\):/);
			assert.match(toolText, /^- error 3:15 Trailing comma \[json 519\]$/m);
			assert.ok(!toolText.includes("Expected comma"), `the old diagnostic is not presented: ${toolText}`);
			const lines = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
			assert.deepEqual(lines, ["{", '  "name": "demo",', '  "port": 8080,', "}"]);
		});
	});
}
