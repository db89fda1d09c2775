/**
 * When a file read earlier may be used again without reading it: the one rule behind every cache of a file's
 * content in pi (state files, ignore rules, remembered choices, the trust store).
 *
 * An (lstat) signature of device, inode, size, change and modification times, mode and owner tells two
 * versions of a file apart, except for two writes within one tick of the file system's clock (a jiffy on
 * Linux; 2 s on FAT) that keep the size and land on a recycled inode. As git does for its index ("racily
 * clean" entries), a read is trusted again only once it is `settled`: it began more than RACY_WINDOW_MS after
 * the file's last change, so any later write is bound to show a later time. Until then the file is read again
 * (each such read is stamped anew, so one more read settles it). A file whose times lie in the future (a clock
 * set back, a network file system) is never settled: always read.
 */
import type { Stats } from "node:fs";

/** Longer than the coarsest file-system timestamp (FAT's 2 s). */
export const RACY_WINDOW_MS = 2500;

/** What a cache keeps of the version it read. */
export interface FileVersion {
	signature: string;
	/** The read began long enough after the file's last change for the signature to tell any later write. */
	settled: boolean;
}

export function signatureOf(stats: Stats): string {
	return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.mode}:${stats.uid}`;
}

/**
 * The version of a read that began at `readStartedMs` (Date.now() taken before the stat) of a file with `stats`.
 * `windowMs`: tests scale the window down; everything else keeps RACY_WINDOW_MS.
 */
export function versionOf(stats: Stats, readStartedMs: number, windowMs = RACY_WINDOW_MS): FileVersion {
	const changedMs = Math.max(stats.mtimeMs, stats.ctimeMs);
	return { signature: signatureOf(stats), settled: readStartedMs - changedMs > windowMs };
}

/** Whether what was read as `known` may be used for a file that now has `stats`, without reading it again. */
export function isUnchanged(known: FileVersion | undefined, stats: Stats): boolean {
	return known?.settled === true && known.signature === signatureOf(stats);
}

let unsettledKeys = 0;

/**
 * The same rule for a cache that compares one key taken just before each read: the signature when the file
 * has settled by now, otherwise a key that matches nothing (so it is read again).
 */
export function readKey(stats: Stats, nowMs: number = Date.now()): string {
	const version = versionOf(stats, nowMs);
	return version.settled ? version.signature : `${version.signature}:unsettled:${++unsettledKeys}`;
}
