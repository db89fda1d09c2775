/**
 * pi's change set (protocol v0.4, `pi-<pid>.review.json`) in VS Code, with VS Code's own means: the thin shell
 * over the shared ReviewBook (editors/shared/review.ts). Passive: nothing opens, moves the cursor or takes focus
 * unless the user runs a command.
 * - marks: a bar in the diff palette's colours on pi's hunks in visible editors of changed files, redrawn when the
 *   change set or the document changes (a hunk whose lines the user edited is not marked); `reviewMarks` off
 *   hides them;
 * - quick diff: a SourceControl whose quick diff original is pi's baseline (`pi-baseline:` documents), so VS Code's
 *   own gutter and "peek change" show pi's hunks; "Compare with pi's baseline" opens `vscode.diff` against the
 *   live document (never the disk, never the user's unsaved text);
 * - "Show pi's changes": the newest run's files and hunks in a QuickPick; a choice reveals the line, and opens a
 *   document only because the user chose it; with them (issue 26) the merges' conflicts, where pi's hunk touched
 *   the user's unsaved lines and they were kept;
 * - revert (the hunk under the cursor, the file, the run's open documents): one WorkspaceEdit per document, on
 *   the buffer, not the disk (one Undo brings pi's version back); lines the user edited are refused. Each revert
 *   goes into the state file's `reverted`, so pi tells its model; one the user undoes leaves it (marked as pi's
 *   again) until a redo.
 * The change set is read only for a pi whose message names this window, through pi-reader.ts's checks; a bad one
 * is one line in the output channel.
 */
import { basename } from "node:path";
import * as vscode from "vscode";
import { piFileName } from "../../../src/protocol/wire.ts";
import { readPiReview } from "../../shared/pi-reader.ts";
import {
	hunkLinesAt,
	type LineChange,
	type Mark,
	markStatus,
	planRevert,
	type RevertedHunk,
	type RevertScope,
	ReviewBook,
	type ReviewHunk,
} from "../../shared/review.ts";
import type { TextLines } from "../../shared/state.ts";

/** Read-only documents holding pi's baselines: the quick diff's original and the left side of "Compare". */
export const BASELINE_SCHEME = "pi-baseline";

export interface ReviewHost {
	dir: string;
	/** A line in the output channel. */
	log(message: string): void;
	/** `reverted` changed: write the state file. */
	changed(): void;
	/** Setting `reviewMarks` (true unless the user turned the marks off). */
	marksEnabled(): boolean;
	/** Run a handler without letting it throw into the host. */
	guard<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
	/** Issue 26: the merges' conflicts in dirty documents (pi-sync.ts `conflicts`), listed with pi's hunks. */
	conflicts?(): { file: string; line: number; lines: number }[];
}

const linesOf = (document: vscode.TextDocument): TextLines => ({
	count: document.lineCount,
	text: (line) => document.lineAt(line).text,
});

const fileOf = (document: vscode.TextDocument): string | undefined =>
	document.uri.scheme === "file" && !document.isClosed ? document.uri.fsPath : undefined;

const eolOf = (document: vscode.TextDocument) => (document.eol === vscode.EndOfLine.CRLF ? "\r\n" : "\n");

/** Decoration kinds: what pi did to the lines, with the colours of VS Code's own diff gutter. */
const KINDS = {
	added: { gutter: "editorGutter.addedBackground", ruler: "editorOverviewRuler.addedForeground", border: "0 0 0 3px" },
	changed: {
		gutter: "editorGutter.modifiedBackground",
		ruler: "editorOverviewRuler.modifiedForeground",
		border: "0 0 0 3px",
	},
	// A deletion has no lines left: a line across the top of the line that now follows it.
	deleted: {
		gutter: "editorGutter.deletedBackground",
		ruler: "editorOverviewRuler.deletedForeground",
		border: "2px 0 0 0",
	},
} as const;
type Kind = keyof typeof KINDS;

