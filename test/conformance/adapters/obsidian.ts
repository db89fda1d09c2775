/**
 * The Obsidian plugin (editors/obsidian) in the conformance kit. Obsidian is a closed-source desktop app
 * that cannot run here: the plugin's own class runs in the kit's process against the fake of Obsidian's API
 * its unit test uses (test/helpers/obsidian-host.ts), with the real CodeMirror packages, the shared state
 * writer and the real file system. The vault is the kit's project dir; the state file is
 * `<kit's pid>.json`, so the kit runs this adapter one session at a time (`inProcess`). A note opened here
 * is a Markdown view of the file's text; a selection is CodeMirror's, dispatched as its update listener.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Place } from "../../../editors/obsidian/src/show-ask.ts";
import { dom, fake, PiIdeContextPlugin } from "../../helpers/obsidian-host.ts";
import type { ClientAdapter, ClientSession, Position, StartOptions } from "../client.ts";
import { utf16Span } from "../kit.ts";

type FakeView = InstanceType<typeof fake.MarkdownView>;
type FakePlugin = InstanceType<typeof fake.Plugin>;

async function start(options: StartOptions): Promise<ClientSession> {
	const vault = options.cwd;
	const app = new fake.App(new fake.FileSystemAdapter(vault));
	const plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
	const host = plugin as unknown as FakePlugin;
	const noticesFrom = fake.Notice.shown.length;
	dom.selection = null;
	// The plugin reads the state dir from the environment when it loads: the kit's, for this session only.
	const saved = process.env["XDG_RUNTIME_DIR"];
	process.env["XDG_RUNTIME_DIR"] = options.env["XDG_RUNTIME_DIR"];
	try {
		await plugin.onload();
	} finally {
		if (saved === undefined) delete process.env["XDG_RUNTIME_DIR"];
		else process.env["XDG_RUNTIME_DIR"] = saved;
	}
	// The plugin's developer-console log (failed writes, each time): not a notice to the user, and noise here.
	const logged: unknown[][] = [];
	const consoleWarn = console.warn;
	console.warn = (...args: unknown[]) => void logged.push(args);
	const views = new Map<string, FakeView>();
	const active = (): FakeView => {
		const view = app.workspace.activeView;
		if (!view) throw new Error("no note is open");
		return view;
	};
	const open = (file: string) => {
		const view =
			views.get(file) ?? new fake.MarkdownView(new fake.TFile(relative(vault, file)), readFileSync(file, "utf8"));
		views.set(file, view);
		app.workspace.openView(view);
		app.workspace.trigger("file-open", view.file);
	};
	const select = (anchor: Position, head: Position, inclusive: boolean) => {
		const editor = active().editor;
		const from = utf16Span(editor.getLine(anchor.line - 1), anchor.column).start;
		const to = utf16Span(editor.getLine(head.line - 1), head.column);
		editor.setSelection(
			{ line: anchor.line - 1, ch: from },
			{ line: head.line - 1, ch: inclusive ? to.end : to.start },
		);
		host.dispatchEditorUpdate({ selectionSet: true });
	};
	let unloaded = false;
	const unload = () => {
		if (unloaded) return;
		unloaded = true;
		try {
			host.unload();
		} finally {
			console.warn = consoleWarn;
		}
	};
	if (options.file !== undefined) open(options.file);
	return {
		pid: process.pid,
		open: async (file) => open(file),
		moveCursor: async (to) => select(to, to, false),
		select: async (from, to) => select(from, to, true),
		clearSelection: async () => {
			const head = active().editor.getCursor("head");
			active().editor.setSelection(head);
			host.dispatchEditorUpdate({ selectionSet: true });
		},
		// The selection is made once select returns.
		endSelecting: async () => {},
		setLines: async (file, lines) => {
			const view = views.get(file);
			if (!view) throw new Error(`${file} is not open`);
			view.editor.lines = [...lines];
			app.workspace.trigger("editor-change", view.editor, view);
		},
		save: async (file) => {
			const view = views.get(file);
			if (!view) throw new Error(`${file} is not open`);
			writeFileSync(file, view.getViewData());
			// As Obsidian's own save (or any change on disk it sees): the vault says the file was modified.
			app.vault.trigger("modify", view.file);
		},
		buffer: async (file) => {
			const view = views.get(file);
			if (!view) return undefined;
			// Obsidian's `modified`: the editor's text is not the file's (editors/obsidian/src/notes.ts).
			const text = view.getViewData();
			let disk: string | undefined;
			try {
				disk = readFileSync(file, "utf8");
			} catch {
				disk = undefined;
			}
			return { text, modified: text !== disk };
		},
		loadedFiles: async () => [...views.keys()],
		setDiagnostics: async () => {
			throw new Error("Obsidian has no diagnostics");
		},
		messages: async () => fake.Notice.shown.slice(noticesFrom),
		// ---- show: the command "Show pi's places" and the places its picker lists (newest first), then Escape ----
		shownPlaces: async () => {
			const command = host.commands.find((c) => c.id === "show-places");
			if (!command?.callback) throw new Error("the plugin added no command show-places");
			await command.callback();
			const picker = fake.Modal.shown.at(-1);
			if (!(picker instanceof fake.SuggestModal)) throw new Error("Show pi's places opened no picker");
			const places = picker.getSuggestions("") as Place[];
			picker.close();
			return places.reverse().map(({ file, line, end_line, text }) => ({ file, line, end_line, text }));
		},
		// ---- send: the command "Send selection or line to pi (draft)" (or "... now", "Send the note to pi ..."),
		// the prompt typed into its prompt window and Enter ----
		sendToPi: async (file, send) => {
			if (app.workspace.activeView?.file?.path !== relative(vault, file)) open(file);
			if (send.lines) {
				const [first, last] = send.lines;
				select({ line: first, column: 1 }, { line: last + 1, column: 1 }, false);
			}
			const id = `send${send.form === "file" ? "-file" : ""}${send.mode === "now" ? "-now" : ""}`;
			const command = host.commands.find((c) => c.id === id);
			if (!command?.callback) throw new Error(`the plugin added no command ${id}`);
			const shown = fake.Modal.shown.length;
			const done = Promise.resolve(command.callback());
			// The prompt window opens once the pi is known (a turn later), unless the command said why not.
			let settled = false;
			void done.finally(() => {
				settled = true;
			});
			while (!settled && fake.Modal.shown.length === shown) await new Promise((r) => setImmediate(r));
			if (!settled) fake.Modal.shown.at(-1)?.answer(send.prompt);
			await done;
		},
		quit: async () => unload(),
		dispose: async () => unload(),
	};
}

export const adapters: ClientAdapter[] = [
	{
		name: "obsidian (plugin code, fake Obsidian)",
		app: "obsidian",
		capabilities: new Set(["selection", "edit", "editor-per-row", "send", "show", "ask", "unsaved-buffers"]),
		missing: {
			merge:
				"not built: issue 26 names no Obsidian client, and Obsidian saves a note about two seconds after the last key, so pi rarely finds one unsaved; its unsaved read is built (`unsaved-buffers`)",
			"pi-identity":
				"the Obsidian plugin speaks protocol v0.2: it reads pi's messages only to know which pi to send to (v0.5 send), and answers none, so it has no pi to name",
			review:
				'the Obsidian plugin speaks protocol v0.2: it does not implement review (PROTOCOL.md "Which client implements what")',
			reload:
				"the Obsidian plugin speaks protocol v0.2: it acts on no change of pi's (Obsidian reloads notes itself; it reads pi's messages only to send)",
			diagnostics: "Obsidian has no checkers whose diagnostics the plugin could report",
			"ui-gate": "Obsidian is a desktop app: the plugin only ever runs with its window",
			// ---- approval ----
			approval:
				'the Obsidian plugin does not implement approval (PROTOCOL.md, "Which client implements what"): it writes no `decisions`, so pi never asks it',
			"approval-marks": "the Obsidian plugin does not implement approval",
			// ---- end approval ----
		},
		inProcess: true,
		start,
	},
];
