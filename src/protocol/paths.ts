/**
 * Paths, compared one way everywhere: which directory holds which file, the
 * real path behind symlinks, where an editor's (possibly relative) file is, and
 * the length limit beyond which a path from a state file is refused. Pure:
 * file-system facts come through the injected `PathProbe` (path-probe.ts is
 * the node adapter), and only `node:path` string functions are used.
 */
import path from "node:path";

/**
 * Longest path, in UTF-8 bytes, that pi accepts from a state file (PROTOCOL.md,
 * "Limits"): Linux's PATH_MAX (4096, counting the terminating NUL). A longer one
 * cannot name a real file, and walking it component by component on every
 * prompt would stall pi.
 * One limit on every platform, though macOS's PATH_MAX is 1024: the limit bounds
 * pi's work, not what the kernel accepts. The largest PATH_MAX of the platforms
 * pi runs on refuses no path that is real anywhere, and a 1-4 KB path on macOS
 * costs no more than one on Linux: it simply resolves to no file.
 */
export const MAX_PATH_BYTES = 4095;

/** File-system facts path resolution needs, injected so the module stays pure. realpath returns null when the path cannot be resolved. */
export interface PathProbe {
	realpath(path: string): string | null;
	isDirectory(path: string): boolean;
}

/**
 * Equal-or-below on already-normalised absolute paths: `/a/b` is inside `/a/b`
 * and `/a`, but `/a/bc` is not inside `/a/b`.
 */
export function isInside(child: string, parent: string): boolean {
	if (child === parent) return true;
	const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
	return child.startsWith(prefix);
}

/**
 * The real path of an absolute path, symlinks and trailing slashes resolved.
 * A path that does not exist yet (a new, unsaved buffer) gets the real path of
 * its nearest existing ancestor with the missing rest re-appended. A relative
 * path is returned normalised but unprobed: it has no base to resolve against.
 */
export function resolveReal(target: string, probe: PathProbe): string {
	if (!path.isAbsolute(target)) return path.normalize(target);
	const absolute = path.resolve(target);
	const missing: string[] = [];
	let current = absolute;
	for (;;) {
		const real = probe.realpath(current);
		if (real !== null) return missing.length === 0 ? real : path.join(real, ...missing.reverse());
		const parent = path.dirname(current);
		if (parent === current) return absolute;
		missing.push(path.basename(current));
		current = parent;
	}
}

/** A relative `file` (Obsidian's vault-relative path) resolves against the editor's cwd. */
export function resolveEditorFile(file: string | null, editorCwd: string): string | null {
	if (file === null) return null;
	return path.isAbsolute(file) ? path.resolve(file) : path.resolve(editorCwd, file);
}

/** Why `value` cannot be a path pi works with, or undefined when it can. */
export function checkPathLength(value: string): string | undefined {
	const bytes = Buffer.byteLength(value, "utf8");
	return bytes > MAX_PATH_BYTES ? `is ${bytes} bytes long, over the ${MAX_PATH_BYTES}-byte path limit` : undefined;
}
