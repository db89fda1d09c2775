/**
 * Protocol v0.4 in Neovim (pi-ide.review): pi's change set, built by pi's own code (src/link/change-set.ts) and
 * written as pi writes it, marks pi's hunks in the buffers it reloaded, fills the quickfix list, shows the
 * baseline beside an unsaved buffer without a W12 prompt, and reverts a hunk in the buffer (never on disk),
 * refusing one the user edited since; what was reverted reaches the state file. Bad change sets: one notice,
 * no marks, no error.
 */
import assert from "node:assert/strict";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import {
	assertNoErrors,
	CONTENT,
	lines,
	luaWithoutPrompt,
	message,
	pollPiIde,
	send,
	type World,
	world,
} from "../helpers/nvim-inbox.ts";

after(killAllEditors);

const PI_VERSION = "one\nTWO\nthree\nfour\n";

/** The change set pi writes for one run that changed `file` from `before` to `after`. */
function reviewText(w: World, file: string, before: string, after: string): string {
	return oneRunReview([{ file, before, after }], { pid: w.piPid, editorPid: w.nv.pid }).toString();
}

/** pi changes a.txt to its version, writes its change set (`review` overrides the text), then its message. */
async function piChanges(w: World, review?: { raw: string; mode?: number }): Promise<void> {
	writeFileSync(w.file, PI_VERSION);
	writeRawStateFile(
		w.nv.stateDir,
		`pi-${w.piPid}.review.json`,
		review?.raw ?? reviewText(w, w.file, CONTENT, PI_VERSION),
		review?.mode,
	);
	const msg = message(w);
	send(w, msg);
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
}

/** The buffer shows `before` (read from its file); pi writes `after`, its change set, then its message. */
async function piChangesFrom(w: World, before: string, after: string): Promise<void> {
	writeFileSync(w.file, before);
	await w.nv.command("silent edit!");
	writeFileSync(w.file, after);
	writeRawStateFile(w.nv.stateDir, `pi-${w.piPid}.review.json`, reviewText(w, w.file, before, after));
	const msg = message(w);
	send(w, msg);
	await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
}

/** The review marks of the current buffer: [first line, last line] (1-based). */
const MARKS = `local ns = vim.api.nvim_create_namespace("pi-ide-review")
	local out = {}
	for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
		out[#out + 1] = { m[2] + 1, (m[4].end_row or m[2]) + 1 }
	end
	return out`;

