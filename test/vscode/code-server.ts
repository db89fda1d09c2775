/**
 * A real VS Code for the tests: code-server (installed by scripts/setup-vscode-test.sh into
 * .cache/vscode-test) on 127.0.0.1 with throwaway user data, extensions, XDG dirs and TMPDIR, driven by
 * Debian's chromium through playwright-core. Recipe and facts: shared/notes/testing-with-real-vscode.md.
 */

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import playwright from "../../editors/vscode/node_modules/playwright-core/index.js";
import { freePort } from "../helpers/net.ts";
import { REPO } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";

export const CODE_SERVER_VERSION = "4.139.1";
const CACHE = process.env["VSCODE_TEST_CACHE"] ?? join(REPO, ".cache/vscode-test");
const ENTRY = join(CACHE, `code-server-${CODE_SERVER_VERSION}/node_modules/code-server/out/node/entry.js`);
export const CHROMIUM = "/usr/bin/chromium";

/** code-server needs Node 24: the one the setup script installed, matching the root `node` devDependency. */
function node24(): string {
	const arch = process.arch === "arm64" ? "arm64" : "x64";
	return join(CACHE, `node-${process.versions.node}/node_modules/node-linux-${arch}/bin/node`);
}

/** Fail with a remedy (never skip) when the setup script has not run. */
export function assertInstalled(): void {
	const missing = [ENTRY, node24(), CHROMIUM].filter((path) => !existsSync(path));
	if (missing.length > 0) {
		throw new Error(`missing ${missing.join(", ")}: run \`bash scripts/setup-vscode-test.sh\` first`);
	}
}

const EXTENSION_DIR = join(REPO, "editors/vscode");
/** The extension's tools (esbuild, vsce) with the repository's Node first on PATH. */
const toolEnv = () => ({
	...process.env,
	PATH: `${join(EXTENSION_DIR, "node_modules/.bin")}:${join(REPO, "node_modules/.bin")}:${process.env["PATH"] ?? ""}`,
});

/** The packaged extension's id (publisher.name), as `vscode.extensions.getExtension` takes it. */
export const EXTENSION_ID = "pi-ide-context.pi-ide-context";

