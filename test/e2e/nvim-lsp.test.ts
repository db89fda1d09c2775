/**
 * Protocol v0.3 with a real language server: Neovim (0.10 and 0.7.2; a reload for pi is a change of the
 * document, a didChange) runs vscode-json-language-server (the
 * vscode-langservers-extracted devDependency) on a JSON file; pi's fake model edits the file with pi's `edit`
 * tool. The edit fixes the error the server reported before and introduces another: the model must receive
 * the server's diagnostic for the new content in the tool result of the same run, and never the old one.
 * Detection is the product's own: an attached LSP client means `diagnostics_expected`. And across sessions
 * of one pi process (RPC `new_session`): the next session's edit is answered with its own diagnostics, never
 * with the report Neovim still holds on the previous session's edit. And with a server that answers late
 * (test/fixtures/late-lsp-server.ts: its answer for the old content comes first, the new one 400 ms later), the
 * model gets the answer for the new content, never the late one for the old.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import {
	DEFAULT_REPLY,
	type FakeReply,
	messageText,
	type RecordedRequest,
	requestMessages,
	toolResults,
	toolsThenReply,
} from "../helpers/fake-llm.ts";
import { NVIM_MATRIX, type Nvim, type NvimFlavour, requireBin, startNvim } from "../helpers/nvim.ts";
import { BIN, type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { startRpc } from "../helpers/rpc.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const SERVER = join(BIN, "vscode-json-language-server");
/** A server that can answer late: test/fixtures/late-lsp-server.ts. */
const LATE_SERVER = fileURLToPath(new URL("../fixtures/late-lsp-server.ts", import.meta.url));

/** pi's env and a Neovim in its work dir showing config.json (`content`) with the JSON server attached. */
async function openWithServer(
	t: TestContext,
	flavour: NvimFlavour,
	content: string,
): Promise<{ env: PiEnv; nv: Nvim; file: string }> {
	requireBin(flavour);
	assert.ok(existsSync(SERVER), `${SERVER} is missing: npm ci installs vscode-langservers-extracted`);
	const env = await envFor(t);
	const file = touch(env.workDir, "config.json", content);
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
	return { env, nv, file };
}

/** The user prompt a request answers (the first user message: the rest is injected context). */
const promptOf = (request: RecordedRequest): string | undefined =>
	requestMessages(request)
		.filter((m) => m.role === "user")
		.map(messageText)[0];

for (const flavour of NVIM_MATRIX) {
	describe(`nvim ${flavour.name} + vscode-json-language-server + pi`, () => {
		it("after pi's edit the model gets the server's diagnostic for the new content, not the old one", async (t) => {
			const { env, nv, file } = await openWithServer(t, flavour, '{\n  "name": "demo"\n  "port": 8080\n}\n');
			const before = await nv.until(
				(s) => s.active_buffer.diagnostics?.items.some((d) => d.message === "Expected comma") === true,
				"the server reports the missing comma",
				30_000,
			);
			assert.equal(before.active_buffer.diagnostics?.items[0]?.source, "json");
			assert.equal(before.active_buffer.diagnostics?.version, before.active_buffer.version);

			env.model.respond = toolsThenReply([
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
			]);
			const result = await runPrint(env, [PROMPT]);
			assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
			const toolText = toolResults(env.model.requests[1]).join("\n");
			assert.match(toolText, /Neovim reloaded .*config\.json\. Diagnostics \(1 error\):/);
			assert.match(toolText, /^- error 3:15 Trailing comma \[json 519\]$/m);
			assert.ok(!toolText.includes("Expected comma"), `the old diagnostic is not presented: ${toolText}`);
			const lines = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
			assert.deepEqual(lines, ["{", '  "name": "demo",', '  "port": 8080,', "}"]);
		});

		it("with a linter beside the server, the model never gets the linter's items for the old content", async (t) => {
			const { env, nv, file } = await openWithServer(t, flavour, '{\n  "name": "demo"\n  "port": 8080\n}\n');
			await nv.until(
				(s) => s.active_buffer.diagnostics?.items.some((d) => d.message === "Expected comma") === true,
				"the server reports the missing comma",
				30_000,
			);
			// A second checker (nvim-lint and the like: its own namespace) that ran on the old content only: its
			// items stay stored through the reload.
			await nv.lua(
				`vim.diagnostic.set(vim.api.nvim_create_namespace("lint"), 0,
					{{ lnum = 1, col = 2, message = "old lint warning", severity = 2, source = "lint" }})`,
			);
			await nv.until((s) => s.active_buffer.diagnostics?.total === 2, "the server's and the linter's items listed");
			env.model.respond = toolsThenReply([
				{
					name: "edit",
					arguments: { path: file, edits: [{ oldText: "8080\n", newText: "8080,\n" }] },
				},
			]);
			const result = await runPrint(env, [PROMPT]);
			assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
			const toolText = toolResults(env.model.requests[1]).join("\n");
			assert.match(toolText, /Neovim reloaded .*config\.json\. Diagnostics \(2 errors\):/, toolText);
			assert.match(toolText, /^- error 3:15 Trailing comma \[json 519\]$/m, toolText);
			assert.match(toolText, /^- error 3:3 Expected comma \[json 514\]$/m, toolText);
			assert.ok(!toolText.includes("old lint warning"), `the linter's old item is not presented: ${toolText}`);
		});

		it("a new session's edit (RPC new_session) gets its own diagnostics, not the last session's report", async (t) => {
			const { env, nv, file } = await openWithServer(t, flavour, '{\n  "name": "demo",\n  "port": 8080\n}\n');
			await nv.until(
				(s) => s.active_buffer.diagnostics?.version === s.active_buffer.version,
				"the server reports on the clean file",
				30_000,
			);
			const EDITS: Record<string, { oldText: string; newText: string }> = {
				"first session: add a trailing comma": { oldText: "8080\n", newText: "8080,\n" },
				"second session: drop both commas": {
					oldText: '"demo",\n  "port": 8080,\n',
					newText: '"demo"\n  "port": 8080\n',
				},
			};
			env.model.respond = (request): FakeReply => {
				const edit = EDITS[promptOf(request) ?? ""];
				const answered = requestMessages(request).at(-1)?.role === "tool";
				return edit && !answered
					? { toolCalls: [{ name: "edit", arguments: { path: file, edits: [edit] } }] }
					: { text: DEFAULT_REPLY };
			};
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			const [first, second] = Object.keys(EDITS) as [string, string];

			await rpc.prompt(first);
			const firstText = toolResults(env.model.requests.at(-1)).join("\n");
			assert.match(firstText, /^- error 3:15 Trailing comma \[json 519\]$/m, firstText);

			assert.equal((await rpc.command({ type: "new_session" })).success, true);
			await rpc.prompt(second);
			const secondText = toolResults(env.model.requests.at(-1)).join("\n");
			assert.equal(promptOf(env.model.requests.at(-1) as RecordedRequest), second, "a request of the new session");
			assert.match(secondText, /Neovim reloaded .*config\.json\. Diagnostics \(1 error\):/, secondText);
			assert.match(secondText, /Expected comma/, secondText);
			assert.ok(
				!secondText.includes("Trailing comma"),
				`the last session's diagnostic is not presented: ${secondText}`,
			);
			const lines = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
			assert.deepEqual(
				lines,
				["{", '  "name": "demo"', '  "port": 8080', "}"],
				"Neovim reloaded the new session's edit",
			);
		});
	});
}

