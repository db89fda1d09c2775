/**
 * The protocol's limits are written once for TypeScript (src/protocol/limits.ts); the Vim client keeps Vim9
 * copies. This reads them in a real Vim and fails when one drifts (the Neovim twin: test/nvim/limits-agree.test.ts).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import * as limits from "../../src/protocol/limits.ts";
import { makeVimDirs, runVimScript, vimString } from "../helpers/vim.ts";

const AGREEMENTS: { name: string; vim: string; limit: number }[] = [
	{ name: "state file size", vim: "pi_ide#state#MAX_FILE_BYTES", limit: limits.MAX_STATE_FILE_BYTES },
	{ name: "encoded selection cap", vim: "pi_ide#state#MAX_SELECTION_BYTES", limit: limits.MAX_SELECTION_TEXT_BYTES },
	{ name: "pi message size", vim: "pi_ide#inbox#MAX_BYTES", limit: limits.MAX_PI_MESSAGE_BYTES },
	{ name: "pi message changed list", vim: "pi_ide#inbox#MAX_CHANGED", limit: limits.MAX_PI_CHANGED },
	{ name: "pi message last_turn list", vim: "pi_ide#inbox#MAX_LAST_TURN", limit: limits.MAX_PI_LAST_TURN },
	{ name: "files reports kept", vim: "pi_ide#inbox#KEPT_REPORTS", limit: limits.KEPT_FILE_REPORTS },
	{ name: "files reports at most", vim: "pi_ide#inbox#MAX_REPORTS", limit: limits.MAX_FILE_REPORTS },
	{ name: "diagnostic items", vim: "pi_ide#diagnostics#MAX_ITEMS", limit: limits.MAX_DIAGNOSTIC_ITEMS },
	{ name: "diagnostic message", vim: "pi_ide#diagnostics#MAX_MESSAGE", limit: limits.MAX_DIAGNOSTIC_MESSAGE_CHARS },
	{ name: "unsaved buffers' text (v0.5)", vim: "pi_ide#buffers#MAX_TEXT_BYTES", limit: limits.MAX_UNSAVED_TEXT_BYTES },
	{ name: "unsaved buffers listed (v0.5)", vim: "pi_ide#buffers#MAX_BUFFERS", limit: limits.MAX_UNSAVED_BUFFERS },
	{ name: "show and ask request file (v0.5)", vim: "pi_ide#ask#MAX_BYTES", limit: limits.MAX_ASK_FILE_BYTES },
	{ name: "show and ask requests (v0.5)", vim: "pi_ide#ask#MAX_REQUESTS", limit: limits.MAX_ASK_REQUESTS },
	{ name: "show note (v0.5)", vim: "pi_ide#ask#MAX_NOTE_BYTES", limit: limits.MAX_SHOW_NOTE_BYTES },
	{ name: "answers kept (v0.5)", vim: "pi_ide#ask#MAX_ANSWERS", limit: limits.MAX_ANSWERS },
	{ name: "answers file (v0.5)", vim: "pi_ide#ask#MAX_FILE_BYTES", limit: limits.MAX_ANSWERS_FILE_BYTES },
	{ name: "ask buffers (v0.5)", vim: "pi_ide#ask#MAX_BUFFERS", limit: limits.MAX_ASK_BUFFERS },
	{ name: "ask diagnostics (v0.5)", vim: "pi_ide#ask#MAX_ITEMS", limit: limits.MAX_ASK_DIAGNOSTIC_ITEMS },
	{ name: "approval request size", vim: "pi_ide#approval_rules#MAX_BYTES", limit: limits.MAX_APPROVAL_BYTES },
	{ name: "decisions kept", vim: "pi_ide#approval_rules#MAX_DECISIONS", limit: limits.MAX_DECISIONS },
	{ name: "change set size", vim: "pi_ide#review_rules#MAX_BYTES", limit: limits.MAX_REVIEW_BYTES },
	{ name: "reverts kept", vim: "pi_ide#review_rules#MAX_REVERTED", limit: limits.MAX_REVERTED_REPORTS },
	{ name: "nesting of pi's files", vim: "pi_ide#inbox#MAX_DEPTH", limit: limits.MAX_PI_FILE_DEPTH },
	{
		name: "hunks per file or request",
		vim: "pi_ide#approval_rules#MAX_HUNKS",
		limit: limits.MAX_REVIEW_HUNKS_PER_FILE,
	},
	{ name: "largest line number", vim: "pi_ide#approval_rules#MAX_LINE", limit: limits.MAX_LINE_NUMBER },
	{ name: "change set runs", vim: "pi_ide#review_rules#MAX_RUNS", limit: limits.MAX_REVIEW_RUNS },
	{ name: "id bytes (a hunk's, a request's)", vim: "pi_ide#approval_rules#MAX_ID_BYTES", limit: limits.MAX_ID_BYTES },
	{ name: "send: item text (v0.5)", vim: "pi_ide#send#MAX_TEXT_BYTES", limit: limits.MAX_SELECTION_TEXT_BYTES },
	{ name: "send: typed prompt (v0.5)", vim: "pi_ide#send#MAX_PROMPT_BYTES", limit: limits.MAX_SEND_PROMPT_BYTES },
	{ name: "merge: conflicts per report (v0.5)", vim: "pi_ide#merge#MAX_CONFLICTS", limit: limits.MAX_CONFLICTS },
	{
		name: "merge: lines per conflict (v0.5)",
		vim: "pi_ide#merge#MAX_CONFLICT_LINES",
		limit: limits.MAX_CONFLICT_LINES,
	},
	{ name: "merge: bytes per line (v0.5)", vim: "pi_ide#merge#MAX_LINE_BYTES", limit: limits.MAX_CONFLICT_LINE_BYTES },
	{ name: "merge: hunks per change (v0.5)", vim: "pi_ide#merge#MAX_HUNKS", limit: limits.MAX_REVIEW_HUNKS_PER_FILE },
];

it("vim: every Vim9 copy of a limit equals src/protocol/limits.ts", (t) => {
	const dirs = makeVimDirs(t);
	const out = join(dirs.root, "limits.json");
	runVimScript(dirs, [
		`call writefile([json_encode([${AGREEMENTS.map((a) => a.vim).join(", ")}])], ${vimString(out)})`,
	]);
	const values = JSON.parse(readFileSync(out, "utf8")) as number[];
	assert.deepEqual(
		AGREEMENTS.map((a, i) => ({ name: a.name, value: values[i] })),
		AGREEMENTS.map((a) => ({ name: a.name, value: a.limit })),
	);
});
