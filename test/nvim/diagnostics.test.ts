/**
 * Diagnostics from several checkers (issue 7): an LSP client and a linter, or two servers, each publish
 * into their own vim.diagnostic namespace, for the content they saw. After the buffer changes (typing, or
 * a reload pi asked for), a checker that has not published again holds items for the old content: they
 * must never be reported as current, while the items of a checker that did publish for the new content
 * are. Real Neovim (0.7.2, which gives DiagnosticChanged no data, and 0.10); the checkers are
 * vim.diagnostic.set calls on two namespaces, with fresh item tables as LSP clients and linters make them.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import type { EditorState, FileReport } from "../../src/protocol/protocol.ts";
import { makePiMessage } from "../fixtures/pi-message.ts";
import { killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, type Nvim, type NvimFlavour, startNvim } from "../helpers/nvim.ts";

after(killAllEditors);

/** Set namespace `ns`'s diagnostics: one warning per message on line 1, in new tables (as checkers do). */
const PUBLISH = `
local publishes = ...
for _, p in ipairs(publishes) do
	local items = {}
	for i, message in ipairs(p.messages) do
		items[i] = { lnum = 0, col = i - 1, message = message, severity = 2, source = p.ns }
	end
	vim.diagnostic.set(vim.api.nvim_create_namespace("pi-ide-test-" .. p.ns), 0, items)
end`;

type Checker = "A" | "B";
interface Publish {
	ns: Checker;
	messages: string[];
}

/** One Lua call for all of them, so the state file written next sees them all. */
const publish = (nv: Nvim, publishes: Publish[]) => nv.lua(PUBLISH, publishes);

interface World {
	nv: Nvim;
	file: string;
}

/** a.txt open, with A and B each reporting one diagnostic for its content. */
async function world(t: TestContext, flavour: NvimFlavour): Promise<World> {
	const nv = await startNvim(t, flavour);
	const file = join(nv.tmp, "a.txt");
	writeFileSync(file, "one\ntwo\n");
	await nv.command("edit a.txt");
	await publish(nv, [
		{ ns: "A", messages: ["a old"] },
		{ ns: "B", messages: ["b old"] },
	]);
	const s = await nv.until((x) => x.active_buffer.diagnostics?.total === 2, "A's and B's diagnostics reported");
	assert.equal(s.active_buffer.diagnostics?.version, s.active_buffer.version, "both current before the change");
	return { nv, file };
}

const tick = (nv: Nvim) => nv.lua<number>("return vim.api.nvim_buf_get_var(0, 'changedtick')");

/** pi writes `content` to the file and tells Neovim; returns Neovim's report once it says "reloaded". */
async function reloadForPi(w: World, content: string): Promise<FileReport> {
	writeFileSync(w.file, content);
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
	const s = await w.nv.until(
		(x) => x.files?.some((f) => f.file === w.file && f.status === "reloaded") === true,
		"the buffer reloaded",
	);
	return s.files?.find((f) => f.file === w.file) as FileReport;
}

/**
 * The ways the buffer gets new content. Each returns the buffer's changedtick after the change.
 * Neovim still holds the checkers' items for the old content afterwards (a reload for pi is a change of
 * the buffer, not a re-read, which before 0.10 dropped them).
 */
const CHANGES: { name: string; change: (w: World) => Promise<number> }[] = [
	{
		name: "typing",
		change: async (w) => {
			await w.nv.input("ggix<Esc>");
			return tick(w.nv);
		},
	},
	{
		name: "a reload pi asked for",
		change: async (w) => {
			await reloadForPi(w, "one, changed by pi\ntwo\n");
			return tick(w.nv);
		},
	},
];

interface Case {
	name: string;
	/** What the checkers publish after the change, or Lua that does it. */
	republish: Publish[] | { lua: string };
	/** The messages then reported as current for the new content. */
	current: string[];
	/** When Neovim before 0.10 reports otherwise (default `current`). */
	currentBefore010?: string[];
}

