/**
 * Send to pi from VS Code (protocol v0.5): the commands "pi: Send to pi (draft)" and "pi: Send to pi now" and
 * their forms for the diagnostic under the cursor, pi's hunk under the cursor and the whole file. Each hands the
 * pi connected to this window what the active editor points at (the selection, or the line under the cursor)
 * with the words typed in an input box (or given as the command's argument: a string, or `{ "prompt": ... }`).
 * The rules are the shared ones (editors/shared/send.ts); this file is the VS Code shell around them: which
 * document, its selection and diagnostics, the quick pick when several pis name this window, the one-line
 * notices. No keybinding is set (the README suggests one).
 */
import * as vscode from "vscode";
import type { SendMode } from "../../../src/protocol/send.ts";
import type { DiagnosticSeverity } from "../../shared/diagnostics.ts";
import type { PiMessage } from "../../shared/pi-message.ts";
import {
	describePi,
	pisNaming,
	SendDesk,
	type SendDiagnostic,
	type SendForm,
	selectedLines,
	sendItem,
	withSelection,
} from "../../shared/send.ts";

/** The commands, one per form and mode: `piIdeContext.send`, `piIdeContext.sendNow`, `piIdeContext.sendFile`... */
export const SEND_COMMANDS: readonly { id: string; form: SendForm; mode: SendMode }[] = [
	{ id: "piIdeContext.send", form: "default", mode: "draft" },
	{ id: "piIdeContext.sendNow", form: "default", mode: "now" },
	{ id: "piIdeContext.sendDiagnostic", form: "diagnostic", mode: "draft" },
	{ id: "piIdeContext.sendDiagnosticNow", form: "diagnostic", mode: "now" },
	{ id: "piIdeContext.sendHunk", form: "hunk", mode: "draft" },
	{ id: "piIdeContext.sendHunkNow", form: "hunk", mode: "now" },
	{ id: "piIdeContext.sendFile", form: "file", mode: "draft" },
	{ id: "piIdeContext.sendFileNow", form: "file", mode: "now" },
];

/** vscode.DiagnosticSeverity's numbers, as the protocol names them. */
const SEVERITIES: readonly DiagnosticSeverity[] = ["error", "warning", "info", "hint"];

export interface SendHost {
	dir: string;
	/** The pid in this window's state file name (the extension host's). */
	pid: number;
	/** pi's live messages (the shared PiWatcher's). */
	messages(): Iterable<PiMessage>;
	/** pi's hunk under 0-based `line` (ReviewView.hunkAt). */
	hunkAt(document: vscode.TextDocument, line: number): { first: number; last: number } | undefined;
	log(message: string): void;
}

/** The prompt given as the command's argument: a string, or an object with a string `prompt`. */
function promptArgument(arg: unknown): string | undefined {
	if (typeof arg === "string") return arg;
	if (typeof arg === "object" && arg !== null && typeof (arg as { prompt?: unknown }).prompt === "string") {
		return (arg as { prompt: string }).prompt;
	}
	return undefined;
}

export class SendView implements vscode.Disposable {
	readonly #host: SendHost;
	readonly #desk: SendDesk;
	readonly #disposables: vscode.Disposable[] = [];

	constructor(host: SendHost) {
		this.#host = host;
		this.#desk = new SendDesk({ dir: host.dir, pid: host.pid });
		for (const command of SEND_COMMANDS) {
			this.#disposables.push(
				vscode.commands.registerCommand(command.id, (arg?: unknown) =>
					this.#send(command.form, command.mode, promptArgument(arg)).catch((error: unknown) =>
						this.#say(`send failed: ${error instanceof Error ? error.message : String(error)}`),
					),
				),
			);
		}
	}

	/** The last send and its fate, for the state summary. */
	summary(): string | undefined {
		return this.#desk.summary();
	}

	/** pi's message arrived: if it answers one of our sends, say so in one line. */
	answered(message: PiMessage): void {
		const line = this.#desk.answered(message);
		if (line !== undefined) this.#say(line);
	}

	dispose(): void {
		for (const d of this.#disposables) d.dispose();
		this.#desk.dispose();
	}

	#say(line: string): void {
		this.#host.log(`send: ${line}`);
		void vscode.window.showInformationMessage(`pi: ${line}`);
	}

	async #send(form: SendForm, mode: SendMode, given: string | undefined): Promise<void> {
		const editor = vscode.window.activeTextEditor;
		const document = editor?.document;
		const item = sendItem({
			form,
			file: document?.uri.scheme === "file" ? document.uri.fsPath : undefined,
			lines: { count: document?.lineCount ?? 0, text: (line) => document?.lineAt(line).text ?? "" },
			cursor: editor?.selection.active.line ?? 0,
			...withSelection(editor && selectedLines(editor.selection.anchor, editor.selection.active)),
			...(form === "diagnostic" && document ? { diagnostics: this.#diagnostics(document) } : {}),
			...(form === "hunk" && document && editor
				? { hunk: this.#host.hunkAt(document, editor.selection.active.line) }
				: {}),
		});
		if (!item.ok) return this.#say(item.notice);
		const picked = await this.#desk.pick(pisNaming(this.#host.messages(), this.#host.pid), async (choices) => {
			const chosen = await vscode.window.showQuickPick(
				choices.map((pi) => ({ label: describePi(pi), pi })),
				{ placeHolder: "Send to which pi? (remembered)" },
			);
			return chosen?.pi;
		});
		if (!picked.ok) return this.#say(picked.notice);
		const prompt =
			given ??
			(await vscode.window.showInputBox({
				prompt: mode === "now" ? "Send to pi now: your words (optional)" : "Send to pi's input: your words (optional)",
			}));
		if (prompt === undefined) return this.#say("nothing sent");
		const written = this.#desk.write(picked.pi, item.item, mode, prompt);
		if (!written.ok) return this.#say(written.notice);
		this.#host.log(`send: ${written.id} (${item.item.kind} of ${item.item.file}) to pi ${picked.pi.pid}`);
		vscode.window.setStatusBarMessage(`pi: ${item.item.kind} sent to pi ${picked.pi.pid}`, 5000);
	}

	#diagnostics(document: vscode.TextDocument): SendDiagnostic[] {
		return vscode.languages.getDiagnostics(document.uri).map((d) => ({
			line: d.range.start.line,
			endLine: d.range.end.line,
			severity: SEVERITIES[d.severity] ?? "error",
			message: d.message,
		}));
	}
}
