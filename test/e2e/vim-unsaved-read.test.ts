/**
 * Issue 26 item 1 end to end in Vim 9: a real Vim in tmux, the user's change typed as keys and not saved, and a real
 * pi whose fake model calls pi's own `read`. The read's result is Vim's unsaved buffer (the lines asked for, said
 * to be unsaved), not the disk; after the user's `:w` it is the plain disk read again.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { envFor, readThroughPi, touch } from "../helpers/scenario.ts";
import { startVim } from "../helpers/vim.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);
/** Typed through tmux: no `;` (tmux's command separator at the end of an argument) and no quotes. */
const TYPED = "export const typed = 42 // UNSAVED IN VIM";

it("vim + pi: a read of lines 2-4 holds the typed, unsaved line 3 and says so; after :w the disk text", async (t) => {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const vim = await startVim(t, {
		dirs: { root: env.root, run: env.runtimeDir, home: env.home, work: env.workDir, stateDir: env.stateDir },
	});
	await vim.ex("edit src/app.ts");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "Vim reports src/app.ts");
	await vim.keys("3", "G", "c", "c");
	await vim.text(TYPED);
	await vim.keys("Escape");
	await vim.waitExpr(`mode() ==# 'n' && getline(3) ==# '${TYPED}'`);
	// The state written for the buffer as typed (a debounced write while typing named an earlier copy).
	const tick = await vim.expr<number>("b:changedtick");
	await vim.until(
		// No copy while no pi is connected: pi's read waits until Vim has seen it (the next poll) and written one.
		(s) => (s["active_buffer"] as { version?: number }).version === tick && s["buffers_serial"] === undefined,
		"Vim's state with the buffer as typed, and no copy while no pi is connected",
	);

	const unsaved = await readThroughPi(env, { path: "src/app.ts", offset: 2, limit: 3 });
	assert.match(unsaved, /is open in Vim with unsaved changes/);
	assert.match(unsaved, /unsaved buffer/);
	assert.ok(unsaved.includes(TYPED), `the typed line is in the result:\n${unsaved}`);
	assert.ok(unsaved.includes(ORIGINAL[1] as string) && unsaved.includes(ORIGINAL[3] as string), "lines 2 and 4");
	assert.ok(!unsaved.includes(ORIGINAL[2] as string), "not the disk's line 3");

	await vim.keys(":w", "Enter");
	await vim.until(
		(s) => !(s["active_buffer"] as { modified: boolean }).modified && s["buffers_serial"] === undefined,
		"saved: no unsaved buffers named",
	);
	const saved = await readThroughPi(env, { path: "src/app.ts", offset: 2, limit: 3 });
	assert.doesNotMatch(saved, /unsaved/);
	// pi counts the empty line after the final newline: 21 lines on disk.
	assert.equal(
		saved,
		`${[ORIGINAL[1], TYPED, ORIGINAL[3]].join("\n")}\n\n[17 more lines in file. Use offset=5 to continue.]`,
	);
});
