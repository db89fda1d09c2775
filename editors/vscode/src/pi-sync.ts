/**
 * What the VS Code client does with pi's messages (protocol v0.3), with VS Code behind a small host
 * interface so it is tested without VS Code. VS Code reloads an unmodified document by itself when its file
 * changes on disk; this module does not reload anything. For each file pi says it changed it finds out what
 * happened and reports it in the state file's `files`:
 * - not open here: `not-open`; the document's file gone: `gone`; no longer what the document was opened from
 *   (a regular file now a symlink, a symlink re-pointed) or not a regular file: `refused` (disk.ts; a
 *   document opened through a symlink is compared while the link resolves to the same file);
 * - unsaved changes: pi's change merged into the buffer (issue 26, shared/merge.ts) when pi's entries carry their
 *   hunks: `merged`, or `conflict` where pi's hunks touch the user's unsaved lines (those keep the user's text; the
 *   user is told once, with the lines); the merge is one WorkspaceEdit (one undo step), the document stays dirty
 *   and is never saved. Otherwise `modified`: the buffer is never touched and the user is told once per file
 *   (until the document is clean again);
 * - otherwise `reloaded` as soon as the buffer shows what is on disk (at once when VS Code was faster than
 *   the message, else at VS Code's reload event), with the document version and its diagnostics; `unchanged`
 *   if VS Code has not reloaded it within RELOAD_WAIT_MS (a later reload still turns it into `reloaded`);
 *   `refused`, without diagnostics, if VS Code's reload put in anything but what this module's verified read
 *   (disk.ts: no symlink followed) found: VS Code reads the path itself and cannot be stopped (README).
 * It also keeps which pis name this window as their editor, for the status bar.
 */
import type { DiagnosticsReport } from "../../shared/diagnostics.ts";
import { type ChainLink, linesPhrase, mergeChain, type TextEdit, textEditsOf } from "../../shared/merge.ts";
import {
	addReport,
	type ChangedFile,
	type FileReport,
	type FileStatus,
	type HandledMessage,
	type ListedChanges,
	type PiMessage,
	pendingChanges,
	piKeyOf,
	retainReports,
} from "../../shared/pi-message.ts";

/** How long VS Code gets to reload a clean document before the report says `unchanged`. */
export const RELOAD_WAIT_MS = 1500;

export interface OpenDocument {
	/** The path VS Code reads the document from (pi may name another path of the same file). */
	readonly uri: { readonly fsPath: string };
	isDirty: boolean;
	version: number;
	getText(): string;
}

/**
 * A document's path when VS Code opened it: a regular file, or a symlink and the real path it resolved to;
 * with the identity (dev, ino) of the file it was, so a reload reads that file (disk.ts `isRecordedFile`).
 */
export type OpenedAs =
	| { kind: "file"; dev?: number; ino?: number }
	| { kind: "link"; real: string; dev?: number; ino?: number };

/** The file on disk now. `text` is undefined when the file is too large to compare. */
export type DiskState = { kind: "file"; text: string | undefined } | { kind: "gone" } | { kind: "refused" };