const CASES: Case[] = [
	{
		name: "only A republishes: A's items are current, B's (for the old content) are not listed",
		republish: [{ ns: "A", messages: ["a new", "a new 2"] }],
		current: ["a new", "a new 2"],
	},
	{
		name: "A and B republish: both are current",
		republish: [
			{ ns: "A", messages: ["a new"] },
			{ ns: "B", messages: ["b new"] },
		],
		current: ["a new", "b new"],
	},
	{
		name: "A republishes items equal to its old ones: current for A, B still not",
		republish: [{ ns: "A", messages: ["a old"] }],
		current: ["a old"],
	},
	{
		name: "B publishes an empty list: nothing is current, A's old items are not listed",
		republish: [{ ns: "B", messages: [] }],
		current: [],
	},
	{
		// 0.10 names the namespace in DiagnosticChanged's data. 0.7.2 gives no data: a republish is seen as a
		// namespace's stored tables replaced, so the very same tables set again look like no publish from A.
		// That costs A's items (left out), never a stale item as current.
		name: "A sets its very same item tables again: current on 0.10, left out on 0.7.2, B never",
		republish: {
			lua: `local ns = vim.api.nvim_create_namespace("pi-ide-test-A")
				vim.diagnostic.set(ns, 0, vim.diagnostic.get(0, { namespace = ns }))`,
		},
		current: ["a old"],
		currentBefore010: [],
	},
];

