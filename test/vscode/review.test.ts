/**
 * Review and undo of pi's changes in a real VS Code (code-server, driven by Debian's chromium), protocol v0.4: a
 * real pi in RPC mode whose fake model edits a file over two runs. VS Code marks the newest run's hunk on the
 * right lines, its own quick diff gutter shows pi's hunk against pi's baseline, "Compare with pi's baseline" opens
 * a diff, "Show pi's changes" lists the hunk; reverting it changes the document and not the disk, Undo brings
 * pi's version back, the next prompt tells the model, the `reviewMarks` setting hides the marks, and a hunk the
 * user edited is refused. Then bad change sets (malformed, oversized, group-readable, a symlink, another pi's)
 * are ignored with one line in the output channel and no popup, a connected-elsewhere or dead pi's is not read,
 * and a file revert works beside unsaved text. Then pi's optional approval (`ideContext.approve: "edits"`), answered
 * in VS Code: a notification per request, "Show change" a read-only diff of the file against the proposal (nothing
 * written), Accept lets the edit run and Reject leaves the file as it is, and the model is told which, in VS Code's
 * name; the Accept command answers only the request the user saw. One code-server for the file (about 100 s on an idle machine).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
	existsSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	renameSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import type { PiMessage } from "../../editors/shared/pi-message.ts";
import { buildRequest, DIALOG_ACCEPT, DIALOG_REJECT } from "../../src/link/approval.ts";
import { type EditorState, parseEditorState } from "../../src/protocol/protocol.ts";
import { DEFAULT_REPLY, type FakeReply, type RecordedRequest } from "../helpers/fake-llm.ts";
import { createPiEnv, type PiEnv } from "../helpers/pi-env.ts";
import { type RpcPi, startRpc, type UiRequest } from "../helpers/rpc.ts";

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
} from "./code-server.ts";

/** pi's pid namespace, ours: the editor echoes it as `pi_ns` (PROTOCOL.md v0.5, pi's identity). */
const PI_NS = readlinkSync("/proc/self/ns/pid");

const ORIGINAL = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
/** What the model's two runs leave: line 2 changed in the first, line 9 changed and a line added in the second. */
const PI_LINES = [
	...ORIGINAL.slice(0, 1),
	"line 2, by pi",
	...ORIGINAL.slice(2, 8),
	"line 9, by pi",
	"and one more",
	...ORIGINAL.slice(9),
];

