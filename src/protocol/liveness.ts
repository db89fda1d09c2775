/**
 * Is the editor process behind a state file still running, and is it ours?
 * `kill(pid, 0)` sends no signal; it only asks the kernel whether we could.
 * A killed editor leaves its file behind, so every reader goes through this.
 */

/**
 * alive: the process exists and we may signal it; dead: ESRCH, the pid is gone; foreign: EPERM, another user's
 * process (pid reuse); unknown: any other error (the kernel did not say: the editor is not listed, and its file
 * is not removed either, since only ESRCH proves the editor gone).
 */
export type Liveness = "alive" | "dead" | "foreign" | { unknown: string };

export type SignalZero = (pid: number) => void;

const defaultSignalZero: SignalZero = (pid) => {
	process.kill(pid, 0);
};

/** Probe a pid. Never throws. A pid that cannot be a process (0, negative, fractional) is dead. */
export function probePid(pid: number, signalZero: SignalZero = defaultSignalZero): Liveness {
	if (!Number.isSafeInteger(pid) || pid <= 0) return "dead";
	try {
		signalZero(pid);
		return "alive";
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ESRCH") return "dead";
		if (code === "EPERM") return "foreign";
		return { unknown: code ?? String(error) };
	}
}

/**
 * Slack for comparing a process start time with a file's mtime: differences within it are noise, never
 * evidence. The boot time is whole seconds and ticks are 10 ms, and a clock adjusted by a few seconds between
 * the editor's write and pi's look (an NTP step the start clock has not seen yet) must not make a live editor
 * look replaced: its file would be removed.
 */
export const PID_REUSE_SLACK_SECONDS = 5;

/**
 * Does the pid now belong to a process that started after the state file was last written? Then the editor
 * that wrote it is gone and its pid was reused: the file is not an editor. Unknown start times never count.
 * @param startedAt unix seconds the process behind the pid started, or null (unknown: not Linux, unreadable)
 * @param writtenAt unix seconds the state file was last written (its mtime)
 */
export function isPidReused(startedAt: number | null, writtenAt: number): boolean {
	return startedAt !== null && startedAt > writtenAt + PID_REUSE_SLACK_SECONDS;
}

/**
 * The initial pid namespace, as `/proc/<pid>/ns/pid` names it: the kernel gives it this fixed inode. Editors and pis
 * on the host run in it; a sandbox or container (bubblewrap, docker, podman, `unshare --pid`) starts another.
 */
export const INITIAL_PID_NAMESPACE = "pid:[4026531836]";

/** `pid:[<inode>]`, as readlink of `/proc/self/ns/pid` spells a pid namespace (v0.5 `pid_ns`). */
export const PID_NAMESPACE_PATTERN = /^pid:\[[0-9]{1,20}\]$/;

/**
 * May `kill(pid, 0)` judge a pid written by a process of `writer` namespace, asked from `own`? Only in the same
 * namespace: elsewhere a pid names another process or none, so ESRCH proves nothing and neither does a live
 * answer. A file that names no namespace comes from a client before v0.5, and those run where editors run: the
 * initial namespace. pi not knowing its own (no /proc) judges as before, as on any host without namespaces.
 */
export function judgesPids(writer: string | undefined, own: string | null): boolean {
	if (own === null) return writer === undefined;
	return (writer ?? INITIAL_PID_NAMESPACE) === own;
}
