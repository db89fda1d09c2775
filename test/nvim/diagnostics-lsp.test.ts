/**
 * A slow language server's answer for the old content (issue 14, item 4): after the buffer changed (typing,
 * or a reload pi asked for), the server's publish for the document version it had before must be dated with
 * that version, never with the buffer's current one, so pi takes it for old; its publish for the version
 * Neovim last sent is current. Real Neovim (0.7.2 and 0.10) with a real LSP server over stdio
 * (test/fixtures/late-lsp-server.ts), told when to answer, so the late answer is deterministic; with Neovim's
 * default publishDiagnostics handler and with a user's own (`vim.lsp.with`, global or the client's), which stays
 * in charge.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import type { EditorState } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, type Nvim, type NvimFlavour, pollUntil, startNvim } from "../helpers/nvim.ts";

after(killAllEditors);

const SERVER = fileURLToPath(new URL("../fixtures/late-lsp-server.ts", import.meta.url));

/**
 * Start the server for the current buffer. `user`: a user's global handler (vim.lsp.with, capturing Neovim's
 * function before the plugin has seen vim.lsp) that counts its calls; `client`: the same as the client's own.
 */
const START = `
local node, server, handler = ...
local config = { name = "late", cmd = { node, server }, root_dir = vim.fn.getcwd() }
if handler ~= "default" then
  local with = vim.lsp.with(vim.lsp.diagnostic.on_publish_diagnostics, { virtual_text = false })
  local function counted(...)
    vim.g.user_handler_calls = (vim.g.user_handler_calls or 0) + 1
    return with(...)
  end
  if handler == "user" then
    vim.lsp.handlers["textDocument/publishDiagnostics"] = counted
  else
    config.handlers = { ["textDocument/publishDiagnostics"] = counted }
  end
end
local id = vim.lsp.start_client(config)
vim.lsp.buf_attach_client(0, id)
return id`;

type Handler = "default" | "user" | "client";

interface World {
	nv: Nvim;
	file: string;
	id: number;
}

const notify = (w: World, method: string, params: Record<string, number>) =>
	w.nv.lua("local id, method, params = ...; vim.lsp.get_client_by_id(id).notify(method, params)", w.id, method, params);

/** The document versions the server was sent, oldest first (a request for the buffer sends its pending changes). */
const versions = (w: World) =>
	w.nv.lua<number[]>(
		`local id = ...
		local buf = vim.api.nvim_get_current_buf()
		local answer = vim.lsp.get_client_by_id(id).request_sync("fixture/versions", {}, 2000, buf)
		return answer and answer.result or {}`,
		w.id,
	);

const messages = (s: EditorState) => (s.active_buffer.diagnostics?.items ?? []).map((d) => d.message);
const tick = (nv: Nvim) => nv.lua<number>("return vim.api.nvim_buf_get_var(0, 'changedtick')");

/**
 * a.txt open with the server attached, edited once and written ("badx"): the server has answered for that
 * content ("bad word #2", current). Returns the document version of that content (the server's "old" one).
 */
async function world(t: TestContext, flavour: NvimFlavour, handler: Handler): Promise<World & { old: number }> {
	const nv = await startNvim(t, flavour);
	const file = join(nv.tmp, "a.txt");
	writeFileSync(file, "bad\n");
	await nv.command("edit a.txt");
	const id = await nv.lua<number>(START, process.execPath, SERVER, handler);
	const w = { nv, file, id };
	await nv.until((s) => messages(s).includes("bad word #1"), "the server's first answer", 15_000);
	await nv.input("ggAx<Esc>");
	await nv.command("write");
	const s = await nv.until(
		(x) => messages(x).includes("bad word #2") && x.active_buffer.diagnostics?.version === x.active_buffer.version,
		"the server's answer for the edited content, current",
	);
	assert.equal(s.active_buffer.modified, false);
	const old = (await versions(w)).at(-1);
	assert.ok(typeof old === "number" && old > 0, `the edit's version: ${old}`);
	return { ...w, old };
}

/** The ways the content moves on while the server holds its answer. */
const CHANGES: { name: string; change: (w: World) => Promise<void> }[] = [
	{
		name: "typing",
		change: async (w) => {
			await w.nv.input("ggccgood<Esc>");
		},
	},
	{
		name: "a reload pi asked for",
		change: async (w) => {
			writeFileSync(w.file, "good\n");
			const pi = await spawnLiveEditor();
			const message = makePiMessage({
				pid: pi.pid,
				cwd: w.nv.tmp,
				timestamp: Date.now() / 1000,
				editor_pid: w.nv.pid,
				seq: 1,
				changed: [{ file: w.file, seq: 1, tool: "write" }],
				last_turn: [w.file],
			});
			writeRawStateFile(w.nv.stateDir, `pi-${pi.pid}.json`, JSON.stringify(message));
			await w.nv.until(
				(s) => s.files?.some((f) => f.file === w.file && f.status === "reloaded") === true,
				"the buffer reloaded",
			);
		},
	},
];

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: a slow language server's answer is dated with the version it answered for`, () => {
		for (const { name, change } of CHANGES) {
			for (const handler of ["default", "user", "client"] as const) {
				it(`after ${name}, ${handler} handler: the answer for the old content is old, the next one current`, async (t) => {
					const w = await world(t, flavour, handler);
					await notify(w, "fixture/hold", { hold: 1 });
					await change(w);
					const now = await tick(w.nv);
					assert.deepEqual(await w.nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"), ["good"]);
					const sent = await pollUntil(async () => {
						const last = (await versions(w)).at(-1);
						return last !== w.old ? last : undefined;
					}, "the server was sent the new content");

					// The late answer, for the content before the change.
					await notify(w, "fixture/publish", { version: w.old });
					const late = await w.nv.until((s) => messages(s).includes("bad word #3"), "the late answer reported");
					assert.equal(late.active_buffer.version, now);
					assert.equal(late.active_buffer.diagnostics?.version, w.old, "dated with the version it answered for");
					assert.ok(
						(late.active_buffer.diagnostics?.version ?? now) < now,
						"older than the buffer: pi takes it for old",
					);

					// The answer for the new content.
					await notify(w, "fixture/publish", { version: sent });
					const fresh = await w.nv.until(
						(s) => s.active_buffer.diagnostics?.version === now,
						"the answer for the new content reported",
					);
					assert.deepEqual(fresh.active_buffer.diagnostics, { version: now, total: 0, items: [] });
					if (handler !== "default") {
						const calls = await w.nv.lua<number>("return vim.g.user_handler_calls or 0");
						assert.ok(calls >= 4, `the user's handler handled every publish (${calls})`);
					}
				});
			}
		}
	});
});