export interface SyncHost {
	ownPid: number;
	/** The open document for an absolute path, if any. */
	findDocument(file: string): OpenDocument | undefined;
	/** What `file` is as VS Code opens a document from it (disk.ts `openedAs`). */
	openedAs(file: string): OpenedAs | undefined;
	/** The document's file on disk, judged against `opened` (disk.ts `readDisk`). */
	readDisk(file: string, opened: OpenedAs | undefined): DiskState;
	/** The file's diagnostics report, null when none can be dated yet. */
	diagnostics(file: string): DiagnosticsReport | null;
	/** A language server or linter reports on this document. */
	diagnosticsExpected(file: string): boolean;
	/**
	 * Tell the user once: pi changed `file` on disk, its unsaved changes were kept; `where` (issue 26): the lines of
	 * a merge's conflict ("line 3", "lines 3-4"), pi's other hunks being in the buffer.
	 */
	warnModified(file: string, where?: string): void;
	/** The SHA-256 (hex) of `text` encoded as UTF-8. */
	sha256(text: string): string;
	/**
	 * Issue 26: apply `edits` to `document` as one WorkspaceEdit (one undo step, nothing saved) if its version is
	 * still `version`; resolves whether it was applied.
	 */
	applyEdits(document: OpenDocument, edits: TextEdit[], version: number): Promise<boolean>;
	/** Reports or connections changed: write the state file and refresh the status bar. */
	changed(): void;
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

/** A pi that names this window as its editor. */
export interface ConnectedPi {
	pid: number;
	cwd: string;
	lastTurn: string[];
}

/** Same text, ignoring a UTF-8 BOM (VS Code strips it) and line-ending style (VS Code may normalize). */
export function sameContent(buffer: string, disk: string): boolean {
	const body = disk.charCodeAt(0) === 0xfeff ? disk.slice(1) : disk;
	if (buffer === body) return true;
	return buffer.replace(/\r\n?/g, "\n") === body.replace(/\r\n?/g, "\n");
}

/** A change and the pi that made it. */
interface Change extends ChangedFile {
	piPid: number;
	/** v0.5: the pi's `pid_ns` as its message said (echoed as `pi_ns`), or none. */
	piNs?: string | undefined;
	/** Issue 26: this pi's new changes of the file, oldest first (this one last), and the seq it had before. */
	chain: ChainLink[];
	handled: number;
}

interface Pending {
	entry: Change;
	/** Document version when the message arrived: a clean change after it is VS Code's reload. */
	version: number;
	timer: unknown;
}

export class PiSync {
	readonly #host: SyncHost;
	/** By pi's identity key (pid and namespace, v0.5: piKeyOf). */
	readonly #handled = new Map<string, number>();
	readonly #connected = new Map<string, PiMessage>();
	readonly #pending = new Map<string, Pending>();
	readonly #warned = new Set<string>();
	/** Per open document's path: what it was when VS Code opened the document. */
	readonly #openedAs = new Map<string, OpenedAs>();
	#reports: FileReport[] = [];
	#last: HandledMessage | null = null;
	#lastKey: string | null = null;

	constructor(host: SyncHost) {
		this.#host = host;
	}

	/** The state file's `files`: the reports PROTOCOL.md's retention keeps now. */
	get reports(): FileReport[] {
		this.#reports = retainReports(this.#reports, this.#listed());
		return this.#reports;
	}

