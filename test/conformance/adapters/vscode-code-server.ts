/**
 * The VS Code extension in a real VS Code, for the conformance kit: the packaged .vsix in code-server
 * (test/vscode/code-server.ts), one code-server and one chromium for all of the adapter's sessions, and a
 * window per session at a time: a browser page whose extension host has the session's environment (its state
 * dir) and is the pid that names the state file, on a multi-root workspace whose second folder is the session's
 * project (VS Code reloads a file outside every folder only seconds after it changes: the extension's reports
 * would say `unchanged` first).
 * The window is driven through VS Code's own API by a test extension in the same extension host
 * (test/vscode/driver-extension.ts), as the Neovim adapter drives Neovim over RPC: files opened, selections
 * set, edits applied and saved by VS Code; diagnostics published by a diagnostic collection, as any checker
 * publishes them; reloads done by VS Code's own file watcher. The client's notices are what the window tells the
 * user: each notification as VS Code announces it to the screen reader (`WATCH_ALERTS`, `NOTIFICATION_ALERT`) and
 * the lines its output channel gives a pi message, each once, in the order the adapter first read them.
 *
 * A window takes 5-13 s to start here, so a session reuses a free window of a small pool, one window per lane of
 * the kit (`ROW_LANES` cases in editors of their own at a time, each session in a window of its own) and the shared
 * editor's (lent once the shared editor's cases end: suite.ts), loaded one at a time (`World.loading`): the driver
 * closes its editors, clears its notifications, makes the session's project the second folder, sets the session's
 * environment in the extension host and stops and starts the pi extension through its test hooks
 * (editors/vscode/src/test-hooks.ts: `activate` returns them only in an extension host started with
 * PI_IDE_CONTEXT_TEST_HOOKS=1, which this adapter's windows are). The
 * extension then reads its state dir afresh and has no memory of pi's messages, as in a new window; only the
 * pid is the same extension host's. That is what lets the tables that start an editor per row (`editor-per-row`)
 * run here in a second or two per row. A clean exit (`quit`) still closes the window: its extension host ends.
 * Review's marks are read where VS Code draws them, in the page (`EXTENSION_MARKS`). Approval's commands are run
 * as registered. No case reads the notification center: it keeps one entry of notifications with equal text,
 * renders at most about six, and under load drew fewer rows than it counted or did not open.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_HOOKS_ENV } from "../../../editors/vscode/src/test-hooks.ts";
import { pollUntil } from "../../helpers/poll.ts";
import {
	assertInstalled,
	type Browser,
	type CodeServer,
	EXTENSION_ID,
	gotoWindow,
	openBrowser,
	type Page,
	packageDriver,
	packageExtension,
	startCodeServer,
	windowUrl,
} from "../../vscode/code-server.ts";
import type { DriverInfo, DriverRequest, HostPosition } from "../../vscode/driver-extension.ts";
import type { ClientAdapter, ClientSession, KitDiagnostic, Position, StartOptions } from "../client.ts";
import { makeTempDir, utf16Span } from "../kit.ts";

/** vscode.DiagnosticSeverity's numbers. */
const SEVERITY = { error: 0, warning: 1, info: 2, hint: 3 } as const;

/** The extension's display name: the source VS Code shows on its notifications. */
const SOURCE = "pi IDE context";

/** A window starts within this, even on two loaded cores at the start of a CI run (most of it is the workbench and onStartupFinished; the first window of a code-server, with cold caches, is the slowest). */
const WINDOW_START_MS = 150_000;

/**
 * A closed window's extension host ends this long after its connection does, at the latest (a page closing
 * does not always get its last message out), deactivating the extension as a clean exit does.
 */
const GRACE_SECONDS = 3;

/** A closed window's extension host deactivates its extensions and exits within this. */
const EXIT_MS = 30_000;

/**
 * The cases in editors of their own run this many at a time beside the shared editor's (ClientAdapter.rowLanes),
 * each in a window of its own. One lane waits on the window (round trips to the page, VS Code's file watcher, the
 * extension's debounce) more than it uses the cores; with lanes the two cores are the limit (the windows' renderers
 * most of all), and three lanes, a window more to start and keep, were no faster than two.
 */
const ROW_LANES = 2;

/**
 * The workbench's own work that no case looks at, off: each selection, edit and open of the cases would
 * otherwise ask the extension host for code actions, symbols, folding ranges, links and highlights, reveal the file
 * in the Explorer and animate, in every window at once (the kit's lanes share two cores).
 */
