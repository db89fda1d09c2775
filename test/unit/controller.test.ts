/**
 * The controller with real files, real processes and the real watcher; only the
 * UI is a recorder. Waits are polls with a deadline, never fixed sleeps.
 */
import assert from "node:assert/strict";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type ControllerOptions, IdeController } from "../../src/controller.ts";
import { ChoiceStore } from "../../src/discovery/choice-store.ts";
import { ProcessClock } from "../../src/discovery/proc-info.ts";
import { probePid } from "../../src/protocol/liveness.ts";
import { nodePathProbe } from "../../src/protocol/path-probe.ts";
import { DISCONNECTED_GLYPH, formatPill } from "../../src/ui/glyphs.ts";
import { DEFAULT_SETTINGS } from "../../src/ui/settings.ts";
import { killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { pollFor } from "../helpers/poll.ts";
import { makeState, writeStateFile } from "../helpers/state-files.ts";

const roots: string[] = [];
after(async () => {
	await killAllEditors();
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The pid of a real live process standing in for an editor. */
const liveEditorPid = async (): Promise<number> => (await spawnLiveEditor()).pid;

const deadPid = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8")) + 7;

interface Fixture {
	root: string;
	stateDir: string;
	project: string;
	agentDir: string;
	statuses: Array<string | undefined>;
	warnings: string[];
	controller: IdeController;
	trusted: { value: boolean };
}

/**
 * A controller over a fresh state dir and project, or over `share`'s (a second pi watching the same editors);
 * `extra` overrides controller options.
 */
function fixture(share?: Pick<Fixture, "stateDir" | "project">, extra: Partial<ControllerOptions> = {}): Fixture {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-controller-"));
	roots.push(root);
	const stateDir = share?.stateDir ?? join(root, "run", "pi-ide");
	const project = share?.project ?? join(root, "project");
	const agentDir = join(root, "agent");
	mkdirSync(stateDir, { recursive: true, mode: 0o700 });
	mkdirSync(join(project, ".pi"), { recursive: true });
	mkdirSync(agentDir);
	const statuses: Array<string | undefined> = [];
	const warnings: string[] = [];
	const trusted = { value: true };
	const controller = new IdeController({
		piCwd: project,
		stateDir,
		agentDir,
		configDirName: ".pi",
		uid: process.getuid?.() ?? 0,
		home: root,
		settings: { ...DEFAULT_SETTINGS },
		ui: { setStatus: (text) => statuses.push(text), notify: (message) => warnings.push(message) },
		isProjectTrusted: () => trusted.value,
		...extra,
	});
	return { root, stateDir, project, agentDir, statuses, warnings, controller, trusted };
}

const until = (check: () => boolean, what: string, timeoutMs = 5000): Promise<void> =>
	pollFor(check, `waiting for ${what}`, timeoutMs);

const pill = (language: string) => formatPill({ app: "nvim", language, file: "/x" });

describe("IdeController", { concurrency: 4 }, () => {
	it("follows two writes in quick succession (chokidar throttles change events)", async () => {
		const f = fixture();
		const pid = await liveEditorPid();
		writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		await f.controller.start();
		try {
			assert.equal(f.statuses.at(-1), pill("typescript"));
			for (const language of ["python", "lua", "rust", "go"])
				writeStateFile(f.stateDir, makeState({ pid, cwd: f.project, active_buffer: { language } }));
			await until(() => f.statuses.at(-1) === pill("go"), "the pill to show the last write");
		} finally {
			await f.controller.stop();
		}
	});

	it("shows the disconnected glyph when the editor's file goes away, and nothing after stop()", async () => {
		const f = fixture();
		const pid = await liveEditorPid();
		writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		await f.controller.start();
		rmSync(join(f.stateDir, `${pid}.json`));
		await until(() => f.statuses.at(-1) === DISCONNECTED_GLYPH, "the disconnected glyph");
		await f.controller.stop();
		const count = f.statuses.length;
		// A running controller over the same dir is the witness that the write was there to be seen.
		const witness = fixture(f);
		await witness.controller.start();
		try {
			writeStateFile(f.stateDir, makeState({ pid, cwd: f.project, active_buffer: { language: "lua" } }));
			await until(() => witness.statuses.at(-1) === pill("lua"), "a running controller to show the write");
		} finally {
			await witness.controller.stop();
		}
		assert.equal(f.statuses.length, count, "a stopped controller must not touch the UI");
	});

	it("a leftover file of a dead pid is ignored until a live editor rewrites it", async () => {
		const f = fixture();
		writeStateFile(f.stateDir, makeState({ pid: deadPid, cwd: f.project }));
		assert.equal(f.controller.refresh().connection.connected, false);
		assert.equal(f.controller.refresh().editors.length, 0);
		const pid = await liveEditorPid();
		writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		const view = f.controller.refresh();
		assert.equal(view.connection.connected && view.connection.pid, pid);
	});

	it("warns once about an insecure state dir, however often it rescans", async () => {
		const f = fixture();
		writeStateFile(f.stateDir, makeState({ pid: await liveEditorPid(), cwd: f.project }));
		chmodSync(f.stateDir, 0o755);
		for (let i = 0; i < 5; i++) f.controller.refresh();
		assert.equal(f.warnings.length, 1);
		assert.match(f.warnings[0] ?? "", /has group\/other permissions \(0755\)\. Fix: chmod 700/);
		const injection = f.controller.prepareInjection();
		assert.ok(injection.kind === "skip" && injection.reason.includes("0755"));
	});

	interface IgnoreCase {
		name: string;
		/** The global rules file's text; absent: no file. */
		global?: string;
		/** The project rules file's text; absent: no file. */
		project?: string;
		/** Is the project trusted? Default true. */
		trusted?: boolean;
		/** The editor's file, relative to the project. */
		file: string;
		/** The prompt is skipped with a reason matching this; absent: the block is injected. */
		skipped?: RegExp;
	}
	const ignoreCases: IgnoreCase[] = [
		{ name: "global rule", global: "*.env\n", file: "secrets.env", skipped: /ide-context\.ignore \(\*\.env\)/ },
		{
			name: "project rule",
			project: "generated/\n",
			file: "generated/x.ts",
			skipped: /ide-context\.local\.ignore \(generated\/\)/,
		},
		{ name: "trusted project negation re-includes", global: "*.env\n", project: "!public.env\n", file: "public.env" },
		{
			name: "untrusted project negation is dropped, and the reason says trust would re-include the file",
			global: "*.env\n",
			project: "!public.env\n",
			trusted: false,
			file: "public.env",
			skipped:
				/\(\*\.env\); the project's negation re-includes it only in a project you trust \(\/trust, or pi --approve\)$/,
		},
		{
			name: "untrusted project whose negation names another file: no word about trust",
			global: "*.env\n",
			project: "!public.env\n",
			trusted: false,
			file: "private.env",
			skipped: /ide-context\.ignore \(\*\.env\)$/,
		},
		{ name: "no rules", file: "a.env" },
	];
	for (const { name, global, project, trusted = true, file, skipped } of ignoreCases) {
		it(`ignore rules: ${name}`, async () => {
			const f = fixture();
			f.trusted.value = trusted;
			if (global !== undefined) writeFileSync(join(f.agentDir, "ide-context.ignore"), global);
			if (project !== undefined) writeFileSync(join(f.project, ".pi", "ide-context.local.ignore"), project);
			writeStateFile(
				f.stateDir,
				makeState({ pid: await liveEditorPid(), cwd: f.project, active_buffer: { file: join(f.project, file) } }),
			);
			const injection = f.controller.prepareInjection();
			if (skipped === undefined)
				assert.equal(injection.kind, "inject", injection.kind === "skip" ? injection.reason : "");
			else assert.ok(injection.kind === "skip" && skipped.test(injection.reason), JSON.stringify(injection));
		});
	}

	it("an unreadable rules file skips the prompt with one warning each time", async () => {
		const f = fixture();
		mkdirSync(join(f.agentDir, "ide-context.ignore"));
		writeStateFile(f.stateDir, makeState({ pid: await liveEditorPid(), cwd: f.project }));
		const injection = f.controller.prepareInjection();
		assert.ok(injection.kind === "skip" && /cannot read ignore rules .*EISDIR/.test(injection.reason));
		assert.match(f.warnings.at(-1) ?? "", /no editor context sent with this prompt/);
	});

	it("a rules file changed, replaced by a link or deleted between prompts applies at the next prompt", async () => {
		const f = fixture();
		const rules = join(f.agentDir, "ide-context.ignore");
		writeStateFile(
			f.stateDir,
			makeState({ pid: await liveEditorPid(), cwd: f.project, active_buffer: { file: join(f.project, "a.env") } }),
		);
		const kind = () => f.controller.prepareInjection().kind;
		assert.equal(kind(), "inject");
		// Each change lands within a moment of the last read, the same size where it can: read again all the same.
		const steps: { what: string; change: () => void; expect: "inject" | "skip" }[] = [
			{ what: "a rule added", change: () => writeFileSync(rules, "*.env\n"), expect: "skip" },
			{ what: "the same size, another rule", change: () => writeFileSync(rules, "*.txt\n"), expect: "inject" },
			{
				what: "a link to the user's dotfiles",
				change: () => {
					writeFileSync(join(f.root, "dotfiles-ignore"), "a.env\n");
					rmSync(rules);
					symlinkSync(join(f.root, "dotfiles-ignore"), rules);
				},
				expect: "skip",
			},
			{ what: "deleted", change: () => rmSync(rules), expect: "inject" },
		];
		for (const { what, change, expect } of steps) {
			change();
			assert.equal(kind(), expect, what);
		}
	});

	it("the watcher judges the connected editor's new file ahead of the prompt: no real path read then; new rules still apply at once", async () => {
		const realpaths: string[] = [];
		const probe = nodePathProbe();
		const f = fixture(undefined, {
			pathProbe: {
				realpath: (target) => {
					realpaths.push(target);
					return probe.realpath(target);
				},
				isDirectory: (target) => probe.isDirectory(target),
			},
		});
		const pid = await liveEditorPid();
		const rules = join(f.agentDir, "ide-context.ignore");
		const file = join(f.project, "a.env");
		writeFileSync(rules, "*.txt\n");
		const write = (language: string) =>
			writeStateFile(f.stateDir, makeState({ pid, cwd: f.project, active_buffer: { file, language } }));
		write("python");
		await f.controller.start();
		try {
			const kind = () => f.controller.prepareInjection().kind;
			// Each step: the editor writes, the watcher's rescan shows it, rules change (or not), then the prompt.
			const steps: { language: string; rule?: string; expect: "inject" | "skip"; judgedAhead?: boolean }[] = [
				{ language: "lua", expect: "inject", judgedAhead: true },
				// The same size as the rule before: new rules in the moment after the editor's write are obeyed (a
				// lexical match needs no real path).
				{ language: "go", rule: "*.env\n", expect: "skip" },
				{ language: "rust", expect: "skip", judgedAhead: true },
				{ language: "c", rule: "*.txt\n", expect: "inject", judgedAhead: false },
			];
			for (const { language, rule, expect, judgedAhead } of steps) {
				write(language);
				await until(() => f.statuses.at(-1) === pill(language), `the watcher's rescan (${language})`);
				if (rule !== undefined) writeFileSync(rules, rule);
				realpaths.length = 0;
				assert.equal(kind(), expect, language);
				if (judgedAhead !== undefined)
					assert.equal(
						!realpaths.includes(file),
						judgedAhead,
						`${language}: real paths read at the prompt: ${realpaths}`,
					);
			}
		} finally {
			await f.controller.stop();
		}
	});

	it("an editor the start clock follows is not probed with kill(pid, 0) again; once it dies, it is", async () => {
		const probes: number[] = [];
		const clock = new ProcessClock();
		const f = fixture(undefined, {
			startClock: clock,
			probePid: (pid) => {
				probes.push(pid);
				return probePid(pid);
			},
		});
		after(() => clock.close());
		const editor = await spawnLiveEditor();
		writeStateFile(f.stateDir, makeState({ pid: editor.pid, cwd: f.project }));
		assert.equal(f.controller.prepareInjection().kind, "inject");
		assert.deepEqual(probes, [editor.pid], "first seen: probed, then followed");
		assert.equal(f.controller.prepareInjection().kind, "inject");
		assert.deepEqual(probes, [editor.pid], "followed and running: no probe");
		await editor.kill();
		const gone = f.controller.prepareInjection();
		assert.ok(gone.kind === "skip" && gone.stale === "gone", JSON.stringify(gone));
		assert.deepEqual(probes, [editor.pid, editor.pid], "no longer followed: probed (dead)");
	});

	it("status explains several candidates, then the pick sticks until /ide off", async () => {
		const f = fixture();
		const [a, b] = [await liveEditorPid(), await liveEditorPid()];
		writeStateFile(f.stateDir, makeState({ pid: a, cwd: f.project }));
		writeStateFile(f.stateDir, makeState({ pid: b, cwd: f.project }));
		assert.match(f.controller.statusReport(), /2 editors match this project equally, .*pick one with \/ide/);
		f.controller.pick(b);
		const view = f.controller.refresh();
		assert.equal(view.connection.connected && view.connection.pid, b);
		assert.match(f.controller.statusReport(), new RegExp(`Connected: pid ${b} \\(picked\\)`));
		const { rows, actions } = f.controller.pickerChoices(100);
		assert.equal(rows.length, 3);
		assert.deepEqual(actions.at(-1), { kind: "disconnect" });
		f.controller.disconnect();
		assert.equal(f.controller.refresh().connection.connected, false);
		f.controller.resumeAuto();
		assert.equal(f.controller.refresh().connection.connected, false, "still two candidates");
	});

	interface AutoCase {
		name: string;
		/** Editors open in the project: a, or a and b. */
		editors: 1 | 2;
		/** The choice before `/ide auto`: made in an earlier pi session (remembered) or in this one. */
		before: "remembered pick of b" | "pick of b" | "off" | "remembered off" | "nothing";
		/** The Mode line of `/ide status` before `/ide auto`. */
		mode: RegExp;
		/** Connected after `/ide auto` to a, b, or nothing. */
		after: "a" | "b" | null;
	}
	const autoCases: AutoCase[] = [
		{
			name: "a remembered pick's live connection stays (sticky) with two editors open",
			editors: 2,
			before: "remembered pick of b",
			mode: /^Mode: auto-connect, keeping pid \d+ while it runs$/m,
			after: "b",
		},
		{
			name: "this session's pick stays",
			editors: 2,
			before: "pick of b",
			mode: /^Mode: picked pid \d+ with \/ide$/m,
			after: "b",
		},
		{
			name: "after /ide off, two editors: nothing to keep",
			editors: 2,
			before: "off",
			mode: /^Mode: off$/m,
			after: null,
		},
		{
			name: "a remembered /ide off is the mode in force, and auto then connects the only editor",
			editors: 1,
			before: "remembered off",
			mode: /^Mode: off, remembered for this project$/m,
			after: "a",
		},
		{
			name: "a remembered /ide off, two editors: auto has no single candidate",
			editors: 2,
			before: "remembered off",
			mode: /^Mode: off, remembered for this project$/m,
			after: null,
		},
		{ name: "nothing chosen, two editors", editors: 2, before: "nothing", mode: /^Mode: auto-connect$/m, after: null },
	];
	for (const { name, editors, before, mode, after: expected } of autoCases) {
		it(`/ide auto: ${name}; the choice is forgotten`, async () => {
			const choicesDir = mkdtempSync(join(tmpdir(), "pi-ide-choices-"));
			roots.push(choicesDir);
			const store = () => new ChoiceStore(choicesDir, process.getuid?.() ?? 0);
			const first = fixture(undefined, { choiceStore: store() });
			const a = await liveEditorPid();
			writeStateFile(first.stateDir, makeState({ pid: a, cwd: first.project }));
			const b = editors === 2 ? await liveEditorPid() : null;
			if (b !== null) writeStateFile(first.stateDir, makeState({ pid: b, cwd: first.project }));
			first.controller.refresh();
			if (before === "pick of b" || before === "remembered pick of b") first.controller.pick(b ?? a);
			if (before === "off" || before === "remembered off") first.controller.disconnect();
			const remembered = before.startsWith("remembered");
			const session = remembered ? fixture(first, { choiceStore: store() }) : first;
			const connectedPid = () => {
				const connection = session.controller.refresh().connection;
				return connection.connected ? connection.pid : null;
			};
			if (remembered) assert.equal(connectedPid(), before === "remembered off" ? null : b, "the choice applies");
			assert.match(session.controller.statusReport(), mode);
			session.controller.resumeAuto();
			assert.equal(connectedPid(), { a, b, null: null }[String(expected)]);
			assert.equal(connectedPid(), { a, b, null: null }[String(expected)], "and stays so on the next refresh");
			const next = fixture(first, { choiceStore: store() });
			assert.equal(next.controller.refresh().remembered.kind, "none", "a later session remembers nothing");
		});
	}

	it("status shows a stale selection's age and the block that would be sent", async () => {
		const f = fixture();
		const s = makeState({ pid: await liveEditorPid(), cwd: f.project });
		s.active_buffer.selection = {
			start: { line: 1, column: 1 },
			end: { line: 2, column: 3 },
			text: "old",
			selected_at: Date.now() / 1000 - 300,
		};
		writeStateFile(f.stateDir, s);
		const report = f.controller.statusReport();
		assert.match(report, /Selection: stale \(made 5 min ago\), not sent/);
		assert.match(report, new RegExp(`File: ${join(f.project, "src", "main.ts")}`));
	});

	it("the editor pi runs in wins over two equal candidates, and /ide status says why (env, then ancestry)", async () => {
		const [a, b] = [await liveEditorPid(), await liveEditorPid()];
		for (const [hints, why] of [
			[{ envPid: b, ancestors: [] }, `pi runs in this editor's terminal: PI_IDE_EDITOR_PID=${b}`],
			[{ envPid: null, ancestors: [9999999, b] }, `pi runs in this editor's terminal: pid ${b} is an ancestor of pi`],
		] as const) {
			const f = fixture(undefined, { hostHints: hints });
			writeStateFile(f.stateDir, makeState({ pid: a, cwd: f.project }));
			writeStateFile(f.stateDir, makeState({ pid: b, cwd: f.project }));
			const view = f.controller.refresh();
			assert.equal(view.connection.connected && view.connection.pid, b);
			assert.match(f.controller.statusReport(), new RegExp(`Connected: pid ${b} \\(${why}\\)`));
		}
	});

	interface EnvPidCase {
		name: string;
		/** Where the editor named by PI_IDE_EDITOR_PID works. */
		where: "project" | "elsewhere";
		/** Is it one of pi's ancestors? */
		ancestor: boolean;
		/** Connected to it (else to the other editor, the project's only one). */
		connectsToIt: boolean;
		/** A line of /ide status. */
		status: RegExp;
	}
	const envPidCases: EnvPidCase[] = [
		{
			name: "in the project, not an ancestor (VS Code's terminal): the host",
			where: "project",
			ancestor: false,
			connectsToIt: true,
			status: /\(pi runs in this editor's terminal: PI_IDE_EDITOR_PID=\d+\)/,
		},
		{
			name: "in another project, not an ancestor (inherited through tmux): not the host, and status says why",
			where: "elsewhere",
			ancestor: false,
			connectsToIt: false,
			status: /^PI_IDE_EDITOR_PID=\d+: that editor is not an ancestor of pi and works in another project/m,
		},
		{
			name: "in another project, an ancestor (pi in its terminal): the host",
			where: "elsewhere",
			ancestor: true,
			connectsToIt: true,
			status: /\(pi runs in this editor's terminal: PI_IDE_EDITOR_PID=\d+\)/,
		},
	];
	for (const { name, where, ancestor, connectsToIt, status } of envPidCases) {
		it(`PI_IDE_EDITOR_PID names an editor ${name}`, async () => {
			const [inProject, named] = [await liveEditorPid(), await liveEditorPid()];
			const f = fixture(undefined, { hostHints: { envPid: named, ancestors: ancestor ? [named] : [] } });
			writeStateFile(f.stateDir, makeState({ pid: inProject, cwd: f.project, timestamp: 1 }));
			writeStateFile(f.stateDir, makeState({ pid: named, cwd: where === "project" ? f.project : f.root }));
			const view = f.controller.refresh();
			assert.equal(view.connection.connected && view.connection.pid, connectsToIt ? named : inProject);
			assert.match(f.controller.statusReport(), status);
		});
	}

	it("a reused pid (process started after the file's mtime): its file is removed, with a diagnostic", async () => {
		const pid = await liveEditorPid();
		const f = fixture(undefined, { startClock: { startedAt: () => Date.now() / 1000 } });
		const path = writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		const old = Date.now() / 1000 - 60;
		utimesSync(path, old, old);
		const view = f.controller.refresh();
		assert.equal(view.connection.connected, false);
		assert.match(view.diagnostics[0]?.message ?? "", /started after this file was last written .*: removed$/);
		assert.equal(existsSync(path), false);
		// A new editor with that pid writes a new file (after its process started): an editor again.
		writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		const again = f.controller.refresh();
		assert.equal(again.connection.connected && again.connection.pid, pid);
	});

	describe("excludes: the ignore rules for what pi says about a file its tools changed", () => {
		const cases: {
			name: string;
			global?: string;
			project?: string;
			/** The rules file cannot be read (a directory where it should be). */
			unreadable?: boolean;
			file: (f: Fixture) => string;
			excluded: boolean;
		}[] = [
			{ name: "no rules", file: (f) => join(f.project, ".env"), excluded: false },
			{ name: "a global rule", global: ".env\n", file: (f) => join(f.project, ".env"), excluded: true },
			{ name: "a project rule", project: "secrets/\n", file: (f) => join(f.project, "secrets/k.pem"), excluded: true },
			{ name: "another file", global: ".env\n", file: (f) => join(f.project, "src/a.ts"), excluded: false },
			{
				name: "outside pi's project, the global rule",
				global: "*.key\n",
				file: (f) => join(f.root, "x.key"),
				excluded: true,
			},
			{
				name: "rules that cannot be read: excluded",
				unreadable: true,
				file: (f) => join(f.project, "a.ts"),
				excluded: true,
			},
		];
		for (const c of cases) {
			it(`${c.name}: ${c.excluded ? "excluded" : "not excluded"}`, () => {
				const f = fixture();
				if (c.global) writeFileSync(join(f.agentDir, "ide-context.ignore"), c.global);
				if (c.project) writeFileSync(join(f.project, ".pi", "ide-context.local.ignore"), c.project);
				if (c.unreadable) mkdirSync(join(f.agentDir, "ide-context.ignore"));
				f.controller.refresh();
				assert.equal(f.controller.excludes(c.file(f)), c.excluded);
			});
		}
	});

	describe("a gone pi's files are removed on the scan, by the rule of a gone editor's file", () => {
		const OLD = Date.now() / 1000 - 60;
		const cases: {
			name: string;
			/** The pi's pid: a dead one, a live process, or this process (pi itself). */
			pid: "dead" | "live" | "self";
			/** The name under the state dir, `<pid>` standing for the pid. */
			name_: string;
			make?: "file" | "symlink" | "dir";
			/** The file last written a minute ago, and the pid's process started now (a reused pid). */
			reused?: boolean;
			probe?: "unknown" | "foreign";
			removed: boolean;
		}[] = [
			{ name: "message of a dead pi", pid: "dead", name_: "pi-<pid>.json", removed: true },
			{ name: "change set of a dead pi", pid: "dead", name_: "pi-<pid>.review.json", removed: true },
			{ name: "approval request of a dead pi", pid: "dead", name_: "pi-<pid>.approval.json", removed: true },
			{ name: "show and ask requests of a dead pi (v0.5)", pid: "dead", name_: "pi-<pid>.ask.json", removed: true },
			{ name: "a live pi's show and ask requests", pid: "live", name_: "pi-<pid>.ask.json", removed: false },
			{ name: "a live pi's message", pid: "live", name_: "pi-<pid>.json", removed: false },
			{ name: "a live pi's change set", pid: "live", name_: "pi-<pid>.review.json", removed: false },
			{ name: "this pi's own change set", pid: "self", name_: "pi-<pid>.review.json", removed: false },
			{ name: "a reused pid's change set", pid: "live", name_: "pi-<pid>.review.json", reused: true, removed: true },
			{
				name: "kill(pid, 0) says nothing (EINVAL)",
				pid: "dead",
				name_: "pi-<pid>.json",
				probe: "unknown",
				removed: false,
			},
			{ name: "another user's pid", pid: "dead", name_: "pi-<pid>.json", probe: "foreign", removed: false },
			{
				name: "a symlink under a dead pi's name",
				pid: "dead",
				name_: "pi-<pid>.review.json",
				make: "symlink",
				removed: false,
			},
			{ name: "a directory under a dead pi's name", pid: "dead", name_: "pi-<pid>.json", make: "dir", removed: false },
			{
				name: "a temp file of a dead pi (not a pi file name)",
				pid: "dead",
				name_: "pi-<pid>.json.tmp",
				removed: false,
			},
			{ name: "another name", pid: "dead", name_: "pi-<pid>.notes.json", removed: false },
			{ name: "a pid spelled with a leading zero", pid: "dead", name_: "pi-0<pid>.json", removed: false },
		];
		for (const c of cases) {
			it(`${c.name}: ${c.removed ? "removed" : "left alone"}`, async () => {
				const pid = c.pid === "dead" ? deadPid : c.pid === "self" ? process.pid : await liveEditorPid();
				const f = fixture(undefined, {
					...(c.reused ? { startClock: { startedAt: () => Date.now() / 1000 } } : {}),
					...(c.probe === "unknown" ? { probePid: () => ({ unknown: "EINVAL" }) } : {}),
					...(c.probe === "foreign" ? { probePid: () => "foreign" as const } : {}),
				});
				const path = join(f.stateDir, c.name_.replace("<pid>", String(pid)));
				const target = join(f.root, "target.json");
				writeFileSync(target, "{}", { mode: 0o600 });
				if (c.make === "symlink") symlinkSync(target, path);
				else if (c.make === "dir") mkdirSync(path);
				else writeFileSync(path, "{}", { mode: 0o600 });
				if (c.reused) utimesSync(path, OLD, OLD);
				f.controller.refresh();
				assert.equal(existsSync(path), !c.removed);
				assert.equal(existsSync(target), true, "a link's target is never touched");
			});
		}
		it("a pi that dies while pi runs: its files go on the next scan, with no change to the directory", async () => {
			const live = await spawnLiveEditor();
			const f = fixture();
			const path = join(f.stateDir, `pi-${live.pid}.review.json`);
			writeFileSync(path, "{}", { mode: 0o600 });
			f.controller.refresh();
			assert.equal(existsSync(path), true, "its pi runs");
			await live.kill();
			f.controller.refresh();
			assert.equal(existsSync(path), false);
		});
	});

	it("kill(pid, 0) failing with anything but ESRCH: not listed, not removed, a diagnostic", async () => {
		const pid = await liveEditorPid();
		const f = fixture(undefined, { probePid: () => ({ unknown: "EINVAL" }) });
		const path = writeStateFile(f.stateDir, makeState({ pid, cwd: f.project }));
		const view = f.controller.refresh();
		assert.deepEqual(view.editors, []);
		assert.match(view.diagnostics[0]?.message ?? "", new RegExp(`cannot tell whether pid ${pid} runs, .*EINVAL`));
		assert.equal(existsSync(path), true);
	});
});
