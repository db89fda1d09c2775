/**
 * Approval of pi's edits (v0.4, `ideContext.approve: "edits"`) with no editor: a real pi whose fake model edits a
 * file. In RPC mode pi's own dialog asks (an extension UI `select`): apply, reject, closed without an answer, no
 * answer until the timeout. In print mode (no UI, no editor) nobody can be asked: the edit is applied and the
 * model told so, unless pi refuses its state dir (then it is not applied, and the model reads why). With approval off (the default) nothing asks and nothing is added.
 */
import assert from "node:assert/strict";
import { chownSync, mkdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { DIALOG_ACCEPT, DIALOG_REJECT } from "../../src/link/approval.ts";
import { DEFAULT_REPLY, type FakeReply, type RecordedRequest, toolsThenReply } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { startRpc, type UiRequest } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const ORIGINAL = "alpha\nbeta\ngamma\n";
/** Another user (the tests run as root, which may give a directory away). */
const OTHER_UID = 1001;
const EDITED = "alpha\nBETA\ngamma\n";

/** The tool result the model read in a request (the `tool` message), as text. */
const toolResult = (request: RecordedRequest | undefined): string => {
	const messages = (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
	return JSON.stringify(messages.filter((m) => m.role === "tool").map((m) => m.content));
};

/** The model edits `file` once, then answers. */
const editOnce =
	(file: string) =>
	(_request: RecordedRequest, index: number): FakeReply =>
		index === 0
			? { toolCalls: [{ name: "edit", arguments: { path: file, edits: [{ oldText: "beta", newText: "BETA" }] } }] }
			: { text: DEFAULT_REPLY };

type Answer = { value: string } | { cancelled: true } | null;

describe("pi + approval through pi's dialog (RPC), no editor", () => {
	const cases: {
		name: string;
		answer: Answer;
		timeoutS?: number;
		content: string;
		told: RegExp;
		/** Also ask `/ide status` while the edit waits. */
		status?: boolean;
	}[] = [
		{
			name: "apply: the file changes, the model is told it was approved; /ide status shows the wait",
			status: true,
			answer: { value: DIALOG_ACCEPT },
			content: EDITED,
			told: /the user approved this change to notes\.txt in pi's approval dialog/,
		},
		{
			name: "reject: the file is unchanged, the model is told not to make it again",
			answer: { value: DIALOG_REJECT },
			content: ORIGINAL,
			told: /The user rejected this change in pi's approval dialog: notes\.txt is unchanged/,
		},
		{
			name: "closed without an answer: not applied, not a rejection",
			answer: { cancelled: true },
			content: ORIGINAL,
			told: /closed pi's approval dialog without deciding: the change was not applied.*This is not a rejection/,
		},
		{
			name: "no answer within the timeout: not applied, not a rejection",
			answer: null,
			timeoutS: 2,
			content: ORIGINAL,
			told: /No decision within 2 s .*not applied and notes\.txt is unchanged\. This is not a rejection: ask the user/,
		},
	];
	for (const c of cases)
		it(c.name, async (t) => {
			const env = await envFor(t, {
				settings: { ideContext: { approve: "edits", approveTimeoutSeconds: c.timeoutS ?? 60 } },
			});
			const file = touch(env.workDir, "notes.txt", ORIGINAL);
			env.model.respond = editOnce(file);
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			const since = rpc.records.length;
			const prompted = rpc.prompt("change beta");
			const dialog = await rpc.waitFor<UiRequest>(
				(r) => r.type === "extension_ui_request" && r.method === "select",
				undefined,
				since,
			);
			assert.match(String(dialog.title), /^pi wants to edit notes\.txt \(\+1 -1 in 1 hunk\)\. No answer within/);
			assert.deepEqual(dialog.options, [DIALOG_ACCEPT, DIALOG_REJECT]);
			assert.equal(readFileSync(file, "utf8"), ORIGINAL, "nothing written while pi waits");
			if (c.status) {
				// An extension command runs at once, even while pi works.
				const asked = rpc.records.length;
				rpc.send({ type: "prompt", message: "/ide status", id: "status" });
				const report = String(
					(
						await rpc.waitFor<UiRequest>(
							(r) =>
								r.type === "extension_ui_request" && r.method === "notify" && /^State dir:/.test(String(r.message)),
							undefined,
							asked,
						)
					).message,
				);
				assert.match(report, /^Approval: each write\/edit waits up to 60 s; asked in pi's dialog$/m, report);
				assert.match(
					report,
					new RegExp(`^  waiting: edit ${file.replaceAll(".", "\\.")}, \\d+ s so far$`, "m"),
					report,
				);
				assert.match(report, /^pi's changes: none yet \(nothing to review\)$/m, report);
			}
			if (c.answer) rpc.respond(dialog.id, c.answer);
			await prompted;
			assert.equal(readFileSync(file, "utf8"), c.content);
			assert.equal(env.model.requests.length, 2, "the model's edit and its answer after the tool result");
			assert.match(toolResult(env.model.requests[1]), c.told);
		});

	it("a state dir another user made first: the dialog asks, and its title says the editor cannot be asked and why", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		mkdirSync(env.stateDir, { recursive: true, mode: 0o700 });
		chownSync(env.stateDir, OTHER_UID, OTHER_UID);
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = editOnce(file);
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		const since = rpc.records.length;
		const prompted = rpc.prompt("change beta");
		const dialog = await rpc.waitFor<UiRequest>(
			(r) => r.type === "extension_ui_request" && r.method === "select",
			undefined,
			since,
		);
		assert.match(
			String(dialog.title),
			/^pi wants to edit notes\.txt .* Your editor cannot be asked: pi refuses its state directory .*pi-ide is owned by uid 1001/,
		);
		rpc.respond(dialog.id, { value: DIALOG_ACCEPT });
		await prompted;
		assert.equal(readFileSync(file, "utf8"), EDITED);
	});

	it("pi's abort while it waits: not applied, pi still answers", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = editOnce(file);
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		const since = rpc.records.length;
		const prompted = rpc.prompt("change beta");
		await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "select", undefined, since);
		await rpc.command({ type: "abort" });
		await prompted;
		assert.equal(readFileSync(file, "utf8"), ORIGINAL);
		const state = await rpc.command({ type: "get_state" });
		assert.equal(state.success, true, "pi is alive and answers");
	});

	it("approval off (the default): no dialog, the edit applies, nothing added", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = editOnce(file);
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		const { since } = await rpc.prompt("change beta");
		assert.deepEqual(rpc.uiRequests("select", since), []);
		assert.equal(readFileSync(file, "utf8"), EDITED);
		assert.doesNotMatch(toolResult(env.model.requests[1]), /approv/i);
	});

	it("an edit whose text is not in the file asks nobody: the tool fails as it would", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = toolsThenReply([
			{ name: "edit", arguments: { path: file, edits: [{ oldText: "delta", newText: "D" }] } },
		]);
		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		const { since } = await rpc.prompt("change delta");
		assert.deepEqual(rpc.uiRequests("select", since), []);
		assert.equal(readFileSync(file, "utf8"), ORIGINAL);
		assert.doesNotMatch(toolResult(env.model.requests[1]), /approv/i);
	});
});

