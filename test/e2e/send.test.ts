/**
 * v0.5 send to pi, with real pi in RPC mode and the fake model: an editor's `<pid>.send.json` becomes pi's draft
 * (the set_editor_text request), or with mode `now` a prompt (idle) or a follow-up (busy: after the run, never
 * interrupting it); an excluded file, a send from an editor pi is not connected to, and a second send with the
 * same id reach nothing; pi's message and /ide status say what became of the latest one.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { userTexts } from "../helpers/fake-llm.ts";
import { GLYPH_DISCONNECTED, STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { type RpcPi, type RpcRecord, startRpc } from "../helpers/rpc.ts";
import { envFor as baseEnvFor, type PlacedEditor, placeEditor, touch } from "../helpers/scenario.ts";
import { piPids, readPiMessage, writeSend } from "../helpers/send.ts";

const envFor = (t: Parameters<typeof baseEnvFor>[0]) =>
	baseEnvFor(t, { settings: { ideContext: { linkNvim: false } } });

const isDraft = (r: RpcRecord) => r.type === "extension_ui_request" && r.method === "set_editor_text";

interface Setup {
	env: PiEnv;
	rpc: RpcPi;
	editor: PlacedEditor;
	piPid: number;
	file: string;
}

async function setup(t: Parameters<typeof baseEnvFor>[0]): Promise<Setup> {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/main.ts", "const a = 1;\nconst b = 2;\n");
	const editor = await placeEditor(env, { active_buffer: { file } });
	const rpc = await startRpc(env);
	t.after(() => rpc.close());
	await rpc.waitFor(
		(r) =>
			r.type === "extension_ui_request" &&
			r.method === "setStatus" &&
			r.statusKey === STATUS_KEY &&
			r.statusText !== GLYPH_DISCONNECTED,
	);
	const piPid = await pollUntil(() => piPids(env.stateDir)[0], "pi's message file");
	return { env, rpc, editor, piPid, file };
}

/** pi's message says the send `id` ended as `fate`. */
async function fateOf(s: Setup, id: string): Promise<string> {
	return pollUntil(
		() => {
			const sent = readPiMessage(s.env.stateDir, s.piPid)?.sent;
			return sent?.id === id ? sent.fate : undefined;
		},
		() =>
			`pi's answer to send ${id}; pi's message: ${JSON.stringify(readPiMessage(s.env.stateDir, s.piPid))}; notices: ${JSON.stringify(s.rpc.uiRequests("notify").map((r) => r.message))}`,
	);
}

/** Every user text of every request the model received. */
const allUserTexts = (env: PiEnv) => env.model.requests.flatMap((r) => userTexts(r));

