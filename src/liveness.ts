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
