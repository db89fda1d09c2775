/**
 * Benchmarks of the pi side: what one prompt costs (scan + validate + liveness +
 * tiers + rules + format), how fast the pill follows a state-file write, and how
 * often the extension wakes up while idle. Uses real files, real processes for
 * live editors, and the real chokidar watcher; only the UI is a recorder.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ControllerOptions, IdeController } from "../src/controller.ts";
import { ChoiceStore } from "../src/discovery/choice-store.ts";
import { findHostEditor, type HostHints } from "../src/discovery/host-editor.ts";
import { ProcessClock, readAncestry } from "../src/discovery/proc-info.ts";
import { RACY_WINDOW_MS } from "../src/protocol/file-version.ts";
import { INITIAL_PID_NAMESPACE, type Liveness, probePid } from "../src/protocol/liveness.ts";
import type { EditorState } from "../src/protocol/protocol.ts";
import { readOwnPidNamespace } from "../src/protocol/state-dir.ts";
import { DEFAULT_SETTINGS } from "../src/ui/settings.ts";
import { header, percentile, row } from "./report.ts";

interface Figures {
	p50: number;
	p99: number;
}

function percentiles(samples: number[]): Figures {
	return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

function ms(value: number): string {
	return value.toFixed(3);
}

export function editorState(pid: number, cwd: string, i: number): EditorState {
	const now = Date.now() / 1000;
	return {
		pid,
		cwd,
		timestamp: now,
		app: "nvim",
		argv: [`file${i}.ts`],
		active_buffer: {
			file: join(cwd, "src", `file${i}.ts`),
			name: `file${i}.ts`,
			language: "typescript",
			cursor: { line: 42, column: 7 },
			selection: {
				start: { line: 40, column: 1 },
				end: { line: 45, column: 12 },
				text: Array.from({ length: 6 }, (_, l) => `  const value${l} = compute(${l}); // line ${40 + l}`).join("\n"),
				selected_at: now,
			},
			modified: false,
			lines_total: 200,
		},
	};
}

export function writeAtomically(dir: string, state: EditorState): void {
	const path = join(dir, `${state.pid}.json`);
	writeFileSync(`${path}.tmp`, JSON.stringify(state), { mode: 0o600 });
	renameSync(`${path}.tmp`, path);
}

export interface Fixture {
	root: string;
	stateDir: string;
	project: string;
	agentDir: string;
	children: ReturnType<typeof spawn>[];
}

export function createFixture(live: number, dead: number): Fixture {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-bench-"));
	const stateDir = join(root, "run", "pi-ide");
	const project = join(root, "project");
	const agentDir = join(root, "agent");
	mkdirSync(stateDir, { recursive: true, mode: 0o700 });
	mkdirSync(join(project, "src"), { recursive: true });
	mkdirSync(agentDir, { recursive: true });
	writeFileSync(join(agentDir, "ide-context.ignore"), "*.env\nsecrets/\n");
	const children: ReturnType<typeof spawn>[] = [];
	for (let i = 0; i < live; i++) {
		const child = spawn("sleep", ["600"], { stdio: "ignore" });
		children.push(child);
		// Editor 0 works in the project; the others elsewhere, so exactly one is in the best tier.
		writeAtomically(stateDir, editorState(child.pid ?? 0, i === 0 ? project : join(root, `other${i}`), i));
	}
	const pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8"));
	for (let i = 0; i < dead; i++) writeAtomically(stateDir, editorState(pidMax + 1 + i, join(root, `gone${i}`), i));
	return { root, stateDir, project, agentDir, children };
}

export function destroyFixture(fixture: Fixture): void {
	for (const child of fixture.children) child.kill("SIGKILL");
	rmSync(fixture.root, { recursive: true, force: true });
}

/** What pi's session_start passes for host detection, pid-reuse checks and remembered choices. */
function productOptions(fixture: Fixture): Partial<ControllerOptions> {
	return {
		// No editor is pi's host here (the worst case: every hint is looked up, none matches).
		hostHints: { envPid: 1, ancestors: readAncestry() },
		startClock: new ProcessClock(),
		choiceStore: new ChoiceStore(fixture.agentDir, process.getuid?.() ?? 0),
	};
}

