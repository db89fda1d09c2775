/**
 * Protocol v0.4 approval in Neovim (pi-ide.approval): a request built and written by pi's own code
 * (src/link/approval.ts) from a live stand-in pi. Neovim says so in one line, marks the proposed hunks in the
 * open buffer, shows the request in the statusline and :PiIde, and `:PiIde approve` / `:PiIde reject` put the
 * decision in the state file without touching the buffer or the disk. `:PiIde proposal` shows the change
 * read-only beside the buffer (issue 26: a buffer with unsaved text beside itself with pi's hunks that touch none of
 * the user's changes placed; the touching ones named), no W12. Bad requests: nothing
 * pending, one notice, no error.
 */
import assert from "node:assert/strict";
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import type { ApprovalMessage } from "../../src/protocol/wire.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import {
	assertNoErrors,
	CONTENT,
	lines,
	luaWithoutPrompt,
	pollPiIde,
	type World,
	world,
} from "../helpers/nvim-inbox.ts";
import { pollFor } from "../helpers/poll.ts";

after(killAllEditors);

const PROPOSED = "one\nTWO\nthree\nfour\n";
const ID = "req-1";

function request(w: World, overrides: Partial<ApprovalMessage> = {}, file = w.file): ApprovalMessage {
	const now = Date.now() / 1000;
	return {
		protocol: "0.4",
		kind: "pi-approval",
		pid: w.piPid,
		editor_pid: w.nv.pid,
		timestamp: now,
		request: buildRequest({
			id: ID,
			tool: "edit",
			file,
			before: { kind: "text", text: CONTENT },
			after: PROPOSED,
			timeoutS: 120,
			now,
		}),
		...overrides,
	};
}

const approvalName = (w: World) => `pi-${w.piPid}.approval.json`;

function ask(w: World, raw: string, mode?: number): void {
	writeRawStateFile(w.nv.stateDir, approvalName(w), raw, mode);
}

const PENDING = `local n = 0
	for _ in pairs(require("pi-ide.approval")._state().pending) do n = n + 1 end
	return n`;

/**
 * The approval marks of the current buffer as drawn: the lines whose sign column shows "?" (Neovim 0.7 does not
 * report an extmark's sign in its details), and the virtual lines' text.
 */
const MARKS = `local ns = vim.api.nvim_create_namespace("pi-ide-approval")
	local virt = {}
	for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
		for _, l in ipairs(m[4].virt_lines or {}) do virt[#virt + 1] = l[1][1] end
	end
	vim.cmd("redraw")
	local signs = {}
	for row = 1, 8 do
		if vim.fn.screenstring(row, 1) == "?" then
			local cells = {}
			for col = 3, 12 do cells[#cells + 1] = vim.fn.screenstring(row, col) end
			signs[#signs + 1] = vim.trim(table.concat(cells))
		end
	end
	return { signs = signs, virt = virt }`;

