/**
 * Which editor is pi connected to? A pure decision over the live editors of
 * the moment and the user's intent, re-run whenever editors come and go.
 * Strongest first:
 *
 * 1. picked in this session (`/ide`): that editor until it dies, then auto;
 * 2. off in this session (`/ide off`, the picker's disconnect row), or remembered off;
 * 3. the editor pi runs in (its terminal): whatever else runs in the project;
 * 4. a remembered `/ide` pick that names exactly one live editor;
 * 5. the editor auto-connected earlier, or connected when the user said `/ide auto`
 *    (sticky): kept while it lives and still matches the project, so a second
 *    editor starting never drops or steals it;
 * 6. auto: exactly one live editor in the best non-empty tier.
 */

/** `sticky`: the editor auto-connected last; it stays while it lives in the project. */
export type ConnectionMode = { kind: "auto"; sticky?: number } | { kind: "picked"; pid: number } | { kind: "off" };

export type ConnectedWhy = "picked" | "editor terminal" | "remembered pick" | "kept" | "only candidate";
export type DisconnectedWhy = "off" | "remembered off" | "no editor" | "several candidates";

export type Connection =
	| { connected: true; pid: number; mode: ConnectionMode; why: ConnectedWhy }
	| { connected: false; mode: ConnectionMode; why: DisconnectedWhy; candidates: number[] };

/** What a remembered choice resolved to among the live editors (see choices.ts). */
export type RememberedInput = { kind: "none" } | { kind: "off" } | { kind: "pick"; pid: number };

export interface ConnectionInput {
	/** The user's intent so far in this session. */
	mode: ConnectionMode;
	/** Every live editor we may read (any tier). */
	livePids: readonly number[];
	/** The live editors with a tier (they belong to this project). */
	projectPids: readonly number[];
	/** The live editors in the best non-empty tier. */
	bestTierPids: readonly number[];
	/** The live editor whose terminal pi runs in, if any. */
	hostPid?: number | null;
	/** The remembered choice for this project, resolved against the live editors. */
	remembered?: RememberedInput;
}

/** Decide the connection. The returned `mode` is the intent to keep for the next decision. */
export function decideConnection(input: ConnectionInput): Connection {
	const { mode, livePids, projectPids, bestTierPids } = input;
	const candidates = [...bestTierPids];
	if (mode.kind === "picked") {
		if (livePids.includes(mode.pid)) return { connected: true, pid: mode.pid, mode, why: "picked" };
		// The picked editor is gone: the choice does not outlive it.
		return decideConnection({ ...input, mode: { kind: "auto" } });
	}
	if (mode.kind === "off") return { connected: false, mode, why: "off", candidates };
	const remembered = input.remembered ?? { kind: "none" };
	if (remembered.kind === "off") return { connected: false, mode, why: "remembered off", candidates };
	const connect = (pid: number, why: ConnectedWhy): Connection => ({
		connected: true,
		pid,
		mode: { kind: "auto", sticky: pid },
		why,
	});
	const host = input.hostPid ?? null;
	if (host !== null && livePids.includes(host)) return connect(host, "editor terminal");
	if (remembered.kind === "pick" && livePids.includes(remembered.pid))
		return connect(remembered.pid, "remembered pick");
	const [only, ...others] = bestTierPids;
	const single = only !== undefined && others.length === 0 ? only : undefined;
	const sticky = mode.sticky;
	if (sticky !== undefined && sticky !== single && projectPids.includes(sticky)) return connect(sticky, "kept");
	if (single !== undefined) return connect(single, "only candidate");
	return {
		connected: false,
		mode: { kind: "auto" },
		why: bestTierPids.length === 0 ? "no editor" : "several candidates",
		candidates,
	};
}