function controllerFor(
	fixture: Fixture,
	probe?: (pid: number) => Liveness,
	extra: Partial<ControllerOptions> = productOptions(fixture),
): IdeController {
	return new IdeController({
		...extra,
		piCwd: fixture.project,
		stateDir: fixture.stateDir,
		agentDir: fixture.agentDir,
		configDirName: ".pi",
		uid: process.getuid?.() ?? 0,
		home: "/nonexistent-home",
		settings: { ...DEFAULT_SETTINGS, linkNvim: false },
		ui: { setStatus: () => {}, notify: () => {} },
		isProjectTrusted: () => true,
		...(probe ? { probePid: probe } : {}),
	});
}

function time(fn: () => void, iterations: number): Figures {
	for (let i = 0; i < Math.min(50, iterations); i++) fn();
	const samples: number[] = [];
	for (let i = 0; i < iterations; i++) {
		const start = process.hrtime.bigint();
		fn();
		samples.push(Number(process.hrtime.bigint() - start) / 1e6);
	}
	return percentiles(samples);
}

export async function benchInjection(): Promise<void> {
	console.log("\nPer-prompt injection path (scan + validate + liveness + tiers + rules + format), ms");
	console.log(
		"  prompt: what before_agent_start costs: readdir + one lstat per file (unchanged files cached) + the rest",
	);
	console.log("  watcher rescan: the pill's rescan after a watcher event: readdir + only the files the event named");
	console.log("  raw floor: readdir + read of every file, nothing else");
	console.log(
		"  fresh: a prompt within 2.5 s of the editor's last write, when its file is read again (file-version.ts)",
	);
	console.log(
		`${"scenario".padEnd(30)}${"prompt p50".padEnd(12)}${"prompt p99".padEnd(12)}${"fresh p50".padEnd(12)}${"rescan p50".padEnd(12)}${"rescan p99".padEnd(12)}${"floor p50".padEnd(11)}target`,
	);
	const scenarios: Array<[string, number, number, string]> = [
		["1 live editor", 1, 0, ""],
		["10 live editors", 10, 0, "prompt p50 <= 1 ms"],
		["100 live editors", 100, 0, ""],
		// The first scan removes dead editors' leftovers (timed below as "cleanup"); later prompts see 10 files.
		["10 live + 1,000 dead files", 10, 1000, "prompt p50 <= 10 ms"],
	];
	const figures = new Map<string, { prompt: number; floor: number }>();
	for (const [name, live, dead, target] of scenarios) {
		const fixture = createFixture(live, dead);
		try {
			const iterations = dead > 0 ? 300 : 2000;
			const controller = controllerFor(fixture);
			const started = process.hrtime.bigint();
			await controller.start();
			const startMs = Number(process.hrtime.bigint() - started) / 1e6;
			if (dead > 0) {
				const left = readdirSync(fixture.stateDir).length;
				console.log(
					`  cleanup: the first scan removed ${dead + live - left} of ${dead} leftovers in ${ms(startMs)} ms (start, watcher included)`,
				);
			}
			const check = controller.prepareInjection();
			if (check.kind !== "inject") throw new Error(`bench fixture did not inject: ${check.reason}`);
			// Within RACY_WINDOW_MS of a write a file is read again at every look (src/protocol/file-version.ts).
			const justWritten = time(() => controller.prepareInjection(), 100);
			await new Promise((resolve) => setTimeout(resolve, RACY_WINDOW_MS + 100));
			const prompt = time(() => controller.prepareInjection(), iterations);
			const rescan = time(() => controller.refresh("changed"), iterations);
			await controller.stop();
			const floor = time(() => {
				for (const name of readdirSync(fixture.stateDir)) readFileSync(join(fixture.stateDir, name));
			}, iterations);
			console.log(
				`${name.padEnd(30)}${ms(prompt.p50).padEnd(12)}${ms(prompt.p99).padEnd(12)}${ms(justWritten.p50).padEnd(12)}${ms(rescan.p50).padEnd(12)}${ms(rescan.p99).padEnd(12)}${ms(floor.p50).padEnd(11)}${target}`,
			);
			figures.set(name, { prompt: prompt.p50, floor: floor.p50 });
		} finally {
			destroyFixture(fixture);
		}
	}
	// Issue 15's targets: the work a prompt adds beyond reading the state files.
	const one = figures.get("1 live editor");
	const ten = figures.get("10 live editors");
	if (one && ten) {
		header();
		const fixed = one.prompt - one.floor;
		row("fixed cost, 1 editor (prompt p50 - floor p50)", `${ms(fixed)} ms`, "<= 0.1 ms", fixed <= 0.1);
		const ratio = ten.prompt / ten.floor;
		row("10 editors, prompt p50 / floor p50", `${ratio.toFixed(2)}x`, "<= 1.5x", ratio <= 1.5);
	}
}