const QUIET_WORKBENCH = {
	"workbench.reduceMotion": "on",
	"editor.cursorBlinking": "solid",
	"editor.lightbulb.enabled": "off",
	"editor.codeLens": false,
	"editor.occurrencesHighlight": "off",
	"editor.selectionHighlight": false,
	"editor.hover.enabled": false,
	"editor.links": false,
	"editor.folding": false,
	"editor.stickyScroll.enabled": false,
	"editor.inlayHints.enabled": "off",
	"editor.colorDecorators": false,
	"editor.semanticHighlighting.enabled": false,
	"editor.guides.indentation": false,
	"editor.bracketPairColorization.enabled": false,
	"editor.matchBrackets": "never",
	"editor.wordBasedSuggestions": "off",
	"editor.renderLineHighlight": "none",
	"breadcrumbs.enabled": false,
	"explorer.autoReveal": false,
	"outline.showVariables": false,
	"problems.decorations.enabled": false,
	"extensions.ignoreRecommendations": true,
	"npm.autoDetect": "off",
	"workbench.editor.enablePreview": false,
	// The cases' `.ts` files are plain text here (they have no other script files): no case reads a buffer's
	// language, and VS Code's TypeScript extension would start its server in each window for them (checking is off:
	// SETTINGS), 3.4 s of the lane's CPU (the lane uses both cores throughout; its time is its CPU's).
	"files.associations": { "*.ts": "plaintext" },
	"emmet.showExpandedAbbreviation": "never",
	"workbench.editor.showTabs": "single",
	"editor.unicodeHighlight.ambiguousCharacters": false,
	"editor.unicodeHighlight.invisibleCharacters": false,
	"editor.renderWhitespace": "none",
	"editor.smoothScrolling": false,
	"workbench.list.smoothScrolling": false,
	"editor.hideCursorInOverviewRuler": true,
	// No case reads the gutter's quick diff (review's marks are the extension's decorations: EXTENSION_MARKS).
	"scm.diffDecorations": "none",
};

/** The code-server and browser every session of the adapter shares, started by the first session. */
interface World {
	root: string;
	server: CodeServer;
	browser: Browser;
	/** The windows that serve one-case sessions, one session at a time each (see `startPooled`). */
	pool: PoolWindow[];
	/** The extension hosts (pids) of the sessions in progress: a second session on one fails at its start. */
	serving: Set<number>;
	/**
	 * The window loads in progress, one at a time: the last one's end. Three windows loading at once on two cores
	 * were each ready after 12-17 s; one at a time, the first is ready after about 7 s and its lane's cases (waits,
	 * most of them) run while the next loads. With the kit's cases in editors of their own asking first and the shared
	 * editor's window lent when its cases end (suite.ts), the lane's run went from 57-67 s to 54-63 s (median 57 s).
	 */
	loading: Promise<void>;
}

/** A window of the pool: a browser page that loads a new window for each session. */
interface PoolWindow {
	page: Page;
	/** The driver's directory, where the current extension host's driver writes `driver.json`. */
	dir: string;
	/** The current extension host's driver, if the page holds a window. */
	info?: DriverInfo;
	busy: boolean;
}

let world: Promise<World> | undefined;

async function startWorld(): Promise<World> {
	assertInstalled();
	const root = makeTempDir();
	// The browser needs nothing of code-server until a window loads: it starts while the extensions are packaged
	// and code-server starts.
	const opening = openBrowser(join(root, "chromium")).then((opened) => opened.browser);
	opening.catch(() => {});
	let server: CodeServer | undefined;
	try {
		const vsix = packageExtension(join(root, "package"));
		const driver = packageDriver(join(root, "driver"));
		// code-server's own folder is never opened: each window names its project.
		const idle = join(root, "idle");
		mkdirSync(idle);
		server = await startCodeServer(
			join(root, "server"),
			[vsix, driver],
			idle,
			{},
			{
				perWindowEnv: true,
				graceSeconds: GRACE_SECONDS,
				settings: QUIET_WORKBENCH,
			},
		);
		return { root, server, browser: await opening, pool: [], serving: new Set(), loading: Promise.resolve() };
	} catch (error) {
		await opening.then((browser) => browser.close()).catch(() => {});
		await server?.stop();
		rmSync(root, { recursive: true, force: true });
		throw error;
	}
}

