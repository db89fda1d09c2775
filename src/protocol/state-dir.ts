/**
 * The state directory's rules, in one place for pi (src/discovery/scan.ts, src/controller.ts) and the TypeScript
 * editor clients (editors/shared, bundled into the VS Code and Obsidian clients): where the directory is,
 * which names are state files, when the directory may be trusted, and how a file is written into it.
 * The Neovim client's editors/nvim/lua/pi-ide/writer.lua follows the same rules; one table of cases
 * (test/fixtures/state-dir-cases.ts) runs against both, so they cannot drift.
 *
 * - Path: `$XDG_RUNTIME_DIR/pi-ide` when XDG_RUNTIME_DIR is absolute, else `/tmp/pi-ide`.
 * - Trust: a real directory (lstat: a symlink is refused, never followed), owned by the user, with no
 *   group or other permission bit. Anything else is reported, never "fixed".
 * - Creation: only the last component, 0700 (XDG_RUNTIME_DIR is the session's; /tmp always exists).
 * - Writes: `<name>.tmp` opened O_EXCL 0600 (fchmod: the umask can only remove bits), every byte written,
 *   closed, renamed over `<name>`. A leftover temp file that is a regular file of ours (an interrupted
 *   write) is removed and the open retried once; anything else at the temp path is refused and left alone.
 * - Removal: only inside a directory that passes the checks (unlinking through a directory swapped for a
 *   symlink would delete a file elsewhere); unlink never follows a symlink.
 *
 * Dependency-free (node:fs and node:path only). Expected failures are values, never exceptions.
 */
