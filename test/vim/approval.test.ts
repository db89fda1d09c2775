/**
 * Protocol v0.4 approval in real Vim 9 under tmux (editors/vim/autoload/pi_ide/approval.vim), with requests built
 * and encoded by pi's own code (src/link/approval.ts) from a live stand-in pi: Vim says so in one line, marks the
 * proposed hunks in the open buffer (signs and virtual text), shows "approve?" in the statusline and :PiIde, and
 * `:PiIde approve` / `:PiIde reject` put the decision in the state file without touching the buffer or the disk.
 * `:PiIde proposal` shows the change read-only. pi ending the wait clears everything. Bad request files: nothing
 * pending, at most one notice each, never an error or a hit-enter prompt. (The Neovim twin:
 * test/nvim/approval.test.ts; with real pi: test/e2e/vim.test.ts.)
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chownSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import type { ApprovalMessage } from "../../src/protocol/wire.ts";
import { deadPid, killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startVim, type Vim, type VimOptions } from "../helpers/vim.ts";

after(killAllEditors);

const CONTENT = "one\ntwo\nthree\n";
const PROPOSED = "one\nTWO\nthree\nfour\n";

interface World {
	vim: Vim;
	file: string;
	piPid: number;
}

async function world(t: TestContext, options: VimOptions = {}): Promise<World> {
	const vim = await startVim(t, options);
	const file = join(vim.dirs.work, "a.txt");
	writeFileSync(file, CONTENT);
	await vim.ex("edit a.txt");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "a.txt open");
	const pi = await spawnLiveEditor();
	return { vim, file, piPid: pi.pid };
}

function request(
	w: World,
	options: { id?: string; file?: string; pid?: number; now?: number; timeoutS?: number } = {},
	overrides: Partial<ApprovalMessage> = {},
): ApprovalMessage {
	const now = options.now ?? Date.now() / 1000;
	return {
		protocol: "0.4",
		kind: "pi-approval",
		pid: options.pid ?? w.piPid,
		editor_pid: w.vim.pid,
		timestamp: now,
		request: buildRequest({
			id: options.id ?? "req-1",
			tool: "edit",
			file: options.file ?? w.file,
			before: { kind: "text", text: CONTENT },
			after: PROPOSED,
			timeoutS: options.timeoutS ?? 120,
			now,
		}),
		...overrides,
	};
}

const nameOf = (pid: number) => `pi-${pid}.approval.json`;

function ask(w: World, raw: string, options: { pid?: number; mode?: number } = {}): string {
	return writeRawStateFile(w.vim.dirs.stateDir, nameOf(options.pid ?? w.piPid), raw, options.mode);
}

const pending = (vim: Vim) => vim.expr<number>("len(pi_ide#approval#Debug().pending)");
const waitPending = (vim: Vim, n: number) => vim.waitExpr(`len(pi_ide#approval#Debug().pending) == ${n}`);
const decisions = (s: Record<string, unknown>) => s["decisions"] as unknown[] | undefined;
const lines = (vim: Vim) => vim.expr<string[]>("getline(1, '$')");
const messages = (vim: Vim) => vim.expr<string>("execute('messages')");
const said = (vim: Vim, command: string) => vim.expr<string>(`trim(execute(${JSON.stringify(command)}))`);

/**
 * The approval marks of the current buffer: the lines with the `?` sign, and the lines that carry virtual text
 * (Vim 9.0's prop_list() does not give the text: the screen shows it, see `screen`).
 */
const MARKS = `[map(sign_getplaced(bufnr(), {'group': 'pi_ide_approval'})[0].signs, {_, s -> s.lnum}),
	filter(range(1, line('$')), {_, l -> !empty(filter(prop_list(l), {_, p -> p.type ==# 'pi_ide_approval_add'}))})]`.replaceAll(
	"\n",
	" ",
);
const NO_MARKS = [[], []];
const MARKED = [
	[2, 3],
	[2, 3],
];

