/**
 * v0.5 send to pi in a real interactive pi under tmux, from a real Neovim: `:PiIdeSend [prompt]` puts the typed
 * words and the line into pi's input (the editor box, not sent): Enter there sends it and the model receives it;
 * `:PiIdeSend! [prompt]` sends at once without a key in pi.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { userTexts } from "../helpers/fake-llm.ts";
import { GLYPH_NVIM, waitForPill } from "../helpers/ide.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { PRODUCT_EXTENSION, piArgs } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { piPids, readPiMessage } from "../helpers/send.ts";
import { startTui } from "../helpers/tmux.ts";

forEachNvim((flavour) => {
	describe(`TUI + nvim ${flavour.name}: :PiIdeSend`, () => {
		test("a draft in pi's input, sent with Enter there; ! sends at once", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			const file = touch(env.workDir, "notes.txt", "alpha\nbeta\ngamma\n");
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports notes.txt");
			const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]), cols: 140 });
			t.after(tui.close);
			await waitForPill(tui, new RegExp(`^${GLYPH_NVIM}`, "u"));
			await pollUntil(
				async () => ((await nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) > 0 ? true : undefined),
				"pi's message naming Neovim",
			);

			await nv.command("normal! 2G");
			await nv.command("PiIdeSend what is beta for");
			const fate = await pollUntil(() => {
				const pid = piPids(env.stateDir)[0];
				return pid === undefined ? undefined : readPiMessage(env.stateDir, pid)?.sent?.fate;
			}, "pi's answer");
			assert.equal(fate, "draft");
			const pane = await tui.waitFor(/what is beta for/);
			assert.match(pane, /Line from notes\.txt, line 2:/);
			assert.equal(env.model.requests.length, 0, "a draft waits for the user");
			await tui.sendKey("Enter");
			const draft = "what is beta for\n\nLine from notes.txt, line 2:\n```text\nbeta\n```";
			await pollUntil(
				() => (env.model.requests.some((r) => userTexts(r).includes(draft)) ? true : undefined),
				() =>
					`the draft sent from pi's input; the model got: ${JSON.stringify(env.model.requests.map((r) => userTexts(r)))}`,
				30_000,
			);
			await tui.waitFor(/FAKE-REPLY-OK/);

			await nv.command("normal! 3G");
			await nv.command("PiIdeSend! and gamma");
			const now = "and gamma\n\nLine from notes.txt, line 3:\n```text\ngamma\n```";
			await pollUntil(
				() => (env.model.requests.some((r) => userTexts(r).includes(now)) ? true : undefined),
				"the send at once",
				30_000,
			);
		});
	});
});