describe("send to pi (v0.5), real pi in RPC mode", { concurrency: 3 }, () => {
	after(killAllEditors);

	test("draft: the reference and the typed words arrive as set_editor_text; the same id twice is taken once", async (t) => {
		const s = await setup(t);
		const since = s.rpc.records.length;
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "d1",
			prompt: "why two constants?",
			item: { file: s.file, text: "const a = 1;\nconst b = 2;" },
		});
		const draft = await s.rpc.waitFor(isDraft, WAIT_MS, since);
		assert.equal(
			draft["text"],
			"why two constants?\n\nSelection from src/main.ts, lines 1-2:\n```typescript\nconst a = 1;\nconst b = 2;\n```",
		);
		assert.equal(await fateOf(s, "d1"), "draft");
		assert.equal(s.env.model.requests.length, 0, "a draft is not sent");

		// The same id again (an editor rewriting its file), then a new one: only the new one becomes a draft.
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "d1",
			item: { file: s.file, text: "again" },
		});
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "d2",
			item: { kind: "line", file: s.file, text: "const b = 2;", start_line: 2, end_line: 2 },
		});
		await fateOf(s, "d2");
		await s.rpc.waitFor((r) => isDraft(r) && String(r["text"]).startsWith("Line from"), WAIT_MS, since);
		const drafts = s.rpc.records.slice(since).filter(isDraft);
		assert.deepEqual(
			drafts.map((r) => r["text"]),
			[draft["text"], "Line from src/main.ts, line 2:\n```typescript\nconst b = 2;\n```"],
		);
		const status = await s.rpc
			.prompt("/ide status")
			.then(() =>
				s.rpc.waitFor((r) => r.method === "notify" && String(r.message).startsWith("State dir:"), WAIT_MS, since),
			);
		assert.match(String(status.message), /Sent from the editor \(pid \d+, id d2\): put into pi's input as a draft/);
	});

	test("now: a prompt when idle; a follow-up after the run when busy, never interrupting it", async (t) => {
		const s = await setup(t);
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "n1",
			mode: "now",
			prompt: "explain",
			item: { file: s.file, text: "const a = 1;", start_line: 1, end_line: 1 },
		});
		assert.equal(await fateOf(s, "n1"), "prompt");
		const sentText = "explain\n\nSelection from src/main.ts, line 1:\n```typescript\nconst a = 1;\n```";
		await pollUntil(() => allUserTexts(s.env).includes(sentText) || undefined, "the model receiving the send");
		await s.rpc.waitFor((r) => r.type === "agent_settled");

		// Busy: the model holds its reply to a prompt until the send was answered.
		let release: () => void = () => {};
		const held = new Promise<void>((resolve) => {
			release = resolve;
		});
		const first = s.env.model.requests.length;
		s.env.model.beforeReply = (_request, index) => (index === first ? held : undefined);
		s.rpc.send({ id: "busy", type: "prompt", message: "a long task" });
		await pollUntil(() => s.env.model.requests.length > first || undefined, "the run under way");
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "n2",
			mode: "now",
			item: { file: s.file, text: "const b = 2;", start_line: 2, end_line: 2 },
		});
		assert.equal(await fateOf(s, "n2"), "follow-up");
		assert.equal(s.env.model.requests.length, first + 1, "the run was not interrupted");
		release();
		await pollUntil(
			() =>
				allUserTexts(s.env).includes("Selection from src/main.ts, line 2:\n```typescript\nconst b = 2;\n```") ||
				undefined,
			"the follow-up reaching the model",
		);
		const followUp = s.env.model.requests.findIndex((r) =>
			userTexts(r).some((u) => u.startsWith("Selection from src/main.ts, line 2")),
		);
		assert.ok(followUp > first, "the follow-up came after the held request");
		const texts = userTexts(s.env.model.requests[followUp]);
		assert.ok(texts.indexOf("a long task") < texts.findIndex((u) => u.startsWith("Selection from")), "in order");
	});

	test("refused: an excluded file, another editor's send; nothing reaches pi's input or the model", async (t) => {
		const s = await setup(t);
		mkdirSync(join(s.env.workDir, ".pi"), { recursive: true });
		writeFileSync(join(s.env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
		const secret = touch(s.env.workDir, "secret.env", "TOKEN=hunter2\n");
		const since = s.rpc.records.length;
		writeSend(s.env.stateDir, {
			editorPid: s.editor.pid,
			piPid: s.piPid,
			id: "x1",
			mode: "now",
			item: { file: secret, text: "TOKEN=hunter2" },
		});
		assert.equal(await fateOf(s, "x1"), "excluded");
		const other = await placeEditor(s.env, { active_buffer: { file: s.file }, timestamp: 1 });
		writeSend(s.env.stateDir, {
			editorPid: other.pid,
			piPid: s.piPid,
			id: "o1",
			item: { file: s.file, text: "const a = 1;" },
		});
		assert.equal(await fateOf(s, "o1"), "refused");
		assert.match(readPiMessage(s.env.stateDir, s.piPid)?.sent?.reason ?? "", /not connected to that editor/);
		assert.equal(s.rpc.records.slice(since).filter(isDraft).length, 0);
		assert.equal(s.env.model.requests.length, 0);
		assert.ok(!allUserTexts(s.env).some((u) => u.includes("hunter2")));
	});
});
