/**
 * pi's optional approval (protocol v0.4, `ideContext.approve: "edits"`) answered in VS Code: the thin shell over the
 * shared ApprovalInbox (editors/shared/approval.ts). While pi's write/edit waits for this window's answer:
 * - one non-modal notification per request ("pi wants to edit src/a.ts: 2 hunks", Accept / Reject / Show change),
 *   which never takes focus; a status bar item stays while the request waits (its menu has the same choices), and
 *   the commands "pi: Accept pi's proposed change" / "pi: Reject pi's proposed change" answer from the keyboard the
 *   request the user was shown (PROTOCOL.md "An answer is for the request the user saw": a request that took the place
 *   of one shown and unanswered is named, not answered, and the same command again answers it);
 * - in a visible editor of the file, while it still holds the lines pi read, the lines pi would replace or delete
 *   are marked, with a short note after each hunk's first line (the `reviewMarks` setting, as the Neovim client);
 * - "Show change" opens `vscode.diff` of the file as it is (the open document, unsaved text and all) against the
 *   proposal, worked out in memory and served read-only from `pi-proposal:` documents: no buffer or file is ever
 *   written for a proposal;
 * - issue 26: a document with unsaved changes shows the proposal against what the user sees (shared/approval.ts
 *   `proposalAgainstBuffer`, the merge's rule): each hunk that touches no unsaved change is marked where the merge
 *   would put it, each one that does is marked on the user's lines, and the notice names those lines ("1 of 2 hunks
 *   touches your unsaved lines 7-8: ..."); "Show change" is the document beside itself with the placed hunks;
 * - the answer goes into the state file's `decisions`, which pi reads; closing the notification decides nothing.
 * The request ending otherwise (pi's dialog answered, its timeout, pi gone) hides the status item and forgets it; an
 * answer to a request that is gone does nothing but say so in the output channel. Requests are read by the shared
 * PiWatcher through pi-reader.ts's checks (a live pi of ours, naming this window, not run out).
 */
import { basename } from "node:path";
import * as vscode from "vscode";
import {
	type ApprovalDecision,
	ApprovalInbox,
	type DecisionTarget,
	describeApproval,
	describeUnsaved,
	isSplitAtNewline,
	type PendingApproval,
	proposalAgainstBuffer,
	proposalDiff,
	proposalText,
	type UnsavedProposal,
} from "../../shared/approval.ts";
import type { PiApprovalVerdict } from "../../shared/pi-reader.ts";

/** Read-only documents holding pi's proposals (and the empty "before" of a file pi would create). */
export const PROPOSAL_SCHEME = "pi-proposal";
/** Proposals kept for open diff tabs (VS Code asks for a document's text again when it reopens it). */
const KEPT_PROPOSALS = 8;

export const ACCEPT = "Accept";
export const REJECT = "Reject";
export const SHOW = "Show change";

export interface ApprovalHost {
	/** A line in the output channel. */
	log(message: string): void;
	/** Setting `reviewMarks`: the proposal is marked in editors of its file unless the user turned marks off. */
	marksEnabled(): boolean;
	/** `decisions` changed: write the state file now. */
	changed(): void;
	/** The open document pi's path names, if any. */
	findDocument(file: string): vscode.TextDocument | undefined;
	/**
	 * Issue 26: the text on disk of the document pi's path names (pi-sync.ts `diskOf`: one verified read, never
	 * through a planted link), when it is a readable text file; what a proposal against unsaved changes is made from.
	 */
	diskText(file: string): string | undefined;
	/** Run a handler without letting it throw into the host. */
	guard<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
	/** Seconds since the epoch. */
	now(): number;
}

const WHY_ENDED: Record<"gone" | "dead" | "elsewhere" | "expired" | "problem" | "replaced" | "stopped", string> = {
	gone: "pi no longer waits on it (answered in pi's dialog, timed out or stopped)",
	dead: "pi has exited",
	elsewhere: "pi now asks another editor",
	expired: "its time ran out: pi did not apply it",
	problem: "its request can no longer be read",
	replaced: "pi asks about another change now",
	stopped: "this window stopped reading pi's messages",
};
type WhyEnded = keyof typeof WHY_ENDED;

/** What a touching hunk's note adds (issue 26): the user's lines stay in the buffer whatever the answer. */
const TOUCHES_NOTE = "touches your unsaved lines: if accepted, the file gets pi's text and your buffer keeps yours";

/**
 * The marks of `request` in `document`: each hunk's old lines (an insertion: the line it goes before, or the last),
 * with a note at their end of what pi proposes there; none unless the document still holds the lines pi read. With
 * `unsaved` (the proposal against the document's unsaved changes) each hunk is marked at its place there.
 */
