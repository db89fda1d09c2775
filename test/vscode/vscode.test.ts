/**
 * The VS Code client inside a real VS Code (code-server 4.139.1 = VS Code 1.139, driven by Debian's
 * chromium): build and install the .vsix, open a workspace, open a file, select text, type, and check the
 * state file after each step; then run the real pi with the fake model in that workspace and check that the
 * model received the selection; finally turn writing off and on, and stop VS Code (the file goes away).
 * Needs `bash scripts/setup-vscode-test.sh` (run by `npm test`'s pretest). 40 s on an idle 2-core machine,
 * up to 70 s when other suites share the cores (most of it is VS Code starting).
 */
import assert from "node:assert/strict";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type EditorState, parseEditorState, SELECTION_FRESH_SECONDS } from "../../src/protocol.ts";
import { createPiEnv, type PiEnv, runPrint } from "../helpers/pi-env.ts";
import {
	assertInstalled,
	type Browser,
	type CodeServer,
	openBrowser,
	type Page,
	packageExtension,
	startCodeServer,
	waitFor,
} from "./code-server.ts";

const LINES = [
	'const greeting = "héllo 世界 😀";',
	"export function greet(name: string): string {",
	'\treturn greeting + ", " + name;',
	"}",
];
const unix = () => Math.floor(Date.now() / 1000);

