/**
 * pi under bubblewrap with a container-like root (issue 23): /usr and /etc read-only (and /bin, /lib... as the
 * host has them), the repository and its Node and pi install read-only, pi's home and the state directory bound at
 * the same paths, the project bound at `/workspace/<name>`, a fresh /proc and /dev, a new pid namespace. pi's
 * tools see only that: a host path of the project names nothing inside.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, join } from "node:path";
import { BIN, type PiEnv, REPO, SHARED_CACHE } from "./pi-env.ts";
import { startAtPid } from "./sandbox.ts";

/** Where the project is inside the sandbox. */
export const sandboxProject = (project: string): string => `/workspace/${basename(project)}`;

/**
 * `bwrap ...` to pass as runPi's `wrap`: `project` (default pi's work dir) is bound at `sandboxProject(project)`,
 * where pi starts. With `piPid` (test/helpers/sandbox.ts's `hostDeadPid`), pi runs at that pid inside, not at 2.
 */
export function bwrapArgs(env: PiEnv, project: string = env.workDir, options: { piPid?: number } = {}): string[] {
	const args = ["bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"];
	for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
		const stats = lstatSync(top, { throwIfNoEntry: false });
		if (stats?.isSymbolicLink()) args.push("--symlink", readlinkSync(top), top);
		else if (stats?.isDirectory()) args.push("--ro-bind", top, top);
	}
	// The extension's source, pi and Node (node_modules may be a link into another checkout: its target too).
	const installed = realpathSync(join(BIN, ".."));
	args.push("--ro-bind", REPO, REPO);
	if (installed !== join(REPO, "node_modules")) args.push("--ro-bind", installed, installed);
	// The compile caches and TMPDIR, pi's home (settings, sessions) and the state directory: at the same paths.
	const cache = realpathSync(SHARED_CACHE);
	args.push("--bind", cache, cache, "--bind", env.home, env.home, "--bind", env.runtimeDir, env.runtimeDir);
	if (!existsSync(project)) throw new Error(`no project at ${project}`);
	const inside = sandboxProject(project);
	// --die-with-parent: a test that kills the run (its timeout) kills pi too, not only the outer bwrap.
	args.push("--bind", project, inside, "--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--die-with-parent");
	args.push("--chdir", inside);
	if (options.piPid !== undefined) args.push(...startAtPid(options.piPid));
	return args;
}
