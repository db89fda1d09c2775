/**
 * The VS Code extension in a real VS Code, for the conformance kit: the packaged .vsix in code-server
 * (test/vscode/code-server.ts), one code-server and one chromium for all of the adapter's sessions, and a
 * window of its own per session: a browser page on the session's project folder whose extension host gets
 * the session's environment (its state dir) and is the pid that names the state file. The window is driven
 * through VS Code's own API by a test extension in the same extension host (test/vscode/driver-extension.ts),
 * as the Neovim adapter drives Neovim over RPC: files opened, selections set, edits applied and saved by
 * VS Code; diagnostics published by a diagnostic collection, as any checker publishes them; reloads done by
 * VS Code's own file watcher. The client's notices are what the window shows: the notification center's
 * entries from the extension (or any error) and the lines its output channel gives a pi message.
 *
 * A window takes seconds to start, so the tables that start an editor per row are left to the fake-API
 * adapter (adapters/vscode.ts), which runs the same extension code on them.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
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

/** The code-server and browser every session of the adapter shares, started by the first session. */
interface World {
	root: string;
	server: CodeServer;
	browser: Browser;
}

let world: Promise<World> | undefined;

async function startWorld(): Promise<World> {
	assertInstalled();
	const root = makeTempDir();
	try {
		const vsix = packageExtension(join(root, "package"));
		const driver = packageDriver(join(root, "driver"));
		// code-server's own folder is never opened: each window names its project.
		const idle = join(root, "idle");
		mkdirSync(idle);
		const server = await startCodeServer(
			join(root, "server"),
			[vsix, driver],
			idle,
			{},
			{
				perWindowEnv: true,
				graceSeconds: GRACE_SECONDS,
			},
		);
		try {
			const { browser } = await openBrowser(join(root, "chromium"));
			return { root, server, browser };
		} catch (error) {
			await server.stop();
			throw error;
		}
	} catch (error) {
		rmSync(root, { recursive: true, force: true });
		throw error;
	}
}

