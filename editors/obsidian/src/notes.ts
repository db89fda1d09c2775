/**
 * The notes open in Obsidian's Markdown leaves, as pi's ask and the unsaved buffers (protocol v0.5) want them: each
 * file once, the active one first, with its text, a content version and whether it is modified. Obsidian saves as
 * the user types (about two seconds after the last key) and has no public "unsaved" flag, so `modified` means what
 * the user could lose or what pi would not read on disk: the editor's text differs from the file's bytes on disk
 * now. It is looked at when the plugin writes its state (debounced) or pi asks, never per keystroke, and costs a
 * `stat` while the text or the file is unchanged (the answer is kept per note by version, size and mtime); the file
 * is opened non-blocking (a FIFO in its place never hangs the window), must be a regular file, and is compared by
 * size before its bytes are read. Obsidian has no content version either: `NoteVersions` counts one per note, raised
 * each time the note's text is seen changed (a hash of the text tells), so it only grows.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/** A Markdown leaf's view as this file reads it (Obsidian's `MarkdownView`, in editing or reading mode). */
export interface NoteViewLike {
	file: { path: string } | null;
	getViewData(): string;
}

/** An open note. */
export interface OpenNote {
	/** Absolute path on disk. */
	file: string;
	/** Vault-relative, "/"-separated, as Obsidian names it. */
	path: string;
	text: string;
	version: number;
	modified: boolean;
	active: boolean;
}

/** FNV-1a over the text's UTF-16 units: the same while the text is. */
export function textHash(text: string): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < text.length; i++) {
		hash ^= text.charCodeAt(i);
		hash = Math.imul(hash, 0x01000193);
	}
	return hash >>> 0;
}

/** Does `text` differ from the file at `file` on disk? A file that is gone, unreadable or not a regular file: yes. */
export function differsFromDisk(file: string, text: string): boolean {
	let fd: number | undefined;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
		const stat = fstatSync(fd);
		if (!stat.isFile() || stat.size !== Buffer.byteLength(text, "utf8")) return true;
		return readFileSync(fd, "utf8") !== text;
	} catch {
		return true;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The vault-relative path of an absolute `file`, or undefined when it is not inside the vault. */
export function vaultPath(vaultRoot: string, file: string): string | undefined {
	const rel = relative(vaultRoot, file);
	if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
	return rel.split(sep).join("/");
}

/** Each note's content version and modified flag, for the life of the plugin (by vault-relative path). */
export class NoteVersions {
	readonly #seen = new Map<string, { hash: number; version: number }>();
	readonly #disk = new Map<string, { key: string; differs: boolean }>();

	/** The note's version: 1 when first seen, one more each time its text is seen changed. */
	version(path: string, text: string): number {
		const hash = textHash(text);
		const seen = this.#seen.get(path);
		if (seen?.hash === hash) return seen.version;
		const version = (seen?.version ?? 0) + 1;
		this.#seen.set(path, { hash, version });
		return version;
	}

	/** Does the note's text (at `version`) differ from `file` on disk? Read again only when either changed. */
	modified(path: string, file: string, text: string, version: number): boolean {
		let key: string;
		try {
			const stat = statSync(file);
			key = `${version}:${stat.size}:${stat.mtimeMs}:${stat.ino}`;
		} catch {
			this.#disk.delete(path);
			return true;
		}
		const known = this.#disk.get(path);
		if (known?.key === key) return known.differs;
		const differs = differsFromDisk(file, text);
		this.#disk.set(path, { key, differs });
		return differs;
	}
}

/**
 * The notes of `views` (every Markdown leaf's view), each file once, the active one first (`active`: the view the
 * user is in, if any). Views without a file are left out.
 */
export function openNotes(
	views: readonly NoteViewLike[],
	active: NoteViewLike | null,
	vaultRoot: string,
	versions: NoteVersions,
): OpenNote[] {
	const byPath = new Map<string, NoteViewLike>();
	if (active?.file) byPath.set(active.file.path, active);
	for (const view of views) {
		if (view.file && !byPath.has(view.file.path)) byPath.set(view.file.path, view);
	}
	return [...byPath].map(([path, view]) => {
		const file = join(vaultRoot, ...path.split("/"));
		const text = view.getViewData();
		const version = versions.version(path, text);
		return {
			file,
			path,
			text,
			version,
			modified: versions.modified(path, file, text, version),
			active: view === active,
		};
	});
}
