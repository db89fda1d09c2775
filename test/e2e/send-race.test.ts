/**
 * v0.5 send to pi racing with pi's runs, seeded: real pi in RPC mode, a sequence of sends at once while pi is idle
 * and while a run is under way (the model holding its reply), drafts, and `/new` (RPC new_session), in random
 * order. The oracle, independent of pi-ide-context's code: the session's history of sends at once, in the order
 * they were written, each once (a follow-up after the run under way, never lost, never taken again, nothing of
 * an earlier session after /new), and no draft ever sent. After each step the model's latest request must
 * carry exactly that history. The seed is printed on failure.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { userTexts } from "../helpers/fake-llm.ts";
import { GLYPH_DISCONNECTED, STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { type RpcPi, startRpc } from "../helpers/rpc.ts";
import { envFor, type PlacedEditor, placeEditor, touch } from "../helpers/scenario.ts";
import { seededInts } from "../helpers/seeded.ts";
import { piPids, readPiMessage, writeSend } from "../helpers/send.ts";

const SEEDS = [1, 2, 3, 4, 5, 6];
const STEPS = 10;
type Step = "idle-now" | "busy-now" | "draft" | "new";
const KINDS: Step[] = ["idle-now", "busy-now", "draft", "new"];

/** The sends (`SEND-<n>`) in the user messages of the model's latest request, in order. */
function sendsInLastRequest(env: PiEnv): string[] {
	const texts = userTexts(env.model.requests.at(-1));
	return texts.flatMap((t) => [...t.matchAll(/^(SEND-\d+|DRAFT-\d+)$/gm)].map((m) => m[1] ?? ""));
}

async function idle(rpc: RpcPi): Promise<void> {
	await pollUntil(
		async () => {
			const state = await rpc.command({ type: "get_state" });
			const data = state["data"] as { isStreaming: boolean; pendingMessageCount: number };
			return !data.isStreaming && data.pendingMessageCount === 0 ? true : undefined;
		},
		"pi idle",
		WAIT_MS,
	);
}

describe("send to pi racing with pi's runs (seeded)", { concurrency: 1 }, () => {
	test.after(killAllEditors);
	for (const seed of SEEDS)
		test(`seed ${seed}: every send at once reaches the model once, in order; no draft; nothing across /new`, async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			const file = touch(env.workDir, "src/main.ts", "const a = 1;\n");
			const editor: PlacedEditor = await placeEditor(env, { active_buffer: { file } });
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			await rpc.waitFor(
				(r) => r.method === "setStatus" && r.statusKey === STATUS_KEY && r.statusText !== GLYPH_DISCONNECTED,
			);
			const piPid = await pollUntil(() => piPids(env.stateDir)[0], "pi's message");
			const int = seededInts(seed);
			const steps = Array.from({ length: STEPS }, () => KINDS[int(KINDS.length)] as Step);
			let history: string[] = [];
			let n = 0;
			let runs = 0;
			const fate = (id: string) =>
				pollUntil(() => {
					const sent = readPiMessage(env.stateDir, piPid)?.sent;
					return sent?.id === id ? sent.fate : undefined;
				}, `pi's answer to ${id}`);
			const send = (mode: "now" | "draft", tag: string) =>
				writeSend(env.stateDir, {
					editorPid: editor.pid,
					piPid,
					id: tag,
					mode,
					prompt: tag,
					item: { kind: "line", file, text: "const a = 1;" },
				});
			const reached = (tag: string) =>
				pollUntil(
					() => (sendsInLastRequest(env).includes(tag) ? true : undefined),
					`${tag} reaching the model`,
					WAIT_MS,
				);
			const where = () => `seed ${seed}, steps ${steps.join(",")}`;
			// The last send at once of the sequence, written after the last step: once it reached the model, any
			// send taken again would have been sent before it.
			for (const step of [...steps, "idle-now" as const]) {
				n += 1;
				if (step === "idle-now") {
					const tag = `SEND-${n}`;
					send("now", tag);
					assert.equal(await fate(tag), "prompt", where());
					history.push(tag);
					await reached(tag);
					await idle(rpc);
				} else if (step === "busy-now") {
					let release: () => void = () => {};
					const held = new Promise<void>((resolve) => {
						release = resolve;
					});
					const first = env.model.requests.length;
					env.model.beforeReply = (_r, index) => (index === first ? held : undefined);
					runs += 1;
					rpc.send({ id: `run-${runs}`, type: "prompt", message: `RUN-${runs}` });
					await pollUntil(() => (env.model.requests.length > first ? true : undefined), "the run under way");
					const tag = `SEND-${n}`;
					send("now", tag);
					assert.equal(await fate(tag), "follow-up", where());
					assert.equal(env.model.requests.length, first + 1, `not interrupted: ${where()}`);
					history.push(tag);
					release();
					await reached(tag);
					await idle(rpc);
					env.model.beforeReply = undefined;
				} else if (step === "draft") {
					const tag = `DRAFT-${n}`;
					send("draft", tag);
					assert.equal(await fate(tag), "draft", where());
				} else {
					assert.equal((await rpc.command({ type: "new_session" })).success, true);
					history = [];
				}
				if (step !== "draft" && step !== "new")
					assert.deepEqual(sendsInLastRequest(env), history, `the model's latest request: ${where()}`);
			}
		});
});
