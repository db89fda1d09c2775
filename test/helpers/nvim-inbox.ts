/**
 * Driving the Neovim client's protocol v0.3 side (pi's messages) from tests: a Neovim with a.txt open and a
 * live stand-in pi (its pid is what matters), pi's messages written as pi writes them, and the screen of an
 * 80-column UI read without ever waiting behind a hit-enter prompt.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { spawnLiveEditor, writeRawStateFile } from "./editors.ts";
import { type Nvim, type NvimFlavour, type NvimOptions, startNvim } from "./nvim.ts";
import { pollFor, pollUntil } from "./poll.ts";

export const CONTENT = "one\ntwo\nthree\n";

export interface World {
	nv: Nvim;
	file: string;
	piPid: number;
}

export async function world(t: TestContext, flavour: NvimFlavour, options: NvimOptions = {}): Promise<World> {
	const nv = await startNvim(t, flavour, options);
	const file = join(nv.tmp, "a.txt");
	writeFileSync(file, CONTENT);
	await nv.command("edit a.txt");
	await nv.until((s) => s.active_buffer.file === file, "a.txt open");
	const pi = await spawnLiveEditor();
	return { nv, file, piPid: pi.pid };
}

let seqs = 0;
/** A seq no message of this test process has used. */
export function nextSeq(): number {
	seqs += 1;
	return seqs;
}
export function message(w: World, overrides: Record<string, unknown> = {}, file = w.file): Record<string, unknown> {
	nextSeq();
	return {
		protocol: "0.3",
		kind: "pi",
		pid: w.piPid,
		cwd: w.nv.tmp,
		timestamp: Date.now() / 1000,
		editor_pid: w.nv.pid,
		seq: seqs,
		changed: [{ file, seq: seqs, tool: "write" }],
		last_turn: [file],
		...overrides,
	};
}

export function send(w: World, msg: unknown, options: { pid?: number; mode?: number; raw?: string } = {}): string {
	const pid = options.pid ?? w.piPid;
	return writeRawStateFile(w.nv.stateDir, `pi-${pid}.json`, options.raw ?? JSON.stringify(msg), options.mode);
}

export const lines = (nv: Nvim) => nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 0, -1, false)");

export async function pollPiIde(nv: Nvim, pattern: RegExp): Promise<string> {
	let out = "";
	return pollUntil(
		async () => {
			out = await nv.exec("PiIde");
			return pattern.test(out) ? out : undefined;
		},
		() => `:PiIde never matched ${pattern}: ${out}`,
		{ intervalMs: 25 },
	);
}

export async function assertNoErrors(nv: Nvim): Promise<void> {
	const messages = await nv.exec("messages");
	assert.doesNotMatch(messages, /E\d{2,4}:|Error|stack traceback/, messages);
	assert.doesNotMatch(nv.stderr(), /E\d{2,4}:|Error|stack traceback/);
}

/** An 80-column terminal: 68 cells of message line before a hit-enter prompt ('showcmd' takes the rest). */
export const NARROW: NvimOptions = { uiSize: { width: 80, height: 24 }, answerPrompts: false };

export type Mode = { mode: string; blocking: boolean };

/**
 * Run `code` in a Neovim started with `answerPrompts: false`, failing at once, instead of after the request
 * timeout, when Neovim shows a prompt that waits for a key (nvim_get_mode is answered even then).
 */
export async function luaWithoutPrompt<T>(nv: Nvim, code: string): Promise<T> {
	let reply: { value: T } | undefined;
	let failure: Error | undefined;
	nv.lua<T>(code).then(
		(value) => {
			reply = { value };
		},
		(error: Error) => {
			failure = error;
		},
	);
	return pollUntil(async () => {
		if (failure) throw failure;
		if (reply) return reply.value;
		const mode = await nv.call<Mode>("nvim_get_mode");
		if (mode.blocking) throw new Error(`Neovim waits for a key (mode "${mode.mode}"): a message opened a prompt`);
		return undefined;
	}, "Neovim answers");
}

/** The text drawn on screen row `row` (1-based; negative: counted from the bottom, -1 = the message line). */
export const SCREEN_ROW = `local row = ...
	if row < 0 then row = vim.o.lines + 1 + row end
	local cells = {}
	for col = 1, vim.o.columns do cells[col] = vim.fn.screenstring(row, col) end
	return table.concat(cells)`;
export const screenRow = (row: number) => `return (function(...) ${SCREEN_ROW} end)(${row})`;

/** Wait until the message line shows `pattern` (with no prompt on the way), and return that line. */
export async function untilMessageLine(nv: Nvim, pattern: RegExp): Promise<string> {
	let last = "";
	return pollUntil(
		async () => {
			last = await luaWithoutPrompt<string>(nv, screenRow(-1));
			return pattern.test(last) ? last : undefined;
		},
		() => `the message line never showed ${pattern}; last: ${JSON.stringify(last)}`,
	);
}

/** Wait until the statusline (of the only window, above the message line) is drawn as `text`. */
export async function untilStatusline(nv: Nvim, text: string): Promise<void> {
	let drawn = "";
	await pollFor(
		async () => {
			drawn = (await luaWithoutPrompt<string>(nv, screenRow(-2))).trim();
			return drawn === text;
		},
		() => `the statusline is drawn as ${JSON.stringify(text)}; drawn: ${JSON.stringify(drawn)}`,
	);
}

export const notices = async (nv: Nvim, pattern: RegExp): Promise<number> =>
	(await nv.exec("messages")).match(new RegExp(pattern, "g"))?.length ?? 0;
