/**
 * What a file pi said it changed looks like on disk now, for pi-sync.ts: gone, refused (a symlink, or not
 * a regular file: never read through), or its text (undefined above MAX_COMPARE_BYTES, too large to
 * compare with the buffer). Never throws.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from "node:fs";
import type { DiskState } from "./pi-sync.ts";

/** Files larger than this are not read to compare with the buffer. */
export const MAX_COMPARE_BYTES = 16 * 1024 * 1024;

export function readDisk(file: string): DiskState {
	try {
		const seen = lstatSync(file, { throwIfNoEntry: false });
		if (!seen) return { kind: "gone" };
		if (!seen.isFile()) return { kind: "refused" };
		if (seen.size > MAX_COMPARE_BYTES) return { kind: "file", text: undefined };
		const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		try {
			const stats = fstatSync(fd);
			if (!stats.isFile() || stats.ino !== seen.ino) return { kind: "refused" };
			if (stats.size > MAX_COMPARE_BYTES) return { kind: "file", text: undefined };
			return { kind: "file", text: readFileSync(fd, "utf8") };
		} finally {
			closeSync(fd);
		}
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ENOTDIR") return { kind: "gone" };
		return { kind: "refused" };
	}
}
