/**
 * A small fake of the parts of VS Code's API the extension's shell (editors/vscode/src/extension.ts) uses,
 * for the conformance kit's VS Code adapter (test/conformance/adapters/vscode.ts maps the `vscode` import to
 * this file with a module hook). It behaves as VS Code does where the client depends on it: documents count
 * lines as VS Code does (a final newline makes an empty last line), versions grow with every change and
 * reload, an edit makes a document dirty and a save clean, and VS Code's own file watcher reloads a document
 * without unsaved changes when its file changes on disk (read through any symlink, as VS Code reads).
 * Events fire synchronously; `Workbench` is the test's handle on the whole window.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

export interface Disposable {
	dispose(): void;
}

type Listener<T> = (event: T) => unknown;

export class EventEmitter<T> {
	readonly #listeners = new Set<Listener<T>>();
	readonly event = (listener: Listener<T>): Disposable => {
		this.#listeners.add(listener);
		return { dispose: () => this.#listeners.delete(listener) };
	};
	fire(event: T): void {
		for (const listener of [...this.#listeners]) listener(event);
	}
	dispose(): void {
		this.#listeners.clear();
	}
}

/** The review shell's (editors/vscode/src/review-view.ts) decoration colours and places: inert values here. */
export class ThemeColor {
	readonly id: string;
	constructor(id: string) {
		this.id = id;
	}
}
export const OverviewRulerLane = { Left: 1, Center: 2, Right: 4, Full: 7 } as const;
export const EndOfLine = { LF: 1, CRLF: 2 } as const;

export const StatusBarAlignment = { Left: 1, Right: 2 } as const;
export const QuickPickItemKind = { Separator: -1, Default: 0 } as const;
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 } as const;

export class Uri {
	readonly scheme: string;
	readonly path: string;
	readonly query: string;
	private constructor(scheme: string, path: string, query = "") {
		this.scheme = scheme;
		this.path = path;
		this.query = query;
	}
	static file(path: string): Uri {
		return new Uri("file", path);
	}
	static from(parts: { scheme: string; path: string; query?: string }): Uri {
		return new Uri(parts.scheme, parts.path, parts.query);
	}
	get fsPath(): string {
		return this.path;
	}
	toString(): string {
		return `${this.scheme}://${this.path}${this.query ? `?${this.query}` : ""}`;
	}
}

export interface Position {
	line: number;
	character: number;
}

/** vscode.Range from its four numbers (what the extension constructs). */
export class Range {
	readonly start: Position;
	readonly end: Position;
	constructor(startLine: number, startCharacter: number, endLine: number, endCharacter: number) {
		this.start = { line: startLine, character: startCharacter };
		this.end = { line: endLine, character: endCharacter };
	}
}

