/**
 * Context tokens the editor context adds to a conversation (issue 9), estimated as UTF-8 bytes / 4, with real
 * pi in RPC mode and the fake model: what the model's last request holds of the injected messages. Each
 * scenario runs twice: a block with every prompt (the old behaviour, `ideContext.sendUnchanged: true`) and
 * only what the model does not have (the default).
 */
import { fileURLToPath } from "node:url";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { formatContextBlock } from "../src/context/blocks.ts";
import { decide, modelView, type ReadMessage } from "../src/context/model-view.ts";
import { type RequestMessage, repairRequest } from "../src/context/request-repair.ts";
import { SessionFactsCache } from "../src/context/session-facts.ts";
import type { EditorState } from "../src/protocol/protocol.ts";
import { killAllEditors, makeSelection } from "../test/helpers/editors.ts";
import { injectedAfter, messageText, requestMessages } from "../test/helpers/fake-llm.ts";
import { createPiEnv, type PiEnv } from "../test/helpers/pi-env.ts";
import { startRpc } from "../test/helpers/rpc.ts";
import { type PlacedEditor, placeEditor, switchBuffer, touch } from "../test/helpers/scenario.ts";
import { percentile } from "./report.ts";

const SELECTION_LINES = 200;
const SELECTION = Array.from(
	{ length: SELECTION_LINES },
	(_, i) => `  const value${i} = compute(${i}, options); // selected line ${i}`,
).join("\n");
const MARKER = "// selected line 137";

interface Scenario {
	name: string;
	prompts: number;
	/** Set up the editor before the first prompt. */
	setup(env: PiEnv): Promise<PlacedEditor>;
	/** Change the editor before prompt `i` (1-based; not called for the first). */
	between?(env: PiEnv, editor: PlacedEditor, i: number): void;
}

const SCENARIOS: Scenario[] = [
	{
		name: "editor untouched",
		prompts: 20,
		setup: (env) => placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } }),
	},
	{
		name: "cursor moving between prompts",
		prompts: 20,
		setup: (env) => placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } }),
		between: (env, editor, i) =>
			switchBuffer(env, editor, { ...editor.state.active_buffer, cursor: { line: 10 + 7 * i, column: 3 } }),
	},
	{
		name: `${SELECTION_LINES}-line selection + 5 follow-ups`,
		prompts: 6,
		setup: (env) =>
			placeEditor(env, {
				active_buffer: { file: touch(env.workDir, "src/main.ts"), selection: makeSelection(SELECTION) },
			}),
	},
];

interface Run {
	/** Injected bytes over the whole conversation. */
	bytes: number;
	/** The first prompt's block. */
	firstBytes: number;
	/** Copies of the selection text in the model's last request. */
	selectionCopies: number;
	/** Distinct cursor positions the model's last request mentions. */
	cursors: number;
}

async function runScenario(scenario: Scenario, sendUnchanged: boolean): Promise<Run> {
	const env = await createPiEnv({ settings: { ideContext: { linkNvim: false, sendUnchanged } } });
	try {
		const editor = await scenario.setup(env);
		const rpc = await startRpc(env);
		try {
			const prompts: string[] = [];
			for (let i = 1; i <= scenario.prompts; i++) {
				if (i > 1) scenario.between?.(env, editor, i);
				const prompt = `question ${i}?`;
				prompts.push(prompt);
				await rpc.prompt(prompt);
			}
			const last = env.model.requests.at(-1);
			const bytes = (texts: string[]) => texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);
			const context = requestMessages(last).map(messageText).join("\n");
			return {
				bytes: bytes(prompts.flatMap((p) => injectedAfter(last, p))),
				firstBytes: bytes(injectedAfter(last, prompts[0] as string)),
				selectionCopies: context.split(MARKER).length - 1,
				cursors: new Set(context.match(/^Cursor: line \d+/gm) ?? []).size,
			};
		} finally {
			await rpc.close();
		}
	} finally {
		await killAllEditors();
		await env.cleanup();
	}
}

const tokens = (bytes: number) => Math.round(bytes / 4);

export async function runContextTokensBench(): Promise<void> {
	console.log("\n== Context tokens added by the editor context (UTF-8 bytes / 4; real pi, fake model) ==");
	console.log(
		`${"scenario".padEnd(38)}${"prompts".padEnd(9)}${"before".padEnd(9)}${"now".padEnd(9)}${"one block".padEnd(11)}target`,
	);
	for (const scenario of SCENARIOS) {
		const before = await runScenario(scenario, true);
		const now = await runScenario(scenario, false);
		let target = "";
		if (scenario.name === "editor untouched") {
			const ok = now.bytes <= 2 * now.firstBytes;
			target = `<= 2 blocks (${tokens(2 * now.firstBytes)}): ${ok ? "met" : "MISSED"}`;
		} else if (scenario.name.includes("selection")) {
			target = `selection text sent once: before ${before.selectionCopies}x, now ${now.selectionCopies}x (${now.selectionCopies === 1 ? "met" : "MISSED"})`;
		} else {
			const ok = now.cursors === scenario.prompts;
			target = `every cursor line reaches the model: ${now.cursors} of ${scenario.prompts} (${ok ? "met" : "MISSED"})`;
		}
		console.log(
			`${scenario.name.padEnd(38)}${String(scenario.prompts).padEnd(9)}${String(tokens(before.bytes)).padEnd(9)}${String(tokens(now.bytes)).padEnd(9)}${String(tokens(now.firstBytes)).padEnd(11)}${target}`,
		);
	}
	benchDecision(500, 200);
	benchDecision(5000, 200);
	benchSessionFacts(500, 300);
	benchSessionFacts(5000, 300);
}