for (const flavour of NVIM_MATRIX) {
	describe(`nvim ${flavour.name} + a language server that answers late + pi`, () => {
		for (const edited of [true, false]) {
			it(`after pi's edit, the server's late answer for the old content never reaches the model (${edited ? "edited" : "unedited"} since opened)`, async (t) => {
				requireBin(flavour);
				const env = await envFor(t);
				const file = touch(env.workDir, "notes.txt", "bad\nfine\n");
				const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
				await nv.command("edit notes.txt");
				const id = await nv.lua<number>(
					`local id = vim.lsp.start_client({ name = "late", cmd = { ... }, root_dir = vim.fn.getcwd() })
				vim.lsp.buf_attach_client(0, id)
				return id`,
					process.execPath,
					LATE_SERVER,
				);
				await nv.until(
					(s) => s.active_buffer.diagnostics?.items.some((d) => d.line === 1) === true,
					"the server's first answer",
					15_000,
				);
				// Edited and written: the content pi's edit replaces has a changedtick as its version. Unedited: version
				// 0, the version a reload that reopened the document would give pi's content (issue 22).
				if (edited) {
					await nv.input("ggAx<Esc>");
					await nv.command("write");
					await nv.until(
						(s) =>
							s.active_buffer.diagnostics?.version === s.active_buffer.version &&
							s.active_buffer.diagnostics?.items.some((d) => d.message !== "bad word #1") === true &&
							!s.active_buffer.modified,
						"the server's answer for the written content, current",
						15_000,
					);
				}
				await nv.lua("local id = ...; vim.lsp.get_client_by_id(id).notify('fixture/late', { delay = 400 })", id);
				env.model.respond = toolsThenReply([
					{
						name: "edit",
						arguments: {
							path: file,
							edits: [{ oldText: `bad${edited ? "x" : ""}\nfine\n`, newText: "good\nfine\nbad too\n" }],
						},
					},
				]);
				const result = await runPrint(env, [PROMPT]);
				assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
				const toolText = toolResults(env.model.requests[1]).join("\n");
				assert.match(toolText, /Neovim reloaded .*notes\.txt\. Diagnostics \(1 error\):/, toolText);
				assert.match(toolText, /^- error 3:1 bad word #\d+ \[late\]$/m, toolText);
				assert.ok(!/error 1:1/.test(toolText), `the late answer for the old content is not presented: ${toolText}`);
			});
		}
	});
}
