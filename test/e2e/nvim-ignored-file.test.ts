/**
 * Ignore rules cover everything pi says about a file (issue 22, item 5), not only the prompt's block: with `.env`
 * ignored, pi edits its line 2 while a real Neovim shows it with a linter that quotes line 1 (the secret) in
 * its diagnostic. Neovim reloads the buffer and reports that diagnostic; pi's tool result carries none of it.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const SECRET = "hunter2-do-not-leak";

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: an ignored file's editor reports stay out of pi's tool results`, () => {
		it("a linter quoting the ignored .env's line 1 after pi's edit of line 2: nothing of it reaches the model", async (t) => {
			const env = await envFor(t);
			writeFileSync(join(env.agentDir, "ide-context.ignore"), ".env\n");
			const file = touch(env.workDir, ".env", `API_KEY=${SECRET}\nDEBUG=0\n`);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit .env");
			// A linter that quotes line 1 in its message after every reload, and says it will.
			await nv.lua(
				`local buf = vim.api.nvim_get_current_buf()
				local ns = vim.api.nvim_create_namespace("quote-lint")
				vim.b[buf].pi_ide_diagnostics_expected = true
				local function lint()
					if not vim.api.nvim_buf_is_valid(buf) then return end
					local first = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] or ""
					vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, message = "weak key: " .. first,
						severity = vim.diagnostic.severity.WARN, source = "quote-lint" } })
				end
				vim.api.nvim_buf_attach(buf, false, { on_reload = function() vim.defer_fn(lint, 100) end })
				lint()`,
			);
			await nv.until((s) => s.active_buffer.file === file && s.protocol !== undefined, "Neovim reports .env");
			env.model.respond = toolsThenReply([
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "DEBUG=0", newText: "DEBUG=1" }] } },
			]);
			// Before the model's answer (pi still runs, so Neovim keeps its report): Neovim did report the reloaded
			// .env with the diagnostic quoting the secret. The state dir holds it; the model must not.
			env.model.beforeReply = async (_request, index) => {
				if (index !== 1) return;
				await nv.until(
					(s) =>
						(s.files ?? []).some(
							(f) => f.file === file && f.diagnostics?.items.some((d) => d.message.includes(SECRET)) === true,
						),
					"Neovim reports the reloaded .env with the quoting diagnostic",
				);
			};
			const result = await runPrint(env, [PROMPT]);
			assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
			assert.equal(readFileSync(file, "utf8"), `API_KEY=${SECRET}\nDEBUG=1\n`, "pi's edit applied");
			const toolText = toolResults(env.model.requests[1]).join("\n");
			assert.match(toolText, /Successfully replaced/);
			assert.match(toolText, /\.env is excluded by pi-ide-context's ignore rules/);
			for (const request of env.model.requests)
				assert.ok(!JSON.stringify(request).includes(SECRET), "no request to the model carries the secret");
		});
	});
});
