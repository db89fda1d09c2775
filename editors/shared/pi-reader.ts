/**
 * Reading pi's messages (`<state dir>/pi-<pid>.json`, protocol v0.3) with the same distrust pi applies to
 * editor files: only a regular file (lstat, then open with O_NOFOLLOW and check the opened file is the one
 * lstat saw), owned by us, without any group/other permission bit, at most 64 KiB, whose `pid` matches its
 * name and belongs to a live process of ours. Every failure is a value, never an exception.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { type Liveness, probePid } from "../../src/discovery/liveness.ts";
import { oversize, readPrivateFile } from "../../src/protocol/state-dir.ts";
import { MAX_PI_MESSAGE_BYTES, type PiMessage, parsePiMessage, piMessagePid } from "./pi-message.ts";

/** Is pi `pid` running, and is it ours? pi's own probe (src/discovery/liveness.ts) unless a test injects one. */
export type PidProbe = (pid: number) => Liveness;

// The one `kill(pid, 0)` probe, pi's: the editors ask the same question about pi that pi asks about them.
export { probePid };

export type PiMessageVerdict =
	| { kind: "message"; message: PiMessage }
	/** Missing, or replaced while being read: nothing to say (the next event brings the new file). */
	| { kind: "gone" }
	/** The pi that wrote it is no longer running (a leftover of a killed pi). */
	| { kind: "dead"; pid: number }
	| { kind: "problem"; problem: string };

export interface ReadOptions {
	/** Owner the file must have; default the process uid. */
	uid?: number;
	probe?: PidProbe;
}

function describe(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code} (${e.message})` : String(error);
}

function refuse(stats: Stats, uid: number | undefined): string | undefined {
	if (stats.isSymbolicLink()) return "is a symbolic link: refused";
	if (!stats.isFile()) return "is not a regular file: refused";
	if (uid !== undefined && stats.uid !== uid) return `is owned by uid ${stats.uid}, not by you: refused`;
	if ((stats.mode & 0o077) !== 0) {
		return `has mode 0${(stats.mode & 0o777).toString(8)}, readable or writable by others: refused`;
	}
	return oversize(stats.size, MAX_PI_MESSAGE_BYTES);
}

/** Read and check `<dir>/<name>`; `name` must be `pi-<digits>.json`. */
export function readPiMessage(dir: string, name: string, options: ReadOptions = {}): PiMessageVerdict {
	const pidFromName = piMessagePid(name);
	if (pidFromName === undefined) return { kind: "problem", problem: "is not named pi-<pid>.json" };
	const uid = options.uid ?? process.getuid?.();
	const path = join(dir, name);
	let stats: Stats | undefined;
	try {
		stats = lstatSync(path, { throwIfNoEntry: false });
	} catch (error) {
		return { kind: "problem", problem: `cannot inspect: ${describe(error)}` };
	}
	if (!stats) return { kind: "gone" };
	const refused = refuse(stats, uid);
	if (refused) return { kind: "problem", problem: refused };
	const read = readPrivateFile(path, stats, {
		maxBytes: MAX_PI_MESSAGE_BYTES,
		refuse: (opened) => refuse(opened, uid),
	});
	if (read.kind === "gone") return read;
	if (read.kind === "problem") return { kind: "problem", problem: read.message };
	const parsed = parsePiMessage(read.text);
	if (!parsed.ok) return { kind: "problem", problem: `invalid message: ${parsed.problem}` };
	if (parsed.message.pid !== pidFromName) {
		return { kind: "problem", problem: `pid field ${parsed.message.pid} does not match the file name` };
	}
	const liveness = (options.probe ?? probePid)(pidFromName);
	if (liveness === "alive") return { kind: "message", message: parsed.message };
	if (liveness === "dead") return { kind: "dead", pid: pidFromName };
	if (liveness === "foreign") return { kind: "problem", problem: "its pid belongs to another user's process: refused" };
	return { kind: "problem", problem: `cannot tell whether its pi is running (${liveness.unknown}): ignored` };
}