import {
	chmodSync,
	close,
	closeSync,
	constants,
	fchmod,
	fchmodSync,
	fstatSync,
	lstatSync,
	mkdirSync,
	openSync,
	readlinkSync,
	readSync,
	rename,
	renameSync,
	type Stats,
	unlinkSync,
	write,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { MAX_STATE_FILE_BYTES } from "./limits.ts";
import { PID_NAMESPACE_PATTERN } from "./liveness.ts";

export const STATE_DIR_NAME = "pi-ide";

export { MAX_STATE_FILE_BYTES };

/** Suffix of the temp file a write goes through: `<pid>.json.tmp`. */
export const TEMP_SUFFIX = ".tmp";

/** Why a state directory may not be used. */
export type StateDirProblem =
	| "missing"
	| "symlink"
	| "not-directory"
	| "foreign-owner"
	| "open-permissions"
	| "uninspectable"
	| "uncreatable";

export type DirHealth =
	| { ok: true; dir: string }
	| { ok: false; dir: string; problem: StateDirProblem; missing: boolean; reason: string; remedy?: string };

/** Why a write or removal failed: the directory's problem, something in the way of the temp file, or I/O. */
export type WriteProblem = StateDirProblem | "temp-in-the-way" | "io";

export type WriteResult = { ok: true } | { ok: false; problem: WriteProblem; error: string };

/**
 * `$XDG_RUNTIME_DIR/pi-ide` when XDG_RUNTIME_DIR is an absolute path, else `/tmp/pi-ide`. The XDG spec
 * says a relative value must be ignored. Windows has no /tmp: its temp dir keeps a Windows host working.
 */
export function resolveStateDir(
	env: Readonly<Record<string, string | undefined>> = process.env,
	platform: string = process.platform,
): string {
	const runtimeDir = env["XDG_RUNTIME_DIR"];
	if (runtimeDir && isAbsolute(runtimeDir)) return join(runtimeDir, STATE_DIR_NAME);
	return platform === "win32" ? join(tmpdir(), STATE_DIR_NAME) : join("/tmp", STATE_DIR_NAME);
}

/** `<pid>.json`. */
export function stateFileName(pid: number): string {
	return `${pid}.json`;
}

export function stateFilePath(dir: string, pid: number): string {
	return join(dir, stateFileName(pid));
}

/** Largest pid a state file name may carry (pid_t is a signed 32-bit integer). */
const MAX_PID = 2 ** 31 - 1;

/**
 * The pid an editor state file name stands for, or undefined when `name` is not one. Only the canonical
 * spelling counts: `<pid>.json` with the pid in decimal, no sign, no leading zero, so `0123.json` cannot
 * alias `123.json` (nor `0.json` stand for anything).
 */
export function parseStateFileName(name: string): number | undefined {
	const match = /^([1-9][0-9]{0,9})\.json$/.exec(name);
	if (!match?.[1]) return undefined;
	const pid = Number(match[1]);
	return pid <= MAX_PID ? pid : undefined;
}

/** What lstat says about a path, reduced to what the trust rule needs (the Lua writer's `inspect`). */
export type DirInfo =
	| { exists: false }
	| { exists: true; type: "directory" | "link" | "file" | "other"; uid: number; perm: number };

export function inspectStateDir(dir: string): DirInfo {
	return dirInfoOf(lstatSync(dir, { throwIfNoEntry: false }));
}

/** What an lstat result (undefined: no such file) says of a would-be state dir. */
export function dirInfoOf(stats: Stats | undefined): DirInfo {
	return stats ? infoOf(stats) : { exists: false };
}

function infoOf(stats: Stats): DirInfo & { exists: true } {
	const type = stats.isSymbolicLink() ? "link" : stats.isDirectory() ? "directory" : stats.isFile() ? "file" : "other";
	return { exists: true, type, uid: stats.uid, perm: stats.mode & 0o777 };
}

/**
 * The trust rule on an lstat result, pure. `uid` undefined (a platform without uids) skips the owner
 * check; `platform` "win32" skips the mode check (Windows has no POSIX mode bits).
 */
export function judgeStateDir(
	dir: string,
	info: DirInfo,
	uid: number | undefined,
	platform: string = process.platform,
): DirHealth {
	const refuse = (problem: StateDirProblem, reason: string, remedy?: string): DirHealth => ({
		ok: false,
		dir,
		problem,
		missing: problem === "missing",
		reason,
		...(remedy === undefined ? {} : { remedy }),
	});
	if (!info.exists) return refuse("missing", "does not exist yet (no editor has written to it)");
	if (info.type === "link") return refuse("symlink", "is a symbolic link", `remove it: rm ${dir}`);
	if (info.type !== "directory") return refuse("not-directory", "is not a directory", `remove it: rm ${dir}`);
	if (uid !== undefined && info.uid !== uid) {
		return refuse(
			"foreign-owner",
			`is owned by uid ${info.uid}, not by you (uid ${uid})`,
			"another user created it; set XDG_RUNTIME_DIR to a private directory",
		);
	}
	if (platform !== "win32" && (info.perm & 0o077) !== 0) {
		return refuse("open-permissions", `has group/other permissions (${formatMode(info.perm)})`, `chmod 700 ${dir}`);
	}
	return { ok: true, dir };
}

/** May this directory be read from or written into? Read-only: creates and changes nothing. */
export function checkStateDir(dir: string, uid: number | undefined = process.getuid?.()): DirHealth {
	let info: DirInfo;
	try {
		info = inspectStateDir(dir);
	} catch (error) {
		return {
			ok: false,
			dir,
			problem: "uninspectable",
			missing: false,
			reason: `cannot inspect it: ${describeError(error)}`,
		};
	}
	return judgeStateDir(dir, info, uid);
}

/**
 * Create the directory 0700 when it is missing (its last component only), then check it. Another process
 * creating it in between is fine: the check decides whether it may be used. Both pi (so it can watch the
 * directory and nobody else claims the name first) and every client call this.
 */
export function createStateDir(dir: string, uid: number | undefined = process.getuid?.()): DirHealth {
	// Checked first: nearly every call finds the directory there, and a mkdir that fails with EEXIST costs an
	// exception per write (pi writes two files per tool call).
	const health = checkStateDir(dir, uid);
	if (health.ok || health.problem !== "missing") return health;
	try {
		mkdirSync(dir, { mode: 0o700 });
		// The umask filters mkdir's mode; a dir we have just made is ours to set exactly.
		chmodSync(dir, 0o700);
	} catch (error) {
		if (codeOf(error) !== "EEXIST") {
			return {
				ok: false,
				dir,
				problem: "uncreatable",
				missing: false,
				reason: `cannot be created: ${describeError(error)}`,
			};
		}
	}
	return checkStateDir(dir, uid);
}

/** One line for a user: "<dir> <reason> (fix: <remedy>)". */
export function formatDirHealth(health: DirHealth): string {
	if (health.ok) return `${health.dir} is a private state directory`;
	return `${health.dir} ${health.reason}${health.remedy ? ` (fix: ${health.remedy})` : ""}`;
}

type PrivateContent = string | Uint8Array | readonly Uint8Array[];

/** The bytes of `content`, as the chunks they come in. */
function chunksOf(content: PrivateContent): readonly Uint8Array[] {
	return typeof content === "string"
		? [Buffer.from(content, "utf8")]
		: content instanceof Uint8Array
			? [content]
			: content;
}

/** A write under way: the temp file, opened exclusively in a directory that passed the checks. */
type Begun =
	| { ok: true; fd: number; temp: string; target: string }
	| { ok: false; problem: WriteProblem; error: string };

/** The checks and the exclusive open every write of `<dir>/<name>` starts with. */
function beginWrite(dir: string, name: string, uid: number | undefined): Begun {
	const health = createStateDir(dir, uid);
	if (!health.ok) return { ok: false, problem: health.problem, error: `not writing: ${formatDirHealth(health)}` };
	const target = join(dir, name);
	const temp = `${target}${TEMP_SUFFIX}`;
	const opened = openTemp(temp, uid);
	return opened.ok ? { ok: true, fd: opened.fd, temp, target } : opened;
}

/** The failure of a begun write, its temp file removed (the old file stays). */
function failedWrite(begun: { temp: string; target: string }, error: unknown): WriteResult {
	unlinkQuietly(begun.temp);
	return { ok: false, problem: "io", error: `cannot write ${begun.target}: ${describeError(error)}` };
}

/**
 * Atomically replace `<dir>/<name>` with `content` (0600), after `createStateDir`: exclusive temp file,
 * full write, fchmod, close, rename. On failure the temp file is removed and the old file stays. `content`
 * may come in chunks, written one after the other (a large file built from cached parts is not joined first).
 */
export function writePrivateFile(
	dir: string,
	name: string,
	content: PrivateContent,
	uid: number | undefined = process.getuid?.(),
): WriteResult {
	const begun = beginWrite(dir, name, uid);
	if (!begun.ok) return begun;
	try {
		try {
			for (const data of chunksOf(content)) {
				let written = 0;
				while (written < data.length) {
					const n = writeSync(begun.fd, data, written, data.length - written);
					if (n === 0) throw new Error("write returned 0 bytes");
					written += n;
				}
			}
			fchmodSync(begun.fd, 0o600); // the open mode is filtered by the umask
		} finally {
			closeSync(begun.fd);
		}
		renameSync(begun.temp, begun.target);
		return { ok: true };
	} catch (error) {
		return failedWrite(begun, error);
	}
}

/** A node:fs callback call as a promise. */
function promised<T>(call: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
	return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value as T))));
}