const kindOf = (hunk: ReviewHunk): Kind =>
	hunk.new_text.length === 0 ? "deleted" : hunk.old_text.length === 0 ? "added" : "changed";

/** `+2 -1` and the first line, for the list. */
function describeHunk(hunk: ReviewHunk): string {
	const first = (hunk.new_text[0] ?? hunk.old_text[0] ?? "").trim();
	return `+${hunk.new_text.length} -${hunk.old_text.length}  ${first.length > 80 ? `${first.slice(0, 80)}…` : first}`;
}

/** `line 9` or `lines 9-10` (1-based), for the list and messages. */
function describeLines(line: number, count: number): string {
	return count > 1 ? `lines ${line + 1}-${line + count}` : `line ${line + 1}`;
}

interface HunkItem extends vscode.QuickPickItem {
	file: string;
	line: number;
}

export class ReviewView implements vscode.Disposable {
	readonly #host: ReviewHost;
	readonly #book = new ReviewBook();
	/** Files being saved (documentWillSave until documentSaved). */
	readonly #saving = new Set<string>();
	/** Whether each file's last change of text was the editor's undo or redo. */
	readonly #lastByUndo = new Map<string, boolean>();
	readonly #decorations: Record<Kind, vscode.TextEditorDecorationType>;
	readonly #baselineChanged = new vscode.EventEmitter<vscode.Uri>();
	readonly #disposables: vscode.Disposable[] = [];
	/** Problems already logged, per pi: each once, until its change set reads well again. */
	readonly #reported = new Map<number, string>();
	#scm: vscode.SourceControl | undefined;
	/** Which run each changed file's quick diff shows: VS Code asks for an original again only when this changes. */
	#scmKey = "";

