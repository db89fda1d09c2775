/**
 * The file-system adapter behind paths.ts and tiers.ts: answers `PathProbe` questions with
 * real `realpath`/`stat` calls. Kept apart so tiers.ts stays pure and its tests
 * can use a table of fake facts. Never throws: a path that cannot be resolved
 * or stat'ed (missing, no permission, a loop) simply has no real path or is no
 * directory.
 */
import { realpathSync, statSync } from "node:fs";
import type { PathProbe } from "./paths.ts";

/** A `PathProbe` backed by the real file system (`fs.realpathSync.native`, `fs.statSync`). */
export function nodePathProbe(): PathProbe {
	return {
		realpath(target: string): string | null {
			try {
				return realpathSync.native(target);
			} catch {
				return null;
			}
		},
		isDirectory(target: string): boolean {
			try {
				return statSync(target, { throwIfNoEntry: false })?.isDirectory() ?? false;
			} catch {
				return false;
			}
		},
	};
}
