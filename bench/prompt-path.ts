/**
 * What pi itself runs per prompt and per model request (issue 22), measured whole: the extension (index.ts) loaded
 * by pi's own loader into a real pi session (pi's SDK, the fake model of the e2e tests), then pi's extension runner
 * calling the `before_agent_start` handlers once per prompt, and the `context` hooks (context_with_system) and
 * `before_provider_request` once per model request, with the arguments pi passed them in the last of 20 real
 * prompts; beside each, the same calls in a pi session without the extension (pi's own part). Beside it
 * the floor: readdir of the state dir, then read + JSON.parse + kill(pid, 0) of every file. Issue 15's targets
 * on it: the prompt's fixed cost with one editor (p50 - floor p50) <= 0.1 ms, 10 editors <= 1.5x the floor.
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/prompt-path.ts` (PROMPT_BENCH_MODES=moved for
 * one mode of `unchanged,moved,block`).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionRunner,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";
import { StateDirScanner } from "../src/discovery/scan.ts";
import { mapEditorState, type PathMapping } from "../src/protocol/path-map.ts";
import { startFakeModel } from "../test/helpers/fake-llm.ts";
import { modelsJson, REPO } from "../test/helpers/pi-env.ts";
import { createFixture, destroyFixture, editorState, type Fixture, writeAtomically } from "./pi.ts";
import { header, percentile, row } from "./report.ts";

const ITERATIONS = 3000;
/** Real prompts before the timing: the hooks then see a conversation of that length (its last request replayed). */
const SESSION_PROMPTS = 20;

/** The arguments pi passed to the runner's per-prompt and per-request hooks in one real prompt. */
interface Captured {
	beforeAgentStart?: Parameters<ExtensionRunner["emitBeforeAgentStart"]>;
	context?: Parameters<ExtensionRunner["emitContext"]>;
	providerRequest?: Parameters<ExtensionRunner["emitBeforeProviderRequest"]>;
}

/** The floor: what any look at the editors costs (readdir, then read + JSON.parse + kill(pid, 0) of each file). */
function floor(stateDir: string): void {
	for (const name of readdirSync(stateDir)) {
		const state = JSON.parse(readFileSync(join(stateDir, name), "utf8")) as { pid: number };
		try {
			process.kill(state.pid, 0);
		} catch {
			// A dead pid counts the same.
		}
	}
}

/** `fn`'s times; `between` runs before each call, untimed. */
async function time(fn: () => unknown, iterations: number, between?: () => Promise<void>): Promise<number[]> {
	for (let i = 0; i < Math.min(200, iterations); i++) await fn();
	const samples: number[] = [];
	for (let i = 0; i < iterations; i++) {
		await between?.();
		const start = process.hrtime.bigint();
		await fn();
		samples.push(Number(process.hrtime.bigint() - start) / 1e6);
	}
	return samples;
}

interface Figures {
	prompt: number[];
	context: number[];
	request: number[];
	floor: number[];
	/** The same calls in a pi session without the extension: what pi's runner costs by itself. */
	alone: { prompt: number[]; context: number[]; request: number[] };
}

/**
 * One pi session over the fixture's state files: the hooks timed through pi's runner after the real prompts, and
 * the floor. In mode `unchanged` the prompts after them send nothing (the model has the editor's context);
 * `moved`: the editor in the project moved its cursor before each (its state file rewritten, the watcher's
 * rescan let run, untimed): an update goes out; `block`: a full block each time (ideContext.sendUnchanged: the
 * injection path whole, its selection entry added to the session each time, as pi does).
 */
type Mode = "unchanged" | "moved" | "block";

