/**
 * What a file pi said it changed looks like on disk now, for pi-sync.ts: gone, refused (never read through),
 * or its text (undefined above MAX_COMPARE_BYTES, too large to compare with the buffer). Never throws.
 *
 * The path read is the document's own, and it is read only while it is what it was when VS Code opened the
 * document (`openedAs`, recorded then): a regular file then and now, or a symlink then and now that
 * resolves to the same real path, a regular file (a dotfile linked from a dotfiles repository). Anything
 * else is refused: a regular file replaced by a symlink (say, planted in a shared directory), a link
 * re-pointed or replaced, not a regular file. Without a record (opened before the extension started), a
 * symlink is refused. The same rule as the Neovim client's (PROTOCOL.md, "What an editor may and may not do").
 */
import {
	closeSync,
	constants,
	fstatSync,
	lstatSync,
	openSync,
	readFileSync,
	realpathSync,
	type Stats,
	statSync,
} from "node:fs";
import type { DiskState, OpenedAs } from "./pi-sync.ts";

/** Files larger than this are not read to compare with the buffer. */
export const MAX_COMPARE_BYTES = 16 * 1024 * 1024;

/** What `path` is now: nothing, a regular file, a symlink (and its real path, if it resolves), or other. */
export type PathNow =
	| { kind: "gone" }
	| { kind: "file" }
	| { kind: "link"; real: string | undefined }
	| { kind: "other" };

function pathNow(path: string): PathNow {
	const seen = lstatSync(path, { throwIfNoEntry: false });
	if (!seen) return { kind: "gone" };
	if (seen.isFile()) return { kind: "file" };
	if (!seen.isSymbolicLink()) return { kind: "other" };
	try {
		return { kind: "link", real: realpathSync(path) };
	} catch {
		return { kind: "link", real: undefined };
	}
}

/** Record what `path` is as VS Code opens a document from it; undefined when it is neither a file nor a link. */
export function openedAs(path: string): OpenedAs | undefined {
	try {
		const now = pathNow(path);
		const { dev, ino } = statSync(path);
		if (now.kind === "file") return { kind: "file", dev, ino };
		if (now.kind === "link" && now.real !== undefined) return { kind: "link", real: now.real, dev, ino };
	} catch {
		// Gone or unreadable meanwhile: no record, so the path is judged as before this rule.
	}
	return undefined;
}

/**
 * Pure: the path to read for a document whose path was `opened` (undefined: no record) and is `now`, or
 * why not. A link is read at its recorded real path, never through the link.
 */
export function pathToRead(path: string, opened: OpenedAs | undefined, now: PathNow): string | "gone" | "refused" {
	if (now.kind === "gone") return "gone";
	if (now.kind === "file") return opened?.kind === "link" ? "refused" : path;
	if (now.kind === "link" && opened?.kind === "link" && now.real === opened.real) return opened.real;
	return "refused";
}

/**
 * Pure: is the file opened for a read (`opened`, its fstat; opened without following a symlink, at the
 * document's path or at a link's recorded real path) the one recorded? The same file (dev, inode); or, once
 * replaced (deleted and written anew, renamed over by a formatter), a file with a single link. A file with
 * more links could be any file of the user's hard-linked into a shared directory: refused. Without a record
 * (or one without the identity), any regular file. The Neovim client's rule (pi-ide.inbox.reload).
 */
export function isRecordedFile(recorded: OpenedAs | undefined, opened: Pick<Stats, "dev" | "ino" | "nlink">): boolean {
	if (recorded?.ino === undefined) return true;
	return (opened.dev === recorded.dev && opened.ino === recorded.ino) || opened.nlink === 1;
}

export function readDisk(file: string, opened?: OpenedAs): DiskState {
	try {
		const path = pathToRead(file, opened, pathNow(file));
		if (path === "gone" || path === "refused") return { kind: path };
		return readRegularFile(path, opened);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ENOTDIR") return { kind: "gone" };
		return { kind: "refused" };
	}
}

/** `path` only if it is a regular file, and the file opened is the one lstat saw (never a symlink). */
function readRegularFile(path: string, recorded: OpenedAs | undefined): DiskState {
	const seen = lstatSync(path, { throwIfNoEntry: false });
	if (!seen) return { kind: "gone" };
	if (!seen.isFile()) return { kind: "refused" };
	if (seen.size > MAX_COMPARE_BYTES) return { kind: "file", text: undefined };
	const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		const stats = fstatSync(fd);
		if (!stats.isFile() || stats.ino !== seen.ino || !isRecordedFile(recorded, stats)) return { kind: "refused" };
		if (stats.size > MAX_COMPARE_BYTES) return { kind: "file", text: undefined };
		return { kind: "file", text: readFileSync(fd, "utf8") };
	} finally {
		closeSync(fd);
	}
}
