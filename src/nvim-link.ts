/**
 * Zero-config Neovim: make the embedded client (`<package>/editors/nvim`) visible to Neovim by linking it
 * into `<dataHome>/nvim/site/pack/pi-ide-context/start/pi-ide`, a directory Neovim loads at startup without
 * any plugin manager or setup() call. The pi shell calls `linkNvimClient` once per session start.
 *
 * Idempotent and careful: it never clobbers anything that is not ours. An existing link that points at
 * another copy of this package (an older install path: the target holds our plugin/pi-ide.lua) is repointed;
 * anything else there (a directory, a file, a link elsewhere, a dangling link) is a "conflict" left alone.
 * Opt-out: `PI_IDE_NO_NVIM_LINK=1` (see `isNvimLinkDisabled`). Errors are returned, never thrown.
 */
import {
	existsSync,
	lstatSync,
	mkdirSync,
	readFileSync,
	readlinkSync,
	realpathSync,
	renameSync,
	symlinkSync,
	unlinkSync,
} from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";

/** Where the link lives, relative to the data home. */
export const NVIM_LINK_SUBPATH = "nvim/site/pack/pi-ide-context/start/pi-ide";
/** The client inside the package. */
export const NVIM_CLIENT_SUBDIR = "editors/nvim";
/** Environment variable that turns the link off. */
export const NVIM_LINK_OPT_OUT = "PI_IDE_NO_NVIM_LINK";

export type NvimLinkStatus = "linked" | "already" | "disabled" | "conflict" | "error";

export interface NvimLinkResult {
	status: NvimLinkStatus;
	/** The link's path (`<dataHome>/nvim/site/pack/pi-ide-context/start/pi-ide`). */
	path: string;
	/** One line for the user (announce it once). */
	message: string;
}

export interface NvimLinkOptions {
	/** The installed package's root (the dir holding package.json and editors/nvim). */
	packageRoot: string;
	/** `$XDG_DATA_HOME`, or `~/.local/share` (see `nvimDataHome`). */
	dataHome: string;
	/** From `isNvimLinkDisabled(process.env)`. */
	disabled: boolean;
	/** Internal: set on the one re-evaluation after losing a creation race. */
	retried?: boolean;
}

/** `$XDG_DATA_HOME` when it is absolute (the XDG spec ignores relative values), else `<home>/.local/share`. */
export function nvimDataHome(env: NodeJS.ProcessEnv, home: string): string {
	const xdg = env["XDG_DATA_HOME"];
	return xdg && isAbsolute(xdg) ? xdg : join(home, ".local/share");
}

/** `PI_IDE_NO_NVIM_LINK` set to anything but "", "0" or "false" turns the link off. */
export function isNvimLinkDisabled(env: NodeJS.ProcessEnv): boolean {
	const value = (env[NVIM_LINK_OPT_OUT] ?? "").trim().toLowerCase();
	return value !== "" && value !== "0" && value !== "false";
}

/** Does `dir` hold this package's Neovim client? (The marker is the plugin file's load guard.) */
function isOurClient(dir: string): boolean {
	try {
		return readFileSync(join(dir, "plugin/pi-ide.lua"), "utf8").includes("vim.g.loaded_pi_ide");
	} catch {
		return false;
	}
}

function sameDir(a: string, b: string): boolean {
	try {
		return realpathSync(a) === realpathSync(b);
	} catch {
		return resolve(a) === resolve(b);
	}
}

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** Create or repoint the link at `path` atomically: a temp link beside it, renamed over it. */
function placeLink(target: string, path: string): void {
	const tmp = `${path}.tmp-${process.pid}`;
	try {
		unlinkSync(tmp);
	} catch {
		// usually absent
	}
	symlinkSync(target, tmp, "dir");
	try {
		renameSync(tmp, path);
	} catch (error) {
		try {
			unlinkSync(tmp);
		} catch {
			// nothing more to clean up
		}
		throw error;
	}
}

/**
 * Link the package's Neovim client into Neovim's startup packages. Never throws.
 *
 * - "linked": created now (or repointed from an older copy of this package; the message says which);
 * - "already": the link is there and points at this package;
 * - "disabled": the opt-out is set, nothing touched;
 * - "conflict": something that is not ours is at the path, left alone (the message says what to do);
 * - "error": the package has no client or the file system said no.
 */
export function linkNvimClient(opts: NvimLinkOptions): NvimLinkResult {
	const path = join(opts.dataHome, NVIM_LINK_SUBPATH);
	const target = resolve(opts.packageRoot, NVIM_CLIENT_SUBDIR);
	if (opts.disabled) {
		return { status: "disabled", path, message: `${NVIM_LINK_OPT_OUT} is set: not linking the Neovim client` };
	}
	try {
		if (!isOurClient(target)) {
			return { status: "error", path, message: `no Neovim client in ${target} (plugin/pi-ide.lua missing)` };
		}
		let existing: ReturnType<typeof lstatSync> | undefined;
		try {
			existing = lstatSync(path);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
		}
		if (existing === undefined) {
			mkdirSync(dirname(path), { recursive: true });
			try {
				// Not placeLink: a plain symlink() fails with EEXIST instead of replacing whatever appeared meanwhile.
				symlinkSync(target, path, "dir");
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code === "EEXIST" && !opts.retried) {
					return linkNvimClient({ ...opts, retried: true });
				}
				throw error;
			}
			return { status: "linked", path, message: `Neovim client linked: ${path} -> ${target}` };
		}
		if (!existing.isSymbolicLink()) {
			const kind = existing.isDirectory() ? "a directory" : "a file";
			return {
				status: "conflict",
				path,
				message: `${path} is ${kind}, not our link; left alone (remove it, or set ${NVIM_LINK_OPT_OUT}=1 if you load the client another way)`,
			};
		}
		const current = resolve(dirname(path), readlinkSync(path));
		if (sameDir(current, target) && existsSync(current)) {
			return { status: "already", path, message: `Neovim client already linked: ${path} -> ${target}` };
		}
		if (!isOurClient(current)) {
			return {
				status: "conflict",
				path,
				message: `${path} links to ${current}, which is not a copy of this client; left alone (remove the link to let pi recreate it)`,
			};
		}
		placeLink(target, path);
		return { status: "linked", path, message: `Neovim client link moved from ${current} to ${target}` };
	} catch (error) {
		return { status: "error", path, message: `could not link the Neovim client at ${path}: ${errorText(error)}` };
	}
}