export class TextDocument {
	readonly uri: Uri;
	readonly fileName: string;
	readonly isUntitled = false;
	readonly languageId: string;
	version = 1;
	isDirty = false;
	isClosed = false;
	#text: string;
	#lines: string[];
	constructor(file: string, text: string, languageId: string) {
		this.uri = Uri.file(file);
		this.fileName = file;
		this.#text = text;
		this.#lines = text.split("\n");
		this.languageId = languageId;
	}
	get lineCount(): number {
		return this.#lines.length;
	}
	lineAt(line: number): { text: string } {
		return { text: this.#lines[line] ?? "" };
	}
	getText(): string {
		return this.#text;
	}
	/** An edit or a reload: a new version. */
	setText(text: string): void {
		this.#text = text;
		this.#lines = text.split("\n");
		this.version += 1;
	}
}

export interface TextEditor {
	document: TextDocument;
	selection: { anchor: Position; active: Position };
}

export interface Diagnostic {
	severity: number;
	range: { start: Position; end: Position };
	message: string;
	source?: string;
}

/** The extension's view of a window: everything `vscode.*` returns lives here. */
export class Workbench {
	readonly onDidChangeActiveTextEditor = new EventEmitter<TextEditor | undefined>();
	/** One editor group: the visible editors are the active one, so they change with it (as in VS Code). */
	readonly onDidChangeVisibleTextEditors = new EventEmitter<unknown>();
	readonly onDidChangeTextEditorSelection = new EventEmitter<{ textEditor: TextEditor }>();
	readonly onDidChangeWindowState = new EventEmitter<{ focused: boolean }>();
	readonly onDidChangeTextDocument = new EventEmitter<{ document: TextDocument }>();
	readonly onWillSaveTextDocument = new EventEmitter<{ document: TextDocument }>();
	readonly onDidSaveTextDocument = new EventEmitter<TextDocument>();
	readonly onDidOpenTextDocument = new EventEmitter<TextDocument>();
	readonly onDidCloseTextDocument = new EventEmitter<TextDocument>();
	readonly onDidChangeWorkspaceFolders = new EventEmitter<unknown>();
	readonly onDidChangeConfiguration = new EventEmitter<{ affectsConfiguration(section: string): boolean }>();
	readonly onDidChangeDiagnostics = new EventEmitter<{ uris: Uri[] }>();
	readonly documents: TextDocument[] = [];
	readonly diagnostics = new Map<string, Diagnostic[]>();
	/** What the extension showed the user, and what it wrote to its output channel. */
	readonly shown: string[] = [];
	readonly output: string[] = [];
	/** The commands the extension registered (`vscode.commands.registerCommand`), by id. */
	readonly commands = new Map<string, (...args: unknown[]) => unknown>();
	/** The status bar's passing messages (`vscode.window.setStatusBarMessage`). */
	readonly statusMessages: string[] = [];
	/**
	 * The user's next answers to `showInputBox` and `showQuickPick` (the label picked), oldest first; with none
	 * left, the user pressed Escape (undefined). Each question asked is kept in `asked`.
	 */
	readonly answers: (string | undefined)[] = [];
	readonly asked: string[] = [];
	activeTextEditor: TextEditor | undefined;
	readonly folder: string;
	readonly #watcher: ReturnType<typeof setInterval>;
	/** Review (the kit's review cases): decorations drawn per file and type, each document's undo stack. */
	readonly decorations = new Map<string, Map<DecorationType, Range[]>>();
	/** Tree views' data providers (`vscode.window.registerTreeDataProvider`), by view id. */
	readonly trees = new Map<string, TreeDataProvider>();
	/** The files `vscode.window.showTextDocument` was asked to show (the show cases: nothing opens unasked). */
	readonly showTextDocumentCalls: string[] = [];
	/** Read-only documents' providers (`registerTextDocumentContentProvider`), by scheme. */
	readonly contentProviders = new Map<string, { provideTextDocumentContent(uri: Uri): string }>();
	/** VS Code's own commands the extension ran (`vscode.diff`...), with their arguments. */
	readonly executed: { id: string; args: unknown[] }[] = [];
	readonly #undo = new Map<TextDocument, string[]>();

	constructor(folder: string) {
		this.folder = folder;
		// VS Code's file watcher: a document without unsaved changes follows its file on disk.
		this.#watcher = setInterval(() => this.#watchFiles(), 20);
	}

	/** Open `file` in the active editor (VS Code's quick open): one document per file. */
	open(file: string, languageId = "plaintext"): TextEditor {
		let document = this.documents.find((d) => d.fileName === file);
		if (!document) {
			document = new TextDocument(file, readFileSync(file, "utf8"), languageId);
			this.documents.push(document);
			this.onDidOpenTextDocument.fire(document);
		}
		const start = { line: 0, character: 0 };
		const switched = this.activeTextEditor?.document !== document;
		this.activeTextEditor = { document, selection: { anchor: start, active: start } };
		this.onDidChangeActiveTextEditor.fire(this.activeTextEditor);
		if (switched) this.onDidChangeVisibleTextEditors.fire(undefined);
		return this.activeTextEditor;
	}