/**
 * `writePrivateFile` with the bytes written and the rename done off the caller's thread (libuv's pool): the
 * same checks and the same exclusive temp file, opened before the first await. For large files on ext4, where
 * a rename over an existing file forces the new file's blocks to be allocated at once (auto_da_alloc: about
 * 3 ms for a megabyte, in the thread that renames). The caller keeps writes of one name in order (one at a
 * time: the temp file is exclusive). Never rejects.
 */
export async function writePrivateFileAsync(
	dir: string,
	name: string,
	content: PrivateContent,
	uid: number | undefined = process.getuid?.(),
): Promise<WriteResult> {
	const begun = beginWrite(dir, name, uid);
	if (!begun.ok) return begun;
	try {
		try {
			for (const data of chunksOf(content)) {
				let written = 0;
				while (written < data.length) {
					const n = await promised<number>((done) => write(begun.fd, data, written, data.length - written, done));
					if (n === 0) throw new Error("write returned 0 bytes");
					written += n;
				}
			}
			await promised<void>((done) => fchmod(begun.fd, 0o600, done)); // the open mode is filtered by the umask
		} finally {
			await promised<void>((done) => close(begun.fd, done));
		}
		await promised<void>((done) => rename(begun.temp, begun.target, done));
		return { ok: true };
	} catch (error) {
		return failedWrite(begun, error);
	}
}

