/**
 * v0.5 show and ask in a real Neovim (0.7.2 and 0.10, with a UI), the parts the conformance kit does not drive:
 * the `follow` option (default off) opens the shown place; a terminal window stays, the place opens in a split;
 * the answers file goes with the state file (a clean exit, a killed Neovim: the exit guard); an ask's diagnostics
 * over the answer's cap (200 items in all) are cut with their total kept.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../src/link/show-ask.ts";
import { type AskAnswer, parseAnswers, type ShowAskAnswer, type ShowAskRequest } from "../../src/protocol/show-ask.ts";
import { spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, type Nvim, nowSeconds, startNvim } from "../helpers/nvim.ts";
import { pollUntil } from "../helpers/poll.ts";
import { touch } from "../helpers/scenario.ts";

function ask(nv: Nvim, piPid: number, requests: ShowAskRequest[]): void {
	const text = encodeAskMessage({ pid: piPid, pidNs: null, editorPid: nv.pid, now: nowSeconds(), requests });
	writeRawStateFile(nv.stateDir, `pi-${piPid}.ask.json`, text);
}

function answerOf(nv: Nvim, piPid: number, id: string): Promise<ShowAskAnswer> {
	return pollUntil(() => {
		let text: string;
		try {
			text = readFileSync(join(nv.stateDir, `${nv.pid}.answers.json`), "utf8");
		} catch {
			return undefined;
		}
		const parsed = parseAnswers(text, nv.pid);
		return parsed.ok ? findAnswer(parsed.answers, piPid, null, id) : undefined;
	}, `the answer to ${id}`);
}

const show = (id: string, file: string, line: number) =>
	buildShow(id, file, { path: file, line, endLine: null, note: null }, nowSeconds() + 30);

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: show and ask`, () => {
		it("follow (default off) opens the place: in the window, or a split beside a terminal", async (t) => {
			const nv = await startNvim(t, flavour, { preCmds: ["set hidden"] });
			const a = touch(nv.tmp, "a.ts", "1\n2\n3\n4\n");
			const b = touch(nv.tmp, "b.ts", "1\n2\n3\n4\n");
			await nv.command(`edit ${a}`);
			const pi = await spawnLiveEditor();
			t.after(() => pi.kill());
			await nv.lua("require('pi-ide').setup({ follow = true })");
			ask(nv, pi.pid, [show("f1", b, 3)]);
			assert.equal(((await answerOf(nv, pi.pid, "f1")) as { status: string }).status, "opened");
			assert.deepEqual(
				await nv.lua(
					"return { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1], #vim.api.nvim_list_wins() }",
				),
				[b, 3, 1],
			);
			// From a terminal window: the terminal stays, the place opens in a split.
			await nv.command("terminal");
			const term = await nv.lua<number>("return vim.api.nvim_get_current_buf()");
			ask(nv, pi.pid, [show("f2", a, 2)]);
			assert.equal(((await answerOf(nv, pi.pid, "f2")) as { status: string }).status, "opened");
			assert.deepEqual(
				await nv.lua(
					"local bufs = {} for _, w in ipairs(vim.api.nvim_list_wins()) do bufs[#bufs + 1] = vim.api.nvim_win_get_buf(w) end return { vim.api.nvim_buf_get_name(0), vim.tbl_contains(bufs, ...) }",
					term,
				),
				[a, true],
			);
		});

		it("the answers file goes with the state file: on a clean exit and when Neovim is killed", async (t) => {
			const pi = await spawnLiveEditor();
			t.after(() => pi.kill());
			for (const how of ["quit", "SIGKILL"] as const) {
				const nv = await startNvim(t, flavour);
				const a = touch(nv.tmp, "a.ts", "1\n2\n");
				await nv.until(() => true, "first write");
				ask(nv, pi.pid, [show(`exit-${how}`, a, 1)]);
				await answerOf(nv, pi.pid, `exit-${how}`);
				const answers = join(nv.stateDir, `${nv.pid}.answers.json`);
				if (how === "quit") await nv.quit();
				else {
					nv.proc.kill("SIGKILL");
					await nv.exited;
				}
				await pollUntil(() => (existsSync(answers) ? undefined : true), `${how}: the answers file removed`);
			}
		});

		it("an ask over the cap: 200 diagnostics in all, each buffer's total kept", async (t) => {
			const nv = await startNvim(t, flavour, { preCmds: ["set hidden"] });
			const files = [0, 1, 2].map((i) => touch(nv.tmp, `f${i}.ts`, "x\n".repeat(200)));
			for (const f of files) {
				await nv.command(`edit ${f}`);
				await nv.lua(`local items = {}
					for i = 0, 99 do items[#items + 1] = { lnum = i, col = 0, message = "m" .. i, severity = 1 } end
					vim.diagnostic.set(vim.api.nvim_create_namespace("cap"), 0, items)`);
			}
			const pi = await spawnLiveEditor();
			t.after(() => pi.kill());
			ask(nv, pi.pid, [buildAsk("cap", "all", nowSeconds() + 30)]);
			const answer = (await answerOf(nv, pi.pid, "cap")) as AskAnswer;
			const counts = answer.buffers.map((b) => [b.diagnostics?.items.length, b.diagnostics?.total]);
			assert.deepEqual(counts, [
				[100, 100],
				[100, 100],
				[0, 100],
			]);
		});
	});
});