/** Run `command` in `cwd` with the extension's tools; fail with its output. */
function runTool(command: string, args: string[], cwd: string): void {
	const result = spawnSync(command, args, { cwd, encoding: "utf8", env: toolEnv() });
	if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * Build and package the extension into `dir` (a private copy: test files packaging at the same time never
 * share a file), with the commands of its own `build` and `package` scripts; returns the .vsix path.
 */
export function packageExtension(dir: string): string {
	const stage = join(dir, "pi-ide-context");
	mkdirSync(join(stage, "dist"), { recursive: true });
	const manifest = JSON.parse(readFileSync(join(EXTENSION_DIR, "package.json"), "utf8")) as {
		scripts: { build: string; package: string };
	};
	const quote = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;
	/** `script` with its output option pointed into `dir`; fails when the script no longer has one. */
	const redirect = (script: string | undefined, option: RegExp, value: string) => {
		if (script === undefined || !option.test(script))
			throw new Error(`editors/vscode/package.json: ${option} not in ${script}`);
		return script.replace(option, value);
	};
	runTool(
		"sh",
		["-c", redirect(manifest.scripts.build, /--outfile=\S+/, `--outfile=${quote(join(stage, "dist/extension.js"))}`)],
		EXTENSION_DIR,
	);
	for (const file of ["package.json", "README.md", ".vscodeignore"]) {
		copyFileSync(join(EXTENSION_DIR, file), join(stage, file));
	}
	const vsix = join(dir, "pi-ide-context.vsix");
	const vsce = redirect(manifest.scripts.package.split("&&").at(-1), /--out \S+/, `--out ${quote(vsix)}`);
	runTool("sh", ["-c", vsce], stage);
	return vsix;
}

/**
 * Build and package the test driver extension (test/vscode/driver-extension.ts) in `dir`; returns the .vsix
 * path. It activates at start-up ("*") and listens only when the window's extension environment names its
 * directory (`PI_IDE_KIT_DRIVER_DIR`, through `windowUrl`'s env).
 */
export function packageDriver(dir: string): string {
	mkdirSync(join(dir, "dist"), { recursive: true });
	const manifest = {
		name: "pi-ide-kit-driver",
		displayName: "pi IDE kit driver (tests only)",
		description: "Drives this VS Code for the pi-ide-context tests.",
		version: "0.0.1",
		publisher: "pi-ide-context-tests",
		license: "MIT",
		private: true,
		engines: { vscode: "^1.90.0" },
		activationEvents: ["*"],
		main: "./dist/extension.js",
	};
	writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
	writeFileSync(join(dir, "README.md"), "Test driver for pi-ide-context; not for use.\n");
	runTool(
		"esbuild",
		[
			join(REPO, "test/vscode/driver-extension.ts"),
			"--bundle",
			"--platform=node",
			"--format=cjs",
			"--target=node20",
			"--external:vscode",
			`--outfile=${join(dir, "dist/extension.js")}`,
		],
		dir,
	);
	const vsix = join(dir, "driver.vsix");
	runTool("vsce", ["package", "--no-dependencies", "--skip-license", "--allow-missing-repository", "--out", vsix], dir);
	return vsix;
}

/** Poll `probe` until it returns a value (not undefined); never a fixed sleep. Errors it throws fail at once. */
export function waitFor<T>(
	what: string,
	probe: () => T | undefined | Promise<T | undefined>,
	timeoutMs = 20_000,
): Promise<T> {
	return pollUntil(probe, `waiting for ${what}`, { timeoutMs, intervalMs: 50 });
}

const SETTINGS = {
	"workbench.startupEditor": "none",
	"workbench.tips.enabled": false,
	"workbench.enableExperiments": false,
	"telemetry.telemetryLevel": "off",
	"update.mode": "none",
	"extensions.autoUpdate": false,
	"extensions.autoCheckUpdates": false,
	"chat.disableAIFeatures": true,
	"git.enabled": false,
	"security.workspace.trust.enabled": false,
	"files.autoSave": "off",
	"editor.quickSuggestions": { other: false, comments: false, strings: false },
	"editor.suggestOnTriggerCharacters": false,
	"editor.autoClosingBrackets": "never",
	"editor.autoClosingQuotes": "never",
	"editor.minimap.enabled": false,
	// The tests set the diagnostics they check. VS Code's own TypeScript server starts late, more so under
	// load, and then adds its own to the kit's `.ts` files (CI once saw "Trailing comma not allowed." beside the
	// kit's two): it must not run. JSON's checker stays on: test/vscode/vscode.test.ts relies on it.
	"typescript.validate.enable": false,
	"javascript.validate.enable": false,
};

const CHROMIUM_ARGS = [
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

export interface CodeServer {
	url: string;
	child: ChildProcess;
	log(): string;
	/** SIGTERM, then wait for exit (SIGKILL after 10 s). */
	stop(): Promise<void>;
}

export interface CodeServerOptions {
	/**
	 * Let each window give its extension host an environment of its own (`windowUrl`'s `env`): VS Code honours
	 * the URL's `payload` (its `extensionEnvironment`) only with the smoke-test driver enabled. For many
	 * windows of one code-server, each with its own state dir.
	 */
	perWindowEnv?: boolean;
	/**
	 * How long a window's extension host outlives the window's connection (code-server's reconnection grace
	 * time, 3 hours by default). A closed page does not always get its last message out; after this the
	 * extension host ends by itself, deactivating its extensions, as it does when that message arrives.
	 */
	graceSeconds?: number;
	/** User settings of the caller's on top of the tests' own (`SETTINGS`). */
	settings?: Record<string, unknown>;
}

/**
 * Install `vsix` (one or more) and start code-server on `folder` with `root` as its private world; `env` is
 * added to its environment (it reaches every extension host).
 */
export async function startCodeServer(
	root: string,
	vsix: string | string[],
	folder: string,
	env: Record<string, string>,
	options: CodeServerOptions = {},
): Promise<CodeServer> {
	const dirs = { home: join(root, "home"), ud: join(root, "ud"), exts: join(root, "exts"), tmp: join(root, "tmp") };
	for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
	mkdirSync(join(dirs.ud, "User"), { recursive: true });
	writeFileSync(join(dirs.ud, "User/settings.json"), JSON.stringify({ ...SETTINGS, ...options.settings }, null, 2));
	const node = node24();
	const fullEnv: Record<string, string> = {
		PATH: `${join(node, "..")}:/usr/local/bin:/usr/bin:/bin`,
		HOME: dirs.home,
		XDG_CONFIG_HOME: join(root, "config"),
		XDG_DATA_HOME: join(root, "data"),
		XDG_CACHE_HOME: join(root, "cache"),
		TMPDIR: dirs.tmp,
		LANG: "C.UTF-8",
		...env,
	};
	const common = ["--user-data-dir", dirs.ud, "--extensions-dir", dirs.exts];
	const installs = [vsix].flat().flatMap((path) => ["--install-extension", path]);
	const install = spawnSync(node, [ENTRY, ...common, ...installs], { env: fullEnv, encoding: "utf8" });
	if (install.status !== 0) throw new Error(`--install-extension failed:\n${install.stdout}\n${install.stderr}`);

	const port = await freePort();
	const args = [
		ENTRY,
		"--bind-addr",
		`127.0.0.1:${port}`,
		"--auth",
		"none",
		"--cert",
		"false",
		"--disable-telemetry",
		"--disable-update-check",
		"--disable-workspace-trust",
		"--disable-getting-started-override",
		"--ignore-last-opened",
		...(options.perWindowEnv ? ["--vscode-option", "enable-smoke-test-driver"] : []),
		...(options.graceSeconds === undefined ? [] : ["--reconnection-grace-time", String(options.graceSeconds)]),
		...common,
		folder,
	];
	const child = spawn(node, args, { env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
	let output = "";
	child.stdout?.setEncoding("utf8").on("data", (d: string) => {
		output += d;
	});
	child.stderr?.setEncoding("utf8").on("data", (d: string) => {
		output += d;
	});
	const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
	const url = `http://127.0.0.1:${port}`;
	const server: CodeServer = {
		url,
		child,
		log: () => output,
		stop: async () => {
			if (child.exitCode !== null || child.signalCode !== null) return;
			child.kill("SIGTERM");
			const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
			await exited;
			clearTimeout(timer);
		},
	};
	try {
		await waitFor(
			"code-server /healthz",
			async () => {
				if (child.exitCode !== null) throw new Error(`code-server exited ${child.exitCode}:\n${output}`);
				const response = await fetch(`${url}/healthz`).catch(() => undefined);
				return response?.ok ? true : undefined;
			},
			60_000,
		);
	} catch (error) {
		await server.stop();
		throw error;
	}
	return server;
}

/**
 * The address of a window on `folder` (a `.code-workspace` file: a window on that multi-root workspace); with
 * `env` (code-server started with `perWindowEnv`), the window's extension host gets it on top of code-server's
 * environment.
 */
export function windowUrl(server: CodeServer, folder: string, env?: Record<string, string>): string {
	const query = new URLSearchParams(folder.endsWith(".code-workspace") ? { workspace: folder } : { folder });
	if (env !== undefined) query.set("payload", JSON.stringify([["extensionEnvironment", JSON.stringify(env)]]));
	return `${server.url}/?${query}`;
}

export type Browser = Awaited<ReturnType<typeof playwright.chromium.launchPersistentContext>>;
export type Page = Browser["pages"] extends () => (infer P)[] ? P : never;

/**
 * Navigate `page` to a window (`windowUrl`), waiting only for the navigation to start: the workbench's page
 * load (megabytes of scripts, the first window of a code-server on two loaded cores at the start of a CI run)
 * can outlast playwright's 30 s. Callers wait for what they need next (a selector, the driver's driver.json).
 */
export async function gotoWindow(page: Page, url: string): Promise<void> {
	await page.goto(url, { waitUntil: "commit", timeout: 90_000 });
}

/** Headless Debian chromium with a fresh profile, and its first page. */
export async function openBrowser(profileDir: string): Promise<{ browser: Browser; page: Page }> {
	const browser = await playwright.chromium.launchPersistentContext(profileDir, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		viewport: { width: 1400, height: 900 },
	});
	const page = browser.pages()[0] ?? (await browser.newPage());
	return { browser, page };
}
