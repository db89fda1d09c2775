/**
 * A small fake of the parts of Obsidian's API the plugin uses, for tests only (Obsidian itself is a
 * closed-source app that cannot run here). test/unit/editors/obsidian/obsidian-plugin.test.ts maps the `obsidian` import to
 * this file with a module hook. Behaviour follows obsidian.d.ts 1.13: `Plugin` extends `Component`
 * (register/registerEvent cleanups run on unload, then `onunload`), `Workspace`/`Vault` are `Events`,
 * `Editor` positions are 0-based `{line, ch}`. The CodeMirror packages are the real ones.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, type ViewUpdate } from "@codemirror/view";

export class Notice {
	static readonly shown: string[] = [];
	constructor(message: string) {
		Notice.shown.push(message);
	}
}

/** A modal's content: the one-line input a prompt creates, typed into with `type` and `press`. */
export class FakeInput {
	value = "";
	readonly #keydown: ((event: { key: string }) => void)[] = [];
	focus(): void {}
	addEventListener(_type: "keydown", listener: (event: { key: string }) => void): void {
		this.#keydown.push(listener);
	}
	press(key: string): void {
		for (const listener of this.#keydown) listener({ key });
	}
}

export class FakeContent {
	readonly inputs: FakeInput[] = [];
	empty(): void {}
	createEl(_tag: string, _options?: object): FakeInput {
		const input = new FakeInput();
		this.inputs.push(input);
		return input;
	}
}

/** Obsidian's `Modal`: `open` shows it (onOpen), `close` hides it (onClose). Every open one is in `Modal.open`. */
export class Modal {
	static readonly shown: Modal[] = [];
	readonly app: unknown;
	readonly contentEl = new FakeContent();
	readonly titleEl = {
		text: "",
		setText(text: string) {
			this.text = text;
		},
	};
	constructor(app: unknown) {
		this.app = app;
	}
	open(): void {
		Modal.shown.push(this);
		this.onOpen();
	}
	close(): void {
		const at = Modal.shown.indexOf(this);
		if (at >= 0) Modal.shown.splice(at, 1);
		this.onClose();
	}
	onOpen(): void {}
	onClose(): void {}
	/** Test helper: the user types `text` into the modal's input and presses Enter. */
	answer(text: string): void {
		const input = this.contentEl.inputs.at(-1);
		if (!input) throw new Error("the modal has no input");
		input.value = text;
		input.press("Enter");
	}
}

/** Obsidian's `SuggestModal`: as Obsidian does, a choice closes the modal first, then reports the item. */
export abstract class SuggestModal<T> extends Modal {
	placeholder = "";
	setPlaceholder(text: string): void {
		this.placeholder = text;
	}
	abstract getSuggestions(query: string): T[];
	abstract renderSuggestion(item: T, el: { setText(text: string): void }): void;
	abstract onChooseSuggestion(item: T, evt: unknown): void;
	/** Test helper: the labels shown for an empty query. */
	labels(): string[] {
		return this.getSuggestions("").map((item) => {
			let text = "";
			this.renderSuggestion(item, {
				setText: (t) => {
					text = t;
				},
			});
			return text;
		});
	}
	/** Test helper: the user picks the suggestion labelled `label`. */
	choose(label: string): void {
		const item = this.getSuggestions("").find((_, i) => this.labels()[i] === label);
		this.close();
		if (item !== undefined) this.onChooseSuggestion(item, {});
	}
}

export class FileSystemAdapter {
	readonly #base: string;
	constructor(base: string) {
		this.#base = base;
	}
	getBasePath(): string {
		return this.#base;
	}
}

/** Any other adapter (Obsidian mobile's CapacitorAdapter). */
export class OtherAdapter {}

export interface EventRef {
	off(): void;
}

type Callback = (...args: unknown[]) => unknown;

export class Events {
	readonly #handlers = new Map<string, Set<Callback>>();
	on(name: string, callback: Callback): EventRef {
		const set = this.#handlers.get(name) ?? new Set();
		set.add(callback);
		this.#handlers.set(name, set);
		return { off: () => set.delete(callback) };
	}
	trigger(name: string, ...args: unknown[]): void {
		for (const callback of this.#handlers.get(name) ?? []) callback(...args);
	}
	listenerCount(name: string): number {
		return this.#handlers.get(name)?.size ?? 0;
	}
}

export class TFile {
	readonly path: string;
	readonly name: string;
	readonly extension: string;
	readonly basename: string;
	constructor(path: string) {
		this.path = path;
		this.name = path.split("/").pop() ?? path;
		const dot = this.name.lastIndexOf(".");
		this.extension = dot > 0 ? this.name.slice(dot + 1) : "";
		this.basename = dot > 0 ? this.name.slice(0, dot) : this.name;
	}
}

/** Obsidian's `Editor` over a plain text, with a settable selection. */
export class FakeEditor {
	lines: string[];
	anchor = { line: 0, ch: 0 };
	head = { line: 0, ch: 0 };
	constructor(text: string) {
		this.lines = text.split("\n");
	}
	lineCount(): number {
		return this.lines.length;
	}
	getLine(line: number): string {
		return this.lines[line] ?? "";
	}
	getCursor(side: "from" | "to" | "head" | "anchor" = "head"): { line: number; ch: number } {
		const [from, to] =
			this.anchor.line < this.head.line || (this.anchor.line === this.head.line && this.anchor.ch <= this.head.ch)
				? [this.anchor, this.head]
				: [this.head, this.anchor];
		return { ...{ from, to, head: this.head, anchor: this.anchor }[side] };
	}
	setSelection(anchor: { line: number; ch: number }, head: { line: number; ch: number } = anchor): void {
		this.anchor = anchor;
		this.head = head;
	}
	setCursor(pos: { line: number; ch: number } | number, ch = 0): void {
		this.setSelection(typeof pos === "number" ? { line: pos, ch } : pos);
	}
	/** As in CodeMirror: a newline in `text` splits it into several lines. */
	replaceLine(line: number, text: string): void {
		this.lines.splice(line, 1, ...text.split("\n"));
	}
}

/** A DOM-ish container: `contains` is all the plugin asks of it. */
export class FakeElement {
	readonly children = new Set<unknown>();
	contains(node: unknown): boolean {
		return node === this || this.children.has(node);
	}
}

export class MarkdownView {
	file: TFile | null;
	editor: FakeEditor;
	mode: "source" | "preview" = "source";
	readonly containerEl = new FakeElement();
	constructor(file: TFile, text: string) {
		this.file = file;
		this.editor = new FakeEditor(text);
	}
	getMode(): "source" | "preview" {
		return this.mode;
	}
	getViewData(): string {
		return this.editor.lines.join("\n");
	}
}

/** A tab: its view, and `openFile`, which reads the note from the vault's folder on disk into a new view. */
export class WorkspaceLeaf {
	view: MarkdownView | null;
	readonly #workspace: Workspace;
	constructor(workspace: Workspace, view: MarkdownView | null = null) {
		this.#workspace = workspace;
		this.view = view;
	}
	/** As Obsidian: the note replaces the leaf's view; `eState.line` (0-based) scrolls there. */
	async openFile(file: TFile, state: { eState?: Record<string, unknown> } = {}): Promise<void> {
		const view = new MarkdownView(file, this.#workspace.readNote(file.path));
		const line = state.eState?.["line"];
		if (typeof line === "number") view.editor.setCursor(line, 0);
		this.view = view;
		this.#workspace.activeView = view;
		this.#workspace.trigger("file-open", file);
	}
}

export class Workspace extends Events {
	activeView: MarkdownView | null = null;
	activeFile: TFile | null = null;
	/** The open tabs (a test opens a note in one with `openView`). */
	readonly leaves: WorkspaceLeaf[] = [];
	/** Reads a vault-relative note (the App's folder on disk). */
	readonly readNote: (path: string) => string;
	constructor(readNote: (path: string) => string = () => "") {
		super();
		this.readNote = readNote;
	}
	/** Test helper: the user opens `view` in a tab of its own (or goes back to its tab); it becomes active. */
	openView(view: MarkdownView): void {
		if (!this.leaves.some((leaf) => leaf.view === view)) this.leaves.push(new WorkspaceLeaf(this, view));
		this.activeView = view;
	}
	getLeavesOfType(type: string): WorkspaceLeaf[] {
		return type === "markdown" ? this.leaves.filter((leaf) => leaf.view instanceof MarkdownView) : [];
	}
	/** `getLeaf(false)`: the active tab, or a new one when none is active. */
	getLeaf(_newLeaf?: boolean): WorkspaceLeaf {
		const active = this.leaves.find((leaf) => leaf.view !== null && leaf.view === this.activeView);
		if (active) return active;
		const leaf = new WorkspaceLeaf(this);
		this.leaves.push(leaf);
		return leaf;
	}
	getActiveViewOfType<T>(type: abstract new (...args: never[]) => T): T | null {
		return this.activeView instanceof type ? this.activeView : null;
	}
	getActiveFile(): TFile | null {
		return this.activeView?.file ?? this.activeFile;
	}
	onLayoutReady(callback: () => void): void {
		callback();
	}
}

export class Vault extends Events {
	adapter: FileSystemAdapter | OtherAdapter;
	constructor(adapter: FileSystemAdapter | OtherAdapter) {
		super();
		this.adapter = adapter;
	}
	/** A file of the vault's folder on disk as a TFile, else null (as Obsidian: only what its index holds). */
	getAbstractFileByPath(path: string): TFile | null {
		if (!(this.adapter instanceof FileSystemAdapter)) return null;
		try {
			return statSync(join(this.adapter.getBasePath(), path)).isFile() ? new TFile(path) : null;
		} catch {
			return null;
		}
	}
}

export class App {
	readonly workspace: Workspace;
	readonly vault: Vault;
	constructor(adapter: FileSystemAdapter | OtherAdapter) {
		this.vault = new Vault(adapter);
		this.workspace = new Workspace((path) =>
			adapter instanceof FileSystemAdapter ? readFileSync(join(adapter.getBasePath(), path), "utf8") : "",
		);
	}
}

export interface Command {
	id: string;
	name: string;
	callback?: () => unknown;
}

export class StatusBarItem {
	text = "";
	readonly attrs = new Map<string, string>();
	setText(text: string): void {
		this.text = text;
	}
	setAttr(name: string, value: string): void {
		this.attrs.set(name, value);
	}
}

export class Plugin {
	readonly app: App;
	readonly manifest: { id: string };
	readonly commands: Command[] = [];
	readonly editorExtensions: Extension[] = [];
	readonly statusBarItems: StatusBarItem[] = [];
	data: unknown = null;
	readonly #cleanups: (() => void)[] = [];

