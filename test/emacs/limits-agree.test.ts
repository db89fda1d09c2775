/**
 * The protocol's limits are written once (src/protocol/limits.ts); the Emacs client keeps Emacs Lisp copies
 * (`defconst`s in editors/emacs/pi-ide-protocol.el). This reads them in a real Emacs and fails when one drifts (the
 * Lua, Vim9 and Java twins: test/nvim/, test/vim/ and test/jetbrains/limits-agree.test.ts).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { it } from "node:test";
import { promisify } from "node:util";
import * as limits from "../../src/protocol/limits.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR } from "../helpers/emacs.ts";

const run = promisify(execFile);

const AGREEMENTS: { name: string; elisp: string; limit: number }[] = [
	{ name: "state file size", elisp: "pi-ide-state-max-file-bytes", limit: limits.MAX_STATE_FILE_BYTES },
	{ name: "show and ask request file (v0.5)", elisp: "pi-ide-ask-max-bytes", limit: limits.MAX_ASK_FILE_BYTES },
	{ name: "show and ask requests (v0.5)", elisp: "pi-ide-ask-max-requests", limit: limits.MAX_ASK_REQUESTS },
	{ name: "show note (v0.5)", elisp: "pi-ide-ask-max-note-bytes", limit: limits.MAX_SHOW_NOTE_BYTES },
	{ name: "answers kept (v0.5)", elisp: "pi-ide-ask-max-answers", limit: limits.MAX_ANSWERS },
	{ name: "answers file (v0.5)", elisp: "pi-ide-ask-max-file-bytes", limit: limits.MAX_ANSWERS_FILE_BYTES },
	{ name: "ask buffers (v0.5)", elisp: "pi-ide-ask-max-buffers", limit: limits.MAX_ASK_BUFFERS },
	{ name: "ask diagnostics (v0.5)", elisp: "pi-ide-ask-max-items", limit: limits.MAX_ASK_DIAGNOSTIC_ITEMS },
	{ name: "encoded selection cap", elisp: "pi-ide-state-max-selection-bytes", limit: limits.MAX_SELECTION_TEXT_BYTES },
	{ name: "pi message size", elisp: "pi-ide-state-max-message-bytes", limit: limits.MAX_PI_MESSAGE_BYTES },
	{ name: "pi message changed list", elisp: "pi-ide-state-max-changed", limit: limits.MAX_PI_CHANGED },
	{ name: "pi message last_turn list", elisp: "pi-ide-state-max-last-turn", limit: limits.MAX_PI_LAST_TURN },
	{ name: "files reports at most", elisp: "pi-ide-state-max-reports", limit: limits.MAX_FILE_REPORTS },
	{ name: "files reports kept per pi", elisp: "pi-ide-state-kept-reports", limit: limits.KEPT_FILE_REPORTS },
	{ name: "diagnostic items", elisp: "pi-ide-state-max-diagnostics", limit: limits.MAX_DIAGNOSTIC_ITEMS },
	{
		name: "diagnostic message",
		elisp: "pi-ide-state-max-diagnostic-message",
		limit: limits.MAX_DIAGNOSTIC_MESSAGE_CHARS,
	},
	{ name: "approval request size", elisp: "pi-ide-state-max-approval-bytes", limit: limits.MAX_APPROVAL_BYTES },
	{ name: "decisions kept", elisp: "pi-ide-state-max-decisions", limit: limits.MAX_DECISIONS },
	{ name: "change set size", elisp: "pi-ide-state-max-review-bytes", limit: limits.MAX_REVIEW_BYTES },
	{ name: "reverts kept", elisp: "pi-ide-state-max-reverted", limit: limits.MAX_REVERTED_REPORTS },
	{ name: "id bytes (a hunk's, a request's)", elisp: "pi-ide-state-max-id-bytes", limit: limits.MAX_ID_BYTES },
	{ name: "nesting of pi's files", elisp: "pi-ide-state-max-depth", limit: limits.MAX_PI_FILE_DEPTH },
	{ name: "hunks of a file or request", elisp: "pi-ide-state-max-hunks", limit: limits.MAX_REVIEW_HUNKS_PER_FILE },
	{ name: "runs of a change set", elisp: "pi-ide-state-max-runs", limit: limits.MAX_REVIEW_RUNS },
	{ name: "line numbers in hunks", elisp: "pi-ide-state-max-line", limit: limits.MAX_LINE_NUMBER },
	{ name: "send: item text (v0.5)", elisp: "pi-ide-send-max-text-bytes", limit: limits.MAX_SELECTION_TEXT_BYTES },
	{ name: "send: typed prompt (v0.5)", elisp: "pi-ide-send-max-prompt-bytes", limit: limits.MAX_SEND_PROMPT_BYTES },
	{
		name: "unsaved buffers' text (v0.5)",
		elisp: "pi-ide-state-max-unsaved-bytes",
		limit: limits.MAX_UNSAVED_TEXT_BYTES,
	},
	{
		name: "unsaved buffers listed (v0.5)",
		elisp: "pi-ide-state-max-unsaved-buffers",
		limit: limits.MAX_UNSAVED_BUFFERS,
	},
	{ name: "merge: conflicts listed (v0.5)", elisp: "pi-ide-merge-max-conflicts", limit: limits.MAX_CONFLICTS },
	{
		name: "merge: the user's lines quoted per conflict (v0.5)",
		elisp: "pi-ide-merge-max-conflict-lines",
		limit: limits.MAX_CONFLICT_LINES,
	},
	{
		name: "merge: bytes of each quoted line (v0.5)",
		elisp: "pi-ide-merge-max-line-bytes",
		limit: limits.MAX_CONFLICT_LINE_BYTES,
	},
];

it("emacs: every Emacs Lisp copy of a limit equals src/protocol/limits.ts", async () => {
	const form = `(princ (json-encode (vector ${AGREEMENTS.map((a) => a.elisp).join(" ")})))`;
	const { stdout } = await run(EMACS_BIN, [
		"--batch",
		"-Q",
		"-L",
		EMACS_CLIENT_DIR,
		"-l",
		"json",
		"-l",
		"pi-ide-protocol",
		"-l",
		"pi-ide-send",
		"-l",
		"pi-ide-ask",
		"-l",
		"pi-ide-merge",
		"--eval",
		form,
	]);
	const values = JSON.parse(stdout) as number[];
	assert.deepEqual(
		AGREEMENTS.map((a, i) => ({ name: a.name, value: values[i] })),
		AGREEMENTS.map((a) => ({ name: a.name, value: a.limit })),
	);
});