	/**
	 * Issue 26 item 6: the merges' conflicts in documents still dirty (each where the user's lines were kept, in the
	 * document as the merge left it), listed with pi's hunks ("Show pi's changes") until the document is clean again.
	 */
	get conflicts(): { file: string; line: number; lines: number }[] {
		return this.reports.flatMap((report) => {
			if (report.status !== "conflict" || !this.#host.findDocument(report.file)?.isDirty) return [];
			return (report.merge?.conflicts ?? []).map((c) => ({ file: report.file, line: c.line, lines: c.lines }));
		});
	}

	/** Per connected pi, the changes its newest message lists: their reports stay (PROTOCOL.md `files`). */
	#listed(): ListedChanges {
		return new Map([...this.#connected].map(([key, message]) => [key, message.changed]));
	}

	/** The state file's `pi`. */
	get handled(): HandledMessage | null {
		return this.#last;
	}

	/** Some pi names this window as its editor now (cheap: asked on every keystroke). */
	get isConnected(): boolean {
		return this.#connected.size > 0;
	}

	get connected(): ConnectedPi[] {
		return [...this.#connected.values()].map((m) => ({ pid: m.pid, cwd: m.cwd, lastTurn: m.last_turn }));
	}

	handleMessage(message: PiMessage): void {
		const key = piKeyOf(message);
		const ours = message.editor_pid === this.#host.ownPid;
		if (ours) this.#connected.set(key, message);
		else this.#connected.delete(key);
		if (ours) {
			const newest = message.changed.reduce((max, entry) => Math.max(max, entry.seq), -1);
			const handled = this.#handled.get(key) ?? newest - 1;
			for (const entry of pendingChanges(message, this.#host.ownPid, this.#handled.get(key))) {
				const chain = message.changed
					.filter((c) => c.file === entry.file && c.seq > handled)
					.sort((a, b) => a.seq - b.seq);
				this.#judge({ ...entry, piPid: message.pid, piNs: message.pid_ns, chain, handled });
			}
			this.#handled.set(key, message.seq);
			this.#last = { pid: message.pid, seq: message.seq };
			this.#lastKey = key;
		}
		this.#host.changed();
	}

	/** pi `key` (its identity: piKeyOf) exited or its message was removed. */
	forgetPi(key: string): void {
		const known = this.#connected.delete(key) || this.#handled.has(key);
		this.#handled.delete(key);
		if (this.#lastKey === key) {
			this.#last = null;
			this.#lastKey = null;
		}
		if (known) this.#host.changed();
	}

	/** A document's text or dirty state changed (VS Code's reload is one such change). */
	documentChanged(file: string): void {
		const document = this.#host.findDocument(file);
		if (document && !document.isDirty) this.#warned.delete(file);
		if (this.#pending.has(file)) this.#settle(file, false);
	}

	/** VS Code opened a document from `file`: record what the path is, at once (before pi's message can come). */
	documentOpened(file: string): void {
		const opened = this.#host.openedAs(file);
		if (opened) this.#openedAs.set(file, opened);
		else this.#openedAs.delete(file);
	}

	/** The file on disk of the open document pi calls `file`; undefined when none is open. For "Compare". */
	diskOf(file: string): DiskState | undefined {
		const document = this.#host.findDocument(file);
		return document && this.#disk(document);
	}

	/** A closed document has nothing left to reload; its report stays as it was. */
	documentClosed(file: string): void {
		this.#openedAs.delete(file);
		this.#warned.delete(file);
		this.#dropPending(file);
	}

	/** Diagnostics changed for these files: refresh their reports. */
	diagnosticsChanged(files: Iterable<string>): void {
		let changed = false;
		const wanted = new Set(files);
		// Every pi's report on the file: two pis connected to this window each wait for theirs.
		this.#reports = this.#reports.map((report) => {
			if (!wanted.has(report.file) || report.version === null || report.status === "refused") return report;
			const diagnostics = this.#host.diagnostics(report.file);
			const expected = report.diagnostics_expected || this.#host.diagnosticsExpected(report.file);
			if (
				JSON.stringify(diagnostics) === JSON.stringify(report.diagnostics) &&
				expected === report.diagnostics_expected
			) {
				return report;
			}
			changed = true;
			return { ...report, diagnostics, diagnostics_expected: expected };
		});
		if (changed) this.#host.changed();
	}

	dispose(): void {
		for (const pending of this.#pending.values()) this.#host.clearTimeout(pending.timer);
		this.#pending.clear();
	}

	#judge(entry: Change): void {
		this.#dropPending(entry.file);
		const document = this.#host.findDocument(entry.file);
		const disk = document && this.#disk(document);
		if (!document || !disk) this.#report(entry, "not-open", undefined);
		else if (disk.kind !== "file") this.#report(entry, disk.kind, document);
		else if (document.isDirty) this.#merge(entry, document, disk.text);
		else if (disk.text !== undefined && sameContent(document.getText(), disk.text)) {
			this.#report(entry, "reloaded", document);
		} else {
			const timer = this.#host.setTimeout(() => this.#settle(entry.file, true), RELOAD_WAIT_MS);
			this.#pending.set(entry.file, { entry, version: document.version, timer });
		}
	}

	/** Decide a pending file again: VS Code changed the document, or the wait is over. */
	#settle(file: string, timedOut: boolean): void {
		const pending = this.#pending.get(file);
		if (!pending) return;
		const document = this.#host.findDocument(file);
		const disk = document && this.#disk(document);
		let status: FileStatus | undefined;
		if (!document || !disk) status = "not-open";
		else if (disk.kind !== "file") status = disk.kind;
		else if (document.isDirty) status = "modified";
		else if (disk.text !== undefined && sameContent(document.getText(), disk.text)) status = "reloaded";
		// Too large to compare: VS Code's clean change is taken as its reload. One that does not hold what the
		// verified read found is not: VS Code read something else (the path swapped for a symlink meanwhile).
		else if (document.version > pending.version && disk.text === undefined) status = "reloaded";
		if (status === undefined && !timedOut) return;
		if (status === undefined) {
			// Keep listening: a reload after the wait still turns the report into `reloaded`.
			this.#host.clearTimeout(pending.timer);
			this.#report(pending.entry, document && document.version > pending.version ? "refused" : "unchanged", document);
		} else {
			this.#dropPending(file);
			if (status === "modified" && document) this.#modified(pending.entry, document);
			else this.#report(pending.entry, status, document);
		}
		this.#host.changed();
	}

	/** The document's own path is what VS Code reloads, so that is the path judged and read. */
	#disk(document: OpenDocument): DiskState {
		const path = document.uri.fsPath;
		return this.#host.readDisk(path, this.#openedAs.get(path));
	}

	/**
	 * Issue 26: merge pi's change into the dirty `document` (shared/merge.ts), or report `modified` when it cannot be
	 * merged (no hunks from an older pi, a file that is not what pi's tool wrote, CR-LF). The edit is asynchronous:
	 * a document the user changed meanwhile refuses it (the version check) and is reported `modified`.
	 */
	#merge(entry: Change, document: OpenDocument, disk: string | undefined): void {
		if (entry.merge === undefined || disk === undefined) {
			this.#modified(entry, document);
			return;
		}
		const buffer = document.getText();
		const outcome = mergeChain(entry.chain, entry.handled, disk, this.#host.sha256(disk), buffer);
		if (!outcome.ok) {
			this.#modified(entry, document);
			return;
		}
		const { plan } = outcome;
		const merge = { hunks: outcome.hunks, merged: plan.merged, conflicts: plan.conflicts };
		const done = () => {
			this.#report(entry, outcome.status, document, merge);
			const first = plan.conflicts[0];
			if (first && !this.#warned.has(entry.file)) {
				this.#warned.add(entry.file);
				this.#host.warnModified(entry.file, linesPhrase(first));
			}
		};
		if (plan.edits.length === 0) {
			done();
			return;
		}
		const edits = textEditsOf(buffer, plan.edits);
		this.#host.applyEdits(document, edits, document.version).then(
			(applied) => {
				if (applied) done();
				else this.#modified(entry, document);
				this.#host.changed();
			},
			() => {
				this.#modified(entry, document);
				this.#host.changed();
			},
		);
	}

