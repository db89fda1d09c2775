/**
 * pi IDE context for VS Code: the thin shell. Wires VS Code events to the shared `StateClient`, which writes
 * this window's file, cursor, selection, diagnostics and reports on pi's changes to
 * `<state dir>/<extension host pid>.json` (protocol v0.3), and deletes it on deactivate; to the shared
 * `PiWatcher`, which reads pi's messages; and to `PiSync`, which decides what to report about the files pi
 * changed. Integrated terminals get `PI_IDE_EDITOR_PID`, so a pi started in one connects to this window.
 * A status bar item shows the path and a connected pi; `piIdeContext.enabled` turns all of it off. pi's
 * change set (v0.4) is marked, compared, listed and reverted by `ReviewView` (review-view.ts), and pi's requests
 * for approval (v0.4) are shown and answered by `ApprovalView` (approval-view.ts), pi's show and ask (v0.5) by
 * `ShowAskView` (show-ask-view.ts).
 * Nothing here throws into the extension host: failures become one warning and a line in the output channel.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename } from "node:path";
import * as vscode from "vscode";
import { resolveStateDir } from "../../../src/protocol/state-dir.ts";
import { StateClient } from "../../shared/client.ts";
import type { DiagnosticCaps, DiagnosticsReport } from "../../shared/diagnostics.ts";
import { PiWatcher } from "../../shared/pi-watcher.ts";
import type { TextLines } from "../../shared/state.ts";
import type { DirtyDocument } from "../../shared/unsaved-buffers.ts";
import { ApprovalView } from "./approval-view.ts";
import { BUILTIN_DIAGNOSTIC_LANGUAGES, reportDiagnostics } from "./diagnostics.ts";
import { openedAs, readDisk } from "./disk.ts";
import { PiSync } from "./pi-sync.ts";
import { ReviewView } from "./review-view.ts";
import { SendView } from "./send-view.ts";
import { ShowAskView } from "./show-ask-view.ts";
import { snapshotWindow } from "./snapshot.ts";
import { formatStatus } from "./status.ts";
import { TEST_HOOKS_ENV, type TestHooks } from "./test-hooks.ts";

const SECTION = "piIdeContext";
/** Exported to integrated terminals: the pid in this window's state file name (issue 8, PROTOCOL.md). */
export const EDITOR_PID_ENV = "PI_IDE_EDITOR_PID";
/** Read-only view of a file's content on disk, for "Compare" (unsaved buffer vs what pi wrote). */
const DISK_SCHEME = "pi-ide-disk";
/** `files[]` carries up to 20 reports: smaller diagnostic caps keep the state file well under 1 MiB. */
const FILE_REPORT_CAPS: DiagnosticCaps = { maxItems: 25, maxBytes: 16 * 1024 };

/** The running extension: everything one activation set up, undone by `dispose` (a clean exit's). */
let running: vscode.Disposable | undefined;
/** The running extension's places view's rows (`TestHooks.places`). */
let placeRows: () => string[] = () => [];

const linesOf = (document: vscode.TextDocument): TextLines => ({
	count: document.lineCount,
	text: (line) => document.lineAt(line).text,
});

export function activate(context: vscode.ExtensionContext): TestHooks | undefined {
	const hooks = process.env[TEST_HOOKS_ENV] === "1";
	running = startExtension(context);
	context.subscriptions.push({ dispose: deactivate });
	if (!hooks) return undefined;
	const stop = () => deactivate();
	return {
		stop,
		start: () => {
			stop();
			running = startExtension(context);
		},
		places: () => placeRows(),
	};
}

