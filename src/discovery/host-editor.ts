/**
 * Is pi running inside an editor's terminal? Pure: the hints are read once at
 * session start (see proc-info.ts), the decision is a lookup per refresh.
 *
 * - Process ancestry (Linux): pi's parent, grandparent, ... matched against the
 *   state-file pids; the nearest ancestor wins. Proof that pi runs inside that
 *   editor (Neovim's `:terminal` starts pi as its child), so it counts unconditionally.
 * - `PI_IDE_EDITOR_PID`: every editor client exports its state-file pid to the
 *   processes its terminals start (Neovim: `vim.env`, VS Code:
 *   `environmentVariableCollection`). Inherited, so it can outlive its meaning: a
 *   tmux server started in a Neovim `:terminal` hands it to every pane it opens
 *   later, in any project. It counts only when that editor is one of pi's
 *   ancestors or works in pi's project (has a tier): VS Code's integrated terminal
 *   (the pid is the window's extension host, not an ancestor) is in the project.
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

/** The live editors a host is chosen among. */
export interface HostCandidates {
	/** Editors with a live, valid state file. */
	live: ReadonlySet<number>;
	/** Those of them that work in pi's project (a tier). */
	inProject: ReadonlySet<number>;
}

/**
 * What PI_IDE_EDITOR_PID amounted to: unset, the host, or why not. "another project": a live editor that is
 * neither an ancestor of pi nor in pi's project (the variable was inherited from elsewhere).
 */
export type EnvPidVerdict = "unset" | "host" | "no live editor" | "another project";

export interface HostDecision {
	host: HostEditor | null;
	envPid: EnvPidVerdict;
}

/** A canonical positive decimal pid, else null (leading zeros, signs, spaces and junk are refused). */
export function parseEditorPid(value: string | undefined): number | null {
	if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value)) return null;
	const pid = Number(value);
	return pid <= 0x7fffffff ? pid : null;
}

/** The editor pi runs in, among the editors with a live, valid state file (host null when none). */
export function findHostEditor(hints: HostHints, editors: HostCandidates): HostDecision {
	const envPid = judgeEnvPid(hints, editors);
	if (envPid === "host" && hints.envPid !== null) return { host: { pid: hints.envPid, via: "env" }, envPid };
	for (const pid of hints.ancestors) if (editors.live.has(pid)) return { host: { pid, via: "ancestry" }, envPid };
	return { host: null, envPid };
}

function judgeEnvPid(hints: HostHints, editors: HostCandidates): EnvPidVerdict {
	const pid = hints.envPid;
	if (pid === null) return "unset";
	if (!editors.live.has(pid)) return "no live editor";
	return hints.ancestors.includes(pid) || editors.inProject.has(pid) ? "host" : "another project";
}

/** For `/ide status`: why this editor counts as the one pi runs in. */
export function describeHost(host: HostEditor): string {
	return host.via === "env"
		? `pi runs in this editor's terminal: ${EDITOR_PID_ENV}=${host.pid}`
		: `pi runs in this editor's terminal: pid ${host.pid} is an ancestor of pi`;
}

/** For `/ide status`: why PI_IDE_EDITOR_PID did not make its editor the host; null when there is nothing to say. */
export function describeEnvPid(pid: number | null, verdict: EnvPidVerdict): string | null {
	if (pid === null) return null;
	switch (verdict) {
		case "no live editor":
			return `${EDITOR_PID_ENV}=${pid}: no live editor has that pid (its client is off, has no UI yet, or it exited)`;
		case "another project":
			return `${EDITOR_PID_ENV}=${pid}: that editor is not an ancestor of pi and works in another project, so pi does not take it for the editor it runs in (the variable was inherited, e.g. through a tmux server started in that editor's terminal)`;
		default:
			return null;
	}
}
