/**
 * Review and undo end to end (protocol v0.4): a real pi in RPC mode whose fake model edits a file over two runs,
 * a real Neovim showing it. Neovim marks pi's hunks of the newest run, lists them in the quickfix list, reverts
 * one in the buffer (never on disk, `u` brings it back), and with the next prompt the model is told which of
 * its hunks the user reverted. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { DEFAULT_REPLY, type FakeReply, type RecordedRequest } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startRpc } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);

const MARKS = `local ns = vim.api.nvim_create_namespace("pi-ide-review")
	return vim.tbl_map(function(m) return m[2] + 1 end, vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}))`;

/** Everything the model read in a request, as one text. */
const requestText = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? {});

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name} + pi: review and undo pi's changes (v0.4)`, () => {
		it("two runs of edits: marks of the newest, quickfix, a revert in the buffer only, the model told", async (t) => {
			const env = await envFor(t);
			const file = touch(env.workDir, "notes.txt", `${ORIGINAL.join("\n")}\n`);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && s.protocol === "0.3", "Neovim reports notes.txt");
			const rpc = await startRpc(env);
			t.after(() => rpc.close());

			const edits: Record<number, { oldText: string; newText: string }> = {
				0: { oldText: "line 2\n", newText: "line 2, by pi\n" },
				2: { oldText: "line 9\n", newText: "line 9, by pi\nand one more\n" },
			};
			env.model.respond = (_request, index): FakeReply => {
				const edit = edits[index];
				return edit
					? { toolCalls: [{ name: "edit", arguments: { path: file, edits: [edit] } }] }
					: { text: DEFAULT_REPLY };
			};
			await rpc.prompt("first run: change line 2");
			await rpc.prompt("second run: change line 9");
			assert.equal(env.model.requests.length, 4, "two runs of a tool call and an answer");

			// Only the newest run's hunk is marked (its baseline already had pi's first change).
			const marks = await pollUntil(async () => {
				const rows = await nv.lua<number[]>(MARKS);
				return rows.length === 1 && rows[0] === 9 ? rows : undefined;
			}, "the second run's hunk is marked on line 9");
			assert.deepEqual(marks, [9]);
			await nv.command("PiIde hunks");
			const qf = await nv.lua<number[]>("return vim.tbl_map(function(i) return i.lnum end, vim.fn.getqflist())");
			assert.deepEqual(qf, [9]);

			await nv.command("wincmd p");
			await nv.command("call cursor(9, 1)");
			await nv.command("PiIde revert");
			const lines = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");
			assert.deepEqual(lines, [...ORIGINAL.slice(0, 1), "line 2, by pi", ...ORIGINAL.slice(2)]);
			assert.match(readFileSync(file, "utf8"), /line 9, by pi\nand one more\n/, "the disk keeps pi's version");
			await nv.until((s) => ((s as { reverted?: unknown[] }).reverted ?? []).length === 1, "the revert is reported");

			await rpc.prompt("third prompt: what now?");
			const told = requestText(env.model.requests.at(-1));
			assert.match(told, /the user reverted one of your changes in their editor/);
			assert.match(told, /notes\.txt:9-10/);
			await rpc.prompt("fourth prompt: and now?");
			assert.doesNotMatch(
				requestText(env.model.requests.at(-1)).split("fourth prompt")[1] ?? "",
				/reverted/,
				"told once",
			);

			await nv.command("undo");
			const undone = await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 8, 10, false)");
			assert.deepEqual(undone, ["line 9, by pi", "and one more"]);
			// The revert undone: Neovim lists it no more, and the model, told of it, learns it was undone, once.
			await nv.until((s) => !("reverted" in s), "the undone revert leaves the state file");
			await rpc.prompt("fifth prompt: and now?");
			const fifth = requestText(env.model.requests.at(-1)).split("fifth prompt")[1] ?? "";
			assert.match(fifth, /the user undid their revert of one of your changes/);
			assert.match(fifth, /notes\.txt:9-10/);
			await rpc.prompt("sixth prompt: anything else?");
			assert.doesNotMatch(requestText(env.model.requests.at(-1)).split("sixth prompt")[1] ?? "", /revert/, "once");
		});
	});
});
