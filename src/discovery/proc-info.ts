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
 *
 * Start times are boot time + ticks since boot, and /proc/stat's btime moves
 * with the wall clock (an NTP step back moves it back). A boot time read once
 * would, after such a step, put every editor started later "after" the files
 * it writes (mtimes are wall-clock too), and pi would take live editors for
 * reused pids. So the boot time is read again whenever a new pid is met, and
 * whenever the wall clock moved against the monotonic clock (a step, or a
 * suspend) since it was read; held pids keep their ticks, not a unix time.
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

/** Unix seconds a process started, from its start ticks (ProcStat.startTicks) and the boot time. */
export function startTimeOf(startTicks: number, bootTime: number): number {
	return bootTime + startTicks / CLOCK_TICKS_PER_SECOND;
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
	/**
	 * The start time of a process this clock already follows and that still runs, found without asking the
	 * system anything else (it answers for liveness too: the same process, alive); undefined when it follows no
	 * such process (never seen, or gone).
	 */
	known?(pid: number): number | null | undefined;
	/** Forget pids not in `keep` (editors that went away). */
	retain?(keep: ReadonlySet<number>): void;
	/** Release what it holds. */
	close?(): void;
}

/** The clocks a ProcessClock reads, in seconds (injectable: tests step the wall clock). */
export interface ClockSources {
	/** /proc/stat's btime now, unix seconds; null when unknown. */
	bootTime: () => number | null;
	/** The wall clock, unix seconds (what file mtimes are in). */
	wall: () => number;
	/** A clock that never steps (seconds since some start). */
	monotonic: () => number;
}

/**
 * How far the wall clock may move against the monotonic clock before the boot time is read again. NTP slews
 * (up to 0.5 ms/s) move both alike; steps and suspends move the wall clock alone, by far more than this.
 */
export const CLOCK_STEP_SECONDS = 0.5;

/** A process followed: a descriptor of its /proc/<pid>/comm (readable while it runs) and its start ticks. */
interface Held {
	fd: number;
	startTicks: number;
}

/** /proc/<pid>/comm: at most 16 bytes and a newline. */
const COMM_BUFFER_BYTES = 64;

const systemClocks = (bootTime: () => number | null): ClockSources => ({
	bootTime,
	wall: () => Date.now() / 1000,
	monotonic: () => performance.now() / 1000,
});

export class ProcessClock implements StartClock {
	readonly #clocks: ClockSources | null;
	#bootTime: number | null = null;
	/** wall - monotonic when the boot time was read; undefined: not read yet. */
	#readAt: number | undefined;
	readonly #held = new Map<number, Held>();
	readonly #buffer = Buffer.allocUnsafe(COMM_BUFFER_BYTES);

	/** @param clocks default: /proc/stat and the system clocks on Linux; null: unknown (every answer null). */
	constructor(clocks: ClockSources | null = process.platform === "linux" ? systemClocks(readBootTime) : null) {
		this.#clocks = clocks;
	}

	startedAt(pid: number): number | null {
		if (this.#clocks === null || !Number.isSafeInteger(pid) || pid <= 0) return null;
		const known = this.known(pid);
		if (known !== undefined) return known;
		// Hold the process first, then read its start: if the hold still reads afterwards, the start read is of
		// the process held (a pid reused in between would have made the hold unreadable).
		let fd: number;
		try {
			fd = openSync(`/proc/${pid}/comm`, "r");
		} catch {
			return null;
		}
		const stat = readStat(pid);
		if (stat === null || !this.#readable(fd)) {
			closeSync(fd);
			return null;
		}
		this.#held.set(pid, { fd, startTicks: stat.startTicks });
		return this.#unixSeconds(stat.startTicks, true);
	}

	known(pid: number): number | null | undefined {
		const held = this.#held.get(pid);
		if (!held) return undefined;
		// Still readable: still the process it was opened for, whose start ticks we know.
		if (this.#readable(held.fd)) return this.#unixSeconds(held.startTicks, false);
		this.#release(pid);
		return undefined;
	}

	/** Close the descriptors of pids not in `keep` (editors that went away). */
	retain(keep: ReadonlySet<number>): void {
		for (const pid of this.#held.keys()) if (!keep.has(pid)) this.#release(pid);
	}

	/** Close every descriptor. */
	close(): void {
		for (const pid of [...this.#held.keys()]) this.#release(pid);
	}

	/** Ticks since boot as unix seconds, with a boot time read again for a new pid or after a clock step. */
	#unixSeconds(startTicks: number, newPid: boolean): number | null {
		const clocks = this.#clocks;
		if (clocks === null) return null;
		const offset = clocks.wall() - clocks.monotonic();
		if (newPid || this.#readAt === undefined || Math.abs(offset - this.#readAt) > CLOCK_STEP_SECONDS) {
			this.#bootTime = clocks.bootTime();
			this.#readAt = offset;
		}
		return this.#bootTime === null ? null : startTimeOf(startTicks, this.#bootTime);
	}

	/**
	 * Whether the process a /proc/<pid>/comm descriptor was opened for still runs: reads through it fail with
	 * ESRCH once it has gone, even when its pid is reused. comm, not stat: the kernel writes its few bytes in a
	 * fifth of the time it takes to format stat's fifty fields, and this runs per editor with every prompt.
	 */
	#readable(fd: number): boolean {
		try {
			return readSync(fd, this.#buffer, 0, COMM_BUFFER_BYTES, 0) > 0;
		} catch {
			return false;
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
