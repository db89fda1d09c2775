/**
 * Optional approval of pi's edits (protocol v0.4, `ideContext.approve: "edits"`): before a write/edit runs, pi
 * publishes the proposed change (`pi-<pid>.approval.json`: the hunks against the file as it is now) and waits for
 * the first of the user's decision in the connected editor (its state file's `decisions`), pi's own dialog, pi's
 * abort, or the stated timeout. A closed dialog, an editor that went away or a timeout is never a rejection: the
 * edit is not applied and the model is told to ask. Pure: the request, the wait's control flow (editor, dialog,
 * clock and abort injected) and the words the model reads.
 */
import { posix } from "node:path";
import { formatEditorName, oneLine } from "../protocol/inert.ts";
import { MAX_APPROVAL_BYTES } from "../protocol/limits.ts";
import type { EditorState } from "../protocol/protocol.ts";
import type { ApprovalMessage, ApprovalRequest, ReviewNote } from "../protocol/wire.ts";
import { releaseAll } from "./await-report.ts";
import { computeHunks, type FileContent, MAX_REVIEW_HUNKS_PER_FILE } from "./change-set.ts";

/** The dialog's two answers (pi's TUI, or an RPC client's extension UI). */
export const DIALOG_ACCEPT = "Apply the change";
export const DIALOG_REJECT = "Reject it (the file stays as it is)";

export interface RequestInput {
	id: string;
	tool: string;
	file: string;
	/** The file now. */
	before: FileContent;
	/** What the tool would leave (null when it cannot be known ahead, e.g. the file's text is not carried). */
	after: string | null;
	timeoutS: number;
	/** Seconds since the epoch. */
	now: number;
}

/** The request for one proposed change. */
export function buildRequest(input: RequestInput): ApprovalRequest {
	const { before, after } = input;
	const note: ReviewNote | null = before.kind === "note" ? before.note : after === null ? "unreadable" : null;
	const hunks =
		note === null && after !== null ? computeHunks(input.file, before.kind === "text" ? before.text : "", after) : [];
	return {
		id: input.id,
		tool: input.tool,
		file: input.file,
		created: before.kind === "absent",
		note,
		hunks: hunks.slice(0, MAX_REVIEW_HUNKS_PER_FILE),
		hunks_total: hunks.length,
		timeout_s: input.timeoutS,
		expires: input.now + input.timeoutS,
	};
}

/** The file's text, kept under `maxBytes`: a proposal too large to carry loses its hunks (note "too large"). */
export function encodeApprovalMessage(message: ApprovalMessage, maxBytes = MAX_APPROVAL_BYTES): string {
	const text = JSON.stringify(message);
	if (Buffer.byteLength(text) <= maxBytes) return text;
	return JSON.stringify({ ...message, request: { ...message.request, note: "too large", hunks: [] } });
}

/** Does the editor answer approval requests? A v0.4 editor that does always writes `decisions` (maybe empty). */
export function answersApprovals(state: EditorState | null | undefined): boolean {
	return Array.isArray(state?.decisions);
}

/** The editor's decision on request `id` of pi `piPid` (its newest, should it list two), if any. */
export function decisionIn(
	state: EditorState | null | undefined,
	piPid: number,
	id: string,
): "accept" | "reject" | undefined {
	const mine = (state?.decisions ?? []).filter((d) => d.pi_pid === piPid && d.id === id);
	return mine.at(-1)?.decision;
}

/** How a wait ended. `where` names the editor or pi's dialog. */
export type ApprovalOutcome =
	| { kind: "accepted"; where: string }
	/** Approved, but the file is no longer what the proposal was made from (the user saved it meanwhile). */
	| { kind: "changed"; where: string }
	| { kind: "rejected"; where: string }
	| { kind: "timeout"; seconds: number }
	| { kind: "dismissed" }
	| { kind: "editor gone"; where: string }
	| { kind: "aborted" }
	| { kind: "unattended" }
	/** Nobody could be asked because pi refuses its state dir (`problem`: which and why): never an approval. */
	| { kind: "dir refused"; problem: string };

export const DIALOG_NAME = "pi's approval dialog";

export interface DecisionPorts {
	/** The connected editor that answers approvals: its state now (null: gone) and news of changes. */
	editor?: { name: string; read(): EditorState | null; subscribe(listener: () => void): () => void };
	/** pi's own dialog: "accept", "reject", or undefined when closed without an answer (or dismissed by `signal`). */
	dialog?: (signal: AbortSignal) => Promise<"accept" | "reject" | undefined>;
	/** Run `fn` after `ms`; returns the cancel. */
	setTimer(fn: () => void, ms: number): () => void;
}

/**
 * Wait for the first of: the editor's decision on `id`, the dialog's answer, `signal` (pi's abort), or the
 * timeout. The dialog is dismissed (its signal aborted) once anything else decides. An editor that goes away
 * ends the wait only when there is no dialog to answer instead; a dialog closed without an answer ends it.
 * Never rejects: a read or a dialog that throws counts as no answer from it.
 */