describe("pi -p + approval, no UI and no editor", () => {
	it("nobody can be asked: the write applies and the model is told it was not approved", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written\n" } }]);
		const result = await runPrint(env, ["write it"]);
		assert.equal(result.code, 0, result.stderr);
		assert.equal(readFileSync(file, "utf8"), "written\n");
		assert.match(toolResult(env.model.requests[1]), /applied without approval/);
	});

	it("a state dir another user made first: not applied, and the model is told why (never a silent approval)", async (t) => {
		const env = await envFor(t, { settings: { ideContext: { approve: "edits" } } });
		// Another user's directory where pi's state dir should be (as /tmp/pi-ide with no XDG_RUNTIME_DIR).
		mkdirSync(env.stateDir, { recursive: true, mode: 0o700 });
		chownSync(env.stateDir, OTHER_UID, OTHER_UID);
		const file = touch(env.workDir, "notes.txt", ORIGINAL);
		env.model.respond = toolsThenReply([{ name: "write", arguments: { path: file, content: "written\n" } }]);
		const result = await runPrint(env, ["write it"]);
		assert.equal(result.code, 0, result.stderr);
		assert.equal(readFileSync(file, "utf8"), ORIGINAL, "not applied");
		const told = toolResult(env.model.requests[1]);
		assert.match(told, /pi refuses its state directory \(.*pi-ide is owned by uid 1001/);
		assert.doesNotMatch(told, /applied without approval/);
	});
});
