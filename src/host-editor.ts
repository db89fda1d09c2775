/**
 * Is pi running inside an editor's terminal? Pure: the hints are read once at
 * session start (see proc-info.ts), the decision is a lookup per refresh.
 *
 * - `PI_IDE_EDITOR_PID`: every editor client exports its state-file pid to the
 *   processes its terminals start (Neovim: `vim.env`, VS Code:
 *   `environmentVariableCollection`). The strongest hint.
 * - Process ancestry (Linux): pi's parent, grandparent, ... matched against the
 *   state-file pids; the nearest ancestor wins. Covers an editor that does not
 *   export the variable but runs pi in a child process (Neovim's `:terminal`).
 *
 * A hint counts only while that pid has a live, valid state file.
 */

export const EDITOR_PID_ENV = "PI_IDE_EDITOR_PID";

export interface HostHints {
	/** The pid in PI_IDE_EDITOR_PID, or null when unset or not a pid. */
	envPid: number | null;
	/** pi's ancestors, nearest first (empty where the platform does not tell). */
	ancestors: readonly number[];
}

export type HostVia = "env" | "ancestry";

export interface HostEditor {
	pid: number;
	via: HostVia;
}

/** A canonical positive decimal pid, else null (leading zeros, signs, spaces and junk are refused). */
export function parseEditorPid(value: string | undefined): number | null {
	if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value)) return null;
	const pid = Number(value);
	return pid <= 0x7fffffff ? pid : null;
}

/** The editor pi runs in, among the editors with a live, valid state file; null when none. */
export function findHostEditor(hints: HostHints, editorPids: ReadonlySet<number>): HostEditor | null {
	if (hints.envPid !== null && editorPids.has(hints.envPid)) return { pid: hints.envPid, via: "env" };
	for (const pid of hints.ancestors) if (editorPids.has(pid)) return { pid, via: "ancestry" };
	return null;
}

/** For `/ide status`: why this editor counts as the one pi runs in. */
export function describeHost(host: HostEditor): string {
	return host.via === "env"
		? `pi runs in this editor's terminal (${EDITOR_PID_ENV}=${host.pid})`
		: `pi runs in this editor's terminal (pid ${host.pid} is an ancestor of pi)`;
}
