/**
 * The real Obsidian plugin class (editors/obsidian/src/main.ts) against a fake of Obsidian's API
 * (editors/obsidian/test/fake-obsidian.ts, mapped onto the `obsidian` import with a module hook) and the
 * real CodeMirror packages and file system: what it writes on load, file open, CM6 selection updates,
 * editor changes, reading-mode DOM selections, focus, non-Markdown files, the toggle command and unload.
 * Obsidian itself cannot run here; what this leaves untested is listed in editors/obsidian/README.md.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, afterEach, beforeEach, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type EditorState, parseEditorState } from "../../../../src/protocol/protocol.ts";
import { dom, fake, PiIdeContextPlugin } from "../../../helpers/obsidian-host.ts";
import { pollUntil } from "../../../helpers/poll.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));
type Plugin = InstanceType<typeof PiIdeContextPlugin>;

const root = mkdtempSync(join(tmpdir(), "pi-ide-obsidian-"));
const VAULT = join(root, "vault");
process.env["XDG_RUNTIME_DIR"] = join(root, "run");
mkdirSync(join(root, "run"), { mode: 0o700 });
const STATE = join(root, "run/pi-ide", `${process.pid}.json`);
after(() => rmSync(root, { recursive: true, force: true }));

function readState(): EditorState {
	const parsed = parseEditorState(readFileSync(STATE, "utf8"));
	assert.ok(parsed.ok, JSON.stringify(parsed));
	return parsed.state;
}

/** Poll the state file until `ready` holds (debounced writes land ~200 ms later); never a fixed sleep. */
function waitForState(what: string, ready: (state: EditorState) => boolean): Promise<EditorState> {
	return pollUntil(
		() => {
			if (!existsSync(STATE)) return undefined;
			const state = readState();
			return ready(state) ? state : undefined;
		},
		`waiting for ${what}`,
		{ intervalMs: 20 },
	);
}

const NOTE = "# 日記\n\nToday 😀 I wrote\nsome notes.\n";

