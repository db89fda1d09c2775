/**
 * Smoke test of the test harness itself, against test/fixtures/probe-extension.ts rather than the product:
 * print-mode round trip through the fake model, a footer status under tmux, and an RPC select dialog.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors, makeState, spawnLiveEditor, writeStateFile } from "../helpers/editors.ts";
import { injectedAfter, lastUserTexts } from "../helpers/fake-llm.ts";
import { createPiEnv, piArgs, REPO, runPrint } from "../helpers/pi-env.ts";
import { startRpc } from "../helpers/rpc.ts";
import { startTui } from "../helpers/tmux.ts";

const PROBE = join(REPO, "test/fixtures/probe-extension.ts");

describe("harness (probe extension)", { concurrency: 3 }, () => {
	after(killAllEditors);

	test("print mode: the model receives the prompt and the probe's injected message", async (t) => {
		const env = await createPiEnv();
		t.after(env.cleanup);
		const editor = await spawnLiveEditor();
		writeStateFile(env.stateDir, makeState({ pid: editor.pid, cwd: env.workDir }));
		const result = await runPrint(env, ["hello probe"], [], { extension: PROBE });
		assert.equal(result.code, 0, result.stderr);
		assert.equal(result.stdout.trim(), "FAKE-REPLY-OK");
		assert.equal(env.model.requests.length, 1);
		assert.deepEqual(lastUserTexts(env.model), ["hello probe", `PROBE-BLOCK files=${editor.pid}.json`]);
		assert.deepEqual(injectedAfter(env.model.requests[0], "hello probe"), [`PROBE-BLOCK files=${editor.pid}.json`]);
	});

	test("tmux: the probe's status is the footer's last line, and a prompt round-trips", async (t) => {
		const env = await createPiEnv();
		t.after(env.cleanup);
		const tui = await startTui(env, { args: piArgs(PROBE, ["--no-session"]) });
		t.after(tui.close);
		await tui.waitFor((pane) => pane.includes("PROBE-PILL"));
		assert.equal((await tui.lastNonBlankLine()).trim(), "PROBE-PILL");
		await tui.sendText("hi there");
		await tui.sendKey("Enter");
		await tui.waitFor(/FAKE-REPLY-OK/);
		await tui.waitFor(/PROBE-BLOCK files=empty/);
		assert.equal(env.model.requests.length, 1);
	});

	test("rpc: setStatus arrives, a select dialog is answered, the notify carries the pick", async (t) => {
		const env = await createPiEnv();
		t.after(env.cleanup);
		const rpc = await startRpc(env, { extension: PROBE });
		t.after(() => rpc.close());
		await rpc.waitFor(
			(r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusText === "PROBE-PILL",
		);
		const since = rpc.records.length;
		rpc.send({ id: "pick-1", type: "prompt", message: "/pick" });
		const select = await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "select", 15_000, since);
		assert.deepEqual(select.options, ["alpha", "beta"]);
		rpc.respond(String(select.id), { value: "beta" });
		await rpc.waitFor((r) => r.method === "notify" && r.message === "PICKED:beta", 15_000, since);
		const { since: turn } = await rpc.prompt("hello rpc");
		assert.ok(rpc.records.slice(turn).some((r) => r.type === "agent_settled"));
		assert.deepEqual(injectedAfter(env.model.requests.at(-1), "hello rpc"), ["PROBE-BLOCK files=empty"]);
		assert.equal(await rpc.close(), 0);
	});
});
