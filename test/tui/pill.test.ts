/**
 * The status pill in a real interactive pi under tmux: two Nerd Font glyphs (editor + language), editor glyph
 * only for an unnamed buffer, U+EAE3 when disconnected or the editor died, live updates from the state dir,
 * and the opt-in plain-text pill.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { GLYPH_DISCONNECTED, GLYPH_NVIM, PILL_NVIM_PY, PILL_NVIM_TS, PUA, waitForPill } from "../helpers/ide.ts";
import { PRODUCT_EXTENSION, piArgs } from "../helpers/pi-env.ts";
import { envFor, placeEditor, switchBuffer, touch } from "../helpers/scenario.ts";
import { startTui } from "../helpers/tmux.ts";

const tuiArgs = piArgs(PRODUCT_EXTENSION, ["--no-session"]);

describe("TUI pill", { concurrency: 3 }, () => {
	after(killAllEditors);

	test("connected Neovim + TypeScript file: U+E6AE U+E8CA", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, PILL_NVIM_TS);
	});

	test("unnamed buffer: the editor glyph only", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: null, name: "[No Name]", language: null } });
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, GLYPH_NVIM);
	});

	test("no editor: U+EAE3", async (t) => {
		const env = await envFor(t);
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, GLYPH_DISCONNECTED);
	});

	test("two candidates (not connected): U+EAE3", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "a.ts") } });
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "b.ts") } });
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, GLYPH_DISCONNECTED);
	});

	test("the pill follows the editor: new file, new language; unnamed; then the editor dies", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, PILL_NVIM_TS);

		switchBuffer(env, editor, { file: touch(env.workDir, "tool.py"), language: "python" });
		// Wait for the exact Python pill: any two-glyph pattern would also match the TypeScript pill still on
		// screen before the watcher delivers the write.
		await waitForPill(tui, PILL_NVIM_PY);

		switchBuffer(env, editor, { file: null, name: "[No Name]", language: null });
		await waitForPill(tui, GLYPH_NVIM);

		await editor.kill();
		await waitForPill(tui, GLYPH_DISCONNECTED);
	});

	test("a new editor appearing after start is connected live", async (t) => {
		const env = await envFor(t);
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		await waitForPill(tui, GLYPH_DISCONNECTED);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		await waitForPill(tui, PILL_NVIM_TS);
	});

	test('plain glyphs ({"ideContext": {"glyphs": "plain"}}): a text pill, no Nerd Font glyphs', async (t) => {
		const env = await envFor(t, { settings: { ideContext: { glyphs: "plain" } } });
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const tui = await startTui(env, { args: tuiArgs });
		t.after(tui.close);
		const lastLine = (pane: string) =>
			pane
				.split("\n")
				.filter((l) => l.trim() !== "")
				.at(-1)
				?.trim() ?? "";
		// The footer is drawn (the model line) and a status line sits under it.
		const pane = await tui.waitFor((p) => /fake-model/.test(p) && !/fake-model/.test(lastLine(p)));
		const pill = lastLine(pane);
		assert.doesNotMatch(pill, PUA);
		assert.match(pill, /^[\x21-\x7e][\x20-\x7e]*$/, `plain ASCII text, got ${JSON.stringify(pill)}`);
		assert.match(pill, /vim/i, "names the editor");
	});
});
