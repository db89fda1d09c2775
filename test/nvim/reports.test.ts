/**
 * The `files` reports the Neovim client keeps for pi: every report stays while pi may still wait for it (a
 * message naming 30 open files gets 30 reports, not the newest 20), each pi's reports stay beside another
 * pi's (two pis on one editor), and old ones go: per pi the newest 20 stay, the rest only for HOLD_S.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { message, nextSeq, send, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: reports on pi's changes`, { concurrency: 2 }, () => {
		it("one message naming 30 open files: 30 reports, all reloaded", async (t) => {
			const w = await world(t, flavour);
			const files = Array.from({ length: 30 }, (_, i) => join(w.nv.tmp, `f${i}.txt`));
			for (const f of files) writeFileSync(f, "old\n");
			await w.nv.lua("for _, f in ipairs({...}) do vim.fn.bufload(vim.fn.bufadd(f)) end", ...files);
			for (const f of files) writeFileSync(f, "new\n");
			const seq = nextSeq();
			send(w, { ...message(w), seq, changed: files.map((file) => ({ file, seq, tool: "write" })) });
			const state = await w.nv.until((s) => s.pi?.seq === seq, "pi's message is handled");
			assert.deepEqual(
				files.map((f) => state.files?.find((r) => r.file === f)?.status),
				files.map(() => "reloaded"),
			);
		});

		it("two pis change the same file: each pi's report stays", async (t) => {
			const w = await world(t, flavour);
			const second = await spawnLiveEditor();
			const w2 = { ...w, piPid: second.pid };
			writeFileSync(w.file, "first pi\n");
			const one = message(w);
			send(w, one);
			await w.nv.until((s) => s.pi?.seq === one["seq"], "the first pi's message is handled");
			writeFileSync(w.file, "second pi\n");
			const two = message(w2);
			send(w2, two, { pid: second.pid });
			const state = await w.nv.until((s) => s.pi?.seq === two["seq"], "the second pi's message is handled");
			const mine = (pid: number) => state.files?.find((f) => f.file === w.file && f.pi_pid === pid);
			assert.equal(mine(w.piPid)?.seq, one["seq"], "the first pi's report is still there");
			assert.equal(mine(second.pid)?.seq, two["seq"]);
		});

		it("200 reports with large diagnostics: the oldest go until the state fits pi's 1 MiB", async (t) => {
			const w = await world(t, flavour);
			const got = await w.nv.lua<{ bytes: number; first: string; last: string; count: number } | string>(
				`local state = require("pi-ide.state")
				local payload = { active_buffer = { selection = vim.NIL }, files = {} }
				for i = 1, 200 do
					payload.files[i] = { file = "/f" .. i, diagnostics = { items = { { message = string.rep("x", 20000) } } } }
				end
				local content, text = state.encode(payload, 1)
				if not content then return text end
				local decoded = vim.json.decode(text)
				return { bytes = #text, count = #decoded.files, first = decoded.files[1].file, last = decoded.files[#decoded.files].file }`,
			);
			assert.ok(typeof got !== "string", `not written: ${got}`);
			assert.ok(got.bytes <= 1024 * 1024, `${got.bytes} bytes`);
			assert.equal(got.last, "/f200", "the newest report stays");
			assert.ok(got.count > 40 && got.count < 200, `${got.count} reports kept`);
		});

		it("retain(): per pi the newest 20, older ones only for HOLD_S, at most 200", async (t) => {
			const w = await world(t, flavour);
			const CASES: { name: string; reports: { pi: number; age: number | null }[]; kept: number }[] = [
				{ name: "25 fresh of one pi", reports: Array.from({ length: 25 }, () => ({ pi: 1, age: 0 })), kept: 25 },
				{ name: "25 old of one pi", reports: Array.from({ length: 25 }, () => ({ pi: 1, age: 60 })), kept: 20 },
				{
					name: "20 old of each of two pis",
					reports: Array.from({ length: 40 }, (_, i) => ({ pi: 1 + (i % 2), age: 60 })),
					kept: 40,
				},
				{ name: "250 fresh", reports: Array.from({ length: 250 }, () => ({ pi: 1, age: 0 })), kept: 200 },
				{
					// A busy Neovim made 40 reports before writing any: the hold counts from the first write.
					name: "20 old not yet written, then 20 newer",
					reports: [
						...Array.from({ length: 20 }, () => ({ pi: 1, age: null })),
						...Array.from({ length: 20 }, () => ({ pi: 1, age: 60 })),
					],
					kept: 40,
				},
			];
			const got = await w.nv.lua<number[]>(
				`local inbox = require("pi-ide.inbox")
				return vim.tbl_map(function(c)
					local reports = vim.tbl_map(function(r)
						return { pi_pid = r.pi, at = r.age ~= vim.NIL and 1000 - r.age or nil }
					end, c.reports)
					return #inbox.retain(reports, 1000)
				end, ...)`,
				CASES,
			);
			assert.deepEqual(
				CASES.map((c, i) => ({ name: c.name, kept: got[i] })),
				CASES.map((c) => ({ name: c.name, kept: c.kept })),
			);
		});
	});
});