	select(anchor: Position, active: Position): void {
		const editor = this.activeTextEditor;
		if (!editor) throw new Error("no active editor");
		editor.selection = { anchor, active };
		this.onDidChangeTextEditorSelection.fire({ textEditor: editor });
	}

	edit(document: TextDocument, text: string): void {
		document.setText(text);
		document.isDirty = true;
		this.onDidChangeTextDocument.fire({ document });
	}

	/** The user's edit: the `remove` lines from 0-based `line` replaced by `insert`; one undo step. */
	editLines(document: TextDocument, line: number, remove: number, insert: string[]): void {
		const lines = document.getText().split("\n");
		lines.splice(line, remove, ...insert);
		this.#change(document, lines.join("\n"), undefined, true);
	}

	/** VS Code's `workspace.applyEdit`: one undo step, the document's changes in one event. */
	applyEdit(edit: WorkspaceEdit): boolean {
		for (const document of this.documents) {
			const mine = edit.edits.filter((e) => e.uri.toString() === document.uri.toString());
			if (mine.length === 0) continue;
			let text = document.getText();
			const offset = (p: Position) =>
				text
					.split("\n")
					.slice(0, p.line)
					.reduce((n, l) => n + l.length + 1, 0) + p.character;
			for (const e of [...mine].sort((a, b) => offset(b.range.start) - offset(a.range.start))) {
				text = text.slice(0, offset(e.range.start)) + e.text + text.slice(offset(e.range.end));
			}
			this.#change(document, text, undefined, true);
		}
		return true;
	}

	/** The user's undo (Ctrl+Z) in `document`: the text before its last edit, told with reason Undo. */
	undo(document: TextDocument): void {
		const before = this.#undo.get(document)?.pop();
		if (before !== undefined) this.#change(document, before, TextDocumentChangeReason.Undo, false);
	}

	/** Replace `document`'s text, told as VS Code tells it: the changed lines as one content change. */
	#change(document: TextDocument, text: string, reason: number | undefined, undoable: boolean): void {
		const a = document.getText().split("\n");
		const b = text.split("\n");
		let head = 0;
		while (head < a.length && head < b.length && a[head] === b[head]) head++;
		let tail = 0;
		while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
			tail++;
		if (undoable) {
			const stack = this.#undo.get(document) ?? [];
			stack.push(document.getText());
			this.#undo.set(document, stack);
		}
		// The texts end with a newline, so their last (empty) line is common: the change ends at a line start.
		const end =
			tail > 0 ? { line: a.length - tail, character: 0 } : { line: a.length - 1, character: (a.at(-1) ?? "").length };
		const middle = b.slice(head, b.length - tail);
		const inserted = tail > 0 ? middle.map((l) => `${l}\n`).join("") : middle.join("\n");
		document.setText(text);
		document.isDirty = true;
		// VS Code's event carries the content changes and the reason (the listeners' type names only `document`).
		const event: TextDocumentChangeEvent = {
			document,
			contentChanges: [{ range: new Range(head, 0, end.line, end.character), text: inserted }],
			reason,
		};
		this.onDidChangeTextDocument.fire(event);
	}

	save(document: TextDocument): void {
		this.onWillSaveTextDocument.fire({ document });
		writeFileSync(document.fileName, document.getText());
		document.isDirty = false;
		this.onDidSaveTextDocument.fire(document);
	}

	setDiagnostics(document: TextDocument, items: Diagnostic[]): void {
		this.diagnostics.set(document.uri.toString(), items);
		this.onDidChangeDiagnostics.fire({ uris: [document.uri] });
	}

	dispose(): void {
		clearInterval(this.#watcher);
	}

	#watchFiles(): void {
		for (const document of this.documents) {
			if (document.isDirty || document.isClosed) continue;
			let disk: string;
			try {
				disk = readFileSync(document.fileName, "utf8");
			} catch {
				continue; // deleted: VS Code keeps the document as it is
			}
			if (disk === document.getText()) continue;
			document.setText(disk);
			this.onDidChangeTextDocument.fire({ document });
		}
	}
}

let bench: Workbench | undefined;

