/**
 * The JetBrains client (editors/jetbrains), built once per source version for every test file that needs it:
 * editors/jetbrains/build.sh compiles the core, the headless driver, the plugin and the JUnit tests into
 * editors/jetbrains/build/h-<hash of the sources>/, through a private temp dir renamed into place, by one test
 * process at a time (a lock directory), so test files running in parallel share one build and never see half of
 * one. Also the driver (`startJetBrainsDriver`):
 * the client's own code run without an IDE, commands on its stdin, one JSON reply per command on its stdout.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { after, before } from "node:test";
import { promisify } from "node:util";
import { followJsonl, type JsonlChild } from "./jsonl-child.ts";

const REPO = join(import.meta.dirname, "..", "..");
export const JETBRAINS_DIR = join(REPO, "editors", "jetbrains");
const JARS = "/usr/share/java";
export const JUNIT_CONSOLE = join(JARS, "junit-platform-console-standalone.jar");
/** The platform jars the plugin compiles against (build.sh's list), for running the glue's tests. */
export const PLATFORM_CLASSPATH = [
	"intellij-platform-api.jar",
	"intellij-platform-impl.jar",
	"intellij-core.jar",
	"intellij-util.jar",
	"intellij-util-rt.jar",
	"intellij-extensions.jar",
	"org.jetbrains.annotations-java8.jar",
	"libtrove-intellij.jar",
	"jdom2-intellij.jar",
	"guava.jar",
	"picocontainer-1.3.jar",
].map((jar) => join(JARS, jar));

export interface JetBrainsBuild {
	dir: string;
	coreJar: string;
	pluginZip: string;
	/** Class path of the core, the plugin, the tests and the platform jars. */
	testClassPath: string;
}

function files(dir: string): string[] {
	if (!existsSync(dir)) return [];
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		return entry.isDirectory() ? files(path) : [path];
	});
}

function sourceHash(): string {
	const hash = createHash("sha256");
	const inputs = [
		...files(join(JETBRAINS_DIR, "src")),
		...files(join(JETBRAINS_DIR, "resources")),
		join(JETBRAINS_DIR, "build.sh"),
		join(REPO, "src", "context", "languages.ts"),
	].sort();
	for (const path of inputs) hash.update(relative(REPO, path)).update("\0").update(readFileSync(path)).update("\0");
	return hash.digest("hex").slice(0, 16);
}

let built: Promise<JetBrainsBuild> | undefined;

const isAlive = (pid: number): boolean => {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
};

/**
 * Build into `dir` unless another test process is building it already: the first one to create the lock
 * directory builds (into a private temp dir, renamed into place), the others wait for the result; a lock whose
 * builder died is taken over.
 */
