/**
 * The status bar item's text and tooltip, pure: whether writing is on, whether a pi session names this
 * window as its editor, and which files pi changed in its last turn (relative to the workspace folder when
 * inside it, at most MAX_LISTED).
 */
import { relative } from "node:path";
import { innermostFolder } from "./snapshot.ts";

export const MAX_LISTED = 10;

export interface StatusInput {
	enabled: boolean;
	/** The state file path. */
	path: string;
	connected: readonly { pid: number; lastTurn: readonly string[] }[];
	/** Workspace folders, to shorten paths. */
	folders: readonly string[];
}

function shorten(file: string, folders: readonly string[]): string {
	const folder = innermostFolder(file, folders);
	return folder === undefined ? file : relative(folder, file) || file;
}

export function formatStatus(input: StatusInput): { text: string; tooltip: string } {
	if (!input.enabled) {
		return { text: "$(eye-closed) pi", tooltip: "pi IDE context: writing is off (click for options)" };
	}
	const lines = [`pi IDE context: writing ${input.path}`];
	if (input.connected.length === 0) return { text: "$(eye) pi", tooltip: lines.join("\n") };
	for (const pi of input.connected) {
		lines.push("", `pi session ${pi.pid} is connected to this window.`);
		if (pi.lastTurn.length === 0) {
			lines.push("It changed no files in its last turn.");
			continue;
		}
		lines.push("Changed in its last turn:");
		for (const file of pi.lastTurn.slice(0, MAX_LISTED)) lines.push(`  ${shorten(file, input.folders)}`);
		if (pi.lastTurn.length > MAX_LISTED) lines.push(`  and ${pi.lastTurn.length - MAX_LISTED} more`);
	}
	const changed = input.connected.reduce((sum, pi) => sum + pi.lastTurn.length, 0);
	return { text: `$(plug) pi${changed > 0 ? ` ${changed}` : ""}`, tooltip: lines.join("\n") };
}
