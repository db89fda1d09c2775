/**
 * pi IDE context for VS Code: the thin shell. Wires VS Code events to the shared `StateClient`, which writes
 * this window's file, cursor and selection to `<state dir>/<extension host pid>.json` (protocol v0.2), and
 * deletes it on deactivate. A status bar item shows the path; `piIdeContext.enabled` turns writing off.
 * Nothing here throws into the extension host: failures become one warning and a line in the output channel.
 */
import { homedir } from "node:os";
import * as vscode from "vscode";
import { resolveStateDir } from "../../../src/state-dir.ts";
import { StateClient } from "../../shared/client.ts";
import { snapshotWindow } from "./snapshot.ts";

const SECTION = "piIdeContext";

let client: StateClient | undefined;

export function activate(context: vscode.ExtensionContext): void {
	const output = vscode.window.createOutputChannel("pi IDE context");
	context.subscriptions.push(output);
	const log = (message: string) => output.appendLine(`${new Date().toISOString()} ${message}`);

	const state = new StateClient({
		app: "vscode",
		pid: process.pid,
		dir: resolveStateDir(process.env),
		snapshot: () => snapshotWindow(vscode.window.activeTextEditor, vscode.workspace, homedir()),
		warn: (message) => {
			void vscode.window.showWarningMessage(`pi IDE context: ${message}`);
		},
		log,
	});
	client = state;

	const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 0);
	status.command = `${SECTION}.showState`;
	context.subscriptions.push(status);

	const config = () => vscode.workspace.getConfiguration(SECTION);
	const refreshStatus = () => {
		status.text = state.enabled ? "$(eye) pi" : "$(eye-closed) pi";
		status.tooltip = state.enabled
			? `pi IDE context: writing ${state.path}`
			: "pi IDE context: writing is off (click for options)";
		if (config().get<boolean>("showStatusBar", true)) status.show();
		else status.hide();
	};
	const applyConfig = () => {
		state.setEnabled(config().get<boolean>("enabled", true));
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

	const now = guard(() => state.flush());
	const later = guard(() => state.schedule());
	context.subscriptions.push(
		// An undefined active editor is often a transient step between two editors: debounce it.
		vscode.window.onDidChangeActiveTextEditor(guard((editor) => (editor ? now() : later()))),
		vscode.window.onDidChangeTextEditorSelection(
			guard((e) => e.textEditor === vscode.window.activeTextEditor && later()),
		),
		vscode.workspace.onDidChangeTextDocument(
			guard((e) => e.document === vscode.window.activeTextEditor?.document && later()),
		),
		vscode.workspace.onDidSaveTextDocument(guard((d) => d === vscode.window.activeTextEditor?.document && later())),
		vscode.workspace.onDidChangeWorkspaceFolders(now),
		vscode.window.onDidChangeWindowState(guard((s) => s.focused && state.flush({ force: true }))),
		vscode.workspace.onDidChangeConfiguration(guard((e) => e.affectsConfiguration(SECTION) && applyConfig())),
		vscode.commands.registerCommand(`${SECTION}.showState`, guard(showState)),
		vscode.commands.registerCommand(
			`${SECTION}.toggle`,
			guard(() => {
				void config().update("enabled", !state.enabled, vscode.ConfigurationTarget.Global);
			}),
		),
	);

	function showState(): void {
		const message = state.enabled
			? `pi IDE context writes ${state.path}${state.lastError ? ` (last error: ${state.lastError})` : ""}`
			: `pi IDE context is off: nothing is written (${state.path} when on)`;
		const actions = state.enabled ? ["Copy path", "Disable writing"] : ["Enable writing"];
		void vscode.window.showInformationMessage(message, ...actions).then(
			guard((choice) => {
				if (choice === "Copy path") void vscode.env.clipboard.writeText(state.path);
				else if (choice !== undefined) void vscode.commands.executeCommand(`${SECTION}.toggle`);
			}),
		);
	}

	try {
		applyConfig();
		if (state.enabled) state.flush({ force: true });
	} catch (error) {
		log(`activation: ${error instanceof Error ? error.message : String(error)}`);
	}
}

export function deactivate(): void {
	client?.dispose();
	client = undefined;
}