/** Make `workbench` the window the `vscode` API below answers for (one at a time). */
export function useWorkbench(workbench: Workbench | undefined): void {
	bench = workbench;
}

function current(): Workbench {
	if (!bench) throw new Error("fake vscode: no workbench in use");
	return bench;
}

const statusBarItem = () => ({ text: "", tooltip: "", command: "", show() {}, hide() {}, dispose() {} });

/** A tree view's data (only what the extension's views use). */
export interface TreeDataProvider {
	getChildren(element?: unknown): unknown[] | Promise<unknown[]>;
	getTreeItem(element: unknown): TreeItem;
}

export class TreeItem {
	label: string;
	description?: string;
	tooltip?: string;
	command?: { command: string; title: string; arguments?: unknown[] };
	accessibilityInformation?: { label: string };
	constructor(label: string) {
		this.label = label;
	}
}

export const window = {
	get activeTextEditor() {
		return current().activeTextEditor;
	},
	createOutputChannel: (_name: string) => ({
		appendLine: (line: string) => void current().output.push(line),
		dispose() {},
	}),
	createStatusBarItem: (_alignment: number, _priority: number) => statusBarItem(),
	createTextEditorDecorationType: (options: object): DecorationType => ({ options, dispose() {} }),
	get visibleTextEditors() {
		const workbench = current();
		const editor = workbench.activeTextEditor;
		if (!editor) return [];
		const setDecorations = (type: DecorationType, ranges: Range[]) => {
			const drawn = workbench.decorations.get(editor.document.fileName) ?? new Map<DecorationType, Range[]>();
			drawn.set(type, ranges);
			workbench.decorations.set(editor.document.fileName, drawn);
		};
		return [{ ...editor, setDecorations }];
	},
	onDidChangeVisibleTextEditors: (l: Listener<unknown>) => current().onDidChangeVisibleTextEditors.event(l),
	onDidChangeActiveTextEditor: (l: Listener<TextEditor | undefined>) => current().onDidChangeActiveTextEditor.event(l),
	onDidChangeTextEditorSelection: (l: Listener<{ textEditor: TextEditor }>) =>
		current().onDidChangeTextEditorSelection.event(l),
	onDidChangeWindowState: (l: Listener<{ focused: boolean }>) => current().onDidChangeWindowState.event(l),
	showWarningMessage: (message: string, ..._items: string[]) => {
		current().shown.push(message);
		return Promise.resolve(undefined);
	},
	showInformationMessage: (message: string, ..._items: string[]) => {
		current().shown.push(message);
		return Promise.resolve(undefined);
	},
	showInputBox: (options?: { prompt?: string }): Promise<string | undefined> => {
		const bench = current();
		bench.asked.push(`input: ${options?.prompt ?? ""}`);
		return Promise.resolve(bench.answers.shift());
	},
	showQuickPick: <T extends { label: string }>(
		items: T[],
		options?: { placeHolder?: string },
	): Promise<T | undefined> => {
		const bench = current();
		bench.asked.push(`pick: ${options?.placeHolder ?? ""} ${items.map((i) => i.label).join(" | ")}`);
		const answer = bench.answers.shift();
		return Promise.resolve(items.find((i) => i.label === answer));
	},
	registerTreeDataProvider: (id: string, provider: TreeDataProvider): Disposable => {
		const workbench = current();
		workbench.trees.set(id, provider);
		return { dispose: () => void workbench.trees.delete(id) };
	},
	/** Opens the file in the active editor, as VS Code does (a shown place must not, unless the user asks). */
	showTextDocument: (shown: Uri | TextDocument, _options?: object) => {
		const workbench = current();
		const file = shown instanceof Uri ? shown.fsPath : shown.fileName;
		workbench.showTextDocumentCalls.push(file);
		return Promise.resolve(workbench.open(file));
	},
	setStatusBarMessage: (message: string, _timeoutMs?: number): Disposable => {
		current().statusMessages.push(message);
		return { dispose() {} };
	},
};

