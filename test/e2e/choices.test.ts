/**
 * Which editor, across time, with the real pi in RPC mode (no session file) and the fake model: an automatic
 * connection is sticky; `/ide` picks and `/ide off` are remembered for the project across pi restarts (and
 * `/ide auto` forgets them); a remembered pick applies to a restarted editor that looks the same, unless that
 * is ambiguous; a state file whose pid was reused by a later process is a killed editor's leftover, removed
 * like those of dead editors, while live editors' files and files that are not ours stay; PI_IDE_EDITOR_PID
 * makes its editor pi's host only when that editor works in pi's project (or is an ancestor of pi).
 */
import assert from "node:assert/strict";
import { chownSync, existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { deadPid, killAllEditors, makeState, spawnLiveEditor, writeStateFile } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { type RpcPi, type RpcRecord, startRpc } from "../helpers/rpc.ts";
import {
	envFor as baseEnvFor,
	fileLine,
	type PlacedEditor,
	placeEditor,
	switchBuffer,
	touch,
} from "../helpers/scenario.ts";

/** Every prompt gets the full block (issue 9 sends only what is new): each prompt here checks the connection. */
const envFor = (t: Parameters<typeof baseEnvFor>[0]) =>
	baseEnvFor(t, { settings: { ideContext: { linkNvim: false, sendUnchanged: true } } });

/** A pi for one stretch of the test; close() ends it (a restart is close() + a new one). */
async function piFor(t: { after(fn: () => unknown): void }, env: PiEnv): Promise<RpcPi> {
	const rpc = await startRpc(env);
	t.after(() => rpc.close());
	// The first pill means the extension has scanned.
	await rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === STATUS_KEY);
	return rpc;
}

/** The file line of the block injected for `prompt`, or null when nothing was injected. */
async function fileFor(rpc: RpcPi, env: PiEnv, prompt: string): Promise<string | null> {
	await rpc.prompt(prompt);
	const injected = injectedAfter(env.model.requests.at(-1), prompt);
	assert.ok(injected.length <= 1, JSON.stringify(injected));
	return injected[0] === undefined ? null : fileLine(injected[0]);
}

/** `/ide <args>`: the notify it answers with (the report for status). */
async function ide(rpc: RpcPi, args: string, accept: (m: string) => boolean = () => true): Promise<string> {
	const since = rpc.records.length;
	await rpc.prompt(`/ide ${args}`.trim());
	const notify = await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "notify" && accept(String(r.message)),
		WAIT_MS,
		since,
	);
	return String(notify.message);
}

const status = (rpc: RpcPi) => ide(rpc, "status", (m) => m.startsWith("State dir:"));

/** Open `/ide`, return the select request; answer with the row matching `row` (or just return the rows). */
async function pick(rpc: RpcPi, row: RegExp): Promise<string[]> {
	const since = rpc.records.length;
	rpc.send({ id: `pick-${since}`, type: "prompt", message: "/ide" });
	const select: RpcRecord = await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "select",
		WAIT_MS,
		since,
	);
	const options = select.options ?? [];
	const choice = options.find((o) => row.test(o));
	assert.ok(choice, `no row matches ${row}: ${JSON.stringify(options)}`);
	rpc.respond(String(select.id), { value: choice });
	await rpc.waitFor((r) => r.type === "response" && r.id === `pick-${since}`, WAIT_MS, since);
	await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "notify" && /connected to/.test(String(r.message)),
		WAIT_MS,
		since,
	);
	return options;
}

/** A live editor in pi's project showing `name`, with launch arguments `argv`. */
const editorWith = (env: PiEnv, name: string, argv: string[] = []): Promise<PlacedEditor> =>
	placeEditor(env, { argv, active_buffer: { file: touch(env.workDir, name) } });