async function closeWorld(): Promise<void> {
	const ending = world;
	world = undefined;
	if (!ending) return;
	const w = await ending;
	const { root, server, browser, pool } = w;
	try {
		await browser.close();
	} finally {
		await server.stop();
		// The windows' extension hosts end with their connections, and their children (VS Code's TypeScript
		// server, which makes its temp dir under the root as it starts) a moment later: wait for the hosts, and
		// retry the removal while a child is still at it.
		const hosts = pool.flatMap((window) => (window.info === undefined ? [] : [window.info.pid]));
		await pollUntil(() => (hosts.some(isAlive) ? undefined : true), "the extension hosts exit", {
			timeoutMs: EXIT_MS,
			intervalMs: 50,
		}).catch(() => {});
		rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
	}
}

/** The lines (0-based from, to) to replace, and their new text, to turn `old` into `next` (both end with "\n"). */
export function changedLines(old: string, next: string): { from: number; to: number; text: string } {
	const a = old.split("\n");
	const b = next.split("\n");
	// Both end with "" (the text after the last newline): the head never takes it, so the tail always does,
	// and the range ends on a line the document has.
	let head = 0;
	while (head < a.length - 1 && head < b.length - 1 && a[head] === b[head]) head++;
	let tail = 0;
	while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
	return {
		from: head,
		to: a.length - tail,
		text: b
			.slice(head, b.length - tail)
			.map((line) => `${line}\n`)
			.join(""),
	};
}

/** Whether `pid` runs (an exited process its parent has not reaped yet, a zombie, does not). */
function isAlive(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
	} catch {
		return false;
	}
}

/** How many lines each file of the extension's output channels holds: where a session's own lines start. */
type OutputMark = Map<string, number>;

/** The lines of each of the extension's output channel files (one per start of the extension) in `logDir`. */
function outputFiles(logDir: string): Map<string, string[]> {
	const files = new Map<string, string[]>();
	for (const dir of readdirSync(logDir).filter((name) => name.startsWith("output_logging_"))) {
		for (const file of readdirSync(join(logDir, dir)).filter((name) => name.endsWith(`-${SOURCE}.log`))) {
			// Only whole lines: the text after the last newline is one still being written (read once whole).
			const lines = readFileSync(join(logDir, dir, file), "utf8")
				.split("\n")
				.slice(0, -1);
			files.set(
				join(dir, file),
				lines.filter((line) => line !== ""),
			);
		}
	}
	return files;
}

const outputMark = (logDir: string): OutputMark =>
	new Map([...outputFiles(logDir)].map(([file, lines]) => [file, lines.length]));

/** Whether an output channel line is a notice: one a pi message, or a change set it ignores, gets (as adapters/vscode.ts). */
const isOutputNotice = (line: string): boolean => / pi message: /.test(line) || /\.review\.json\b.*ignored$/.test(line);

/** When the extension logged an output line (its ISO time stamp, extension.ts's `log`), in ms; 0 if it has none. */
const loggedAt = (line: string): number => Date.parse(line.slice(0, line.indexOf(" "))) || 0;

/**
 * How long a new window's extension host may take to show its workspace's folders before the window is loaded again:
 * one that has them has them from its start (its driver's first answer), one that has none gets none later.
 */
const NEW_WINDOW_FOLDERS_MS = 1000;

/** How long a command's reply (a notification, a line in the output channel) may take to show. */
const REPLY_MS = 3000;

/**
 * Runs in the page (a string: the project's TypeScript has no DOM types): keep every text VS Code gives its screen
 * reader (`aria.alert`/`status`, a new text node in `.monaco-aria-container` each time, alternating between two
 * elements so that equal texts are heard again) with the time it came, in `window.kitAlerts`. VS Code alerts each
 * notification as it adds it (`NOTIFICATION_ALERT`), even one of the same text as one shown (the notification
 * center keeps one entry of those), and whether the center or a toast shows it or not. Idempotent.
 */
const WATCH_ALERTS = `(() => {
	if (window.kitAlerts) return true;
	const container = document.querySelector(".monaco-aria-container");
	if (!container) return false;
	window.kitAlerts = [];
	new MutationObserver((mutations) => {
		for (const m of mutations)
			for (const node of m.addedNodes) if (node.textContent) window.kitAlerts.push({ at: Date.now(), text: node.textContent });
	}).observe(container, { subtree: true, childList: true });
	return true;
})()`;

