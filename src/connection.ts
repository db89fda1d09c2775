/**
 * Which editor is pi connected to? A pure decision over the live editors of
 * the moment and the user's intent, re-run whenever editors come and go:
 *
 * - auto: connect only when exactly one live editor is in the best non-empty tier;
 * - picked (via `/ide`): stick to that editor until it dies, then fall back to auto;
 * - off (`/ide off` or the picker's disconnect row): no auto-connect for this session.
 */

export type ConnectionMode = { kind: "auto" } | { kind: "picked"; pid: number } | { kind: "off" };

export type Connection =
	| { connected: true; pid: number; mode: ConnectionMode; why: "picked" | "only candidate" }
	| { connected: false; mode: ConnectionMode; why: "off" | "no editor" | "several candidates"; candidates: number[] };

/**
 * @param mode the user's intent so far
 * @param livePids every live editor we may read (any tier)
 * @param bestTierPids the live editors in the best non-empty tier
 */
export function decideConnection(
	mode: ConnectionMode,
	livePids: readonly number[],
	bestTierPids: readonly number[],
): Connection {
	if (mode.kind === "off") return { connected: false, mode, why: "off", candidates: [...bestTierPids] };
	if (mode.kind === "picked") {
		if (livePids.includes(mode.pid)) return { connected: true, pid: mode.pid, mode, why: "picked" };
		// The picked editor is gone: the choice does not outlive it.
		return decideConnection({ kind: "auto" }, livePids, bestTierPids);
	}
	const [only, ...others] = bestTierPids;
	if (only !== undefined && others.length === 0) return { connected: true, pid: only, mode, why: "only candidate" };
	return {
		connected: false,
		mode,
		why: bestTierPids.length === 0 ? "no editor" : "several candidates",
		candidates: [...bestTierPids],
	};
}
