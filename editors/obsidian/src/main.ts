/**
 * pi IDE context for Obsidian: the thin plugin shell. Wires Obsidian's workspace events, a CodeMirror 6
 * update listener (cursor and selection in editing mode) and the document's `selectionchange` (reading
 * mode) to the shared `StateClient`, which writes `<state dir>/<renderer pid>.json` (protocol v0.2) with
 * the vault root as `cwd` and vault-relative paths. Desktop only: it needs the file system. The file is
 * deleted when the plugin unloads or writing is turned off. v0.5 send to pi (send.ts): the shared `PiWatcher` reads
 * pi's messages to find the pis connected to this Obsidian (it echoes the last one's `pi`, so a tool can see it
 * was read, and reports on no files: v0.2) and shows pi's answer to a send. v0.5 show and ask (show-ask.ts): the
 * same watcher hands pi's `pi-<pid>.ask.json` naming this Obsidian to `ObsidianShowAsk`, which keeps pi's places
 * and answers what is open. v0.5 unsaved buffers: while a pi names this Obsidian, the notes whose text differs from
 * their file on disk (notes.ts) go to `<pid>.buffers.json` on the state file's own write, for pi's `read`.
 */
import { join } from "node:path";
import { EditorView, type ViewUpdate } from "@codemirror/view";
import { FileSystemAdapter, MarkdownView, Notice, Plugin } from "obsidian";
import { resolveStateDir } from "../../../src/protocol/state-dir.ts";
import { StateClient } from "../../shared/client.ts";
import type { HandledMessage } from "../../shared/pi-message.ts";
import { PiWatcher } from "../../shared/pi-watcher.ts";
import { linesOf } from "../../shared/state.ts";
import { NoteVersions, type NoteViewLike, openNotes } from "./notes.ts";
import { ObsidianSend, SEND_COMMANDS } from "./send.ts";
import { ObsidianShowAsk } from "./show-ask.ts";
import { type ActiveView, snapshotVault } from "./snapshot.ts";

interface Settings {
	enabled: boolean;
	/** v0.5 show: open a place pi shows at once (off by default: it only goes to pi's places). */
	showFollow: boolean;
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
	const field = (name: string): unknown =>
		typeof raw === "object" && raw !== null && name in raw ? (raw as Record<string, unknown>)[name] : undefined;
	const enabled = field("enabled");
	const showFollow = field("showFollow");
	return {
		enabled: typeof enabled === "boolean" ? enabled : true,
		showFollow: typeof showFollow === "boolean" ? showFollow : false,
	};
}

export default class PiIdeContextPlugin extends Plugin {
	client: StateClient | undefined;
	prefs: Settings = { enabled: true, showFollow: false };
	/** v0.5: each note's content version and modified flag (notes.ts). */
	readonly versions = new NoteVersions();
	vaultRoot = "";

