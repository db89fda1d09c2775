/**
 * The VS Code client inside a real VS Code (code-server 4.139.1 = VS Code 1.139, driven by Debian's
 * chromium): build and install the .vsix, open a workspace, open a file, select text, type, and check the
 * state file after each step; then run the real pi with the fake model in that workspace and check that the
 * model received the selection; finally turn writing off and on, and stop VS Code (the file goes away).
 * Needs `bash scripts/setup-vscode-test.sh` (run by `npm test`'s pretest). 40 s on an idle 2-core machine,
 * up to 70 s when other suites share the cores (most of it is VS Code starting).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import type { PiMessage } from "../../editors/shared/pi-message.ts";
import type { StateV03 } from "../../editors/shared/state.ts";
import { type EditorState, parseEditorState, SELECTION_FRESH_SECONDS } from "../../src/protocol/protocol.ts";
import { createPiEnv, MODEL_ARG, type PiEnv, PRODUCT_EXTENSION, runPrint } from "../helpers/pi-env.ts";
import {
	assertInstalled,
	type Browser,
	type CodeServer,
	gotoWindow,
	openBrowser,
	type Page,
	packageExtension,
	startCodeServer,
	waitFor,
	windowUrl,
} from "./code-server.ts";

const LINES = [
	'const greeting = "héllo 世界 😀";',
	"export function greet(name: string): string {",
	'\treturn greeting + ", " + name;',
	"}",
];
const unix = () => Math.floor(Date.now() / 1000);
type V03Buffer = StateV03["active_buffer"];
type V03State = Omit<EditorState, keyof StateV03> & StateV03;

/** A JSON document with one error (a missing comma after line 3), and two versions pi writes later. */
const BROKEN_JSON = '{\n  "name": "demo",\n  "count": 1\n  "extra": true\n}\n';
const FIXED_JSON = '{\n  "name": "demo",\n  "count": 2,\n  "extra": true\n}\n';
const PI_AGAIN_JSON = '{\n  "name": "demo",\n  "count": 3,\n  "extra": false\n}\n';

