/**
 * The file-system half of protocol v0.2 for the TypeScript clients: where the state dir is, when it is safe
 * to write into it, and the atomic write and cleanup of `<pid>.json`. The rules match the Neovim client's:
 * the dir is `$XDG_RUNTIME_DIR/pi-ide`, else `/tmp/pi-ide`, created 0700; a dir that is a symlink, is not
 * owned by us or grants any group/other bit is refused, never "fixed"; the file is written 0600 to
 * `<pid>.json.tmp` and renamed over `<pid>.json`. Every function reports failures as values, never throws.
 */
import { closeSync, fchmodSync, lstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";

export type WriteResult = { ok: true } | { ok: false; error: string };

/**
 * The state dir for an environment: `$XDG_RUNTIME_DIR/pi-ide` when set, else `/tmp/pi-ide`. A relative
 * XDG_RUNTIME_DIR is ignored, as the XDG spec says and as the pi side (src/scan.ts) and nvim do.
 */
export function resolveStateDir(
	env: Readonly<Record<string, string | undefined>>,
	platform: string = process.platform,
): string {
	const runtime = env["XDG_RUNTIME_DIR"];
	if (runtime && isAbsolute(runtime)) return join(runtime, "pi-ide");
	// Windows has no /tmp; the pi side is POSIX-first, so this only keeps a Windows host from failing.
	return platform === "win32" ? join(tmpdir(), "pi-ide") : "/tmp/pi-ide";
}

export function stateFilePath(dir: string, pid: number): string {
	return join(dir, `${pid}.json`);
}

function describe(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string | undefined {
	if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
		return error.code;
	}
	return undefined;
}

/**
 * Create the state dir (0700) if missing, then check it is ours to write into: a real directory (not a
 * symlink), owned by `uid`, with no group/other permission bits. Someone else's dir, or one that others
 * can read or write, is left alone: writing there would leak the user's code or let others plant files.
 */
export function ensureStateDir(dir: string, uid: number | undefined = process.getuid?.()): WriteResult {
	try {
		mkdirSync(dir, { mode: 0o700 });
	} catch (error) {
		if (codeOf(error) !== "EEXIST") return { ok: false, error: `cannot create ${dir}: ${describe(error)}` };
	}
	try {
		const stat = lstatSync(dir);
		if (stat.isSymbolicLink()) return { ok: false, error: `${dir} is a symlink; refusing to write there` };
		if (!stat.isDirectory()) return { ok: false, error: `${dir} is not a directory` };
		if (uid !== undefined && stat.uid !== uid) {
			return { ok: false, error: `${dir} is owned by uid ${stat.uid}, not ${uid}; refusing to write there` };
		}
		if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
			const mode = (stat.mode & 0o777).toString(8);
			return { ok: false, error: `${dir} has mode ${mode}, not 700; refusing to write there (chmod 700 it)` };
		}
		return { ok: true };
	} catch (error) {
		return { ok: false, error: `cannot check ${dir}: ${describe(error)}` };
	}
}

/** Atomically replace `<dir>/<pid>.json` with `content`: exclusive 0600 temp file, then rename. */
export function writeStateFile(
	dir: string,
	pid: number,
	content: string,
	uid: number | undefined = process.getuid?.(),
): WriteResult {
	const safe = ensureStateDir(dir, uid);
	if (!safe.ok) return safe;
	const target = stateFilePath(dir, pid);
	const temp = `${target}.tmp`;
	try {
		// A temp file left by a crash would make the exclusive open fail; remove it (rm never follows a symlink).
		rmSync(temp, { force: true });
		// "wx" = O_CREAT|O_EXCL: never follows or reuses whatever sits at the temp path.
		const fd = openSync(temp, "wx", 0o600);
		try {
			const data = Buffer.from(content, "utf8");
			let written = 0;
			while (written < data.length) written += writeSync(fd, data, written, data.length - written);
			fchmodSync(fd, 0o600); // the open mode is filtered by the umask
		} finally {
			closeSync(fd);
		}
		renameSync(temp, target);
		return { ok: true };
	} catch (error) {
		rmSync(temp, { force: true });
		return { ok: false, error: `cannot write ${target}: ${describe(error)}` };
	}
}

/** Delete `<dir>/<pid>.json` (and a leftover temp file); a file that is already gone is fine. */
export function removeStateFile(dir: string, pid: number): WriteResult {
	const target = stateFilePath(dir, pid);
	try {
		rmSync(target, { force: true });
		rmSync(`${target}.tmp`, { force: true });
		return { ok: true };
	} catch (error) {
		return { ok: false, error: `cannot delete ${target}: ${describe(error)}` };
	}
}