	constructor(host: ReviewHost) {
		this.#host = host;
		const decoration = (kind: Kind) =>
			vscode.window.createTextEditorDecorationType({
				isWholeLine: true,
				borderColor: new vscode.ThemeColor(KINDS[kind].gutter),
				borderStyle: "solid",
				borderWidth: KINDS[kind].border,
				overviewRulerColor: new vscode.ThemeColor(KINDS[kind].ruler),
				overviewRulerLane: vscode.OverviewRulerLane.Left,
			});
		this.#decorations = { added: decoration("added"), changed: decoration("changed"), deleted: decoration("deleted") };
		const guard = host.guard;
		this.#disposables.push(
			...Object.values(this.#decorations),
			this.#baselineChanged,
			vscode.workspace.registerTextDocumentContentProvider(BASELINE_SCHEME, {
				onDidChange: this.#baselineChanged.event,
				provideTextDocumentContent: (uri) => this.#baselineText(uri.path),
			}),
			vscode.window.onDidChangeVisibleTextEditors(guard(() => this.redraw())),
			vscode.commands.registerCommand(
				"piIdeContext.reviewList",
				this.#command(() => this.#list()),
			),
			vscode.commands.registerCommand(
				"piIdeContext.reviewCompare",
				guard(() => this.#compare()),
			),
			vscode.commands.registerCommand(
				"piIdeContext.revertHunk",
				this.#command(() => this.#revertActive("hunk")),
			),
			vscode.commands.registerCommand(
				"piIdeContext.revertFile",
				this.#command(() => this.#revertActive("file")),
			),
			vscode.commands.registerCommand(
				"piIdeContext.revertRun",
				this.#command(() => this.#revertRun()),
			),
		);
	}

	/** The state file's `reverted` (v0.4). */
	get reverted(): RevertedHunk[] {
		return this.#book.reverted;
	}

	/** pi's hunk under 0-based `line` of `document` (lines 0-based, inclusive), for "Send pi's hunk to pi" (v0.5). */
	hunkAt(document: vscode.TextDocument, line: number): { first: number; last: number } | undefined {
		const file = fileOf(document);
		return file === undefined ? undefined : hunkLinesAt(this.#book.marks(file), linesOf(document), line);
	}

	/**
	 * pi `pid`'s message (v0.5: pi of namespace `piNs`) names this window: read its change set (pi wrote it before the
	 * message).
	 */
	load(pid: number, piNs?: string): void {
		const verdict = readPiReview(this.#host.dir, pid, {}, piNs);
		const name = piFileName("review", pid, piNs);
		if (verdict.kind === "problem") {
			this.#problem(pid, `${name} ${verdict.problem}: ignored`);
			return;
		}
		if (verdict.kind === "gone") {
			// pi changed nothing yet, or is older than v0.4; a change set that went away takes its marks along.
			this.#reported.delete(pid);
			if (this.#book.forget(pid, piNs)) this.#refresh();
			return;
		}
		if (verdict.dropped > 0) this.#problem(pid, `${name}: ${verdict.dropped} malformed entries ignored`);
		else this.#reported.delete(pid);
		this.#book.setRuns(pid, verdict.runs, piNs);
		this.#refresh();
	}

	/**
	 * pi `pid` exited (`why` "gone") or names another editor ("elsewhere"): its marks and quick diff go, with one
	 * line in the output channel when it had a change set here (a stale one is never read again).
	 */
	forget(pid: number, why: "gone" | "elsewhere", piNs?: string): void {
		this.#reported.delete(pid);
		if (!this.#book.forget(pid, piNs)) return;
		const reason = why === "gone" ? "pi has exited" : "pi is connected to another editor";
		this.#host.log(`${piFileName("review", pid, piNs)}: ${reason}: its changes are no longer shown`);
		this.#refresh();
	}

	documentOpened(document: vscode.TextDocument): void {
		const file = fileOf(document);
		if (file === undefined || this.#book.entryFor(file) === undefined) return;
		this.#book.sync(file, linesOf(document));
		this.redraw();
	}

	documentChanged(event: vscode.TextDocumentChangeEvent): void {
		const file = fileOf(event.document);
		if (file === undefined || this.#book.marks(file).length === 0) return;
		try {
			this.#edited(file, event);
		} finally {
			// Whatever the event held, the marks drawn are the book's now: a change set read before VS Code reloaded
			// the document gets its marks placed by this event, and they must be drawn by it (nothing else redraws).
			this.redraw();
		}
	}

	/** The book follows a change of `file`'s document (documentChanged). */
	#edited(file: string, event: vscode.TextDocumentChangeEvent): void {
		// VS Code's events carry `contentChanges`; an event without them (a host that only says the text changed) is
		// a change of unknown extent: the book places the marks again from pi's version.
		const contentChanges = event.contentChanges as vscode.TextDocumentChangeEvent["contentChanges"] | undefined;
		const changes: LineChange[] | undefined = contentChanges?.map((c) => ({
			startLine: c.range.start.line,
			startCharacter: c.range.start.character,
			endLine: c.range.end.line,
			endCharacter: c.range.end.character,
			text: c.text,
		}));
		// Only the editor's undo and redo take a revert back or bring it back (the states they restore tell which).
		const byUndo =
			event.reason === vscode.TextDocumentChangeReason.Undo || event.reason === vscode.TextDocumentChangeReason.Redo;
		let changed = this.#book.edited(file, changes, linesOf(event.document), byUndo);
		// VS Code tells the document is clean again with an event of its own, without changes, after the text's. Clean
		// again neither by a save nor by the editor's undo or redo: its text was thrown away for its file's (File:
		// Revert File, Don't Save).
		if (contentChanges === undefined || contentChanges.length > 0) this.#lastByUndo.set(file, byUndo);
		else if (!event.document.isDirty && !this.#saving.has(file) && this.#lastByUndo.get(file) === false)
			changed = this.#book.discarded(file, linesOf(event.document)) || changed;
		if (changed) this.#host.changed();
	}

	/** A save begins: the document turning clean next is the save's, not a revert of its text. */
	documentWillSave(document: vscode.TextDocument): void {
		const file = fileOf(document);
		if (file !== undefined) this.#saving.add(file);
	}

	documentSaved(document: vscode.TextDocument): void {
		const file = fileOf(document);
		if (file === undefined) return;
		this.#saving.delete(file);
		this.#book.saved(file);
	}

	documentClosed(document: vscode.TextDocument): void {
		const file = fileOf(document);
		if (file === undefined) return;
		// Closed as its file has it (Don't Save reverts the document first): what the file has holds. A document
		// closed dirty (its language changed: VS Code closes and opens it again) keeps its reverts.
		if (!document.isDirty && this.#book.discarded(file, undefined)) this.#host.changed();
		this.#book.closed(file);
	}

	/** Draw the marks of every visible editor (none when the setting is off). */
	redraw(): void {
		const on = this.#host.marksEnabled();
		for (const editor of vscode.window.visibleTextEditors) {
			const ranges: Record<Kind, vscode.Range[]> = { added: [], changed: [], deleted: [] };
			const file = fileOf(editor.document);
			const document = linesOf(editor.document);
			for (const mark of on && file !== undefined ? this.#book.marks(file) : []) {
				if (mark.line === undefined || markStatus(mark, document) !== "pi") continue;
				const n = mark.hunk.new_text.length;
				const first = n === 0 ? Math.min(mark.line, Math.max(document.count - 1, 0)) : mark.line;
				ranges[kindOf(mark.hunk)].push(new vscode.Range(first, 0, first + Math.max(n, 1) - 1, 0));
			}
			for (const kind of Object.keys(KINDS) as Kind[]) editor.setDecorations(this.#decorations[kind], ranges[kind]);
		}
	}

	dispose(): void {
		this.#scm?.dispose();
		for (const each of this.#disposables) each.dispose();
	}

	/** An async command that never rejects into the host: a failure is a line in the output channel. */
	#command(fn: () => Promise<void>): () => Promise<void> {
		return () =>
			fn().catch((error: unknown) => {
				this.#host.log(`command failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
			});
	}

	#problem(pid: number, problem: string): void {
		if (this.#reported.get(pid) === problem) return;
		this.#reported.set(pid, problem);
		this.#host.log(problem);
	}

	/** The change sets changed: mark every open document again, and point the quick diff at the new baselines. */
	#refresh(): void {
		const open = new Map<string, vscode.TextDocument>();
		for (const document of vscode.workspace.textDocuments) {
			const file = fileOf(document);
			if (file !== undefined) open.set(file, document);
		}
		for (const file of new Set([...this.#book.markedFiles, ...open.keys()])) {
			const document = open.get(file);
			if (document) this.#book.sync(file, linesOf(document));
			else this.#book.closed(file);
		}
		this.redraw();
		this.#updateQuickDiff();
	}

	#baselineUri(file: string, pid: number, run: number): vscode.Uri {
		return vscode.Uri.from({ scheme: BASELINE_SCHEME, path: file, query: `pi=${pid}&run=${run}` });
	}

	#baselineText(file: string): string {
		const found = this.#book.entryFor(file);
		if (found === undefined) return "";
		// A file pi created has no baseline: it was empty (absent) before pi.
		return found.entry.baseline ?? "";
	}

	/**
	 * VS Code asks a quick diff provider for a document's original when the document changes or a provider comes or
	 * goes; a change set that arrives after VS Code reloaded the document would go unseen. So when the files or runs
	 * change, the SourceControl is made anew (its coming is such an event); baselines of a run never change.
	 */
	#updateQuickDiff(): void {
		const shown: string[] = [];
		for (const [pid, runs] of this.#book.sets) {
			for (const run of runs) for (const f of run.files) if (f.note === null) shown.push(`${pid}:${run.run}:${f.file}`);
		}
		const key = shown.sort().join("\n");
		if (key === this.#scmKey) return;
		this.#scmKey = key;
		this.#scm?.dispose();
		this.#scm = undefined;
		if (key === "") return;
		const root = vscode.workspace.workspaceFolders?.[0]?.uri;
		const scm = vscode.scm.createSourceControl("piIdeReview", "pi's changes", root);
		scm.quickDiffProvider = {
			provideOriginalResource: (uri) => {
				if (uri.scheme !== "file") return undefined;
				const found = this.#book.entryFor(uri.fsPath);
				if (found === undefined || found.entry.note !== null) return undefined;
				return this.#baselineUri(uri.fsPath, found.pid, found.run);
			},
		};
		this.#scm = scm;
	}

	#compare(): void {
		const document = vscode.window.activeTextEditor?.document;
		const file = document && fileOf(document);
		const found = file === undefined ? undefined : this.#book.entryFor(file);
		if (!document || file === undefined || !found) {
			void vscode.window.showInformationMessage("pi has not changed this file in its last runs.");
			return;
		}
		if (found.entry.note !== null) {
			void vscode.window.showInformationMessage(
				`pi's change set carries no baseline for ${basename(file)} (${found.entry.note}).`,
			);
			return;
		}
		const title = `${basename(file)} (before pi) ↔ ${basename(file)}`;
		void vscode.commands.executeCommand(
			"vscode.diff",
			this.#baselineUri(file, found.pid, found.run),
			document.uri,
			title,
		);
	}

	/** The newest run's hunks, by file: where each stands now in an open document, else where pi left it. */
	async #list(): Promise<void> {
		const newest = this.#book.newestRun();
		const conflicts = this.#host.conflicts?.() ?? [];
		if (!newest && conflicts.length === 0) {
			void vscode.window.showInformationMessage("pi has changed no files in its last runs.");
			return;
		}
		const items: (HunkItem | vscode.QuickPickItem)[] = [];
		if (conflicts.length > 0) {
			items.push({ label: "pi's changes merged around your unsaved lines", kind: vscode.QuickPickItemKind.Separator });
		}
		for (const c of conflicts) {
			const where = c.lines <= 1 ? `line ${c.line}` : `lines ${c.line}-${c.line + c.lines - 1}`;
			items.push({
				label: `$(warning) ${basename(c.file)}: conflict: your unsaved ${where} kept`,
				description: "pi's version is on disk (Compare in the warning)",
				file: c.file,
				line: c.line - 1,
			} as HunkItem);
		}
		for (const entry of newest?.run.files ?? []) {
			items.push({
				label: vscode.workspace.asRelativePath(entry.file, false),
				kind: vscode.QuickPickItemKind.Separator,
			});
			if (entry.note !== null) {
				items.push({ label: `$(info) ${entry.note}: no hunks`, file: entry.file, line: 0 } as HunkItem);
				continue;
			}
			const document = vscode.workspace.textDocuments.find((d) => fileOf(d) === entry.file);
			const marks = new Map(this.#book.marks(entry.file).map((m) => [m.hunk.id, m]));
			for (const hunk of entry.hunks) {
				const mark: Mark | undefined = marks.get(hunk.id);
				const status = document && mark ? markStatus(mark, linesOf(document)) : undefined;
				const line = mark?.line ?? hunk.new_start - 1;
				const note = status === "edited" ? " (you changed it since)" : status === "reverted" ? " (reverted)" : "";
				items.push({
					label: `$(diff-${kindOf(hunk) === "changed" ? "modified" : kindOf(hunk) === "added" ? "added" : "removed"}) ${basename(entry.file)}: ${describeLines(line, hunk.new_text.length)}${note}`,
					description: describeHunk(hunk),
					file: entry.file,
					line,
				} as HunkItem);
			}
			if (entry.hunks_total > entry.hunks.length) {
				items.push({
					label: `and ${entry.hunks_total - entry.hunks.length} more`,
					file: entry.file,
					line: 0,
				} as HunkItem);
			}
		}
		const choice = (await vscode.window.showQuickPick(items, {
			title: newest ? `pi's changes (run ${newest.run.run})` : "pi's changes",
			matchOnDescription: true,
		})) as HunkItem | undefined;
		if (!choice || choice.file === undefined) return;
		// The user chose this hunk: show its document (opening it is what they asked for).
		const open = vscode.workspace.textDocuments.find((d) => fileOf(d) === choice.file);
		const editor = open
			? await vscode.window.showTextDocument(open)
			: await vscode.window.showTextDocument(vscode.Uri.file(choice.file), { preview: true });
		const at = new vscode.Position(Math.min(choice.line, Math.max(editor.document.lineCount - 1, 0)), 0);
		editor.selection = new vscode.Selection(at, at);
		editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
	}

	/** Revert in one document; returns how many hunks were reverted and the problems. */
	async #revertIn(
		document: vscode.TextDocument,
		scope: RevertScope,
	): Promise<{ done: number; problems: string[]; chosen: number }> {
		const file = fileOf(document);
		if (file === undefined) return { done: 0, problems: [], chosen: 0 };
		const plan = planRevert(this.#book.marks(file), linesOf(document), eolOf(document), scope);
		if (plan.edits.length === 0) return { done: 0, problems: plan.problems, chosen: plan.chosen };
		const edit = new vscode.WorkspaceEdit();
		for (const e of plan.edits) {
			edit.replace(
				document.uri,
				new vscode.Range(e.start.line, e.start.character, e.end.line, e.end.character),
				e.text,
			);
		}
		// One WorkspaceEdit is one undo step; it changes the buffer only (VS Code saves nothing for it).
		const applied = await vscode.workspace.applyEdit(edit);
		if (!applied) return { done: 0, problems: ["VS Code did not apply the edit"], chosen: plan.chosen };
		this.#book.markReverted(file, plan, linesOf(document));
		this.redraw();
		return { done: plan.marks.length, problems: plan.problems, chosen: plan.chosen };
	}

	async #revertActive(scope: "hunk" | "file"): Promise<void> {
		const editor = vscode.window.activeTextEditor;
		if (!editor) return;
		const result = await this.#revertIn(
			editor.document,
			scope === "file" ? "all" : { cursor: editor.selection.active.line },
		);
		this.#tell(
			result,
			scope === "hunk" ? "no change of pi's under the cursor (pi: Show pi's changes lists them)" : undefined,
		);
	}

	async #revertRun(): Promise<void> {
		const total = { done: 0, problems: [] as string[], chosen: 0 };
		// Only documents open here: the disk and closed files are never touched.
		for (const document of vscode.workspace.textDocuments) {
			const file = fileOf(document);
			if (file === undefined || this.#book.marks(file).length === 0) continue;
			const result = await this.#revertIn(document, "all");
			total.done += result.done;
			total.chosen += result.chosen;
			total.problems.push(...result.problems.map((p) => `${basename(file)} ${p}`));
		}
		this.#tell(total, undefined);
	}

	#tell(result: { done: number; problems: string[]; chosen: number }, nothingUnderCursor: string | undefined): void {
		if (result.chosen === 0) {
			void vscode.window.showInformationMessage(`pi: ${nothingUnderCursor ?? "no changes of pi's to revert here"}.`);
			return;
		}
		if (result.done > 0) this.#host.changed();
		const done =
			result.done > 0
				? `Reverted ${result.done === 1 ? "one of pi's changes" : `${result.done} of pi's changes`} in the editor (Undo brings pi's version back; save when you choose).`
				: "Nothing reverted.";
		if (result.problems.length === 0) void vscode.window.showInformationMessage(`pi: ${done}`);
		else void vscode.window.showWarningMessage(`pi: ${done} Refused ${result.problems.length}: ${result.problems[0]}.`);
	}
}
