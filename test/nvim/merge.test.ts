/**
 * Issue 26: pi's change merged into the user's unsaved buffer, in real Neovim 0.7.2 and 0.10. The user's edits are
 * typed as keys (each its own undo step); pi's change is a file written on disk and a message built by pi's own code
 * (ChangeLog, mergeInfo, buildPiMessage), as pi publishes it. Table of cases: what the buffer holds after, what one
 * `u` leaves, the report's status and conflicts, the disk untouched by the editor.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { contentOf, mergeInfo } from "../../src/link/change-set.ts";
import { ChangeLog, type ChangeMerge } from "../../src/link/pi-message.ts";
import type { FileReport } from "../../src/protocol/protocol.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim, type Nvim } from "../helpers/nvim.ts";
import { assertNoErrors, luaWithoutPrompt, nextSeq, send, type World, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
const text = (lines: string[]) => `${lines.join("\n")}\n`;

/** The merge field pi's own code gives the change `before` -> `after`. */
export function mergeOf(before: string, after: string): Omit<ChangeMerge, "prev_seq"> {
	const info = mergeInfo(contentOf(Buffer.from(before)), contentOf(Buffer.from(after)));
	assert.ok(info, "pi describes the change");
	return info;
}

/** pi writes `after` over `before` in `file` and announces it, as pi does (its ChangeLog, a seq of its own). */
export function piWrites(
	w: World,
	file: string,
	before: string,
	after: string,
	withMerge = true,
	disk = after,
): number {
	writeFileSync(file, disk);
	const seq = nextSeq();
	const log = new ChangeLog({ last: seq - 1 });
	log.record(file, "edit", withMerge ? mergeOf(before, after) : undefined);
	send(w, {
		protocol: "0.3",
		kind: "pi",
		pid: w.piPid,
		cwd: w.nv.tmp,
		timestamp: Date.now() / 1000,
		editor_pid: w.nv.pid,
		seq,
		changed: log.changed,
		last_turn: [file],
	});
	return seq;
}

export async function reportFor(nv: Nvim, file: string, seq: number): Promise<FileReport> {
	const state = await nv.until((s) => (s.files ?? []).some((f) => f.file === file && f.seq === seq), `report ${seq}`);
	const report = state.files?.find((f) => f.file === file && f.seq === seq);
	assert.ok(report);
	return report;
}

const bufferLines = (nv: Nvim, file: string) =>
	nv.lua<string[]>("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", file);

interface Case {
	name: string;
	/** The user's keys in normal mode, typed into a.txt (holding TEN) before pi's change. */
	keys: string;
	/** pi's version of the file, from TEN. */
	pi: string[];
	/** The buffer after the merge. */
	buffer: string[];
	status: "merged" | "conflict";
	conflicts?: { line: number; lines: number; text: string[] }[];
	/** Old pi: no merge field (the editor keeps the buffer and says `modified`). */
	noMerge?: boolean;
}

const CASES: Case[] = [
	{
		name: "pi's line far from the user's: both",
		keys: "2Gccuser two<Esc>",
		pi: TEN.map((l, i) => (i === 7 ? "pi eight" : l)),
		buffer: TEN.map((l, i) => (i === 1 ? "user two" : i === 7 ? "pi eight" : l)),
		status: "merged",
	},
	{
		name: "the user inserted lines above: pi's hunk moves down with its lines",
		keys: "1GOuser a<CR>user b<Esc>",
		pi: [...TEN.slice(0, 5), "pi new", ...TEN.slice(5)],
		buffer: ["user a", "user b", ...TEN.slice(0, 5), "pi new", ...TEN.slice(5)],
		status: "merged",
	},
	{
		name: "pi deletes lines after the user's deletion above",
		keys: "2Gdd",
		pi: [...TEN.slice(0, 6), ...TEN.slice(8)],
		buffer: [TEN[0] as string, ...TEN.slice(2, 6), ...TEN.slice(8)],
		status: "merged",
	},
	{
		name: "the same line: the user's kept, a conflict on it",
		keys: "3Gccuser three<Esc>",
		pi: TEN.map((l, i) => (i === 2 ? "pi three" : l)),
		buffer: TEN.map((l, i) => (i === 2 ? "user three" : l)),
		status: "conflict",
		conflicts: [{ line: 3, lines: 1, text: ["user three"] }],
	},
	{
		name: "two hunks, one on the user's lines: the other merged",
		keys: "3Gccuser three<CR>user more<Esc>",
		pi: TEN.map((l, i) => (i === 2 ? "pi three" : i === 8 ? "pi nine" : l)),
		buffer: [...TEN.slice(0, 2), "user three", "user more", ...TEN.slice(3, 8), "pi nine", TEN[9] as string],
		status: "conflict",
		conflicts: [{ line: 3, lines: 2, text: ["user three", "user more"] }],
	},
	{
		name: "pi inserts right where the user inserted: a conflict",
		keys: "4GOuser ins<Esc>",
		pi: [...TEN.slice(0, 3), "pi ins", ...TEN.slice(3)],
		buffer: [...TEN.slice(0, 3), "user ins", ...TEN.slice(3)],
		status: "conflict",
		conflicts: [{ line: 4, lines: 1, text: ["user ins"] }],
	},
];

