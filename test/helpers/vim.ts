/**
 * Drive a real Vim 9 (Debian 12's vim-nox) for the Vim client's tests. Vim runs in tmux on a private server,
 * so it has a terminal as a user's Vim does; the user's acts (motions, visual selections, `:edit`) are typed
 * with `tmux send-keys`. Questions go through a Vim channel: the test listens on 127.0.0.1, the test vimrc
 * `ch_open`s it, and the test sends `["expr", ..., -id]` messages that Vim answers with `[-id, result]`
 * (`:help channel-commands`). Channel requests run while Vim waits for keys, so every wait polls for what the
 * action must cause (a mode, a cursor position, the state file), never a fixed sleep.
 */
import { execFile, execFileSync } from "node:child_process";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	realpathSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pollUntil } from "./poll.ts";
import { TMUX_CONF } from "./tmux.ts";

const run = promisify(execFile);

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const VIM_PLUGIN_DIR = join(REPO, "editors/vim");
/** Debian 12's vim-nox (Vim 9.0) is the baseline; VIM_BIN points the suite at another Vim 9. */
export const VIM_BIN = process.env["VIM_BIN"] || "/usr/bin/vim.nox";

/** Fail (never skip) with instructions when Vim is missing. */
export function requireVim(): string {
	if (!existsSync(VIM_BIN)) {
		throw new Error(`Vim is missing at ${VIM_BIN}: apt-get install vim-nox (scripts/setup-test-env.sh does it)`);
	}
	return VIM_BIN;
}

/** A private directory per test: run/ (XDG_RUNTIME_DIR), home/, work/ (the cwd). Removed after the test. */
export interface VimDirs {
	root: string;
	run: string;
	home: string;
	work: string;
	stateDir: string;
}

export function makeVimDirs(t?: TestContext): VimDirs {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-vim-")));
	const dirs = { root, run: join(root, "run"), home: join(root, "home"), work: join(root, "work"), stateDir: "" };
	for (const d of [dirs.run, dirs.home, dirs.work]) mkdirSync(d);
	chmodSync(dirs.run, 0o700);
	dirs.stateDir = join(dirs.run, "pi-ide");
	t?.after(() => rmSync(root, { recursive: true, force: true }));
	return dirs;
}

/** The environment Vim starts with: a throwaway HOME, XDG_RUNTIME_DIR in the test dir. */
export function vimEnv(dirs: VimDirs, extra: Record<string, string> = {}): Record<string, string> {
	return {
		PATH: process.env["PATH"] ?? "/usr/bin:/bin",
		HOME: dirs.home,
		XDG_RUNTIME_DIR: dirs.run,
		// Vim's own temp directory (tempname()) goes in the test's dir, removed with it: a Vim the test kills
		// would leave it in /tmp.
		TMPDIR: dirs.root,
		TERM: "tmux-256color",
		LANG: "C.UTF-8",
		LC_ALL: "C.UTF-8",
		...extra,
	};
}

/**
 * The test vimrc: the client from the repository on 'runtimepath' (as the `pack/*\/start` link puts it), no
 * bells, and, when `port` is given, the channel to the test. `PiTestEx(cmd)` runs an Ex command and returns
 * its error or "".
 */
export function writeVimrc(dirs: VimDirs, port: number | null, extra: string[] = [], withPlugin = true): string {
	const path = join(dirs.root, `vimrc-${Math.random().toString(36).slice(2, 8)}`);
	const plugin = withPlugin
		? ["set nocompatible", `let &runtimepath = ${vimString(VIM_PLUGIN_DIR)} . ',' . &runtimepath`, "filetype plugin on"]
		: [];
	const lines = [
		...plugin,
		"set belloff=all noswapfile shortmess+=I laststatus=2 ttimeout ttimeoutlen=10",
		"function! PiTestEx(cmd) abort",
		"  try",
		"    execute a:cmd",
		"    return ''",
		"  catch",
		"    return v:exception",
		"  endtry",
		"endfunction",
		...extra,
	];
	if (port !== null) lines.push(`let g:pi_test_ch = ch_open('127.0.0.1:${port}', {'mode': 'json', 'waittime': 5000})`);
	writeFileSync(path, `${lines.join("\n")}\n`);
	return path;
}

