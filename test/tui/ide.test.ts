/**
 * `/ide` and the selection quote in a real interactive pi under tmux: the picker's rows (editor name, argv
 * fingerprint, file, age; most recent first), picking a row connects that editor, the disconnect row, and the
 * one-line quote under the user's message, also after `/resume`.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { killAllEditors, makeSelection, nowSeconds } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { GLYPH_DISCONNECTED, PILL_NVIM_TS, runSlash, waitForPill } from "../helpers/ide.ts";
import { PRODUCT_EXTENSION, piArgs } from "../helpers/pi-env.ts";
import { envFor, fileLine, placeEditor, switchBuffer, touch } from "../helpers/scenario.ts";
import { startTui } from "../helpers/tmux.ts";

describe("TUI /ide and the selection quote", { concurrency: 3 }, () => {
	after(killAllEditors);

	test("/ide lists both same-cwd editors, most recent first; picking one connects it", async (t) => {
		const env = await envFor(t);
		const alpha = touch(env.workDir, "alpha.ts");
		const beta = touch(env.workDir, "beta.ts");
		await placeEditor(env, { argv: ["alpha-dir/"], timestamp: nowSeconds() - 300, active_buffer: { file: alpha } });
		await placeEditor(env, { argv: ["beta-dir/"], timestamp: nowSeconds() - 2, active_buffer: { file: beta } });
		const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]) });
		t.after(tui.close);
		await waitForPill(tui, GLYPH_DISCONNECTED);

		await runSlash(tui, "/ide", /→ ide/);
		const pane = await tui.waitFor((p) => p.includes("alpha.ts") && p.includes("beta.ts"));
		const rows = pane.split("\n").filter((l) => /alpha\.ts|beta\.ts/.test(l));
		assert.equal(rows.length, 2, `two editor rows:\n${pane}`);
		const [first, second] = rows as [string, string];
		assert.match(first, /beta-dir/, "the most recently active editor comes first");
		assert.match(second, /alpha-dir/);
		for (const row of rows) {
			assert.match(row, /Neovim|nvim/, `editor name in ${JSON.stringify(row)}`);
			assert.match(row, /\d+\s*(s|sec|min|m|h)\b|now|ago/, `how long ago in ${JSON.stringify(row)}`);
		}
		assert.match(
			second,
			/\b[4-9]\s*m(in)?\b|\b(29\d|3\d\d)\s*s\b/,
			"alpha was active about 5 minutes ago (more on a slow start)",
		);
		assert.doesNotMatch(pane, /disconnect/i, "no disconnect row while not connected");
		// The columns line up: the file names start at the same column in both rows.
		assert.equal(first.indexOf("beta.ts"), second.indexOf("alpha.ts"), `aligned rows:\n${first}\n${second}`);

		await tui.sendKey("Down");
		await tui.waitFor((p) => p.split("\n").some((l) => /alpha-dir/.test(l) && /→|>|❯/.test(l)));
		await tui.sendKey("Enter");
		await waitForPill(tui, PILL_NVIM_TS);

		await tui.sendText("which file?");
		await tui.sendKey("Enter");
		await tui.waitFor(/FAKE-REPLY-OK/);
		assert.equal(fileLine(injectedAfter(env.model.requests.at(-1), "which file?")[0] ?? ""), alpha);

		await runSlash(tui, "/ide", /→ ide/);
		const connectedPane = await tui.waitFor(/disconnect/i);
		assert.match(connectedPane, /alpha\.ts/);
	});

	test("/ide → disconnect row: pill U+EAE3, next prompt has no block", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]) });
		t.after(tui.close);
		await waitForPill(tui, PILL_NVIM_TS);
		await runSlash(tui, "/ide", /→ ide/);
		const pane = await tui.waitFor(/disconnect/i);
		const rows = pane.split("\n");
		const selected = rows.findIndex((l) => /main\.ts/.test(l));
		const disconnect = rows.findIndex((l) => /disconnect/i.test(l));
		assert.ok(selected >= 0 && disconnect >= 0, pane);
		for (let i = 0; i < Math.abs(disconnect - selected); i++) await tui.sendKey(disconnect > selected ? "Down" : "Up");
		await tui.waitFor((p) => p.split("\n").some((l) => /disconnect/i.test(l) && /→|>|❯/.test(l)));
		await tui.sendKey("Enter");
		await waitForPill(tui, GLYPH_DISCONNECTED);
		await tui.sendText("after disconnect");
		await tui.sendKey("Enter");
		await tui.waitFor(/FAKE-REPLY-OK/);
		assert.deepEqual(injectedAfter(env.model.requests.at(-1), "after disconnect"), []);
	});

	test("fresh selection: quote line under the user's message, still there after /resume", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const text =
			"const answer = 42;\nconst question = 'unknown';\nexport { answer, question };\n\n\nexport default answer;";
		await placeEditor(env, {
			active_buffer: { file, selection: makeSelection(text, { startLine: 40, ageSeconds: 1 }) },
		});
		const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION) });
		t.after(tui.close);
		await waitForPill(tui, PILL_NVIM_TS);
		await tui.sendText("explain this selection");
		await tui.sendKey("Enter");
		const quote = /↳ main\.ts:40-45 · const answer = 42;/;
		const pane = await tui.waitFor((p) => quote.test(p) && /FAKE-REPLY-OK/.test(p));
		assertQuoteUnderPrompt(pane, "explain this selection", quote);
		assert.equal(injectedAfter(env.model.requests.at(-1), "explain this selection").length, 1);

		await runSlash(tui, "/new", /→ new/);
		await tui.waitFor(/New session started/);
		await tui.waitFor((p) => !quote.test(p));
		await runSlash(tui, "/resume", /→ resume/);
		await tui.waitFor(/Resume Session/);
		await tui.waitFor(/explain this selection/);
		await tui.sendKey("Enter");
		await tui.waitFor(/Resumed session/);
		const resumed = await tui.waitFor(quote);
		assertQuoteUnderPrompt(resumed, "explain this selection", quote);
	});

	test("stale selection: no quote line; the line for what was sent instead, and for an update", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, {
			active_buffer: {
				file: touch(env.workDir, "src/main.ts"),
				selection: makeSelection("const old = 1;", { ageSeconds: 300 }),
			},
		});
		const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]) });
		t.after(tui.close);
		await waitForPill(tui, PILL_NVIM_TS);
		await tui.sendText("no quote please");
		await tui.sendKey("Enter");
		const sent = /↳ editor context: main\.ts · Cursor: line 42, column 10$/m;
		const pane = await tui.waitFor((p) => /FAKE-REPLY-OK/.test(p) && sent.test(p));
		assert.doesNotMatch(pane, /↳ main\.ts:/, "no quote: the selection was not sent");
		assertQuoteUnderPrompt(pane, "no quote please", sent);
		assert.equal(
			injectedAfter(env.model.requests.at(-1), "no quote please").length,
			1,
			"the file block is still injected",
		);
		switchBuffer(env, editor, { ...editor.state.active_buffer, selection: null, cursor: { line: 77, column: 5 } });
		await tui.sendText("and now?");
		await tui.sendKey("Enter");
		const update = /↳ editor update: Cursor: line 77, column 5$/m;
		assertQuoteUnderPrompt(await tui.waitFor(update), "and now?", update);
	});
});

/** The quote is the first non-blank line after the user's prompt, before the reply. */
function assertQuoteUnderPrompt(pane: string, prompt: string, quote: RegExp): void {
	const lines = pane.split("\n").filter((l) => l.trim() !== "");
	const at = lines.findIndex((l) => l.trim() === prompt);
	assert.ok(at >= 0, `prompt in pane:\n${pane}`);
	assert.match(lines[at + 1] ?? "", quote, `quote right under the prompt:\n${pane}`);
}