async function measure(fixture: Fixture, mode: Mode): Promise<Figures> {
	const sendUnchanged = mode === "block";
	const model = await startFakeModel();
	const env = { ...process.env };
	try {
		// What index.ts reads at session_start: the state dir (from XDG_RUNTIME_DIR), pi's agent dir, the opt-outs.
		Object.assign(process.env, {
			XDG_RUNTIME_DIR: join(fixture.root, "run"),
			PI_CODING_AGENT_DIR: fixture.agentDir,
			PI_IDE_NO_NVIM_LINK: "1",
			PI_IDE_NO_VIM_LINK: "1",
			PI_OFFLINE: "1",
		});
		writeFileSync(join(fixture.agentDir, "models.json"), JSON.stringify(modelsJson(model.baseUrl)));
		// The file open in the editor in the project exists, as an editor's file does (its real path is looked up).
		writeFileSync(join(fixture.project, "src", "file0.ts"), "export {};\n");
		const settings = {
			defaultProvider: "fake",
			defaultModel: "fake-model",
			retry: { enabled: false },
			ideContext: { sendUnchanged },
		};
		/** A pi session in the project, with this extension loaded by pi's loader, or with no extension at all. */
		const open = async (extension: boolean) => {
			const settingsManager = SettingsManager.inMemory(settings);
			const resourceLoader = new DefaultResourceLoader({
				cwd: fixture.project,
				agentDir: fixture.agentDir,
				settingsManager,
				additionalExtensionPaths: extension ? [join(REPO, "index.ts")] : [],
				noExtensions: !extension,
				noSkills: true,
				noPromptTemplates: true,
				noThemes: true,
				noContextFiles: true,
			});
			await resourceLoader.reload();
			const { session } = await createAgentSession({
				cwd: fixture.project,
				agentDir: fixture.agentDir,
				resourceLoader,
				settingsManager,
				sessionManager: SessionManager.inMemory(fixture.project),
				noTools: "all",
			});
			await session.bindExtensions({});
			return session;
		};
		const session = await open(true);
		try {
			const runner = session.extensionRunner;
			const captured: Captured = {};
			const capture = <K extends keyof Captured>(key: K, name: keyof ExtensionRunner) => {
				const original = (runner[name] as (...args: unknown[]) => unknown).bind(runner);
				Object.assign(runner, {
					[name]: (...args: unknown[]) => {
						captured[key] = args as NonNullable<Captured[K]>;
						return original(...args);
					},
				});
			};
			capture("beforeAgentStart", "emitBeforeAgentStart");
			capture("context", "emitContext");
			capture("providerRequest", "emitBeforeProviderRequest");
			// Let the controller's first scan (started, not awaited, by session_start) finish.
			await new Promise((resolve) => setTimeout(resolve, 200));
			for (let i = 0; i < SESSION_PROMPTS; i++) await session.prompt(`What is under my cursor? (${i})`);
			const { beforeAgentStart, context, providerRequest } = captured;
			if (!beforeAgentStart || !context || !providerRequest) throw new Error("pi did not call every hook");
			const sent = JSON.stringify(model.requests.at(-1)?.body ?? "");
			if (!sent.includes("The user's editor")) throw new Error("the first prompt sent no editor context");
			const [editor] = fixture.children;
			let line = 1;
			const move = async () => {
				const state = editorState(editor?.pid ?? 0, fixture.project, 0);
				state.active_buffer.cursor = { line: 1 + (line++ % 150), column: 1 };
				writeAtomically(fixture.stateDir, state);
				await new Promise((resolve) => setTimeout(resolve, 20));
			};
			if (mode === "moved") await move();
			const reply = await runner.emitBeforeAgentStart(...beforeAgentStart);
			const said = (reply?.messages ?? []).map((m) => JSON.stringify(m.content)).join("");
			const expected = { unchanged: "", moved: "Editor update", block: "The user's editor" }[mode];
			if (expected ? !said.includes(expected) : said !== "") throw new Error(`${mode}: the next prompt sent ${said}`);
			// Past the racy window of the state files' writes (src/protocol/file-version.ts): a settled prompt.
			if (mode !== "moved") await new Promise((resolve) => setTimeout(resolve, 3000));
			const figures: Figures = {
				prompt: await time(
					() => runner.emitBeforeAgentStart(...beforeAgentStart),
					mode === "moved" ? 400 : ITERATIONS,
					mode === "moved" ? move : undefined,
				),
				context: await time(() => runner.emitContext(...context), ITERATIONS),
				request: await time(() => runner.emitBeforeProviderRequest(...providerRequest), ITERATIONS),
				// Moved: the floor too reads a file just written, after the same pause (a pause alone makes the next
				// call slower: cold caches), so the two compare.
				floor: await time(
					() => floor(fixture.stateDir),
					mode === "moved" ? 400 : ITERATIONS,
					mode === "moved" ? move : undefined,
				),
				alone: { prompt: [], context: [], request: [] },
			};
			// pi's own part: the same calls with the same arguments in a session without the extension.
			const bare = await open(false);
			try {
				const alone = bare.extensionRunner;
				figures.alone = {
					prompt: await time(() => alone.emitBeforeAgentStart(...beforeAgentStart), ITERATIONS),
					context: await time(() => alone.emitContext(...context), ITERATIONS),
					request: await time(() => alone.emitBeforeProviderRequest(...providerRequest), ITERATIONS),
				};
			} finally {
				bare.dispose();
			}
			return figures;
		} finally {
			session.dispose();
		}
	} finally {
		for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
		Object.assign(process.env, env);
		await model.close();
	}
}

