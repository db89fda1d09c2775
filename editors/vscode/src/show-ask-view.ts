/**
 * pi's show and ask (protocol v0.5) answered in VS Code: the thin shell over the shared AskResponder
 * (editors/shared/show-ask.ts). While pi's `ide_show` or `ide_open_files` waits (at most 1 s), pi writes
 * `pi-<pid>.ask.json` naming this window; the shared PiWatcher reads it through pi-reader.ts's checks.
 * - A show goes to the "pi's places" list in the Explorer (a tree view, VS Code's list of places to visit, as
 *   Neovim's quickfix list: it never takes focus, and a click opens the place) with one non-modal notification
 *   ("pi shows src/b.ts:2-3: note", button "Open"); the active editor, its cursor and focus stay as they are. Only
 *   the `piIdeContext.showFollow` setting opens the place at once (the answer says `opened`).
 * - An ask is answered from the open file documents (`isDirty` as `modified`, `version`) and
 *   `vscode.languages.getDiagnostics` of the named or every open file, dated as in the state file.
 * The answers go to `<extension host pid>.answers.json`, removed on a clean exit.
 */
import * as vscode from "vscode";
import type { DiagnosticsReport } from "../../shared/diagnostics.ts";
import type { PiAskVerdict } from "../../shared/pi-reader.ts";
import {
	AskResponder,
	describeShow,
	inertNote,
	type OpenDocument,
	type ShowAnswer,
	type ShowRequest,
} from "../../shared/show-ask.ts";
import { countLines } from "../../shared/state.ts";

/** The tree view pi's places go to (package.json `views.explorer`). */
export const PLACES_VIEW = "piIdeContext.places";
export const OPEN = "Open";
/** The places kept in the list, newest last (the oldest go first). */
const MAX_PLACES = 100;

/** A place pi showed, as the list holds it. */
export interface Place {
	file: string;
	line: number;
	end_line: number | null;
	/** The entry's text: "pi: <note>" (inert), or "pi". */
	text: string;
}

export interface ShowAskHostOptions {
	dir: string;
	/** A line in the output channel. */
	log(message: string): void;
	/** The open document pi's path names, if any (by path, or by real path). */
	findDocument(file: string): vscode.TextDocument | undefined;
	/** The document's diagnostics, dated; undefined when none were reported for it. */
	diagnosticsOf(document: vscode.TextDocument, maxItems: number): DiagnosticsReport | undefined;
	/** The setting `showFollow`: open a shown place at once. */
	follow(): boolean;
	guard<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
	/** Seconds since the epoch. */
	now(): number;
}

/** A place's lines as its row names them: "3", or "3-5". */
const linesOf = (place: Place): string =>
	place.end_line !== null && place.end_line !== place.line ? `${place.line}-${place.end_line}` : `${place.line}`;

export class ShowAskView implements vscode.Disposable, vscode.TreeDataProvider<Place> {
	readonly #host: ShowAskHostOptions;
	readonly #responder: AskResponder;
	readonly #changed = new vscode.EventEmitter<Place | undefined>();
	readonly #disposables: vscode.Disposable[] = [];
	#places: Place[] = [];

	readonly onDidChangeTreeData = this.#changed.event;

	constructor(host: ShowAskHostOptions) {
		this.#host = host;
		this.#responder = new AskResponder(host.dir, process.pid);
		this.#disposables.push(
			this.#changed,
			vscode.window.registerTreeDataProvider(PLACES_VIEW, this),
			vscode.commands.registerCommand(
				"piIdeContext.openPlace",
				host.guard((place: Place | undefined) => place && this.#open(place)),
			),
			vscode.commands.registerCommand(
				"piIdeContext.clearPlaces",
				host.guard(() => {
					this.#places = [];
					this.#changed.fire(undefined);
				}),
			),
		);
	}

	/** The places in the list, oldest first. */
	get places(): readonly Place[] {
		return this.#places;
	}

	getTreeItem(place: Place): vscode.TreeItem {
		const lines = linesOf(place);
		const item = new vscode.TreeItem(`${vscode.workspace.asRelativePath(place.file, false)}:${lines}`);
		item.description = place.text;
		item.tooltip = `${place.file}:${lines}\n${place.text}`;
		// What a screen reader says of the entry: the whole path (the label has the workspace-relative one).
		item.accessibilityInformation = { label: this.rowName(place) };
		item.command = { command: "piIdeContext.openPlace", title: "Open", arguments: [place] };
		return item;
	}

	/** A row's accessible name: its whole path, lines and text. */
	rowName(place: Place): string {
		return `${place.file}:${linesOf(place)} ${place.text}`;
	}

	getChildren(place?: Place): Place[] {
		return place === undefined ? [...this.#places] : [];
	}

	/** What the watcher read of pi `pid`'s request file: answer each new request once. */
	received(pid: number, verdict: PiAskVerdict & { kind: "ask" }): void {
		const problem = this.#responder.receive(
			pid,
			verdict.file,
			{ show: (request) => this.#show(request), documents: () => this.#documents() },
			this.#host.now(),
		);
		if (problem !== undefined) this.#host.log(`pi's show/ask: cannot write the answers: ${problem}`);
	}

	dispose(): void {
		this.#responder.dispose();
		for (const each of this.#disposables.reverse()) each.dispose();
	}

	#show(request: ShowRequest): Pick<ShowAnswer, "status" | "list" | "reason"> {
		const note = request.note === null ? "" : inertNote(request.note);
		const place: Place = {
			file: request.file,
			line: request.line,
			end_line: request.end_line,
			text: note === "" ? "pi" : `pi: ${note}`,
		};
		this.#places = [...this.#places, place].slice(-MAX_PLACES);
		this.#changed.fire(undefined);
		const follow = this.#host.follow();
		if (follow) this.#open(place);
		const line = describeShow(request, vscode.workspace.asRelativePath(request.file, false));
		// Non-modal: a notification never takes focus; "Open" is the user's choice.
		void vscode.window.showInformationMessage(line, ...(follow ? [] : [OPEN])).then(
			this.#host.guard((choice: string | undefined) => {
				if (choice === OPEN) this.#open(place);
			}),
		);
		return { status: follow ? "opened" : "listed", list: "places", reason: null };
	}

	#open(place: Place): void {
		const end = (place.end_line ?? place.line) - 1;
		const selection = new vscode.Range(place.line - 1, 0, end, 0);
		vscode.window
			.showTextDocument(vscode.Uri.file(place.file), { selection, preview: true })
			.then(undefined, (error) =>
				this.#host.log(`cannot open ${place.file}: ${error instanceof Error ? error.message : String(error)}`),
			);
	}

	#documents(): OpenDocument[] {
		const active = vscode.window.activeTextEditor?.document;
		return vscode.workspace.textDocuments
			.filter((d) => d.uri.scheme === "file" && !d.isClosed)
			.map((d) => ({
				file: d.uri.fsPath,
				modified: d.isDirty,
				version: d.version,
				lines_total: countLines({ count: d.lineCount, text: (line) => d.lineAt(line).text }),
				active: d === active,
				is: (file) => this.#host.findDocument(file) === d,
				diagnostics: (maxItems) => this.#host.diagnosticsOf(d, maxItems) ?? null,
			}));
	}
}
