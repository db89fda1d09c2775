/**
 * Issue 26 item 1 end to end: a real Neovim with a UI, the user's change typed as keys and not saved, and a real pi
 * whose fake model calls pi's own `read`. The read's result is the editor's unsaved buffer (the lines asked for,
 * said to be unsaved), not the disk; after the user's `:w` it is the plain disk read again; a file the ignore rules
 * exclude sends nothing of its buffer. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, type Nvim, startNvim } from "../helpers/nvim.ts";
import { envFor, readThroughPi, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);
const TYPED = "export const typed = 'UNSAVED BY THE USER';";

/** The user replaces line 3 as a user does: keys, in normal mode, then back to normal mode; not saved. */
async function typeOverLine3(nv: Nvim, file: string): Promise<void> {
	await nv.input(`3Gcc${TYPED}<Esc>`);
	// The state written for the buffer as typed (a debounced write while typing would name an earlier copy).
	const tick = await nv.lua<number>("return vim.b.changedtick");
	await nv.until(
		(s) => s.active_buffer.file === file && s.active_buffer.version === tick && s.buffers_serial === undefined,
		"Neovim's state with the buffer as typed, and no copy while no pi is connected (pi's read waits for it)",
	);
}

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pi's read sees the user's unsaved buffer`, { concurrency: 2 }, () => {
		it("a read of lines 2-4 holds the typed, unsaved line 3 and says so; after :w the plain disk text", async (t) => {
			const env = await envFor(t);
			const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit src/app.ts");
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports src/app.ts");
			await typeOverLine3(nv, file);

			const unsaved = await readThroughPi(env, { path: "src/app.ts", offset: 2, limit: 3 });
			assert.match(unsaved, /unsaved/);
			assert.match(unsaved, /buffer/);
			assert.match(unsaved, /Neovim/);
			assert.ok(unsaved.includes(TYPED), `the typed line is in the result:\n${unsaved}`);
			assert.ok(unsaved.includes(ORIGINAL[1] as string) && unsaved.includes(ORIGINAL[3] as string), "lines 2 and 4");
			assert.ok(!unsaved.includes(ORIGINAL[2] as string), "not the disk's line 3");
			assert.ok(!unsaved.includes(ORIGINAL[4] as string), "the limit holds: not line 5");

			await nv.input(":w<CR>");
			await nv.until(
				(s) => !s.active_buffer.modified && (s.buffers_serial === undefined || s.buffers_serial === null),
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

		it("a new file typed and never saved: the read that fails on disk returns the buffer", async (t) => {
			const env = await envFor(t);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			const file = join(env.workDir, "src/new.ts");
			await nv.command("edit src/new.ts");
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports src/new.ts");
			await nv.input(`i${TYPED}<Esc>`);
			const tick = await nv.lua<number>("return vim.b.changedtick");
			await nv.until(
				(s) => s.active_buffer.version === tick && s.buffers_serial === undefined,
				"Neovim's state with the new file as typed, no copy while no pi is connected",
			);
			const text = await readThroughPi(env, { path: "src/new.ts" });
			assert.match(text, /unsaved buffer/);
			assert.ok(text.includes(TYPED), `the typed line:\n${text}`);
			assert.doesNotMatch(text, /ENOENT|no such file/i);
		});

		it("a file the ignore rules exclude: the read is the disk's, nothing of the buffer", async (t) => {
			const env = await envFor(t);
			writeFileSync(join(env.agentDir, "ide-context.ignore"), "src/app.ts\n");
			const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit src/app.ts");
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports src/app.ts");
			await typeOverLine3(nv, file);
			const text = await readThroughPi(env, { path: "src/app.ts" });
			assert.ok(!text.includes("UNSAVED BY THE USER"), `nothing of the buffer:\n${text}`);
			assert.doesNotMatch(text, /unsaved/);
			assert.equal(text, `${ORIGINAL.join("\n")}\n`);
		});
	});
});