describe("sticky, remembered, no phantoms, no litter", { concurrency: 4 }, () => {
	after(killAllEditors);

	test("an automatic connection is sticky: a second editor in the project neither drops nor steals it; /ide lists both", async (t) => {
		const env = await envFor(t);
		const a = await editorWith(env, "a.ts");
		const rpc = await piFor(t, env);
		assert.equal(await fileFor(rpc, env, "first"), a.state.active_buffer.file);
		const b = await editorWith(env, "b.ts");
		assert.equal(await fileFor(rpc, env, "second editor started"), a.state.active_buffer.file);
		assert.match(await status(rpc), new RegExp(`Connected: pid ${a.pid} \\(connected earlier, kept`));
		const options = await pick(rpc, /b\.ts/);
		assert.equal(options.length, 3, `both editors and the disconnect row: ${JSON.stringify(options)}`);
		assert.equal(await fileFor(rpc, env, "switched"), b.state.active_buffer.file);
	});

	test("a /ide pick of an editor outside pi's project holds while that editor runs, then auto takes over", async (t) => {
		const env = await envFor(t);
		const a = await editorWith(env, "a.ts");
		const elsewhere = join(env.root, "elsewhere");
		mkdirSync(elsewhere, { recursive: true });
		const b = await placeEditor(env, { cwd: elsewhere, active_buffer: { file: touch(elsewhere, "far.ts") } });
		const rpc = await piFor(t, env);
		assert.equal(await fileFor(rpc, env, "first"), a.state.active_buffer.file, "auto: the project's editor");
		await pick(rpc, /far\.ts/);
		assert.equal(await fileFor(rpc, env, "picked"), b.state.active_buffer.file);
		// The picked editor goes on working (a new buffer, still outside the project): the pick holds.
		switchBuffer(env, b, { file: touch(elsewhere, "farther.ts") });
		assert.equal(await fileFor(rpc, env, "still picked"), b.state.active_buffer.file);
		assert.match(await status(rpc), new RegExp(`Connected: pid ${b.pid} \\(picked`));
		await b.kill();
		assert.equal(await fileFor(rpc, env, "picked editor gone"), a.state.active_buffer.file, "back to auto");
	});

	test("a /ide pick is remembered across pi restarts, in <agent dir>/ide-context/choices.json (0600)", async (t) => {
		const env = await envFor(t);
		await editorWith(env, "a.ts");
		const b = await editorWith(env, "b.ts");
		const first = await piFor(t, env);
		assert.equal(await fileFor(first, env, "two candidates"), null);
		await pick(first, /b\.ts/);
		await first.close();
		const store = join(env.agentDir, "ide-context", "choices.json");
		assert.equal(statSync(store).mode & 0o777, 0o600);
		assert.match(readFileSync(store, "utf8"), new RegExp(`"pid": ${b.pid}`));

		const second = await piFor(t, env);
		assert.equal(await fileFor(second, env, "after restart"), b.state.active_buffer.file);
		const report = await status(second);
		assert.match(report, new RegExp(`Connected: pid ${b.pid} \\(remembered /ide pick, same editor\\)`));
		assert.ok(report.includes(store), report);
	});

	test("a remembered pick applies to a restarted editor that looks the same, unless two do", async (t) => {
		const env = await envFor(t);
		await editorWith(env, "a.ts", ["a/"]);
		const b = await editorWith(env, "b.ts", ["b/"]);
		const first = await piFor(t, env);
		await pick(first, /b\.ts/);
		await first.close();

		await b.kill();
		const restarted = await editorWith(env, "b-again.ts", ["b/"]);
		const second = await piFor(t, env);
		assert.equal(await fileFor(second, env, "restarted"), restarted.state.active_buffer.file);
		assert.match(await status(second), /remembered \/ide pick, restarted editor/);
		await second.close();

		await editorWith(env, "b-twin.ts", ["b/"]);
		const third = await piFor(t, env);
		assert.equal(await fileFor(third, env, "ambiguous"), null, "three editors, two look like the pick: none");
		assert.match(await status(third), /Remembered: \/ide pick not applied: pids .* look like the picked editor/);
	});

	test("/ide auto keeps the editor a remembered pick connected, with two editors open (sticky), and forgets the pick", async (t) => {
		const env = await envFor(t);
		await editorWith(env, "a.ts");
		const b = await editorWith(env, "b.ts");
		const first = await piFor(t, env);
		await pick(first, /b\.ts/);
		await first.close();

		const second = await piFor(t, env);
		assert.equal(await fileFor(second, env, "remembered"), b.state.active_buffer.file);
		assert.match(await ide(second, "auto"), new RegExp(`auto-connect on; .*pid ${b.pid}`));
		assert.equal(await fileFor(second, env, "after /ide auto"), b.state.active_buffer.file);
		assert.match(await status(second), new RegExp(`^Mode: auto-connect, keeping pid ${b.pid} while it runs$`, "m"));
		await second.close();

		const third = await piFor(t, env);
		assert.equal(await fileFor(third, env, "forgotten"), null, "two candidates and nothing remembered");
	});

	test("/ide off is remembered across restarts until /ide auto", async (t) => {
		const env = await envFor(t);
		const a = await editorWith(env, "a.ts");
		const first = await piFor(t, env);
		assert.equal(await fileFor(first, env, "connected"), a.state.active_buffer.file);
		await ide(first, "off");
		await first.close();

		const second = await piFor(t, env);
		assert.equal(await fileFor(second, env, "still off"), null);
		const report = await status(second);
		assert.match(report, /Remembered: \/ide off for this project/);
		assert.match(report, /^Mode: off, remembered for this project$/m, "the mode in force, not auto-connect");
		await ide(second, "auto");
		assert.equal(await fileFor(second, env, "auto again"), a.state.active_buffer.file);
		await second.close();

		const third = await piFor(t, env);
		assert.equal(await fileFor(third, env, "auto is remembered too"), a.state.active_buffer.file);
	});

	test("a damaged choices file: a diagnostic in /ide status, no crash; the next /ide choice replaces it", async (t) => {
		const env = await envFor(t);
		const store = join(env.agentDir, "ide-context", "choices.json");
		mkdirSync(join(env.agentDir, "ide-context"), { mode: 0o700 });
		writeFileSync(store, '{"version": 1, "projects": {"/x": {"kind": "pick", "pid": "1"}}', { mode: 0o600 });
		const a = await editorWith(env, "a.ts");
		const rpc = await piFor(t, env);
		assert.equal(await fileFor(rpc, env, "still works"), a.state.active_buffer.file);
		assert.match(await status(rpc), /Skipped remembered \/ide choices: .*choices\.json: not JSON/);
		await ide(rpc, "off");
		assert.match(readFileSync(store, "utf8"), /"kind": "off"/);
		assert.doesNotMatch(await status(rpc), /Skipped remembered/);
	});

	test("a pid reused by a process started after the file was last written is no editor: its file is a leftover, removed", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "a.ts");
		const process = await spawnLiveEditor();
		const state = makeState({ pid: process.pid, cwd: env.workDir, active_buffer: { file } });
		const path = writeStateFile(env.stateDir, state);
		// Last written a minute before that process started: its editor is gone, the pid belongs to someone else.
		const minuteAgo = Date.now() / 1000 - 60;
		utimesSync(path, minuteAgo, minuteAgo);
		const rpc = await piFor(t, env);
		assert.equal(await fileFor(rpc, env, "phantom"), null);
		assert.equal(existsSync(path), false, "a killed editor's leftover (its pid now someone else's) is removed");
		assert.match(await status(rpc), /Editors: none running/);
		// Control: the same file written now (after the process started) is an editor.
		writeStateFile(env.stateDir, { ...state, timestamp: Date.now() / 1000 });
		assert.equal(await fileFor(rpc, env, "written now"), file);
	});

	test("PI_IDE_EDITOR_PID naming an editor in another project (inherited through tmux) is not pi's host; in the project it is", async (t) => {
		const env = await envFor(t);
		const here = await editorWith(env, "a.ts");
		const elsewhere = join(env.root, "other-project");
		mkdirSync(elsewhere, { recursive: true });
		const named = await placeEditor(env, { cwd: elsewhere, active_buffer: { file: touch(elsewhere, "x.ts") } });
		const inherited: PiEnv = { ...env, env: { ...env.env, PI_IDE_EDITOR_PID: String(named.pid) } };
		const rpc = await piFor(t, inherited);
		assert.equal(await fileFor(rpc, env, "which editor"), here.state.active_buffer.file);
		assert.match(
			await status(rpc),
			new RegExp(
				`^PI_IDE_EDITOR_PID=${named.pid}: that editor is not an ancestor of pi and works in another project`,
				"m",
			),
		);
		// Control: that editor opens pi's project next to the other one; the variable now decides between the two.
		const file = touch(env.workDir, "b.ts");
		writeStateFile(env.stateDir, {
			...named.state,
			cwd: env.workDir,
			active_buffer: { ...named.state.active_buffer, file },
			timestamp: Date.now() / 1000,
		});
		assert.equal(await fileFor(rpc, env, "in the project now"), file);
		assert.match(
			await status(rpc),
			new RegExp(`Connected: pid ${named.pid} \\(pi runs in this editor's terminal: PI_IDE_EDITOR_PID=${named.pid}\\)`),
		);
	});

	test("leftovers of dead editors are removed; live editors' files and files that are not ours stay", async (t) => {
		const env = await envFor(t);
		const live = await editorWith(env, "a.ts");
		const dead = writeStateFile(env.stateDir, makeState({ pid: await deadPid(), cwd: env.workDir }));
		const deadElsewhere = writeStateFile(env.stateDir, makeState({ pid: await deadPid(), cwd: "/elsewhere" }));
		const notOurs = writeStateFile(env.stateDir, makeState({ pid: await deadPid(), cwd: env.workDir }));
		const isRoot = process.getuid?.() === 0;
		if (isRoot) chownSync(notOurs, 65534, 65534);
		const misnamed = join(env.stateDir, "0123.json");
		writeFileSync(misnamed, "{}", { mode: 0o600 });
		const rpc = await piFor(t, env);
		assert.equal(await fileFor(rpc, env, "prompt"), live.state.active_buffer.file);
		assert.equal(existsSync(dead), false, "a dead editor's file in this project is removed");
		assert.equal(existsSync(deadElsewhere), false, "and one of another project");
		assert.equal(existsSync(live.path), true, "a live editor's file stays");
		assert.equal(existsSync(misnamed), true, "a file that is not a state file stays");
		if (isRoot) assert.equal(existsSync(notOurs), true, "another user's file stays");
	});
});
