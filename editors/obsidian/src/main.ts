/**
 * pi IDE context for Obsidian: the thin plugin shell. Wires Obsidian's workspace events, a CodeMirror 6
 * update listener (cursor and selection in editing mode) and the document's `selectionchange` (reading
 * mode) to the shared `StateClient`, which writes `<state dir>/<renderer pid>.json` (protocol v0.2) with
 * the vault root as `cwd` and vault-relative paths. Desktop only: it needs the file system. The file is
 * deleted when the plugin unloads or writing is turned off.
 */
import { EditorView, type ViewUpdate } from "@codemirror/view";
import { FileSystemAdapter, MarkdownView, Notice, Plugin } from "obsidian";
import { resolveStateDir } from "../../../src/protocol/state-dir.ts";
import { StateClient } from "../../shared/client.ts";
import { type ActiveView, snapshotVault } from "./snapshot.ts";

interface Settings {
	enabled: boolean;
}

/** The DOM this plugin touches, typed here because the project compiles without the DOM library. */
interface DomSelectionLike {
	toString(): string;
	anchorNode: unknown;
}
interface DomLike {
	document?: {
		addEventListener(type: string, listener: () => void): void;
		removeEventListener(type: string, listener: () => void): void;
	};
	addEventListener?(type: string, listener: () => void): void;
	removeEventListener?(type: string, listener: () => void): void;
	getSelection?(): DomSelectionLike | null;
}
interface ContainerLike {
	contains(node: unknown): boolean;
}
interface StatusItemLike {
	setText(text: string): void;
	setAttr(name: string, value: string): void;
}

function parseSettings(raw: unknown): Settings {
	const enabled = typeof raw === "object" && raw !== null && "enabled" in raw ? raw.enabled : undefined;
	return { enabled: typeof enabled === "boolean" ? enabled : true };
}

export default class PiIdeContextPlugin extends Plugin {
	client: StateClient | undefined;
	prefs: Settings = { enabled: true };

	override async onload(): Promise<void> {
		const adapter = this.app.vault.adapter;
		if (!(adapter instanceof FileSystemAdapter)) {
			new Notice("pi IDE context needs the desktop app (a vault on disk); it does nothing here.");
			return;
		}
		const vaultRoot = adapter.getBasePath();
		this.prefs = parseSettings(await this.loadData());
		const dom = globalThis as DomLike;

		const client = new StateClient({
			app: "obsidian",
			pid: process.pid,
			dir: resolveStateDir(process.env),
			snapshot: () => snapshotVault(this.activeView(dom), vaultRoot),
			warn: (message) => new Notice(`pi IDE context: ${message}`),
			log: (message) => console.warn(`[pi-ide-context] ${message}`),
		});
		this.client = client;
		this.register(() => client.dispose());

		const status: StatusItemLike = this.addStatusBarItem();
		const refreshStatus = () => {
			status.setText(client.enabled ? "pi ●" : "pi ○");
			status.setAttr("aria-label", client.enabled ? `pi IDE context: writing ${client.path}` : "pi IDE context: off");
		};

		const now = () => client.flush();
		const later = () => client.schedule();
		const { workspace, vault } = this.app;
		this.registerEvent(workspace.on("active-leaf-change", now));
		this.registerEvent(workspace.on("file-open", now));
		this.registerEvent(workspace.on("layout-change", later)); // editing <-> reading mode
		this.registerEvent(workspace.on("editor-change", later));
		this.registerEvent(vault.on("rename", now));
		this.registerEditorExtension(
			EditorView.updateListener.of((update: ViewUpdate) => {
				if (update.selectionSet || update.docChanged || update.focusChanged) later();
			}),
		);
		// Reading mode has no editor: its selection is the DOM's.
		this.listen(dom.document, "selectionchange", later);
		this.listen(dom, "focus", () => client.flush({ force: true }));

		this.addCommand({
			id: "show-state-file",
			name: "Show state file path",
			callback: () => {
				const error = client.lastError ? ` (last error: ${client.lastError})` : "";
				new Notice(client.enabled ? `pi IDE context writes ${client.path}${error}` : "pi IDE context is off");
			},
		});
		this.addCommand({
			id: "toggle-writing",
			name: "Enable/disable writing the state file",
			callback: async () => {
				this.prefs.enabled = !this.prefs.enabled;
				client.setEnabled(this.prefs.enabled);
				refreshStatus();
				await this.saveData(this.prefs);
			},
		});

		client.setEnabled(this.prefs.enabled);
		refreshStatus();
		this.app.workspace.onLayoutReady(() => client.flush({ force: true }));
	}

	override onunload(): void {
		this.client?.dispose();
		this.client = undefined;
	}

	/** addEventListener plus removal on unload. */
	private listen(
		target:
			| { addEventListener?(t: string, l: () => void): void; removeEventListener?(t: string, l: () => void): void }
			| undefined,
		type: string,
		listener: () => void,
	): void {
		if (!target?.addEventListener) return;
		target.addEventListener(type, listener);
		this.register(() => target.removeEventListener?.(type, listener));
	}

	private activeView(dom: DomLike): ActiveView {
		const { workspace } = this.app;
		const view = workspace.getActiveViewOfType(MarkdownView);
		if (view?.file) {
			if (view.getMode() === "source") return { kind: "editing", file: view.file, editor: view.editor };
			// HTMLElement as far as the checker knows without the DOM library: only `contains` is used.
			const container = view.containerEl as unknown as ContainerLike;
			const selection = dom.getSelection?.();
			const inView = selection !== null && selection !== undefined && container.contains(selection.anchorNode);
			return {
				kind: "reading",
				file: view.file,
				source: view.getViewData(),
				selectedText: inView ? selection.toString() : "",
			};
		}
		const file = workspace.getActiveFile();
		return file ? { kind: "file", file } : { kind: "none" };
	}
}
