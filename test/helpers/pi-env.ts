/**
 * A throwaway world for one real pi run: HOME, the agent dir (settings.json + models.json pointing at a
 * private fake model), pi's working dir and XDG_RUNTIME_DIR (so the extension's state dir is
 * `$XDG_RUNTIME_DIR/pi-ide`, created 0700 here). `runPrint` runs `pi -p` in it. Nothing leaks into the real
 * HOME, and `cleanup()` removes it all.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type FakeModel, type FakeModelOptions, startFakeModel } from "./fake-llm.ts";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(REPO, "node_modules/.bin");
/** The product's extension entry; PI_IDE_TEST_EXTENSION runs the suite against another copy (an installed one). */
export const PRODUCT_EXTENSION = process.env["PI_IDE_TEST_EXTENSION"] || join(REPO, "src/index.ts");
export const MODEL_ARG = "fake/fake-model";
export const PI_VERSION = "1.6.0";
/**
 * Default deadline for anything awaited in a pi test (a process start, a record, a pane change). Waits poll,
 * so a generous deadline costs nothing when things work; it only has to survive a loaded 2-core machine,
 * where a pi start can take ten times its quiet ~0.7 s, and over 30 s while four suites that each start
 * editors, language servers and pis run at once (seen in CI).
 */
export const WAIT_MS = 60_000;
/**
 * Compile caches shared by every run (Node's module compile cache for pi's bundle; jiti's transpile cache for
 * the extension, which lives in TMPDIR): each env would otherwise start cold and pay ~0.4 s of CPU per pi start. Both caches are
 * keyed by content, so sharing them cannot change behaviour.
 */
export const SHARED_CACHE = join(REPO, ".cache/e2e");

/** Variables that say how this machine reaches the network: CA files and proxies (both spellings). */
const NETWORK_VARIABLES = new Set([
	"NODE_EXTRA_CA_CERTS",
	"NODE_USE_SYSTEM_CA",
	"SSL_CERT_FILE",
	"SSL_CERT_DIR",
	...["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY"].flatMap((name) => [name, name.toLowerCase()]),
]);

/**
 * npm settings about the network (after `npm_config_`, `_` read as `-`): registries, proxies, CAs and client
 * certificates, TLS strictness, fetch tuning, where the user config lives, and `//host/:_authToken`-style
 * credentials for a private registry. Not npm's lifecycle variables (`npm_config_user_agent`, `prefix`,
 * `node_gyp`...), which describe the outer npm and would mislead an npm started inside a test.
 */
const NPM_NETWORK_SETTING =
	/^(registry|@[^:]+:registry|proxy|https-proxy|http-proxy|noproxy|no-proxy|cafile|ca|cert|key|strict-ssl|userconfig|globalconfig|fetch-.+|maxsockets|local-address|replace-registry-host|\/\/.+)$/;

/**
 * The machine's network settings, for the clean environments tests build: without them a machine behind a
 * TLS-inspecting proxy (a company CA in NODE_EXTRA_CA_CERTS, HTTPS_PROXY) cannot reach the npm registry from
 * a test. The throwaway HOME hides `~/.npmrc`, so the real one is named with NPM_CONFIG_USERCONFIG unless a
 * user config is already given.
 */
export function machineNetworkEnv(
	source: Readonly<Record<string, string | undefined>> = process.env,
	realHome: string = homedir(),
	exists: (path: string) => boolean = existsSync,
): Record<string, string> {
	const kept: Record<string, string> = {};
	for (const [name, value] of Object.entries(source)) {
		if (value === undefined) continue;
		const npmSetting = /^npm_config_(.+)$/i.exec(name)?.[1];
		const keep = npmSetting
			? NPM_NETWORK_SETTING.test(npmSetting.toLowerCase().replaceAll("_", "-"))
			: NETWORK_VARIABLES.has(name);
		if (keep) kept[name] = value;
	}
	const hasUserConfig = Object.keys(kept).some((name) => name.toLowerCase() === "npm_config_userconfig");
	const npmrc = join(realHome, ".npmrc");
	if (!hasUserConfig && exists(npmrc)) kept["NPM_CONFIG_USERCONFIG"] = npmrc;
	return kept;
}

export interface PiEnvOptions extends FakeModelOptions {
	/** Merged over the seed settings.json (quietStartup, lastChangelogVersion, retry off). */
	settings?: Record<string, unknown>;
	/** Create `$XDG_RUNTIME_DIR/pi-ide` (0700). Default true. */
	createStateDir?: boolean;
}

export interface PiEnv {
	root: string;
	home: string;
	agentDir: string;
	/** pi's cwd (a real path: no symlinks in it). */
	workDir: string;
	runtimeDir: string;
	/** `$XDG_RUNTIME_DIR/pi-ide`. */
	stateDir: string;
	env: Record<string, string>;
	model: FakeModel;
	/** Rewrite settings.json: the seed merged with `settings`. */
	writeSettings(settings: Record<string, unknown>): void;
	cleanup(): Promise<void>;
}

export const SEED_SETTINGS = { quietStartup: true, lastChangelogVersion: PI_VERSION, retry: { enabled: false } };

