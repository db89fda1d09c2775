/**
 * Fixture "editors" for the end-to-end tests: real live processes (so `kill(pid, 0)` succeeds and the pid is
 * ours), pids that have certainly exited, and state files written the way a v0.2 client writes them
 * (`<pid>.json`, atomic tmp + rename, 0600) or deliberately wrong (malformed, symlinked, oversized, misnamed).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ActiveBuffer, EditorState, Selection } from "../../src/protocol.ts";

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

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export interface StateOverrides extends Partial<Omit<EditorState, "active_buffer">> {
	active_buffer?: Partial<ActiveBuffer>;
}

/**
 * A valid v0.2 state: nvim in `cwd` with `file` (default `<cwd>/src/main.ts`) open, TypeScript, cursor 42:10,
 * no selection. `active_buffer` overrides are merged field by field; everything else replaces.
 */
export function makeState(overrides: StateOverrides & { pid: number; cwd: string }): EditorState {
	const { active_buffer: buffer, ...rest } = overrides;
	const file = buffer?.file === undefined ? join(overrides.cwd, "src/main.ts") : buffer.file;
	return {
		timestamp: nowSeconds(),
		app: "nvim",
		...rest,
		active_buffer: {
			file,
			name: file === null ? "[No Name]" : (file.split("/").at(-1) ?? file),
			language: "typescript",
			cursor: { line: 42, column: 10 },
			selection: null,
			modified: false,
			lines_total: 200,
			...buffer,
		},
	};
}

/** A selection of `text` made `ageSeconds` ago (default now: fresh); lines start..start+n-1. */
export function makeSelection(
	text: string,
	options: { startLine?: number; ageSeconds?: number | null } = {},
): Selection {
	const startLine = options.startLine ?? 40;
	const lines = text.split("\n");
	const age = options.ageSeconds === undefined ? 0 : options.ageSeconds;
	return {
		start: { line: startLine, column: 1 },
		end: { line: startLine + lines.length - 1, column: Math.max(1, (lines.at(-1) ?? "").length) },
		text,
		selected_at: age === null ? null : nowSeconds() - age,
	};
}

export interface WriteOptions {
	/** File name; default `<pid>.json`. */
	name?: string;
	/** File mode; default 0o600. */
	mode?: number;
}

/** Write `<stateDir>/<pid>.json` atomically (tmp + rename), mode 0600, like a v0.2 client. Returns the path. */
export function writeStateFile(stateDir: string, state: EditorState | object, options: WriteOptions = {}): string {
	const pid = (state as { pid?: unknown }).pid;
	return writeRawStateFile(stateDir, options.name ?? `${String(pid)}.json`, JSON.stringify(state), options.mode);
}

/** Write arbitrary text atomically as `<stateDir>/<name>` (for malformed, oversized or misnamed files). */
export function writeRawStateFile(stateDir: string, name: string, text: string, mode = 0o600): string {
	const path = join(stateDir, name);
	const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
	writeFileSync(tmp, text, { mode });
	chmodSync(tmp, mode);
	renameSync(tmp, path);
	return path;
}

/** Write a valid state as an in-flight `<pid>.json.tmp` (a client mid-write: must be ignored). */
export function writeTmpStateFile(stateDir: string, state: EditorState): string {
	const path = join(stateDir, `${state.pid}.json.tmp`);
	writeFileSync(path, JSON.stringify(state), { mode: 0o600 });
	return path;
}

/** Put a valid state outside the state dir and link `<stateDir>/<pid>.json` to it. Returns the link path. */
export function writeSymlinkedStateFile(stateDir: string, targetDir: string, state: EditorState): string {
	const target = join(targetDir, `${state.pid}.json`);
	writeFileSync(target, JSON.stringify(state), { mode: 0o600 });
	const link = join(stateDir, `${state.pid}.json`);
	symlinkSync(target, link);
	return link;
}

/** A valid state padded (with an unknown field, which the schema tolerates) past `bytes`. */
export function writeOversizedStateFile(stateDir: string, state: EditorState, bytes = 1024 * 1024 + 1): string {
	const base = JSON.stringify(state).length;
	const padded = { ...state, padding: "x".repeat(Math.max(0, bytes - base)) };
	return writeRawStateFile(stateDir, `${state.pid}.json`, JSON.stringify(padded));
}
