import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { type EnvPidVerdict, findHostEditor, parseEditorPid } from "../../../src/discovery/host-editor.ts";
import {
	CLOCK_STEP_SECONDS,
	type ClockSources,
	ProcessClock,
	parseBootTime,
	parseProcStat,
	readAncestry,
} from "../../../src/discovery/proc-info.ts";
import { isPidReused } from "../../../src/protocol/liveness.ts";

describe("parseEditorPid", () => {
	const cases: Array<[string | undefined, number | null]> = [
		[undefined, null],
		["", null],
		["1234", 1234],
		["01234", null],
		["0", null],
		["-5", null],
		[" 12", null],
		["12 ", null],
		["12abc", null],
		["1.5", null],
		["2147483647", 2147483647],
		["2147483648", null],
		["99999999999", null],
	];
	for (const [value, expected] of cases) it(JSON.stringify(value), () => assert.equal(parseEditorPid(value), expected));
});

describe("findHostEditor", () => {
	interface Case {
		name: string;
		/** PI_IDE_EDITOR_PID, parsed */
		envPid: number | null;
		/** pi's ancestors, nearest first */
		ancestors: number[];
		/** pids with a live state file */
		editors: number[];
		/** those of them in pi's project (a tier) */
		inProject: number[];
		/** "<pid> <via>", or null for no host editor */
		expected: string | null;
		/** what the env pid amounted to */
		envVerdict: EnvPidVerdict;
	}
	const cases: Case[] = [
		{
			name: "env pid of an editor in the project (VS Code's terminal: not an ancestor)",
			envPid: 10,
			ancestors: [3, 2],
			editors: [10, 3],
			inProject: [10],
			expected: "10 env",
			envVerdict: "host",
		},
		{
			name: "env pid of an ancestor in another project (pi in that Neovim's terminal, cd'd elsewhere)",
			envPid: 10,
			ancestors: [7, 10],
			editors: [10],
			inProject: [],
			expected: "10 env",
			envVerdict: "host",
		},
		{
			name: "env pid of an editor in another project, not an ancestor (inherited through tmux): no host",
			envPid: 10,
			ancestors: [7, 5],
			editors: [10, 3],
			inProject: [3],
			expected: null,
			envVerdict: "another project",
		},
		{
			name: "env pid inherited from another project, an ancestor editor: ancestry",
			envPid: 10,
			ancestors: [7, 3],
			editors: [10, 3],
			inProject: [],
			expected: "3 ancestry",
			envVerdict: "another project",
		},
		{
			name: "env pid without a state file: ancestry",
			envPid: 10,
			ancestors: [5, 3],
			editors: [3],
			inProject: [],
			expected: "3 ancestry",
			envVerdict: "no live editor",
		},
		{
			name: "nearest ancestor wins",
			envPid: null,
			ancestors: [7, 5, 3],
			editors: [3, 5],
			inProject: [3],
			expected: "5 ancestry",
			envVerdict: "unset",
		},
		{
			name: "no hint matches",
			envPid: 10,
			ancestors: [5],
			editors: [3],
			inProject: [3],
			expected: null,
			envVerdict: "no live editor",
		},
		{
			name: "nothing known",
			envPid: null,
			ancestors: [],
			editors: [3],
			inProject: [3],
			expected: null,
			envVerdict: "unset",
		},
	];
	for (const { name, envPid, ancestors, editors, inProject, expected, envVerdict } of cases) {
		it(name, () => {
			const { host, envPid: verdict } = findHostEditor(
				{ envPid, ancestors },
				{ live: new Set(editors), inProject: new Set(inProject) },
			);
			assert.deepEqual(
				{ host: host ? `${host.pid} ${host.via}` : null, verdict },
				{ host: expected, verdict: envVerdict },
			);
		});
	}
});

describe("isPidReused", () => {
	interface Case {
		name: string;
		startedAt: number | null;
		writtenAt: number;
		expected: boolean;
	}
	const cases: Case[] = [
		{ name: "unknown start time never counts", startedAt: null, writtenAt: 1000, expected: false },
		{ name: "started long before the last write: the editor", startedAt: 500, writtenAt: 1000, expected: false },
		{ name: "started just before the write", startedAt: 999.9, writtenAt: 1000, expected: false },
		{ name: "a second after: the boot time's rounding", startedAt: 1001, writtenAt: 1000, expected: false },
		{ name: "3 s after: a small clock step, not evidence", startedAt: 1003, writtenAt: 1000, expected: false },
		{ name: "10 s after the last write: reused pid", startedAt: 1010, writtenAt: 1000, expected: true },
		{ name: "started an hour after", startedAt: 4600, writtenAt: 1000, expected: true },
	];
	for (const { name, startedAt, writtenAt, expected } of cases) {
		it(name, () => assert.equal(isPidReused(startedAt, writtenAt), expected));
	}
});