export const workspace = {
	get textDocuments() {
		return current().documents;
	},
	get workspaceFolders() {
		return [{ uri: Uri.file(current().folder) }];
	},
	workspaceFile: undefined,
	asRelativePath: (path: string, _includeFolder: boolean) => relative(current().folder, path),
	getConfiguration: (_section: string) => ({
		get: <T>(_key: string, fallback: T): T => fallback,
		update: () => Promise.resolve(),
	}),
	onDidChangeTextDocument: (l: Listener<{ document: TextDocument }>) => current().onDidChangeTextDocument.event(l),
	onWillSaveTextDocument: (l: Listener<{ document: TextDocument }>) => current().onWillSaveTextDocument.event(l),
	onDidSaveTextDocument: (l: Listener<TextDocument>) => current().onDidSaveTextDocument.event(l),
	onDidOpenTextDocument: (l: Listener<TextDocument>) => current().onDidOpenTextDocument.event(l),
	onDidCloseTextDocument: (l: Listener<TextDocument>) => current().onDidCloseTextDocument.event(l),
	onDidChangeWorkspaceFolders: (l: Listener<unknown>) => current().onDidChangeWorkspaceFolders.event(l),
	onDidChangeConfiguration: (l: Listener<{ affectsConfiguration(section: string): boolean }>) =>
		current().onDidChangeConfiguration.event(l),
	registerTextDocumentContentProvider: (
		scheme: string,
		provider: { provideTextDocumentContent(uri: Uri): string },
	): Disposable => {
		const workbench = current();
		workbench.contentProviders.set(scheme, provider);
		return { dispose: () => void workbench.contentProviders.delete(scheme) };
	},
	applyEdit: (edit: WorkspaceEdit) => Promise.resolve(current().applyEdit(edit)),
};

export const languages = {
	getDiagnostics: (uri: Uri): Diagnostic[] => current().diagnostics.get(uri.toString()) ?? [],
	onDidChangeDiagnostics: (l: Listener<{ uris: Uri[] }>) => current().onDidChangeDiagnostics.event(l),
};

export const commands = {
	/** Kept in the workbench in use, if any (the user runs it with `executeCommand`). */
	registerCommand: (id: string, fn: (...args: unknown[]) => unknown): Disposable => {
		const registry = bench?.commands;
		registry?.set(id, fn);
		return {
			dispose() {
				if (registry?.get(id) === fn) registry.delete(id);
			},
		};
	},
	/** A command the extension registered runs (VS Code's own commands do nothing here). */
	executeCommand: async (id: string, ...args: unknown[]) => {
		const own = bench?.commands.get(id);
		if (own) return own(...args);
		bench?.executed.push({ id, args });
		return undefined;
	},
};

export const env = { clipboard: { writeText: (_text: string) => Promise.resolve() } };

/** An ExtensionContext: the subscriptions VS Code disposes on deactivation, the terminal environment. */
export function makeContext(): { subscriptions: Disposable[]; environmentVariableCollection: object } {
	return {
		subscriptions: [],
		environmentVariableCollection: { persistent: true, description: "", replace() {}, delete() {} },
	};
}

// ---- review (protocol v0.4, the kit's review cases): ranges, edits, undo, decorations, the quick diff ----

export const TextDocumentChangeReason = { Undo: 1, Redo: 2 } as const;

export class WorkspaceEdit {
	readonly edits: { uri: Uri; range: Range; text: string }[] = [];
	replace(uri: Uri, range: Range, text: string): void {
		this.edits.push({ uri, range, text });
	}
}

export interface TextDocumentChangeEvent {
	document: TextDocument;
	contentChanges?: { range: Range; text: string }[];
	reason?: number | undefined;
}

/** A decoration type as the extension made it: its options (VS Code gives decoration types no name). */
export interface DecorationType extends Disposable {
	readonly options: object;
}

export const scm = {
	createSourceControl: (_id: string, _label: string, _root?: Uri) => ({
		quickDiffProvider: undefined as unknown,
		dispose() {},
	}),
};