describe("VS Code client in a real VS Code", { timeout: 180_000 }, () => {
	let env: PiEnv;
	let root: string;
	let workspace: string;
	let server: CodeServer | undefined;
	let browser: Browser | undefined;
	let page: Page;
	let statePath = "";

	/** The single state file in the test's state dir, parsed, once it satisfies `ready`. */
	const waitForState = (what: string, ready: (state: EditorState) => boolean, timeoutMs = 15_000) =>
		waitFor(
			`state file: ${what}`,
			() => {
				const names = existsSync(env.stateDir) ? readdirSync(env.stateDir) : [];
				const name = names.find((n) => n.endsWith(".json"));
				if (name === undefined) return undefined;
				statePath = join(env.stateDir, name);
				const parsed = parseEditorState(readFileSync(statePath, "utf8"));
				assert.ok(parsed.ok, JSON.stringify(parsed));
				return ready(parsed.state) ? parsed.state : undefined;
			},
			timeoutMs,
		);

	before(async () => {
		assertInstalled();
		env = await createPiEnv({ createStateDir: false });
		root = mkdtempSync(join(tmpdir(), "pi-ide-vscode-"));
		workspace = env.workDir;
		mkdirSync(join(workspace, "src"));
		writeFileSync(join(workspace, "src/hello.ts"), `${LINES.join("\n")}\n`);
		const vsix = packageExtension();
		server = await startCodeServer(root, vsix, workspace, { XDG_RUNTIME_DIR: env.runtimeDir });
		({ browser, page } = await openBrowser(join(root, "chromium")));
	});

	after(async () => {
		await browser?.close();
		await server?.stop();
		await env?.cleanup();
		if (root) rmSync(root, { recursive: true, force: true });
	});

	test("1. the workspace opens: an unnamed buffer, cwd and argv = the folder, 0700 dir, 0600 file", async () => {
		await page.goto(`${server?.url}/?folder=${encodeURIComponent(workspace)}`);
		// Generous waits: under `npm test` this shares 2 cores with the other suites.
		await page.waitForSelector(".explorer-folders-view .monaco-list-row", { timeout: 60_000 });
		const state = await waitForState("first write", () => true, 60_000);
		assert.equal(state.app, "vscode");
		assert.equal(state.cwd, workspace);
		assert.deepEqual(state.argv, [workspace]);
		assert.equal(state.active_buffer.file, null);
		assert.deepEqual(state.active_buffer.cursor, { line: null, column: null });
		assert.equal(statePath, join(env.stateDir, `${state.pid}.json`));
		assert.equal(statSync(env.stateDir).mode & 0o777, 0o700);
		assert.equal(statSync(statePath).mode & 0o777, 0o600);
		// The pid is the extension host's: alive, and not code-server itself.
		assert.notEqual(state.pid, server?.child.pid);
		assert.match(readFileSync(`/proc/${state.pid}/cmdline`, "utf8"), /extensionHost/);
	});

	test("2. opening a file reports it: absolute path, languageId, line 1 column 1, unmodified", async () => {
		await page.keyboard.press("Control+P");
		await page.locator(".quick-input-widget input").fill("hello.ts");
		await page.waitForSelector(".quick-input-widget .monaco-list-row", { timeout: 10_000 });
		await page.keyboard.press("Enter");
		const state = await waitForState("hello.ts active", (s) => s.active_buffer.file !== null);
		assert.deepEqual(state.active_buffer, {
			file: join(workspace, "src/hello.ts"),
			name: "hello.ts",
			language: "typescript",
			cursor: { line: 1, column: 1 },
			selection: null,
			modified: false,
			lines_total: 4,
		});
	});

	test("3. a single-line selection: exact text, UTF-8 byte columns, fresh selected_at", async () => {
		const before = unix();
		// Quick open left the focus in the editor. Go to line 1, column 25 (VS Code's columns are 1-based UTF-16): just before 世.
		await page.keyboard.press("Control+G");
		await page.locator(".quick-input-widget input").fill(":1:25");
		await page.keyboard.press("Enter");
		for (let i = 0; i < 4; i++) await page.keyboard.press("Shift+ArrowRight"); // 世, 界, space, 😀
		const state = await waitForState("selection", (s) => s.active_buffer.selection?.text === "世界 😀");
		const selection = state.active_buffer.selection;
		assert.ok(selection);
		// `const greeting = "héllo ` is 24 UTF-16 units but 25 bytes (é is 2).
		assert.deepEqual(selection.start, { line: 1, column: 26 });
		assert.deepEqual(selection.end, { line: 1, column: 36 }, "the emoji's last byte");
		assert.deepEqual(state.active_buffer.cursor, { line: 1, column: 37 }, "after the 4-byte emoji");
		assert.ok(selection.selected_at !== null && selection.selected_at >= before && selection.selected_at <= unix());
	});

	test("4. typing: modified, the selection gone, the cursor at the new end of line", async () => {
		await page.keyboard.press("End");
		await page.keyboard.type(" // ok");
		const state = await waitForState("typed", (s) => s.active_buffer.modified && s.active_buffer.cursor.column === 45);
		assert.equal(state.active_buffer.selection, null);
		assert.deepEqual(state.active_buffer.cursor, { line: 1, column: 45 });
		assert.equal(state.active_buffer.lines_total, 4);
	});

	test("5. a multi-line selection reports full lines", async () => {
		await page.keyboard.press("ArrowDown");
		await page.keyboard.press("Home");
		for (let i = 0; i < 7; i++) await page.keyboard.press("ArrowRight");
		await page.keyboard.press("Shift+ArrowDown");
		const state = await waitForState("multi-line selection", (s) => s.active_buffer.selection?.start.line === 2);
		assert.deepEqual(state.active_buffer.selection?.start, { line: 2, column: 8 });
		// Down keeps the visual column: the tab is 4 wide, so the head lands after "\tre" (UTF-16 offset 4).
		assert.deepEqual(state.active_buffer.selection?.end, { line: 3, column: 4 }, "the last selected char, 'e'");
		assert.deepEqual(state.active_buffer.cursor, { line: 3, column: 5 });
		assert.equal(state.active_buffer.selection?.text, `${LINES[1]}\n${LINES[2]}`);
	});

	test("6. the real pi in that workspace sends the fresh selection to the model", async () => {
		const state = await waitForState("selection still there", (s) => s.active_buffer.selection !== null);
		const selectedAt = state.active_buffer.selection?.selected_at ?? 0;
		assert.ok(unix() - selectedAt <= SELECTION_FRESH_SECONDS, "still fresh");
		const result = await runPrint(env, ["What does the selected code do?"], [], { cwd: workspace, timeoutMs: 30_000 });
		assert.equal(result.code, 0, result.stderr);
		assert.equal(result.stdout.trim(), "FAKE-REPLY-OK");
		const sent = JSON.stringify(env.model.requests.map((r) => r.body));
		for (const line of [LINES[1], LINES[2]]) {
			assert.ok(sent.includes(JSON.stringify(line).slice(1, -1)), `the model received ${JSON.stringify(line)}`);
		}
		assert.ok(sent.includes(join(workspace, "src/hello.ts")), "the model received the file path");
	});

	test("7. the toggle deletes the file; toggling back rewrites it, the untouched selection keeping its time", async () => {
		const before = await waitForState("selection from step 5", (s) => s.active_buffer.selection !== null);
		const runToggle = async () => {
			await page.keyboard.press("F1");
			await page.locator(".quick-input-widget input").fill(">pi IDE context: Enable/disable writing");
			await page.waitForSelector(".quick-input-widget .monaco-list-row", { timeout: 10_000 });
			await page.keyboard.press("Enter");
		};
		await runToggle();
		await waitFor("state file deleted", () => (existsSync(statePath) ? undefined : true));
		await runToggle();
		const state = await waitForState("written again", () => true);
		assert.equal(state.active_buffer.file, join(workspace, "src/hello.ts"));
		assert.deepEqual(state.active_buffer.selection, before.active_buffer.selection, "same selection, same selected_at");
		// The pi run of step 6 lies between: this write is seconds after the selection was made.
		assert.ok(state.timestamp > (state.active_buffer.selection?.selected_at ?? Number.POSITIVE_INFINITY));
	});

	test("8. stopping VS Code deactivates the extension: the file is deleted", async () => {
		await browser?.close();
		browser = undefined;
		await server?.stop();
		await waitFor("state file deleted on shutdown", () => (existsSync(statePath) ? undefined : true), 10_000);
	});
});