describe("VS Code client in a real VS Code", { timeout: 180_000 }, () => {
	let env: PiEnv;
	let root: string;
	let workspace: string;
	let server: CodeServer | undefined;
	let browser: Browser | undefined;
	let page: Page;
	let statePath = "";

	/**
	 * VS Code's state file (the first `<digits>.json` in the test's state dir; later steps add pi's message and
	 * another editor's file next to it), parsed, once it satisfies `ready`.
	 */
	const waitForState = (what: string, ready: (state: EditorState) => boolean, timeoutMs = 15_000) =>
		waitFor(
			`state file: ${what}`,
			() => {
				if (statePath === "") {
					const names = existsSync(env.stateDir) ? readdirSync(env.stateDir) : [];
					const name = names.find((n) => /^\d+\.json$/.test(n));
					if (name === undefined) return undefined;
					statePath = join(env.stateDir, name);
				}
				if (!existsSync(statePath)) return undefined;
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
		writeFileSync(join(workspace, "data.json"), BROKEN_JSON);
		writeFileSync(join(workspace, "other.json"), "{}\n");
		const vsix = packageExtension(join(root, "package"));
		server = await startCodeServer(root, vsix, workspace, { XDG_RUNTIME_DIR: env.runtimeDir, SHELL: "/bin/bash" });
		({ browser, page } = await openBrowser(join(root, "chromium")));
	});

	// Debugging aid: VSCODE_TEST_SHOTS=<dir> saves a screenshot after every step.
	afterEach(async (t) => {
		const shots = process.env["VSCODE_TEST_SHOTS"];
		if (shots && browser) await page.screenshot({ path: join(shots, `${t.name.split(".")[0]}.png`) }).catch(() => {});
	});

	after(async () => {
		await browser?.close();
		await server?.stop();
		await env?.cleanup();
		if (root) rmSync(root, { recursive: true, force: true });
	});

	test("1. the workspace opens: an unnamed buffer, cwd and argv = the folder, 0700 dir, 0600 file", async () => {
		await gotoWindow(page, windowUrl(server as CodeServer, workspace));
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
		const { version, diagnostics: _dated, ...buffer } = state.active_buffer as V03Buffer;
		assert.equal(version, 1, "v0.3: document.version of a freshly opened document");
		assert.deepEqual(buffer, {
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

	/** Write `<state dir>/pi-<pid>.json` as pi does (0600, exclusive temp file, rename); this process plays pi. */
	const writePiMessage = (fields: Pick<PiMessage, "editor_pid" | "seq" | "changed" | "last_turn">) => {
		const message: PiMessage = {
			protocol: "0.3",
			kind: "pi",
			pid: process.pid,
			cwd: workspace,
			timestamp: Date.now() / 1000,
			...fields,
		};
		const target = join(env.stateDir, `pi-${process.pid}.json`);
		writeFileSync(`${target}.tmp`, JSON.stringify(message), { mode: 0o600, flag: "wx" });
		renameSync(`${target}.tmp`, target);
	};
	const report = (state: V03State, file: string, seq: number): NonNullable<V03State["files"]>[number] | undefined =>
		state.files?.find((r) => r.file === file && r.seq === seq);
	const runCommand = async (title: string) => {
		await page.keyboard.press("F1");
		await page.locator(".quick-input-widget input").fill(`>${title}`);
		await page.waitForSelector(".quick-input-widget .monaco-list-row", { timeout: 10_000 });
		await page.keyboard.press("Enter");
	};
	const dataJson = () => join(workspace, "data.json");
	let editorPid = 0;

	test("8. an integrated terminal gets PI_IDE_EDITOR_PID = the pid of the window's state file", async () => {
		const state = await waitForState("written", () => true);
		editorPid = state.pid;
		const out = join(root, "terminal-env.txt");
		await runCommand("Terminal: Create New Terminal");
		await page.waitForSelector(".terminal-wrapper .xterm", { timeout: 30_000 });
		// The shell may still be starting: typed keys wait in the pty until it reads them.
		await page.keyboard.type(`echo "pid=$PI_IDE_EDITOR_PID" > ${out}`);
		await page.keyboard.press("Enter");
		const text = await waitFor("the terminal's echo", () =>
			existsSync(out) && readFileSync(out, "utf8").endsWith("\n") ? readFileSync(out, "utf8") : undefined,
		);
		assert.equal(text, `pid=${state.pid}\n`);
		assert.equal(statePath, join(env.stateDir, `${state.pid}.json`), "the pid names the state file");
	});

	test("8b. pi started in that terminal connects to this window, though another editor works in the project", async (t) => {
		// Another editor in the same directory (tier 0 like VS Code): a live process of ours with a state file.
		const other = spawn("sleep", ["600"], { stdio: "ignore" });
		t.after(() => other.kill("SIGKILL"));
		assert.ok(other.pid);
		const otherState = join(env.stateDir, `${other.pid}.json`);
		t.after(() => rmSync(otherState, { force: true }));
		writeFileSync(
			otherState,
			JSON.stringify({
				pid: other.pid,
				cwd: workspace,
				timestamp: unix(),
				app: "nvim",
				argv: [],
				active_buffer: {
					file: join(workspace, "other.json"),
					name: "other.json",
					language: "json",
					cursor: { line: 1, column: 1 },
					selection: null,
					modified: false,
					lines_total: 1,
				},
			}),
			{ mode: 0o600 },
		);
		const sentFiles = () => {
			const sent = JSON.stringify(env.model.requests.at(-1)?.body ?? null);
			return [join(workspace, "src/hello.ts"), join(workspace, "other.json")].filter((f) => sent.includes(f));
		};
		// Control: the same pi, started outside VS Code, naming the other editor, gets the other editor's file.
		const control = await runPrint(env, ["Which file?"], [], {
			cwd: workspace,
			env: { PI_IDE_EDITOR_PID: String(other.pid) },
			timeoutMs: 30_000,
		});
		assert.equal(control.code, 0, control.stderr);
		assert.deepEqual(sentFiles(), [join(workspace, "other.json")]);

		// pi in VS Code's terminal: the pid comes from the terminal's environment, nothing else.
		const script = join(root, "run-pi.sh");
		const done = join(root, "run-pi.code");
		const exports = Object.entries(env.env).map(([k, v]) => `export ${k}=${JSON.stringify(v)}`);
		const args = ["-p", "--offline", "--no-session", "-e", PRODUCT_EXTENSION, "--model", MODEL_ARG, "Which file?"];
		writeFileSync(
			script,
			[
				...exports,
				`cd ${JSON.stringify(workspace)}`,
				`pi ${args.map((a) => JSON.stringify(a)).join(" ")} > ${JSON.stringify(join(root, "run-pi.out"))} 2>&1`,
				`echo $? > ${JSON.stringify(done)}`,
				"",
			].join("\n"),
		);
		const requests = env.model.requests.length;
		await page.keyboard.type(`bash ${script}`);
		await page.keyboard.press("Enter");
		const code = await waitFor(
			"pi in the terminal",
			() => (existsSync(done) && readFileSync(done, "utf8").endsWith("\n") ? readFileSync(done, "utf8") : undefined),
			60_000,
		);
		assert.equal(code, "0\n", readFileSync(join(root, "run-pi.out"), "utf8"));
		assert.ok(env.model.requests.length > requests, "pi asked the model");
		assert.deepEqual(sentFiles(), [join(workspace, "src/hello.ts")], "VS Code's file, not the other editor's");
	});

	test("9. a JSON file with an error: its diagnostic reaches the state file, dated with the document version", async () => {
		await page.keyboard.press("Control+P");
		await page.locator(".quick-input-widget input").fill("data.json");
		// Wait for the search's row: the list first shows recently opened files (hello.ts).
		await page
			.locator(".quick-input-widget .monaco-list-row", { hasText: "data.json" })
			.first()
			.waitFor({ timeout: 10_000 });
		await page.keyboard.press("Enter");
		const state = (await waitForState("data.json diagnostics", (s) => {
			const buffer = s.active_buffer as V03Buffer;
			return buffer.file === dataJson() && (buffer.diagnostics?.total ?? 0) > 0;
		})) as V03State;
		const buffer = state.active_buffer;
		assert.equal(state.protocol, "0.3");
		assert.equal(buffer.language, "json");
		assert.equal(buffer.modified, false);
		assert.ok(buffer.version !== undefined && buffer.version >= 1);
		assert.equal(buffer.diagnostics?.version, buffer.version, "current for the document version");
		assert.equal(buffer.diagnostics?.total, 1);
		const [item] = buffer.diagnostics?.items ?? [];
		assert.equal(item?.severity, "error");
		assert.deepEqual([item?.line, item?.column], [4, 3], "the key after the missing comma");
		assert.match(item?.message ?? "", /comma/i);
	});

	test("10. pi writes the clean document: VS Code reloads it, reported `reloaded` with diagnostics of the new version", async () => {
		const before = (await waitForState("data.json", (s) => s.active_buffer.file === dataJson())) as V03State;
		const oldVersion = before.active_buffer.version ?? 0;
		writeFileSync(dataJson(), FIXED_JSON); // pi's write tool, then its message
		writePiMessage({
			editor_pid: editorPid,
			seq: 1,
			changed: [{ file: dataJson(), seq: 1, tool: "write" }],
			last_turn: [dataJson()],
		});
		const state = (await waitForState("reloaded report", (s) => {
			const r = report(s as V03State, dataJson(), 1);
			return r?.status === "reloaded" && (r.diagnostics?.version ?? 0) >= (r.version ?? Number.POSITIVE_INFINITY);
		})) as V03State;
		const reloaded = report(state, dataJson(), 1);
		assert.ok(reloaded?.version !== null && reloaded?.version !== undefined && reloaded.version > oldVersion);
		assert.equal(reloaded.modified, false);
		assert.equal(reloaded.diagnostics_expected, true);
		assert.deepEqual(reloaded.diagnostics?.items, [], "the fixed file has no error");
		assert.deepEqual(state.pi, { pid: process.pid, seq: 1 });
		assert.equal(state.active_buffer.modified, false);
		await page.locator(".editor-instance .view-line", { hasText: '"count": 2,' }).first().waitFor({ timeout: 10_000 });
		await page.waitForSelector('.statusbar-item:has(.codicon-plug):has-text("pi 1")', { timeout: 10_000 });
	});

	test("11. pi writes a document with unsaved changes: the buffer is kept, one warning names the file, Compare shows a diff", async () => {
		await page.locator(".editor-instance .view-line").first().click();
		await page.keyboard.press("Control+End");
		await page.keyboard.type("\n");
		await waitForState("dirty", (s) => s.active_buffer.file === dataJson() && s.active_buffer.modified);
		writeFileSync(dataJson(), PI_AGAIN_JSON);
		writePiMessage({
			editor_pid: editorPid,
			seq: 2,
			changed: [{ file: dataJson(), seq: 2, tool: "edit" }],
			last_turn: [dataJson()],
		});
		const state = (await waitForState(
			"modified report",
			(s) => report(s as V03State, dataJson(), 2) !== undefined,
		)) as V03State;
		const kept = report(state, dataJson(), 2);
		assert.equal(kept?.status, "modified");
		assert.equal(kept?.modified, true);
		assert.deepEqual(state.pi, { pid: process.pid, seq: 2 });
		const toast = page.locator(".notification-toast", { hasText: "pi changed data.json on disk" });
		await toast.waitFor({ timeout: 10_000 });
		assert.equal(
			await page.locator(".editor-instance .view-line", { hasText: '"count": 3,' }).count(),
			0,
			"not reloaded",
		);
		assert.equal(readFileSync(dataJson(), "utf8"), PI_AGAIN_JSON, "pi's file untouched");
		await toast.getByRole("button", { name: "Compare" }).click();
		await page.waitForSelector(".monaco-diff-editor", { timeout: 10_000 });
		await page
			.locator(".monaco-diff-editor .view-line", { hasText: '"count": 3,' })
			.first()
			.waitFor({ timeout: 10_000 });
	});

	test("12. a file not open here is `not-open`; when pi names another editor the status bar drops the connection", async () => {
		const other = join(workspace, "other.json");
		writePiMessage({
			editor_pid: editorPid,
			seq: 3,
			changed: [{ file: other, seq: 3, tool: "write" }],
			last_turn: [other],
		});
		const state = (await waitForState(
			"not-open report",
			(s) => report(s as V03State, other, 3) !== undefined,
		)) as V03State;
		assert.deepEqual(report(state, other, 3), {
			file: other,
			seq: 3,
			status: "not-open",
			version: null,
			modified: false,
			diagnostics_expected: false,
			diagnostics: null,
			pi_pid: process.pid,
		});
		writePiMessage({ editor_pid: editorPid + 1, seq: 4, changed: [], last_turn: [] });
		await waitFor("no connected pi", async () =>
			(await page.locator(".statusbar-item .codicon-plug").count()) === 0 ? true : undefined,
		);
		rmSync(join(env.stateDir, `pi-${process.pid}.json`));
	});

	test("13. stopping VS Code deactivates the extension: the file is deleted", async () => {
		await browser?.close();
		browser = undefined;
		await server?.stop();
		await waitFor("state file deleted on shutdown", () => (existsSync(statePath) ? undefined : true), 10_000);
	});
});