/**
 * What the host-terminal and pid-reuse checks add to a prompt with 10 live editors: the same prompt with and
 * without them (host hints, process start times, remembered choices), and the checks alone (one
 * findHostEditor, one start-time read per editor through its held /proc descriptor).
 */
async function benchHostAndReuse(): Promise<void> {
	const fixture = createFixture(10, 0);
	try {
		const iterations = 3000;
		const bare = controllerFor(fixture, undefined, {});
		const full = controllerFor(fixture);
		for (const c of [bare, full]) {
			await c.start();
			const check = c.prepareInjection();
			if (check.kind !== "inject") throw new Error(`bench fixture did not inject: ${check.reason}`);
		}
		// Interleave the two, so machine noise hits both alike.
		const withChecks: number[] = [];
		const without: number[] = [];
		for (let i = 0; i < iterations; i++) {
			for (const [c, samples] of [
				[full, withChecks],
				[bare, without],
			] as const) {
				const start = process.hrtime.bigint();
				c.prepareInjection();
				samples.push(Number(process.hrtime.bigint() - start) / 1e6);
			}
		}
		await bare.stop();
		await full.stop();
		const pids = fixture.children.map((c) => c.pid ?? 0);
		const hints: HostHints = { envPid: 1, ancestors: readAncestry() };
		const clock = new ProcessClock();
		const checks = time(() => {
			findHostEditor(hints, { live: new Set(pids), inProject: new Set(pids.slice(0, 1)) });
			for (const pid of pids) clock.startedAt(pid);
		}, iterations);
		clock.close();
		const a = percentiles(withChecks);
		const b = percentiles(without);
		const added = a.p50 - b.p50;
		console.log("\nHost-terminal + pid-reuse checks, 10 live editors (host hints, start clock, choice store)");
		header();
		row("prompt p50 with the checks", `${ms(a.p50)} ms`, "(info)", true);
		row("prompt p50 without them", `${ms(b.p50)} ms`, "(info)", true);
		row("added by the checks, prompt p50", `${ms(added)} ms`, "<= 0.1 ms", added <= 0.1);
		row("the checks alone, p50 / p99", `${ms(checks.p50)} / ${ms(checks.p99)} ms`, "(info)", true);
	} finally {
		destroyFixture(fixture);
	}
}

async function benchPill(): Promise<void> {
	const fixture = createFixture(1, 0);
	const [child] = fixture.children;
	const pid = child?.pid ?? 0;
	let resolvePill: (() => void) | undefined;
	const controller = controllerFor(fixture);
	controller.onPill = () => resolvePill?.();
	await controller.start();
	const samples: number[] = [];
	const languages = ["python", "lua"];
	try {
		for (let i = 0; i < 200; i++) {
			const state = editorState(pid, fixture.project, 0);
			state.active_buffer.language = languages[i % 2] ?? "lua";
			const changed = new Promise<void>((resolve, reject) => {
				const timer = setTimeout(() => reject(new Error("pill did not change within 2 s")), 2000);
				resolvePill = () => {
					clearTimeout(timer);
					resolve();
				};
			});
			const start = process.hrtime.bigint();
			writeAtomically(fixture.stateDir, state);
			await changed;
			samples.push(Number(process.hrtime.bigint() - start) / 1e6);
		}
	} finally {
		await controller.stop();
		destroyFixture(fixture);
	}
	const { p50, p99 } = percentiles(samples);
	console.log(
		`\nPill latency, state-file write -> setStatus (200 writes): p50 ${ms(p50)} ms, p99 ${ms(p99)} ms (target p50 <= 50 ms)`,
	);
}

interface IdleCounts {
	scans: number;
	probes: number;
	/** Start-time reads (the pid-reuse check of the connected editor; none without a start clock). */
	clockReads: number;
}

/** Count what a controller connected to one editor does while nothing happens, over the same `seconds`. */
async function idleCounts(fixture: Fixture, extra: Partial<ControllerOptions>, seconds: number): Promise<IdleCounts> {
	const counts: IdleCounts = { scans: 0, probes: 0, clockReads: 0 };
	const clock = extra.startClock;
	const counted: Partial<ControllerOptions> = clock
		? {
				...extra,
				startClock: {
					startedAt: (pid) => {
						counts.clockReads++;
						return clock.startedAt(pid);
					},
					retain: (keep) => clock.retain?.(keep),
					close: () => clock.close?.(),
				},
			}
		: extra;
	const controller = controllerFor(
		fixture,
		(pid) => {
			counts.probes++;
			return probePid(pid);
		},
		counted,
	);
	await controller.start();
	// Let the one rescan queued by the watcher going live run before counting.
	await new Promise((resolve) => setTimeout(resolve, 50));
	const original = controller.refresh.bind(controller);
	controller.refresh = () => {
		counts.scans++;
		return original();
	};
	Object.assign(counts, { probes: 0, clockReads: 0 });
	await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
	await controller.stop();
	return counts;
}