/** The sign column as drawn, screen rows 1 to 4 (the only window starts at the top). */
const SIGNS = `vim.cmd("redraw")
	local out = {}
	for row = 1, 4 do out[row] = vim.trim(vim.fn.screenstring(row, 1)) end
	return out`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: reviewing pi's change set (v0.4)`, () => {
		it("marks pi's hunks on the reloaded buffer and lists them in the quickfix list", async (t) => {
			const w = await world(t, flavour);
			await piChanges(w);
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three", "four"]);
			assert.deepEqual(await w.nv.lua(MARKS), [
				[2, 2],
				[4, 4],
			]);
			assert.deepEqual(await w.nv.lua(SIGNS), ["", "┃", "", "┃"], "drawn in the sign column");
			await w.nv.command("PiIde hunks");
			const items = await w.nv.lua<{ lnum: number; text: string }[]>(
				"return vim.tbl_map(function(i) return { lnum = i.lnum, text = i.text } end, vim.fn.getqflist())",
			);
			assert.deepEqual(
				items.map((i) => [i.lnum, i.text]),
				[
					[2, "pi +1 -1  TWO"],
					[4, "pi +1 -0  four"],
				],
			);
			await assertNoErrors(w.nv);
		});

		it("revert: the hunk under the cursor goes back in the buffer, not on disk; `u` brings pi's back; pi is told", async (t) => {
			const w = await world(t, flavour);
			await piChanges(w);
			await w.nv.command("call cursor(2, 1)");
			await w.nv.command("PiIde revert");
			assert.deepEqual(await lines(w.nv), ["one", "two", "three", "four"]);
			assert.equal(readFileSync(w.file, "utf8"), PI_VERSION, "the disk keeps pi's version");
			assert.equal(await w.nv.lua("return vim.bo.modified"), true);
			const state = await w.nv.until(
				(s) => Array.isArray((s as { reverted?: unknown[] }).reverted),
				"the state file lists the revert",
			);
			const reverted = (state as unknown as { reverted: Record<string, unknown>[] }).reverted;
			assert.deepEqual(
				reverted.map((r) => [r["pi_pid"], r["file"], r["line"], r["lines"]]),
				[[w.piPid, w.file, 2, 1]],
			);
			assert.match(String(reverted[0]?.["id"]), /^h[0-9a-f]{10}$/);
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three", "four"]);
			// Undone: no longer a revert, so pi is not told of it, and the hunk is marked again.
			await w.nv.until((s) => !("reverted" in s), "the undone revert leaves the state file");
			assert.deepEqual(await w.nv.lua(MARKS), [
				[2, 2],
				[4, 4],
			]);
			// A redo makes it a revert again.
			await w.nv.command("redo");
			assert.deepEqual(await lines(w.nv), ["one", "two", "three", "four"]);
			const again = await w.nv.until((s) => "reverted" in s, "the redone revert is listed again");
			assert.deepEqual(
				(again as unknown as { reverted: Record<string, unknown>[] }).reverted.map((r) => [r["id"], r["line"]]),
				[[reverted[0]?.["id"], 2]],
			);
			assert.deepEqual(await w.nv.lua(MARKS), [[4, 4]]);
			await assertNoErrors(w.nv);
		});

		// pi's change set is rewritten with every change of any file: a buffer whose entry is the same keeps its
		// marks where they are (no extmark placed again: pi's line numbers no longer hold once lines moved), but
		// for those whose lines the user changed since (as a first reading would not mark them).
		const RELOADS = [
			{
				name: "the buffer as it was",
				edit: null,
				marks: [
					[2, 2],
					[4, 4],
				],
			},
			{
				name: "the user changed another line",
				edit: [0, "ONE"],
				marks: [
					[2, 2],
					[4, 4],
				],
			},
			{ name: "the user changed one of pi's lines", edit: [3, "FOUR, mine"], marks: [[2, 2]] },
		] as const;
		for (const c of RELOADS) {
			it(`the same change set read again, ${c.name}: marks kept, ${c.marks.length} of 2`, async (t) => {
				const w = await world(t, flavour);
				await piChanges(w);
				if (c.edit)
					await w.nv.lua(
						"local row, text = ...; vim.api.nvim_buf_set_lines(0, row, row + 1, false, { text })",
						...c.edit,
					);
				const [problem, placed] = await w.nv.lua<[unknown, number]>(
					`local dir, pid = ...
					local real, placed = vim.api.nvim_buf_set_extmark, 0
					vim.api.nvim_buf_set_extmark = function(...) placed = placed + 1; return real(...) end
					local ok, problem = pcall(require("pi-ide.review").load, dir, pid)
					vim.api.nvim_buf_set_extmark = real
					assert(ok, problem)
					return { problem or vim.NIL, placed }`,
					w.nv.stateDir,
					w.piPid,
				);
				assert.deepEqual([problem, placed], [null, 0]);
				assert.deepEqual(await w.nv.lua(MARKS), c.marks);
				await assertNoErrors(w.nv);
			});
		}

		it("an addition at the end, beside a line the user edited: reverted, undone (marked again, not listed), redone (listed)", async (t) => {
			const w = await world(t, flavour);
			await piChanges(w);
			await w.nv.lua('vim.api.nvim_buf_set_lines(0, 2, 3, false, { "three, mine" })');
			assert.deepEqual(
				await w.nv.lua(MARKS),
				[
					[2, 2],
					[4, 4],
				],
				"the marks keep their lines",
			);
			await w.nv.command("call cursor(4, 1)");
			await w.nv.command("PiIde revert");
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three, mine"], await w.nv.exec("messages"));
			await w.nv.until((s) => (s as { reverted?: unknown[] }).reverted?.length === 1, "the revert is listed");
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three, mine", "four"]);
			await w.nv.until((s) => !("reverted" in s), "the undone revert leaves the state file");
			assert.deepEqual(await w.nv.lua(MARKS), [
				[2, 2],
				[4, 4],
			]);
			await w.nv.command("redo");
			await w.nv.until((s) => (s as { reverted?: unknown[] }).reverted?.length === 1, "the redone revert is listed");
			assert.deepEqual(await w.nv.lua(MARKS), [[2, 2]]);
			await assertNoErrors(w.nv);
		});

		it("revert file: a hunk the user edited since is refused, the others go back", async (t) => {
			const w = await world(t, flavour);
			await piChanges(w);
			await w.nv.lua('vim.api.nvim_buf_set_lines(0, 3, 4, false, { "FOUR, mine" })');
			await w.nv.command("PiIde revert file");
			assert.deepEqual(await lines(w.nv), ["one", "two", "three", "FOUR, mine"]);
			assert.match(await w.nv.exec("messages"), /reverted 1 of pi's hunks.*1 refused: line 4: you changed these lines/);
		});

		it("revert file, then `u`: every hunk marked again, none listed for pi, also once the user edits pi's line; reverted again, listed once", async (t) => {
			const w = await world(t, flavour);
			await piChanges(w);
			await w.nv.command("PiIde revert file");
			assert.deepEqual(await lines(w.nv), ["one", "two", "three"]);
			await w.nv.until((s) => (s as { reverted?: unknown[] }).reverted?.length === 2, "both reverts listed");
			await w.nv.command("undo");
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three", "four"]);
			await w.nv.until((s) => !("reverted" in s), "the undone reverts leave the state file");
			assert.deepEqual(await w.nv.lua(MARKS), [
				[2, 2],
				[4, 4],
			]);
			// Editing pi's line after the undo does not make it a revert again.
			const before = (await w.nv.until(() => true, "the state file")).active_buffer as { version?: number };
			await w.nv.lua('vim.api.nvim_buf_set_lines(0, 1, 2, false, { "TWO, mine" })');
			const edited = await w.nv.until(
				(s) => ((s.active_buffer as { version?: number }).version ?? 0) > (before.version ?? 0),
				"the edit is in the state file",
			);
			assert.equal("reverted" in edited, false, "the edited hunk is not a revert");
			// The other hunk reverted a second time: listed once, not once per revert.
			await w.nv.command("PiIde revert file");
			assert.deepEqual(await lines(w.nv), ["one", "TWO, mine", "three"]);
			const state = await w.nv.until((s) => "reverted" in s, "reverted again");
			const listed = (state as unknown as { reverted: { line: number; lines: number }[] }).reverted;
			assert.deepEqual(
				listed.map((r) => [r.line, r.lines]),
				[[4, 1]],
			);
			await assertNoErrors(w.nv);
		});

		// A deletion leaves no line of pi's to check: it is marked, and reverted, only where the buffer has the
		// baseline's lines around it (CONTENT is one, two, three; pi deleted "two").
		const DELETIONS: {
			name: string;
			edit: string | null;
			marks: number[][];
			afterwards?: string;
			lines: string[];
			undo?: boolean;
		}[] = [
			{
				name: "as pi left it: marked on the line after, reverted there; `u` marks it again, pi not told",
				edit: null,
				marks: [[2, 2]],
				lines: ["one", "two", "three"],
				undo: true,
			},
			{
				name: "unsaved lines above (the buffer was not reloaded): no mark",
				edit: 'vim.api.nvim_buf_set_lines(0, 0, 0, false, { "mine 1", "mine 2" })',
				marks: [],
				lines: ["mine 1", "mine 2", "one", "two", "three"],
			},
			{
				name: "a line typed where pi deleted, after the mark: refused",
				edit: null,
				afterwards: 'vim.api.nvim_buf_set_lines(0, 1, 1, false, { "mine" })',
				marks: [[3, 3]],
				lines: ["one", "mine", "three"],
			},
		];
		for (const c of DELETIONS) {
			it(`a deletion of pi's, ${c.name}`, async (t) => {
				const w = await world(t, flavour);
				if (c.edit) await w.nv.lua(c.edit);
				writeFileSync(w.file, "one\nthree\n");
				writeRawStateFile(w.nv.stateDir, `pi-${w.piPid}.review.json`, reviewText(w, w.file, CONTENT, "one\nthree\n"));
				const msg = message(w);
				send(w, msg);
				await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
				if (c.afterwards) await w.nv.lua(c.afterwards);
				assert.deepEqual(await w.nv.lua(MARKS), c.marks);
				await w.nv.command("PiIde revert file");
				assert.deepEqual(await lines(w.nv), c.lines);
				if (c.afterwards)
					assert.match(await w.nv.exec("messages"), /the lines around pi's deletion changed; not reverted/);
				if (c.undo) {
					await w.nv.until((s) => "reverted" in s, "the revert is listed");
					await w.nv.command("undo");
					assert.deepEqual(await lines(w.nv), ["one", "three"]);
					await w.nv.until((s) => !("reverted" in s), "the undone revert leaves the state file");
					assert.deepEqual(await w.nv.lua(MARKS), c.marks);
				}
				await assertNoErrors(w.nv);
			});
		}

		// The user deleted pi's line: its mark moves onto the next line, which is the baseline's own `}`, equal to
		// pi's. Reverting there would turn a line that is not pi's into `q`: refused, by every scope.
		const SLID = [
			{ scope: "", deleted: true, lines: ["a", "}", "b"] },
			{ scope: " file", deleted: true, lines: ["a", "}", "b"] },
			{ scope: " run", deleted: true, lines: ["a", "}", "b"] },
			{ scope: "", deleted: false, lines: ["a", "q", "}", "b"] },
		] as const;
		for (const c of SLID) {
			it(`baseline a q } b, pi's a } } b, ${c.deleted ? "pi's line deleted" : "as pi left it"}: :PiIde revert${c.scope} ${c.deleted ? "refused" : "reverts"}`, async (t) => {
				const w = await world(t, flavour);
				await piChangesFrom(w, "a\nq\n}\nb\n", "a\n}\n}\nb\n");
				assert.deepEqual(await w.nv.lua(MARKS), [[2, 2]]);
				if (c.deleted) await w.nv.command("2delete");
				await w.nv.command("call cursor(2, 1)");
				await w.nv.command(`PiIde revert${c.scope}`);
				assert.deepEqual(await lines(w.nv), c.lines);
				const listed = await w.nv.lua<number>('return #(require("pi-ide.review").report() or {})');
				assert.equal(listed, c.deleted ? 0 : 1);
				if (c.deleted) assert.match(await w.nv.exec("messages"), /refused: line 2: you changed these lines/);
				await assertNoErrors(w.nv);
			});
		}

		// A revert lives in the buffer until saved: thrown away with the buffer's text (read again, wiped,
		// unloaded) it is no longer a revert, and pi must not tell its model it is. One the file has stays.
		const DISCARDS = [
			{ command: "edit!", before: [], listed: false },
			{ command: "bwipeout!", before: [], listed: false },
			{ command: "bdelete!", before: [], listed: false },
			{ command: "edit!", before: ["write"], listed: true },
			{ command: "bwipeout!", before: ["write"], listed: true },
			{ command: "bdelete!", before: ["write"], listed: true },
			{ command: "bwipeout!", before: ["write", "undo", "write"], listed: false },
			{ command: "edit!", before: ["write", "undo"], listed: true },
		] as const;
		for (const c of DISCARDS) {
			it(`a revert, then ${[...c.before, c.command].map((x) => `:${x}`).join(", ")}: ${c.listed ? "still" : "no longer"} told`, async (t) => {
				const w = await world(t, flavour);
				await piChanges(w);
				await w.nv.command("call cursor(2, 1)");
				await w.nv.command("PiIde revert");
				await w.nv.until((s) => (s as { reverted?: unknown[] }).reverted?.length === 1, "the revert is listed");
				for (const command of c.before) await w.nv.command(command);
				await w.nv.command(c.command);
				const listed = await w.nv.lua<number>('return #(require("pi-ide.review").report() or {})');
				assert.equal(listed, c.listed ? 1 : 0);
				if (!c.listed) await w.nv.until((s) => !("reverted" in s), "the state file lists no revert");
				if (c.command === "edit!") {
					const file = c.listed ? ["one", "two", "three", "four"] : ["one", "TWO", "three", "four"];
					assert.deepEqual(await lines(w.nv), file);
					assert.deepEqual(
						await w.nv.lua(MARKS),
						c.listed
							? [[4, 4]]
							: [
									[2, 2],
									[4, 4],
								],
					);
				}
				await assertNoErrors(w.nv);
			});
		}

		it("review: pi's baseline beside the buffer, unsaved text kept, no W12 prompt", async (t) => {
			const w = await world(t, flavour, { answerPrompts: false });
			await piChanges(w);
			await w.nv.lua('vim.api.nvim_buf_set_lines(0, 0, 1, false, { "mine, unsaved" })');
			await luaWithoutPrompt(w.nv, 'vim.cmd("PiIde review")');
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
				other: ["one", "two", "three"],
				diff: true,
				mine: ["mine, unsaved", "TWO", "three", "four"],
			});
			await luaWithoutPrompt(w.nv, 'vim.cmd("checktime")');
			assert.deepEqual(await lines(w.nv), ["mine, unsaved", "TWO", "three", "four"]);
		});

		it("a reload keeps each window's cursor and view on their text when pi adds lines above them", async (t) => {
			const w = await world(t, flavour);
			const long = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`);
			writeFileSync(w.file, `${long.join("\n")}\n`);
			await w.nv.command("edit!");
			await w.nv.command("call cursor(40, 3)");
			await w.nv.command("normal! zt");
			writeFileSync(w.file, `${["new 1", "new 2", "new 3", ...long.slice(0, 10), ...long.slice(12)].join("\n")}\n`);
			const msg = message(w);
			send(w, msg);
			await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			const view = await w.nv.lua<{ line: string; col: number; top: string }>(
				`local v = vim.fn.winsaveview()
				return { line = vim.api.nvim_get_current_line(), col = v.col + 1, top = vim.fn.getline(v.topline) }`,
			);
			assert.deepEqual(view, { line: "line 40", col: 3, top: "line 40" });
		});

		it("whether a revert's undo step is in the text: the undo tree asked (table)", async (t) => {
			const w = await world(t, flavour);
			// Trees as undotree() gives them: `alt` holds a branch that left its list just before its entry.
			const e = (seq: number, alt?: unknown[]) => (alt ? { seq, alt } : { seq });
			const cases: [string, unknown, number, boolean][] = [
				["on the path", { seq_cur: 3, entries: [e(1), e(2), e(3)] }, 2, true],
				["undone (past the current step)", { seq_cur: 1, entries: [e(1), e(2), e(3)] }, 2, false],
				["everything undone", { seq_cur: 0, entries: [e(1), e(2)] }, 1, false],
				["on a branch left behind", { seq_cur: 3, entries: [e(1), e(3, [e(2)])] }, 2, false],
				[
					"the current step on a branch: its list's steps before it",
					{ seq_cur: 2, entries: [e(1), e(3, [e(2)])] },
					1,
					true,
				],
				[
					"the current step on a branch, the step on the main list after it",
					{ seq_cur: 2, entries: [e(1), e(3, [e(2)])] },
					3,
					false,
				],
				[
					"cut from the history ('undolevels'): nothing can take it back",
					{ seq_cur: 9, entries: [e(8), e(9)] },
					2,
					true,
				],
			];
			for (const [name, tree, seq, want] of cases) {
				const got = await w.nv.lua<boolean>(`return require("pi-ide.review")._step_applied(...)`, tree, seq);
				assert.equal(got, want, name);
			}
		});

		it("the line map: where an old line is after a change (table)", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const CASES: { old: string[]; new: string[]; line: number; want: number }[] = [
				{ old: ["a", "b", "c"], new: ["x", "a", "b", "c"], line: 2, want: 3 },
				{ old: ["a", "b", "c"], new: ["a", "c"], line: 3, want: 2 },
				{ old: ["a", "b", "c"], new: ["a", "c"], line: 2, want: 2 },
				{ old: ["a", "b", "c"], new: ["a", "B1", "B2", "c"], line: 2, want: 2 },
				{ old: ["a", "b1", "b2", "c"], new: ["a", "B", "c"], line: 3, want: 2 },
				{ old: ["a", "b", "c"], new: ["a", "b", "c", "d"], line: 3, want: 3 },
				{ old: ["a", "b"], new: [], line: 2, want: 1 },
			];
			const got = await nv.lua<number[]>(
				`local lm = require("pi-ide.linemap")
				local out = {}
				for i, c in ipairs(...) do out[i] = lm.map_line(lm.hunks(c.old, c.new), c.line) end
				return out`,
				CASES.map((c) => ({ old: c.old, new: c.new, line: c.line })),
			);
			assert.deepEqual(
				got,
				CASES.map((c) => c.want),
			);
		});

		const BAD: { name: string; review: (w: World) => { raw: string; mode?: number }; why: RegExp }[] = [
			{ name: "malformed JSON", review: () => ({ raw: "{ not json" }), why: /not valid JSON/ },
			{
				name: "another pi's pid inside",
				review: (w) => ({ raw: reviewText(w, w.file, CONTENT, PI_VERSION).replace(`"pid":${w.piPid}`, '"pid":1') }),
				why: /pid .* not the one in its name/,
			},
			{
				name: "group-readable",
				review: (w) => ({ raw: reviewText(w, w.file, CONTENT, PI_VERSION), mode: 0o640 }),
				why: /group\/other permissions/,
			},
			{ name: "not a change set", review: () => ({ raw: '{"kind":"pi"}' }), why: /not a pi change set/ },
		];
		for (const c of BAD) {
			it(`a bad change set (${c.name}): no marks, one notice, no error`, async (t) => {
				const w = await world(t, flavour);
				await piChanges(w, c.review(w));
				assert.deepEqual(await lines(w.nv), ["one", "TWO", "three", "four"], "the reload itself happens");
				assert.deepEqual(await w.nv.lua(MARKS), []);
				await pollPiIde(w.nv, c.why);
				await assertNoErrors(w.nv);
			});
		}

		it("a change set behind a symlink is not read", async (t) => {
			const w = await world(t, flavour);
			const elsewhere = join(w.nv.tmp, "planted.json");
			writeFileSync(elsewhere, reviewText(w, w.file, CONTENT, PI_VERSION), { mode: 0o600 });
			symlinkSync(elsewhere, join(w.nv.stateDir, `pi-${w.piPid}.review.json`));
			writeFileSync(w.file, PI_VERSION);
			const msg = message(w);
			send(w, msg);
			await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			assert.deepEqual(await w.nv.lua(MARKS), []);
			await pollPiIde(w.nv, /is a link, not a regular file|symbolic link|not a regular file/);
		});
	});
});