export function awaitDecision(
	ports: DecisionPorts,
	request: { piPid: number; id: string; timeoutS: number },
	signal?: AbortSignal,
): Promise<ApprovalOutcome> {
	return new Promise((resolve) => {
		let done = false;
		const dismiss = new AbortController();
		const cleanups: (() => void)[] = [() => dismiss.abort()];
		const finish = (outcome: ApprovalOutcome) => {
			if (done) return;
			done = true;
			releaseAll(cleanups);
			resolve(outcome);
		};
		if (signal?.aborted) return finish({ kind: "aborted" });
		const onAbort = () => finish({ kind: "aborted" });
		signal?.addEventListener("abort", onAbort, { once: true });
		cleanups.push(() => signal?.removeEventListener("abort", onAbort));
		cleanups.push(
			ports.setTimer(() => finish({ kind: "timeout", seconds: request.timeoutS }), request.timeoutS * 1000),
		);
		const { editor, dialog } = ports;
		let editorGone = false;
		if (dialog) {
			dialog(dismiss.signal).then(
				(answer) => {
					if (answer === "accept") finish({ kind: "accepted", where: DIALOG_NAME });
					else if (answer === "reject") finish({ kind: "rejected", where: DIALOG_NAME });
					else if (!dismiss.signal.aborted) finish({ kind: "dismissed" });
				},
				() => {
					// The dialog failed: the editor or the timeout decides.
					if (!editor || editorGone) finish({ kind: "dismissed" });
				},
			);
		}
		if (editor) {
			const check = () => {
				if (done) return;
				try {
					const state = editor.read();
					if (state === null) {
						editorGone = true;
						if (!dialog) finish({ kind: "editor gone", where: editor.name });
						return;
					}
					const decision = decisionIn(state, request.piPid, request.id);
					if (decision === "accept") finish({ kind: "accepted", where: editor.name });
					else if (decision === "reject") finish({ kind: "rejected", where: editor.name });
				} catch {
					// Unreadable now: the next change, the dialog or the timeout decides.
				}
			};
			cleanups.push(editor.subscribe(check));
			check();
		}
	});
}

/** The path as the model knows it: relative inside `cwd`, absolute outside. */
function shownPath(file: string, cwd: string): string {
	const rel = posix.relative(cwd, file);
	return oneLine(rel !== "" && !rel.startsWith("..") && !posix.isAbsolute(rel) ? rel : file);
}

/** What the model is told: `block` is the reason the tool did not run, `note` goes with the tool's result. */
export interface OutcomeWords {
	block: string | null;
	note: string | null;
}

/** The words for an outcome about `file`. Every outcome says something: approval is never silent. */
export function describeOutcome(outcome: ApprovalOutcome, file: string, cwd: string): OutcomeWords {
	const path = shownPath(file, cwd);
	const notApplied = `the change was not applied and ${path} is unchanged`;
	const ask = "This is not a rejection: ask the user whether to make it.";
	switch (outcome.kind) {
		case "accepted":
			return { block: null, note: `Approval: the user approved this change to ${path} in ${outcome.where}.` };
		case "changed":
			return {
				block: `The user approved this change in ${outcome.where}, but ${path} changed after the change was proposed (saved while the user reviewed it): the change was not applied, so the file keeps its new content. Read ${path} again before changing it.`,
				note: null,
			};
		case "rejected":
			return {
				block: `The user rejected this change in ${outcome.where}: ${path} is unchanged. Do not make it again unless the user asks.`,
				note: null,
			};
		case "timeout":
			return {
				block: `No decision within ${outcome.seconds} s (the user approves each write/edit): ${notApplied}. ${ask}`,
				note: null,
			};
		case "dismissed":
			return { block: `The user closed ${DIALOG_NAME} without deciding: ${notApplied}. ${ask}`, note: null };
		case "editor gone":
			return {
				block: `${outcome.where} closed while this change waited for approval: ${notApplied}. ${ask}`,
				note: null,
			};
		case "aborted":
			return {
				block: `The run was stopped while this change waited for the user's approval: ${notApplied}.`,
				note: null,
			};
		case "dir refused":
			return {
				block: `Approval is on, but pi refuses its state directory (${oneLine(outcome.problem, 300)}), so the user's editor cannot be asked, and pi has no dialog here: ${notApplied}. This is not a rejection: tell the user, who must fix the directory or approve another way.`,
				note: null,
			};
		case "unattended":
			return {
				block: null,
				note: "Approval is on, but no editor and no dialog could ask the user (no UI, no editor that answers approvals): this change was applied without approval.",
			};
	}
}

/**
 * What pi's dialog adds when pi refuses its state dir (`problem`: which and why): the user's editor was not asked
 * and cannot be, so the dialog is the only place this change is approved.
 */
export function refusedDirWarning(problem: string): string {
	return ` Your editor cannot be asked: pi refuses its state directory ${oneLine(problem, 300)}.`;
}

/** The editor's name for the words above ("Neovim", "VS Code"). */
export function editorName(state: EditorState): string {
	return formatEditorName(state);
}

/** The dialog's title: what changes, how much, and what silence means. */
export function dialogTitle(request: ApprovalRequest, cwd: string): string {
	const path = shownPath(request.file, cwd);
	const verb = request.created ? "create" : request.tool === "write" ? "overwrite" : "edit";
	const added = request.hunks.reduce((n, h) => n + h.new_lines, 0);
	const removed = request.hunks.reduce((n, h) => n + h.old_lines, 0);
	const size =
		request.note !== null
			? ` (${request.note}: no preview)`
			: ` (+${added} -${removed} in ${request.hunks_total} ${request.hunks_total === 1 ? "hunk" : "hunks"})`;
	return `pi wants to ${verb} ${path}${size}. No answer within ${request.timeout_s} s leaves the file unchanged.`;
}