export async function runPromptPathBench(): Promise<void> {
	console.log("\nPer prompt and per model request, the whole path pi runs (index.ts through pi's loader and runner)");
	console.log(
		"  unchanged: the editor as the model last saw it (nothing sent); moved: its cursor moved since (an update;",
	);
	console.log(
		"  the file written just before: read again); block: a full block with every prompt (ideContext.sendUnchanged)",
	);
	console.log("  floor: readdir + read + JSON.parse + kill(pid, 0) of every state file");
	header();
	const p50 = (samples: number[]) => percentile(samples, 0.5);
	const ms = (value: number) => `${value.toFixed(3)} ms`;
	for (const mode of (process.env["PROMPT_BENCH_MODES"]?.split(",") ?? ["unchanged", "moved", "block"]) as Mode[]) {
		const figures = new Map<number, Figures>();
		for (const live of [1, 10]) {
			const fixture = createFixture(live, 0);
			mkdirSync(join(fixture.root, "run"), { recursive: true });
			try {
				figures.set(live, await measure(fixture, mode));
			} finally {
				destroyFixture(fixture);
			}
		}
		for (const [live, f] of figures) {
			const editors = `${live} editor${live > 1 ? "s" : ""}, ${mode}`;
			const pair = (samples: number[], alone: number[]) => `${p50(samples).toFixed(3)} / ${ms(p50(alone))}`;
			row(`${editors}: before_agent_start, p50 with / pi alone`, pair(f.prompt, f.alone.prompt), "(info)", true);
			row(`${editors}: context hooks, p50 with / pi alone`, pair(f.context, f.alone.context), "(info)", true);
			row(`${editors}: before_provider_request, the same`, pair(f.request, f.alone.request), "(info)", true);
			row(`${editors}: floor, p50`, ms(p50(f.floor)), "(info)", true);
		}
		const one = figures.get(1);
		const ten = figures.get(10);
		if (one && ten) {
			const fixed = p50(one.prompt) - p50(one.floor);
			row(`${mode}: fixed cost, 1 editor (prompt p50 - floor p50)`, ms(fixed), "<= 0.1 ms", fixed <= 0.1);
			const ratio = p50(ten.prompt) / p50(ten.floor);
			row(`${mode}: 10 editors, prompt p50 / floor p50`, `${ratio.toFixed(2)}x`, "<= 1.5x", ratio <= 1.5);
			const added = p50(one.context) + p50(one.request) - p50(one.alone.context) - p50(one.alone.request);
			row(`${mode}: added per model request, 1 editor (p50 - pi alone)`, ms(added), "<= 0.1 ms", added <= 0.1);
		}
	}
}

/**
 * pi in a sandbox (issue 23): what the path mapping adds to a prompt. Editors' states are mapped where the scanner
 * reads them (src/discovery/scan.ts), only when a file is read anew: a prompt after an editor moved pays one
 * mapping of that state; a prompt with every editor unchanged reuses the mapped states. Timed on the scanner over
 * the fixture's 10 editors, with the mappings a sandbox has and with none.
 */
export async function runPathMappingBench(): Promise<void> {
	console.log("\npi in a sandbox: the path mapping's cost per prompt (scanner over 10 editors, 1 moved or none)");
	header();
	const fixture = createFixture(10, 0);
	try {
		const paths: PathMapping[] = [
			{ editor: fixture.project, pi: "/workspace/project", from: "mount" },
			{ editor: join(fixture.root, "other1"), pi: "/workspace/other1", from: "setting" },
		];
		const uid = process.getuid?.() ?? -1;
		const mapped = new StateDirScanner(fixture.stateDir, uid, { paths });
		const plain = new StateDirScanner(fixture.stateDir, uid);
		const [editor] = fixture.children;
		let line = 1;
		const move = async () => {
			const state = editorState(editor?.pid ?? 0, fixture.project, 0);
			state.active_buffer.cursor = { line: 1 + (line++ % 150), column: 1 };
			writeAtomically(fixture.stateDir, state);
			await new Promise((resolve) => setTimeout(resolve, 5));
		};
		const p50 = (samples: number[]) => percentile(samples, 0.5);
		const ms = (value: number) => `${value.toFixed(4)} ms`;
		const state = editorState(1, fixture.project, 0);
		const one = await time(() => mapEditorState(state, paths), ITERATIONS);
		row("mapping one editor's state (read anew), p50", ms(p50(one)), "<= 0.01 ms", p50(one) <= 0.01);
		// Alternated, sample by sample: the two see the same machine state (cold caches after the pause alike).
		const movedWith: number[] = [];
		const movedWithout: number[] = [];
		for (let i = 0; i < 400; i++)
			for (const [scanner, samples] of [
				[mapped, movedWith],
				[plain, movedWithout],
			] as const) {
				await move();
				const start = process.hrtime.bigint();
				scanner.scan();
				samples.push(Number(process.hrtime.bigint() - start) / 1e6);
			}
		row(
			"1 of 10 editors moved: scan p50 mapped / unmapped",
			`${p50(movedWith).toFixed(4)} / ${ms(p50(movedWithout))}`,
			"(info)",
			true,
		);
		await new Promise((resolve) => setTimeout(resolve, 3000));
		const sameWith = await time(() => mapped.scan(), ITERATIONS);
		const sameWithout = await time(() => plain.scan(), ITERATIONS);
		row(
			"10 editors unchanged: scan p50 mapped / unmapped",
			`${p50(sameWith).toFixed(4)} / ${ms(p50(sameWithout))}`,
			"(info)",
			true,
		);
	} finally {
		destroyFixture(fixture);
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	if (process.env["PROMPT_BENCH_PATHS_ONLY"] !== "1") await runPromptPathBench();
	await runPathMappingBench();
}
