/**
 * Drive a real Emacs (Debian 12's emacs-nox, 28.2) with the client in editors/emacs: an `emacs --daemon` on a
 * private socket inside the test's own directory, driven by `emacsclient --eval`, and a tty client frame
 * (`emacsclient -t`) in tmux on a private server when a UI is wanted (the client writes nothing without one).
 * Everything lives in one temp dir (HOME, XDG_RUNTIME_DIR with the state dir, the sockets), removed by the
 * cleanup, which kills the daemon and the tmux server by pid.
 *
 * `act(form)` evaluates FORM in the tty frame's selected window and then runs `post-command-hook`, as the
 * command loop does after every command: what a user's command would cause. `keys(...)` types real keys into
 * the tty frame (tmux send-keys) for the paths that must be the command loop's own.
 */
import { execFile } from "node:child_process";
import {
	copyFileSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type EditorState, parseEditorState } from "../../src/protocol/protocol.ts";
import { pollUntil } from "./poll.ts";
import { TMUX_CONF } from "./tmux.ts";

const run = promisify(execFile);
export const REPO = resolve(fileURLToPath(import.meta.url), "../../..");
export const EMACS_CLIENT_DIR = join(REPO, "editors/emacs");
export const EMACS_BIN = process.env["PI_IDE_EMACS"] || "emacs";
export const EMACSCLIENT_BIN = process.env["PI_IDE_EMACSCLIENT"] || "emacsclient";
/** The test-side Emacs Lisp helpers (frame lookup, a test Flymake backend). */
export const EMACS_TEST_DRIVER = join(REPO, "test/emacs/driver.el");

export interface EmacsOptions {
	/** The daemon's working directory; default the test dir. */
	cwd?: string;
	/** Extra environment (HOME, XDG_RUNTIME_DIR and TMUX_TMPDIR are the test's own unless given here). */
	env?: Record<string, string>;
	/** Attach a tty client frame in tmux (default true). */
	ui?: boolean;
	/** Forms evaluated before `pi-ide-mode` is turned on (e.g. customisations). */
	preEval?: string[];
	/** Turn `pi-ide-mode` on at start (default true). */
	enable?: boolean;
	/** A file to visit in the client frame at start. */
	file?: string;
	/** XDG_RUNTIME_DIR; null to unset it (the state dir is then /tmp/pi-ide). Default `<test dir>/run`. */
	runtimeDir?: string | null;
	/**
	 * Start as a Debian user with an empty init file does (no `-Q`): site-lisp on the load path, site-start, and
	 * the packages Debian installs under /usr/share/emacs/site-lisp/elpa (elpa-flycheck, elpa-vterm) activated
	 * by Emacs's own `package-activate-all`. Default false: `-Q`, Emacs alone.
	 */
	sitePackages?: boolean;
	/**
	 * Load the client byte-compiled, as package.el installs it (`compiledEmacsClient`), rather than from its
	 * sources: a third of the start's time, for suites that start an Emacs per case (the conformance kit).
	 */
	compiled?: boolean;
}

let compiling: Promise<string> | undefined;

/**
 * A byte-compiled copy of editors/emacs, made once per test process in a temp dir of its own (removed when the
 * process exits); a compiler error fails with the compiler's words.
 */
export function compiledEmacsClient(): Promise<string> {
	compiling ??= (async () => {
		const dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-elc-")));
		process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
		const sources = readdirSync(EMACS_CLIENT_DIR).filter((f) => f.endsWith(".el"));
		for (const file of sources) copyFileSync(join(EMACS_CLIENT_DIR, file), join(dir, file));
		const compile = sources.filter((f) => !f.endsWith("-pkg.el"));
		try {
			await run(EMACS_BIN, ["-Q", "--batch", "-L", dir, "-f", "batch-byte-compile", ...compile], {
				cwd: dir,
				timeout: 120_000,
			});
		} catch (error) {
			const e = error as { stdout?: string; stderr?: string };
			throw new Error(`byte-compiling editors/emacs failed: ${e.stdout ?? ""}${e.stderr ?? ""}`);
		}
		return dir;
	})();
	return compiling;
}

