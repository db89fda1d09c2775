/**
 * The protocol's limits are written once (src/protocol/limits.ts); the JetBrains client's Java core keeps copies.
 * This reads them from the built core.jar by reflection and fails when one drifts (the Lua, Vim9 and Emacs Lisp
 * twins: test/nvim/, test/vim/ and test/emacs/limits-agree.test.ts).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { it } from "node:test";
import { promisify } from "node:util";
import * as limits from "../../src/protocol/limits.ts";
import { buildJetBrains } from "../helpers/jetbrains.ts";
import { REPO } from "../helpers/pi-env.ts";

const run = promisify(execFile);
const core = (field: string) => `pi.ide.core.${field}`;

const AGREEMENTS: { name: string; java: string; limit: number }[] = [
	{ name: "state file size", java: core("StateBuilder.MAX_STATE_FILE_BYTES"), limit: limits.MAX_STATE_FILE_BYTES },
	{
		name: "encoded selection cap",
		java: core("Text.MAX_SELECTION_TEXT_BYTES"),
		limit: limits.MAX_SELECTION_TEXT_BYTES,
	},
	{ name: "pi message size", java: core("PiMessage.MAX_BYTES"), limit: limits.MAX_PI_MESSAGE_BYTES },
	{ name: "pi message changed list", java: core("PiMessage.MAX_CHANGED"), limit: limits.MAX_PI_CHANGED },
	{ name: "pi message last_turn list", java: core("PiMessage.MAX_LAST_TURN"), limit: limits.MAX_PI_LAST_TURN },
	{ name: "files reports kept per pi", java: core("PiMessage.KEPT_FILE_REPORTS"), limit: limits.KEPT_FILE_REPORTS },
	{ name: "files reports at most", java: core("PiMessage.MAX_FILE_REPORTS"), limit: limits.MAX_FILE_REPORTS },
	{ name: "diagnostic items", java: core("Diagnostics.MAX_ITEMS"), limit: limits.MAX_DIAGNOSTIC_ITEMS },
	{
		name: "diagnostic message",
		java: core("Diagnostics.MAX_MESSAGE_CHARS"),
		limit: limits.MAX_DIAGNOSTIC_MESSAGE_CHARS,
	},
	{ name: "approval request size", java: core("Approval.MAX_BYTES"), limit: limits.MAX_APPROVAL_BYTES },
	{ name: "decisions kept", java: core("Approval.MAX_DECISIONS"), limit: limits.MAX_DECISIONS },
	{ name: "id bytes (a hunk's, a request's)", java: core("Approval.MAX_ID_BYTES"), limit: limits.MAX_ID_BYTES },
	{
		name: "unsaved buffers' text (v0.5)",
		java: core("UnsavedBuffers.MAX_TEXT_BYTES"),
		limit: limits.MAX_UNSAVED_TEXT_BYTES,
	},
	{
		name: "unsaved buffers listed (v0.5)",
		java: core("UnsavedBuffers.MAX_BUFFERS"),
		limit: limits.MAX_UNSAVED_BUFFERS,
	},
	{ name: "hunks of a request", java: core("Approval.MAX_HUNKS"), limit: limits.MAX_REVIEW_HUNKS_PER_FILE },
	{ name: "line numbers in hunks", java: core("Approval.MAX_LINE"), limit: limits.MAX_LINE_NUMBER },
	{ name: "nesting of pi's files", java: core("PiMessage.MAX_DEPTH"), limit: limits.MAX_PI_FILE_DEPTH },
	{ name: "send: typed prompt (v0.5)", java: core("Send.MAX_PROMPT_BYTES"), limit: limits.MAX_SEND_PROMPT_BYTES },
	{ name: "show and ask request file (v0.5)", java: core("ShowAsk.MAX_FILE_BYTES"), limit: limits.MAX_ASK_FILE_BYTES },
	{ name: "show and ask requests (v0.5)", java: core("ShowAsk.MAX_REQUESTS"), limit: limits.MAX_ASK_REQUESTS },
	{ name: "show note (v0.5)", java: core("ShowAsk.MAX_NOTE_BYTES"), limit: limits.MAX_SHOW_NOTE_BYTES },
	{ name: "answers kept (v0.5)", java: core("ShowAsk.MAX_ANSWERS"), limit: limits.MAX_ANSWERS },
	{ name: "answers file (v0.5)", java: core("ShowAsk.MAX_ANSWERS_FILE_BYTES"), limit: limits.MAX_ANSWERS_FILE_BYTES },
	{ name: "ask buffers (v0.5)", java: core("ShowAsk.MAX_BUFFERS"), limit: limits.MAX_ASK_BUFFERS },
	{
		name: "ask diagnostics (v0.5)",
		java: core("ShowAsk.MAX_DIAGNOSTIC_ITEMS"),
		limit: limits.MAX_ASK_DIAGNOSTIC_ITEMS,
	},
	{ name: "merge: conflicts reported (v0.5)", java: core("Merge.MAX_CONFLICTS"), limit: limits.MAX_CONFLICTS },
	{
		name: "merge: a conflict's lines quoted",
		java: core("Merge.MAX_CONFLICT_LINES"),
		limit: limits.MAX_CONFLICT_LINES,
	},
	{
		name: "merge: a quoted line's bytes",
		java: core("Merge.MAX_CONFLICT_LINE_BYTES"),
		limit: limits.MAX_CONFLICT_LINE_BYTES,
	},
	{ name: "merge: hunks of a change", java: core("Merge.MAX_HUNKS"), limit: limits.MAX_REVIEW_HUNKS_PER_FILE },
];

it("jetbrains: every Java copy of a limit equals src/protocol/limits.ts", async () => {
	const build = await buildJetBrains();
	const { stdout } = await run("java", [
		"-cp",
		build.coreJar,
		join(REPO, "test/jetbrains/probe/LimitsProbe.java"),
		...AGREEMENTS.map((a) => a.java),
	]);
	const values = JSON.parse(stdout) as number[];
	assert.deepEqual(
		AGREEMENTS.map((a, i) => ({ name: a.name, value: values[i] })),
		AGREEMENTS.map((a) => ({ name: a.name, value: a.limit })),
	);
});