/** A text VS Code gave the screen reader, and when (the page's clock: this machine's, as the output channel's). */
interface Alert {
	at: number;
	text: string;
}

/**
 * The alert VS Code makes for a notification (workbench/browser/parts/notifications/notificationsAlerts.ts): its
 * severity, "Info: ", "Warning: " or "Error: ", before the notification's message. Every other alert is not a
 * notice: status texts (a find widget's count, a list's or view's focus, "Editor content" hints) begin otherwise.
 * An alert does not name its source: the window's other extensions (the driver, VS Code's built-in ones) show no
 * notifications in the kit's cases, and one that did would be a notice the case sees, not one it loses. VS Code
 * alerts no silent notification (Do Not Disturb makes all but errors silent: the kit's windows never turn it on),
 * and alerts one again when its message changes (a progress notification's: the extension shows none).
 */
const NOTIFICATION_ALERT = /^(?:Info|Warning|Error): /;

/**
 * Runs in the page (a string, as above): the line numbers (1-based) of the active editor's rows that hold a
 * whole-line decoration of an extension's decoration type (`ced-TextEditorDecorationType...` in the text's
 * overlays), rows matched to the margin's line numbers by their top. Only the rendered rows: the cases' files
 * are short. The pi extension is the only one in the window that decorates (the driver draws nothing).
 */
/**
 * The rows of the Explorer's "pi's places" view as VS Code renders them (their accessible names, which carry the
 * whole path: show-ask-view.ts), oldest first; null while the view is not rendered.
 */
const PLACES_ROWS = `(async () => {
	const pane = [...document.querySelectorAll(".pane")].find((p) =>
		(p.querySelector(".pane-header")?.textContent ?? "").toLowerCase().includes("pi's places"));
	if (!pane) return null;
	if (!pane.classList.contains("expanded")) return "collapsed";
	// The list renders only the rows in view: scroll it (a wheel, as the user) until every row was seen.
	const seen = new Map();
	const scroller = pane.querySelector(".monaco-list .monaco-scrollable-element");
	for (let i = 0; i < 50; i++) {
		const rows = [...pane.querySelectorAll(".monaco-list-row")];
		for (const row of rows) seen.set(Number(row.getAttribute("data-index")), row.getAttribute("aria-label") ?? "");
		const total = Number(rows[0]?.getAttribute("aria-setsize") ?? 0);
		if (seen.size >= total || !scroller) break;
		scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: 60, bubbles: true }));
		await new Promise((r) => setTimeout(r, 50));
	}
	return [...seen.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
})()`;

const EXTENSION_MARKS = `(() => {
	const editor = document.querySelector(".editor-instance .monaco-editor");
	if (!editor) return [];
	const numbers = new Map();
	for (const row of editor.querySelectorAll(".margin-view-overlays > div")) {
		const label = row.querySelector(".line-numbers");
		if (label) numbers.set(row.style.top, Number(label.textContent.trim()));
	}
	const lines = new Set();
	for (const mark of editor.querySelectorAll('.view-overlays [class*="TextEditorDecorationType"]')) {
		const row = mark.closest(".view-overlays > div");
		if (row && numbers.has(row.style.top)) lines.add(numbers.get(row.style.top));
	}
	return [...lines].sort((a, b) => a - b);
})()`;

/**
 * The `driver.json` of the driver in `dir`, once written by an extension host other than `not`; fails at once
 * when `page`, the window's, has closed.
 */
function readDriver(page: Page, dir: string, not?: number): Promise<DriverInfo> {
	return pollUntil(
		() => {
			if (page.isClosed()) throw new Error("the window's page closed");
			try {
				const info = JSON.parse(readFileSync(join(dir, "driver.json"), "utf8")) as DriverInfo;
				return info.pid === not ? undefined : info;
			} catch {
				return undefined;
			}
		},
		"the window's extension host (the driver's driver.json)",
		{ timeoutMs: WINDOW_START_MS, intervalMs: 50 },
	);
}

type Call = <T>(request: DriverRequest) => Promise<T>;

/** Requests to the driver of the extension host `info` describes. */
function driverCall(info: DriverInfo): Call {
	return async <T>(request: DriverRequest): Promise<T> => {
		const response = await fetch(`http://127.0.0.1:${info.port}/`, {
			method: "POST",
			body: JSON.stringify({ ...request, token: info.token }),
		});
		const answer = (await response.json()) as { value?: T; error?: string };
		if (!response.ok) throw new Error(`driver ${request.op}: ${answer.error}`);
		return answer.value as T;
	};
}

