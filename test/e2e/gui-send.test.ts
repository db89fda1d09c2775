/**
 * v0.5 send to pi from the JetBrains client (its headless driver: the core the plugin's actions run) and the VS Code
 * extension (its own code in this process against the fake VS Code API, the commands as registered) to real pi in
 * RPC mode: what the kit, whose "pi" is a stand-in, does not cover. A selection sent as a draft lands in pi's input
 * (the set_editor_text request) and is not sent; the line at once reaches the model; an excluded file is refused
 * by pi and the editor says so in one line, and nothing of it reaches pi. Real VS Code is the kit's code-server run.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { userTexts } from "../helpers/fake-llm.ts";
import { startJetBrainsDriver } from "../helpers/jetbrains.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { type RpcRecord, startRpc } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";
import "../helpers/fake-vscode-hook.ts";

const vscode = await import("../helpers/fake-vscode.ts");
const extension = await import("../../editors/vscode/src/extension.ts");

const isDraft = (r: RpcRecord) => r.type === "extension_ui_request" && r.method === "set_editor_text";
const SOURCE = "const a = 1;\nconst b = 2;\nconst c = 3;\n";
const DRAFT = "why these?\n\nSelection from src/main.ts, lines 2-3:\n```typescript\nconst b = 2;\nconst c = 3;\n```";
const NOW = "explain\n\nLine from src/main.ts, line 1:\n```typescript\nconst a = 1;\n```";

async function project(t: Parameters<typeof envFor>[0]): Promise<{ env: PiEnv; file: string; secret: string }> {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	const file = touch(env.workDir, "src/main.ts", SOURCE);
	const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
	return { env, file, secret };
}

/** The user's steps in one editor. */
interface Editor {
	/** Everything the editor told the user so far, one entry per line. */
	said(): Promise<string[]>;
	/** Lines `first`..`last` selected (none: the cursor on `first`), then the command, at once when `now`. */
	send(file: string, first: number, last: number | undefined, now: boolean, prompt: string): Promise<void>;
}

async function run(env: PiEnv, file: string, secret: string, editor: Editor): Promise<void> {
	const newLine = async (before: number, what: RegExp) =>
		pollUntil(async () => {
			const added = (await editor.said()).slice(before);
			return added.some((l) => what.test(l)) ? added : undefined;
		}, `a line ${what}`);

	let before = (await editor.said()).length;
	await editor.send(file, 1, undefined, false, "hello");
	await newLine(before, /no pi is connected to this editor: nothing sent/);

	const rpc = await startRpc(env);
	try {
		// pi names the editor in its message: the next send goes to it (retried until pi has written its message).
		let since = rpc.records.length;
		await pollUntil(
			async () => {
				const at = (await editor.said()).length;
				await editor.send(file, 2, 3, false, "why these?");
				const added = (await editor.said()).slice(at);
				return added.some((l) => /no pi is connected/.test(l)) ? undefined : true;
			},
			"pi naming the editor",
			WAIT_MS,
		);
		const draft = await rpc.waitFor(isDraft, WAIT_MS, since);
		assert.equal(draft["text"], DRAFT);
		assert.equal(env.model.requests.length, 0, "a draft is not sent");

		before = (await editor.said()).length;
		await editor.send(file, 1, undefined, true, "explain");
		await pollUntil(
			() => (env.model.requests.some((r) => userTexts(r).includes(NOW)) ? true : undefined),
			"the model receiving the send",
			WAIT_MS,
		);
		await newLine(before, /line sent to pi as a prompt/);

		since = rpc.records.length;
		before = (await editor.said()).length;
		await editor.send(secret, 1, undefined, false, "what is this?");
		const refused = await newLine(before, /not sent: the file is excluded by pi's ignore rules/);
		assert.equal(refused.filter((l) => /excluded/.test(l)).length, 1, refused.join("\n"));
		assert.equal(rpc.records.slice(since).filter(isDraft).length, 0);
		for (const request of env.model.requests) assert.ok(!JSON.stringify(request).includes("hunter2"));
	} finally {
		await rpc.close();
	}
}

describe("send to pi from JetBrains and VS Code, real pi in RPC mode", () => {
	it("jetbrains (headless driver): a selection as a draft, the line at once, no pi and an excluded file in one line", async (t) => {
		const { env, file, secret } = await project(t);
		const driver = await startJetBrainsDriver({ project: env.workDir, env: env.env, file });
		t.after(() => driver.kill());
		const cmd = async (c: Record<string, unknown>) => {
			const reply = await driver.command(c);
			assert.equal(reply.ok, true, JSON.stringify(reply));
			return reply;
		};
		await run(env, file, secret, {
			said: async () => (await cmd({ cmd: "messages" }))["messages"] as string[],
			send: async (path, first, last, now, prompt) => {
				await cmd({ cmd: "open", file: path });
				if (last === undefined) await cmd({ cmd: "cursor", line: first, column: 1 });
				else await cmd({ cmd: "select", start: { line: first, column: 1 }, end: { line: last, column: 12 } });
				await cmd({ cmd: "send", mode: now ? "now" : "draft", prompt });
			},
		});
	});

	it("vscode (extension code, fake API): the same through piIdeContext.send and piIdeContext.sendNow", async (t) => {
		const { env, file, secret } = await project(t);
		const bench = new vscode.Workbench(env.workDir);
		vscode.useWorkbench(bench);
		const context = vscode.makeContext();
		const saved = process.env["XDG_RUNTIME_DIR"];
		process.env["XDG_RUNTIME_DIR"] = env.runtimeDir;
		try {
			extension.activate(context as never);
		} finally {
			if (saved === undefined) delete process.env["XDG_RUNTIME_DIR"];
			else process.env["XDG_RUNTIME_DIR"] = saved;
		}
		t.after(() => {
			extension.deactivate();
			for (const subscription of context.subscriptions) subscription.dispose();
			bench.dispose();
			vscode.useWorkbench(undefined);
		});
		bench.open(file, "typescript");
		await run(env, file, secret, {
			said: async () => [...bench.shown],
			send: async (path, first, last, now, prompt) => {
				if (bench.activeTextEditor?.document.fileName !== path) bench.open(path);
				bench.select({ line: first - 1, character: 0 }, { line: last ?? first - 1, character: 0 });
				await vscode.commands.executeCommand(now ? "piIdeContext.sendNow" : "piIdeContext.send", prompt);
			},
		});
	});
});