export async function createPiEnv(options: PiEnvOptions = {}): Promise<PiEnv> {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-ide-e2e-")));
	const home = join(root, "home");
	const agentDir = join(home, "agent");
	const workDir = join(root, "work");
	const runtimeDir = join(root, "run");
	const stateDir = join(runtimeDir, "pi-ide");
	mkdirSync(agentDir, { recursive: true });
	mkdirSync(workDir, { recursive: true });
	mkdirSync(runtimeDir, { recursive: true, mode: 0o700 });
	chmodSync(runtimeDir, 0o700);
	if (options.createStateDir !== false) {
		mkdirSync(stateDir, { mode: 0o700 });
		chmodSync(stateDir, 0o700); // mkdir's mode is filtered by the umask
	}
	const model = await startFakeModel(options);
	const writeSettings = (settings: Record<string, unknown>) =>
		writeFileSync(join(agentDir, "settings.json"), `${JSON.stringify({ ...SEED_SETTINGS, ...settings }, null, 2)}\n`);
	writeSettings(options.settings ?? {});
	writeFileSync(join(agentDir, "models.json"), `${JSON.stringify(modelsJson(model.baseUrl), null, 2)}\n`);

	// A clean environment, not process.env: node:test's NODE_TEST_CONTEXT, the caller's HOME or a stray
	// NODE_OPTIONS must not reach pi. PATH is led by the pinned Node 24 (the system Node is too old for pi).
	// The machine's network settings stay (CA, proxies, npm's user config): `pi install npm:...` needs them.
	const { PATH: inheritedPath } = process.env;
	const env: Record<string, string> = {
		...machineNetworkEnv(),
		PATH: `${BIN}:${inheritedPath ?? "/usr/local/bin:/usr/bin:/bin"}`,
		HOME: home,
		PI_CODING_AGENT_DIR: agentDir,
		XDG_RUNTIME_DIR: runtimeDir,
		XDG_CONFIG_HOME: join(home, ".config"),
		XDG_CACHE_HOME: join(home, ".cache"),
		XDG_DATA_HOME: join(home, ".local/share"),
		XDG_STATE_HOME: join(home, ".local/state"),
		TMPDIR: join(SHARED_CACHE, "tmp"),
		NODE_COMPILE_CACHE: join(SHARED_CACHE, "node-compile-cache"),
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		LANG: "C.UTF-8",
		LC_ALL: "C.UTF-8",
		TERM: "xterm-256color",
	};
	mkdirSync(join(SHARED_CACHE, "tmp"), { recursive: true });
	return {
		root,
		home,
		agentDir,
		workDir,
		runtimeDir,
		stateDir,
		env,
		model,
		writeSettings,
		cleanup: async () => {
			await model.close();
			// An editor or language server of the test may still be writing in the dir while it goes (ENOTEMPTY):
			// retry, so this cleanup never fails and the cleanups registered after it (killing those processes) run.
			try {
				rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
			} catch {
				// Left in /tmp rather than failing here: a throwing cleanup would keep the later ones from running.
			}
		},
	};
}

export function modelsJson(baseUrl: string): object {
	return {
		providers: {
			fake: {
				baseUrl,
				api: "openai-completions",
				apiKey: "fake-key",
				models: [
					{
						id: "fake-model",
						name: "Fake Model",
						reasoning: false,
						input: ["text"],
						contextWindow: 128000,
						maxTokens: 4096,
						cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					},
				],
			},
		},
	};
}

export interface RunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	/** Wall time from spawn to exit. */
	ms: number;
	/** performance.now() at exit. */
	exitedAt: number;
}

export interface RunOptions {
	/** The `-e` extension; default the product's src/index.ts; null for none. */
	extension?: string | null;
	/** Kill pi and reject after this long. Default 2 × WAIT_MS. */
	timeoutMs?: number;
	/** pi's cwd; default env.workDir. */
	cwd?: string;
	/** Extra environment variables. */
	env?: Record<string, string>;
	/** A command pi runs under, e.g. `["unshare", "--pid", "--fork", "--mount-proc"]` (a sandbox). */
	wrap?: string[];
}

/** Run a pi CLI command (any args) in the env; resolves when it exits, rejects on timeout. */
export function runPi(env: PiEnv, args: string[], options: RunOptions = {}): Promise<RunResult> {
	const timeoutMs = options.timeoutMs ?? 2 * WAIT_MS;
	const started = performance.now();
	return new Promise((resolvePromise, reject) => {
		const [wrapper, ...wrapperArgs] = options.wrap ?? [];
		const child = spawn(wrapper ?? join(BIN, "pi"), wrapper ? [...wrapperArgs, join(BIN, "pi"), ...args] : args, {
			cwd: options.cwd ?? env.workDir,
			env: { ...env.env, ...options.env },
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => {
			stdout += d;
		});
		child.stderr.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
		});
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(
				new Error(`pi ${args.join(" ")} did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
			);
		}, timeoutMs);
		child.on("error", (error) => {
			clearTimeout(timer);
			reject(error);
		});
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			const exitedAt = performance.now();
			resolvePromise({ code, signal, stdout, stderr, ms: exitedAt - started, exitedAt });
		});
	});
}

/** `pi -p --offline --no-session -e <extension> --model fake/fake-model ...extraArgs ...prompts`. */
export function runPrint(
	env: PiEnv,
	prompts: string[],
	extraArgs: string[] = [],
	options: RunOptions = {},
): Promise<RunResult> {
	const extension = options.extension === undefined ? PRODUCT_EXTENSION : options.extension;
	const args = ["-p", "--offline", "--no-session", ...(extension ? ["-e", extension] : [])];
	args.push("--model", MODEL_ARG, ...extraArgs, ...prompts);
	return runPi(env, args, options);
}

/** Standard `pi` args for an interactive or RPC run with the given extension. */
export function piArgs(extension: string | null, extra: string[] = []): string[] {
	return ["--offline", ...(extension ? ["-e", extension] : []), "--model", MODEL_ARG, ...extra];
}
