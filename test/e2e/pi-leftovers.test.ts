/**
 * A killed pi's files do not stay forever (issue 22, item 14): pi SIGKILLed mid-run leaves `pi-<pid>.json` and
 * `pi-<pid>.review.json` (with the baselines of the files it edited) in the state dir; the next pi's scan
 * removes them, by the rule of a gone editor's file. A live pi's files stay.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { killAllEditors, makeState, spawnLiveEditor, writeStateFile } from "../helpers/editors.ts";
import { toolsThenReply } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, PROMPT, promptOnce, touch } from "../helpers/scenario.ts";

after(killAllEditors);

const piFiles = (dir: string) => readdirSync(dir).filter((n) => n.startsWith("pi-"));

describe("a killed pi's files", () => {
	it("pi SIGKILLed after an edit leaves its message and change set; the next pi removes them", async (t) => {
		const env = await envFor(t);
		const editor = await spawnLiveEditor();
		const file = touch(env.workDir, "src/app.ts", "export const secret = 1;\n");
		writeStateFile(env.stateDir, makeState({ pid: editor.pid, cwd: env.workDir }));
		let killed: number | undefined;
		env.model.respond = toolsThenReply([
			{ name: "write", arguments: { path: file, content: "export const x = 2;\n" } },
		]);
		// After the tool turn, before the answer: pi has published its change set; kill it there, as a crash would.
		env.model.beforeReply = async (_request, index) => {
			if (index !== 1) return;
			const names = await pollUntil(
				() => {
					const found = piFiles(env.stateDir);
					return found.some((n) => n.endsWith(".review.json")) ? found : undefined;
				},
				() => `pi's files: ${piFiles(env.stateDir).join(", ")}`,
			);
			killed = Number(/^pi-(\d+)\./.exec(names[0] ?? "")?.[1]);
			process.kill(killed, "SIGKILL");
		};
		const crashed = await runPrint(env, [PROMPT]);
		assert.equal(crashed.signal, "SIGKILL", `pi was killed: ${crashed.stderr}`);
		const left = [`pi-${killed}.json`, `pi-${killed}.review.json`];
		for (const name of left) assert.ok(existsSync(join(env.stateDir, name)), `${name} stays after SIGKILL`);

		env.model.respond = undefined;
		env.model.beforeReply = undefined;
		env.model.requests.length = 0;
		await promptOnce(env);
		for (const name of left) assert.equal(existsSync(join(env.stateDir, name)), false, `${name} removed`);
		assert.ok(existsSync(join(env.stateDir, `${editor.pid}.json`)), "the live editor's file stays");
	});
});