/** A Vim single-quoted string literal. */
export function vimString(s: string): string {
	return `'${s.replaceAll("'", "''")}'`;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** One JSON channel to one Vim: requests by negative id, answers matched by id. */
class Channel {
	private socket: Socket | undefined;
	private buffer = "";
	private nextId = 1;
	private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
	readonly connected: Promise<void>;
	private server: Server;
	port = 0;
	private onConnect: () => void = () => undefined;

	constructor() {
		this.connected = new Promise((resolveConnected) => {
			this.onConnect = resolveConnected;
		});
		this.server = createServer((socket) => {
			if (this.socket) {
				socket.destroy();
				return;
			}
			this.socket = socket;
			socket.setEncoding("utf8");
			socket.on("data", (chunk: string) => this.receive(chunk));
			socket.on("error", () => undefined);
			socket.on("close", () => {
				for (const w of this.waiting.values()) w.reject(new Error("Vim's channel closed"));
				this.waiting.clear();
			});
			this.onConnect();
		});
	}

	async listen(): Promise<number> {
		await new Promise<void>((ok) => this.server.listen(0, "127.0.0.1", ok));
		const address = this.server.address();
		this.port = typeof address === "object" && address ? address.port : 0;
		return this.port;
	}

	/** Split Vim's stream into top-level JSON arrays. */
	private receive(chunk: string): void {
		this.buffer += chunk;
		let depth = 0;
		let inString = false;
		let escaped = false;
		let start = 0;
		for (let i = 0; i < this.buffer.length; i++) {
			const c = this.buffer[i];
			if (inString) {
				if (escaped) escaped = false;
				else if (c === "\\") escaped = true;
				else if (c === '"') inString = false;
			} else if (c === '"') inString = true;
			else if (c === "[") depth++;
			else if (c === "]") {
				depth--;
				if (depth === 0) {
					this.dispatch(this.buffer.slice(start, i + 1));
					start = i + 1;
				}
			}
		}
		this.buffer = this.buffer.slice(start);
	}

	private dispatch(text: string): void {
		let message: unknown;
		try {
			message = JSON.parse(text.trim());
		} catch {
			return;
		}
		if (!Array.isArray(message) || typeof message[0] !== "number") return;
		const w = this.waiting.get(message[0]);
		if (w) {
			this.waiting.delete(message[0]);
			w.resolve(message[1]);
		}
	}

	/** Evaluate a (legacy) expression in Vim. */
	expr(expression: string, timeoutMs = 10_000): Promise<unknown> {
		const socket = this.socket;
		if (!socket) return Promise.reject(new Error("Vim has not connected"));
		const id = -this.nextId++;
		return new Promise((ok, fail) => {
			const timer = setTimeout(() => {
				this.waiting.delete(id);
				fail(new Error(`Vim did not answer ${expression} within ${timeoutMs} ms`));
			}, timeoutMs);
			this.waiting.set(id, {
				resolve: (v) => {
					clearTimeout(timer);
					ok(v);
				},
				reject: (e) => {
					clearTimeout(timer);
					fail(e);
				},
			});
			socket.write(JSON.stringify(["expr", expression, id]));
		});
	}

	close(): void {
		this.socket?.destroy();
		this.server.close();
	}
}

export interface VimOptions {
	dirs?: VimDirs;
	/** Files or arguments after the options. */
	args?: string[];
	/** Extra vimrc lines. */
	vimrc?: string[];
	env?: Record<string, string>;
	cwd?: string;
	cols?: number;
	rows?: number;
	/** Do not wait for the client to start (a test of g:pi_ide_disable, for one). */
	noWaitForClient?: boolean;
	/**
	 * A user's plain `vim`: no `-u`, so Vim reads the (throwaway) HOME's files and loads what `~/.vim/pack`
	 * holds; the test's channel comes in with `--cmd` and the client is not put on 'runtimepath'.
	 */
	zeroConfig?: boolean;
}

export interface Vim {
	pid: number;
	dirs: VimDirs;
	/** `<state dir>/<pid>.json`. */
	stateFile: string;
	/** Evaluate a legacy Vim expression; the result as Vim's channel encodes it. */
	expr<T = unknown>(expression: string): Promise<T>;
	/** Run an Ex command through the channel; throws with Vim's error. */
	ex(command: string): Promise<void>;
	/** Type keys as tmux key names ("Escape", "Enter", "C-v") or literal text with `text`. */
	keys(...keys: string[]): Promise<void>;
	text(literal: string): Promise<void>;
	/** The state file, parsed, or undefined when absent. */
	state(): Record<string, unknown> | undefined;
	/** Poll the state file until `pred` holds; returns it. */
	until(
		pred: (s: Record<string, unknown>) => boolean,
		what: string,
		timeoutMs?: number,
	): Promise<Record<string, unknown>>;
	/** Poll an expression until it is truthy (Vim's 1, or a non-empty string). */
	waitExpr(expression: string, timeoutMs?: number): Promise<void>;
	capture(): Promise<string>;
	/** `:qa!` typed, then wait for Vim to exit. */
	quit(): Promise<void>;
	isAlive(): boolean;
	kill(): void;
}

/**
 * Start Vim in tmux with the client loaded and connected to a test channel; waits for the client to run. With
 * `t`, Vim is killed when the test ends; without, the caller calls `kill()` (the conformance adapter).
 */
export async function startVim(t: TestContext | null, options: VimOptions = {}): Promise<Vim> {
	requireVim();
	const dirs = options.dirs ?? makeVimDirs(t ?? undefined);
	const channel = new Channel();
	const port = await channel.listen();
	const vimrc = writeVimrc(dirs, port, options.vimrc ?? [], !options.zeroConfig);
	const socket = `pivim-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
	const conf = join(dirs.root, `tmux-${socket}.conf`);
	writeFileSync(conf, TMUX_CONF);
	const env = { ...vimEnv(dirs, options.env ?? {}), TMUX_TMPDIR: dirs.root };
	const tmux = async (...args: string[]) =>
		(await run("tmux", ["-u", "-L", socket, "-f", conf, ...args], { env, encoding: "utf8" })).stdout;
	const init = options.zeroConfig ? ["--cmd", `source ${vimrc}`] : ["-u", vimrc, "-i", "NONE", "-n"];
	const command = [VIM_BIN, ...init, ...(options.args ?? [])].map(shellQuote).join(" ");
	await tmux(
		"new-session",
		"-d",
		"-s",
		"vim",
		"-x",
		String(options.cols ?? 120),
		"-y",
		String(options.rows ?? 40),
		"-c",
		options.cwd ?? dirs.work,
		`exec ${command}`,
	);
	const [serverPid, panePid] = (await tmux("display-message", "-p", "-t", "vim", "#{pid} #{pane_pid}"))
		.trim()
		.split(" ")
		.map(Number);
	// A Vim that has exited but is not reaped yet (a zombie: tmux reaps it when it gets to it) is not alive.
	const isAlive = () => {
		try {
			return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${panePid}/stat`, "utf8"));
		} catch {
			return false;
		}
	};
	const kill = () => {
		channel.close();
		for (const pid of [panePid, serverPid]) {
			try {
				if (pid) process.kill(pid, "SIGKILL");
			} catch {
				// already gone
			}
		}
	};
	t?.after(kill);
	await Promise.race([
		channel.connected,
		new Promise((_, fail) => setTimeout(() => fail(new Error("Vim did not open the test channel")), 10_000)),
	]);
	const pid = Number(await channel.expr("getpid()"));
	const stateFile = join(dirs.stateDir, `${pid}.json`);
	const vim: Vim = {
		pid,
		dirs,
		stateFile,
		expr: async <T>(e: string) => (await channel.expr(e)) as T,
		ex: async (cmd) => {
			const err = await channel.expr(`PiTestEx(${vimString(cmd)})`);
			if (err !== "") throw new Error(`Vim: ${cmd}: ${String(err)}`);
		},
		keys: async (...keys) => {
			await tmux("send-keys", "-t", "vim", ...keys);
		},
		text: async (literal) => {
			await tmux("send-keys", "-t", "vim", "-l", literal);
		},
		state: () => readState(stateFile),
		until: (pred, what, timeoutMs = 5000) => {
			let last: Record<string, unknown> | undefined;
			return pollUntil(
				() => {
					last = readState(stateFile);
					return last && pred(last) ? last : undefined;
				},
				() => `state file: ${what}; last seen: ${JSON.stringify(last)}`,
				{ timeoutMs, intervalMs: 20 },
			);
		},
		waitExpr: async (e, timeoutMs = 5000) => {
			let last: unknown;
			await pollUntil(
				async () => {
					last = await channel.expr(e);
					return last === 1 || last === true || (typeof last === "string" && last !== "") ? true : undefined;
				},
				() => `Vim: ${e} (last: ${JSON.stringify(last)})`,
				{ timeoutMs, intervalMs: 20 },
			);
		},
		capture: () => tmux("capture-pane", "-p", "-t", "vim"),
		quit: async () => {
			await tmux("send-keys", "-t", "vim", "Escape", ":qa!", "Enter");
			await pollUntil(() => (isAlive() ? undefined : true), "Vim to exit after :qa!", { intervalMs: 20 });
			channel.close();
		},
		isAlive,
		kill,
	};
	if (!options.noWaitForClient)
		await vim.waitExpr("exists('g:loaded_pi_ide') && pi_ide#Status().enabled").catch(async (error: Error) => {
			throw new Error(`${error.message}\nScreen:\n${await vim.capture()}`);
		});
	return vim;
}

