/**
 * The bind mounts pi sees, read from /proc/self/mountinfo once per process (mounts do not move under a running
 * pi; a new pi process reads them again), as path mappings (src/protocol/path-map.ts). Never throws: where there
 * is no mountinfo (macOS, a /proc that is not mounted) there are no mount mappings.
 */
import { readFileSync } from "node:fs";
import { combineMappings, mountMappings, type PathMapping, parseMountinfo } from "../protocol/path-map.ts";

let mounts: PathMapping[] | undefined;

/** pi's bind mounts that put a directory at another path (cached for the process). */
export function ownMountMappings(): PathMapping[] {
	if (mounts === undefined) {
		try {
			mounts =
				process.platform === "linux" ? mountMappings(parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8"))) : [];
		} catch {
			mounts = [];
		}
	}
	return mounts;
}

/** The mappings a session uses: the `ideContext.paths` setting first, then pi's own bind mounts. */
export function sessionPathMappings(setting: readonly PathMapping[]): PathMapping[] {
	return combineMappings(setting, ownMountMappings());
}