/** Wait until the pi extension is active in the extension host `call` reaches. */
async function piActive(call: Call): Promise<void> {
	await pollUntil(
		async () => ((await call<boolean>({ op: "ready", extension: EXTENSION_ID })) ? true : undefined),
		"the pi extension activates (onStartupFinished)",
		{ timeoutMs: WINDOW_START_MS, intervalMs: 50 },
	);
}

/**
 * Load a new window for the session `options` into the pool window `window`'s page (a new page, or one whose
 * window could not take the session): a window on a
 * multi-root workspace of the adapter's idle folder and the session's project (second, so that a later session's
 * project can take its place: changing the first folder would restart the extension host), whose extension host
 * gets the session's environment and the pi extension's test hooks (`PI_IDE_CONTEXT_TEST_HOOKS`,
 * editors/vscode/src/test-hooks.ts). Returns the new extension host's driver.
 */
async function loadWindow(w: World, window: PoolWindow, options: StartOptions): Promise<DriverInfo> {
	const workspace = join(window.dir, "kit.code-workspace");
	const folders = [join(w.root, "idle"), options.cwd];
	writeFileSync(workspace, JSON.stringify({ folders: folders.map((path) => ({ path })) }));
	const url = windowUrl(w.server, workspace, {
		...options.env,
		PI_IDE_KIT_DRIVER_DIR: window.dir,
		[TEST_HOOKS_ENV]: "1",
	});
	// A new page's window sometimes comes up with no workspace folder, and stays so (in half the kit's runs, the
	// second or third window, never the first, never a page loaded again): the window has the workspace's name and
	// its extension host the workspace file, but no folder. As far as workbench.js shows (`waitAndInitialize`), a
	// window on a remote workspace reads the file once, when the remote file system is there, and a read that fails
	// then counts as an empty file until the file changes. It is loaded again at once (about 4 s), instead of
	// serving a session with no project and failing the next session's restart. (Writing the workspace file again
	// gives it the folders too, but VS Code then loads the window again itself, its first folder changed: no faster.)
	for (let attempt = 1; ; attempt++) {
		await gotoWindow(window.page, url);
		window.info = await readDriver(window.page, window.dir, window.info?.pid);
		const call = driverCall(window.info);
		const found = await pollUntil(
			async () => {
				const paths = await call<string[]>({ op: "folders" });
				return paths.length === folders.length ? paths : undefined;
			},
			"the window's workspace folders",
			{ timeoutMs: NEW_WINDOW_FOLDERS_MS, intervalMs: 50 },
		).catch(() => undefined);
		if (found !== undefined || attempt === 3) return window.info;
		console.error(`code-server adapter: a window came up with no workspace folder; loading it again`);
	}
}

/** Run `load` (a window's load) once every load asked for before it has ended (`World.loading`). */
async function oneAtATime<T>(w: World, load: () => Promise<T>): Promise<T> {
	const before = w.loading;
	let loaded!: () => void;
	w.loading = new Promise<void>((resolve) => {
		loaded = resolve;
	});
	try {
		await before;
		return await load();
	} finally {
		loaded();
	}
}

/**
 * A session on a window of the pool. A free window's extension host serves it: every editor closed, the
 * session's project made the workspace's second folder, the session's environment set in the extension host and
 * the pi extension stopped and started again through its test hooks, which read the state dir afresh and forget
 * pi's messages, as a new window's extension would (the pid stays the extension host's). A session that finds
 * every window busy loads a new window in a new page (seconds: the workbench and its extension host start; a
 * restart in a window takes half a second). A clean exit closes its window: the kit runs such a case last
 * (`KitCase.quits`), where the next session's new window delays no other case.
 */
