/**
 * Issue 22, item 1, with a real race: another user flips a.txt, in a directory both can write, between a
 * regular file (pi's version) and a symlink to one of the user's 0600 secrets, as fast as it can, while pi's
 * messages arrive. Whatever each reload decides, the secret must never be in the buffer, not even for a
 * moment: observers record the buffer's text at every read autocommand (BufReadPre, BufReadPost,
 * FileReadPost) and every nvim_buf_attach callback (on_lines, what language servers' didChange is made of;
 * on_reload, what their didClose + didOpen is made of), and a real language server attached to the buffer
 * (test/fixtures/late-lsp-server.ts) keeps every text it is sent. A reload reads the path once, verified,
 * and gives the buffer those bytes through the API: no read autocommand fires at all. Afterwards, with the real file back,
 * Neovim's record of the file is current: :checktime and :w neither ask nor read.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { killAllEditors } from "../helpers/editors.ts";
import { forEachNvim, pollUntil } from "../helpers/nvim.ts";
import { assertNoErrors, lines, luaWithoutPrompt, message, send, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

const SERVER = fileURLToPath(new URL("../fixtures/late-lsp-server.ts", import.meta.url));

/** pi's messages sent during the race (each handled before the next): the leak showed after ~130 ms. */
const MESSAGES = 300;

/** The other user: flips `path` between a new regular file and a symlink to `secret`, each put in by rename. */
const FLIPPER = `const fs = require("node:fs");
const [path, secret] = process.argv.slice(1);
for (let i = 0; ; i++) {
	fs.writeFileSync(path + ".f", "pi's version " + i + "\\n");
	fs.renameSync(path + ".f", path);
	fs.rmSync(path + ".l", { force: true });
	fs.symlinkSync(secret, path + ".l");
	fs.renameSync(path + ".l", path);
}`;

/** Observers of the current buffer: where its text held `secret`, and how many read autocommands fired. */
const OBSERVE = `local secret = ...
local buf = vim.api.nvim_get_current_buf()
_G.race = { leaks = {}, reads = 0 }
local function check(where)
	local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n")
	if text:find(secret, 1, true) then
		table.insert(_G.race.leaks, where)
	end
end
vim.api.nvim_create_autocmd({ "BufReadPre", "BufReadPost", "FileReadPost" }, {
	callback = function(a)
		if a.buf == buf then
			_G.race.reads = _G.race.reads + 1
			check(a.event)
		end
	end,
})
vim.api.nvim_buf_attach(buf, false, {
	on_lines = function()
		check("on_lines")
	end,
	on_reload = function()
		check("on_reload")
	end,
})`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: another user flips the buffer's file to a symlink to a secret while pi's messages arrive`, () => {
		it("the secret never enters the buffer, no read autocommand fires, and Neovim's record of the file stays current", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			const secret = join(w.nv.tmp, "secret.txt");
			const SECRET = `SECRET-${process.pid}-${Date.now()}`;
			writeFileSync(secret, `${SECRET}\n`, { mode: 0o600 });
			await w.nv.lua(OBSERVE, SECRET);
			const server = await w.nv.lua<number>(
				`local id = vim.lsp.start_client({ name = "late", cmd = { ... }, root_dir = vim.fn.getcwd() })
				vim.lsp.buf_attach_client(0, id)
				return id`,
				process.execPath,
				SERVER,
			);
			/** Every text the server was sent (the request sends pending changes first). */
			const serverTexts = () =>
				w.nv.lua<string[]>(
					`local answer = vim.lsp.get_client_by_id(...).request_sync("fixture/texts", {}, 5000, 0)
					return answer and answer.result or { "no answer" }`,
					server,
				);
			const opened = await pollUntil(async () => {
				const texts = await serverTexts();
				return texts.length > 0 ? texts : undefined;
			}, "the server was sent the buffer");
			assert.deepEqual(opened, ["one\ntwo\nthree\n"]);

			const flipper = spawn(process.execPath, ["-e", FLIPPER, w.file, secret], { stdio: "ignore" });
			const flipperExited = new Promise((resolve) => flipper.once("exit", resolve));
			t.after(() => {
				flipper.kill("SIGKILL");
			});
			const statuses: Record<string, number> = {};
			let leaks: string[] = [];
			for (let i = 0; i < MESSAGES && leaks.length === 0; i++) {
				const msg = message(w);
				send(w, msg);
				const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], `pi's message ${i} is handled`);
				const status = state.files?.find((f) => f.file === w.file)?.status ?? "none";
				statuses[status] = (statuses[status] ?? 0) + 1;
				leaks = await w.nv.lua<string[]>("return _G.race.leaks");
			}
			flipper.kill("SIGKILL");
			await flipperExited;
			assert.deepEqual(leaks, [], `the secret was in the buffer at: ${leaks.join(", ")} (${JSON.stringify(statuses)})`);
			assert.ok((statuses["reloaded"] ?? 0) > 0, `some messages reloaded the buffer: ${JSON.stringify(statuses)}`);
			assert.equal(await w.nv.lua("return _G.race.reads"), 0, "no read autocommand fired for the buffer");
			assert.ok(!(await lines(w.nv)).join("\n").includes(SECRET));
			const sent = await serverTexts();
			assert.deepEqual(
				sent.filter((text) => text.includes(SECRET)),
				[],
				"the language server was never sent the secret",
			);
			assert.ok(
				sent.some((text) => text.startsWith("pi's version")),
				"the server was sent the reloads",
			);

			// The real file back (what the buffer was read from is a regular file): the next reload takes it,
			// and Neovim's record of the file is current: no W11/W12, no "changed since reading it" at :w.
			rmSync(w.file, { force: true });
			rmSync(`${w.file}.f`, { force: true });
			rmSync(`${w.file}.l`, { force: true });
			writeFileSync(w.file, "pi's last version\n");
			const last = message(w);
			send(w, last);
			const state = await w.nv.until((s) => s.pi?.seq === last["seq"], "pi's last message is handled");
			assert.equal(state.files?.find((f) => f.file === w.file)?.status, "reloaded");
			assert.deepEqual(await lines(w.nv), ["pi's last version"]);
			await luaWithoutPrompt(w.nv, `vim.cmd("checktime"); vim.cmd("write")`);
			assert.equal(readFileSync(w.file, "utf8"), "pi's last version\n");
			assert.equal(readFileSync(secret, "utf8"), `${SECRET}\n`);
			assert.equal(await w.nv.lua("return _G.race.reads"), 0, "no read autocommand fired for the buffer");
			await assertNoErrors(w.nv);
		});
	});
});
