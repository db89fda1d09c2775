/**
 * Fixture "editors" for the end-to-end tests: real live processes (so `kill(pid, 0)` succeeds and the pid is
 * ours), pids that have certainly exited, and the state-file writers (built on the one factory in
 * state-files.ts, re-exported here under the names the tests use).
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { EditorState } from "../../src/protocol/protocol.ts";
import {
	makeSelection,
	makeState,
	nowSeconds,
	type StateOverrides,
	type WriteOptions,
	writeStateFile,
} from "./state-files.ts";

export interface LiveEditor {
	pid: number;
	/** Kill the process and wait until it has exited (its pid is then dead). */
	kill(): Promise<void>;
}

const live = new Set<ChildProcess>();

/** A real long-lived child process standing in for an editor. */
export async function spawnLiveEditor(): Promise<LiveEditor> {
	const child = spawn("sleep", ["600"], { stdio: "ignore" });
	await new Promise<void>((resolve, reject) => {
		child.once("spawn", () => resolve());
		child.once("error", reject);
	});
	if (child.pid === undefined) throw new Error("sleep did not start");
	live.add(child);
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	return {
		pid: child.pid,
		kill: async () => {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
			await exited;
			live.delete(child);
		},
	};
}

/** Kill every live editor this module spawned (for `after` hooks). */
export async function killAllEditors(): Promise<void> {
	await Promise.all(
		[...live].map(async (child) => {
			if (child.exitCode === null && child.signalCode === null) {
				const exited = new Promise((resolve) => child.once("exit", resolve));
				child.kill("SIGKILL");
				await exited;
			}
			live.delete(child);
		}),
	);
}

/** A pid that belonged to a process of ours that has exited and been reaped. */
export async function deadPid(): Promise<number> {
	const child = spawn("true", [], { stdio: "ignore" });
	const pid = child.pid;
	await new Promise<void>((resolve, reject) => {
		child.once("close", () => resolve());
		child.once("error", reject);
	});
	if (pid === undefined) throw new Error("true did not start");
	try {
		process.kill(pid, 0);
		throw new Error(`pid ${pid} was reused already`);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
	}
	return pid;
}

export { makeSelection, makeState, nowSeconds, type StateOverrides, type WriteOptions, writeStateFile };

/** Write arbitrary text atomically as `<stateDir>/<name>` (for malformed, oversized or misnamed files). */
export function writeRawStateFile(stateDir: string, name: string, text: string, mode = 0o600): string {
	return writeStateFile(stateDir, {}, { name, text, mode });
}

/** Write a valid state as an in-flight `<pid>.json.tmp` (a client mid-write: must be ignored). */
export function writeTmpStateFile(stateDir: string, state: EditorState): string {
	return writeStateFile(stateDir, state, { inFlight: true });
}

/** Put a valid state outside the state dir and link `<stateDir>/<pid>.json` to it. Returns the link path. */
export function writeSymlinkedStateFile(stateDir: string, targetDir: string, state: EditorState): string {
	return writeStateFile(stateDir, state, { symlinkTo: targetDir });
}

/** A valid state padded (with an unknown field, which the schema tolerates) past `bytes`. */
export function writeOversizedStateFile(stateDir: string, state: EditorState, bytes = 1024 * 1024 + 1): string {
	return writeStateFile(stateDir, state, { padTo: bytes });
}
