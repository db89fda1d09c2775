/**
 * The `/ide status` report: everything pi knows about the editors, as text for
 * the user. Pure: the controller gathers the facts, this module only words
 * them. Every value that came from a state file goes through `oneLine` (or
 * `inert` for multi-line text), so a hostile file name or snippet cannot forge a
 * line of the report or send the terminal an escape sequence.
 */
import { checkFreshness, formatSeconds } from "../context/blocks.ts";
import type { RememberedResolution } from "../discovery/choices.ts";
import type { Connection, ConnectionMode } from "../discovery/connection.ts";
import { describeEnvPid, describeHost, type EnvPidVerdict, type HostEditor } from "../discovery/host-editor.ts";
import type { ScanDiagnostic } from "../discovery/scan.ts";
import type { Tier } from "../discovery/tiers.ts";
import { formatEditorName, inert, oneLine } from "../protocol/inert.ts";
import type { PathMapping } from "../protocol/path-map.ts";
import type { EditorState, Selection } from "../protocol/protocol.ts";
import type { DirHealth } from "../protocol/state-dir.ts";

/**
 * What the next prompt would carry: nothing (and why), or a block. `why`, when given, says what of the block
 * is sent given what the model already has (context/model-view.ts); `text` is then what is sent (maybe nothing).
 */
export type NextPrompt =
	| { kind: "skip"; reason: string }
	| { kind: "inject"; text: string; selection: Selection | null; why?: string };

export interface StatusFacts {
	/** Unix seconds. */
	now: number;
	health: DirHealth;
	mode: ConnectionMode;
	/** Live editors, best first; `warnings`: malformed v0.3 fields of its state file, dropped (scan.ts). */
	editors: readonly { state: EditorState; tier: Tier | null; warnings?: readonly string[] }[];
	/** Files skipped: invalid, refused, foreign pids. */
	diagnostics: readonly ScanDiagnostic[];
	connection: Connection;
	/** The editor pi runs in, if any (default none). */
	host?: HostEditor | null;
	/** The pid in pi's PI_IDE_EDITOR_PID, if set. */
	envPid?: number | null;
	/** What that pid amounted to (host-editor.ts); default: no live editor has it. */
	envPidVerdict?: EnvPidVerdict;
	/** The remembered choice for this project, resolved (default none). */
	remembered?: RememberedResolution;
	/** Where remembered choices are stored. */
	choicesPath?: string | null;
	next: NextPrompt;
	/** pi's change set (v0.4 review), when the session has one to describe. */
	changes?: ChangesFacts;
	/** The approval setting and any request waiting now (v0.4), when the session has them. */
	approval?: ApprovalFacts;
	/** pi in a sandbox or a container: the editors' directories as pi sees them (path-map.ts); none by default. */
	paths?: readonly PathMapping[];
	/** v0.5 send to pi: the latest send pi answered (undefined: not described; null: none yet). */
	lastSend?: { editorPid: number; id: string; fate: string; reason?: string } | null;
}

/** pi's change set as the editors see it: the runs kept, their files and hunks; reverts the model was told. */
export interface ChangesFacts {
	runs: number;
	files: number;
	hunks: number;
	revertsTold: number;
}

export interface ApprovalFacts {
	mode: "off" | "edits";
	timeoutS: number;
	/** The connected editor's name when it answers approvals (its state has `decisions`); null: it does not, or none. */
	answeringEditor: string | null;
	/** Whether pi has a dialog to ask in (a UI). */
	dialog: boolean;
	/** The write/edit waiting for a decision now. */
	pending: { tool: string; file: string; waitedS: number } | null;
	/** Why pi refuses its state dir (no editor can be asked), when it does. */
	refusedDir?: string | null;
}

