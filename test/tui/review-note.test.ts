/**
 * What pi's screen shows of the review's note to the model (v0.4): after the user reverts one of pi's hunks in
 * Neovim, the next prompt carries the note, and pi's TUI shows it under the prompt as pi's own lines (`↳ Editor:
 * the user reverted ...`), never as a raw custom message with its type tag (`[ide-context-reverts]`).
 * Rendering is pi's: one Neovim of the matrix is enough.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toolsThenReply } from "../helpers/fake-llm.ts";
import { GLYPH_NVIM, waitForPill } from "../helpers/ide.ts";
import { NVIM_MATRIX, startNvim } from "../helpers/nvim.ts";
import { PRODUCT_EXTENSION, piArgs } from "../helpers/pi-env.ts";
import { pollFor } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startTui } from "../helpers/tmux.ts";

const flavour = NVIM_MATRIX[0];

describe("TUI: the review's note to the model", () => {
	test("a revert told to the model shows under the prompt as pi's own lines, without a type tag", async (t) => {
		assert.ok(flavour);
		const env = await envFor(t);
		const file = touch(env.workDir, "notes.txt", "alpha\nbeta\ngamma\n");
		const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
		await nv.command("edit notes.txt");
		await nv.until((s) => s.active_buffer.file === file && s.protocol === "0.3", "Neovim reports notes.txt");
		env.model.respond = toolsThenReply([
			{ name: "edit", arguments: { path: file, edits: [{ oldText: "beta", newText: "BETA" }] } },
		]);
		const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]), cols: 140 });
		t.after(tui.close);
		await waitForPill(tui, new RegExp(`^${GLYPH_NVIM}`, "u"));
		await tui.sendText("change beta");
		await tui.sendKey("Enter");
		await tui.waitFor(/FAKE-REPLY-OK/);

		await pollFor(
			async () => (await nv.lua<string[]>("return vim.api.nvim_buf_get_lines(0, 1, 2, false)"))[0] === "BETA",
			"Neovim shows pi's edit",
		);
		await nv.command("call cursor(2, 1)");
		await nv.command("PiIde revert");
		await nv.until((s) => ((s as { reverted?: unknown[] }).reverted ?? []).length === 1, "the revert is reported");

		await tui.sendText("what now?");
		await tui.sendKey("Enter");
		const pane = await tui.waitFor(/↳ Editor: the user reverted one of your changes/);
		assert.match(pane, /notes\.txt:2/);
		assert.doesNotMatch(pane, /\[ide-context-reverts\]/);
	});
});
