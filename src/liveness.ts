/**
 * Is the editor process behind a state file still running, and is it ours?
 * `kill(pid, 0)` sends no signal; it only asks the kernel whether we could.
 * A killed editor leaves its file behind, so every reader goes through this.
 */

/** alive: the process exists and we may signal it; dead: ESRCH; foreign: EPERM, another user's process (pid reuse). */
export type Liveness = "alive" | "dead" | "foreign";

export type SignalZero = (pid: number) => void;

const defaultSignalZero: SignalZero = (pid) => {
	process.kill(pid, 0);
};

/** Probe a pid. Never throws; unknown errors count as dead, which only ever hides an editor. */
export function probePid(pid: number, signalZero: SignalZero = defaultSignalZero): Liveness {
	if (!Number.isSafeInteger(pid) || pid <= 0) return "dead";
	try {
		signalZero(pid);
		return "alive";
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM" ? "foreign" : "dead";
	}
}

/**
 * Slack for comparing a process start time (boot time in whole seconds plus 10 ms ticks) with a file's mtime:
 * differences within it are noise, never evidence.
 */
export const PID_REUSE_SLACK_SECONDS = 1;

/**
 * Does the pid now belong to a process that started after the state file was last written? Then the editor
 * that wrote it is gone and its pid was reused: the file is not an editor. Unknown start times never count.
 * @param startedAt unix seconds the process behind the pid started, or null (unknown: not Linux, unreadable)
 * @param writtenAt unix seconds the state file was last written (its mtime)
 */
export function isPidReused(startedAt: number | null, writtenAt: number): boolean {
	return startedAt !== null && startedAt > writtenAt + PID_REUSE_SLACK_SECONDS;
}