	override async onload(): Promise<void> {
		const adapter = this.app.vault.adapter;
		if (!(adapter instanceof FileSystemAdapter)) {
			new Notice("pi IDE context needs the desktop app (a vault on disk); it does nothing here.");
			return;
		}
		const vaultRoot = adapter.getBasePath();
		this.vaultRoot = vaultRoot;
		this.prefs = parseSettings(await this.loadData());
		const dom = globalThis as DomLike;
		const dir = resolveStateDir(process.env);
		/** The last message handled from a pi naming this Obsidian, echoed as `pi` (v0.5 send: which pi). */
		let seen: HandledMessage | undefined;

		const client = new StateClient({
			app: "obsidian",
			pid: process.pid,
			dir,
			snapshot: () => ({ ...snapshotVault(this.activeView(dom), vaultRoot), ...(seen ? { pi: seen } : {}) }),
			warn: (message) => new Notice(`pi IDE context: ${message}`),
			log: (message) => console.warn(`[pi-ide-context] ${message}`),
			// v0.5: the modified notes' texts for pi's `read`, only while a pi names this Obsidian (none looked at else).
			unsavedBuffers: () => {
				if (![...watcher.messages.values()].some((m) => m.editor_pid === process.pid)) return undefined;
				return openNotes(
					this.markdownViews(),
					this.app.workspace.getActiveViewOfType(MarkdownView),
					vaultRoot,
					this.versions,
				)
					.filter((note) => note.modified)
					.map((note) => ({ file: note.file, version: note.version, lines: linesOf(note.text) }));
			},
		});
		this.client = client;
		this.register(() => client.dispose());

		const send = new ObsidianSend({
			app: this.app,
			dir,
			pid: process.pid,
			vaultRoot,
			view: () => this.activeView(dom),
			messages: () => watcher.messages.values(),
			say: (line) => new Notice(`pi: ${line}`),
		});
		this.register(() => send.dispose());
		const showAsk = new ObsidianShowAsk({
			app: this.app,
			dir,
			pid: process.pid,
			vaultRoot,
			versions: this.versions,
			follow: () => this.prefs.showFollow,
			say: (line) => new Notice(line),
			log: (message) => console.warn(`[pi-ide-context] ${message}`),
			now: () => Date.now() / 1000,
		});
		this.register(() => showAsk.dispose());
		const watcher = new PiWatcher({
			dir,
			ownPid: process.pid,
			onMessage: (message) => {
				if (message.editor_pid !== process.pid) {
					// That pi now names another editor: no longer echoed, and its unsaved buffers' copy goes (v0.5).
					if (seen?.pid === message.pid) seen = undefined;
					client.flush();
					return;
				}
				seen = { pid: message.pid, seq: message.seq };
				client.flush();
				send.answered(message);
			},
			onGone: (pid) => {
				if (seen?.pid !== pid) return;
				seen = undefined;
				client.flush();
			},
			onProblem: (problem) => console.warn(`[pi-ide-context] pi message: ${problem}`),
			onAsk: (pid, verdict) => showAsk.received(pid, verdict),
		});
		this.register(() => watcher.dispose());

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
		// Obsidian saved a note (or it changed on disk): whether it is modified may have changed (v0.5).
		this.registerEvent(vault.on("modify", later));
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
				const lastSend = send.summary();
				new Notice(
					(client.enabled ? `pi IDE context writes ${client.path}${error}` : "pi IDE context is off") +
						(lastSend ? `; ${lastSend}` : ""),
				);
			},
		});
		this.addCommand({
			id: "toggle-writing",
			name: "Enable/disable writing the state file",
			callback: async () => {
				this.prefs.enabled = !this.prefs.enabled;
				client.setEnabled(this.prefs.enabled);
				if (this.prefs.enabled) watcher.start();
				else watcher.stop();
				refreshStatus();
				await this.saveData(this.prefs);
			},
		});

		for (const command of SEND_COMMANDS) {
			this.addCommand({
				id: command.id,
				name: command.name,
				callback: () =>
					send.send(command.form, command.mode).catch((error: unknown) => {
						new Notice(`pi: send failed: ${error instanceof Error ? error.message : String(error)}`);
					}),
			});
		}

		this.addCommand({ id: "show-places", name: "Show pi's places", callback: () => showAsk.pick() });
		this.addCommand({ id: "clear-places", name: "Clear pi's places", callback: () => showAsk.clear() });
		this.addCommand({
			id: "toggle-show-follow",
			name: "Follow pi's shows: on/off",
			callback: async () => {
				this.prefs.showFollow = !this.prefs.showFollow;
				new Notice(
					this.prefs.showFollow
						? "pi: a place pi shows now opens at once"
						: "pi: a place pi shows now only goes to pi's places",
				);
				await this.saveData(this.prefs);
			},
		});

		client.setEnabled(this.prefs.enabled);
		if (this.prefs.enabled) watcher.start();
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

	/** Every Markdown leaf's view (editing or reading mode). */
	private markdownViews(): NoteViewLike[] {
		return this.app.workspace
			.getLeavesOfType("markdown")
			.map((leaf) => leaf.view)
			.filter((view): view is MarkdownView => view instanceof MarkdownView);
	}

	private activeView(dom: DomLike): ActiveView {
		const { workspace } = this.app;
		const view = workspace.getActiveViewOfType(MarkdownView);
		if (view?.file) {
			const text = view.getViewData();
			const version = this.versions.version(view.file.path, text);
			const file = join(this.vaultRoot, ...view.file.path.split("/"));
			const status = { version, modified: this.versions.modified(view.file.path, file, text, version) };
			if (view.getMode() === "source") return { kind: "editing", file: view.file, editor: view.editor, ...status };
			// HTMLElement as far as the checker knows without the DOM library: only `contains` is used.
			const container = view.containerEl as unknown as ContainerLike;
			const selection = dom.getSelection?.();
			const inView = selection !== null && selection !== undefined && container.contains(selection.anchorNode);
			return {
				kind: "reading",
				file: view.file,
				source: text,
				selectedText: inView ? selection.toString() : "",
				...status,
			};
		}
		const file = workspace.getActiveFile();
		return file ? { kind: "file", file } : { kind: "none" };
	}
}