describe("ProcessClock: a wall-clock step", () => {
	/** A clock over the real /proc/<pid>/stat of a live child, with a fake boot time and fake clocks. */
	function fakeClocks() {
		const clocks = { bootTime: 1_000_000, wall: 2_000_000, monotonic: 5000, bootTimeReads: 0 };
		const sources: ClockSources = {
			bootTime: () => {
				clocks.bootTimeReads++;
				return clocks.bootTime;
			},
			wall: () => clocks.wall,
			monotonic: () => clocks.monotonic,
		};
		/** The wall clock (and with it /proc/stat's btime) moves by `seconds`; the monotonic clock does not. */
		const step = (seconds: number) => {
			clocks.wall += seconds;
			clocks.bootTime += seconds;
		};
		/** Time passes on both clocks alike. */
		const pass = (seconds: number) => {
			clocks.wall += seconds;
			clocks.monotonic += seconds;
		};
		return { clocks, sources, step, pass };
	}

	interface Case {
		name: string;
		/** The wall-clock step after the first look (seconds, negative: back). */
		step: number;
		/** Is the pid met first after the step (a new editor), else held since before it? */
		metAfterStep: boolean;
	}
	const cases: Case[] = [
		{ name: "an NTP step back of an hour, the editor held since before it", step: -3600, metAfterStep: false },
		{ name: "an NTP step back of an hour, a pid first met after it", step: -3600, metAfterStep: true },
		{ name: "a step forward of a minute, held since before it", step: 60, metAfterStep: false },
		{ name: "a step back of 2 s (under the reuse slack, over the step tolerance)", step: -2, metAfterStep: false },
	];
	for (const { name, step: seconds, metAfterStep } of cases) {
		it(`${name}: start times follow the wall clock, so a file the editor writes after the step is no reuse`, async (t) => {
			const child = spawn("sleep", ["30"], { stdio: "ignore" });
			t.after(() => child.kill("SIGKILL"));
			await new Promise((resolve) => child.once("spawn", resolve));
			const pid = child.pid ?? 0;
			const fake = fakeClocks();
			const clock = new ProcessClock(fake.sources);
			t.after(() => clock.close());
			// Before the step the clock has read the boot time: for this pid, or (a pid met later) for pi's own.
			const before = clock.startedAt(metAfterStep ? process.pid : pid);
			assert.ok(before !== null);
			fake.pass(10);
			fake.step(seconds);
			const after = clock.startedAt(pid);
			const fresh = new ProcessClock(fake.sources);
			t.after(() => fresh.close());
			assert.equal(after, fresh.startedAt(pid), "the same start time as a clock made after the step");
			assert.ok(after !== null);
			// The editor writes its file now, in the stepped wall clock.
			assert.equal(isPidReused(after, fake.clocks.wall), false);
		});
	}

	it("without a step a held pid costs no boot-time read; a new pid and a step each cost one", async (t) => {
		const child = spawn("sleep", ["30"], { stdio: "ignore" });
		t.after(() => child.kill("SIGKILL"));
		await new Promise((resolve) => child.once("spawn", resolve));
		const fake = fakeClocks();
		const clock = new ProcessClock(fake.sources);
		t.after(() => clock.close());
		clock.startedAt(child.pid ?? 0);
		assert.equal(fake.clocks.bootTimeReads, 1, "a new pid");
		fake.pass(100);
		for (let i = 0; i < 5; i++) clock.startedAt(child.pid ?? 0);
		assert.equal(fake.clocks.bootTimeReads, 1, "time passing alike on both clocks");
		fake.step(CLOCK_STEP_SECONDS * 2);
		clock.startedAt(child.pid ?? 0);
		assert.equal(fake.clocks.bootTimeReads, 2, "a step");
	});
});

describe("parseProcStat / parseBootTime", () => {
	const tail = "S 77 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 1000 100";
	const cases: Array<[string, string, { ppid: number; startTicks: number } | null]> = [
		["plain", `42 (nvim) ${tail}`, { ppid: 77, startTicks: 123456 }],
		["name with spaces and parentheses", `42 (a) b (c)) ${tail}`, { ppid: 77, startTicks: 123456 }],
		["no parenthesis", `42 nvim ${tail}`, null],
		["truncated", "42 (nvim) S 77", null],
		["garbage fields", "42 (nvim) S x 1 1", null],
	];
	for (const [name, text, expected] of cases) it(name, () => assert.deepEqual(parseProcStat(text), expected));
	it("btime", () => {
		assert.equal(parseBootTime("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n"), 1700000000);
		assert.equal(parseBootTime("cpu 1\n"), null);
	});
});

describe("the real /proc (Linux)", () => {
	it("pi's ancestry starts with its parent", () => {
		const ancestors = readAncestry();
		assert.equal(ancestors[0], process.ppid);
		assert.ok(!ancestors.includes(process.pid));
	});

	it("a process's start time is close to when it was spawned; a reused pid is told apart by it", async () => {
		const clock = new ProcessClock();
		const before = Date.now() / 1000;
		const child = spawn("sleep", ["30"], { stdio: "ignore" });
		await new Promise((resolve) => child.once("spawn", resolve));
		const pid = child.pid ?? 0;
		assert.equal(clock.known(pid), undefined, "not followed yet");
		const started = clock.startedAt(pid);
		assert.ok(started !== null, "known on Linux");
		assert.equal(clock.known(pid), started, "followed now: known without another look");
		// boot time is whole seconds and ticks are 10 ms: within the reuse slack either way
		assert.ok(Math.abs(started - before) < 2, `started ${started} vs spawned ${before}`);
		assert.equal(isPidReused(started, before - 60), true, "a file last written a minute before the process");
		assert.equal(isPidReused(started, before + 0.5), false, "written after the process started");
		assert.equal(isPidReused(started, before - 1), false, "written a second before: boot time rounding");
		// While the process lives the held descriptor answers; once it is gone the pid is unknown.
		assert.equal(clock.startedAt(pid), started);
		child.kill("SIGKILL");
		await new Promise((resolve) => child.once("exit", resolve));
		assert.equal(clock.known(pid), undefined, "gone: no longer followed");
		assert.equal(clock.startedAt(pid), null);
		clock.close();
	});

	it("no boot time (not Linux): every start time is unknown", () => {
		assert.equal(new ProcessClock(null).startedAt(process.pid), null);
	});
});