async function startPooled(w: World, options: StartOptions): Promise<ClientSession> {
	// A free window is found and marked busy in one step (no await between): sessions starting at once in the
	// kit's lanes never share a window, and the shared editor's stays busy until its session ends.
	const take = (): PoolWindow | undefined => {
		const found = w.pool.find((candidate) => !candidate.busy && !candidate.page.isClosed());
		if (found) found.busy = true;
		return found;
	};
	let window = take();
	if (!window) {
		window = { page: await w.browser.newPage(), dir: mkdtempSync(join(w.root, "pool-")), busy: true };
		w.pool.push(window);
	}
	const taken = window;
	/** The extension host this session holds in `w.serving`, until it ends. */
	let held: number | undefined;
	const release = () => {
		if (held !== undefined) w.serving.delete(held);
		held = undefined;
	};
	const drop = async () => {
		release();
		const at = w.pool.indexOf(taken);
		if (at >= 0) w.pool.splice(at, 1);
		await taken.page.close().catch(() => {});
	};
	try {
		let leftovers: string[] = [];
		// The output channel's lines before the session's start are not its (in a new window there are none).
		let mark: OutputMark = new Map();
		let info = taken.info;
		let restarted = false;
		if (info !== undefined && isAlive(info.pid)) {
			mark = outputMark(info.logDir);
			// A window whose workspace has no folder (one that came up so three times, `loadWindow`) cannot take the
			// session: a new window on the session's project replaces it, and says so.
			restarted = await driverCall(info)<string[]>({
				op: "restart",
				extension: EXTENSION_ID,
				env: options.env,
				folder: options.cwd,
			}).then(
				(documents) => {
					leftovers = documents;
					return true;
				},
				(error: unknown) => {
					console.error(`code-server adapter: a new window for the session, the old one could not take it: ${error}`);
					return false;
				},
			);
		}
		if (!restarted) {
			mark = new Map();
			info = await oneAtATime(w, () => loadWindow(w, taken, options));
		}
		if (info === undefined) throw new Error("no extension host");
		if (w.serving.has(info.pid)) throw new Error(`the window of extension host ${info.pid} already serves a session`);
		held = info.pid;
		w.serving.add(held);
		const call = driverCall(info);
		await piActive(call);
		if (options.file !== undefined) await call({ op: "open", file: options.file });
		let ended = false;
		return await session(
			taken.page,
			info,
			call,
			{ leftovers: new Set(leftovers), mark },
			{
				// Closing the window stops its extension host, which deactivates the extension first: quitting is
				// done when that process has exited (the pool loses the page).
				quit: async () => {
					await drop();
					await pollUntil(() => (isAlive(info.pid) ? undefined : true), "the extension host exits", {
						timeoutMs: EXIT_MS,
						intervalMs: 50,
					});
				},
				// The pi extension stops as on a clean exit (its state file goes before the kit removes its dir); the
				// window serves the next session.
				dispose: async () => {
					if (ended) return;
					ended = true;
					release();
					if (taken.page.isClosed() || !isAlive(info.pid)) return drop();
					try {
						await call({ op: "stop", extension: EXTENSION_ID });
						taken.busy = false;
					} catch {
						await drop();
					}
				},
			},
		);
	} catch (error) {
		await drop();
		throw error;
	}
}

async function start(options: StartOptions): Promise<ClientSession> {
	if (options.headless) throw new Error("a VS Code extension host always has a window (no ui-gate)");
	world ??= startWorld();
	const w = await world;
	return startPooled(w, options);
}

/**
 * The session the cases drive, on the window `page` whose extension host `info` describes. What earlier
 * sessions in the window left is not its: `leftovers`, their documents still open when it started (VS Code
 * closes them when it likes), and `mark`, the output channel's lines then.
 */