/** Read and parse a state file; undefined when absent or mid-replace. */
export function readState(path: string): Record<string, unknown> | undefined {
	try {
		return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
	} catch {
		return undefined;
	}
}

/** The byte offset `go` takes to reach (line, 1-based byte column). */
export async function offsetOf(vim: Vim, line: number, column: number): Promise<number> {
	return Number(await vim.expr(`line2byte(${line}) + ${column} - 1`));
}

/**
 * Run pure rules of the client in a real Vim (`vim -es`): a Vim9 script whose `c` is `input` (as JSON) and whose
 * `body` builds a dict `out`, returned parsed. An error the script raises fails with Vim's words and where.
 */
export function runVimRules<T>(t: TestContext, input: unknown, body: string): T {
	const dirs = makeVimDirs(t);
	const inFile = join(dirs.root, "in.json");
	const outFile = join(dirs.root, "out.json");
	const script = join(dirs.root, "rules.vim");
	writeFileSync(inFile, JSON.stringify(input));
	writeFileSync(
		script,
		`vim9script\nvar c = json_decode(join(readfile(${vimString(inFile)}), "\\n"))\n${body}\nwritefile([json_encode(out)], ${vimString(outFile)})\n`,
	);
	runVimScript(dirs, [
		`try | source ${script} | catch | call writefile([v:exception, v:throwpoint], ${vimString(outFile)}) | endtry`,
	]);
	const outText = readFileSync(outFile, "utf8");
	// The script's error, when it raised one (written instead of the results).
	if (!outText.startsWith("{")) throw new Error(`the rules script failed: ${outText}`);
	return JSON.parse(outText) as T;
}

/** Run `vim -es` (a script: no UI) with the client's vimrc and `commands`; resolves when Vim exits. */
export function runVimScript(dirs: VimDirs, commands: string[], env: Record<string, string> = {}): string {
	requireVim();
	const vimrc = writeVimrc(dirs, null);
	const args = ["-es", "-u", vimrc, "-i", "NONE", "-n"];
	for (const c of commands) args.push("-c", c);
	args.push("-c", "qa!");
	try {
		return execFileSync(VIM_BIN, args, { cwd: dirs.work, env: vimEnv(dirs, env), encoding: "utf8", timeout: 30_000 });
	} catch (error) {
		const e = error as { stdout?: string; stderr?: string; status?: number };
		throw new Error(`vim -es failed (${e.status}): ${e.stdout ?? ""}${e.stderr ?? ""}`);
	}
}
