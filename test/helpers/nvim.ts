/**
 * Drive a real Neovim over msgpack-rpc for the Neovim client's tests: one fresh `nvim --embed --headless
 * --clean` per test with a UI attached as a GUI attaches one (the client writes nothing for a Neovim without a
 * UI), its cwd and XDG_RUNTIME_DIR in a private temp dir, the plugin on 'runtimepath'. Every
 * step ends with a synchronous request (`nvim_eval('1')`), after which every autocmd the step caused has run;
 * debounced writes are awaited by polling the state file against a deadline, never by sleeping.
 *
 * The suite runs once per Neovim in NVIM_MATRIX (Debian 12's 0.7.2 and Debian 13's 0.10.4 unpacked by
 * scripts/fetch-nvim-0.10.sh). A missing binary fails the test with instructions: it is never skipped.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { Decoder, Encoder } from "@msgpack/msgpack";
import { type EditorState, parseEditorState } from "../../src/protocol/protocol.ts";
import { pollUntil } from "./poll.ts";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const PLUGIN_DIR = join(REPO, "editors/nvim");

export interface NvimFlavour {
	/** "0.7" or "0.10": used in test names. */
	name: string;
	/** Absolute path, or null when it could not be found. */
	bin: string | null;
	/** What to do when `bin` is missing. */
	howToGet: string;
}

function onPath(command: string): string | null {
	for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
		const candidate = join(dir, command);
		if (dir !== "" && existsSync(candidate)) return candidate;
	}
	return null;
}

const systemNvim = process.env["NVIM_BIN"] || onPath("nvim") || (existsSync("/usr/bin/nvim") ? "/usr/bin/nvim" : null);
const nvim010 = join(REPO, ".cache/nvim-0.10/nvim");

/** Every Neovim the suite must pass on. */
export const NVIM_MATRIX: NvimFlavour[] = [
	{
		name: "system",
		bin: systemNvim,
		howToGet: "install Neovim (Debian: apt-get install neovim, which is 0.7.2 on Debian 12) or set NVIM_BIN",
	},
	{
		name: "0.10",
		bin: existsSync(nvim010) ? nvim010 : null,
		howToGet: `run \`bash scripts/fetch-nvim-0.10.sh\` (npm test runs it as pretest) to unpack Debian 13's Neovim into ${dirname(nvim010)}`,
	},
];

/** `NVIM v0.7.2` -> "0.7.2" for a flavour (cached). */
const versions = new Map<string, string>();
export function nvimVersion(bin: string): string {
	let v = versions.get(bin);
	if (v === undefined) {
		const out = execFileSync(bin, ["--version"], { encoding: "utf8" });
		v = /^NVIM v(\S+)/.exec(out)?.[1] ?? "unknown";
		versions.set(bin, v);
	}
	return v;
}

/** Resolve a flavour's binary or throw the instructions (a failed test, not a skip). */
export function requireBin(flavour: NvimFlavour): string {
	if (flavour.bin === null || !existsSync(flavour.bin)) {
		throw new Error(`Neovim "${flavour.name}" is missing: ${flavour.howToGet}`);
	}
	return flavour.bin;
}

// ---------------------------------------------------------------------------------------------------------
// msgpack-rpc

const REQUEST_TIMEOUT_MS = 15_000;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string };

class RpcClient {
	private nextId = 1;
	private pending = new Map<number, Pending>();
	private encoder = new Encoder();
	private closed: Error | null = null;
	private readonly input: NodeJS.WritableStream;

	constructor(input: NodeJS.WritableStream, output: NodeJS.ReadableStream) {
		this.input = input;
		void this.readLoop(output);
	}

	private async readLoop(output: NodeJS.ReadableStream): Promise<void> {
		const decoder = new Decoder();
		try {
			for await (const message of decoder.decodeStream(output as AsyncIterable<Uint8Array>)) {
				if (!Array.isArray(message)) continue;
				if (message[0] === 1) {
					const [, id, error, result] = message as [number, number, unknown, unknown];
					const p = this.pending.get(id);
					if (!p) continue;
					this.pending.delete(id);
					if (error !== null && error !== undefined) {
						const text = Array.isArray(error) ? String(error[1]) : JSON.stringify(error);
						p.reject(new Error(`${p.method}: ${text}`));
					} else {
						p.resolve(result);
					}
				} else if (message[0] === 0) {
					// Neovim never calls us unless asked; answer anyway so it cannot block.
					const [, id] = message as [number, number];
					this.input.write(this.encoder.encode([1, id, "not supported", null]));
				}
			}
		} catch {
			// the stream ended mid-message: the process died
		}
		this.fail(new Error("nvim exited"));
	}