	constructor(app: App, manifest: { id: string }) {
		this.app = app;
		this.manifest = manifest;
	}
	onload(): void | Promise<void> {}
	onunload(): void {}
	register(cleanup: () => void): void {
		this.#cleanups.push(cleanup);
	}
	registerEvent(ref: EventRef): void {
		this.register(() => ref.off());
	}
	registerEditorExtension(extension: Extension): void {
		this.editorExtensions.push(extension);
	}
	addCommand(command: Command): Command {
		this.commands.push(command);
		return command;
	}
	addStatusBarItem(): StatusBarItem {
		const item = new StatusBarItem();
		this.statusBarItems.push(item);
		return item;
	}
	async loadData(): Promise<unknown> {
		return this.data;
	}
	async saveData(data: unknown): Promise<void> {
		this.data = structuredClone(data);
	}
	/** What Obsidian does when a plugin is disabled: registered cleanups, then `onunload`. */
	unload(): void {
		for (const cleanup of this.#cleanups.splice(0).reverse()) cleanup();
		this.onunload();
	}
	/** Test helper: run the CodeMirror update listeners the plugin registered, with a partial `ViewUpdate`. */
	dispatchEditorUpdate(update: Partial<Pick<ViewUpdate, "selectionSet" | "docChanged" | "focusChanged">>): void {
		const state = EditorState.create({ extensions: this.editorExtensions });
		for (const listener of state.facet(EditorView.updateListener)) listener(update as ViewUpdate);
	}
}