/** Write `<dir>/<pid>.json`; see `writePrivateFile`. */
export function writeStateFile(
	dir: string,
	pid: number,
	content: string | Uint8Array,
	uid: number | undefined = process.getuid?.(),
): WriteResult {
	return writePrivateFile(dir, stateFileName(pid), content, uid);
}

/**
 * Delete `<dir>/<name>` and its temp file, only when the directory passes the checks. Files that are
 * already gone are fine.
 */
export function removePrivateFile(
	dir: string,
	name: string,
	uid: number | undefined = process.getuid?.(),
): WriteResult {
	const health = checkStateDir(dir, uid);
	if (!health.ok) {
		// Nothing of ours can be in a directory that does not exist.
		if (health.problem === "missing") return { ok: true };
		return { ok: false, problem: health.problem, error: `left alone: ${formatDirHealth(health)}` };
	}
	const target = join(dir, name);
	unlinkQuietly(`${target}${TEMP_SUFFIX}`);
	try {
		unlinkSync(target);
	} catch (error) {
		if (codeOf(error) !== "ENOENT") {
			return { ok: false, problem: "io", error: `cannot delete ${target}: ${describeError(error)}` };
		}
	}
	return { ok: true };
}

/** Delete `<dir>/<pid>.json`; see `removePrivateFile`. */
export function removeStateFile(dir: string, pid: number, uid: number | undefined = process.getuid?.()): WriteResult {
	return removePrivateFile(dir, stateFileName(pid), uid);
}

type Opened = { ok: true; fd: number } | { ok: false; problem: WriteProblem; error: string };

/** "wx" = O_CREAT|O_EXCL: never opens through whatever already sits at the temp path. */
export type PrivateRead = { kind: "text"; text: string } | { kind: "gone" } | { kind: "problem"; message: string };

/**
 * Read a file someone else could have swapped: open without following symlinks (and without blocking on a
 * FIFO), check the opened file is the regular file `seen` (its lstat) described, apply the caller's
 * `refuse` to the opened file's stats (owner, mode), and read at most `maxBytes`. A file that vanished,
 * was replaced, or grew while it was read is "gone": the next event or scan reads the new one. The one
 * read routine for state files, pi's messages and pi's remembered choices.
 */
export function readPrivateFile(
	path: string,
	seen: Stats,
	options: { maxBytes: number; refuse?: (stats: Stats) => string | undefined },
): PrivateRead {
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		const code = codeOf(error);
		if (code === "ENOENT" || code === "ENOTDIR") return { kind: "gone" };
		if (code === "ELOOP") return { kind: "problem", message: "is a symbolic link: refused" };
		return { kind: "problem", message: `cannot open: ${describeError(error)}` };
	}
	try {
		const stats = fstatSync(fd);
		if (!stats.isFile() || stats.ino !== seen.ino || stats.dev !== seen.dev) return { kind: "gone" };
		const refused = options.refuse?.(stats) ?? oversize(stats.size, options.maxBytes);
		if (refused) return { kind: "problem", message: refused };
		// One spare byte tells a file that grew after fstat (written in place, not renamed) from one that fits.
		const buffer = Buffer.allocUnsafe(stats.size + 1);
		let length = 0;
		for (;;) {
			const n = readSync(fd, buffer, length, buffer.length - length, null);
			if (n === 0) break;
			length += n;
			if (length >= buffer.length) return { kind: "gone" };
		}
		return { kind: "text", text: buffer.toString("utf8", 0, length) };
	} catch (error) {
		return { kind: "problem", message: `cannot read: ${describeError(error)}` };
	} finally {
		closeSync(fd);
	}
}

