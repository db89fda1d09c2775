/**
 * The protocol's limits are written once for TypeScript (src/protocol/limits.ts); the Neovim client keeps Lua copies.
 * This reads the Lua values in a real Neovim and fails when one of them drifts from src/protocol/limits.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as limits from "../../src/protocol/limits.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

interface Agreement {
	/** The Lua expression read in Neovim. */
	lua: string;
	/** What src/protocol/limits.ts says it must be. */
	limit: number;
	name: string;
}

const AGREEMENTS: Agreement[] = [
	{ name: "state file size", lua: 'require("pi-ide.state").MAX_FILE_BYTES', limit: limits.MAX_STATE_FILE_BYTES },
	{
		name: "encoded selection cap (the default of max_selection_bytes)",
		lua: 'require("pi-ide.config").defaults.max_selection_bytes',
		limit: limits.MAX_SELECTION_TEXT_BYTES,
	},
	{ name: "diagnostic items", lua: 'require("pi-ide.diagnostics").MAX_ITEMS', limit: limits.MAX_DIAGNOSTIC_ITEMS },
	{
		name: "diagnostic message length",
		lua: 'require("pi-ide.diagnostics").MAX_MESSAGE',
		limit: limits.MAX_DIAGNOSTIC_MESSAGE_CHARS,
	},
	{ name: "pi message size", lua: 'require("pi-ide.inbox.message").MAX_BYTES', limit: limits.MAX_PI_MESSAGE_BYTES },
	{ name: "pi message changed list", lua: 'require("pi-ide.inbox.message").MAX_CHANGED', limit: limits.MAX_PI_CHANGED },
	{
		name: "pi message last_turn list",
		lua: 'require("pi-ide.inbox.message").MAX_LAST_TURN',
		limit: limits.MAX_PI_LAST_TURN,
	},
	{ name: "files reports", lua: 'require("pi-ide.inbox").MAX_REPORTS', limit: limits.MAX_FILE_REPORTS },
	{ name: "change set size", lua: 'require("pi-ide.review").MAX_BYTES', limit: limits.MAX_REVIEW_BYTES },
	{ name: "reverted reports", lua: 'require("pi-ide.review").MAX_REVERTED', limit: limits.MAX_REVERTED_REPORTS },
	{ name: "approval request size", lua: 'require("pi-ide.approval").MAX_BYTES', limit: limits.MAX_APPROVAL_BYTES },
	{ name: "decisions kept", lua: 'require("pi-ide.approval").MAX_DECISIONS', limit: limits.MAX_DECISIONS },
	{ name: "files reports kept per pi", lua: 'require("pi-ide.inbox").KEPT_REPORTS', limit: limits.KEPT_FILE_REPORTS },
	{ name: "nesting of pi's files", lua: 'require("pi-ide.inbox.read").MAX_DEPTH', limit: limits.MAX_PI_FILE_DEPTH },
	{ name: "change set runs", lua: 'require("pi-ide.review").MAX_RUNS', limit: limits.MAX_REVIEW_RUNS },
	{
		name: "hunks per file or request",
		lua: 'require("pi-ide.review").MAX_HUNKS',
		limit: limits.MAX_REVIEW_HUNKS_PER_FILE,
	},
	{
		name: "unsaved buffers' text (v0.5)",
		lua: 'require("pi-ide.buffers").MAX_TEXT_BYTES',
		limit: limits.MAX_UNSAVED_TEXT_BYTES,
	},
	{
		name: "unsaved buffers listed (v0.5)",
		lua: 'require("pi-ide.buffers").MAX_BUFFERS',
		limit: limits.MAX_UNSAVED_BUFFERS,
	},
	{
		name: "show and ask request file (v0.5)",
		lua: 'require("pi-ide.ask").MAX_BYTES',
		limit: limits.MAX_ASK_FILE_BYTES,
	},
	{ name: "show and ask requests (v0.5)", lua: 'require("pi-ide.ask").MAX_REQUESTS', limit: limits.MAX_ASK_REQUESTS },
	{ name: "show note (v0.5)", lua: 'require("pi-ide.ask").MAX_NOTE_BYTES', limit: limits.MAX_SHOW_NOTE_BYTES },
	{ name: "answers kept (v0.5)", lua: 'require("pi-ide.ask").MAX_ANSWERS', limit: limits.MAX_ANSWERS },
	{ name: "answers file (v0.5)", lua: 'require("pi-ide.ask").MAX_FILE_BYTES', limit: limits.MAX_ANSWERS_FILE_BYTES },
	{ name: "ask buffers (v0.5)", lua: 'require("pi-ide.ask").MAX_BUFFERS', limit: limits.MAX_ASK_BUFFERS },
	{ name: "ask diagnostics (v0.5)", lua: 'require("pi-ide.ask").MAX_ITEMS', limit: limits.MAX_ASK_DIAGNOSTIC_ITEMS },
	{ name: "largest line number", lua: 'require("pi-ide.review").MAX_LINE', limit: limits.MAX_LINE_NUMBER },
	{ name: "merge conflicts listed", lua: 'require("pi-ide.inbox.merge").MAX_CONFLICTS', limit: limits.MAX_CONFLICTS },
	{
		name: "merge conflict lines",
		lua: 'require("pi-ide.inbox.merge").MAX_CONFLICT_LINES',
		limit: limits.MAX_CONFLICT_LINES,
	},
	{
		name: "merge conflict line bytes",
		lua: 'require("pi-ide.inbox.merge").MAX_LINE_BYTES',
		limit: limits.MAX_CONFLICT_LINE_BYTES,
	},
	{
		name: "merge hunks per change",
		lua: 'require("pi-ide.inbox.merge").MAX_HUNKS',
		limit: limits.MAX_REVIEW_HUNKS_PER_FILE,
	},
	{
		name: "id bytes (a hunk's, a request's)",
		lua: 'require("pi-ide.review").MAX_ID_BYTES',
		limit: limits.MAX_ID_BYTES,
	},
	{
		name: "send: item text (v0.5)",
		lua: 'require("pi-ide.send").MAX_TEXT_BYTES',
		limit: limits.MAX_SELECTION_TEXT_BYTES,
	},
	{
		name: "send: typed prompt (v0.5)",
		lua: 'require("pi-ide.send").MAX_PROMPT_BYTES',
		limit: limits.MAX_SEND_PROMPT_BYTES,
	},
];

forEachNvim((flavour) => {
	describe(`the Neovim client's limits agree with src/protocol/limits.ts (${flavour.name})`, () => {
		it("every Lua copy equals its protocol limit", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const values = await nv.lua<number[]>(`return { ${AGREEMENTS.map((a) => a.lua).join(", ")} }`);
			assert.deepEqual(
				AGREEMENTS.map((a, i) => ({ name: a.name, value: values[i] })),
				AGREEMENTS.map((a) => ({ name: a.name, value: a.limit })),
			);
		});
	});
});