	#modified(entry: Change, document: OpenDocument): void {
		this.#report(entry, "modified", document);
		if (this.#warned.has(entry.file)) return;
		this.#warned.add(entry.file);
		this.#host.warnModified(entry.file);
	}

	#dropPending(file: string): void {
		const pending = this.#pending.get(file);
		if (!pending) return;
		this.#host.clearTimeout(pending.timer);
		this.#pending.delete(file);
	}

	#report(entry: Change, status: FileStatus, document: OpenDocument | undefined, merge?: FileReport["merge"]): void {
		const open = document !== undefined && status !== "not-open";
		// A refused file's document may hold what VS Code read through a swapped path: none of it goes to pi.
		const told = open && status !== "refused";
		this.#reports = addReport(
			this.#reports,
			{
				file: entry.file,
				seq: entry.seq,
				status,
				version: open ? document.version : null,
				modified: open ? document.isDirty : false,
				diagnostics_expected: told ? this.#host.diagnosticsExpected(entry.file) : false,
				diagnostics: told ? this.#host.diagnostics(entry.file) : null,
				pi_pid: entry.piPid,
				...(entry.piNs === undefined ? {} : { pi_ns: entry.piNs }),
				...(merge === undefined ? {} : { merge }),
			},
			this.#listed(),
		);
	}
}