/** Activation's setup; returns what undoes it. */
function startExtension(context: vscode.ExtensionContext): vscode.Disposable {
	const subscriptions: vscode.Disposable[] = [];
	const output = vscode.window.createOutputChannel("pi IDE context");
	subscriptions.push(output);
	const log = (message: string) => output.appendLine(`${new Date().toISOString()} ${message}`);

	const dir = resolveStateDir(process.env);

	/** Document version at the last diagnostics event per open document: what its diagnostics are dated. */
	const diagnosticsVersion = new Map<string, number>();
	const diagnosticsOf = (document: vscode.TextDocument, caps?: DiagnosticCaps): DiagnosticsReport | undefined => {
		const version = diagnosticsVersion.get(document.uri.toString());
		if (version === undefined) return undefined;
		return reportDiagnostics(vscode.languages.getDiagnostics(document.uri), linesOf(document), version, caps);
	};
	const findDocument = (file: string): vscode.TextDocument | undefined => {
		const documents = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === "file" && !d.isClosed);
		const exact = documents.find((d) => d.uri.fsPath === file);
		if (exact) return exact;
		// pi may name the real path of a file VS Code opened through a symlinked directory, or the reverse.
		const real = (path: string) => {
			try {
				return realpathSync(path);
			} catch {
				return undefined;
			}
		};
		const target = real(file);
		return target === undefined ? undefined : documents.find((d) => real(d.uri.fsPath) === target);
	};

	const sync = new PiSync({
		ownPid: process.pid,
		findDocument,
		openedAs,
		readDisk,
		diagnostics: (file) => {
			const document = findDocument(file);
			return (document && diagnosticsOf(document, FILE_REPORT_CAPS)) ?? null;
		},
		diagnosticsExpected: (file) => {
			const document = findDocument(file);
			if (!document) return false;
			return diagnosticsVersion.has(document.uri.toString()) || BUILTIN_DIAGNOSTIC_LANGUAGES.has(document.languageId);
		},
		warnModified: (file, where) => warnModified(file, where),
		sha256: (text) => createHash("sha256").update(text, "utf8").digest("hex"),
		applyEdits: async (document, edits, version) => {
			const target = findDocument(document.uri.fsPath);
			if (!target || target.version !== version) return false;
			// One WorkspaceEdit is one undo step of its own; it changes the buffer only (VS Code saves nothing for it).
			const edit = new vscode.WorkspaceEdit();
			for (const e of edits) {
				const range = new vscode.Range(e.start.line, e.start.character, e.end.line, e.end.character);
				edit.replace(target.uri, range, e.text);
			}
			return target.version === version && (await vscode.workspace.applyEdit(edit));
		},
		changed: () => {
			state.flush();
			refreshStatus();
		},
		setTimeout: (fn, ms) => setTimeout(guard(fn), ms),
		clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
	});
	subscriptions.push({ dispose: () => sync.dispose() });

	const state = new StateClient({
		app: "vscode",
		pid: process.pid,
		dir,
		snapshot: () =>
			snapshotWindow(vscode.window.activeTextEditor, vscode.workspace, homedir(), {
				diagnostics: (document) => diagnosticsOf(document as vscode.TextDocument),
				files: sync.reports,
				pi: sync.handled,
				reverted: review.reverted,
				decisions: approval.decisions,
			}),
		warn: (message) => {
			void vscode.window.showWarningMessage(`pi IDE context: ${message}`);
		},
		log,
		unsavedBuffers: () => (sync.isConnected ? dirtyDocuments() : undefined),
	});

	/** v0.5: the file documents with unsaved changes, the active one first (only while a pi is connected). */
	const dirtyDocuments = (): DirtyDocument[] => {
		const active = vscode.window.activeTextEditor?.document;
		const dirty = vscode.workspace.textDocuments.filter((d) => d.isDirty && !d.isClosed && d.uri.scheme === "file");
		dirty.sort((a, b) => Number(b === active) - Number(a === active));
		return dirty.map((d) => ({ file: d.uri.fsPath, version: d.version, lines: linesOf(d) }));
	};
	/** A document other than the active one changed: its unsaved text matters to a connected pi only. */
	const mattersToPi = (document: vscode.TextDocument) => sync.isConnected && document.uri.scheme === "file";

	const watcher = new PiWatcher({
		dir,
		ownPid: process.pid,
		onMessage: (message) => {
			sync.handleMessage(message);
			send.answered(message);
			// v0.4: only a pi that names this window as its editor is reviewed here.
			if (message.editor_pid === process.pid) review.load(message.pid, message.pid_ns);
			else {
				review.forget(message.pid, "elsewhere", message.pid_ns);
				approval.end(message.pid, "elsewhere", message.pid_ns);
			}
		},
		onGone: (pid, key, piNs) => {
			sync.forgetPi(key);
			review.forget(pid, "gone", piNs);
			approval.end(pid, "dead", piNs);
		},
		onProblem: (problem) => log(`pi message: ${problem}`),
		onApproval: (pid, verdict, piNs) => approval.received(pid, verdict, piNs),
		onAsk: (pid, verdict) => showAsk.received(pid, verdict),
	});

	const terminalEnv = context.environmentVariableCollection;
	// A new extension host has a new pid: a value kept from the last session would name a dead window.
	terminalEnv.persistent = false;
	terminalEnv.description = `Lets pi started in this terminal connect to this window (${EDITOR_PID_ENV}).`;

	const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 0);
	status.command = `${SECTION}.showState`;
	subscriptions.push(status);

	const config = () => vscode.workspace.getConfiguration(SECTION);
	const refreshStatus = () => {
		const { text, tooltip } = formatStatus({
			enabled: state.enabled,
			path: state.path,
			connected: sync.connected,
			folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
		});
		status.text = text;
		status.tooltip = tooltip;
		if (config().get<boolean>("showStatusBar", true)) status.show();
		else status.hide();
	};
	const applyConfig = () => {
		state.setEnabled(config().get<boolean>("enabled", true));
		if (state.enabled) {
			terminalEnv.replace(EDITOR_PID_ENV, String(process.pid));
			watcher.start();
		} else {
			terminalEnv.delete(EDITOR_PID_ENV);
			approval.reset();
			watcher.stop();
		}
		refreshStatus();
	};

	/** Run a handler without ever letting it throw into the host. */
	const guard =
		<A extends unknown[]>(fn: (...args: A) => void) =>
		(...args: A) => {
			try {
				fn(...args);
			} catch (error) {
				log(`handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
			}
		};

	const review = new ReviewView({
		dir,
		log,
		changed: () => state.flush(),
		marksEnabled: () => config().get<boolean>("reviewMarks", true),
		guard,
		conflicts: () => sync.conflicts,
	});
	subscriptions.push(review);

	const approval = new ApprovalView({
		log,
		marksEnabled: () => config().get<boolean>("reviewMarks", true),
		changed: () => state.flush(),
		findDocument,
		diskText: (file) => {
			const disk = sync.diskOf(file);
			return disk?.kind === "file" ? disk.text : undefined;
		},
		guard,
		now: () => Date.now() / 1000,
	});
	subscriptions.push(approval);

	// v0.5 send to pi: the commands "pi: Send to pi (draft)", "pi: Send to pi now" and their forms (send-view.ts).
	const send = new SendView({
		dir,
		pid: process.pid,
		messages: () => watcher.messages.values(),
		hunkAt: (document, line) => review.hunkAt(document, line),
		log,
	});
	subscriptions.push(send);

	const showAsk = new ShowAskView({
		dir,
		log,
		findDocument,
		diagnosticsOf: (document, maxItems) => diagnosticsOf(document, { maxItems }),
		follow: () => config().get<boolean>("showFollow", false),
		guard,
		now: () => Date.now() / 1000,
	});
	subscriptions.push(showAsk);
	placeRows = () => showAsk.places.map((place) => showAsk.rowName(place));

	const now = guard(() => state.flush());
	const later = guard(() => state.schedule());
	const isActive = (document: vscode.TextDocument) => document === vscode.window.activeTextEditor?.document;
	const fileOf = (document: vscode.TextDocument) => (document.uri.scheme === "file" ? document.uri.fsPath : undefined);
	subscriptions.push(
		// An undefined active editor is often a transient step between two editors: debounce it.
		vscode.window.onDidChangeActiveTextEditor(guard((editor) => (editor ? now() : later()))),
		vscode.window.onDidChangeTextEditorSelection(
			guard((e) => e.textEditor === vscode.window.activeTextEditor && later()),
		),
		vscode.workspace.onDidChangeTextDocument(
			guard((e) => {
				const file = fileOf(e.document);
				if (file !== undefined) sync.documentChanged(file);
				review.documentChanged(e);
				approval.documentChanged(e.document);
				if (isActive(e.document) || mattersToPi(e.document)) later();
			}),
		),
		vscode.workspace.onWillSaveTextDocument(guard((e) => review.documentWillSave(e.document))),
		vscode.workspace.onDidSaveTextDocument(
			guard((d) => {
				const file = fileOf(d);
				if (file !== undefined) sync.documentChanged(file);
				review.documentSaved(d);
				if (isActive(d) || mattersToPi(d)) later();
			}),
		),
		vscode.workspace.onDidOpenTextDocument(
			guard((d) => {
				// What its path is now, when VS Code has just read it: a later reload is judged against it.
				const file = fileOf(d);
				if (file !== undefined) sync.documentOpened(file);
				review.documentOpened(d);
			}),
		),
		vscode.workspace.onDidCloseTextDocument(
			guard((d) => {
				// A reopened document starts again at version 1: old dates would look current.
				diagnosticsVersion.delete(d.uri.toString());
				const file = fileOf(d);
				if (file !== undefined) sync.documentClosed(file);
				review.documentClosed(d);
				if (mattersToPi(d)) later();
			}),
		),
		vscode.languages.onDidChangeDiagnostics(
			guard((e) => {
				const files: string[] = [];
				let active = false;
				// One event may name every file of a project (TypeScript): look documents up in a map.
				const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d]));
				for (const uri of e.uris) {
					const key = uri.toString();
					const document = open.get(key);
					if (!document) continue;
					diagnosticsVersion.set(key, document.version);
					active ||= isActive(document);
					const file = fileOf(document);
					if (file !== undefined) files.push(file);
				}
				if (active) later();
				sync.diagnosticsChanged(files);
			}),
		),
		vscode.workspace.registerTextDocumentContentProvider(DISK_SCHEME, {
			provideTextDocumentContent: (uri) => {
				// Only for "Compare": the disk side of a document open in this window, never any other path.
				const disk = sync.diskOf(uri.path);
				if (!disk) return `(${uri.path} is not open in this window)`;
				if (disk.kind !== "file") return `(${uri.path} is ${disk.kind === "gone" ? "gone" : "not a regular file"})`;
				return disk.text ?? `(${uri.path} is too large to compare)`;
			},
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(now),
		vscode.window.onDidChangeWindowState(
			guard((s) => {
				if (!s.focused) return;
				state.flush({ force: true });
				if (state.enabled) watcher.start(); // after a failure (the dir was removed), try again
			}),
		),
		vscode.workspace.onDidChangeConfiguration(
			guard((e) => {
				if (!e.affectsConfiguration(SECTION)) return;
				applyConfig();
				review.redraw();
				approval.redraw();
			}),
		),
		vscode.commands.registerCommand(`${SECTION}.showState`, guard(showState)),
		vscode.commands.registerCommand(
			`${SECTION}.toggle`,
			guard(() => {
				void config().update("enabled", !state.enabled, vscode.ConfigurationTarget.Global);
			}),
		),
	);

	function showState(): void {
		const lastSend = send.summary();
		const message =
			(state.enabled
				? `pi IDE context writes ${state.path}${state.lastError ? ` (last error: ${state.lastError})` : ""}`
				: `pi IDE context is off: nothing is written (${state.path} when on)`) + (lastSend ? `; ${lastSend}` : "");
		const actions = state.enabled ? ["Copy path", "Disable writing"] : ["Enable writing"];
		void vscode.window.showInformationMessage(message, ...actions).then(
			guard((choice) => {
				if (choice === "Copy path") void vscode.env.clipboard.writeText(state.path);
				else if (choice !== undefined) void vscode.commands.executeCommand(`${SECTION}.toggle`);
			}),
		);
	}

	/**
	 * pi changed `file` on disk while the user has unsaved changes in it: say so once, offer a diff. `where` (issue
	 * 26): pi's other hunks were merged into the buffer, the user's lines there conflict with pi's and were kept.
	 */
	function warnModified(file: string, where?: string): void {
		const name = vscode.workspace.asRelativePath(file, false);
		const message =
			where === undefined
				? `pi changed ${name} on disk; your unsaved changes in this editor were kept. ` +
					"Compare them, or run File: Revert File to take pi's version."
				: `pi's change to ${name} touches your unsaved ${where}: kept yours (pi's other changes merged; listed in "pi: Show pi's changes"). Compare with the file on disk.`;
		void vscode.window.showWarningMessage(message, "Compare").then(
			guard((choice) => {
				const document = findDocument(file);
				if (choice !== "Compare" || !document) return;
				// The query makes every comparison read the disk afresh (VS Code caches virtual documents by URI).
				const disk = vscode.Uri.from({ scheme: DISK_SCHEME, path: file, query: String(Date.now()) });
				const title = `${basename(file)} (on disk) ↔ ${basename(file)} (unsaved)`;
				void vscode.commands.executeCommand("vscode.diff", disk, document.uri, title);
			}),
		);
	}

	try {
		applyConfig();
		if (state.enabled) state.flush({ force: true });
	} catch (error) {
		log(`activation: ${error instanceof Error ? error.message : String(error)}`);
	}
	return {
		dispose: () => {
			watcher.dispose();
			state.dispose();
			// The newest first: the output channel, made first, still takes what the others log on their way out.
			for (const subscription of subscriptions.reverse()) guard(() => subscription.dispose())();
		},
	};
}

export function deactivate(): void {
	const ending = running;
	running = undefined;
	ending?.dispose();
}