const messages = (s: EditorState) => (s.active_buffer.diagnostics?.items ?? []).map((d) => d.message).sort();

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: diagnostics of several checkers are current per checker`, () => {
		for (const { name: changeName, change } of CHANGES) {
			for (const c of CASES) {
				it(`after ${changeName}, ${c.name}`, async (t) => {
					const w = await world(t, flavour);
					const has010 = await w.nv.lua<boolean>("return vim.fn.has('nvim-0.10') == 1");
					const version = await change(w);
					const stored = await w.nv.lua<number>(
						"return #vim.diagnostic.get(0, { namespace = vim.api.nvim_create_namespace('pi-ide-test-B') })",
					);
					assert.equal(stored, 1, "B's old items are still stored");
					if (Array.isArray(c.republish)) await publish(w.nv, c.republish);
					else await w.nv.lua(c.republish.lua);
					const s = await w.nv.until(
						(x) => x.active_buffer.version === version && x.active_buffer.diagnostics?.version === version,
						"diagnostics for the new content",
					);
					const expected = has010 ? c.current : (c.currentBefore010 ?? c.current);
					assert.deepEqual(messages(s), expected);
					assert.equal(s.active_buffer.diagnostics?.total, expected.length, "the total counts only current items");
					const report = s.files?.find((f) => f.file === w.file);
					if (report) assert.deepEqual(report.diagnostics, s.active_buffer.diagnostics, "the report agrees");
				});
			}
		}

		it("a :w keeps current namespaces current and stale ones left out", async (t) => {
			const w = await world(t, flavour);
			await w.nv.input("ggix<Esc>");
			await publish(w.nv, [{ ns: "A", messages: ["a new"] }]);
			const edited = await tick(w.nv);
			await w.nv.until((x) => x.active_buffer.diagnostics?.version === edited, "A's new diagnostics reported");
			await w.nv.command("write");
			const written = await tick(w.nv);
			assert.ok(written > edited, "the write moved changedtick");
			const s = await w.nv.until(
				(x) => !x.active_buffer.modified && x.active_buffer.version === written,
				"the written buffer reported",
			);
			assert.equal(s.active_buffer.diagnostics?.version, written, "current before the write, current after it");
			assert.deepEqual(messages(s), ["a new"]);
			// B publishing now (for the written content) makes it current again.
			await publish(w.nv, [{ ns: "B", messages: ["b new"] }]);
			const both = await w.nv.until((x) => x.active_buffer.diagnostics?.total === 2, "B's diagnostics reported");
			assert.equal(both.active_buffer.diagnostics?.version, written);
			assert.deepEqual(messages(both), ["a new", "b new"]);
		});
	});
});

/** M.date's cases: [said, sent, now, date]. */
const DATES: { name: string; said: number | null; sent: number | null; now: number; date: number }[] = [
	{ name: "no version said: now, as for any checker", said: null, sent: 7, now: 9, date: 9 },
	{
		name: "for the content last sent: now (a write moved changedtick, not the content)",
		said: 7,
		sent: 7,
		now: 9,
		date: 9,
	},
	{ name: "for an older version: that version", said: 5, sent: 7, now: 9, date: 5 },
	{ name: "for the content opened (0), changed since: 0", said: 0, sent: 12, now: 12, date: 0 },
	{ name: "after a reopen (sent 0), for the content before it", said: 6, sent: 0, now: 8, date: 6 },
	{ name: "no content sent (client gone): old", said: 5, sent: null, now: 9, date: 5 },
	{ name: "a version ahead of the buffer: never later than now - 1", said: 40, sent: 7, now: 9, date: 8 },
];

/** M.build's duplicate handling: each item is [severity, line, col, message, source?, code?]. */
type Raw = [number, number, number, string, string?, string?];
const DUPLICATES: { name: string; list: Raw[]; total?: number; messages: string[]; expectTotal: number }[] = [
	{
		name: "no duplicates",
		list: [
			[1, 0, 0, "a"],
			[1, 0, 0, "b"],
		],
		messages: ["a", "b"],
		expectTotal: 2,
	},
	{
		name: "an exact duplicate: once",
		list: [
			[1, 0, 0, "a", "s", "1"],
			[1, 0, 0, "a", "s", "1"],
		],
		messages: ["a"],
		expectTotal: 1,
	},
	{
		name: "duplicates among others on the same position",
		list: [
			[1, 2, 3, "a"],
			[1, 2, 3, "b"],
			[1, 2, 3, "a"],
			[1, 2, 3, "b"],
			[1, 2, 3, "c"],
		],
		messages: ["a", "b", "c"],
		expectTotal: 3,
	},
	{
		name: "thirty on one position, ten messages three times each: ten",
		list: Array.from({ length: 30 }, (_, i): Raw => [1, 4, 2, `m${i % 10}`]),
		messages: Array.from({ length: 10 }, (_, i) => `m${i}`),
		expectTotal: 10,
	},
	{
		name: "another severity: two",
		list: [
			[1, 0, 0, "a"],
			[2, 0, 0, "a"],
		],
		messages: ["a", "a"],
		expectTotal: 2,
	},
	{
		name: "another column: two",
		list: [
			[1, 0, 0, "a"],
			[1, 0, 1, "a"],
		],
		messages: ["a", "a"],
		expectTotal: 2,
	},
	{
		name: "another source: two",
		list: [
			[1, 0, 0, "a", "x"],
			[1, 0, 0, "a", "y"],
		],
		messages: ["a", "a"],
		expectTotal: 2,
	},
	{
		name: "another code: two",
		list: [
			[1, 0, 0, "a", "x", "1"],
			[1, 0, 0, "a", "x", "2"],
		],
		messages: ["a", "a"],
		expectTotal: 2,
	},
	{
		name: "a total beyond the list loses only the duplicates found",
		list: [
			[1, 0, 0, "a"],
			[1, 0, 0, "a"],
		],
		total: 30,
		messages: ["a"],
		expectTotal: 29,
	},
];

const BUILD = `
local raws, total = ...
local list = {}
for i, r in ipairs(raws) do
  list[i] = { severity = r[1], lnum = r[2], col = r[3], end_lnum = r[2], end_col = r[3] + 1, message = r[4],
    source = r[5], code = r[6] }