export interface Emacs {
	readonly pid: number;
	readonly dir: string;
	readonly stateDir: string;
	readonly statePath: string;
	/** Evaluate a form in the daemon and return what it printed (emacsclient's output, trimmed). */
	eval(form: string): Promise<string>;
	/** Evaluate a form whose value `json-serialize` can encode, and return that value. */
	json<T>(form: string): Promise<T>;
	/** Evaluate FORM in the UI frame's selected window, then run post-command-hook (one "command"). */
	act(form: string): Promise<void>;
	/** Type tmux key names into the tty frame. */
	keys(...keys: string[]): Promise<void>;
	/** The tty frame as text. */
	pane(): Promise<string>;
	/** The state file parsed, or null when absent. */
	readState(): EditorState | null;
	/** Poll the state file until `accept` returns a value. */
	until<T>(accept: (s: EditorState | null) => T | undefined, what: string, timeoutMs?: number): Promise<T>;
	/** Attach the tty client frame (when started with `ui: false`). */
	attachUi(): Promise<void>;
	/** Messages logged in *Messages* since start. */
	messages(): Promise<string[]>;
	/** A clean exit (kill-emacs: the client's kill-emacs-hook runs). */
	quit(): Promise<void>;
	/** End it however it is (idempotent). */
	dispose(): Promise<void>;
}

/** An Emacs Lisp string literal for `s`. */
export const elispString = (s: string): string => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

let counter = 0;

/**
 * Start Emacs; `t` (when given) ends it and removes its directory after the test, otherwise the caller's
 * `dispose()` does (the conformance adapter).
 */