async function session(
	page: Page,
	info: DriverInfo,
	call: Call,
	{ leftovers, mark }: { leftovers: ReadonlySet<string>; mark: OutputMark },
	end: { quit: () => Promise<void>; dispose: () => Promise<void> },
): Promise<ClientSession> {
	{
		await pollUntil(
			async () => ((await page.evaluate(WATCH_ALERTS)) ? true : undefined),
			"the workbench's screen reader container",
			{ timeoutMs: WINDOW_START_MS, intervalMs: 50 },
		);
		await page.evaluate("window.kitAlerts.length = 0");
		/**
		 * Everything the window told the user in this session, each once, in the order this adapter first read it
		 * (what one read finds new, by the time it came): each notification's alert and each line of the extension's
		 * output channel. Append-only, so a count taken earlier still marks what came after it.
		 */
		const said: { text: string; notice: boolean }[] = [];
		let alertsRead = 0;
		const linesRead = new Map<string, number>();
		const read = async (): Promise<typeof said> => {
			const alerts = (await page.evaluate("window.kitAlerts")) as Alert[];
			const fresh: { at: number; text: string; notice: boolean }[] = alerts
				.slice(alertsRead)
				.filter((alert) => NOTIFICATION_ALERT.test(alert.text))
				.map((alert) => ({ at: alert.at, text: alert.text.replace(NOTIFICATION_ALERT, ""), notice: true }));
			alertsRead = alerts.length;
			for (const [file, lines] of outputFiles(info.logDir)) {
				const from = Math.max(linesRead.get(file) ?? 0, mark.get(file) ?? 0);
				for (const line of lines.slice(from))
					fresh.push({ at: loggedAt(line), text: line, notice: isOutputNotice(line) });
				linesRead.set(file, Math.max(from, lines.length));
			}
			said.push(...fresh.sort((a, b) => a.at - b.at).map(({ text, notice }) => ({ text, notice })));
			return said;
		};
		const notices = async (): Promise<string[]> => (await read()).filter((x) => x.notice).map((x) => x.text);
		/** Run `command` as the user does; its reply is what it shows and logs, waited for a moment. */
		const answer = async (command: string): Promise<string> => {
			const before = (await read()).length;
			await call({ op: "command", command });
			const reply = async () => (await read()).slice(before).map((x) => x.text);
			return (
				await pollUntil(
					async () => {
						const lines = await reply();
						return lines.length > 0 ? lines : undefined;
					},
					`a reply to ${command}`,
					{ timeoutMs: REPLY_MS, intervalMs: 50 },
				).catch(reply)
			).join("\n");
		};

		/** A protocol position as VS Code's, in the active editor's document. */
		const toHost = async (at: Position, after: boolean): Promise<HostPosition> => {
			const span = utf16Span(await call<string>({ op: "line", line: at.line - 1 }), at.column);
			return { line: at.line - 1, character: after ? span.end : span.start };
		};
		const select = (anchor: HostPosition, head: HostPosition) => call({ op: "select", anchor, active: head });
		return {
			pid: info.pid,
			open: async (file) => void (await call({ op: "open", file })),
			moveCursor: async (to) => {
				const at = await toHost(to, false);
				await select(at, at);
			},
			select: async (from, to) => void (await select(await toHost(from, false), await toHost(to, true))),
			clearSelection: async () => {
				const { active: at } = await call<{ active: HostPosition }>({ op: "selection" });
				await select(at, at);
			},
			// The selection is made once select returns.
			endSelecting: async () => {},
			setLines: async (file, lines) => {
				const buffer = await call<{ text: string } | null>({ op: "buffer", file });
				if (!buffer) throw new Error(`${file} is not open`);
				await call({ op: "replace", file, ...changedLines(buffer.text, `${lines.join("\n")}\n`) });
			},
			save: async (file) => void (await call({ op: "save", file })),
			buffer: async (file) =>
				(await call<{ text: string; modified: boolean } | null>({ op: "buffer", file })) ?? undefined,
			loadedFiles: async () => (await call<string[]>({ op: "loaded" })).filter((file) => !leftovers.has(file)),
			setDiagnostics: async (file, items: KitDiagnostic[]) => {
				const lines = new Map<number, string>();
				for (const line of new Set(items.map((d) => d.line - 1))) {
					lines.set(line, await call<string>({ op: "line", file, line }));
				}
				await call({
					op: "diagnostics",
					file,
					items: items.map((d) => ({
						at: { line: d.line - 1, character: utf16Span(lines.get(d.line - 1) ?? "", d.column).start },
						severity: SEVERITY[d.severity],
						message: d.message,
						source: d.source ?? "kit",
					})),
				});
			},
			messages: notices,
			// ---- approval: the commands "Accept/Reject pi's proposed change" as the user runs them; their reply is
			// what they show (notifications) and log (the output channel) ----
			// ---- review: marks read where VS Code draws them; edits, the revert command and undo as the user's ----
			// The file made the active editor's (the marks are read in it); opened only when it is not: a case polls this.
			reviewMarks: async (file) => {
				await call({ op: "open", file, unlessActive: true });
				return (await page.evaluate(EXTENSION_MARKS)) as number[];
			},
			editLines: async (file, line, remove, insert) =>
				void (await call({
					op: "replace",
					file,
					from: line - 1,
					to: line - 1 + remove,
					text: insert.map((text) => `${text}\n`).join(""),
				})),
			revertHunk: async (file, line) => {
				await call({ op: "open", file });
				await select({ line: line - 1, character: 0 }, { line: line - 1, character: 0 });
				await call({ op: "command", command: "piIdeContext.revertHunk" });
			},
			undo: async (file) => {
				await call({ op: "open", file });
				await call({ op: "command", command: "undo" });
			},
			// ---- end review ----
			approve: () => answer("piIdeContext.approve"),
			reject: () => answer("piIdeContext.reject"),
			// A request's notification (describeApproval: "pi wants to edit a.txt: 2 hunks. ..."), each arrival.
			approvalNotices: async () => (await notices()).filter((text) => text.startsWith("pi wants to ")),
			// ---- end approval ----
			// ---- send: "pi: Send to pi (draft)" / "pi: Send to pi now" (or a form's command), the prompt its argument ----
			sendToPi: async (file, send) => {
				// Showing the editor already shown keeps its cursor, where the case put it; the round trip to the window
				// also brings the extension host the window's echo of the selections made before (without it, the send
				// command saw the previous row's selection once).
				await call({ op: "open", file });
				if (send.lines) {
					const [first, last] = send.lines;
					await select({ line: first - 1, character: 0 }, { line: last, character: 0 });
				}
				const form = send.form === "diagnostic" ? "Diagnostic" : send.form === "file" ? "File" : "";
				const command = `piIdeContext.send${form}${send.mode === "now" ? "Now" : ""}`;
				await call({ op: "command", command, args: [{ prompt: send.prompt }] });
			},
			// ---- show: the "pi's places" view's rows as VS Code draws them ----
			shownPlaces: async () => {
				const read = async () => (await page.evaluate(PLACES_ROWS)) as string[] | "collapsed" | null;
				if ((await read()) === "collapsed") {
					// The Explorer shows a contributed view collapsed: the user opens it once, as a look at the list.
					await page.locator(".pane-header", { hasText: /pi's places/i }).click();
					// The other Explorer views are closed, so the list has the sidebar's height: it renders only the rows in view.
					await page.evaluate(`(() => {
						for (const pane of document.querySelectorAll(".sidebar .pane.expanded")) {
							const header = pane.querySelector(".pane-header");
							if (!/pi's places/i.test(header?.textContent ?? "")) header?.click();
						}
					})()`);
					// and goes back to the editor, as before.
					await call({ op: "command", command: "workbench.action.focusActiveEditorGroup" });
				}
				// The window draws the rows a while after the extension host changed them (VS Code debounces a tree's
				// refresh): read until they are the rows the extension holds (its test hook), then take them as drawn.
				const held = await call<string[]>({ op: "places", extension: EXTENSION_ID });
				let rows = null as string[] | "collapsed" | null;
				await pollUntil(
					async () => {
						rows = await read();
						return JSON.stringify(rows) === JSON.stringify(held) ? true : undefined;
					},
					() =>
						`the Explorer's "pi's places" view draws the ${held.length} rows the extension holds; it draws ${JSON.stringify(rows)}`,
					{ timeoutMs: REPLY_MS * 2, intervalMs: 100 },
				);
				if (!Array.isArray(rows)) throw new Error(`the Explorer's "pi's places" view: ${rows ?? "not shown"}`);
				return rows.map((row) => {
					const m = /^(\/.*?):(\d+)(?:-(\d+))? (.*)$/s.exec(row);
					if (!m) throw new Error(`a place's row reads ${JSON.stringify(row)}`);
					return { file: m[1] ?? "", line: Number(m[2]), end_line: m[3] ? Number(m[3]) : null, text: m[4] ?? "" };
				});
			},
			quit: end.quit,
			dispose: end.dispose,
		};
	}
}

export const adapters: ClientAdapter[] = [
	{
		name: "vscode (code-server)",
		expectedSeconds: 85,
		rowLanes: ROW_LANES,
		app: "vscode",
		capabilities: new Set([
			"selection",
			"edit",
			"reload",
			"diagnostics",
			"editor-per-row",
			"approval",
			"review",
			"pi-identity",
			"unsaved-buffers",
			"merge",
			"send",
			"show",
			"ask",
		]),
		missing: {
			"ui-gate":
				"code-server starts a window's extension host when the window connects: there is no extension host (no pid) without a UI",
			// ---- approval ----
			"approval-marks": "VS Code's decorations carry no name (a TextEditorDecorationType is an anonymous key)",
			// ---- end approval ----
		},
		hostReloads: true,
		start,
		close: closeWorld,
	},
];