/** The report, one fact per line. */
export function formatStatusReport(facts: StatusFacts): string {
	const { health, connection, now } = facts;
	const lines: string[] = [];
	lines.push(
		health.ok
			? `State dir: ${oneLine(health.dir)} (ok)`
			: `State dir: ${oneLine(health.dir)} ${health.reason}${health.remedy ? ` (fix: ${oneLine(health.remedy)})` : ""}`,
	);
	lines.push(`Mode: ${describeMode(facts.mode, connection)}`);
	for (const m of facts.paths ?? [])
		lines.push(
			`Path: the editors' ${oneLine(m.editor)} is pi's ${oneLine(m.pi)} (${m.from === "mount" ? "pi's bind mount" : "ideContext.paths"})`,
		);
	const remembered = describeRemembered(facts.remembered ?? { kind: "none" }, facts.choicesPath ?? null, connection);
	if (remembered) lines.push(remembered);
	lines.push(facts.editors.length === 0 ? "Editors: none running" : `Editors (${facts.editors.length}):`);
	const connectedPid = connection.connected ? connection.pid : null;
	for (const { state, tier, warnings } of facts.editors) {
		const where = tier === null ? "other project" : `tier ${tier}`;
		const mark = state.pid === connectedPid ? "* " : "  ";
		const file = state.database
			? `table ${oneLine(state.database.table, 200)}`
			: state.active_buffer.file === null
				? "[No Name]"
				: oneLine(state.active_buffer.file);
		lines.push(
			`${mark}${formatEditorName(state)} pid ${state.pid}, ${where}, cwd ${oneLine(state.cwd)}, ${file}, written ${formatSeconds(Math.max(0, now - state.timestamp))} ago`,
		);
		// The editor still counts: only the malformed v0.3 field is dropped (PROTOCOL.md, v0.3).
		for (const warning of warnings ?? [])
			lines.push(`    pid ${state.pid} wrote a malformed v0.3 field: ${oneLine(warning)}`);
	}
	for (const d of facts.diagnostics) lines.push(`Skipped ${oneLine(d.path)}: ${oneLine(d.message)}`);
	const envPid = facts.envPid ?? null;
	if (envPid !== null && facts.host?.pid !== envPid) {
		const line = describeEnvPid(envPid, facts.envPidVerdict ?? "no live editor");
		if (line) lines.push(line);
	}
	lines.push(
		connection.connected
			? `Connected: pid ${connection.pid} (${describeConnected(facts)})`
			: `Not connected: ${describeDisconnected(connection)}`,
	);
	if (facts.changes) lines.push(describeChanges(facts.changes));
	if (facts.approval) lines.push(...describeApproval(facts.approval));
	if (facts.lastSend !== undefined) lines.push(describeLastSend(facts.lastSend));
	const next = facts.next;
	if (next.kind === "skip") {
		// A colon, not brackets: the reason may carry its own (a rule's pattern, a dir's permissions).
		lines.push(`Next prompt: nothing injected: ${oneLine(next.reason, 1000)}`);
	} else {
		const selectionLine = describeUnsentSelection(next.selection, now);
		if (selectionLine) lines.push(selectionLine);
		if (next.why === undefined) lines.push("Next prompt would include:", inert(next.text, { lines: "keep" }));
		else if (next.text === "") lines.push(`Next prompt sends ${inert(next.why)}`);
		else lines.push(`Next prompt sends ${inert(next.why)}:`, inert(next.text, { lines: "keep" }));
	}
	return lines.join("\n");
}

/** One line: what pi's change set holds for the editors to review. */
/** v0.5: the latest send from an editor and its fate. */
function describeLastSend(sent: StatusFacts["lastSend"]): string {
	if (!sent) return "Sent from the editor: nothing yet";
	const fates: Record<string, string> = {
		draft: "put into pi's input as a draft",
		prompt: "sent as a prompt",
		"follow-up": "queued as a follow-up of the run under way",
		excluded: "refused: the file is excluded by the ignore rules (nothing reached the model)",
	};
	const fate = fates[sent.fate] ?? `refused: ${oneLine(sent.reason ?? sent.fate, 200)}`;
	return `Sent from the editor (pid ${sent.editorPid}, id ${oneLine(sent.id, 64)}): ${fate}`;
}

function describeChanges(changes: ChangesFacts): string {
	if (changes.runs === 0) return "pi's changes: none yet (nothing to review)";
	const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
	const told = changes.revertsTold > 0 ? `; ${plural(changes.revertsTold, "revert")} told to the model` : "";
	return `pi's changes: ${plural(changes.files, "file")}, ${plural(changes.hunks, "hunk")} in the last ${plural(changes.runs, "run")}, published for review${told}`;
}

/** The approval setting, who is asked, and the write/edit waiting now. */
function describeApproval(approval: ApprovalFacts): string[] {
	if (approval.mode === "off") return ["Approval: off (pi's write/edit run without asking)"];
	const askers = [
		...(approval.answeringEditor === null ? [] : [oneLine(approval.answeringEditor)]),
		...(approval.dialog ? ["pi's dialog"] : []),
	];
	const refused = approval.refusedDir ?? null;
	const who =
		askers.length > 0
			? `asked in ${askers.join(" and ")}`
			: refused !== null
				? "nobody can be asked: changes are not applied and the model is told to ask the user"
				: "nobody can be asked (no editor that answers, no dialog): changes are applied and the model is told";
	const lines = [`Approval: each write/edit waits up to ${approval.timeoutS} s; ${who}`];
	if (refused !== null) lines.push(`  no editor can be asked: pi refuses its state directory ${oneLine(refused)}`);
	const pending = approval.pending;
	if (pending)
		lines.push(
			`  waiting: ${oneLine(pending.tool)} ${oneLine(pending.file)}, ${formatSeconds(pending.waitedS)} so far`,
		);
	return lines;
}