forEachNvim((flavour) => {
	describe(`pi's change merged into an unsaved buffer (${flavour.name})`, () => {
		it("the file's hash (OpenSSL or Neovim's own, through the FFI, each checked on \"abc\") is the SHA-256", async (t) => {
			const w = await world(t, flavour);
			const texts = ["", "abc", "one\ntwo\n", "ä€\u0000\n".repeat(1000), "x".repeat(1 << 20)];
			const got = await w.nv.lua<string[]>(
				`local merge = require("pi-ide.inbox.merge")
				local out = {}
				for i, t in ipairs(...) do out[i] = merge.sha256(t) end
				return out`,
				texts,
			);
			assert.deepEqual(
				got,
				texts.map((x) => createHash("sha256").update(x).digest("hex")),
			);
		});

		for (const c of CASES) {
			it(c.name, async (t) => {
				const w = await world(t, flavour);
				writeFileSync(w.file, text(TEN));
				await w.nv.command("silent edit!");
				await w.nv.input(c.keys);
				await w.nv.settle();
				const user = await bufferLines(w.nv, w.file);
				const seq = piWrites(w, w.file, text(TEN), text(c.pi));
				const report = await reportFor(w.nv, w.file, seq);
				assert.equal(report.status, c.status);
				assert.deepEqual(await bufferLines(w.nv, w.file), c.buffer, "the buffer");
				assert.equal(report.modified, true);
				assert.equal(await w.nv.lua("return vim.bo.modified"), true, "still modified, never saved");
				assert.equal(readFileSync(w.file, "utf8"), text(c.pi), "the disk has exactly what pi wrote");
				if (c.conflicts) {
					assert.deepEqual(report.merge?.conflicts, c.conflicts);
					// Listed in :PiIde, with how to compare.
					const where = c.conflicts[0] as { line: number; lines: number };
					const lines = where.lines > 1 ? `lines ${where.line}-${where.line + where.lines - 1}` : `line ${where.line}`;
					assert.match(
						await w.nv.exec("PiIde"),
						new RegExp(
							`conflict: pi's change to a\\.txt touches your unsaved ${lines}, kept yours\\. Compare: :PiIde diff`,
						),
					);
					// Issue 26 item 6: listed where pi's hunks are (:PiIde hunks, the quickfix list), one entry per place.
					await w.nv.command("PiIde hunks");
					const listed = await w.nv.lua<{ file: string; lnum: number; end_lnum: number; text: string }[]>(
						`local out = {}
						for _, it in ipairs(vim.fn.getqflist()) do
							out[#out + 1] = { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, end_lnum = it.end_lnum, text = it.text }
						end
						vim.cmd("cclose")
						return out`,
					);
					assert.deepEqual(
						listed,
						c.conflicts.map((k) => ({
							file: w.file,
							lnum: k.line,
							end_lnum: k.line + k.lines - 1,
							text: `conflict: your unsaved ${k.lines > 1 ? `lines ${k.line}-${k.line + k.lines - 1}` : `line ${k.line}`} kept; pi's version is on disk (:PiIde diff)`,
						})),
						"each conflict listed with pi's hunks",
					);
				}
				if ((report.merge?.merged ?? 0) > 0) {
					// One `u`: pi's merged lines go, the user's stay; a second is the user's own step.
					await w.nv.input("u");
					await w.nv.settle();
					assert.deepEqual(await bufferLines(w.nv, w.file), user, "one u takes pi's lines out, and only them");
					await w.nv.input("u");
					await w.nv.settle();
					assert.deepEqual(await bufferLines(w.nv, w.file), TEN, "the second u is the user's own step");
				}
				await assertNoErrors(w.nv);
			});
		}

		it("after a full merge `:w` writes the merged buffer without asking whether the file changed", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, text(TEN));
			await w.nv.command("silent edit!");
			await w.nv.input("2Gccuser two<Esc>");
			const pi = TEN.map((l, i) => (i === 7 ? "pi eight" : l));
			const report = await reportFor(w.nv, w.file, piWrites(w, w.file, text(TEN), text(pi)));
			assert.equal(report.status, "merged");
			// A request that fails at once if Neovim waits for a key ("changed since reading it!!! (y/n)").
			await luaWithoutPrompt(w.nv, 'vim.cmd("write")');
			assert.equal(readFileSync(w.file, "utf8"), text(pi.map((l, i) => (i === 1 ? "user two" : l))));
			assert.equal(await w.nv.lua("return vim.bo.modified"), false);
		});

		it("review: pi's merged hunk is marked on its lines in the buffer, moved by the user's lines above", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, text(TEN));
			await w.nv.command("silent edit!");
			await w.nv.input("1GOuser a<CR>user b<Esc>");
			const pi = TEN.map((l, i) => (i === 7 ? "pi eight" : l));
			writeRawStateFile(
				w.nv.stateDir,
				`pi-${w.piPid}.review.json`,
				oneRunReview([{ file: w.file, before: text(TEN), after: text(pi) }], {
					pid: w.piPid,
					editorPid: w.nv.pid,
				}).toString(),
			);
			const report = await reportFor(w.nv, w.file, piWrites(w, w.file, text(TEN), text(pi)));
			assert.equal(report.status, "merged");
			const rows = await w.nv.lua<number[]>(
				`local ns = vim.api.nvim_create_namespace("pi-ide-review")
				return vim.tbl_map(function(m) return m[2] end, vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}))`,
			);
			assert.deepEqual(rows, [9], "pi's line 8 is the buffer's line 10");
			assert.equal((await bufferLines(w.nv, w.file))[9], "pi eight");
		});

		it("two changes of pi's to the file in one message (a chain), in a 9,000-line buffer: both merged", async (t) => {
			const w = await world(t, flavour);
			const big = Array.from({ length: 9_000 }, (_, i) => `line ${i + 1}`);
			writeFileSync(w.file, text(big));
			await w.nv.command("silent edit!");
			await w.nv.input("2Gccuser two<Esc>");
			const first = big.map((l, i) => (i === 4_000 ? "pi first" : l));
			const second = first.map((l, i) => (i === 8_000 ? "pi second" : l));
			writeFileSync(w.file, text(second));
			const seq = nextSeq();
			nextSeq();
			const log = new ChangeLog({ last: seq - 1 });
			log.record(w.file, "edit", mergeOf(text(big), text(first)));
			log.record(w.file, "edit", mergeOf(text(first), text(second)));
			send(w, {
				protocol: "0.3",
				kind: "pi",
				pid: w.piPid,
				cwd: w.nv.tmp,
				timestamp: Date.now() / 1000,
				editor_pid: w.nv.pid,
				seq: seq + 1,
				changed: log.changed,
				last_turn: [w.file],
			});
			const report = await reportFor(w.nv, w.file, seq + 1);
			assert.equal(report.status, "merged");
			assert.deepEqual(
				await bufferLines(w.nv, w.file),
				second.map((l, i) => (i === 1 ? "user two" : l)),
			);
		});

		const GOOD = () => mergeOf(text(TEN), text(TEN.map((l, i) => (i === 7 ? "pi eight" : l))));
		const MALFORMED: [string, (m: ReturnType<typeof GOOD>) => unknown][] = [
			["not an object", () => "merge"],
			["no sha256", (m) => ({ ...m, sha256: undefined })],
			["sha256 not hex", (m) => ({ ...m, sha256: "z".repeat(64) })],
			["hunks not a list", (m) => ({ ...m, hunks: 7 })],
			["a hunk's old_lines wrong", (m) => ({ ...m, hunks: m.hunks.map((h) => ({ ...h, old_lines: 3 })) })],
			["a hunk's start 1.5", (m) => ({ ...m, hunks: m.hunks.map((h) => ({ ...h, old_start: 1.5 })) })],
			["a hunk's new text not strings", (m) => ({ ...m, hunks: m.hunks.map((h) => ({ ...h, new_text: [1] })) })],
			["prev_seq a string", (m) => ({ ...m, prev_seq: "3" })],
			["prev_seq not handled yet", (m) => ({ ...m, prev_seq: 1e9 })],
			["hunks that do not fit the file", (m) => ({ ...m, hunks: m.hunks.map((h) => ({ ...h, new_start: 3 })) })],
		];
		it("a malformed merge field: not merged, `modified`, the buffer as the user left it, no error", async (t) => {
			const w = await world(t, flavour);
			const user = TEN.map((l, i) => (i === 1 ? "user two" : l));
			for (const [name, spoil] of MALFORMED) {
				writeFileSync(w.file, text(TEN));
				await w.nv.command("silent edit!");
				await w.nv.input("2Gccuser two<Esc>");
				const after = text(TEN.map((l, i) => (i === 7 ? "pi eight" : l)));
				writeFileSync(w.file, after);
				const seq = nextSeq();
				send(w, {
					protocol: "0.3",
					kind: "pi",
					pid: w.piPid,
					cwd: w.nv.tmp,
					timestamp: Date.now() / 1000,
					editor_pid: w.nv.pid,
					seq,
					changed: [{ file: w.file, seq, tool: "edit", merge: spoil(GOOD()) }],
					last_turn: [w.file],
				});
				const report = await reportFor(w.nv, w.file, seq);
				assert.equal(report.status, "modified", name);
				assert.deepEqual(await bufferLines(w.nv, w.file), user, name);
			}
			await assertNoErrors(w.nv);
		});

		it("an older pi (no hunks): the buffer is kept and reported `modified`", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, text(TEN));
			await w.nv.command("silent edit!");
			await w.nv.input("2Gccuser two<Esc>");
			const seq = piWrites(w, w.file, text(TEN), text(["pi"]), false);
			const report = await reportFor(w.nv, w.file, seq);
			assert.equal(report.status, "modified");
			assert.equal(report.merge, undefined);
			assert.deepEqual(
				await bufferLines(w.nv, w.file),
				TEN.map((l, i) => (i === 1 ? "user two" : l)),
			);
		});

		it("a file on disk that is not what pi's tool wrote: not merged, `modified`", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, text(TEN));
			await w.nv.command("silent edit!");
			await w.nv.input("2Gccuser two<Esc>");
			const piText = text(TEN.map((l, i) => (i === 7 ? "pi eight" : l)));
			// Another write came after pi's, before the editor read the file.
			const seq = piWrites(w, w.file, text(TEN), piText, true, `${piText}someone else\n`);
			const report = await reportFor(w.nv, w.file, seq);
			assert.equal(report.status, "modified");
			assert.deepEqual(
				await bufferLines(w.nv, w.file),
				TEN.map((l, i) => (i === 1 ? "user two" : l)),
			);
		});

		it("a hidden modified buffer is merged too, with no focus change", async (t) => {
			const w = await world(t, flavour);
			const b = join(w.nv.tmp, "b.txt");
			writeFileSync(b, text(TEN));
			await w.nv.command("set hidden");
			await w.nv.command("edit b.txt");
			await w.nv.input("2Gccuser two<Esc>");
			await w.nv.command("buffer a.txt");
			const win = await w.nv.lua<number>("return vim.api.nvim_get_current_win()");
			const pi = TEN.map((l, i) => (i === 7 ? "pi eight" : l));
			const seq = piWrites(w, b, text(TEN), text(pi));
			const report = await reportFor(w.nv, b, seq);
			assert.equal(report.status, "merged");
			assert.deepEqual(
				await bufferLines(w.nv, b),
				pi.map((l, i) => (i === 1 ? "user two" : l)),
			);
			assert.equal(await w.nv.lua("return vim.api.nvim_get_current_win()"), win, "focus stays");
			assert.equal(
				await w.nv.lua<string>("return vim.api.nvim_buf_get_name(0)"),
				w.file,
				"a.txt stays the current buffer",
			);
			assert.equal(await w.nv.lua("return vim.bo[vim.fn.bufnr(...)].modified", b), true);
			await assertNoErrors(w.nv);
		});
	});
});
