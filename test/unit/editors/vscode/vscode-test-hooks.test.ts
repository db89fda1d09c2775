/**
 * The VS Code extension's test hooks (editors/vscode/src/test-hooks.ts) against the fake VS Code API
 * (test/helpers/fake-vscode.ts): `activate` returns them only when the extension host started with
 * PI_IDE_CONTEXT_TEST_HOOKS=1 (a user's VS Code never has them), and a stop and start in the same extension host
 * is a new window's extension: the old state file removed, the commands disposed and registered again (real VS
 * Code refuses a command registered twice), the state dir read afresh from the environment, pi's messages
 * forgotten. The conformance kit's code-server adapter runs its editor-per-row tables on this.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseEditorState } from "../../../../src/protocol/protocol.ts";
import { STATE_DIR_NAME } from "../../../../src/protocol/state-dir.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";
import { spawnLiveEditor, writeRawStateFile } from "../../../helpers/editors.ts";
import { pollUntil } from "../../../helpers/poll.ts";
import "../../../helpers/fake-vscode-hook.ts";

const vscode = await import("../../../helpers/fake-vscode.ts");
const extension = await import("../../../../editors/vscode/src/extension.ts");
const { TEST_HOOKS_ENV } = await import("../../../../editors/vscode/src/test-hooks.ts");

const root = realpathSync(mkdtempSync(join(tmpdir(), "vscode-test-hooks-")));
after(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;
/** A fresh runtime dir (0700); the state dir is `<it>/pi-ide`. */
function runtimeDir(): string {
	const dir = join(root, `run-${++dirs}`);
	mkdirSync(dir, { mode: 0o700 });
	return dir;
}

const statePath = (runtime: string) => join(runtime, STATE_DIR_NAME, `${process.pid}.json`);

/** The extension's state file in `runtime`, as pi reads it, once `accept` holds. */
function stateIn(runtime: string, accept: (state: { pi: { pid: number } | null }) => boolean, what: string) {
	return pollUntil(() => {
		if (!existsSync(statePath(runtime))) return undefined;
		const parsed = parseEditorState(readFileSync(statePath(runtime), "utf8"));
		return parsed.ok && accept(parsed.state as { pi: { pid: number } | null }) ? parsed.state : undefined;
	}, what);
}

/** Activate the extension in a fresh fake workbench with `env` set in the process (as an extension host has it). */
function activateWith(env: Record<string, string | undefined>) {
	const bench = new vscode.Workbench(root);
	vscode.useWorkbench(bench);
	const context = vscode.makeContext();
	const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
	const restore = () => {
		for (const [key, value] of Object.entries(saved)) {
			if (value === undefined) delete process.env[key];
			else process.env[key] = value;
		}
	};
	Object.assign(process.env, env);
	for (const [key, value] of Object.entries(env)) if (value === undefined) delete process.env[key];
	const hooks = extension.activate(context as never);
	const end = () => {
		try {
			extension.deactivate();
			for (const subscription of context.subscriptions) subscription.dispose();
		} finally {
			bench.dispose();
			vscode.useWorkbench(undefined);
			restore();
		}
	};
	return { bench, hooks, end };
}

describe("VS Code test hooks: only in an extension host started with PI_IDE_CONTEXT_TEST_HOOKS=1", () => {
	const ROWS: { value: string | undefined; hooks: boolean }[] = [
		{ value: undefined, hooks: false },
		{ value: "", hooks: false },
		{ value: "0", hooks: false },
		{ value: "true", hooks: false },
		{ value: "1", hooks: true },
	];
	for (const { value, hooks } of ROWS) {
		test(`${TEST_HOOKS_ENV}=${JSON.stringify(value)}: ${hooks ? "hooks" : "no hooks"}`, async () => {
			const runtime = runtimeDir();
			const started = activateWith({ [TEST_HOOKS_ENV]: value, XDG_RUNTIME_DIR: runtime });
			try {
				await stateIn(runtime, () => true, "the first write");
				assert.equal(started.hooks !== undefined, hooks);
			} finally {
				started.end();
			}
			assert.equal(existsSync(statePath(runtime)), false, "deactivate removes the state file");
		});
	}
});

describe("VS Code test hooks: stop and start is a new window's extension in the same extension host", () => {
	test("the old state file goes, commands are registered once again, the new state dir is used, pi is forgotten", async () => {
		const first = runtimeDir();
		const second = runtimeDir();
		const started = activateWith({ [TEST_HOOKS_ENV]: "1", XDG_RUNTIME_DIR: first });
		const pi = await spawnLiveEditor();
		try {
			const { hooks, bench } = started;
			assert.ok(hooks);
			await stateIn(first, () => true, "the first write");
			writeRawStateFile(
				join(first, STATE_DIR_NAME),
				`pi-${pi.pid}.json`,
				JSON.stringify(
					makePiMessage({ pid: pi.pid, cwd: root, timestamp: Date.now() / 1000, editor_pid: process.pid, seq: 0 }),
				),
			);
			await stateIn(first, (s) => s.pi?.pid === pi.pid, "pi's message handled");
			const commands = [...bench.commands.keys()].sort();
			assert.ok(commands.includes("piIdeContext.showState"));

			hooks.stop();
			assert.equal(existsSync(statePath(first)), false, "stop removes the state file, as a clean exit does");
			assert.deepEqual([...bench.commands.keys()], [], "stop disposes every command");
			hooks.stop(); // idempotent

			process.env["XDG_RUNTIME_DIR"] = second;
			hooks.start();
			assert.deepEqual([...bench.commands.keys()].sort(), commands, "start registers them again");
			const state = await stateIn(second, () => true, "the write in the new state dir");
			assert.equal(state.pi, null, "no memory of the pi the last start handled");
			assert.equal(existsSync(statePath(first)), false, "nothing written in the old state dir");

			hooks.start(); // a start while running stops first: one set of commands, one state file
			assert.deepEqual([...bench.commands.keys()].sort(), commands);
			await stateIn(second, () => true, "the write after a second start");
		} finally {
			await pi.kill();
			started.end();
		}
		assert.equal(existsSync(statePath(second)), false, "deactivate removes the state file");
	});
});