	fail(error: Error): void {
		this.closed = error;
		for (const p of this.pending.values()) p.reject(new Error(`${p.method}: ${error.message}`));
		this.pending.clear();
	}

	request(method: string, params: unknown[]): Promise<unknown> {
		if (this.closed) return Promise.reject(new Error(`${method}: ${this.closed.message}`));
		const id = this.nextId++;
		return new Promise((resolvePromise, reject) => {
			// A request Neovim never answers (it waits for a key: a pending operator, a prompt) must fail the
			// test with its name rather than leave node with nothing to wait for.
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`${method}: no reply within ${REQUEST_TIMEOUT_MS} ms (is Neovim waiting for a key?)`));
			}, REQUEST_TIMEOUT_MS);
			const done =
				<T>(fn: (v: T) => void) =>
				(v: T) => {
					clearTimeout(timer);
					fn(v);
				};
			this.pending.set(id, { resolve: done(resolvePromise), reject: done(reject), method });
			this.input.write(this.encoder.encode([0, id, method, params]));
		});
	}

	notify(method: string, params: unknown[]): void {
		if (!this.closed) this.input.write(this.encoder.encode([2, method, params]));
	}
}

// ---------------------------------------------------------------------------------------------------------
// one Neovim

export interface ExitInfo {
	code: number | null;
	signal: NodeJS.Signals | null;
}

export interface NvimOptions {
	/** Extra `--cmd` commands, run before plugins load (e.g. `let g:pi_ide_disable = 1`). */
	preCmds?: string[];
	/** Extra arguments after the harness's own (files, `-c`, `--listen`...). */
	args?: string[];
	/** Override the XDG_RUNTIME_DIR (default `<tmp>/run`, created 0700); null = unset. */
	runtimeDir?: string | null;
	/** Add 'runtimepath' entries: default just the plugin. */
	rtp?: string[];
	/** Extra environment. */
	env?: Record<string, string>;
	/** Skip `--clean` etc.: the complete argument list after the binary (for startup/zero-config runs). */
	rawArgs?: string[];
	/** Replace `-i NONE` (e.g. a shada file). */
	shada?: string;
	/** Neovim's cwd; default the test's temp dir. */
	cwd?: string;
	/**
	 * Attach a UI after start, as a GUI does over --embed (default true). Without a UI Neovim is a script and
	 * the client writes no state file. `false` = stay headless.
	 */
	ui?: boolean;
	/** The attached UI's size in cells (default 400 x 100, so that no message needs a hit-enter prompt). */
	uiSize?: UiSize;
	/**
	 * Press Enter at a hit-enter prompt while a request waits, as a user would (default true). `false` for a
	 * test that asserts no prompt opens: a request then waits behind the prompt, and nvim_get_mode says so.
	 */
	answerPrompts?: boolean;
}

export interface UiSize {
	width: number;
	height: number;
}

const DEFAULT_UI_SIZE: UiSize = { width: 400, height: 100 };

export interface Nvim {
	bin: string;
	version: string;
	pid: number;
	/** The temp dir (the cwd); removed after the test. */
	tmp: string;
	runtimeDir: string | null;
	stateDir: string;
	statePath: string;
	proc: ChildProcessWithoutNullStreams;
	exited: Promise<ExitInfo>;
	call<T = unknown>(method: string, ...args: unknown[]): Promise<T>;
	notify(method: string, ...args: unknown[]): void;
	/** A synchronous round trip: every event caused by earlier calls has been handled when it resolves. */
	settle(): Promise<void>;
	/** `nvim_exec_lua(code, args)`. */
	lua<T = unknown>(code: string, ...args: unknown[]): Promise<T>;
	command(cmd: string): Promise<void>;
	/** Output of an Ex command, through `execute()`. */
	exec(cmd: string): Promise<string>;
	/** `nvim_input(keys)` then settle. */
	input(keys: string): Promise<void>;
	/** The plugin's status() (counters, last error...). */
	status(): Promise<PluginStatus>;
	/** The state file, parsed and schema-checked, or null when absent. Throws on an invalid file. */
	readState(): EditorState | null;
	/** Poll the state file until `accept` holds (deadline `timeoutMs`). */
	until(accept: (s: EditorState) => boolean, what: string, timeoutMs?: number): Promise<EditorState>;
	/** Poll the plugin status until `accept` holds. */
	untilStatus(accept: (s: PluginStatus) => boolean, what: string, timeoutMs?: number): Promise<PluginStatus>;
	/** `:qa!` as a notification (the request would never be answered), then await the exit. */
	quit(): Promise<ExitInfo>;
	stderr(): string;
}

export interface PluginStatus {
	enabled: boolean;
	dir: string | null;
	path: string | null;
	writes: number;
	skipped: number;
	failures: number;
	last_write: number | null;
	last_error: string | null;
	written: boolean;
	config: { debounce_ms: number; max_selection_bytes: number; enabled: boolean };
}

