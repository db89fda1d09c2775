/**
 * Drive a real interactive pi inside tmux on a private server (`-L <unique>`, its own conf and socket dir).
 * The pane inherits the environment of the process that starts the tmux server, so every session starts a
 * fresh server with the PiEnv's env (PATH led by the pinned Node). Synchronise by polling the pane every
 * 100 ms, never by sleeping.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { BIN, type PiEnv, WAIT_MS } from "./pi-env.ts";
import { pollUntil } from "./poll.ts";

const run = promisify(execFile);
let counter = 0;

export const TMUX_CONF = [
	"set -g extended-keys on",
	"set -g remain-on-exit on",
	"set -g status off",
	"set -g history-limit 10000",
	"",
].join("\n");

export interface TuiOptions {
	/** Arguments for pi (after the binary). */
	args: string[];
	cols?: number;
	rows?: number;
	/** pi's cwd; default env.workDir. */
	cwd?: string;
}

export interface Tui {
	socket: string;
	/** The visible pane as plain text (no ANSI). */
	capture(): Promise<string>;
	/** Poll every 100 ms until the pane matches; resolves with the pane text, rejects with it on timeout. */
	waitFor(pattern: RegExp | ((pane: string) => boolean), timeoutMs?: number): Promise<string>;
	/** Type literal text (no Enter). */
	sendText(text: string): Promise<void>;
	/** Send tmux key names, e.g. "Enter", "Down", "Escape", "C-d". */
	sendKey(...keys: string[]): Promise<void>;
	/** The last non-blank line of the pane (pi's footer: extension statuses). */
	lastNonBlankLine(): Promise<string>;
	/** Whether the pane's process has exited (remain-on-exit keeps the pane). */
	isDead(): Promise<boolean>;
	close(): Promise<void>;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export async function startTui(env: PiEnv, options: TuiOptions): Promise<Tui> {
	counter += 1;
	const socket = `pie2e-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
	const conf = join(env.root, `tmux-${counter}.conf`);
	writeFileSync(conf, TMUX_CONF);
	// TMUX_TMPDIR puts the socket inside the env root; TMUX must be unset or tmux refuses to nest.
	const tmuxEnv = { ...env.env, TMUX_TMPDIR: env.root };
	const tmux = async (...args: string[]) => {
		const { stdout } = await run("tmux", ["-u", "-L", socket, "-f", conf, ...args], { env: tmuxEnv, encoding: "utf8" });
		return stdout;
	};
	const command = `exec ${shellQuote(join(BIN, "pi"))} ${options.args.map(shellQuote).join(" ")}`;
	await tmux(
		"new-session",
		"-d",
		"-s",
		"pi",
		"-x",
		String(options.cols ?? 120),
		"-y",
		String(options.rows ?? 40),
		"-c",
		options.cwd ?? env.workDir,
		command,
	);
	// close() must not depend on the socket: the env's cleanup (registered first, so run first) removes the
	// directory it lives in, and a server left running keeps pi, its watcher and an inotify instance alive.
	const [serverPid, panePid] = (await tmux("display-message", "-p", "-t", "pi", "#{pid} #{pane_pid}"))
		.trim()
		.split(" ")
		.map(Number);
	const capture = () => tmux("capture-pane", "-p", "-t", "pi");
	const tui: Tui = {
		socket,
		capture,
		waitFor: async (pattern, timeoutMs = WAIT_MS) => {
			const test = typeof pattern === "function" ? pattern : (pane: string) => pattern.test(pane);
			let pane = "";
			return pollUntil(
				async () => {
					pane = await capture();
					return test(pane) ? pane : undefined;
				},
				() => `tmux pane did not match ${String(pattern)}. Pane:\n${pane}`,
				{ timeoutMs, intervalMs: 100 },
			);
		},
		sendText: async (text) => {
			await tmux("send-keys", "-t", "pi", "-l", text);
		},
		sendKey: async (...keys) => {
			await tmux("send-keys", "-t", "pi", ...keys);
		},
		lastNonBlankLine: async () => lastNonBlank(await capture()),
		isDead: async () => (await tmux("display-message", "-p", "-t", "pi", "#{pane_dead}")).trim() === "1",
		close: async () => {
			await tmux("kill-server").catch(() => undefined);
			for (const pid of [panePid, serverPid]) signalIfAlive(pid);
		},
	};
	return tui;
}

/** SIGKILL `pid` unless it has already exited (ESRCH) or is unknown. */
function signalIfAlive(pid: number | undefined): void {
	if (!pid || !Number.isSafeInteger(pid)) return;
	try {
		process.kill(pid, "SIGKILL");
	} catch {
		// Already gone: kill-server did its job.
	}
}

export function lastNonBlank(pane: string): string {
	return (
		pane
			.split("\n")
			.filter((l) => l.trim() !== "")
			.at(-1) ?? ""
	);
}