const waitPending = (w: World, n: number) =>
	w.nv
		.until(() => true, "state")
		.then(async () => {
			const deadline = Date.now() + 5000;
			while (Date.now() < deadline) {
				if ((await w.nv.lua<number>(PENDING)) === n) return;
				await new Promise((r) => setTimeout(r, 25));
			}
			assert.fail(`pending requests never became ${n}`);
		});

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: approving pi's proposed change (v0.4)`, () => {
		it("the state file says Neovim answers approvals: `decisions`, empty", async (t) => {
			const w = await world(t, flavour);
			const s = await w.nv.until((s) => Array.isArray((s as { decisions?: unknown }).decisions), "decisions");
			assert.deepEqual((s as { decisions?: unknown }).decisions, []);
		});

		for (const c of [
			{ command: "approve", decision: "accept", said: /approved: pi applies its change to a\.txt/ },
			{ command: "reject", decision: "reject", said: /rejected: pi leaves a\.txt as it is/ },
		])
			it(`a request is marked and listed; :PiIde ${c.command} writes the decision, touches nothing`, async (t) => {
				const w = await world(t, flavour);
				ask(w, encodeApprovalMessage(request(w)));
				await waitPending(w, 1);
				assert.deepEqual(await w.nv.lua(MARKS), { signs: ["two", "three"], virt: ["+ TWO", "+ four"] });
				assert.equal(await w.nv.lua("return require('pi-ide').statusline()"), "approve?");
				await pollPiIde(w.nv, /pi waits for your approval: edit of a\.txt \(2 hunks\), 1[12]\d s left/);
				assert.match(await w.nv.exec("messages"), /pi waits for your approval \(2 hunks, 120 s\) of a\.txt/);
				const said = await w.nv.exec(`PiIde ${c.command}`);
				assert.match(said, c.said);
				const s = await w.nv.until(
					(s) => ((s as { decisions?: unknown[] }).decisions ?? []).length === 1,
					"the decision is in the state file",
				);
				assert.deepEqual((s as { decisions?: unknown }).decisions, [{ pi_pid: w.piPid, id: ID, decision: c.decision }]);
				assert.equal(await w.nv.lua(PENDING), 0);
				assert.deepEqual(await w.nv.lua(MARKS), { signs: [], virt: [] });
				assert.deepEqual(await lines(w.nv), ["one", "two", "three"], "the buffer is pi's to change, not Neovim's");
				assert.equal(readFileSync(w.file, "utf8"), CONTENT);
				assert.match(await w.nv.exec("PiIde approve"), /pi is not waiting for your approval/);
				await assertNoErrors(w.nv);
			});

		// Issue 22, item 8: an answer is bound to the request the user saw. Each step: pi asks (`ask` an id), pi's
		// request ends (`end`), or the user runs a command; `decided` is the state file's decisions at the end.
		const BOUND: {
			name: string;
			steps: ({ ask: string } | { end: true } | { command: string; said: RegExp })[];
			decided: { id: string; decision: string }[];
		}[] = [
			{
				name: "A shown, A times out, B arrives: approve refuses and names B; approve again approves B",
				steps: [
					{ ask: "req-A" },
					{ end: true },
					{ ask: "req-B" },
					{ command: "approve", said: /not approved: the request you saw is gone; pi now asks about a\.txt/ },
					{ command: "approve", said: /approved: pi applies its change to a\.txt/ },
				],
				decided: [{ id: "req-B", decision: "accept" }],
			},
			{
				name: "the same with reject: B is not rejected unseen",
				steps: [
					{ ask: "req-A" },
					{ end: true },
					{ ask: "req-B" },
					{ command: "reject", said: /not rejected: the request you saw is gone/ },
				],
				decided: [],
			},
			{
				name: "A shown, A times out, B arrives, :PiIde proposal shows B: approve approves B",
				steps: [
					{ ask: "req-A" },
					{ end: true },
					{ ask: "req-B" },
					{ command: "proposal", said: /^$/ },
					{ command: "approve", said: /approved: pi applies its change/ },
				],
				decided: [{ id: "req-B", decision: "accept" }],
			},
			{
				name: "A answered, then B arrives: B is the one shown, approve approves it",
				steps: [
					{ ask: "req-A" },
					{ command: "reject", said: /rejected: pi leaves a\.txt/ },
					{ end: true },
					{ ask: "req-B" },
					{ command: "approve", said: /approved: pi applies its change/ },
				],
				decided: [
					{ id: "req-A", decision: "reject" },
					{ id: "req-B", decision: "accept" },
				],
			},
		];
		for (const c of BOUND)
			it(`an answer is for the request the user saw: ${c.name}`, async (t) => {
				const w = await world(t, flavour, { answerPrompts: false });
				for (const step of c.steps) {
					if ("ask" in step) {
						const r = request(w);
						ask(w, encodeApprovalMessage({ ...r, request: { ...r.request, id: step.ask } }));
						await pollFor(
							() =>
								// Known by pi's identity (pid and namespace, v0.5) and the request's id.
								w.nv.lua<boolean>(
									`return require("pi-ide.approval")._state().told["${w.piPid}@pid:[4026531836]:${step.ask}"] == true`,
								),
							`Neovim told of ${step.ask}`,
						);
					} else if ("end" in step) {
						unlinkSync(join(w.nv.stateDir, approvalName(w)));
						await waitPending(w, 0);
					} else {
						const said = await luaWithoutPrompt<string>(
							w.nv,
							`return vim.api.nvim_exec("PiIde ${step.command}", true)`,
						);
						assert.match(said.trim(), step.said, step.command);
						if (step.command === "proposal") await luaWithoutPrompt(w.nv, "vim.cmd('only')");
					}
				}
				const want = c.decided.map((d) => ({ pi_pid: w.piPid, ...d }));
				assert.deepEqual(await w.nv.lua('return require("pi-ide.approval").report()'), want);
				const s = await w.nv.until(
					(s) => ((s as { decisions?: unknown[] }).decisions ?? []).length === want.length,
					"the decisions in the state file",
				);
				assert.deepEqual((s as { decisions?: unknown }).decisions, want);
				await assertNoErrors(w.nv);
			});

		it("a file opened after the request arrived gets its marks", async (t) => {
			const w = await world(t, flavour);
			const other = join(w.nv.tmp, "b.txt");
			writeFileSync(other, CONTENT);
			ask(w, encodeApprovalMessage(request(w, {}, other)));
			await waitPending(w, 1);
			assert.deepEqual(await w.nv.lua(MARKS), { signs: [], virt: [] }, "a.txt is not the file");
			await w.nv.command("edit b.txt");
			assert.deepEqual(await w.nv.lua(MARKS), { signs: ["two", "three"], virt: ["+ TWO", "+ four"] });
		});

		it("pi removes its request (decided elsewhere, timed out): nothing pending, marks gone", async (t) => {
			const w = await world(t, flavour);
			ask(w, encodeApprovalMessage(request(w)));
			await waitPending(w, 1);
			unlinkSync(join(w.nv.stateDir, approvalName(w)));
			await waitPending(w, 0);
			assert.deepEqual(await w.nv.lua(MARKS), { signs: [], virt: [] });
			assert.equal(await w.nv.lua("return require('pi-ide').statusline()"), "");
		});

		it(":PiIde proposal: the proposed text beside the buffer, read-only; nothing changes", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			ask(w, encodeApprovalMessage(request(w)));
			await waitPending(w, 1);
			await luaWithoutPrompt(w.nv, 'vim.cmd("PiIde proposal")');
			const view = await luaWithoutPrompt<{ wins: number; other: string[]; diff: boolean; mine: string[] }>(
				w.nv,
				`local other
				for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
					if vim.api.nvim_win_get_buf(win) ~= vim.api.nvim_get_current_buf() then
						other = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
					end
				end
				return { wins = #vim.api.nvim_tabpage_list_wins(0), other = other, diff = vim.wo.diff,
					mine = vim.api.nvim_buf_get_lines(0, 0, -1, false) }`,
			);
			assert.deepEqual(view, {
				wins: 2,
				other: ["one", "TWO", "three", "four"],
				diff: true,
				mine: ["one", "two", "three"],
			});
		});

		// Issue 26 item 6: the proposal against what the user sees. The user changed line 2 (unsaved): pi's hunk on
		// line 2 touches it (marked "!" on the user's line, named), its "four" after line 3 does not (marked, placed).
		it(":PiIde proposal with unsaved text in the buffer: the buffer beside itself with the hunks that touch none of the user's lines placed; the touching one named and marked on the user's line; the text kept, no W12", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			await w.nv.lua('vim.api.nvim_buf_set_lines(0, 1, 2, false, { "mine, unsaved" })');
			ask(w, encodeApprovalMessage(request(w)));
			await waitPending(w, 1);
			const signs = await w.nv.lua<string[]>(`vim.cmd("redraw")
				local out = {}
				for row = 1, 8 do
					local c = vim.fn.screenstring(row, 1)
					if c == "?" or c == "!" then
						local cells = {}
						for col = 3, 20 do cells[#cells + 1] = vim.fn.screenstring(row, col) end
						out[#out + 1] = c .. " " .. vim.trim(table.concat(cells))
					end
				end
				return out`);
			assert.deepEqual(signs, ["! mine, unsaved", "? three"], "the touching hunk on the user's line, the other placed");
			const touch =
				/1 of 2 hunks touches your unsaved line 2: if accepted, the file gets pi's text and your buffer keeps yours there/;
			assert.match(await w.nv.exec("messages"), touch, "the arrival notice names the user's line");
			const said = await luaWithoutPrompt<string>(w.nv, 'return vim.api.nvim_exec("PiIde proposal", true)');
			assert.match(said, touch, "the proposal view names it too");
			const view = await luaWithoutPrompt<{ other: string[]; diff: boolean; mine: string[] }>(
				w.nv,
				`local other
				for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
					if vim.api.nvim_win_get_buf(win) ~= vim.api.nvim_get_current_buf() then
						other = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
					end
				end
				return { other = other, diff = vim.wo.diff, mine = vim.api.nvim_buf_get_lines(0, 0, -1, false) }`,
			);
			assert.deepEqual(view, {
				other: ["one", "mine, unsaved", "three", "four"],
				diff: true,
				mine: ["one", "mine, unsaved", "three"],
			});
			await luaWithoutPrompt(w.nv, 'vim.cmd("checktime")');
			assert.deepEqual(await lines(w.nv), ["one", "mine, unsaved", "three"]);
			assert.equal(readFileSync(w.file, "utf8"), CONTENT);
			await assertNoErrors(w.nv);
		});

		it("a request naming another editor is not ours: nothing pending, nothing said", async (t) => {
			const w = await world(t, flavour);
			ask(w, encodeApprovalMessage(request(w, { editor_pid: 1 })));
			await new Promise((r) => setTimeout(r, 300));
			assert.equal(await w.nv.lua(PENDING), 0);
			assert.doesNotMatch(await w.nv.exec("messages"), /approval/);
		});

		const BAD: { name: string; raw: (w: World) => string; mode?: number; why: RegExp }[] = [
			{ name: "malformed JSON", raw: () => "{ not json", why: /not valid JSON/ },
			{
				name: "another pi's pid inside",
				raw: (w) => encodeApprovalMessage(request(w, { pid: 1 })),
				why: /its pid is not the one in its name/,
			},
			{
				name: "no request id",
				raw: (w) => JSON.stringify({ ...request(w), request: { ...request(w).request, id: "" } }),
				why: /request\.id/,
			},
			{ name: "group-readable", raw: (w) => encodeApprovalMessage(request(w)), mode: 0o640, why: /group\/other/ },
			{ name: "not a request", raw: () => '{"kind":"pi"}', why: /not a pi approval request/ },
		];
		for (const c of BAD)
			it(`a bad request (${c.name}): nothing pending, one notice, no error`, async (t) => {
				const w = await world(t, flavour);
				ask(w, c.raw(w), c.mode);
				await pollPiIde(w.nv, c.why);
				assert.equal(await w.nv.lua(PENDING), 0);
				await assertNoErrors(w.nv);
			});

		it("a request behind a symlink is not read", async (t) => {
			const w = await world(t, flavour);
			const elsewhere = join(w.nv.tmp, "planted.json");
			writeFileSync(elsewhere, encodeApprovalMessage(request(w)), { mode: 0o600 });
			symlinkSync(elsewhere, join(w.nv.stateDir, approvalName(w)));
			await pollPiIde(w.nv, /link|not a regular file/);
			assert.equal(await w.nv.lua(PENDING), 0);
		});
	});
});
