/**
 * :PiIdeSend in a real Neovim (0.7.2 and 0.10, with a UI), against pis that are live processes of ours whose
 * messages name it: with several, Neovim asks once which (vim.ui.select) and remembers while that pi lives; each
 * request names the chosen pi. A `@hunk` without a hunk of pi's under the cursor, or a buffer that is no file,
 * writes nothing and says why in one line. The parse of the command's words is a table.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { editorSendFileName, parseSendRequest } from "../../src/protocol/wire.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { CONTENT, message, notices, send, world } from "../helpers/nvim-inbox.ts";
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

		it("two pis of one pid in two pid namespaces: told apart, the request names the chosen one's pi_ns", async (t) => {
			const w = await world(t, flavour);
			const ns = "pid:[4026531999]";
			send(w, message(w, { changed: [], last_turn: [] }));
			writeRawStateFile(
				w.nv.stateDir,
				`pi-${w.piPid}-4026531999.json`,
				JSON.stringify({ ...message(w, { changed: [], last_turn: [] }), pid_ns: ns }),
			);
			await pollUntil(
				async () => ((await w.nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) === 2 ? true : undefined),
				"both pis known",
			);
			await w.nv.lua(`_G.asked = 0
				vim.ui.select = function(items, _, on_choice)
					_G.asked = _G.asked + 1
					for _, p in ipairs(items) do if p.pid_ns == ${JSON.stringify(ns)} then return on_choice(p) end end
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
			assert.equal(first.pi_pid, w.piPid);
			assert.equal(first.pi_ns, ns);
			await w.nv.command("PiIdeSend second");
			const second = await pollUntil(() => (read().prompt === "second" ? read() : undefined), "the second request");
			assert.equal(second.pi_ns, ns);
			assert.equal(await w.nv.lua<number>("return _G.asked"), 1, "asked once");
			// The pi of the initial namespace wrote no pid_ns: a request for it names none.
			await w.nv.lua(`vim.ui.select = function(items, _, on_choice)
					for _, p in ipairs(items) do if p.pid_ns == nil then return on_choice(p) end end
				end`);
			rmSync(join(w.nv.stateDir, `pi-${w.piPid}-4026531999.json`));
			await pollUntil(
				async () => ((await w.nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) === 1 ? true : undefined),
				"one pi left",
			);
			await w.nv.command("PiIdeSend third");
			const third = await pollUntil(() => (read().prompt === "third" ? read() : undefined), "the third request");
			assert.equal(third.pi_pid, w.piPid);
			assert.equal("pi_ns" in third, false);
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
		it("@hunk: pi's hunk under the cursor, its lines as the buffer has them", async (t) => {
			const w = await world(t, flavour);
			const after = "one\nTWO\nTHREE\nfour\n";
			writeFileSync(w.file, after);
			writeRawStateFile(
				w.nv.stateDir,
				`pi-${w.piPid}.review.json`,
				oneRunReview([{ file: w.file, before: CONTENT, after }], { pid: w.piPid, editorPid: w.nv.pid }).toString(),
			);
			const msg = message(w);
			send(w, msg);
			await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			await pollUntil(
				async () =>
					(await w.nv.lua<string>("return vim.api.nvim_buf_get_lines(0, 1, 2, false)[1]")) === "TWO" ? true : undefined,
				"the buffer reloaded with pi's version",
			);
			await pollUntil(
				async () =>
					(await w.nv.lua<number>(
						"return #vim.api.nvim_buf_get_extmarks(0, vim.api.nvim_create_namespace('pi-ide-review'), 0, -1, {})",
					)) > 0
						? true
						: undefined,
				"pi's hunk marked",
			);
			await w.nv.command("normal! 3G");
			await w.nv.command("PiIdeSend @hunk why?");
			const path = join(w.nv.stateDir, editorSendFileName(w.nv.pid));
			const request = await pollUntil(() => {
				try {
					const parsed = parseSendRequest(readFileSync(path, "utf8"), w.nv.pid);
					return parsed.ok ? parsed.request : undefined;
				} catch {
					return undefined;
				}
			}, "the request");
			assert.deepEqual(
				[request.item.kind, request.item.start_line, request.item.end_line, request.item.text, request.prompt],
				["hunk", 2, 3, "TWO\nTHREE", "why?"],
			);
		});
	});
});