/** Wait until the text rows of the screen (above the first `~`) are `rows`. */
async function screenShows(vim: Vim, rows: string[]): Promise<void> {
	let last: string[] = [];
	await pollUntil(
		async () => {
			const all = (await vim.capture()).split("\n").map((l) => l.trimEnd());
			const end = all.findIndex((l) => l.startsWith("~"));
			last = all.slice(0, end < 0 ? all.length : end);
			return JSON.stringify(last) === JSON.stringify(rows) ? true : undefined;
		},
		() => `the screen shows ${JSON.stringify(rows)}; last: ${JSON.stringify(last)}`,
		{ intervalMs: 25 },
	);
}

async function assertNoErrors(vim: Vim): Promise<void> {
	const all = await messages(vim);
	assert.doesNotMatch(all, /E\d{2,4}:|Error|internal error/, all);
	assert.doesNotMatch(await vim.capture(), /Press ENTER/);
}

describe("vim: approving pi's proposed change (v0.4)", { concurrency: 3 }, () => {
	it("marked and told once; :PiIde approve, then reject of the next, go into `decisions`; nothing else changes", async (t) => {
		const w = await world(t);
		const first = await w.vim.until((s) => Array.isArray(decisions(s)), "decisions in the state file");
		assert.deepEqual(decisions(first), [], "an empty list says Vim answers approvals");
		const tick = await w.vim.expr<number>("b:changedtick");
		await w.vim.keys("3G", "l");
		await w.vim.waitExpr("line('.') == 3 && col('.') == 2");
		const where = "[win_getid(), winnr('$'), line('.'), col('.'), mode()]";
		const before = await w.vim.expr(where);

		ask(w, encodeApprovalMessage(request(w)));
		await waitPending(w.vim, 1);
		assert.deepEqual(await w.vim.expr(where), before, "no window opened, the cursor where it was");
		assert.deepEqual(await w.vim.expr(MARKS), MARKED);
		await screenShows(w.vim, ["  one", "? two", "  + TWO", "? three", "  + four"]);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "approve?");
		assert.match(
			await said(w.vim, "PiIde"),
			/pi waits for your approval: edit of a\.txt \(2 hunks\), 1[12]\d s left\. :PiIde approve \/ reject \/ proposal/,
		);
		await w.vim.waitExpr("execute('messages') =~# 'pi waits for your approval'");
		assert.match(await messages(w.vim), /\(pi-ide\) pi waits for your approval \(2 hunks, 120 s\) of a\.txt: :PiIde/);
		assert.equal(await w.vim.expr("&modified"), 0);
		assert.equal(await w.vim.expr("b:changedtick"), tick, "marks do not change the buffer");

		assert.equal(await said(w.vim, "PiIde approve"), "(pi-ide) approved: pi applies its change to a.txt");
		let s = await w.vim.until((s) => decisions(s)?.length === 1, "the decision in the state file");
		assert.deepEqual(decisions(s), [{ pi_pid: w.piPid, id: "req-1", decision: "accept" }]);
		assert.equal(await pending(w.vim), 0);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		await screenShows(w.vim, ["one", "two", "three"]);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "");
		assert.equal(await said(w.vim, "PiIde approve"), "(pi-ide) pi is not waiting for your approval");

		// The next request of the same pi (pi asks one write/edit after another).
		ask(w, encodeApprovalMessage(request(w, { id: "req-2" })));
		await waitPending(w.vim, 1);
		assert.equal(await said(w.vim, "PiIde reject"), "(pi-ide) rejected: pi leaves a.txt as it is");
		s = await w.vim.until((s) => decisions(s)?.length === 2, "both decisions, newest last");
		assert.deepEqual(decisions(s), [
			{ pi_pid: w.piPid, id: "req-1", decision: "accept" },
			{ pi_pid: w.piPid, id: "req-2", decision: "reject" },
		]);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		assert.deepEqual(await lines(w.vim), ["one", "two", "three"], "the buffer is pi's to change, not Vim's");
		assert.equal(readFileSync(w.file, "utf8"), CONTENT);
		assert.equal((await messages(w.vim)).match(/pi waits for your approval/g)?.length, 2, "told once per request");
		await assertNoErrors(w.vim);
	});

	// Issue 22, item 8: an answer is for the request the user saw (PROTOCOL.md). A shown, A ends (timed out), B arrives.
	const BOUND: { name: string; commands: { command: string; said: RegExp }[]; decided: unknown[] }[] = [
		{
			name: "approve refuses and names B; approve again approves B",
			commands: [
				{
					command: "PiIde approve",
					said: /^\(pi-ide\) not approved: the request you saw is gone; pi now asks about a\.txt/,
				},
				{ command: "PiIde approve", said: /^\(pi-ide\) approved: pi applies its change to a\.txt$/ },
			],
			decided: [{ id: "req-B", decision: "accept" }],
		},
		{
			name: "reject refuses; :PiIde proposal shows B; reject then rejects B",
			commands: [
				{ command: "PiIde reject", said: /^\(pi-ide\) not rejected: the request you saw is gone/ },
				{ command: "PiIde proposal", said: /pi-ide:\/\/proposal/ },
				{ command: "PiIde reject", said: /^\(pi-ide\) rejected: pi leaves a\.txt as it is$/ },
			],
			decided: [{ id: "req-B", decision: "reject" }],
		},
	];
	for (const c of BOUND)
		it(`an answer is for the request the user saw: A shown, A ends, B arrives: ${c.name}`, async (t) => {
			const w = await world(t);
			await w.vim.until((s) => Array.isArray(decisions(s)), "decisions in the state file");
			const path = ask(w, encodeApprovalMessage(request(w, { id: "req-A" })));
			await waitPending(w.vim, 1);
			unlinkSync(path);
			await waitPending(w.vim, 0);
			ask(w, encodeApprovalMessage(request(w, { id: "req-B" })));
			await w.vim.waitExpr(`get(get(pi_ide#approval#Debug().pending, string(${w.piPid}), {}), 'id', '') ==# 'req-B'`);
			for (const step of c.commands) {
				assert.match(await said(w.vim, step.command), step.said, step.command);
				if (step.command === "PiIde proposal") await w.vim.ex("only");
			}
			const want = c.decided.map((d) => ({ pi_pid: w.piPid, ...(d as object) }));
			assert.deepEqual(await w.vim.expr("pi_ide#approval#Decisions()"), want);
			const s = await w.vim.until((s) => decisions(s)?.length === want.length, "the decisions in the state file");
			assert.deepEqual(decisions(s), want);
			await assertNoErrors(w.vim);
		});

	it("a file loaded after the request gets its marks; pi ending the wait clears them; answering then says so", async (t) => {
		const w = await world(t);
		const other = join(w.vim.dirs.work, "b.txt");
		writeFileSync(other, CONTENT);
		const path = ask(w, encodeApprovalMessage(request(w, { file: other })));
		await waitPending(w.vim, 1);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS, "a.txt is not the file");
		assert.equal(await w.vim.expr(`bufexists('${other}')`), 0, "nothing opened");
		await w.vim.ex("edit b.txt");
		assert.deepEqual(await w.vim.expr(MARKS), MARKED);
		// Marks off (Neovim's review_marks): the next read of the buffer leaves none; the request still waits.
		await w.vim.ex("let g:pi_ide_review_marks = 0 | edit!");
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "approve?");
		await w.vim.ex("unlet g:pi_ide_review_marks | edit!");
		assert.deepEqual(await w.vim.expr(MARKS), MARKED);
		unlinkSync(path);
		await waitPending(w.vim, 0);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "");
		assert.equal(await said(w.vim, "PiIde reject"), "(pi-ide) pi is not waiting for your approval");

		// Gone between two polls: the answer finds the file missing and does nothing but say so.
		ask(w, encodeApprovalMessage(request(w, { id: "req-3" })));
		await waitPending(w.vim, 1);
		unlinkSync(path);
		assert.match(await said(w.vim, "PiIde approve"), /is gone|is not waiting/);
		assert.deepEqual(decisions(w.vim.state() ?? {}), []);
		await assertNoErrors(w.vim);
	});

	it("a request that runs out, whose pi dies or that is replaced by junk leaves; :PiIde disable forgets, enable reads again", async (t) => {
		const w = await world(t);
		ask(w, encodeApprovalMessage(request(w, { timeoutS: 2 })));
		await waitPending(w.vim, 1);
		await waitPending(w.vim, 0);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);

		const pi = await spawnLiveEditor();
		ask(w, encodeApprovalMessage(request(w, { pid: pi.pid, id: "dies" })), { pid: pi.pid });
		await waitPending(w.vim, 1);
		await pi.kill();
		await waitPending(w.vim, 0);

		ask(w, encodeApprovalMessage(request(w, { id: "stays" })));
		await waitPending(w.vim, 1);
		await w.vim.ex("PiIde disable");
		assert.equal(await pending(w.vim), 0);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		await w.vim.ex("PiIde enable");
		await waitPending(w.vim, 1);
		assert.deepEqual(await w.vim.expr(MARKS), MARKED);
		assert.equal((await messages(w.vim)).match(/pi waits for your approval/g)?.length, 3, "each request told once");

		// Replaced by a file that is no request: nothing known is waited on any more.
		ask(w, "{ not json");
		await waitPending(w.vim, 0);
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		assert.equal((await messages(w.vim)).match(/ignoring pi-\d+\.approval\.json: not valid JSON/g)?.length, 1);
		await assertNoErrors(w.vim);
	});

	it(":PiIde proposal: beside the buffer in diff mode, read-only; with unsaved text, the buffer beside itself with the hunks that touch none of the user's lines placed, the touching one named and marked on the user's line", async (t) => {
		const w = await world(t);
		ask(w, encodeApprovalMessage(request(w)));
		await waitPending(w.vim, 1);
		const here = await w.vim.expr<number>("win_getid()");
		await w.vim.ex("PiIde proposal");
		const beside = await w.vim.expr<[number, number, string[], number, number, number, string]>(
			"[win_getid(), winnr('$'), getbufline(winbufnr(winnr('l')), 1, '$'), &diff, getbufvar(winbufnr(winnr('l')), '&modifiable'), getwinvar(winnr('l'), '&diff'), getbufvar(winbufnr(winnr('l')), '&buftype')]",
		);
		assert.deepEqual(beside, [here, 2, ["one", "TWO", "three", "four"], 1, 0, 1, "nofile"]);
		assert.deepEqual(await lines(w.vim), ["one", "two", "three"]);
		await w.vim.ex("only | diffoff!");

		// Issue 26 item 6: the user's unsaved edit of a line pi would replace. The proposal against what the user sees:
		// pi's hunk on line 2 touches it (a "!" sign on the user's line, named in the notice and by the proposal view),
		// its "four" after line 3 does not (placed); the view is the buffer beside itself with "four" placed.
		unlinkSync(join(w.vim.dirs.stateDir, nameOf(w.piPid)));
		await waitPending(w.vim, 0);
		await w.vim.keys("2G", "c", "c", "mine, unsaved", "Escape");
		await w.vim.waitExpr("&modified && getline(2) ==# 'mine, unsaved' && mode() ==# 'n'");
		ask(w, encodeApprovalMessage(request(w, { id: "req-2" })));
		await waitPending(w.vim, 1);
		assert.deepEqual(await w.vim.expr(MARKS), MARKED, "the touching hunk on the user's line 2, the other placed");
		assert.deepEqual(
			await w.vim.expr("map(sign_getplaced(bufnr(), {'group': 'pi_ide_approval'})[0].signs, {_, s -> s.name})"),
			["PiIdeApprovalTouch", "PiIdeApproval"],
		);
		const touch = /1 of 2 hunks touches your unsaved line 2\b/;
		assert.match(await messages(w.vim), touch, "the arrival notice names the user's line");
		assert.match(await said(w.vim, "PiIde proposal"), touch, "the proposal view names it too");
		const view = await w.vim.expr<[number, string[], number]>(
			"[win_getid(), getbufline(winbufnr(winnr('l')), 1, '$'), getwinvar(winnr('l'), '&diff')]",
		);
		assert.deepEqual(view, [here, ["one", "mine, unsaved", "three", "four"], 1]);
		await w.vim.ex("checktime");
		assert.deepEqual(await lines(w.vim), ["one", "mine, unsaved", "three"]);
		assert.equal(await w.vim.expr("&modified"), 1);
		await assertNoErrors(w.vim);
	});

	it("bad request files: nothing pending, one notice each (none for another editor's or a dead pi's), no error", async (t) => {
		const w = await world(t, { cols: 80, rows: 24 });
		const pis = await Promise.all(Array.from({ length: 9 }, () => spawnLiveEditor()));
		const pid = (i: number) => (pis[i] as { pid: number }).pid;
		const good = (i: number, options: Parameters<typeof request>[1] = {}, overrides: Partial<ApprovalMessage> = {}) =>
			encodeApprovalMessage(request(w, { pid: pid(i), ...options }, overrides));
		const dead = await deadPid();
		const cases: { name: string; pid: number; write: () => void; why: RegExp | null }[] = [
			{
				name: "malformed",
				pid: pid(0),
				write: () => void ask(w, "{ not json", { pid: pid(0) }),
				why: /not valid JSON/,
			},
			{
				name: "oversized",
				pid: pid(1),
				write: () =>
					void ask(w, JSON.stringify({ ...request(w, { pid: pid(1) }), pad: "x".repeat(1024 * 1024) }), {
						pid: pid(1),
					}),
				why: /over the 1048576-byte limit/,
			},
			{
				name: "another user's file",
				pid: pid(2),
				write: () => {
					const planted = join(w.vim.dirs.root, "foreign.json");
					writeFileSync(planted, good(2), { mode: 0o600 });
					chownSync(planted, 4242, 4242);
					renameSync(planted, join(w.vim.dirs.stateDir, nameOf(pid(2))));
				},
				why: /belongs to (a user without a name|\S+), not to you/,
			},
			{
				name: "a symlink",
				pid: pid(3),
				write: () => {
					const planted = join(w.vim.dirs.root, "planted.json");
					writeFileSync(planted, good(3), { mode: 0o600 });
					symlinkSync(planted, join(w.vim.dirs.stateDir, nameOf(pid(3))));
				},
				why: /is a link, not a regular file/,
			},
			{
				name: "group-readable",
				pid: pid(4),
				write: () => void ask(w, good(4), { pid: pid(4), mode: 0o640 }),
				why: /group\/other/,
			},
			{
				name: "a FIFO",
				pid: pid(5),
				write: () => void execFileSync("mkfifo", ["-m", "600", join(w.vim.dirs.stateDir, nameOf(pid(5)))]),
				why: /is a fifo, not a regular file/,
			},
			{
				name: "expired",
				pid: pid(6),
				write: () => void ask(w, good(6, { now: Date.now() / 1000 - 200, timeoutS: 60 }), { pid: pid(6) }),
				why: /the request expired 1[34]\d s ago/,
			},
			{
				name: "no request id",
				pid: pid(7),
				write: () => {
					const m = request(w, { pid: pid(7) });
					ask(w, JSON.stringify({ ...m, request: { ...m.request, id: "" } }), { pid: pid(7) });
				},
				why: /request\.id: not a string/,
			},
			{
				name: "for another editor",
				pid: pid(8),
				write: () => void ask(w, good(8, {}, { editor_pid: 1 }), { pid: pid(8) }),
				why: null,
			},
			{
				name: "from a dead pi",
				pid: dead,
				write: () => void ask(w, encodeApprovalMessage(request(w, { pid: dead })), { pid: dead }),
				why: null,
			},
		];
		for (const c of cases) c.write();
		const noisy = cases.filter((c) => c.why !== null);
		await w.vim.waitExpr(
			`len(filter(pi_ide#Summary(), {_, l -> l =~# '^ignored pi-\\d\\+\\.approval\\.json'})) == ${noisy.length}`,
		);
		// Past the two seconds in which a file just written is read again: nothing is said twice.
		await pollUntil(() => undefined, "", 2500).catch(() => undefined);
		const all = await messages(w.vim);
		const summary = (await w.vim.expr<string[]>("pi_ide#Summary()")).join("\n");
		for (const c of cases) {
			const told = all.split("\n").filter((l) => l.includes(nameOf(c.pid)));
			assert.equal(told.length, c.why ? 1 : 0, `${c.name}: ${all}`);
			if (c.why)
				assert.match(summary, new RegExp(`ignored ${nameOf(c.pid).replaceAll(".", "\\.")}: .*${c.why.source}`), c.name);
		}
		assert.equal(await pending(w.vim), 0);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "");
		assert.deepEqual(await w.vim.expr(MARKS), NO_MARKS);
		await assertNoErrors(w.vim);

		// A good request still works in the same Vim.
		ask(w, encodeApprovalMessage(request(w)));
		await waitPending(w.vim, 1);
		assert.equal(await w.vim.expr("pi_ide#Statusline()"), "approve?");
	});
});
