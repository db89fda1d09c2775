/**
 * The `files` reports the Neovim client keeps for pi: every report stays while pi may still wait for it (a
 * message naming 30 open files gets 30 reports, not the newest 20), each pi's reports stay beside another
 * pi's (two pis on one editor), and old ones go: per pi the newest 20 stay, the rest only while pi's newest message
 * lists their change (the shared table of test/fixtures/report-retention-cases.ts, and seeded random cases).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
	RETENTION_CASES,
	RETENTION_SEED,
	type RetentionCase,
	randomRetentionCases,
} from "../fixtures/report-retention-cases.ts";
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

		it(`retain(): the shared table and random cases (seed ${RETENTION_SEED}; RETENTION_SEED replays)`, async (t) => {
			const w = await world(t, flavour);
			const cases: RetentionCase[] = [...RETENTION_CASES, ...randomRetentionCases(RETENTION_SEED, 100)];
			const got = await w.nv.lua<number[][]>(
				`local inbox = require("pi-ide.inbox")
				local identity = require("pi-ide.inbox.identity")
				local ns = function(v) return v ~= vim.NIL and v or nil end
				return vim.tbl_map(function(c)
					local reports = {}
					for i, r in ipairs(c.reports) do
						reports[i] = { pi_pid = r.pi_pid, pi_ns = ns(r.pi_ns), file = r.file, seq = r.seq, i = i - 1 }
					end
					local listed = {}
					for _, l in ipairs(c.listed) do
						listed[identity.key(l.pi_pid, ns(l.pi_ns))] = l.changed
					end
					return vim.tbl_map(function(r) return r.i end, inbox.retain(reports, listed))
				end, ...)`,
				cases,
			);
			assert.deepEqual(
				// An empty Lua table comes back as an object.
				cases.map((c, i) => ({ name: c.name, kept: Array.isArray(got[i]) ? got[i] : [] })),
				cases.map((c) => ({ name: c.name, kept: c.kept })),
			);
		});
	});
});
