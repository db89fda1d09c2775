/**
 * Approval (v0.4, `ideContext.approve: "edits"`) in a real interactive pi under tmux: pi's own dialog shows what
 * the edit changes and what silence means; Enter on the first choice applies it, the second rejects it, Escape
 * closes the dialog without a decision (not applied, not a rejection). The model reads each outcome. With Neovim
 * connected, `:PiIde approve` there answers first and pi's dialog closes by itself.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { type RecordedRequest, toolsThenReply } from "../helpers/fake-llm.ts";
import { GLYPH_DISCONNECTED, GLYPH_NVIM, waitForPill } from "../helpers/ide.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { PRODUCT_EXTENSION, piArgs } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import { startTui } from "../helpers/tmux.ts";

const ORIGINAL = "alpha\nbeta\ngamma\n";

const toolResult = (request: RecordedRequest | undefined): string => {
	const messages = (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
	return JSON.stringify(messages.filter((m) => m.role === "tool").map((m) => m.content));
};

describe("TUI: approving pi's edit in pi's own dialog", { concurrency: 3 }, () => {
	const cases: { name: string; keys: string[]; content: string; told: RegExp }[] = [
		{
			name: "Enter on the first choice applies the edit",
			keys: ["Enter"],
			content: "alpha\nBETA\ngamma\n",
			told: /approved this change to notes\.txt in pi's approval dialog/,
		},
		{
			name: "the second choice rejects it",
			keys: ["Down", "Enter"],
			content: ORIGINAL,
			told: /The user rejected this change in pi's approval dialog: notes\.txt is unchanged/,
		},
		{
			name: "Escape closes the dialog: not applied, not a rejection",
			keys: ["Escape"],
			content: ORIGINAL,
			told: /closed pi's approval dialog without deciding.*This is not a rejection/,
		},
	];
	for (const c of cases)
		test(c.name, async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			env.model.respond = toolsThenReply([
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "beta", newText: "BETA" }] } },
			]);
			const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]), cols: 140 });
			t.after(tui.close);
			await waitForPill(tui, GLYPH_DISCONNECTED);
			await tui.sendText("change beta");
			await tui.sendKey("Enter");
			const pane = await tui.waitFor(/pi wants to edit notes\.txt/);
			assert.match(pane, /Apply the change/);
			assert.match(pane, /Reject it/);
			assert.equal(readFileSync(file, "utf8"), ORIGINAL, "nothing written while pi waits");
			await tui.sendKey(...c.keys);
			await pollUntil(
				() => (env.model.requests.length === 2 ? true : undefined),
				"the model reads the tool result",
				60_000,
			);
			assert.match(toolResult(env.model.requests[1]), c.told);
			assert.equal(readFileSync(file, "utf8"), c.content);
		});
});

forEachNvim((flavour) => {
	describe(`TUI + nvim ${flavour.name}: the editor answers first`, () => {
		test(":PiIde approve applies the edit and pi's dialog closes by itself", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command("edit notes.txt");
			await nv.until((s) => s.active_buffer.file === file && Array.isArray(s.decisions), "Neovim reports notes.txt");
			env.model.respond = toolsThenReply([
				{ name: "edit", arguments: { path: file, edits: [{ oldText: "beta", newText: "BETA" }] } },
			]);
			const tui = await startTui(env, { args: piArgs(PRODUCT_EXTENSION, ["--no-session"]), cols: 140 });
			t.after(tui.close);
			await waitForPill(tui, new RegExp(`^${GLYPH_NVIM}`, "u"));
			await tui.sendText("change beta");
			await tui.sendKey("Enter");
			await tui.waitFor(/pi wants to edit notes\.txt/);
			await nv.command("PiIde approve");
			await pollUntil(
				() => (env.model.requests.length === 2 ? true : undefined),
				"the model reads the tool result",
				60_000,
			);
			assert.match(toolResult(env.model.requests[1]), /approved this change to notes\.txt in Neovim/);
			assert.equal(readFileSync(file, "utf8"), "alpha\nBETA\ngamma\n");
			await tui.waitFor((pane) => !pane.includes("pi wants to edit") && pane.includes("FAKE-REPLY-OK"));
		});
	});
});