/**
 * Idle wake-ups with and without the issue-8 machinery (host hints, start clock, choice store), both measured
 * over the same seconds side by side: that machinery must add work only inside wake-ups that happen anyway.
 */
async function benchIdle(seconds: number): Promise<void> {
	const fixture = createFixture(1, 0);
	try {
		const [plain, full] = await Promise.all([
			idleCounts(fixture, {}, seconds),
			idleCounts(fixture, productOptions(fixture), seconds),
		]);
		const perMinute = (n: number) => ((n * 60) / seconds).toFixed(1);
		const wakeUps = (c: IdleCounts) => c.scans + c.probes;
		const added = wakeUps(full) - wakeUps(plain);
		console.log(`\nIdle for ${seconds} s, connected to one editor (wake-ups: directory scans + liveness ticks)`);
		header();
		row(
			"directory scans, with the issue-8 machinery",
			`${full.scans} (${perMinute(full.scans)}/min)`,
			"0",
			full.scans === 0,
		);
		row("wake-ups/min without it", perMinute(wakeUps(plain)), "(info)", true);
		row("wake-ups/min with it", perMinute(wakeUps(full)), "(info)", true);
		// Two interval timers started a few ms apart may see one tick more or less in the same window.
		row("added wake-ups in the window", `${added}`, "0 (±1 tick)", Math.abs(added) <= 1);
		row("  start-time reads in them (pid-reuse check)", `${full.clockReads}`, "(info)", true);
	} finally {
		destroyFixture(fixture);
	}
}

/**
 * Issue 23: what the liveness check costs a prompt (kill(pid, 0) of every editor, only in pi's own pid namespace),
 * and what the files of sandboxed pis (`pi-<pid>-<ns>.json`, never probed from another namespace) add.
 */
export async function benchLiveness(): Promise<void> {
	console.log("\nLiveness check per prompt (issue 23: kill(pid, 0) only in pi's own pid namespace), ms");
	const own = readOwnPidNamespace() ?? INITIAL_PID_NAMESPACE;
	const sandbox = own === "pid:[4026532455]" ? "pid:[4026532456]" : "pid:[4026532455]";
	const fixture = createFixture(10, 0);
	try {
		const measure = async (pidNamespace: string) => {
			const controller = controllerFor(fixture, undefined, { ...productOptions(fixture), pidNamespace });
			await controller.start();
			const check = controller.prepareInjection();
			if (check.kind !== "inject") throw new Error(`bench fixture did not inject: ${check.reason}`);
			await new Promise((resolve) => setTimeout(resolve, RACY_WINDOW_MS + 100));
			const figures = time(() => controller.prepareInjection(), 2000);
			await controller.stop();
			return figures;
		};
		const judged = await measure(own);
		const unjudged = await measure(sandbox);
		for (let i = 1; i <= 20; i++) {
			const body = JSON.stringify({ kind: "pi", pid: i, pid_ns: "pid:[4026532999]" });
			writeFileSync(join(fixture.stateDir, `pi-${i}-4026532999.json`), body, { mode: 0o600 });
		}
		const withPis = await measure(own);
		header();
		row("10 editors, pi on the host (every pid probed): prompt p50", `${ms(judged.p50)} ms`, "(info)", true);
		row("10 editors, pi in a sandbox (none probed): prompt p50", `${ms(unjudged.p50)} ms`, "(info)", true);
		const cost = judged.p50 - unjudged.p50;
		row("liveness check per prompt, 10 editors (p50 difference)", `${ms(cost)} ms`, "<= 0.1 ms", cost <= 0.1);
		const added = withPis.p50 - judged.p50;
		row("+ 20 sandboxed pis' files in the dir: added per prompt", `${ms(added)} ms`, "<= 0.1 ms", added <= 0.1);
	} finally {
		destroyFixture(fixture);
	}
}

export async function runPiBench(): Promise<void> {
	console.log("== pi extension ==");
	await benchInjection();
	await benchLiveness();
	await benchHostAndReuse();
	await benchPill();
	await benchIdle(10);
}