/** The size rule, said the same way for every file pi or a client reads. */
/**
 * Why a file of the state dir that only this user may have written is refused, or undefined: the rule every
 * private file of the protocol is read by (state-dir rules: a regular file, never a link, owned by `uid` when it
 * is given, no group or other permission bits, at most `maxBytes`). Run on lstat's stats before opening and on
 * the opened file's stats (readPrivateFile's `refuse`).
 */
export function refusePrivate(stats: Stats, uid: number | undefined, maxBytes: number): string | undefined {
	if (stats.isSymbolicLink()) return "is a symbolic link: refused";
	if (!stats.isFile()) return "is not a regular file: refused";
	if (uid !== undefined && stats.uid !== uid) return `is owned by uid ${stats.uid}, not by you: refused`;
	if ((stats.mode & 0o077) !== 0) {
		return `has mode 0${(stats.mode & 0o777).toString(8)}, readable or writable by others: refused`;
	}
	return oversize(stats.size, maxBytes);
}

export function oversize(size: number, maxBytes: number): string | undefined {
	return size > maxBytes ? `is ${size} bytes, over the ${maxBytes}-byte limit` : undefined;
}

function openTemp(temp: string, uid: number | undefined): Opened {
	try {
		return { ok: true, fd: openSync(temp, "wx", 0o600) };
	} catch (error) {
		if (codeOf(error) !== "EEXIST") {
			return { ok: false, problem: "io", error: `cannot create ${temp}: ${describeError(error)}` };
		}
	}
	// Something is there. A regular file of ours is a leftover of an interrupted write (or of an earlier
	// process with our pid): remove it and retry once. A symlink, a directory or someone else's file is not ours.
	let info: DirInfo;
	try {
		info = inspectStateDir(temp);
	} catch (error) {
		return { ok: false, problem: "io", error: `cannot inspect ${temp}: ${describeError(error)}` };
	}
	if (!info.exists || info.type !== "file" || (uid !== undefined && info.uid !== uid)) {
		return { ok: false, problem: "temp-in-the-way", error: `${temp} exists and is not our temp file; not writing` };
	}
	try {
		unlinkSync(temp);
		return { ok: true, fd: openSync(temp, "wx", 0o600) };
	} catch (error) {
		return { ok: false, problem: "io", error: `cannot create ${temp}: ${describeError(error)}` };
	}
}

function unlinkQuietly(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// already gone, or not ours to remove: either way nothing more to do
	}
}

function formatMode(mode: number): string {
	return `0${mode.toString(8).padStart(3, "0")}`;
}

function codeOf(error: unknown): string | undefined {
	if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
		return error.code;
	}
	return undefined;
}

function describeError(error: unknown): string {
	const code = codeOf(error);
	const message = error instanceof Error ? error.message : String(error);
	return code ? `${code} (${message})` : message;
}

/**
 * This process's pid namespace (`pid:[4026531836]` on the host), read once: null where /proc does not say (not
 * Linux, no /proc in a sandbox). Never throws.
 */
export function readOwnPidNamespace(readlink: (path: string) => string = (path) => readlinkSync(path)): string | null {
	try {
		const name = readlink("/proc/self/ns/pid");
		return PID_NAMESPACE_PATTERN.test(name) ? name : null;
	} catch {
		return null;
	}
}
