/**
 * :PiIdeSend in a real Neovim (0.7.2 and 0.10, with a UI), against pis that are live processes of ours whose
 * messages name it: with several, Neovim asks once which (vim.ui.select) and remembers while that pi lives; each
 * request names the chosen pi. A `@hunk` without a hunk of pi's under the cursor, or a buffer that is no file,
 * writes nothing and says why in one line. The parse of the command's words is a table.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { editorSendFileName, parseSendRequest } from "../../src/protocol/wire.ts";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { message, notices, send, world } from "../helpers/nvim-inbox.ts";
import { pollUntil } from "../helpers/poll.ts";

after(killAllEditors);

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: :PiIdeSend`, () => {
		it("parses the command's words (a table)", async (t) => {
			const w = await world(t, flavour);
			const rows: [string, string | null, string][] = [
				["", null, ""],
				["why?", null, "why?"],
				["@diagnostic", "diagnostic", ""],
				["@diagnostic  what is wrong", "diagnostic", "what is wrong"],
				["@hunk why", "hunk", "why"],
				["@file", "file", ""],
				["@other words", null, "@other words"],
				["  padded  ", null, "padded"],
			];
			for (const [args, form, prompt] of rows) {
				const got = await w.nv.lua<[string | null, string]>(
					"local f, p = require('pi-ide.send').parse_args(...) return { f or vim.NIL, p }",
					args,
				);
				assert.deepEqual(got, [form, prompt], JSON.stringify(args));
			}
		});

		it("several pis: asks once, remembers; each request names the chosen pi", async (t) => {
			const w = await world(t, flavour);
			const other = await spawnLiveEditor();
			send(w, message(w, { changed: [], last_turn: [] }));
			send(w, { ...message(w, { changed: [], last_turn: [] }), pid: other.pid }, { pid: other.pid });
			await pollUntil(
				async () => ((await w.nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) === 2 ? true : undefined),
				"both pis known",
			);
			// The user's pick: the pi that is not w.piPid, counted.
			await w.nv.lua(`_G.asked = 0
				vim.ui.select = function(items, _, on_choice)
					_G.asked = _G.asked + 1
					for _, p in ipairs(items) do if p.pid == ${other.pid} then return on_choice(p) end end
				end`);
			const path = join(w.nv.stateDir, editorSendFileName(w.nv.pid));
			const read = () => {
				const parsed = parseSendRequest(readFileSync(path, "utf8"), w.nv.pid);
				assert.ok(parsed.ok);
				return parsed.request;
			};
			await w.nv.command("PiIdeSend first");
			const first = await pollUntil(() => {
				try {
					return read();
				} catch {
					return undefined;
				}
			}, "the first request");
			assert.equal(first.pi_pid, other.pid);
			await w.nv.command("PiIdeSend second");
			const second = await pollUntil(() => (read().prompt === "second" ? read() : undefined), "the second request");
			assert.equal(second.pi_pid, other.pid);
			assert.notEqual(second.id, first.id);
			assert.equal(await w.nv.lua<number>("return _G.asked"), 1, "asked once");
		});

		it("@hunk with no hunk of pi's, and a buffer that is no file: one line each, nothing written", async (t) => {
			const w = await world(t, flavour);
			send(w, message(w, { changed: [], last_turn: [] }));
			await pollUntil(
				async () => ((await w.nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) === 1 ? true : undefined),
				"the pi known",
			);
			await w.nv.command("PiIdeSend @hunk why");
			await pollUntil(
				async () => ((await notices(w.nv, /no hunk of pi's under the cursor/)) === 1 ? true : undefined),
				"the hunk notice",
			);
			await w.nv.command("enew");
			await w.nv.command("PiIdeSend hello");
			await pollUntil(
				async () => ((await notices(w.nv, /not a file buffer/)) === 1 ? true : undefined),
				"the buffer notice",
			);
			assert.throws(() => readFileSync(join(w.nv.stateDir, editorSendFileName(w.nv.pid))), /ENOENT/);
		});
	});
});
