/**
 * Through pi-acp (npm, the ACP adapter Zed uses), driven over stdio as an ACP client: editor context reaches
 * the model; `/ide`'s picker arrives as a permission request and the pick applies and is remembered; and a
 * choice made in another pi session (a TUI, here RPC) applies in an ACP session that is already running,
 * which is how ACP users choose an editor without `/ide` (pi-acp 0.0.34 never answers a prompt that carried
 * an extension command: it waits for agent_settled, which a command that starts no run never sends).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type AcpClient, startAcp } from "../helpers/acp.ts";
import { killAllEditors } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { startRpc } from "../helpers/rpc.ts";
import { envFor as baseEnvFor, fileLine, placeEditor, touch } from "../helpers/scenario.ts";

/** Every prompt gets the full block (issue 9 sends only what is new): each prompt here checks the connection. */
const envFor = (t: Parameters<typeof baseEnvFor>[0]) =>
	baseEnvFor(t, { settings: { ideContext: { linkNvim: false, sendUnchanged: true } } });

async function acpFor(t: { after(fn: () => unknown): void }, env: PiEnv): Promise<{ acp: AcpClient; session: string }> {
	const acp = startAcp(env);
	t.after(() => acp.close());
	return { acp, session: await acp.newSession(env.workDir) };
}

/** An ACP prompt that runs the model: it ends with end_turn; returns the file line of the injected block. */
async function acpPrompt(acp: AcpClient, session: string, env: PiEnv, text: string): Promise<string | null> {
	const response = await acp.request("session/prompt", { sessionId: session, prompt: [{ type: "text", text }] });
	assert.equal(response.result?.["stopReason"], "end_turn", JSON.stringify(response));
	const injected = injectedAfter(env.model.requests.at(-1), text);
	return injected[0] === undefined ? null : fileLine(injected[0]);
}

describe("pi-acp (ACP, as Zed runs pi)", { concurrency: 2 }, () => {
	after(killAllEditors);

	test("session/prompt: the editor's file reaches the model and the prompt ends", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const { acp, session } = await acpFor(t, env);
		assert.equal(await acpPrompt(acp, session, env, "What am I looking at?"), file);
	});

	test("/ide: the picker is a permission request; the pick applies and is remembered for the next session", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "a.ts") } });
		const b = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "b.ts") } });
		const first = await acpFor(t, env);
		const since = first.acp.messages.length;
		first.acp.child.stdin.write(
			`${JSON.stringify({ jsonrpc: "2.0", id: "ide", method: "session/prompt", params: { sessionId: first.session, prompt: [{ type: "text", text: "/ide" }] } })}\n`,
		);
		const ask = await first.acp.waitFor((m) => m.method === "session/request_permission", since);
		const options = (ask.params?.["options"] ?? []) as Array<{ optionId: string; name: string }>;
		const row = options.find((o) => /b\.ts/.test(o.name));
		assert.ok(row, JSON.stringify(options));
		first.acp.reply(ask.id as number, { outcome: { outcome: "selected", optionId: row.optionId } });
		await first.acp.waitFor(() => /connected to Neovim \(pid \d+/.test(first.acp.agentText(since)), since);
		assert.match(first.acp.agentText(since), new RegExp(`connected to Neovim \\(pid ${b.pid}`));
		assert.match(readFileSync(join(env.agentDir, "ide-context/choices.json"), "utf8"), new RegExp(`"pid": ${b.pid}`));
		// pi-acp 0.0.34 leaves that prompt unanswered (README, Troubleshooting): this session is done.
		await first.acp.close();

		const second = await acpFor(t, env);
		assert.equal(await acpPrompt(second.acp, second.session, env, "Which file?"), b.state.active_buffer.file);
	});

	test("a choice made in another pi session applies to an ACP session already running", async (t) => {
		const env = await envFor(t);
		const a = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "a.ts") } });
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "b.ts") } });
		const { acp, session } = await acpFor(t, env);
		assert.equal(await acpPrompt(acp, session, env, "two editors"), null, "two candidates: nothing sent");

		const rpc = await startRpc(env);
		t.after(() => rpc.close());
		const since = rpc.records.length;
		rpc.send({ id: "pick", type: "prompt", message: "/ide" });
		const select = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "select", WAIT_MS, since);
		const row = (select.options ?? []).find((o) => /a\.ts/.test(o));
		assert.ok(row, JSON.stringify(select.options));
		rpc.respond(String(select.id), { value: row });
		await rpc.waitFor((r) => r.type === "response" && r.id === "pick", WAIT_MS, since);
		await rpc.close();

		assert.equal(await acpPrompt(acp, session, env, "and now?"), a.state.active_buffer.file);
	});
});
