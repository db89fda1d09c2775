import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { type ConnectionMode, decideConnection, type RememberedInput } from "../../../src/discovery/connection.ts";
import { probePid } from "../../../src/protocol/liveness.ts";
import { parseSettings } from "../../../src/ui/settings.ts";

describe("decideConnection", () => {
	const auto: ConnectionMode = { kind: "auto" };
	const sticky = (pid: number): ConnectionMode => ({ kind: "auto", sticky: pid });
	const off: ConnectionMode = { kind: "off" };
	const picked = (pid: number): ConnectionMode => ({ kind: "picked", pid });
	const none: RememberedInput = { kind: "none" };
	const rememberedOff: RememberedInput = { kind: "off" };
	const remembered = (pid: number): RememberedInput => ({ kind: "pick", pid });
	interface Case {
		name: string;
		mode: ConnectionMode;
		live: number[];
		/** live editors with a tier; default = live */
		project?: number[];
		best: number[];
		host?: number | null;
		remembered?: RememberedInput;
		connected: number | null;
		why: string;
		/** the mode kept for the next decision, as "auto", "auto:<sticky>", "picked:<pid>" or "off" */
		next: string;
	}
	const cases: Case[] = [
		{ name: "auto, no editor", mode: auto, live: [], best: [], connected: null, why: "no editor", next: "auto" },
		{
			name: "auto, exactly one in the best tier: connects and keeps it",
			mode: auto,
			live: [1, 2],
			best: [1],
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
		{
			name: "auto, two in the best tier",
			mode: auto,
			live: [1, 2, 3],
			best: [1, 2],
			connected: null,
			why: "several candidates",
			next: "auto",
		},
		{
			name: "auto, live editors but none in a tier",
			mode: auto,
			live: [1],
			project: [],
			best: [],
			connected: null,
			why: "no editor",
			next: "auto",
		},
		{
			name: "sticky: a second editor in the same tier does not drop it",
			mode: sticky(1),
			live: [1, 2],
			best: [1, 2],
			connected: 1,
			why: "kept",
			next: "auto:1",
		},
		{
			name: "sticky: a better-tier editor starting does not steal it",
			mode: sticky(1),
			live: [1, 2],
			best: [2],
			connected: 1,
			why: "kept",
			next: "auto:1",
		},
		{
			name: "sticky and still the only candidate",
			mode: sticky(1),
			live: [1],
			best: [1],
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
		{
			name: "sticky editor died: auto decides again",
			mode: sticky(9),
			live: [1, 2],
			best: [1, 2],
			connected: null,
			why: "several candidates",
			next: "auto",
		},
		{
			name: "sticky editor left the project (cd elsewhere): auto decides again",
			mode: sticky(1),
			live: [1, 2],
			project: [2],
			best: [2],
			connected: 2,
			why: "only candidate",
			next: "auto:2",
		},
		{
			name: "picked, alive, even outside the best tier",
			mode: picked(3),
			live: [1, 3],
			best: [1],
			connected: 3,
			why: "picked",
			next: "picked:3",
		},
		{
			name: "picked, alive, outside pi's project (no tier): held while it runs",
			mode: picked(3),
			live: [1, 3],
			project: [1],
			best: [1],
			connected: 3,
			why: "picked",
			next: "picked:3",
		},
		{
			name: "picked outside pi's project, the only live editor: held",
			mode: picked(3),
			live: [3],
			project: [],
			best: [],
			connected: 3,
			why: "picked",
			next: "picked:3",
		},
		{
			name: "picked outside pi's project, then it exits: back to auto",
			mode: picked(3),
			live: [1],
			project: [1],
			best: [1],
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
		{
			name: "picked, alive among two candidates",
			mode: picked(2),
			live: [1, 2],
			best: [1, 2],
			connected: 2,
			why: "picked",
			next: "picked:2",
		},
		{
			name: "picked beats the editor pi runs in",
			mode: picked(2),
			live: [1, 2],
			best: [1, 2],
			host: 1,
			connected: 2,
			why: "picked",
			next: "picked:2",
		},
		{
			name: "picked editor died: back to auto",
			mode: picked(9),
			live: [1],
			best: [1],
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
		{ name: "off never connects", mode: off, live: [1], best: [1], connected: null, why: "off", next: "off" },
		{
			name: "off beats the editor pi runs in",
			mode: off,
			live: [1],
			best: [1],
			host: 1,
			connected: null,
			why: "off",
			next: "off",
		},
		{
			name: "remembered off never connects, not even to the editor pi runs in",
			mode: auto,
			live: [1],
			best: [1],
			host: 1,
			remembered: rememberedOff,
			connected: null,
			why: "remembered off",
			next: "auto",
		},
		{
			name: "a session pick beats a remembered off",
			mode: picked(1),
			live: [1],
			best: [1],
			remembered: rememberedOff,
			connected: 1,
			why: "picked",
			next: "picked:1",
		},
		{
			name: "the editor pi runs in beats the tiers (another editor is the only candidate)",
			mode: auto,
			live: [1, 2],
			project: [2],
			best: [2],
			host: 1,
			connected: 1,
			why: "editor terminal",
			next: "auto:1",
		},
		{
			name: "the editor pi runs in beats a sticky connection",
			mode: sticky(2),
			live: [1, 2],
			best: [1, 2],
			host: 1,
			connected: 1,
			why: "editor terminal",
			next: "auto:1",
		},
		{
			name: "the editor pi runs in beats a remembered pick",
			mode: auto,
			live: [1, 2],
			best: [1, 2],
			host: 1,
			remembered: remembered(2),
			connected: 1,
			why: "editor terminal",
			next: "auto:1",
		},
		{
			name: "a host pid without a live state file does not count",
			mode: auto,
			live: [2],
			best: [2],
			host: 7,
			connected: 2,
			why: "only candidate",
			next: "auto:2",
		},
		{
			name: "a remembered pick resolves two candidates",
			mode: auto,
			live: [1, 2],
			best: [1, 2],
			remembered: remembered(2),
			connected: 2,
			why: "remembered pick",
			next: "auto:2",
		},
		{
			name: "a remembered pick beats a sticky connection",
			mode: sticky(1),
			live: [1, 2],
			best: [1, 2],
			remembered: remembered(2),
			connected: 2,
			why: "remembered pick",
			next: "auto:2",
		},
		{
			name: "a remembered pick of an editor that is not live: auto",
			mode: auto,
			live: [1],
			best: [1],
			remembered: remembered(5),
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
		{
			name: "nothing remembered: auto",
			mode: auto,
			live: [1],
			best: [1],
			remembered: none,
			connected: 1,
			why: "only candidate",
			next: "auto:1",
		},
	];
	const describeMode = (mode: ConnectionMode) =>
		mode.kind === "auto"
			? mode.sticky === undefined
				? "auto"
				: `auto:${mode.sticky}`
			: mode.kind === "picked"
				? `picked:${mode.pid}`
				: "off";
	for (const c of cases) {
		it(c.name, () => {
			const result = decideConnection({
				mode: c.mode,
				livePids: c.live,
				projectPids: c.project ?? c.live,
				bestTierPids: c.best,
				hostPid: c.host ?? null,
				remembered: c.remembered ?? none,
			});
			assert.deepEqual(
				{ connected: result.connected ? result.pid : null, why: result.why, next: describeMode(result.mode) },
				{ connected: c.connected, why: c.why, next: c.next },
			);
		});
	}
});

describe("probePid", () => {
	const errno = (code: string) => () => {
		throw Object.assign(new Error(code), { code });
	};
	interface Case {
		name: string;
		pid: number;
		/** kill(pid, 0) */
		kill: (pid: number) => void;
		expected: ReturnType<typeof probePid>;
	}
	const cases: Case[] = [
		{ name: "signal succeeds", pid: 10, kill: () => {}, expected: "alive" },
		{ name: "ESRCH: gone (its file may be removed)", pid: 10, kill: errno("ESRCH"), expected: "dead" },
		{ name: "EPERM: another user's process", pid: 10, kill: errno("EPERM"), expected: "foreign" },
		{ name: "EINVAL proves nothing: unknown", pid: 10, kill: errno("EINVAL"), expected: { unknown: "EINVAL" } },
		{
			name: "ENOSYS (a sandbox) proves nothing: unknown",
			pid: 10,
			kill: errno("ENOSYS"),
			expected: { unknown: "ENOSYS" },
		},
		{
			name: "an error without a code: unknown",
			pid: 10,
			kill: () => {
				throw new Error("odd");
			},
			expected: { unknown: "Error: odd" },
		},
		{ name: "pid 0 is never probed", pid: 0, kill: () => {}, expected: "dead" },
		{ name: "negative pid is never probed", pid: -1, kill: () => {}, expected: "dead" },
		{ name: "fractional pid", pid: 1.5, kill: () => {}, expected: "dead" },
	];
	for (const { name, pid, kill, expected } of cases) it(name, () => assert.deepEqual(probePid(pid, kill), expected));

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
	interface Case {
		name: string;
		/** the `ideContext` value of settings.json */
		raw: unknown;
		env?: NodeJS.ProcessEnv;
		/** settings checked (the rest are not looked at) */
		expected: Record<string, unknown>;
		problems?: RegExp[];
	}
	const cases: Case[] = [
		{
			name: "defaults",
			raw: undefined,
			expected: {
				glyphs: "nerd",
				autoConnect: true,
				maxSelectionLines: 1000,
				linkNvim: true,
				linkVim: true,
				sendUnchanged: false,
				approve: "off",
				approveTimeoutSeconds: 120,
				answerWaitMs: 1000,
			},
		},
		{ name: "plain glyphs", raw: { glyphs: "plain" }, expected: { glyphs: "plain" } },
		{ name: "env overrides", raw: { glyphs: "nerd" }, env: { PI_IDE_GLYPHS: "plain" }, expected: { glyphs: "plain" } },
		{
			name: "bad values fall back with a message",
			raw: { glyphs: "emoji", maxSelectionLines: -3 },
			expected: { glyphs: "nerd", maxSelectionLines: 1000 },
			problems: [
				/glyphs should be "nerd" or "plain", not "emoji"/,
				/maxSelectionLines should be a positive whole number, not -3/,
			],
		},
		{
			name: "unknown keys are reported",
			raw: { colour: 1 },
			expected: {},
			problems: [/ideContext.colour is not a known setting/],
		},
		{ name: "not an object", raw: "yes", expected: {}, problems: [/ideContext should be an object/] },
		{ name: "autoConnect off", raw: { autoConnect: false }, expected: { autoConnect: false } },
		{
			name: "sendUnchanged on (a block with every prompt)",
			raw: { sendUnchanged: true },
			expected: { sendUnchanged: true },
		},
		{
			name: "sendUnchanged must be a boolean",
			raw: { sendUnchanged: "yes" },
			expected: { sendUnchanged: false },
			problems: [/sendUnchanged should be true or false, not "yes"/],
		},
		{
			name: "approval of edits, with a timeout of its own",
			raw: { approve: "edits", approveTimeoutSeconds: 30 },
			expected: { approve: "edits", approveTimeoutSeconds: 30 },
		},
		{
			name: "approve takes only off or edits; the timeout only 1..3600 whole seconds",
			raw: { approve: true, approveTimeoutSeconds: 0.5 },
			expected: { approve: "off", approveTimeoutSeconds: 120 },
			problems: [
				/approve should be "off" or "edits", not true/,
				/approveTimeoutSeconds should be a whole number of seconds from 1 to 3600, not 0.5/,
			],
		},
		{
			name: "the answer wait for a slow machine",
			raw: { answerWaitMs: 5000 },
			expected: { answerWaitMs: 5000 },
		},
		{
			name: "the answer wait takes whole milliseconds from 100 to 10000",
			raw: { answerWaitMs: 50 },
			expected: { answerWaitMs: 1000 },
			problems: [/answerWaitMs should be a whole number of milliseconds from 100 to 10000, not 50/],
		},
		{
			name: "a timeout over an hour is refused",
			raw: { approveTimeoutSeconds: 7200 },
			expected: { approveTimeoutSeconds: 120 },
			problems: [/approveTimeoutSeconds should be a whole number of seconds from 1 to 3600, not 7200/],
		},
	];
	for (const { name, raw, env = {}, expected, problems = [] } of cases) {
		it(name, () => {
			const result = parseSettings(raw, env);
			for (const [key, value] of Object.entries(expected))
				assert.equal(result.settings[key as keyof typeof result.settings], value);
			assert.equal(result.problems.length, problems.length, result.problems.join("\n"));
			for (const [i, re] of problems.entries()) assert.match(result.problems[i] ?? "", re);
		});
	}
});