/** Why the editor's selection is not in the block, when it has one that is not sent. */
function describeUnsentSelection(selection: Selection | null, now: number): string | undefined {
	const freshness = checkFreshness(selection, now);
	if (freshness.fresh) return undefined;
	switch (freshness.reason) {
		case "no selection":
			return undefined;
		case "no timestamp":
			return "Selection: no timestamp (restored marks), not sent";
		case "stale":
			return `Selection: stale (made ${formatSeconds(freshness.ageSeconds ?? 0)} ago), not sent`;
		case "in the future":
			return `Selection: invalid selected_at, ${formatSeconds(-(freshness.ageSeconds ?? 0))} in the future (clock skew, or a client writing milliseconds), not sent`;
	}
}

/** Why pi is not connected, in words, with what the user can do about it. */
export function describeDisconnected(connection: Connection): string {
	if (connection.connected) return "connected";
	switch (connection.why) {
		case "off":
			return "auto-connect is off; /ide picks an editor, /ide auto resumes";
		case "remembered off":
			return "/ide off is remembered for this project; /ide picks an editor, /ide auto resumes";
		case "no editor":
			return "no editor is running in this project";
		case "several candidates":
			return `${connection.candidates.length} editors match this project equally, pids ${connection.candidates.join(", ")}; pick one with /ide`;
	}
}

/**
 * The intent in force: this session's (`mode`), or the remembered choice it yields to. A remembered `/ide off`
 * leaves the session's mode at auto-connect, yet nothing connects: the line says off.
 */
function describeMode(mode: ConnectionMode, connection: Connection): string {
	if (!connection.connected && connection.why === "remembered off") return "off, remembered for this project";
	switch (mode.kind) {
		case "auto":
			return mode.sticky === undefined ? "auto-connect" : `auto-connect, keeping pid ${mode.sticky} while it runs`;
		case "picked":
			return `picked pid ${mode.pid} with /ide`;
		case "off":
			return "off";
	}
}

/** Why pi is connected to this editor, in words. */
function describeConnected(facts: StatusFacts): string {
	const connection = facts.connection;
	if (!connection.connected) return "not connected";
	switch (connection.why) {
		case "editor terminal":
			return facts.host ? describeHost(facts.host) : "pi runs in this editor's terminal";
		case "remembered pick":
			return facts.remembered?.kind === "pick"
				? `remembered /ide pick, ${facts.remembered.how}`
				: "remembered /ide pick";
		case "kept":
			return "connected earlier, kept while it runs; /ide to switch";
		default:
			return connection.why;
	}
}

/** What won over a remembered pick whose editor runs (connection.ts decides in this order). */
function describeOverride(connection: Connection): string {
	if (!connection.connected)
		return connection.why === "off" ? "/ide off in this session" : describeDisconnected(connection);
	switch (connection.why) {
		case "picked":
			return `pid ${connection.pid} picked with /ide in this session`;
		case "editor terminal":
			return `pi runs in the terminal of pid ${connection.pid}`;
		default:
			return `connected to pid ${connection.pid}`;
	}
}

/** The remembered choice for this project and what became of it, or null when there is none. */
function describeRemembered(
	remembered: RememberedResolution,
	path: string | null,
	connection: Connection,
): string | null {
	const where = path ? ` (stored in ${oneLine(path)})` : "";
	switch (remembered.kind) {
		case "none":
			return null;
		case "off":
			return `Remembered: /ide off for this project${where}; /ide auto forgets it`;
		case "pick": {
			const applied = connection.connected && connection.why === "remembered pick" && connection.pid === remembered.pid;
			return applied
				? `Remembered: /ide pick, applied to pid ${remembered.pid} (${remembered.how})${where}`
				: `Remembered: /ide pick of pid ${remembered.pid} (${remembered.how}), not applied (${describeOverride(connection)})${where}`;
		}
		case "ambiguous":
			return `Remembered: /ide pick not applied: pids ${remembered.pids.join(", ")} look like the picked editor${where}`;
		case "absent":
			return `Remembered: /ide pick of ${oneLine(remembered.editor.app, 100)} in ${oneLine(remembered.editor.cwd)}, not running now${where}`;
	}
}