describe("Obsidian plugin against a fake Obsidian", () => {
	let app: InstanceType<typeof fake.App>;
	let plugin: Plugin;
	/** The same object seen through the fake's test helpers. */
	let host: InstanceType<typeof fake.Plugin>;

	const load = async (adapter: object = new fake.FileSystemAdapter(VAULT)) => {
		app = new fake.App(adapter);
		// The fake stands in for Obsidian's App at this one boundary.
		plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
		host = plugin as unknown as InstanceType<typeof fake.Plugin>;
		await plugin.onload();
	};

	beforeEach(() => {
		fake.Notice.shown.length = 0;
		dom.selection = null;
	});
	afterEach(() => {
		host?.unload();
		assert.deepEqual(
			fake.Notice.shown.filter((m) => !m.includes("desktop")),
			[],
			"no warnings",
		);
	});

	test("on load (layout ready) it writes the vault: cwd = vault root, argv, no file", async () => {
		await load();
		const state = readState();
		assert.equal(state.pid, process.pid);
		assert.equal(state.app, "obsidian");
		assert.equal(state.cwd, VAULT);
		assert.deepEqual(state.argv, [VAULT]);
		assert.equal(state.active_buffer.file, null);
		assert.equal(statSync(join(root, "run/pi-ide")).mode & 0o777, 0o700);
		assert.equal(statSync(STATE).mode & 0o777, 0o600);
		assert.match(host.statusBarItems[0]?.attrs.get("aria-label") ?? "", new RegExp(`${process.pid}\\.json`));
	});

	test("file-open writes at once: vault-relative path, markdown, cursor as byte column", async () => {
		await load();
		// On disk as in the editor: not modified (v0.5: the editor's text against the file).
		mkdirSync(join(VAULT, "Journal"), { recursive: true });
		writeFileSync(join(VAULT, "Journal/日記.md"), NOTE);
		const view = new fake.MarkdownView(new fake.TFile("Journal/日記.md"), NOTE);
		view.editor.setSelection({ line: 2, ch: 8 });
		app.workspace.activeView = view;
		app.workspace.trigger("file-open", view.file);
		assert.deepEqual(readState().active_buffer, {
			file: "Journal/日記.md",
			name: "日記.md",
			language: "markdown",
			cursor: { line: 3, column: 11 },
			selection: null,
			modified: false,
			lines_total: 4,
			version: 1,
		});
	});

	test("a CodeMirror selection update writes the selection (debounced), kept while it stays", async () => {
		await load();
		const view = new fake.MarkdownView(new fake.TFile("a.md"), NOTE);
		app.workspace.activeView = view;
		app.workspace.trigger("active-leaf-change", null);
		view.editor.setSelection({ line: 2, ch: 6 }, { line: 3, ch: 4 });
		host.dispatchEditorUpdate({ selectionSet: true });
		const state = await waitForState("selection", (s) => s.active_buffer.selection !== null);
		const selection = state.active_buffer.selection;
		assert.deepEqual(selection?.start, { line: 3, column: 7 });
		assert.deepEqual(selection?.end, { line: 4, column: 4 });
		assert.equal(selection?.text, "Today 😀 I wrote\nsome notes.");
		assert.deepEqual(state.active_buffer.cursor, { line: 4, column: 5 });

		// Typing elsewhere (editor-change) keeps the selection's time. The edit adds a line after the
		// selection, so the state to wait for differs from the one before it.
		view.editor.replaceLine(3, `${view.editor.getLine(3)}\nappended`);
		app.workspace.trigger("editor-change", view.editor, view);
		const later = await waitForState(
			"edit",
			(s) => s.active_buffer.selection !== null && s.active_buffer.lines_total === 5,
		);
		assert.equal(later.active_buffer.selection?.selected_at, selection?.selected_at);

		view.editor.setSelection({ line: 0, ch: 1 });
		host.dispatchEditorUpdate({ selectionSet: true });
		await waitForState("selection cleared", (s) => s.active_buffer.selection === null);
	});

	test("reading mode: no cursor; the DOM selection inside the view is located in the source", async () => {
		await load();
		const view = new fake.MarkdownView(new fake.TFile("a.md"), NOTE);
		view.mode = "preview";
		app.workspace.activeView = view;
		app.workspace.trigger("layout-change");
		await waitForState("reading mode", (s) => s.active_buffer.file === "a.md" && s.active_buffer.cursor.line === null);

		const outside = { toString: () => "I wrote", anchorNode: {} };
		dom.selection = outside;
		dom.document.dispatchEvent(new Event("selectionchange"));
		const node = {};
		view.containerEl.children.add(node);
		dom.selection = { toString: () => "I wrote", anchorNode: node };
		dom.document.dispatchEvent(new Event("selectionchange"));
		const state = await waitForState("reading selection", (s) => s.active_buffer.selection !== null);
		assert.deepEqual(state.active_buffer.selection?.start, { line: 3, column: 12 });
		assert.equal(state.active_buffer.selection?.text, "I wrote");
	});

	test("a file without a Markdown view: path and language by extension, no cursor", async () => {
		await load();
		app.workspace.activeFile = new fake.TFile("Papers/paper.pdf");
		app.workspace.trigger("active-leaf-change", null);
		const buffer = readState().active_buffer;
		assert.equal(buffer.file, "Papers/paper.pdf");
		assert.equal(buffer.language, "pdf");
		assert.deepEqual(buffer.cursor, { line: null, column: null });
	});

	test("window focus rewrites even an unchanged state (the picker's recency)", async () => {
		await load();
		// Every write renames a new temp file over the state file: a new inode means a new write.
		const before = statSync(STATE).ino;
		app.workspace.trigger("file-open", null);
		assert.equal(statSync(STATE).ino, before, "an unchanged state is not rewritten");
		dom.window.dispatchEvent(new Event("focus"));
		assert.notEqual(statSync(STATE).ino, before);
	});

	test("the toggle command deletes the file, persists the choice, and writes again", async () => {
		await load();
		const toggle = host.commands.find((c) => c.id === "toggle-writing");
		assert.ok(toggle?.callback);
		await toggle.callback();
		assert.equal(existsSync(STATE), false);
		assert.deepEqual(host.data, { enabled: false, showFollow: false });
		app.workspace.trigger("file-open", null);
		assert.equal(existsSync(STATE), false, "nothing is written while off");
		await toggle.callback();
		assert.equal(existsSync(STATE), true);
		assert.deepEqual(host.data, { enabled: true, showFollow: false });
	});

	test("a saved 'off' is honoured on load", async () => {
		app = new fake.App(new fake.FileSystemAdapter(VAULT));
		plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
		host = plugin as unknown as InstanceType<typeof fake.Plugin>;
		host.data = { enabled: false };
		await plugin.onload();
		assert.equal(existsSync(STATE), false);
	});

	test("unload deletes the file and removes every listener", async () => {
		await load();
		assert.equal(existsSync(STATE), true);
		host.unload();
		assert.equal(existsSync(STATE), false);
		assert.equal(app.workspace.listenerCount("file-open"), 0);
		assert.equal(app.vault.listenerCount("rename"), 0);
		dom.window.dispatchEvent(new Event("focus"));
		assert.equal(existsSync(STATE), false);
	});

	test("without a file-system vault (mobile) it says so and writes nothing", async () => {
		await load(new fake.OtherAdapter());
		assert.equal(existsSync(STATE), false);
		assert.match(fake.Notice.shown[0] ?? "", /desktop/);
	});
});

describe("the built bundle (main.js, what Obsidian loads)", () => {
	test("esbuild builds main.js; loaded as CommonJS it writes on load and file-open, and cleans up on unload", () => {
		const dir = resolve(HERE, "../../../../editors/obsidian");
		const build = spawnSync("npm", ["run", "--silent", "build"], {
			cwd: dir,
			encoding: "utf8",
			env: { ...process.env, PATH: `${resolve(HERE, "../../../../node_modules/.bin")}:${process.env["PATH"] ?? ""}` },
		});
		assert.equal(build.status, 0, build.stderr);
		const bundle: unknown = createRequire(import.meta.url)(join(dir, "main.js"));
		assert.ok(typeof bundle === "object" && bundle !== null && "default" in bundle);
		const Bundled = bundle.default as typeof PiIdeContextPlugin;
		const app = new fake.App(new fake.FileSystemAdapter(VAULT));
		const plugin = new Bundled(app as never, { id: "pi-ide-context" } as never);
		const host = plugin as unknown as InstanceType<typeof fake.Plugin>;
		return (async () => {
			await plugin.onload();
			const view = new fake.MarkdownView(new fake.TFile("Inbox/todo.md"), "- [ ] ship it\n");
			view.editor.setSelection({ line: 0, ch: 6 }, { line: 0, ch: 13 });
			app.workspace.activeView = view;
			app.workspace.trigger("file-open", view.file);
			const state = readState();
			assert.equal(state.active_buffer.file, "Inbox/todo.md");
			assert.equal(state.active_buffer.selection?.text, "ship it");
			view.editor.setSelection({ line: 0, ch: 6 }, { line: 0, ch: 10 });
			host.dispatchEditorUpdate({ selectionSet: true });
			await waitForState("bundle: CodeMirror selection", (s) => s.active_buffer.selection?.text === "ship");
			host.unload();
			assert.equal(existsSync(STATE), false);
		})();
	});
});
