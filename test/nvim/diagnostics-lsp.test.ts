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
import { mulberry32 as random } from "../helpers/seeded.ts";

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

		it("a reload of a document unedited since it was opened: the late answer for version 0 is old (issue 22)", async (t) => {
			// A reload that closed and reopened the document would send the new content at version 0 again, the
			// version the old content had: the late answer could not be told from one for the new content. Applied
			// as a change, the new content has a higher version.
			const nv = await startNvim(t, flavour);
			const file = join(nv.tmp, "a.txt");
			writeFileSync(file, "bad\n");
			await nv.command("edit a.txt");
			const id = await nv.lua<number>(START, process.execPath, SERVER, "default");
			const w = { nv, file, id };
			await nv.until((s) => messages(s).includes("bad word #1"), "the server's first answer", 15_000);
			const old = (await versions(w)).at(-1);
			assert.equal(typeof old, "number");
			await notify(w, "fixture/hold", { hold: 1 });
			await CHANGES[1]?.change(w);
			const now = await tick(nv);
			const sent = (await versions(w)).at(-1); // the request sends the pending change first
			await notify(w, "fixture/publish", { version: old as number });
			// Reported, or a verdict reported as current (a reopened document's answers are current at once).
			const late = await nv.until(
				(s) => messages(s).includes("bad word #2") || s.active_buffer.diagnostics?.version === now,
				"the late answer reported",
			);
			assert.ok((late.active_buffer.diagnostics?.version ?? now) < now, "older than the buffer: pi takes it for old");
			assert.notEqual(sent, old, "the new content has a version of its own");
			await notify(w, "fixture/publish", { version: sent as number });
			const fresh = await nv.until(
				(s) => s.active_buffer.diagnostics?.version === now,
				"the answer for the new content",
			);
			assert.deepEqual(fresh.active_buffer.diagnostics, { version: now, total: 0, items: [] });
		});

		for (const { name, change } of CHANGES) {
			it(`after ${name}: the answer for the new content, then a late one for the old content: old again`, async (t) => {
				const w = await world(t, flavour, "default");
				await notify(w, "fixture/hold", { hold: 1 });
				await change(w);
				const now = await tick(w.nv);
				const sent = await pollUntil(async () => {
					const last = (await versions(w)).at(-1);
					return last !== w.old ? last : undefined;
				}, "the server was sent the new content");
				await notify(w, "fixture/publish", { version: sent });
				await w.nv.until((s) => s.active_buffer.diagnostics?.version === now, "the answer for the new content");
				// The server's late answer replaces its current one in Neovim: what is held now is for the old content.
				await notify(w, "fixture/publish", { version: w.old });
				const late = await w.nv.until((s) => messages(s).includes("bad word #4"), "the late answer reported");
				assert.equal(late.active_buffer.diagnostics?.version, w.old, "never a clean verdict for the new content");
			});
		}
	});
});

/**
 * Seeded random sequences of what happens to a buffer with a language server and a linter on it: typing,
 * the server answering for the current content or late for an older one, the linter publishing, a plain
 * :w, a :w whose formatter changes the content. After every step the client's report is checked against an
 * independent model that knows which content each checker's items were computed for:
 * - never later: the report's version is at most the buffer's changedtick;
 * - never stale as current: reported as current (version = changedtick), some checker answered for the
 *   current content, and it lists only items of checkers that did;
 * - complete when current: then it lists every item those checkers hold;
 * - once: no item twice, and `total` counts the listed items (no cap is reached here).
 * A failure names its seed and the steps that led to it.
 */
type Step = "type" | "lsp-current" | "lsp-old" | "lint" | "write" | "write-formatting";
const STEPS: Step[] = ["type", "lsp-current", "lsp-old", "lint", "write", "write-formatting"];
const SEEDS = [1, 2, 3];
const STEPS_PER_SEED = 24;

interface Report {
	diagnostics: { version: number; total: number; items: { message: string; source: string | null }[] } | null;
	tick: number;
	/** What each checker holds in Neovim now: its items' messages. */
	held: Record<string, string[]>;
}