const requestText = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? {});
/** The tool results the model read in a request (its `tool` messages), as text. */
const toolResults = (request: RecordedRequest | undefined): string => {
	const messages = (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
	return JSON.stringify(messages.filter((m) => m.role === "tool").map((m) => m.content));
};
type Reverted = { pi_pid: number; run: number; id: string; file: string; line: number; lines: number };

describe("VS Code: review and undo pi's changes (v0.4)", { timeout: 240_000 }, () => {
	let env: PiEnv;
	let root: string;
	let server: CodeServer | undefined;
	let browser: Browser | undefined;
	let page: Page;
	let rpc: RpcPi | undefined;
	let statePath = "";
	let file = "";

	const readState = (): (EditorState & { reverted?: Reverted[] }) | undefined => {
		if (statePath === "") {
			const name = (existsSync(env.stateDir) ? readdirSync(env.stateDir) : []).find((n) => /^\d+\.json$/.test(n));
			if (name === undefined) return undefined;
			statePath = join(env.stateDir, name);
		}
		if (!existsSync(statePath)) return undefined;
		const parsed = parseEditorState(readFileSync(statePath, "utf8"));
		assert.ok(parsed.ok, JSON.stringify(parsed));
		return parsed.state;
	};
	const waitForState = (what: string, ready: (s: EditorState & { reverted?: Reverted[] }) => boolean, ms = 20_000) =>
		waitFor(
			`state file: ${what}`,
			() => {
				const state = readState();
				return state && ready(state) ? state : undefined;
			},
			ms,
		);

	const runCommand = async (title: string) => {
		// A busy window may drop the key: press again until the palette is up.
		const input = page.locator(".quick-input-widget input");
		for (let attempt = 1; ; attempt++) {
			await page.keyboard.press("F1");
			const shown = await input
				.waitFor({ state: "visible", timeout: 5_000 })
				.then(() => true)
				.catch(() => false);
			if (shown) break;
			if (attempt === 4) throw new Error(`the command palette did not open for ${title}`);
		}
		await input.fill(`>${title}`);
		await page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 10_000 });
		await page.keyboard.press("Enter");
	};
	/**
	 * Browser-side helpers (plain JS: this project's TypeScript has no DOM types). `editorLines(selector)`: the
	 * text of an editor's rendered lines, top to bottom (the file is short: all of it). `marginLines(selector)`:
	 * the line numbers (1-based) of the active editor whose row holds an element matching `selector`, in the
	 * margin (VS Code's quick diff gutter) or in the text's overlays (decorations), matched by the row's top.
	 */
	const BROWSER_HELPERS = `({
		editorLines(selector) {
			const editor = document.querySelector(selector);
			// Lines of the text only: an inline diff shows removed lines in view zones between them.
			const rows = [...(editor ? editor.querySelectorAll(".view-lines .view-line") : [])].filter(
				(r) => !r.closest(".view-zones"),
			);
			return rows
				.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
				.map((r) => (r.textContent || "").replace(/\u00a0/g, " "));
		},
		marginLines(selector) {
			const editor = document.querySelector(".editor-instance .monaco-editor");
			if (!editor) return [];
			const numbers = new Map();
			for (const row of editor.querySelectorAll(".margin-view-overlays > div")) {
				const label = row.querySelector(".line-numbers");
				if (label) numbers.set(row.style.top, Number(label.textContent.trim()));
			}
			const lines = new Set();
			for (const mark of editor.querySelectorAll(selector)) {
				const row = mark.closest(".margin-view-overlays > div, .view-overlays > div");
				if (row && numbers.has(row.style.top)) lines.add(numbers.get(row.style.top));
			}
			return [...lines].sort((a, b) => a - b);
		},
	})`;
	const inBrowser = <T>(helper: "editorLines" | "marginLines", selector: string): Promise<T> =>
		page.evaluate(`${BROWSER_HELPERS}.${helper}(${JSON.stringify(selector)})`) as Promise<T>;
	const editorLines = (selector = ".editor-instance .monaco-editor") => inBrowser<string[]>("editorLines", selector);
	const marginLines = (selector: string) => inBrowser<number[]>("marginLines", selector);
	const goToLine = async (line: number) => {
		await page.keyboard.press("Control+G");
		await page.locator(".quick-input-widget input").fill(`:${line}`);
		await page.keyboard.press("Enter");
	};
	const toasts = () => page.locator(".notification-toast").allTextContents();
	/** The extension's output channel as VS Code logs it (every channel is also a file under the user data dir). */
	const outputLog = () => {
		const found: string[] = [];
		const walk = (dir: string) => {
			for (const entry of readdirSync(dir, { withFileTypes: true })) {
				const path = join(dir, entry.name);
				if (entry.isDirectory()) walk(path);
				else if (entry.name.endsWith("pi IDE context.log")) found.push(readFileSync(path, "utf8"));
			}
		};
		walk(join(root, "ud/logs"));
		return found.join("");
	};

	before(async () => {
		assertInstalled();
		env = await createPiEnv({ createStateDir: false });
		root = mkdtempSync(join(tmpdir(), "pi-ide-vscode-review-"));
		file = join(env.workDir, "notes.txt");
		writeFileSync(file, `${ORIGINAL.join("\n")}\n`);
		server = await startCodeServer(root, packageExtension(join(root, "package")), env.workDir, {
			XDG_RUNTIME_DIR: env.runtimeDir,
		});
		({ browser, page } = await openBrowser(join(root, "chromium")));
	});

	afterEach(async (t) => {
		const shots = process.env["VSCODE_TEST_SHOTS"];
		if (shots && browser)
			await page.screenshot({ path: join(shots, `review-${t.name.split(".")[0]}.png`) }).catch(() => {});
	});

	after(async () => {
		rpc?.close();
		await browser?.close();
		await server?.stop();
		await env?.cleanup();
		// code-server's children may still be writing their logs as it exits: retry.
		if (root) rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
	});

	test("1. notes.txt open in VS Code; pi's model edits it over two runs", async () => {
		await gotoWindow(page, `${server?.url}/?folder=${encodeURIComponent(env.workDir)}`);
		// Generous waits: this shares 2 cores with other suites. The explorer's row opens the file (no search).
		await waitForState("first write: the extension is up", () => true, 90_000);
		await page
			.locator(".explorer-folders-view .monaco-list-row", { hasText: "notes.txt" })
			.first()
			.dblclick({ timeout: 60_000 });
		await waitForState("notes.txt active", (s) => s.active_buffer.file === file, 60_000);

		rpc = await startRpc(env);
		const edits: Record<number, { oldText: string; newText: string }> = {
			0: { oldText: "line 2\n", newText: "line 2, by pi\n" },
			2: { oldText: "line 9\n", newText: "line 9, by pi\nand one more\n" },
		};
		env.model.respond = (_request, index): FakeReply => {
			const edit = edits[index];
			return edit
				? { toolCalls: [{ name: "edit", arguments: { path: file, edits: [edit] } }] }
				: { text: DEFAULT_REPLY };
		};
		await rpc.prompt("first run: change line 2");
		await rpc.prompt("second run: change line 9");
		assert.equal(env.model.requests.length, 4, "two runs of a tool call and an answer");
		assert.equal(readFileSync(file, "utf8"), `${PI_LINES.join("\n")}\n`);
		await waitFor("VS Code reloads pi's version", async () => {
			const lines = await editorLines();
			return lines.includes("and one more") ? true : undefined;
		});
	});

	const OURS = '.view-overlays [class*="TextEditorDecorationType"]';
	const QUICK_DIFF = ".margin-view-overlays .dirty-diff-glyph";
	const linesMarked = (selector: string, expected: number[]) =>
		waitFor(`${selector} on lines ${expected.join(", ")}`, async () => {
			const lines = await marginLines(selector);
			return JSON.stringify(lines) === JSON.stringify(expected) ? lines : undefined;
		});

	test("2. the newest run's hunk is marked on lines 9-10, and VS Code's quick diff shows it against pi's baseline", async () => {
		await linesMarked(OURS, [9, 10]);
		await linesMarked(QUICK_DIFF, [9, 10]);
		assert.equal(await page.locator(".margin-view-overlays .dirty-diff-modified").count(), 2, "a changed hunk");
	});

	test("3. Compare with pi's baseline: a diff of the run's baseline and the live document; nothing saved", async () => {
		await runCommand("pi: Compare with pi's baseline");
		await page.waitForSelector(".monaco-diff-editor", { timeout: 10_000 });
		const original = await waitFor("the baseline side", async () => {
			const lines = await editorLines(".monaco-diff-editor .editor.original");
			return lines.length >= 12 ? lines : undefined;
		});
		// The second run's baseline already has the first run's change.
		assert.deepEqual(original.slice(0, 12), [ORIGINAL[0], "line 2, by pi", ...ORIGINAL.slice(2)]);
		await page.keyboard.press("Control+W");
		await page.waitForSelector(".monaco-diff-editor", { state: "detached", timeout: 10_000 });
		assert.equal(readFileSync(file, "utf8"), `${PI_LINES.join("\n")}\n`);
	});

	test("4. Show pi's changes lists the hunk; choosing it puts the cursor on its first line", async () => {
		await runCommand("pi: Show pi's changes");
		const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: "notes.txt: lines 9-10" });
		await row.first().waitFor({ timeout: 10_000 });
		assert.match((await row.first().textContent()) ?? "", /\+2 -1\s+line 9, by pi/);
		await page.keyboard.press("Enter");
		await waitForState("cursor on line 9", (s) => s.active_buffer.cursor.line === 9);
	});

	test("5. revert the hunk under the cursor: the document changes, the disk does not, the state names it", async () => {
		await runCommand("pi: Revert pi's change under the cursor");
		await waitFor("the baseline's line 9 back", async () => {
			const lines = await editorLines();
			return JSON.stringify(lines.slice(0, 12)) === JSON.stringify([ORIGINAL[0], "line 2, by pi", ...ORIGINAL.slice(2)])
				? true
				: undefined;
		});
		assert.equal(readFileSync(file, "utf8"), `${PI_LINES.join("\n")}\n`, "the disk keeps pi's version");
		const state = await waitForState("reverted", (s) => (s.reverted ?? []).length === 1);
		const [entry] = state.reverted ?? [];
		assert.equal(state.active_buffer.modified, true, "unsaved: the user saves when they choose");
		assert.deepEqual(
			{ ...entry, id: undefined, run: undefined },
			{
				pi_pid: rpc?.child.pid,
				pi_ns: PI_NS,
				id: undefined,
				run: undefined,
				file,
				line: 9,
				lines: 2,
			},
		);
		assert.match(entry?.id ?? "", /^h[0-9a-f]{10}$/);
		await linesMarked(OURS, []);
		await page.locator(".notification-toast", { hasText: "Reverted one of pi's changes" }).waitFor({ timeout: 10_000 });
	});

	test("6. the next prompt tells the model, once", async () => {
		await rpc?.prompt("third prompt: what now?");
		const told = requestText(env.model.requests.at(-1));
		assert.match(told, /the user reverted one of your changes in their editor/);
		assert.match(told, /notes\.txt:9-10/);
		await rpc?.prompt("fourth prompt: and now?");
		assert.doesNotMatch(
			requestText(env.model.requests.at(-1)).split("fourth prompt")[1] ?? "",
			/reverted/,
			"told once",
		);
	});

	test("7. one Undo brings pi's version back, marked again, and no longer listed as a revert; Redo lists it again", async () => {
		await page.locator(".editor-instance .view-line").first().click();
		await page.keyboard.press("Control+Z");
		await waitFor("pi's lines back", async () => {
			const lines = await editorLines();
			return JSON.stringify(lines.slice(0, 13)) === JSON.stringify(PI_LINES) ? true : undefined;
		});
		await linesMarked(OURS, [9, 10]);
		await waitForState("the undone revert leaves the state file", (s) => s.reverted === undefined);
		// Redo: the revert holds again and is listed; undone again for the next tests.
		await page.keyboard.press("Control+Shift+Z");
		await waitForState("the redone revert is listed", (s) => s.reverted?.length === 1);
		await page.keyboard.press("Control+Z");
		await waitForState("undone again", (s) => s.reverted === undefined);
		await linesMarked(OURS, [9, 10]);
	});

	test("7b. the reviewMarks setting off hides the marks, VS Code's quick diff stays; on brings them back", async () => {
		// As a user does it: the Settings editor, searched for the setting, its checkbox clicked.
		// The Settings editor writes a change a moment after the click, and a change pending when it closes can be
		// lost: it stays open until the marks (drawn in the editor behind it) show the setting took effect.
		const flip = async (on: boolean, marked: number[]) => {
			await runCommand("Preferences: Open User Settings");
			const settings = page.locator(".settings-editor");
			await settings.waitFor({ timeout: 20_000 });
			// The search box has the focus (a small editor of its own, not an <input>).
			await page.keyboard.type("piIdeContext.reviewMarks");
			const item = page.locator(".settings-editor .setting-item-bool", { hasText: "Review Marks" });
			// The list is rebuilt while the search settles, and a click on a row being replaced is lost: click again
			// (only while the box still shows the other state) until it shows `on`.
			const checkbox = item.locator(".setting-value-checkbox").first();
			for (let attempt = 1; ; attempt++) {
				if ((await checkbox.getAttribute("aria-checked", { timeout: 20_000 })) !== String(on))
					await checkbox.click({ timeout: 20_000 });
				const flipped = await item
					.locator(`.setting-value-checkbox[aria-checked="${on}"]`)
					.first()
					.waitFor({ timeout: 5_000 })
					.then(() => true)
					.catch(() => false);
				if (flipped) break;
				if (attempt === 4) throw new Error(`the Review Marks checkbox did not turn ${on}`);
			}
			await linesMarked(OURS, marked);
			// Closed as an editor (it has the focus); once, then waited for: a second press would close notes.txt.
			await item.locator(".setting-value-checkbox").first().focus();
			await page.keyboard.press("Control+W");
			await settings.waitFor({ state: "hidden", timeout: 20_000 });
		};
		await flip(false, []);
		assert.deepEqual(await marginLines(QUICK_DIFF), [9, 10], "VS Code's quick diff stays");
		await flip(true, [9, 10]);
		await linesMarked(OURS, [9, 10]);
	});

	test("7c. reverted again, then File: Revert File: the document is its file's again, the revert no longer listed", async () => {
		await goToLine(9);
		await runCommand("pi: Revert pi's change under the cursor");
		await waitForState("reverted again", (s) => (s.reverted ?? []).length === 1);
		await runCommand("File: Revert File");
		await waitFor("pi's lines back", async () =>
			JSON.stringify((await editorLines()).slice(0, 13)) === JSON.stringify(PI_LINES) ? true : undefined,
		);
		await waitForState("the revert thrown away leaves the state file", (s) => s.reverted === undefined);
		await linesMarked(OURS, [9, 10]);
	});

	test("8. a hunk the user edited afterwards is refused, the text left as the user made it", async () => {
		await goToLine(9);
		await page.keyboard.press("End");
		await page.keyboard.type("X");
		await linesMarked(OURS, []);
		await runCommand("pi: Revert pi's change under the cursor");
		await page
			.locator(".notification-toast", { hasText: "line 9: you changed these lines after pi's edit; not reverted" })
			.waitFor({ timeout: 10_000 });
		const lines = await editorLines();
		assert.deepEqual(lines.slice(8, 10), ["line 9, by piX", "and one more"]);
		assert.equal(readFileSync(file, "utf8"), `${PI_LINES.join("\n")}\n`);
	});

	test("9. bad change sets are ignored with one line in the output channel, no popup; only a connected pi's is read", async (t) => {
		const editorPid = readState()?.pid ?? 0;
		const me = process.pid;
		let seq = 0;
		/** This process plays a second pi: its message, written as pi writes it. */
		const message = (pid: number, editor: number) => {
			const body: PiMessage = {
				protocol: "0.4",
				kind: "pi",
				pid,
				cwd: env.workDir,
				timestamp: Date.now() / 1000,
				editor_pid: editor,
				seq: ++seq,
				changed: [],
				last_turn: [],
			};
			const target = join(env.stateDir, `pi-${pid}.json`);
			writeFileSync(`${target}.tmp`, JSON.stringify(body), { mode: 0o600, flag: "wx" });
			renameSync(`${target}.tmp`, target);
		};
		const reviewPath = (pid: number) => join(env.stateDir, `pi-${pid}.review.json`);
		/** A change set marking line 1 (whose text is pi's "line 1"), in a run newer than the real pi's. */
		const goodReview = (pid: number) =>
			JSON.stringify({
				protocol: "0.4",
				kind: "pi-review",
				pid,
				editor_pid: editorPid,
				timestamp: Date.now() / 1000,
				runs: [
					{
						run: 999,
						files: [
							{
								file,
								baseline: `line 0\n${PI_LINES.slice(1).join("\n")}\n`,
								note: null,
								hunks_total: 1,
								hunks: [
									{
										id: "h00000000aa",
										old_start: 1,
										old_lines: 1,
										new_start: 1,
										new_lines: 1,
										old_text: ["line 0"],
										new_text: ["line 1"],
									},
								],
							},
						],
					},
				],
			});
		// Written whole under a temp name, then renamed into place: a read between the create and the write would
		// be of another (empty) file, rightly told once more.
		const plant = (write: (path: string) => void) => {
			rmSync(reviewPath(me), { force: true });
			const temp = `${reviewPath(me)}.planting`;
			write(temp);
			renameSync(temp, reviewPath(me));
		};
		const cases: [string, (path: string) => void, RegExp][] = [
			["malformed", (p) => writeFileSync(p, "{", { mode: 0o600 }), /invalid change set: invalid JSON/],
			[
				"oversized",
				(p) => writeFileSync(p, " ".repeat(8 * 1024 * 1024 + 1), { mode: 0o600 }),
				/is 8388609 bytes, over the 8388608-byte limit/,
			],
			["group-readable", (p) => writeFileSync(p, goodReview(me), { mode: 0o640 }), /has mode 0640/],
			[
				"a symlink",
				(p) => {
					writeFileSync(join(root, "elsewhere.json"), goodReview(me), { mode: 0o600 });
					symlinkSync(join(root, "elsewhere.json"), p);
				},
				/is a symbolic link: refused/,
			],
			["another pi's", (p) => writeFileSync(p, goodReview(me + 1), { mode: 0o600 }), /pid field \d+ does not match/],
		];
		for (const [name, write, logged] of cases) {
			plant(write);
			message(me, editorPid);
			await waitFor(`the output channel names the ${name} change set`, () =>
				logged.test(outputLog()) ? true : undefined,
			);
			message(me, editorPid); // read again: not logged again
		}
		// The last message is read too: its pid is the last thing each case wrote.
		await waitForState("the fake pi's last message handled", (s) => (s as { pi?: { seq: number } }).pi?.seq === seq);
		for (const [name, , logged] of cases) {
			const lines = outputLog()
				.split("\n")
				.filter((l) => logged.test(l));
			assert.equal(lines.length, 1, `${name}: one line, not one per read`);
		}
		assert.deepEqual(
			(await toasts()).filter((t) => /review|change set/i.test(t)),
			[],
			"no popup",
		);
		await linesMarked(OURS, []);

		// A good change set of a pi that names another editor is not read; nor one of a dead pi's.
		plant((p) => writeFileSync(p, goodReview(me), { mode: 0o600 }));
		message(me, editorPid + 1);
		const dead = 2 ** 22 + 12345; // above the default pid_max: no process
		writeFileSync(reviewPath(dead), goodReview(dead), { mode: 0o600 });
		message(dead, editorPid);
		// Then a third pi (a live process of ours) names VS Code: once its message is handled, so are those before.
		const third = spawn("sleep", ["600"], { stdio: "ignore" });
		t.after(() => third.kill("SIGKILL"));
		message(third.pid ?? 0, editorPid);
		await waitForState("the third pi's message handled", (s) => (s as { pi?: { pid: number } }).pi?.pid === third.pid);
		// The list shows the newest run of the change sets read: the real pi's, not run 999.
		await runCommand("pi: Show pi's changes");
		await page.locator(".quick-input-widget .monaco-list-row", { hasText: "notes.txt: lines 9-10" }).first().waitFor();
		assert.doesNotMatch((await page.locator(".quick-input-widget").textContent()) ?? "", /run 999/);
		await page.keyboard.press("Escape");
		assert.deepEqual(await marginLines(OURS), [], "not marked");
		// Control: the same file, once this pi names VS Code, is read and marks line 1.
		message(me, editorPid);
		await linesMarked(OURS, [1]);
		// Reverting the file's hunks with unsaved text elsewhere (line 9): only pi's lines change.
		await runCommand("pi: Revert pi's changes in this file");
		await waitFor("line 1 reverted", async () => ((await editorLines())[0] === "line 0" ? true : undefined));
		assert.deepEqual((await editorLines()).slice(8, 10), ["line 9, by piX", "and one more"]);
		// Listed alone: the earlier revert was undone (test 7), its lines edited since (test 8).
		const state = await waitForState("the revert", (s) => (s.reverted ?? []).length === 1);
		assert.deepEqual(state.reverted, [{ pi_pid: me, run: 999, id: "h00000000aa", file, line: 1, lines: 1 }]);
		rmSync(join(env.stateDir, `pi-${me}.json`));
		await linesMarked(OURS, []);
		await waitFor("one line says the gone pi's change set is dropped", () =>
			outputLog().includes(`pi-${me}.review.json: pi has exited: its changes are no longer shown`) ? true : undefined,
		);
		rmSync(reviewPath(me), { force: true });
		rmSync(reviewPath(dead), { force: true });
		rmSync(join(env.stateDir, `pi-${dead}.json`), { force: true });
		rmSync(join(env.stateDir, `pi-${third.pid}.json`), { force: true });
	});
	/** A second file for the approval cases, not open in VS Code. */
	const PLAN = ["step 1", "step 2", "step 3"];
	let plan = "";
	/** The model edits plan.txt's `line` once, then answers with text after the tool's result. */
	const editPlan = (oldText: string, newText: string) => {
		env.model.respond = (request): FakeReply => {
			const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
			return messages.at(-1)?.role === "tool"
				? { text: DEFAULT_REPLY }
				: { toolCalls: [{ name: "edit", arguments: { path: plan, edits: [{ oldText, newText }] } }] };
		};
	};
	const notice = (text: string) => page.locator(".notification-toast", { hasText: text });

	test("10. approval on: VS Code says it answers; pi's edit waits, one notice asks, Show change is a read-only diff, Accept runs it", async () => {
		plan = join(env.workDir, "plan.txt");
		writeFileSync(plan, `${PLAN.join("\n")}\n`);
		assert.deepEqual(readState()?.decisions, [], "decisions, empty before the first: VS Code answers approvals");
		await rpc?.close();
		env.writeSettings({ ideContext: { approve: "edits" } });
		rpc = await startRpc(env);
		const pi = rpc;
		editPlan("step 2\n", "step 2, by pi\n");
		const asked = env.model.requests.length;
		const since = pi.records.length;
		const prompted = pi.prompt("change step 2");
		prompted.catch(() => {}); // awaited below; a failure before that must not be an unhandled rejection
		const toast = notice("pi wants to edit plan.txt: 1 hunk");
		await toast.waitFor({ timeout: 60_000 });
		// pi's own dialog asks at the same time; VS Code's answer dismisses it.
		await pi.waitFor<UiRequest>((r) => r.type === "extension_ui_request" && r.method === "select", undefined, since);
		await toast.locator(".monaco-button", { hasText: "Show change" }).click();
		await page.waitForSelector(".monaco-diff-editor", { timeout: 20_000 });
		const proposal = await waitFor("the proposal side", async () => {
			const lines = await editorLines(".monaco-diff-editor .editor.modified");
			return lines.includes("step 2, by pi") ? lines : undefined;
		});
		assert.deepEqual(proposal.slice(0, 3), ["step 1", "step 2, by pi", "step 3"]);
		assert.equal(readFileSync(plan, "utf8"), `${PLAN.join("\n")}\n`, "nothing written while pi waits");
		// From the keyboard, with the proposal (a virtual document) active: the answer still reaches pi.
		await runCommand("pi: Accept pi's proposed change");
		await prompted;
		assert.equal(readFileSync(plan, "utf8"), "step 1\nstep 2, by pi\nstep 3\n");
		assert.match(toolResults(env.model.requests[asked + 1]), /the user approved this change to plan\.txt in VS Code/);
		const state = await waitForState("the decision", (s) => (s.decisions ?? []).length === 1);
		assert.deepEqual(state.decisions?.[0], {
			pi_pid: pi.child.pid,
			pi_ns: PI_NS,
			id: state.decisions?.[0]?.id,
			decision: "accept",
		});
		await page.keyboard.press("Control+W");
		await page.waitForSelector(".monaco-diff-editor", { state: "detached", timeout: 10_000 });
	});

	test("11. plan.txt open: the line pi would replace is marked while pi waits; Reject in the notice leaves the file unchanged, the model told", async () => {
		const pi = rpc;
		assert.ok(pi);
		await page
			.locator(".explorer-folders-view .monaco-list-row", { hasText: "plan.txt" })
			.first()
			.dblclick({ timeout: 20_000 });
		await waitForState("plan.txt active", (s) => s.active_buffer.file === plan);
		// Line 2 carries the review's mark of the approved run (test 10).
		await linesMarked(OURS, [2]);
		editPlan("step 3\n", "step 3, by pi\n");
		const asked = env.model.requests.length;
		const prompted = pi.prompt("change step 3");
		prompted.catch(() => {}); // awaited below; a failure before that must not be an unhandled rejection
		const toast = notice("pi wants to edit plan.txt: 1 hunk");
		await toast.waitFor({ timeout: 60_000 });
		await linesMarked(OURS, [2, 3]);
		await toast.locator(".monaco-button", { hasText: "Reject" }).click();
		await prompted;
		await linesMarked(OURS, [2]);
		assert.equal(readFileSync(plan, "utf8"), "step 1\nstep 2, by pi\nstep 3\n");
		assert.match(
			toolResults(env.model.requests[asked + 1]),
			/The user rejected this change in VS Code: plan\.txt is unchanged\. Do not make it again/,
		);
		await waitForState("two decisions, newest last", (s) => s.decisions?.at(-1)?.decision === "reject");
	});

	test("12. pi's dialog answers first: VS Code forgets the request; its notice's Accept then sends nothing", async () => {
		const pi = rpc;
		assert.ok(pi);
		editPlan("step 1\n", "step 1, by pi\n");
		const since = pi.records.length;
		const prompted = pi.prompt("change step 1");
		prompted.catch(() => {}); // awaited below; a failure before that must not be an unhandled rejection
		const toast = notice("pi wants to edit plan.txt: 1 hunk");
		await toast.waitFor({ timeout: 60_000 });
		const dialog = await pi.waitFor<UiRequest>(
			(r) => r.type === "extension_ui_request" && r.method === "select",
			undefined,
			since,
		);
		pi.respond(dialog.id, { value: DIALOG_ACCEPT });
		await prompted;
		assert.equal(readFileSync(plan, "utf8"), "step 1, by pi\nstep 2, by pi\nstep 3\n");
		await waitFor("VS Code forgets the request", () =>
			/pi's request to change plan\.txt ended: pi no longer waits on it/.test(outputLog()) ? true : undefined,
		);
		await toast.locator(".monaco-button", { hasText: "Accept" }).click();
		await waitFor("the late answer is logged, not sent", () =>
			/pi is not waiting for an answer to that/.test(outputLog()) ? true : undefined,
		);
		assert.equal(readState()?.decisions?.length, 2, "no decision added");
	});
	test("12b. an answer is for the request the user saw: A shown, A answered in pi's dialog, B arrives; the command names B and decides nothing, again accepts B", async () => {
		const pi = rpc;
		assert.ok(pi);
		const edit = (oldText: string, newText: string) => ({
			name: "edit",
			arguments: { path: plan, edits: [{ oldText, newText }] },
		});
		env.model.respond = (request): FakeReply => {
			const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
			return messages.at(-1)?.role === "tool"
				? { text: DEFAULT_REPLY }
				: { toolCalls: [edit("step 2, by pi\n", "step 2, again\n"), edit("step 3\n", "step 3, by pi\n")] };
		};
		const decided = readState()?.decisions?.length ?? 0;
		const asked = env.model.requests.length;
		const since = pi.records.length;
		const prompted = pi.prompt("change steps 2 and 3");
		prompted.catch(() => {}); // awaited below; a failure before that must not be an unhandled rejection
		const select = (r: { type: string; method?: string }) => r.type === "extension_ui_request" && r.method === "select";
		const toastA = notice("pi wants to edit plan.txt: 1 hunk");
		await toastA.waitFor({ timeout: 60_000 });
		await toastA.locator(".monaco-button", { hasText: "Show change" }).click();
		await page.waitForSelector(".monaco-diff-editor", { timeout: 20_000 });
		await page.keyboard.press("Control+W");
		await page.waitForSelector(".monaco-diff-editor", { state: "detached", timeout: 10_000 });
		const dialogA = await pi.waitFor<UiRequest>(select, undefined, since);
		const afterA = pi.records.length;
		pi.respond(dialogA.id, { value: DIALOG_REJECT });
		await pi.waitFor<UiRequest>(select, undefined, afterA);
		await notice("pi wants to edit plan.txt: 1 hunk").waitFor({ timeout: 60_000 });
		await runCommand("pi: Accept pi's proposed change");
		await waitFor("the command names B and decides nothing", () =>
			/not approved: the request you saw is gone; pi wants to edit plan\.txt: 1 hunk\. Answer again/.test(outputLog())
				? true
				: undefined,
		);
		assert.equal(readState()?.decisions?.length, decided, "nothing decided");
		await runCommand("pi: Accept pi's proposed change");
		await prompted;
		assert.equal(readFileSync(plan, "utf8"), "step 1, by pi\nstep 2, by pi\nstep 3, by pi\n");
		const told = toolResults(env.model.requests[asked + 1]);
		assert.match(told, /The user rejected this change in pi's approval dialog: plan\.txt is unchanged/);
		assert.match(told, /the user approved this change to plan\.txt in VS Code/);
	});
	test("13. bad requests are one line in the output channel, no notice: malformed, another editor's, run out", async (t) => {
		const editorPid = readState()?.pid ?? 0;
		/** Live processes of the user's, playing pis (a request is read only for a live pi). */
		const pis = Array.from({ length: 4 }, () => spawn("sleep", ["600"], { stdio: "ignore" }));
		t.after(() => {
			for (const each of pis) each.kill("SIGKILL");
		});
		const [bad, other, late, good] = pis.map((p) => p.pid ?? 0);
		const path = (pid: number | undefined) => join(env.stateDir, `pi-${pid}.approval.json`);
		const plant = (pid: number | undefined, text: string) => {
			writeFileSync(`${path(pid)}.tmp`, text, { mode: 0o600, flag: "wx" });
			renameSync(`${path(pid)}.tmp`, path(pid));
		};
		/** A request to write `name` (in the project, not there yet): each case names its own file. */
		const request = (pid: number | undefined, editor: number, name: string, now = Date.now() / 1000) =>
			JSON.stringify({
				protocol: "0.4",
				kind: "pi-approval",
				pid,
				editor_pid: editor,
				timestamp: now,
				request: buildRequest({
					id: `request-of-${pid}`,
					tool: "write",
					file: join(env.workDir, name),
					before: { kind: "absent" },
					after: "all new\n",
					timeoutS: 60,
					now,
				}),
			});
		const ended = () =>
			outputLog()
				.split("\n")
				.filter((l) => /request to change \S+\.txt ended/.test(l)).length;
		const endedBefore = ended();
		plant(bad, "{");
		await waitFor("the malformed request named", () =>
			outputLog().includes(`pi-${bad}.approval.json invalid request: invalid JSON`) ? true : undefined,
		);
		plant(bad, "{"); // read again: not logged again
		plant(other, request(other, editorPid + 1, "other.txt"));
		plant(late, request(late, editorPid, "late.txt", Date.now() / 1000 - 3600));
		// Control: a good request for VS Code shows its notice; the files before it were read before it.
		plant(good, request(good, editorPid, "good.txt"));
		const toast = notice("pi wants to create good.txt: 1 hunk");
		await toast.waitFor({ timeout: 20_000 });
		assert.equal(
			outputLog()
				.split("\n")
				.filter((l) => l.includes(`pi-${bad}.approval.json invalid request`)).length,
			1,
			"one line, not one per read",
		);
		assert.deepEqual(
			(await toasts()).filter((text) => /other\.txt|late\.txt/.test(text)),
			[],
			"no notice for another editor's or a run-out request",
		);
		assert.equal(ended(), endedBefore, "nothing else was shown, so nothing else ended");
		rmSync(path(good));
		await waitFor("the request forgotten when its file goes", () => (ended() === endedBefore + 1 ? true : undefined));
		assert.deepEqual(
			["good.txt", "other.txt", "late.txt"].filter((name) => existsSync(join(env.workDir, name))),
			[],
			"nothing written",
		);
		for (const pid of [bad, other, late]) rmSync(path(pid), { force: true });
	});
});