function marksOf(
	request: PendingApproval,
	document: vscode.TextDocument,
	unsaved: UnsavedProposal | undefined,
): vscode.DecorationOptions[] {
	// Unsaved lines not split at \n (CR-LF, a BOM) are not compared with the disk's: no marks (PROTOCOL.md).
	if (unsaved === undefined && document.isDirty && !isSplitAtNewline(document.getText())) return [];
	const lines = Array.from({ length: document.lineCount }, (_, i) => document.lineAt(i).text);
	if (unsaved === undefined && proposalText(request, lines, "\n") === undefined) return [];
	const last = Math.max(document.lineCount - 1, 0);
	return request.hunks.map((hunk, i) => {
		const place = unsaved?.places[i];
		const start = place ? place.from : hunk.old_start - 1;
		const count = place ? place.to - place.from : hunk.old_text.length;
		const first = Math.min(start, last);
		const end = Math.min(first + Math.max(count, 1) - 1, last);
		const what =
			hunk.old_text.length === 0
				? `adds ${hunk.new_text.length} ${hunk.new_text.length === 1 ? "line" : "lines"} ${start > last ? "after" : "before"} this`
				: hunk.new_text.length === 0
					? `deletes ${hunk.old_text.length === 1 ? "this line" : `these ${hunk.old_text.length} lines`}`
					: `replaces ${hunk.old_text.length === 1 ? "this line" : `these ${hunk.old_text.length} lines`} with ${hunk.new_text.length}`;
		const note = place?.touches ? `${what}; ${TOUCHES_NOTE}` : what;
		return {
			range: new vscode.Range(first, 0, end, document.lineAt(end).text.length),
			renderOptions: {
				after: {
					contentText: `  pi proposes: ${note} (waiting for your approval)`,
					color: new vscode.ThemeColor("editorCodeLens.foreground"),
					margin: "0 0 0 2em",
				},
			},
		};
	});
}

export class ApprovalView implements vscode.Disposable {
	readonly #host: ApprovalHost;
	readonly #inbox = new ApprovalInbox();
	readonly #status: vscode.StatusBarItem;
	readonly #proposals = new Map<string, string>();
	readonly #told = new Set<string>();
	readonly #disposables: vscode.Disposable[] = [];
	readonly #marks: vscode.TextEditorDecorationType;
	#expiry: ReturnType<typeof setTimeout> | undefined;