/** Kept for the Neovim tests: the suite's one polling helper lives in poll.ts. */
export { pollUntil };

/** Start a fresh Neovim for one test; it is killed and its temp dir removed when the test ends. */
export async function startNvim(
	t: Pick<TestContext, "after">,
	flavour: NvimFlavour,
	options: NvimOptions = {},
): Promise<Nvim> {
	const bin = requireBin(flavour);
	const tmp = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-nvim-")));
	const runtimeDir = options.runtimeDir === undefined ? join(tmp, "run") : options.runtimeDir;
	if (options.runtimeDir === undefined) mkdirSync(join(tmp, "run"), { mode: 0o700 });
	const stateDir = runtimeDir ? join(runtimeDir, "pi-ide") : "/tmp/pi-ide";
	const rtp = options.rtp ?? [PLUGIN_DIR];
	const args = options.rawArgs ?? [
		"--embed",
		"--headless",
		"--clean",
		"-n",
		"-i",
		options.shada ?? "NONE",
		...rtp.flatMap((p) => ["--cmd", `set rtp+=${p}`]),
		"--cmd",
		"let g:loaded_python3_provider=0",
		...(options.preCmds ?? []).flatMap((c) => ["--cmd", c]),
		...(options.args ?? []),
	];
	const env: Record<string, string | undefined> = { ...process.env, ...options.env };
	// node:test's own variables must not leak into :terminal shells and the like.
	delete env["NODE_TEST_CONTEXT"];
	if (runtimeDir) env["XDG_RUNTIME_DIR"] = runtimeDir;
	else delete env["XDG_RUNTIME_DIR"];
	// Neovim's own temp dir (/tmp/nvimXXXXXX, with its server socket) goes inside ours: a SIGKILLed Neovim
	// cannot remove it, and the test's cleanup removes `tmp` whole.
	mkdirSync(join(tmp, "nvim-tmp"), { mode: 0o700 });
	env["TMPDIR"] = join(tmp, "nvim-tmp");
	const proc = spawn(bin, args, { cwd: options.cwd ?? tmp, env, stdio: "pipe" });
	let stderr = "";
	proc.stderr.setEncoding("utf8").on("data", (d: string) => {
		stderr += d;
	});
	const exited = new Promise<ExitInfo>((r) => proc.once("exit", (code, signal) => r({ code, signal })));
	const rpc = new RpcClient(proc.stdin, proc.stdout);
	proc.stdin.on("error", () => {});
	void exited.then(() => rpc.fail(new Error("nvim exited")));
	t.after(async () => {
		if (proc.exitCode === null && proc.signalCode === null) {
			proc.kill("SIGKILL");
			await exited;
		}
		rmSync(tmp, { recursive: true, force: true });
	});
	const pid = proc.pid;
	if (pid === undefined) throw new Error(`could not start ${bin}`);
	const statePath = join(stateDir, `${pid}.json`);

	let uiAttached = false;
	const call = <T>(method: string, ...params: unknown[]): Promise<T> => {
		const reply = rpc.request(method, params) as Promise<T>;
		if (uiAttached && options.answerPrompts !== false && !FAST_REQUESTS.has(method)) answerPrompts(rpc, reply);
		return reply;
	};
	const settle = async () => {
		await call("nvim_eval", "1");
	};
	const readState = (): EditorState | null => {
		let text: string;
		try {
			text = readFileSync(statePath, "utf8");
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
			throw error;
		}
		const parsed = parseEditorState(text);
		if (!parsed.ok) throw new Error(`invalid state file ${statePath}: ${parsed.problems.join("; ")}\n${text}`);
		return parsed.state;
	};
	const status = () => call<PluginStatus>("nvim_exec_lua", "return require('pi-ide').status()", []);
	const nv: Nvim = {
		bin,
		version: nvimVersion(bin),
		pid,
		tmp,
		runtimeDir,
		stateDir,
		statePath,
		proc,
		exited,
		call,
		notify: (method, ...params) => rpc.notify(method, params),
		settle,
		lua: (code, ...params) => call("nvim_exec_lua", code, params),
		command: async (cmd) => {
			await call("nvim_command", cmd);
		},
		exec: (cmd) => call<string>("nvim_call_function", "execute", [cmd]),
		input: async (keys) => {
			await call("nvim_input", keys);
			await settle();
		},
		status,
		readState,
		until: async (accept, what, timeoutMs = 5000) => {
			let last: EditorState | null = null;
			try {
				return await pollUntil(
					() => {
						last = readState();
						return last !== null && accept(last) ? last : undefined;
					},
					() => `${what}; last state: ${JSON.stringify(last)}\nstderr: ${stderr}`,
					timeoutMs,
				);
			} catch (error) {
				throw new Error(`${(error as Error).message}\n${await whyNoWrite(rpc)}`);
			}
		},
		untilStatus: async (accept, what, timeoutMs = 5000) => {
			let last: PluginStatus | null = null;
			return pollUntil(
				async () => {
					last = await status();
					return accept(last) ? last : undefined;
				},
				() => `${what}; last status: ${JSON.stringify(last)}`,
				timeoutMs,
			);
		},
		quit: async () => {
			rpc.notify("nvim_command", ["qa!"]);
			return exited;
		},
		stderr: () => stderr,
	};
	// Without --embed there is no RPC channel (startup-time runs and plain `nvim --headless`).
	if (args.includes("--embed")) {
		await settle();
		// Wide and tall by default, so that no message needs a hit-enter prompt (which would hold every later
		// request).
		if (options.ui !== false) {
			await attachUi(nv, options.uiSize);
			uiAttached = true;
		}
	}
	return nv;
}

