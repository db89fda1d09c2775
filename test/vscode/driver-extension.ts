/**
 * A test-only VS Code extension that lets a test drive the real VS Code through its own API, as the Neovim
 * tests drive Neovim over msgpack-RPC: it runs in the same extension host as the pi extension (so its pid is
 * the one that names the state file) and answers JSON requests on 127.0.0.1. Packaged by `packageDriver()`
 * (test/vscode/code-server.ts) and installed beside the real .vsix; it does nothing unless the window's
 * extension environment names a directory for it (`PI_IDE_KIT_DRIVER_DIR`), where it writes
 * `driver.json` (its pid, port, token and log directory). Requests carry that token: another local user who
 * finds the port cannot use it.
 *
 * Positions here are VS Code's (0-based lines, UTF-16 characters); the test converts the protocol's.
 */
import { randomBytes } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import * as vscode from "vscode";
import { TEST_HOOKS_ENV, type TestHooks } from "../../editors/vscode/src/test-hooks.ts";

/** What a request may ask; each answers with JSON. */
export type DriverRequest =
	| { op: "ready"; extension: string }
	/** The workspace's folders (paths), as the extensions see them. */
	| { op: "folders" }
	/**
	 * `file` shown (and focused) in the active editor, as the user opens it; with `unlessActive`, nothing done when
	 * the active editor already shows it (a step that needs the file active, not the focus: a showTextDocument
	 * costs a round trip to the window).
	 */
	| { op: "open"; file: string; unlessActive?: boolean }
	/** A line's text in `file`, or in the active editor's document. */
	| { op: "line"; file?: string; line: number }
	| { op: "select"; anchor: HostPosition; active: HostPosition }
	| { op: "selection" }
	| { op: "replace"; file: string; from: number; to: number; text: string }
	| { op: "save"; file: string }
	| { op: "buffer"; file: string }
	| { op: "loaded" }
	| { op: "diagnostics"; file: string; items: HostDiagnostic[] }
	/** `args`: the command's arguments (send to pi's `{ prompt }`). */
	| { op: "command"; command: string; args?: unknown[] }
	/**
	 * A new session in this window without loading a new window (the kit's code-server adapter): every editor
	 * reverted and closed, the kit's diagnostics and every notification cleared, `folder` made the workspace's
	 * second folder, `env` set in this extension host's environment, and the pi extension `extension` started again through its test hooks (`TestHooks`, which it has
	 * only when its host started with `PI_IDE_CONTEXT_TEST_HOOKS=1`). Answers the documents still open then (VS
	 * Code closes a closed editor's document when it likes): the files of earlier sessions.
	 */
	| { op: "restart"; extension: string; env: Record<string, string>; folder: string }
	/** The pi extension stopped through its test hooks, as a clean exit stops it (its state file removed). */
	| { op: "stop"; extension: string }
	/** The rows the pi extension's "pi's places" view holds (`TestHooks.places`), what the window draws once refreshed. */
	| { op: "places"; extension: string };

export interface HostPosition {
	line: number;
	character: number;
}

export interface HostDiagnostic {
	at: HostPosition;
	/** vscode.DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
	severity: number;
	message: string;
	source: string;
}

/** What `driver.json` holds. */
export interface DriverInfo {
	pid: number;
	port: number;
	token: string;
	/** This extension host's log directory (its output channels' files are below it). */
	logDir: string;
}

const documentOf = (file: string): vscode.TextDocument | undefined =>
	vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === file && !d.isClosed);

function mustDocument(file: string): vscode.TextDocument {
	const document = documentOf(file);
	if (!document) throw new Error(`${file} is not open`);
	return document;
}

function mustEditor(): vscode.TextEditor {
	const editor = vscode.window.activeTextEditor;
	if (!editor) throw new Error("no active editor");
	return editor;
}

const position = (at: HostPosition) => new vscode.Position(at.line, at.character);

/** The pi extension's test hooks (see `restart`). */
function hooksOf(id: string): TestHooks {
	const hooks = vscode.extensions.getExtension(id)?.exports as TestHooks | undefined;
	if (typeof hooks?.start !== "function")
		throw new Error(`${id} has no test hooks: its extension host started without ${TEST_HOOKS_ENV}=1`);
	return hooks;
}

async function reset(): Promise<void> {
	for (const document of vscode.workspace.textDocuments.filter((d) => d.isDirty)) {
		await vscode.window.showTextDocument(document);
		await vscode.commands.executeCommand("workbench.action.files.revert");
	}
	await vscode.commands.executeCommand("workbench.action.closeAllEditors");
}

const folderPaths = () => (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);

/** How long `useFolder` waits for a workspace that reads as having no folder at all to have its folders again. */
const NO_FOLDER_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The next change of the workspace's folders (VS Code's confirmation of one asked for), or `ms` without one. */
function folderChange(ms: number): { done: Promise<void>; cancel: () => void } {
	let listener: vscode.Disposable | undefined;
	let timer: ReturnType<typeof setTimeout> | undefined;
	const done = new Promise<void>((resolve) => {
		listener = vscode.workspace.onDidChangeWorkspaceFolders(() => resolve());
		timer = setTimeout(resolve, ms);
	});
	const cancel = () => {
		listener?.dispose();
		clearTimeout(timer);
	};
	void done.then(cancel);
	return { done, cancel };
}

/**
 * Make `folder` the workspace's second folder (the window is on a multi-root workspace whose first folder stays:
 * changing the first restarts the extension host). VS Code refuses a change while another is unconfirmed, and
 * the kit saw the folders read as none for a moment: this tries again until the folders are the two it needs.
 */
