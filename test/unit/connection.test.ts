import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { type ConnectionMode, decideConnection } from "../../src/connection.ts";
import { probePid } from "../../src/liveness.ts";
import { parseSettings } from "../../src/settings.ts";

describe("decideConnection", () => {
	const auto: ConnectionMode = { kind: "auto" };
	const off: ConnectionMode = { kind: "off" };
	const picked = (pid: number): ConnectionMode => ({ kind: "picked", pid });
	const cases: Array<
		[string, ConnectionMode, number[], number[], { connected: number | null; why: string; mode: string }]
	> = [
		["auto, no editor", auto, [], [], { connected: null, why: "no editor", mode: "auto" }],
		["auto, exactly one in the best tier", auto, [1, 2], [1], { connected: 1, why: "only candidate", mode: "auto" }],
		[
			"auto, two in the best tier",
			auto,
			[1, 2, 3],
			[1, 2],
			{ connected: null, why: "several candidates", mode: "auto" },
		],
		["auto, live editors but none in a tier", auto, [1], [], { connected: null, why: "no editor", mode: "auto" }],
		[
			"picked, alive, even outside the best tier",
			picked(3),
			[1, 3],
			[1],
			{ connected: 3, why: "picked", mode: "picked" },
		],
		["picked, alive among two candidates", picked(2), [1, 2], [1, 2], { connected: 2, why: "picked", mode: "picked" }],
		["picked editor died: back to auto", picked(9), [1], [1], { connected: 1, why: "only candidate", mode: "auto" }],
		["off never connects", off, [1], [1], { connected: null, why: "off", mode: "off" }],
	];
	for (const [name, mode, live, best, expected] of cases) {
		it(name, () => {
			const c = decideConnection(mode, live, best);
			assert.equal(c.connected ? c.pid : null, expected.connected);
			assert.equal(c.why, expected.why);
			assert.equal(c.mode.kind, expected.mode);
		});
	}
});

describe("probePid", () => {
	const errno = (code: string) => () => {
		throw Object.assign(new Error(code), { code });
	};
	const cases: Array<[string, number, (pid: number) => void, string]> = [
		["signal succeeds", 10, () => {}, "alive"],
		["ESRCH", 10, errno("ESRCH"), "dead"],
		["EPERM: another user's process", 10, errno("EPERM"), "foreign"],
		["unknown error hides the editor", 10, errno("EINVAL"), "dead"],
		["pid 0 is never probed", 0, () => {}, "dead"],
		["negative pid is never probed", -1, () => {}, "dead"],
		["fractional pid", 1.5, () => {}, "dead"],
	];
	for (const [name, pid, kill, expected] of cases) it(name, () => assert.equal(probePid(pid, kill), expected));

	it("real processes: ours alive, exited dead, pid 1 foreign or ours", async () => {
		assert.equal(probePid(process.pid), "alive");
		const child = spawn("true");
		await new Promise((resolve) => child.on("exit", resolve));
		assert.equal(probePid(child.pid ?? 0), "dead");
		// As root, init is ours to signal; as anyone else it is foreign. Never dead.
		assert.notEqual(probePid(1), "dead");
	});
});

describe("parseSettings", () => {
	const cases: Array<[string, unknown, NodeJS.ProcessEnv, Record<string, unknown>, RegExp[]]> = [
		[
			"defaults",
			undefined,
			{},
			{ glyphs: "nerd", autoConnect: true, maxSelectionLines: 1000, linkNvim: true, sendUnchanged: false },
			[],
		],
		["plain glyphs", { glyphs: "plain" }, {}, { glyphs: "plain" }, []],
		["env overrides", { glyphs: "nerd" }, { PI_IDE_GLYPHS: "plain" }, { glyphs: "plain" }, []],
		[
			"bad values fall back with a message",
			{ glyphs: "emoji", maxSelectionLines: -3 },
			{},
			{ glyphs: "nerd", maxSelectionLines: 1000 },
			[
				/glyphs should be "nerd" or "plain", not "emoji"/,
				/maxSelectionLines should be a positive whole number, not -3/,
			],
		],
		["unknown keys are reported", { colour: 1 }, {}, {}, [/ideContext.colour is not a known setting/]],
		["not an object", "yes", {}, {}, [/ideContext should be an object/]],
		["autoConnect off", { autoConnect: false }, {}, { autoConnect: false }, []],
		["sendUnchanged on (a block with every prompt)", { sendUnchanged: true }, {}, { sendUnchanged: true }, []],
		[
			"sendUnchanged must be a boolean",
			{ sendUnchanged: "yes" },
			{},
			{ sendUnchanged: false },
			[/sendUnchanged should be true or false, not "yes"/],
		],
	];
	for (const [name, raw, env, expected, problems] of cases) {
		it(name, () => {
			const result = parseSettings(raw, env);
			for (const [key, value] of Object.entries(expected))
				assert.equal(result.settings[key as keyof typeof result.settings], value);
			assert.equal(result.problems.length, problems.length, result.problems.join("\n"));
			for (const [i, re] of problems.entries()) assert.match(result.problems[i] ?? "", re);
		});
	}
});