async function closeWorld(): Promise<void> {
	const ending = world;
	world = undefined;
	if (!ending) return;
	const { root, server, browser } = await ending;
	try {
		await browser.close();
	} finally {
		await server.stop();
		rmSync(root, { recursive: true, force: true });
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

/** The lines the extension's output channel gives a pi message, in the extension host's log dir. */
function outputNotices(logDir: string): string[] {
	const lines: string[] = [];
	for (const dir of readdirSync(logDir).filter((name) => name.startsWith("output_logging_"))) {
		for (const file of readdirSync(join(logDir, dir)).filter((name) => name.endsWith(`-${SOURCE}.log`))) {
			lines.push(...readFileSync(join(logDir, dir, file), "utf8").split("\n"));
		}
	}
	return lines.filter((line) => / pi message: /.test(line));
}

/** Runs in the page (a string: the project's TypeScript has no DOM types): the center's rows and their count. */
const READ_CENTER = `(() => {
	const rows = [...document.querySelectorAll(".notifications-center .monaco-list-row")];
	return {
		rows: rows.map((row) => ({
			label: row.getAttribute("aria-label") ?? "",
			message: row.querySelector(".notification-list-item-message")?.textContent ?? "",
		})),
		listed: Number(rows[0]?.getAttribute("aria-setsize") ?? 0),
	};
})()`;

/** What the notification center renders, read in one pass inside the page. */
interface CenterRows {
	/** Rows rendered, newest first: aria-label and message text. */
	rows: { label: string; message: string }[];
	/** How many notifications the center holds (the list's aria-setsize). */
	listed: number;
}

/**
 * The notification center's entries from the extension, and every error, oldest first. A row's aria-label
 * names its severity and source ("Warning: <message>, source: pi IDE context, notification, ..."); the
 * center lists the newest first and renders only the rows it shows, so more than it shows fail the case. The
 * rows and their count are read in one pass: read apart, a notification arriving between the two reads (CI
 * saw one) looked like a row the center did not render. One arriving while the list renders is waited for.
 */
async function shownNotices(page: Page): Promise<string[]> {
	const read = () => page.evaluate(READ_CENTER) as Promise<CenterRows>;
	let center = await read();
	for (let tries = 0; center.listed > center.rows.length && tries < 20; tries++) {
		await new Promise((resolve) => setTimeout(resolve, 100));
		center = await read();
	}
	if (center.listed > center.rows.length)
		throw new Error(`${center.listed} notifications, more than the ${center.rows.length} the center shows`);
	return center.rows
		.filter((r) => r.label.includes(`, source: ${SOURCE},`) || r.label.startsWith("Error: "))
		.map((r) => r.message || r.label)
		.reverse();
}

async function start(options: StartOptions): Promise<ClientSession> {
	if (options.headless) throw new Error("a VS Code extension host always has a window (no ui-gate)");
	world ??= startWorld();
	const { root, server, browser } = await world;
	const driverDir = mkdtempSync(join(root, "window-"));
	const page = await browser.newPage();
	let pid: number | undefined;
	const dispose = async () => {
		if (!page.isClosed()) await page.close().catch(() => {});
		// A window closed without its extension host stopping: end it by its pid (ours, from the driver).
		if (pid !== undefined && isAlive(pid)) {
			const id = pid;
			await pollUntil(() => (isAlive(id) ? undefined : true), "the extension host exits", EXIT_MS).catch(() =>
				process.kill(id, "SIGKILL"),
			);
		}
		rmSync(driverDir, { recursive: true, force: true });
	};
	try {
		await gotoWindow(page, windowUrl(server, options.cwd, { ...options.env, PI_IDE_KIT_DRIVER_DIR: driverDir }));
		const info = await pollUntil(
			() => {
				try {
					return JSON.parse(readFileSync(join(driverDir, "driver.json"), "utf8")) as DriverInfo;
				} catch {
					return undefined;
				}
			},
			"the window's extension host (the driver's driver.json)",
			{ timeoutMs: WINDOW_START_MS, intervalMs: 50 },
		);
		pid = info.pid;
		const call = async <T>(request: DriverRequest): Promise<T> => {
			const response = await fetch(`http://127.0.0.1:${info.port}/`, {
				method: "POST",
				body: JSON.stringify({ ...request, token: info.token }),
			});
			const answer = (await response.json()) as { value?: T; error?: string };
			if (!response.ok) throw new Error(`driver ${request.op}: ${answer.error}`);
			return answer.value as T;
		};
		await pollUntil(
			async () => ((await call<boolean>({ op: "ready", extension: EXTENSION_ID })) ? true : undefined),
			"the pi extension activates (onStartupFinished)",
			{ timeoutMs: WINDOW_START_MS, intervalMs: 50 },
		);
		if (options.file !== undefined) await call({ op: "open", file: options.file });

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
			loadedFiles: () => call<string[]>({ op: "loaded" }),
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
			messages: async () => {
				// The center shows every notification of the window while open; reopen it if anything closed it.
				if ((await page.locator(".notifications-center.visible").count()) === 0) {
					await call({ op: "command", command: "notifications.showList" });
					await page.locator(".notifications-center.visible").waitFor();
				}
				return [...(await shownNotices(page)), ...outputNotices(info.logDir)];
			},
			// Closing the window stops its extension host, which deactivates the extension first: quitting is
			// done when that process has exited (as `:qa` is done when Neovim has).
			quit: async () => {
				await page.close();
				await pollUntil(
					() => (isAlive(info.pid) ? undefined : true),
					"the extension host exits after its window closed",
					{ timeoutMs: EXIT_MS, intervalMs: 50 },
				);
			},
			dispose,
		};
	} catch (error) {
		await dispose();
		throw error;
	}
}

export const adapters: ClientAdapter[] = [
	{
		name: "vscode (code-server)",
		expectedSeconds: 200,
		app: "vscode",
		capabilities: new Set(["selection", "edit", "reload", "diagnostics"]),
		missing: {
			send: "not built yet (issue 25)",
			review:
				"VS Code's API lets no extension read another's decorations, so the driver extension cannot see the marks; adapters/vscode.ts runs these cases on the same extension code",
			"ui-gate":
				"code-server starts a window's extension host when the window connects: there is no extension host (no pid) without a UI",
			"editor-per-row":
				"a code-server window (a whole workbench in chromium) took 20-50 s to start on two loaded cores, so 33 more would add minutes to npm test; adapters/vscode.ts runs these rows on the same extension code",
			// ---- approval ----
			approval:
				"each approval case starts a window of its own (which request the user saw is the window's memory, no case may inherit it) and a window takes 20-50 s here; adapters/vscode.ts runs them on the same extension code",
			"approval-marks": "VS Code's decorations carry no name (a TextEditorDecorationType is an anonymous key)",
			// ---- end approval ----
		},
		hostReloads: true,
		start,
		close: closeWorld,
	},
];