async function useFolder(folder: string): Promise<void> {
	let emptySince: number | undefined;
	for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
		const paths = folderPaths();
		if (paths.length === 2 && paths[1] === folder) return;
		// A workspace that reads as having no folder for NO_FOLDER_MS is given up: the caller's remedy (a new window)
		// is cheaper than waiting out the 15 s, as such a workspace did in three of the kit's last eight runs.
		emptySince = paths.length === 0 ? (emptySince ?? Date.now()) : undefined;
		if (emptySince !== undefined && Date.now() - emptySince > NO_FOLDER_MS) break;
		if (paths.length >= 1) {
			const change = folderChange(5000);
			if (vscode.workspace.updateWorkspaceFolders(1, paths.length - 1, { uri: vscode.Uri.file(folder) })) {
				await change.done;
				continue;
			}
			change.cancel();
		}
		await sleep(100);
	}
	throw new Error(`${folder} did not become the second workspace folder (folders: ${folderPaths()})`);
}

async function handle(request: DriverRequest, diagnostics: vscode.DiagnosticCollection): Promise<unknown> {
	switch (request.op) {
		case "ready":
			return vscode.extensions.getExtension(request.extension)?.isActive === true;
		case "folders":
			return folderPaths();
		case "open": {
			if (request.unlessActive && vscode.window.activeTextEditor?.document.uri.fsPath === request.file) return null;
			const document = await vscode.workspace.openTextDocument(vscode.Uri.file(request.file));
			await vscode.window.showTextDocument(document, { preview: false });
			return null;
		}
		case "line":
			return (request.file === undefined ? mustEditor().document : mustDocument(request.file)).lineAt(request.line)
				.text;
		case "select": {
			const editor = mustEditor();
			editor.selection = new vscode.Selection(position(request.anchor), position(request.active));
			editor.revealRange(editor.selection);
			return null;
		}
		case "selection": {
			const { anchor, active } = mustEditor().selection;
			return { anchor, active };
		}
		case "replace": {
			// Lines [from, to) give way to `text`: what a user's edit of those lines does, the rest untouched.
			const document = mustDocument(request.file);
			const edit = new vscode.WorkspaceEdit();
			edit.replace(document.uri, new vscode.Range(request.from, 0, request.to, 0), request.text);
			return vscode.workspace.applyEdit(edit);
		}
		case "save":
			return mustDocument(request.file).save();
		case "buffer": {
			const document = documentOf(request.file);
			return document ? { text: document.getText(), modified: document.isDirty } : null;
		}
		case "loaded":
			return vscode.workspace.textDocuments
				.filter((d) => d.uri.scheme === "file" && !d.isClosed)
				.map((d) => d.uri.fsPath);
		case "diagnostics": {
			const document = mustDocument(request.file);
			diagnostics.set(
				document.uri,
				request.items.map((d) => {
					const item = new vscode.Diagnostic(
						new vscode.Range(position(d.at), position(d.at)),
						d.message,
						d.severity as vscode.DiagnosticSeverity,
					);
					item.source = d.source;
					return item;
				}),
			);
			return null;
		}
		case "command":
			await vscode.commands.executeCommand(request.command, ...(request.args ?? []));
			return null;
		case "restart": {
			const hooks = hooksOf(request.extension);
			hooks.stop();
			await reset();
			diagnostics.clear();
			await vscode.commands.executeCommand("notifications.clearAll");
			await useFolder(request.folder);
			Object.assign(process.env, request.env);
			hooks.start();
			return vscode.workspace.textDocuments
				.filter((d) => d.uri.scheme === "file" && !d.isClosed)
				.map((d) => d.uri.fsPath);
		}
		case "stop":
			hooksOf(request.extension).stop();
			return null;
		case "places":
			return hooksOf(request.extension).places();
	}
}

function readBody(request: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		let body = "";
		request.setEncoding("utf8");
		request.on("data", (chunk: string) => {
			body += chunk;
		});
		request.on("end", () => resolve(body));
		request.on("error", reject);
	});
}

function reply(response: ServerResponse, status: number, value: unknown): void {
	response.writeHead(status, { "content-type": "application/json" });
	response.end(JSON.stringify(value ?? null));
}

export function activate(context: vscode.ExtensionContext): void {
	const dir = process.env["PI_IDE_KIT_DRIVER_DIR"];
	if (dir === undefined) return;
	const token = randomBytes(16).toString("hex");
	const diagnostics = vscode.languages.createDiagnosticCollection("kit");
	const server = createServer((request, response) => {
		readBody(request)
			.then(async (body) => {
				const { token: given, ...rest } = JSON.parse(body) as DriverRequest & { token: string };
				if (given !== token) return reply(response, 403, { error: "bad token" });
				return reply(response, 200, { value: await handle(rest as DriverRequest, diagnostics) });
			})
			.catch((error: unknown) =>
				reply(response, 500, { error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
			);
	});
	server.listen(0, "127.0.0.1", () => {
		const address = server.address();
		if (typeof address !== "object" || address === null) return;
		const info: DriverInfo = { pid: process.pid, port: address.port, token, logDir: dirname(context.logUri.fsPath) };
		const path = join(dir, "driver.json");
		writeFileSync(`${path}.tmp`, JSON.stringify(info), { mode: 0o600 });
		renameSync(`${path}.tmp`, path);
	});
	context.subscriptions.push(diagnostics, { dispose: () => server.close() });
}

export function deactivate(): void {}
