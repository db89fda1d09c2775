/**
 * The conformance kit's adapter for the JetBrains client (editors/jetbrains). No JetBrains IDE can run here, so
 * it drives the client's documented headless driver (editors/jetbrains/README.md): the client's own core, writer
 * and v0.3 inbox, for one project window, with plain text buffers where the IDE's documents would be. Each
 * session method is one command on the driver's stdin, answered on its stdout.
 */
import { startJetBrainsDriver } from "../../helpers/jetbrains.ts";
import type { Capability, ClientAdapter, ClientSession, KitDiagnostic, Position, StartOptions } from "../client.ts";

function expectOk(reply: { ok?: boolean; error?: string }, what: string): void {
	if (reply.ok !== true) throw new Error(`jetbrains driver: ${what} failed: ${reply.error ?? JSON.stringify(reply)}`);
}

const jetbrains: ClientAdapter = {
	name: "jetbrains (headless)",
	expectedSeconds: 45,
	rowLanes: 3,
	app: "jetbrains",
	capabilities: new Set<Capability>([
		"selection",
		"edit",
		"reload",
		"diagnostics",
		"editor-per-row",
		"approval",
		"pi-identity",
		"unsaved-buffers",
		"send",
		"show",
		"ask",
		"merge",
	]),
	missing: {
		review:
			'the JetBrains client does not implement review (PROTOCOL.md "Which client implements what"): it ignores pi\'s change set',
		"approval-marks":
			"the plugin shows a proposal in IntelliJ's diff window, not as marks in the editor; that window is not run here (editors/jetbrains/README.md)",
		"ui-gate":
			"a JetBrains IDE always has its UI; the headless driver writes from its start, as the plugin does once a project window opens",
	},
	async start(options: StartOptions): Promise<ClientSession> {
		if (options.headless) throw new Error("jetbrains driver: no headless mode (capability ui-gate is missing)");
		const driver = await startJetBrainsDriver({
			project: options.cwd,
			env: options.env,
			...(options.file === undefined ? {} : { file: options.file }),
		});
		const run = async (cmd: Record<string, unknown>, what: string) => {
			const reply = await driver.command(cmd);
			expectOk(reply, what);
			return reply;
		};
		return {
			pid: driver.pid,
			open: async (file: string) => {
				await run({ cmd: "open", file }, "open");
			},
			moveCursor: async (to: Position) => {
				await run({ cmd: "cursor", line: to.line, column: to.column }, "moveCursor");
			},
			select: async (start: Position, end: Position) => {
				await run({ cmd: "select", start, end }, "select");
			},
			clearSelection: async () => {
				await run({ cmd: "clear" }, "clearSelection");
			},
			setLines: async (file: string, lines: string[]) => {
				await run({ cmd: "setLines", file, lines }, "setLines");
			},
			save: async (file: string) => {
				await run({ cmd: "save", file }, "save");
			},
			buffer: async (file: string) => {
				const reply = await run({ cmd: "buffer", file }, "buffer");
				return (reply["buffer"] as { text: string; modified: boolean } | null) ?? undefined;
			},
			loadedFiles: async () => (await run({ cmd: "loaded" }, "loadedFiles"))["files"] as string[],
			setDiagnostics: async (file: string, items: KitDiagnostic[]) => {
				await run({ cmd: "diagnostics", file, items }, "setDiagnostics");
			},
			messages: async () => (await run({ cmd: "messages" }, "messages"))["messages"] as string[],
			// ---- approval: the plugin's action (no request named): `accept` / `reject`, and the line the user is told ----
			approve: async () => String((await run({ cmd: "accept" }, "approve"))["said"] ?? ""),
			reject: async () => String((await run({ cmd: "reject" }, "reject"))["said"] ?? ""),
			// The driver's log also tells of a request ending and of each answer; a request's arrival is the
			// plugin's notification text (Approval.describe: "pi wants to edit a.txt: 2 hunks").
			approvalNotices: async () =>
				((await run({ cmd: "messages" }, "messages"))["messages"] as string[]).filter((m) =>
					m.startsWith("pi wants to "),
				),
			// ---- end approval ----
			// ---- send: the plugin's action "Send to pi" (or "Send to pi now"), its form and the words typed ----
			sendToPi: async (file, send) => {
				const buffer = await run({ cmd: "buffer", file }, "buffer");
				if (!(buffer["buffer"] as { text: string } | null)) await run({ cmd: "open", file }, "open");
				if (send.lines) {
					const [first, last] = send.lines;
					const text = ((await run({ cmd: "buffer", file }, "buffer"))["buffer"] as { text: string }).text;
					const line = text.split("\n")[last - 1] ?? "";
					const chars = [...line];
					// Inclusive end: the first byte of the line's last character.
					const column = Buffer.byteLength(chars.slice(0, -1).join(""), "utf8") + 1;
					await run({ cmd: "select", start: { line: first, column: 1 }, end: { line: last, column } }, "select");
				}
				await run({ cmd: "send", mode: send.mode, prompt: send.prompt, form: send.form ?? "default" }, "send");
			},
			// ---- show: the plugin's list of pi's places (the driver's `places`), oldest first ----
			shownPlaces: async () =>
				(await run({ cmd: "places" }, "shownPlaces"))["places"] as {
					file: string;
					line: number;
					end_line: number | null;
					text: string;
				}[],
			// ---- merge (issue 26): the user's own edit, one undo step of the driver's buffer; and its undo ----
			editLines: async (file: string, line: number, remove: number, insert: string[]) => {
				await run({ cmd: "editLines", file, line, remove, insert }, "editLines");
			},
			undo: async (file: string) => {
				await run({ cmd: "undo", file }, "undo");
			},
			quit: () => driver.quit(),
			dispose: () => driver.kill(),
		};
	},
};

export const adapters: ClientAdapter[] = [jetbrains];