end
local built = require("pi-ide.diagnostics").build(list, 1, total ~= vim.NIL and total or nil)
local messages = {}
for i, item in ipairs(built.items) do messages[i] = item.message end
return { messages = messages, total = built.total }`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: how diagnostics are dated, counted and expected`, () => {
		it("M.date: a publish is never dated later than the content it was computed for", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const got = await nv.lua<number[]>(
				`local d, cases, out = require("pi-ide.diagnostics"), ..., {}
				for i, c in ipairs(cases) do
				  out[i] = d.date(c.said ~= vim.NIL and c.said or nil, c.sent ~= vim.NIL and c.sent or nil, c.now)
				end
				return out`,
				DATES,
			);
			assert.deepEqual(
				DATES.map((c, i) => ({ name: c.name, date: got[i] })),
				DATES.map((c) => ({ name: c.name, date: c.date })),
			);
		});

		it("M.build: exact duplicates are listed and counted once", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			for (const c of DUPLICATES) {
				const got = await nv.lua<{ messages: string[]; total: number }>(BUILD, c.list, c.total ?? null);
				assert.deepEqual(got, { messages: c.messages, total: c.expectTotal }, c.name);
			}
		});

		it("two namespaces publishing the same diagnostic (two clients of one server): reported once", async (t) => {
			const w = await world(t, flavour);
			await publish(w.nv, [
				{ ns: "A", messages: ["same"] },
				{ ns: "B", messages: ["same", "only B"] },
			]);
			const s = await w.nv.until((x) => messages(x).includes("only B"), "both publishes reported");
			// PUBLISH gives both namespaces' items the source "A"/"B": the same problem from two servers differs
			// in source. Make it one server's, twice.
			assert.deepEqual(messages(s), ["only B", "same", "same"], "different sources: two diagnostics");
			await w.nv.lua(`for _, ns in ipairs({ "A", "B" }) do
				vim.diagnostic.set(vim.api.nvim_create_namespace("pi-ide-test-" .. ns), 0,
					{{ lnum = 0, col = 0, message = "same", severity = 1, source = "json", code = "519" }})
			end`);
			const once = await w.nv.until((x) => x.active_buffer.diagnostics?.items[0]?.source === "json", "one server's");
			assert.deepEqual(messages(once), ["same"]);
			assert.equal(once.active_buffer.diagnostics?.total, 1);
		});

		const FORMATTERS: { name: string; lua: string; current: boolean }[] = [
			{
				name: "a formatter that changes the buffer: the diagnostics are for the content before it",
				lua: 'vim.api.nvim_buf_set_lines(args.buf, 0, 1, false, { "ONE" })',
				current: false,
			},
			{ name: "a BufWritePre hook that changes nothing: still current", lua: "local _ = args.buf", current: true },
		];
		for (const f of FORMATTERS) {
			it(`format on save (BufWritePre after the plugin's): ${f.name}`, async (t) => {
				const w = await world(t, flavour);
				await w.nv.input("ggix<Esc>");
				await publish(w.nv, [{ ns: "A", messages: ["a new"] }]);
				const edited = await tick(w.nv);
				await w.nv.until((x) => x.active_buffer.diagnostics?.version === edited, "A's diagnostics for the edit");
				await w.nv.lua(
					`vim.api.nvim_create_autocmd("BufWritePre", { buffer = 0, callback = function(args) ${f.lua} end })`,
				);
				const before = await tick(w.nv);
				await w.nv.command("write");
				const written = await tick(w.nv);
				assert.ok(written > before, "the write moved changedtick");
				const s = await w.nv.until(
					(x) => !x.active_buffer.modified && x.active_buffer.version === written,
					"the written buffer reported",
				);
				assert.equal(s.active_buffer.diagnostics?.version, f.current ? written : before);
			});
		}

		const CHECKERS: { name: string; lua: string; expected: boolean }[] = [
			{ name: "no checker has published: not expected", lua: "", expected: false },
			{
				name: "a linter published its items: expected",
				lua: 'vim.diagnostic.set(vim.api.nvim_create_namespace("lint"), 0, {{ lnum = 0, col = 0, message = "x", severity = 2 }})',
				expected: true,
			},
			{
				name: "a linter published an empty list (clean): expected",
				lua: 'vim.diagnostic.set(vim.api.nvim_create_namespace("lint"), 0, {})',
				expected: true,
			},
			{
				name: "b:pi_ide_diagnostics_expected, nothing published: expected",
				lua: "vim.b.pi_ide_diagnostics_expected = true",
				expected: true,
			},
		];
		for (const c of CHECKERS) {
			it(`pi's reload report: ${c.name}`, async (t) => {
				const nv = await startNvim(t, flavour);
				const file = join(nv.tmp, "a.txt");
				writeFileSync(file, "one\n");
				await nv.command("edit a.txt");
				if (c.lua) await nv.lua(c.lua);
				const report = await reloadForPi({ nv, file }, "one, changed by pi\n");
				assert.equal(report.diagnostics_expected, c.expected);
			});
		}
	});
});