/**
 * What reading the session costs per model request (src/context/session-facts.ts) in a real SessionManager of
 * `entries` entries (a third of them ide-context messages): a reply appended, then the facts asked twice, as
 * context_with_system and before_provider_request do; beside it, the same facts computed whole (pi's projection
 * and the branch walk), which is what every request cost before.
 */
export function benchSessionFacts(entries: number, iterations: number): void {
	const session = SessionManager.inMemory("/tmp/bench-project");
	const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
	const reply = (i: number) =>
		({
			role: "assistant",
			content: [{ type: "text", text: `reply ${i}` }],
			api: "openai-completions",
			provider: "fake",
			model: "fake",
			usage: { ...zero, totalTokens: 0, cost: { ...zero, total: 0 } },
			stopReason: "stop",
			timestamp: i,
		}) as never;
	for (let i = 0; i < entries; i++) {
		if (i % 3 === 0) session.appendMessage({ role: "user", content: `prompt ${i}`, timestamp: i });
		else if (i % 3 === 1)
			session.appendCustomMessageEntry("ide-context", `File: a.ts\nCursor: line ${i}`, true, {
				memory: { v: 1, id: `b${i}` },
			});
		else session.appendMessage(reply(i));
	}
	const cache = new SessionFactsCache("ide-context");
	cache.facts(session);
	const carried: number[] = [];
	const whole: number[] = [];
	for (let i = 0; i < iterations; i++) {
		session.appendMessage(reply(entries + i));
		const start = performance.now();
		cache.facts(session);
		cache.facts(session);
		carried.push(performance.now() - start);
		const again = performance.now();
		new SessionFactsCache("ide-context").facts(session);
		whole.push(performance.now() - again);
	}
	console.log(
		`Session read per model request, ${entries} entries: carried forward p50 ${percentile(carried, 0.5).toFixed(3)} ms (both handlers), computed whole p50 ${percentile(whole, 0.5).toFixed(3)} ms (each handler, before)`,
	);
}

/**
 * What the decision costs per prompt in a long conversation: `messages` editor contexts already in the model's
 * view (a full block, then cursor updates), then modelView + decide for the next prompt, and the request-time
 * check (repairRequest: the request, a prompt and its editor context each, against the session's messages).
 */
export function benchDecision(messages: number, iterations: number): void {
	const now = 1_800_000_000;
	const state = (line: number): EditorState => ({
		pid: 4242,
		cwd: "/home/u/proj",
		timestamp: now,
		app: "nvim",
		active_buffer: {
			file: "/home/u/proj/src/main.ts",
			name: "main.ts",
			language: "typescript",
			cursor: { line, column: 1 },
			selection: { start: { line: 1, column: 1 }, end: { line: 200, column: 1 }, text: SELECTION, selected_at: now },
			modified: false,
			lines_total: 400,
		},
	});
	const block = (line: number) => formatContextBlock(state(line), "/home/u/proj/src/main.ts", { now }) ?? undefined;
	const history: ReadMessage[] = [];
	for (let i = 0; i < messages; i++) {
		const b = block(i + 1);
		if (!b) throw new Error("no block");
		const d = decide(b, modelView(history), { always: false, id: `m${i}` });
		if (d.kind !== "none") history.push({ details: d.details, content: d.text });
	}
	const request: RequestMessage[] = [
		{ kind: "system", details: undefined, content: "" },
		...history.flatMap((m): RequestMessage[] => [
			{ kind: "user", details: undefined, content: "question" },
			// pi hands each request to the extensions as a structured clone of the session's messages.
			{ kind: "ide-context", ...structuredClone(m) },
		]),
	];
	const next = block(messages + 1);
	if (!next) throw new Error("no block");
	const samples: number[] = [];
	const checks: number[] = [];
	for (let i = 0; i < iterations; i++) {
		const start = performance.now();
		decide(next, modelView(history), { always: false, id: "next" });
		samples.push(performance.now() - start);
		const check = performance.now();
		if (repairRequest(request, history)) throw new Error("an intact request was repaired");
		checks.push(performance.now() - check);
	}
	const both = samples.map((s, i) => s + (checks[i] ?? 0));
	console.log(
		`Decision cost with ${history.length} editor contexts in view (200-line selection): decide p50 ${percentile(samples, 0.5).toFixed(3)} ms, p99 ${percentile(samples, 0.99).toFixed(3)} ms; request check p50 ${percentile(checks, 0.5).toFixed(3)} ms; both p50 ${percentile(both, 0.5).toFixed(3)} ms (target <= 0.2 ms, not growing with the session)`,
	);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await runContextTokensBench();
}