export async function startEmacs(
	t: Pick<TestContext, "after"> | undefined,
	options: EmacsOptions = {},
): Promise<Emacs> {
	const clientDir = options.compiled ? await compiledEmacsClient() : EMACS_CLIENT_DIR;
	counter += 1;
	const dir = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-emacs-")));
	const runtimeDir = options.runtimeDir === undefined ? join(dir, "run") : options.runtimeDir;
	if (options.runtimeDir === undefined) mkdirSync(join(dir, "run"), { mode: 0o700 });
	mkdirSync(join(dir, "home"));
	const stateDir = runtimeDir ? join(runtimeDir, "pi-ide") : "/tmp/pi-ide";
	const socket = join(dir, "server");
	const env: Record<string, string | undefined> = {
		...process.env,
		HOME: join(dir, "home"),
		TMUX_TMPDIR: dir,
		TERM: "xterm-256color",
		...options.env,
	};
	delete env["NODE_TEST_CONTEXT"];
	delete env["TMUX"];
	delete env["PI_IDE_EDITOR_PID"];
	if (runtimeDir) env["XDG_RUNTIME_DIR"] = runtimeDir;
	else delete env["XDG_RUNTIME_DIR"];
	// No native compilation in the background: Debian's Emacs 28 compiles each .elc it loads that has no native
	// code yet, in a child Emacs per file, and a throwaway HOME's cache is always empty. Site packages load before
	// the startup form below, so the early init file (read before site-start; never with -Q) turns it off. The
	// children outlived the daemon killed after each test (one hung for good): about 12 per run of the suite.
	const emacsDir = join(env["HOME"] ?? join(dir, "home"), ".emacs.d");
	const earlyInit = join(emacsDir, "early-init.el");
	mkdirSync(emacsDir, { recursive: true });
	if (!existsSync(earlyInit)) writeFileSync(earlyInit, "(setq native-comp-deferred-compilation nil)\n");

	const tmuxSocket = `piemacs-${process.pid}-${counter}`;
	const conf = join(dir, "tmux.conf");
	writeFileSync(conf, TMUX_CONF);
	const tmux = async (...args: string[]) =>
		(await run("tmux", ["-u", "-L", tmuxSocket, "-f", conf, ...args], { env, encoding: "utf8" })).stdout;
	let tmuxPids: number[] = [];
	let daemonPid = 0;

	const client = async (form: string): Promise<string> => {
		const { stdout } = await run(EMACSCLIENT_BIN, [`--socket-name=${socket}`, "--eval", form], {
			env,
			encoding: "utf8",
			timeout: 20_000,
		});
		return stdout.trim();
	};

	const stop = async () => {
		await tmux("kill-server").catch(() => undefined);
		for (const pid of [...tmuxPids, daemonPid]) {
			try {
				if (pid) process.kill(pid, "SIGKILL");
			} catch {
				// already gone
			}
		}
		tmuxPids = [];
	};
	const dispose = async () => {
		await stop();
		// A child of the killed Emacs (a checker, a diff) may still write into it for a moment: removal retried.
		rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
	};
	t?.after(dispose);

	const enable = options.enable === false ? "" : "(pi-ide-mode 1)";
	// No native compilation in the background under -Q either (no early init file there): two cores are shared
	// by the whole suite.
	const startup = `(progn (setq inhibit-startup-screen t native-comp-deferred-compilation nil) (add-to-list 'load-path ${elispString(clientDir)}) (load ${elispString(EMACS_TEST_DRIVER)} nil t) (require 'pi-ide) ${(options.preEval ?? []).join(" ")} ${enable})`;
	const flags = options.sitePackages ? [] : ["-Q"];
	await run(EMACS_BIN, [...flags, `--daemon=${socket}`, "--eval", startup], {
		cwd: options.cwd ?? dir,
		env,
		timeout: 30_000,
	});
	daemonPid = Number(await client("(emacs-pid)"));

	const decode = (printed: string): string => {
		const m = /^"([A-Za-z0-9+/=]*)"$/.exec(printed);
		if (!m) throw new Error(`emacsclient printed no base64 string: ${printed}`);
		return Buffer.from(m[1] ?? "", "base64").toString("utf8");
	};
	const json = async <T>(form: string): Promise<T> =>
		JSON.parse(
			decode(
				await client(
					`(base64-encode-string (encode-coding-string (json-serialize ${form} :null-object nil :false-object :false) 'utf-8) t)`,
				),
			),
		) as T;

	const attachUi = async () => {
		const fileArg = options.file ? ` ${shellQuote(options.file)}` : "";
		const cwd = options.cwd ?? dir;
		const command = `exec ${shellQuote(EMACSCLIENT_BIN)} --socket-name=${shellQuote(socket)} -t${fileArg}`;
		// A frame deleted earlier leaves its pane (remain-on-exit), and the new UI is started in that pane. Killing
		// the session instead would end the tmux server's last session: the server exits, and a client that
		// reaches it while it exits fails with "server exited unexpectedly" (seen once in CI).
		// A UI attached before (its tmux pids known, until `stop` kills that server) has the session.
		if (tmuxPids.length > 0) await tmux("respawn-pane", "-k", "-t", "emacs", "-c", cwd, command);
		else await tmux("new-session", "-d", "-s", "emacs", "-x", "120", "-y", "40", "-c", cwd, command);
		tmuxPids = (await tmux("display-message", "-p", "-t", "emacs", "#{pid} #{pane_pid}")).trim().split(" ").map(Number);
		await pollUntil(
			async () => ((await client("(pi-ide-test-ui-frame)")) !== "nil" ? true : undefined),
			"the tty client frame to appear",
			{ timeoutMs: 20_000, intervalMs: 20 },
		);
	};

	const statePath = join(stateDir, `${daemonPid}.json`);
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

	const emacs: Emacs = {
		pid: daemonPid,
		dir,
		stateDir,
		statePath,
		eval: client,
		json,
		act: async (form) => {
			await client(`(pi-ide-test-act (lambda () ${form}))`);
		},
		keys: async (...keys) => {
			await tmux("send-keys", "-t", "emacs", ...keys);
		},
		pane: () => tmux("capture-pane", "-p", "-t", "emacs"),
		readState,
		until: (accept, what, timeoutMs = 10_000) => {
			let last: EditorState | null = null;
			return pollUntil(
				() => {
					last = readState();
					return accept(last);
				},
				() => `${what}; last state: ${JSON.stringify(last)}`,
				{ timeoutMs, intervalMs: 20 },
			);
		},
		attachUi,
		messages: async () => (await json<string[]>("(pi-ide-test-messages)")) ?? [],
		quit: async () => {
			await client("(kill-emacs)").catch(() => undefined);
			await pollUntil(
				() => {
					try {
						process.kill(daemonPid, 0);
						return undefined;
					} catch {
						return true;
					}
				},
				"Emacs to exit",
				{ timeoutMs: 10_000, intervalMs: 20 },
			);
		},
		dispose,
	};
	if (options.ui !== false) await attachUi();
	return emacs;
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
