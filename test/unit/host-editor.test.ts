import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { findHostEditor, parseEditorPid } from "../../src/host-editor.ts";
import { isPidReused } from "../../src/liveness.ts";
import {
	CLOCK_TICKS_PER_SECOND,
	ProcessClock,
	parseBootTime,
	parseProcStat,
	readAncestry,
} from "../../src/proc-info.ts";

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
		/** pids with a state file */
		editors: number[];
		/** "<pid> <via>", or null for no host editor */
		expected: string | null;
	}
	const cases: Case[] = [
		{ name: "env pid with a state file", envPid: 10, ancestors: [3, 2], editors: [10, 3], expected: "10 env" },
		{
			name: "env pid without a state file: ancestry",
			envPid: 10,
			ancestors: [5, 3],
			editors: [3],
			expected: "3 ancestry",
		},
		{ name: "nearest ancestor wins", envPid: null, ancestors: [7, 5, 3], editors: [3, 5], expected: "5 ancestry" },
		{ name: "no hint matches", envPid: 10, ancestors: [5], editors: [3], expected: null },
		{ name: "nothing known", envPid: null, ancestors: [], editors: [3], expected: null },
	];
	for (const { name, envPid, ancestors, editors, expected } of cases) {
		it(name, () => {
			const host = findHostEditor({ envPid, ancestors }, new Set(editors));
			assert.equal(host ? `${host.pid} ${host.via}` : null, expected);
		});
	}
});

describe("isPidReused", () => {
	const cases: Array<[string, number | null, number, boolean]> = [
		["unknown start time never counts", null, 1000, false],
		["started long before the last write: the editor", 500, 1000, false],
		["started just before the write", 999.9, 1000, false],
		["within the slack (boot time rounding)", 1000.9, 1000, false],
		["started after the last write: reused pid", 1001.5, 1000, true],
		["started an hour after", 4600, 1000, true],
	];
	for (const [name, startedAt, writtenAt, expected] of cases) {
		it(name, () => assert.equal(isPidReused(startedAt, writtenAt), expected));
	}
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
		const started = clock.startedAt(pid);
		assert.ok(started !== null, "known on Linux");
		// boot time is whole seconds and ticks are 1/CLOCK_TICKS_PER_SECOND: within the reuse slack either way
		assert.ok(Math.abs(started - before) < 2, `started ${started} vs spawned ${before}`);
		assert.equal(CLOCK_TICKS_PER_SECOND, 100);
		assert.equal(isPidReused(started, before - 60), true, "a file last written a minute before the process");
		assert.equal(isPidReused(started, before + 0.5), false, "written after the process started");
		// While the process lives the held descriptor answers; once it is gone the pid is unknown.
		assert.equal(clock.startedAt(pid), started);
		child.kill("SIGKILL");
		await new Promise((resolve) => child.once("exit", resolve));
		assert.equal(clock.startedAt(pid), null);
		clock.close();
	});

	it("no boot time (not Linux): every start time is unknown", () => {
		assert.equal(new ProcessClock(null).startedAt(process.pid), null);
	});
});