	constructor(host: ApprovalHost) {
		this.#host = host;
		// The lines pi would take out, in the diff editor's colour for removed lines; the note in the code lens colour.
		this.#marks = vscode.window.createTextEditorDecorationType({
			isWholeLine: true,
			backgroundColor: new vscode.ThemeColor("diffEditor.removedLineBackground"),
			overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.modifiedForeground"),
			overviewRulerLane: vscode.OverviewRulerLane.Left,
		});
		this.#status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 1);
		this.#status.command = "piIdeContext.approvalActions";
		const guard = host.guard;
		this.#disposables.push(
			this.#status,
			this.#marks,
			vscode.window.onDidChangeVisibleTextEditors(guard(() => this.redraw())),
			vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, {
				provideTextDocumentContent: (uri) =>
					this.#proposals.get(uri.toString()) ?? "(pi no longer waits on this change)",
			}),
			vscode.commands.registerCommand(
				"piIdeContext.approve",
				guard(() => this.decide("accept", "current")),
			),
			vscode.commands.registerCommand(
				"piIdeContext.reject",
				guard(() => this.decide("reject", "current")),
			),
			vscode.commands.registerCommand(
				"piIdeContext.showProposal",
				this.#command(() => this.#show("current")),
			),
			vscode.commands.registerCommand(
				"piIdeContext.approvalActions",
				this.#command(() => this.#actions()),
			),
		);
	}

	/** The state file's `decisions`: a list from the start, which tells pi this window answers. */
	get decisions(): ApprovalDecision[] {
		return this.#inbox.decisions;
	}

	/** What the watcher read of pi `pid`'s request file. */
	received(pid: number, verdict: PiApprovalVerdict, piNs?: string): void {
		if (verdict.kind !== "request") {
			this.end(pid, verdict.kind, piNs);
			return;
		}
		const { request } = verdict;
		const result = this.#inbox.receive(request);
		if (result.kind === "replaced") this.#ended(result.ended, "replaced");
		if (verdict.dropped > 0) this.#host.log(`${this.#name(request)}: ${verdict.dropped} malformed hunks ignored`);
		this.#refresh();
		if (result.kind !== "same") this.#notify(request);
	}

	/** pi `pid` (v0.5: of namespace `piNs`) waits on nothing here any more (`why`): forget its request, if any. */
	end(pid: number, why: WhyEnded, piNs?: string): void {
		const request = this.#inbox.end(pid, piNs);
		if (request === undefined) return;
		this.#ended(request, why);
		this.#refresh();
	}

	/** Every request forgotten (the window stopped reading pi's messages). */
	reset(): void {
		for (const request of this.#inbox.pending) this.end(request.piPid, "stopped", request.piNs);
	}

	/** The user's answer, for the request a notice showed or (commands) the one that runs out first. */
	decide(decision: ApprovalDecision["decision"], target: DecisionTarget): void {
		const outcome = this.#inbox.decide(decision, target, this.#host.now());
		this.#refresh();
		if (outcome.kind === "moved") {
			const line = `not ${decision === "accept" ? "approved" : "rejected"}: the request you saw is gone; ${describeApproval(outcome.request, this.#name(outcome.request))}. Answer again to ${decision === "accept" ? "accept" : "reject"} it`;
			this.#host.log(line);
			vscode.window.setStatusBarMessage(`pi: ${line}`, 10_000);
			return;
		}
		if (outcome.kind === "gone") {
			const line = "pi is not waiting for an answer to that (decided elsewhere, timed out, or pi exited): nothing sent";
			this.#host.log(line);
			vscode.window.setStatusBarMessage(`pi: ${line}`, 5000);
			return;
		}
		const name = this.#name(outcome.request);
		if (outcome.kind === "expired") {
			this.#host.log(`${name}: ${WHY_ENDED.expired}; nothing sent`);
			vscode.window.setStatusBarMessage(`pi: the request to change ${name} ran out; pi did not apply it`, 5000);
			return;
		}
		this.#host.changed();
		const said =
			decision === "accept" ? `approved: pi applies its change to ${name}` : `rejected: pi leaves ${name} as it is`;
		this.#host.log(`${said} (request ${outcome.request.id} of pi ${outcome.request.piPid})`);
		vscode.window.setStatusBarMessage(`pi: ${said}`, 5000);
	}

	/** Mark the proposal in every visible editor of a file pi waits on (none when the setting is off). */
	redraw(): void {
		const on = this.#host.marksEnabled();
		for (const editor of vscode.window.visibleTextEditors) {
			const { document } = editor;
			const request =
				on && document.uri.scheme === "file"
					? this.#inbox.pending.find((r) => r.file === document.uri.fsPath)
					: undefined;
			editor.setDecorations(this.#marks, request ? marksOf(request, document, this.#unsaved(request, document)) : []);
		}
	}

	/** A document changed: its marks hold only while it still has the lines pi read. */
	documentChanged(document: vscode.TextDocument): void {
		if (document.uri.scheme === "file" && this.#inbox.pending.some((r) => r.file === document.uri.fsPath)) {
			this.redraw();
		}
	}

	dispose(): void {
		if (this.#expiry !== undefined) clearTimeout(this.#expiry);
		for (const each of this.#disposables) each.dispose();
	}

	/** An async command that never rejects into the host: a failure is a line in the output channel. */
	#command(fn: () => Promise<void>): () => Promise<void> {
		return () =>
			fn().catch((error: unknown) => {
				this.#host.log(`command failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
			});
	}

	/**
	 * Issue 26: the proposal against `document`'s unsaved changes, when it has any (none for a file pi would create,
	 * or when the file on disk no longer holds the lines pi read).
	 */
	#unsaved(request: PendingApproval, document: vscode.TextDocument | undefined): UnsavedProposal | undefined {
		if (document === undefined || !document.isDirty || request.created) return undefined;
		const disk = this.#host.diskText(request.file);
		return disk === undefined ? undefined : proposalAgainstBuffer(request, disk, document.getText());
	}

	#name(request: PendingApproval): string {
		return vscode.workspace.asRelativePath(request.file, false);
	}

	#ended(request: PendingApproval, why: WhyEnded): void {
		this.#host.log(`pi's request to change ${this.#name(request)} ended: ${WHY_ENDED[why]}`);
	}

	/** The status item while a request waits, the marks, and a timer for the first to run out. */
	#refresh(): void {
		this.redraw();
		const current = this.#inbox.current();
		if (current === undefined) this.#status.hide();
		else {
			this.#status.text = "$(question) pi: approve?";
			this.#status.tooltip = `${describeApproval(current, this.#name(current))}. Click to answer.`;
			this.#status.show();
		}
		if (this.#expiry !== undefined) clearTimeout(this.#expiry);
		this.#expiry = undefined;
		if (current === undefined) return;
		const ms = Math.max(0, (current.expires - this.#host.now()) * 1000) + 250;
		this.#expiry = setTimeout(
			this.#host.guard(() => {
				this.#expiry = undefined;
				for (const request of this.#inbox.expire(this.#host.now())) this.#ended(request, "expired");
				this.#refresh();
			}),
			ms,
		);
	}

	/** One notification per request, never modal, never focused; closing it decides nothing. */
	#notify(request: PendingApproval): void {
		const key = `${request.piPid}@${request.piNs ?? ""}:${request.id}`;
		if (this.#told.has(key)) return;
		this.#told.add(key);
		const target = { piPid: request.piPid, piNs: request.piNs, id: request.id };
		const unsaved = this.#unsaved(request, this.#host.findDocument(request.file));
		const touching = unsaved && describeUnsaved(unsaved);
		const text = `${describeApproval(request, this.#name(request))}${touching ? `; ${touching}` : ""}. No answer within ${request.timeout_s} s leaves it unchanged.`;
		void vscode.window.showInformationMessage(text, ACCEPT, REJECT, SHOW).then(
			this.#host.guard((choice) => {
				if (choice === ACCEPT) this.decide("accept", target);
				else if (choice === REJECT) this.decide("reject", target);
				else if (choice === SHOW) void this.#command(() => this.#show(target))();
			}),
			(error: unknown) =>
				this.#host.log(`the notice failed: ${error instanceof Error ? error.message : String(error)}`),
		);
	}

	async #actions(): Promise<void> {
		const current = this.#inbox.seen() ?? this.#inbox.current();
		if (current === undefined) {
			void vscode.window.showInformationMessage("pi is not waiting for your approval.");
			return;
		}
		this.#inbox.shown(current);
		const target = { piPid: current.piPid, piNs: current.piNs, id: current.id };
		const choice = await vscode.window.showQuickPick([ACCEPT, REJECT, SHOW], {
			title: describeApproval(current, this.#name(current)),
		});
		if (choice === ACCEPT) this.decide("accept", target);
		else if (choice === REJECT) this.decide("reject", target);
		else if (choice === SHOW) await this.#show(target);
	}

	#proposalUri(request: PendingApproval, side: "before" | "after" | "diff"): vscode.Uri {
		const query = `pi=${request.piPid}&id=${encodeURIComponent(request.id)}&side=${side}`;
		return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: request.file, query });
	}

	#keep(uri: vscode.Uri, text: string): void {
		this.#proposals.set(uri.toString(), text);
		for (const key of [...this.#proposals.keys()].slice(0, -KEPT_PROPOSALS)) this.#proposals.delete(key);
	}

	/**
	 * The proposal beside the file as it is: the open document (never changed), or the file read into a document
	 * because the user asked; the hunks as a diff when they no longer fit the text (the user edited those lines).
	 */
	async #show(target: DecisionTarget): Promise<void> {
		const request =
			target === "current"
				? (this.#inbox.seen() ?? this.#inbox.current())
				: this.#inbox.pending.find((r) => r.piPid === target.piPid && r.piNs === target.piNs && r.id === target.id);
		if (request === undefined) {
			this.#host.log("pi is not waiting on that change any more: nothing to show");
			void vscode.window.showInformationMessage("pi is not waiting for your approval of that change any more.");
			return;
		}
		this.#inbox.shown(request);
		const name = basename(request.file);
		let left: vscode.Uri;
		let lines: string[];
		let eol = "\n";
		let unsaved: UnsavedProposal | undefined;
		if (request.created) {
			left = this.#proposalUri(request, "before");
			this.#keep(left, "");
			lines = [];
		} else {
			const document =
				this.#host.findDocument(request.file) ??
				(request.note === null ? await vscode.workspace.openTextDocument(vscode.Uri.file(request.file)) : undefined);
			left = document?.uri ?? vscode.Uri.file(request.file);
			lines = document ? Array.from({ length: document.lineCount }, (_, i) => document.lineAt(i).text) : [];
			if (document?.eol === vscode.EndOfLine.CRLF) eol = "\r\n";
			unsaved = this.#unsaved(request, document);
		}
		// Unsaved changes: the document beside itself with pi's hunks placed where they would go.
		const proposal = unsaved ? unsaved.text.replace(/\n/g, eol) : proposalText(request, lines, eol);
		if (proposal === undefined) {
			const uri = this.#proposalUri(request, "diff");
			this.#keep(uri, proposalDiff(request).join("\n"));
			const shown = await vscode.workspace.openTextDocument(uri);
			await vscode.languages.setTextDocumentLanguage(shown, "diff");
			await vscode.window.showTextDocument(shown, { preview: true });
			return;
		}
		const right = this.#proposalUri(request, "after");
		this.#keep(right, proposal);
		const touching = unsaved && describeUnsaved(unsaved, { short: true });
		const title = unsaved
			? `${name} ↔ ${name} (pi's proposal in your unsaved buffer${touching ? `; ${touching}` : ""})`
			: `${name} ↔ ${name} (pi's proposal)`;
		await vscode.commands.executeCommand("vscode.diff", left, right, title, {
			preview: true,
		});
	}
}
