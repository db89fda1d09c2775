/**
 * What Linux says about processes, from /proc: a process's parent (for the
 * ancestry fallback of host detection) and its start time (so a state file
 * whose pid now belongs to a process started after the file was written is not
 * taken for an editor). Elsewhere every answer is "unknown" (null / empty) and
 * callers fall back to what `kill(pid, 0)` tells.
 *
 * The parsers are pure; `ProcessClock` holds one open /proc/<pid>/stat per live
 * editor: while a read of it succeeds, the process it was opened for is still
 * the one behind that pid (the descriptor is bound to the process, not to the
 * number; once the process is gone reads fail with ESRCH), so its start time is
 * known without parsing again. One pread per editor per check.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

/** USER_HZ: the unit of /proc/<pid>/stat times, 100 on every Linux architecture that runs Node. */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcStat {
	ppid: number;
	/** Field 22: start time in clock ticks after boot. */
	startTicks: number;
}

/**
 * Parse /proc/<pid>/stat. The command name (field 2) is in parentheses and may
 * itself hold spaces and parentheses, so fields are counted from the last ')'.
 */
export function parseProcStat(text: string): ProcStat | null {
	const close = text.lastIndexOf(")");
	if (close < 0) return null;
	// After ") ": field 3 (state) is index 0, so field n is index n - 3.
	const fields = text.slice(close + 2).split(" ");
	const ppid = Number(fields[1]);
	const startTicks = Number(fields[19]);
	if (!Number.isSafeInteger(ppid) || ppid < 0 || !Number.isSafeInteger(startTicks) || startTicks < 0) return null;
	return { ppid, startTicks };
}

/** The `btime` line of /proc/stat: boot time in unix seconds. */
export function parseBootTime(text: string): number | null {
	const match = /^btime (\d+)$/m.exec(text);
	return match ? Number(match[1]) : null;
}

/** Unix seconds a process started, from its stat and the boot time. */
export function startTimeOf(stat: ProcStat, bootTime: number): number {
	return bootTime + stat.startTicks / CLOCK_TICKS_PER_SECOND;
}

function readStat(pid: number): ProcStat | null {
	try {
		return parseProcStat(readFileSync(`/proc/${pid}/stat`, "latin1"));
	} catch {
		return null;
	}
}

/** pi's ancestors, nearest first, up to init (Linux); empty elsewhere or when /proc is unreadable. */
export function readAncestry(pid: number = process.pid, limit = 64): number[] {
	const out: number[] = [];
	let current = readStat(pid)?.ppid ?? 0;
	while (current > 1 && out.length < limit && !out.includes(current)) {
		out.push(current);
		current = readStat(current)?.ppid ?? 0;
	}
	return out;
}

function readBootTime(): number | null {
	try {
		return parseBootTime(readFileSync("/proc/stat", "latin1"));
	} catch {
		return null;
	}
}

/** When did the process behind a pid start? null = unknown (not Linux, gone, unreadable). */
export interface StartClock {
	startedAt(pid: number): number | null;
	/** Forget pids not in `keep` (editors that went away). */
	retain?(keep: ReadonlySet<number>): void;
	/** Release what it holds. */
	close?(): void;
}

interface Held {
	fd: number;
	startedAt: number;
}

const STAT_BUFFER_BYTES = 1024;

export class ProcessClock implements StartClock {
	readonly #bootTime: number | null;
	readonly #held = new Map<number, Held>();
	readonly #buffer = Buffer.allocUnsafe(STAT_BUFFER_BYTES);

	/** @param bootTime unix seconds; default /proc/stat's btime, read once (null off Linux). */
	constructor(bootTime: number | null = process.platform === "linux" ? readBootTime() : null) {
		this.#bootTime = bootTime;
	}

	startedAt(pid: number): number | null {
		if (this.#bootTime === null || !Number.isSafeInteger(pid) || pid <= 0) return null;
		const held = this.#held.get(pid);
		if (held) {
			// Still readable: still the process it was opened for, whose start time we know.
			if (this.#read(held.fd) !== null) return held.startedAt;
			this.#release(pid);
		}
		let fd: number;
		try {
			fd = openSync(`/proc/${pid}/stat`, "r");
		} catch {
			return null;
		}
		const text = this.#read(fd);
		const stat = text === null ? null : parseProcStat(text);
		if (stat === null) {
			closeSync(fd);
			return null;
		}
		const startedAt = startTimeOf(stat, this.#bootTime);
		this.#held.set(pid, { fd, startedAt });
		return startedAt;
	}

	/** Close the descriptors of pids not in `keep` (editors that went away). */
	retain(keep: ReadonlySet<number>): void {
		for (const pid of this.#held.keys()) if (!keep.has(pid)) this.#release(pid);
	}

	/** Close every descriptor. */
	close(): void {
		for (const pid of [...this.#held.keys()]) this.#release(pid);
	}

	#read(fd: number): string | null {
		try {
			const n = readSync(fd, this.#buffer, 0, STAT_BUFFER_BYTES, 0);
			return n > 0 ? this.#buffer.toString("latin1", 0, n) : null;
		} catch {
			return null;
		}
	}

	#release(pid: number): void {
		const held = this.#held.get(pid);
		this.#held.delete(pid);
		if (held) {
			try {
				closeSync(held.fd);
			} catch {
				// already closed: nothing to release
			}
		}
	}
}