/** Requests Neovim answers even while it waits for a key. */
const FAST_REQUESTS = new Set([
	"nvim_get_mode",
	"nvim_input",
	"nvim_ui_attach",
	"nvim_ui_detach",
	"nvim_ui_try_resize",
]);

/**
 * With a UI attached, a message taller than the message area (`:PiIde`'s summary, a warning) opens a
 * hit-enter prompt, and every request waits behind it. While `reply` is pending, press Enter at such a
 * prompt, as the user would (nvim_get_mode is answered even then).
 */
function answerPrompts(rpc: RpcClient, reply: Promise<unknown>): void {
	let pending = true;
	reply.then(
		() => {
			pending = false;
		},
		() => {
			pending = false;
		},
	);
	void (async () => {
		while (pending) {
			await new Promise((r) => setTimeout(r, 100));
			if (!pending) return;
			try {
				const mode = (await rpc.request("nvim_get_mode", [])) as { mode: string; blocking: boolean };
				if (pending && mode.blocking && mode.mode.startsWith("r")) rpc.notify("nvim_input", ["<CR>"]);
			} catch {
				return;
			}
		}
	})();
}

/**
 * What Neovim was doing when an awaited write did not come: its mode (answered even while it waits for a key,
 * e.g. at a hit-enter prompt), and, when it can answer, the plugin's status and the last messages.
 */
async function whyNoWrite(rpc: RpcClient): Promise<string> {
	const ask = (method: string, params: unknown[]) =>
		Promise.race([
			rpc.request(method, params),
			new Promise((resolve) => setTimeout(() => resolve("(no answer within 1 s)"), 1000)),
		]).catch((error: unknown) => `(failed: ${(error as Error).message})`);
	const mode = (await ask("nvim_get_mode", [])) as { blocking?: boolean };
	const lines = [`mode: ${JSON.stringify(mode)}`];
	if (mode.blocking !== true) {
		lines.push(
			`plugin status: ${JSON.stringify(await ask("nvim_exec_lua", ["return require('pi-ide').status()", []]))}`,
		);
		lines.push(`messages: ${JSON.stringify(await ask("nvim_call_function", ["execute", ["messages"]]))}`);
	}
	return lines.join("\n");
}

/** Attach a UI as a GUI does (see nvim-with-a-ui notes): UIEnter fires; redraw notifications are ignored. */
export async function attachUi(nv: Pick<Nvim, "call" | "settle">, size: UiSize = DEFAULT_UI_SIZE): Promise<void> {
	await nv.call("nvim_ui_attach", size.width, size.height, { rgb: true, ext_linegrid: true });
	await nv.settle();
}

/** `describe` body helper: run `suite` once per Neovim in the matrix. */
export function forEachNvim(suite: (flavour: NvimFlavour) => void): void {
	for (const flavour of NVIM_MATRIX) suite(flavour);
}

/** Unix seconds now, as the plugin writes them (fractional). */
export const nowSeconds = (): number => Date.now() / 1000;

/** Cleanup helper for files a test creates outside its nvim's temp dir. */
export function removeLater(t: TestContext, path: string): void {
	t.after(() => rmSync(path, { recursive: true, force: true }));
}

/** ~`bytes` of lines mixing code, quotes, backslashes, slashes, tabs, control bytes, DEL and multibyte text. */
export function binaryishLines(bytes: number): string[] {
	const lines: string[] = [];
	let total = 0;
	for (let i = 0; total < bytes; i++) {
		const line = `${i}: "q" \\ a/b\t\u0001\u0002\u001b[0m\u007f é 日本 ${"\u0000".repeat(i % 4)}`;
		lines.push(line);
		total += Buffer.byteLength(line) + 1;
	}
	return lines;
}