const REPORT = `
local lint = vim.api.nvim_create_namespace("random-lint")
local held = { late = {}, lint = {} }
for _, d in ipairs(vim.diagnostic.get(0)) do
  local list = d.namespace == lint and held.lint or held.late
  list[#list + 1] = d.message
end
return { diagnostics = require("pi-ide.diagnostics").collect(vim.api.nvim_get_current_buf()), tick = vim.api.nvim_buf_get_var(0, "changedtick"),
  held = held }`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: random sequences of edits, writes and late answers keep the report true`, () => {
		for (const seed of SEEDS) {
			it(`seed ${seed}`, async (t) => {
				const next = random(seed);
				const w = await world(t, flavour, "user");
				await notify(w, "fixture/hold", { hold: 1 });
				let content = 0; // the model's name for the buffer's content; every content change makes a new one
				const contentOf = new Map<number, number>(); // document version sent to the server -> content
				const forContent: Record<string, number | null> = { late: 0, lint: null };
				let sent = w.old;
				contentOf.set(sent, content);
				const log: string[] = [];
				const calls = () => w.nv.lua<number>("return vim.g.user_handler_calls or 0");

				/** After a content change: wait until the server was sent it, and remember its version. */
				const changed = async () => {
					content++;
					sent = await pollUntil(async () => {
						const last = (await versions(w)).at(-1);
						return last !== undefined && last !== sent && !contentOf.has(last) ? last : undefined;
					}, "the server was sent the new content");
					contentOf.set(sent, content);
				};
				const answer = async (version: number) => {
					const before = await calls();
					await notify(w, "fixture/publish", { version });
					await pollUntil(async () => ((await calls()) > before ? true : undefined), "the answer handled");
					forContent["late"] = contentOf.get(version) ?? null;
				};

				for (let i = 0; i < STEPS_PER_SEED; i++) {
					const step = STEPS[Math.floor(next() * STEPS.length)] as Step;
					const bad = next() < 0.5;
					log.push(step);
					switch (step) {
						case "type":
							await w.nv.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, { ... })", `${bad ? "bad" : "good"} ${i}`);
							await changed();
							break;
						case "lsp-current":
							await answer(sent);
							break;
						case "lsp-old": {
							const older = [...contentOf.keys()].filter((v) => contentOf.get(v) !== content);
							const version = older[Math.floor(next() * older.length)];
							if (version === undefined) continue;
							await answer(version);
							break;
						}
						case "lint":
							await w.nv.lua(
								`local bad = ...
								local items = {}
								if bad then items[1] = { lnum = 0, col = 0, message = "lint " .. vim.api.nvim_buf_get_lines(0, 0, 1, false)[1], severity = 2, source = "lint" } end
								vim.diagnostic.set(vim.api.nvim_create_namespace("random-lint"), 0, items)`,
								bad,
							);
							forContent["lint"] = content;
							break;
						case "write":
							await w.nv.command("write");
							break;
						case "write-formatting":
							await w.nv.lua(
								`vim.api.nvim_create_autocmd("BufWritePre", { buffer = 0, once = true, callback = function(args)
									vim.api.nvim_buf_set_lines(args.buf, -1, -1, false, { "formatted" })
								end })`,
							);
							await w.nv.command("write");
							await changed();
							break;
					}
					const r = await w.nv.lua<Report>(REPORT);
					const where = `seed ${seed}, steps ${log.join(" ")}: ${JSON.stringify(r)} (checkers' content ${JSON.stringify(forContent)}, now ${content})`;
					const d = r.diagnostics;
					assert.ok(d, `the server has answered since the start: a report: ${where}`);
					assert.ok(d.version <= r.tick, `never later than the buffer: ${where}`);
					const listed = d.items.map((x) => `${x.source === "lint" ? "lint" : "late"}:${x.message}`).sort();
					assert.equal(new Set(listed).size, listed.length, `each item once: ${where}`);
					assert.equal(d.total, listed.length, `the total counts the listed items: ${where}`);
					if (d.version < r.tick) continue; // pi takes it for old: never shown as current
					assert.ok(
						Object.values(forContent).includes(content),
						`reported as current only after a checker answered for the current content: ${where}`,
					);
					for (const item of d.items) {
						const checker = item.source === "lint" ? "lint" : "late";
						assert.equal(forContent[checker], content, `never stale as current (${checker}): ${where}`);
					}
					for (const checker of ["late", "lint"]) {
						if (forContent[checker] !== content) continue;
						for (const message of r.held[checker] ?? []) {
							assert.ok(listed.includes(`${checker}:${message}`), `complete when current (${checker}): ${where}`);
						}
					}
				}
			});
		}
	});
});
