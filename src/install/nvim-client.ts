/**
 * Zero-config Neovim: make the embedded client (`<package>/editors/nvim`) visible to Neovim by linking it
 * into `<dataHome>/nvim/site/pack/pi-ide-context/start/pi-ide`, a directory Neovim loads at startup without
 * any plugin manager or setup() call. The pi shell calls `installNvimClient` once per session start.
 *
 * Idempotent and careful: it never clobbers anything that is not ours. An existing link that points at
 * another copy of this package (an older install path: the target holds our plugin/pi-ide.lua) is repointed;
 * anything else there (a directory, a file, a link elsewhere, a dangling link) is a "conflict" left alone.
 * Opt-out: `PI_IDE_NO_NVIM_LINK=1` (see `isNvimInstallDisabled`). Errors are returned, never thrown.
 * The rules are written once, in `installEditorClient`; src/install/vim-client.ts links the Vim client with them.
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

export type ClientInstallStatus = "linked" | "already" | "disabled" | "conflict" | "error";

export interface ClientInstallResult {
	status: ClientInstallStatus;
	/** The link's path (`<dataHome>/nvim/site/pack/pi-ide-context/start/pi-ide`). */
	path: string;
	/** One line for the user (announce it once). */
	message: string;
}

export interface NvimInstallOptions {
	/** The installed package's root (the dir holding package.json and editors/nvim). */
	packageRoot: string;
	/** `$XDG_DATA_HOME`, or `~/.local/share` (see `nvimDataHome`). */
	dataHome: string;
	/** From `isNvimInstallDisabled(process.env)`. */
	disabled: boolean;
}

/** `$XDG_DATA_HOME` when it is absolute (the XDG spec ignores relative values), else `<home>/.local/share`. */
export function nvimDataHome(env: NodeJS.ProcessEnv, home: string): string {
	const xdg = env["XDG_DATA_HOME"];
	return xdg && isAbsolute(xdg) ? xdg : join(home, ".local/share");
}

/** `PI_IDE_NO_NVIM_LINK` set to anything but "", "0" or "false" turns the link off. */
export function isNvimInstallDisabled(env: NodeJS.ProcessEnv): boolean {
	return isOptOutSet(env, NVIM_LINK_OPT_OUT);
}

/** An opt-out variable set to anything but "", "0" or "false". */
export function isOptOutSet(env: NodeJS.ProcessEnv, name: string): boolean {
	const value = (env[name] ?? "").trim().toLowerCase();
	return value !== "" && value !== "0" && value !== "false";
}

/**
 * One editor client the package ships and links into that editor's startup packages: Neovim's here, Vim's in
 * src/install/vim-client.ts. The rules of the link are the same for both (installEditorClient).
 */
export interface ClientInstallSpec {
	/** The editor's name in messages: "Neovim", "Vim". */
	editor: string;
	/** The client inside the package, e.g. `editors/nvim`. */
	clientSubdir: string;
	/** The plugin file that marks a copy of this client, and the load guard it holds. */
	markerFile: string;
	markerText: string;
	/** The environment variable that turns the link off. */
	optOut: string;
}

export const NVIM_CLIENT: ClientInstallSpec = {
	editor: "Neovim",
	clientSubdir: NVIM_CLIENT_SUBDIR,
	markerFile: "plugin/pi-ide.lua",
	markerText: "vim.g.loaded_pi_ide",
	optOut: NVIM_LINK_OPT_OUT,
};

/** Does `dir` hold a copy of the client? (The marker is the plugin file's load guard.) */
function isOurClient(spec: ClientInstallSpec, dir: string): boolean {
	try {
		return readFileSync(join(dir, spec.markerFile), "utf8").includes(spec.markerText);
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
export function installNvimClient(opts: NvimInstallOptions): ClientInstallResult {
	return installEditorClient(NVIM_CLIENT, join(opts.dataHome, NVIM_LINK_SUBPATH), opts);
}

export interface ClientInstallOptions {
	/** The installed package's root (the dir holding package.json and the client). */
	packageRoot: string;
	disabled: boolean;
	/** Internal: set on the one re-evaluation after losing a creation race. */
	retried?: boolean;
}

/** Link `spec`'s client at `path` (see installNvimClient for the outcomes). Never throws. */
export function installEditorClient(
	spec: ClientInstallSpec,
	path: string,
	opts: ClientInstallOptions,
): ClientInstallResult {
	const target = resolve(opts.packageRoot, spec.clientSubdir);
	const name = `${spec.editor} client`;
	if (opts.disabled) {
		return { status: "disabled", path, message: `${spec.optOut} is set: not linking the ${name}` };
	}
	try {
		if (!isOurClient(spec, target)) {
			return { status: "error", path, message: `no ${name} in ${target} (${spec.markerFile} missing)` };
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
					return installEditorClient(spec, path, { ...opts, retried: true });
				}
				throw error;
			}
			return { status: "linked", path, message: `${name} linked: ${path} -> ${target}` };
		}
		if (!existing.isSymbolicLink()) {
			const kind = existing.isDirectory() ? "a directory" : "a file";
			return {
				status: "conflict",
				path,
				message: `${path} is ${kind}, not our link; left alone (remove it, or set ${spec.optOut}=1 if you load the client another way)`,
			};
		}
		const current = resolve(dirname(path), readlinkSync(path));
		if (sameDir(current, target) && existsSync(current)) {
			return { status: "already", path, message: `${name} already linked: ${path} -> ${target}` };
		}
		if (!isOurClient(spec, current)) {
			return {
				status: "conflict",
				path,
				message: `${path} links to ${current}, which is not a copy of this client; left alone (remove the link to let pi recreate it)`,
			};
		}
		placeLink(target, path);
		return { status: "linked", path, message: `${name} link moved from ${current} to ${target}` };
	} catch (error) {
		return { status: "error", path, message: `could not link the ${name} at ${path}: ${errorText(error)}` };
	}
}