async function buildOnce(root: string, dir: string): Promise<void> {
	mkdirSync(root, { recursive: true });
	const lock = `${dir}.lock`;
	for (;;) {
		try {
			mkdirSync(lock);
			writeFileSync(join(lock, "pid"), String(process.pid));
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
		}
		if (existsSync(join(dir, "core.jar"))) return;
		let holder = 0;
		try {
			holder = Number(readFileSync(join(lock, "pid"), "utf8").trim());
		} catch {
			// the builder has not written its pid yet: wait
		}
		if (holder > 0 && !isAlive(holder)) rmSync(lock, { recursive: true, force: true });
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	const temp = join(root, `tmp-${process.pid}-${Date.now()}`);
	try {
		if (existsSync(join(dir, "core.jar"))) return;
		await promisify(execFile)("bash", [join(JETBRAINS_DIR, "build.sh"), "all"], {
			env: { ...process.env, PI_IDE_JETBRAINS_OUT: temp },
			maxBuffer: 16 * 1024 * 1024,
		});
		renameSync(temp, dir);
	} finally {
		rmSync(temp, { recursive: true, force: true });
		rmSync(lock, { recursive: true, force: true });
	}
}

/** Build (or reuse) the client for the current sources. */
export function buildJetBrains(): Promise<JetBrainsBuild> {
	built ??= (async () => {
		const root = join(JETBRAINS_DIR, "build");
		const dir = join(root, `h-${sourceHash()}`);
		if (!existsSync(join(dir, "core.jar"))) await buildOnce(root, dir);
		return {
			dir,
			coreJar: join(dir, "core.jar"),
			pluginZip: join(dir, "pi-ide-context-jetbrains.zip"),
			testClassPath: [join(dir, "test"), join(dir, "core"), join(dir, "plugin"), ...PLATFORM_CLASSPATH].join(":"),
		};
	})();
	return built;
}

export interface DriverReply {
	ok?: boolean;
	error?: string;
	ready?: boolean;
	pid?: number;
	state_file?: string;
	[key: string]: unknown;
}

export interface JetBrainsDriver {
	pid: number;
	stateFile: string;
	child: JsonlChild<DriverReply>;
	/** Send one command and wait for its reply (commands are answered in order). */
	command(cmd: Record<string, unknown>): Promise<DriverReply>;
	/** Ask the driver to quit (it removes its state file) and wait for the exit. */
	quit(): Promise<void>;
	/** Kill however it is. */
	kill(): Promise<void>;
}

export interface DriverOptions {
	project: string;
	env: Record<string, string | undefined>;
	file?: string;
	cursor?: string;
	select?: string;
	product?: string;
	/** Other open project windows: `DIR` or `DIR=FILE` (the file each shows). */
	windows?: string[];
}

/** Start the headless driver and wait until it wrote its first state file. */
export async function startJetBrainsDriver(options: DriverOptions): Promise<JetBrainsDriver> {
	const build = await buildJetBrains();
	const args = ["-jar", build.coreJar, "--project", options.project];
	if (options.file) args.push("--file", options.file);
	if (options.cursor) args.push("--cursor", options.cursor);
	if (options.select) args.push("--select", options.select);
	if (options.product) args.push("--product", options.product);
	for (const window of options.windows ?? []) args.push("--window", window);
	const proc = spawn("java", ["-XX:TieredStopAtLevel=1", "-Xshare:auto", ...args], {
		env: options.env as NodeJS.ProcessEnv,
		stdio: ["pipe", "pipe", "pipe"],
	});
	const child = followJsonl<DriverReply>(proc, { name: "jetbrains driver" });
	const ready = await child.waitFor((m) => m.ready === true, 0, 60_000);
	let replies = 1;
	const command = async (cmd: Record<string, unknown>): Promise<DriverReply> => {
		const index = replies++;
		child.send(cmd);
		const reply = await child.waitFor((_m) => child.messages.length > index, index, 30_000);
		return child.messages[index] ?? reply;
	};
	return {
		pid: ready.pid as number,
		stateFile: ready.state_file as string,
		child,
		command,
		quit: async () => {
			if (proc.exitCode === null && proc.signalCode === null) {
				child.send({ cmd: "quit" });
				await child.close(10_000);
			}
		},
		kill: async () => {
			if (proc.exitCode === null && proc.signalCode === null) {
				const exited = new Promise((resolve) => proc.once("close", resolve));
				proc.kill("SIGKILL");
				await exited;
			}
		},
	};
}

/**
 * The built core's `pi.ide.driver.Ops` (one JSON request a line, one reply each, in order) for the calling suite:
 * started in its `before`, closed in its `after`. Returns `ask`: send a request, get its reply.
 */
export function coreOps<Reply>(): (request: Record<string, unknown>) => Promise<Reply> {
	let ops: JsonlChild<Reply> | undefined;
	let asked = 0;
	before(async () => {
		const build = await buildJetBrains();
		const child = spawn("java", ["-cp", build.coreJar, "pi.ide.driver.Ops"], { stdio: ["pipe", "pipe", "pipe"] });
		ops = followJsonl<Reply>(child, { name: "jetbrains ops" });
	});
	after(async () => {
		await ops?.close();
	});
	return async (request) => {
		if (!ops) throw new Error("the core's Ops process is not started (coreOps() outside a suite?)");
		const index = asked++;
		ops.send(request);
		return await ops.waitFor(() => true, index);
	};
}
