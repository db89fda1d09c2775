/**
 * pi-ide-context: let pi see what the user is looking at in their editor.
 *
 * Thin shell over the core: it connects pi's events to an IdeController and the
 * controller's results to ctx.ui and before_agent_start. Every handler catches:
 * an exception escaping an extension handler would end the user's session.
 *
 * Usage: `pi install <this package>`, open Neovim (or VS Code, Obsidian, a
 * JetBrains IDE with its client), and prompt as usual. `/ide` picks an editor,
 * `/ide status` explains what is sent, `/ide off` stops (remembered for the project until `/ide auto`).
 */
import { randomUUID } from "node:crypto";
import { homedir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
	CONFIG_DIR_NAME,
	type ExtensionAPI,
	type ExtensionContext,
	getAgentDir,
} from "@earendil-works/pi-coding-agent";
import { type Component, truncateToWidth } from "@earendil-works/pi-tui";
import { type ContextBlock, type ContextDetails, formatEditorName, formatQuote, oneLine } from "./blocks.ts";
import { ChoiceStore } from "./choice-store.ts";
import { type Decision, decide, type ModelView, modelView, selfContainedText } from "./context-memory.ts";
import { IdeController, type UiPort } from "./controller.ts";
import { EditorLink } from "./editor-link.ts";
import { EDITOR_PID_ENV, parseEditorPid } from "./host-editor.ts";
import { isNvimLinkDisabled, linkNvimClient, nvimDataHome } from "./nvim-link.ts";
import { ProcessClock, readAncestry } from "./proc-info.ts";
import { parseSettings } from "./settings.ts";
import { resolveStateDir } from "./state-dir.ts";

export const STATUS_KEY = "ide-context";
export const MESSAGE_TYPE = "ide-context";
export const SELECTION_ENTRY_TYPE = "ide-context-selection";

/** The installed package: it holds editors/nvim, which session_start links into Neovim's packpath. */
const PACKAGE_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

const DISCONNECTED_MESSAGE =
	"pi-ide-context: disconnected; auto-connect is off for this project, remembered across sessions (/ide auto resumes)";

const SUBCOMMANDS = [
	{ value: "status", label: "status", description: "What pi sees now and why" },
	{ value: "off", label: "off", description: "Disconnect and stop auto-connecting in this project (remembered)" },
	{ value: "auto", label: "auto", description: "Connect automatically again (forgets a remembered choice)" },
];

export default function piIdeContext(pi: ExtensionAPI): void {
	let controller: IdeController | undefined;
	let editorLink: EditorLink | undefined;
	/** ideContext.sendUnchanged: a full block with every prompt. */
	let sendUnchanged = false;
	/** What this prompt sends, given what the model already has (decided from the session, never from memory). */
	const decideFor = (block: ContextBlock, ctx: ExtensionContext): Decision =>
		decide(block, visibleContext(ctx), { always: sendUnchanged, id: randomUUID() });

	pi.on("session_start", async (_event, ctx) => {
		try {
			await controller?.stop();
			const { settings, problems } = parseSettings(readIdeSettings(pi), process.env);
			const ui = ctx.hasUI ? uiPort(ctx) : null;
			const home = homedir();
			for (const problem of problems) ui?.notify(`pi-ide-context: ${problem}`, "warning");
			sendUnchanged = settings.sendUnchanged;
			controller = new IdeController({
				piCwd: ctx.cwd,
				stateDir: resolveStateDir(process.env),
				agentDir: getAgentDir(),
				configDirName: CONFIG_DIR_NAME,
				uid: process.getuid?.() ?? -1,
				home,
				settings,
				ui,
				isProjectTrusted: () => ctx.isProjectTrusted(),
				// Read once: pi's own environment and ancestors do not change during a session.
				hostHints: {
					envPid: parseEditorPid(process.env[EDITOR_PID_ENV]),
					ancestors: process.platform === "linux" ? readAncestry() : [],
				},
				startClock: new ProcessClock(),
				choiceStore: new ChoiceStore(getAgentDir(), process.getuid?.() ?? -1),
			});
			editorLink?.close();
			const current = controller;
			const published = new EditorLink({
				stateDir: resolveStateDir(process.env),
				uid: process.getuid?.() ?? -1,
				pid: process.pid,
				cwd: ctx.cwd,
				home,
				connected: () => current.connectedEditor()?.record,
				warn: (message) => ui?.notify(message, "warning"),
			});
			editorLink = published;
			current.onPill = () => published.sync();
			void controller.start();
			published.sync();
			const link = linkNvimClient({
				packageRoot: PACKAGE_ROOT,
				dataHome: nvimDataHome(process.env, home),
				disabled: !settings.linkNvim || isNvimLinkDisabled(process.env),
			});
			// "already" and "disabled" are the quiet, usual outcomes; the rest is said once, here.
			if (link.status === "linked") ui?.notify(`pi-ide-context: ${link.message}`, "info");
			else if (link.status === "conflict" || link.status === "error")
				ui?.notify(`pi-ide-context: ${link.message}`, "warning");
		} catch (error) {
			reportError(ctx, "session_start", error);
		}
	});

	pi.on("session_shutdown", async () => {
		try {
			editorLink?.close();
			editorLink = undefined;
			await controller?.stop();
		} catch {
			// Shutting down: nothing useful left to report to.
		}
		controller = undefined;
	});

	pi.on("before_agent_start", async (event, ctx) => {
		try {
			if (event.messageType !== "user" || !controller) return undefined;
			const injection = controller.prepareInjection();
			if (injection.kind !== "inject") return undefined;
			const decision = decideFor(injection.block, ctx);
			if (decision.kind === "none" || !decision.details) return undefined;
			const { text, details } = decision;
			// The quote and the entry come from the same snapshot as the injected text; a selection only
			// referred to (the model has it already) is not quoted again.
			if (details.selection) pi.appendEntry(SELECTION_ENTRY_TYPE, details.selection);
			return {
				message: { customType: MESSAGE_TYPE, content: text, display: details.selection !== undefined, details },
			};
		} catch (error) {
			reportError(ctx, "before_agent_start", error);
			return undefined;
		}
	});

	// Protocol v0.3: tell the editor what pi's tools changed; append its fresh diagnostics to the tool result.
	pi.on("tool_result", async (event, ctx) => {
		try {
			if (event.isError) return undefined;
			const note = await editorLink?.afterTool(event.toolName, event.input, ctx.signal);
			if (!note) return undefined;
			return { content: [...event.content, { type: "text" as const, text: `\n${note}` }] };
		} catch (error) {
			reportError(ctx, "tool_result", error);
			return undefined;
		}
	});
	pi.on("agent_start", async () => {
		try {
			editorLink?.startRun();
		} catch {
			// Bookkeeping only.
		}
	});
	pi.on("turn_end", async () => {
		try {
			editorLink?.endTurn();
		} catch {
			// Bookkeeping only.
		}
	});
	// Before each model request: if the last editor context in it builds on a block the request no longer holds
	// (pi compacted in the middle of a run, another extension pruned it), make that message self-contained.
	pi.on("context", async (event) => {
		try {
			const ours = event.messages.flatMap((m, index) =>
				m.role === "custom" && m.customType === MESSAGE_TYPE ? [{ index, message: m }] : [],
			);
			const last = ours.at(-1);
			if (!last) return undefined;
			const text = selfContainedText(
				ours.map(({ message }) => ({ details: message.details, content: message.content })),
			);
			if (text === undefined) return undefined;
			const messages = [...event.messages];
			messages[last.index] = { ...last.message, content: text };
			return { messages };
		} catch {
			return undefined;
		}
	});

	pi.registerMessageRenderer<ContextDetails>(MESSAGE_TYPE, (message, options, theme) => {
		const selection = message.details?.selection;
		if (!selection) return undefined;
		return quoteLine(theme.fg("muted", formatQuote(selection)), options.outputPad);
	});

	pi.registerCommand("ide", {
		description: "Connect pi to an editor: /ide (pick), /ide status, /ide off, /ide auto",
		getArgumentCompletions: (prefix) => {
			const items = SUBCOMMANDS.filter((s) => s.value.startsWith(prefix.trim()));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			try {
				if (!ctx.hasUI || !controller) return;
				const sub = args.trim();
				if (sub === "status")
					ctx.ui.notify(
						controller.statusReport((block) => decideFor(block, ctx)),
						"info",
					);
				else if (sub === "off") {
					controller.disconnect();
					ctx.ui.notify(DISCONNECTED_MESSAGE, "info");
				} else if (sub === "auto") {
					controller.resumeAuto();
					ctx.ui.notify(`pi-ide-context: auto-connect on; ${describeConnection(controller)}`, "info");
				} else if (sub === "") await pickEditor(controller, ctx);
				else
					ctx.ui.notify(
						`pi-ide-context: unknown argument "${sub}"; use /ide, /ide status, /ide off or /ide auto`,
						"warning",
					);
			} catch (error) {
				reportError(ctx, "/ide", error);
			}
		},
	});
}

async function pickEditor(controller: IdeController, ctx: ExtensionContext): Promise<void> {
	const width = Math.max(40, (process.stdout.columns || 100) - 8);
	const { rows, actions } = controller.pickerChoices(width);
	if (actions.length === 0) {
		ctx.ui.notify(
			"pi-ide-context: no editor is running. Open Neovim (the client is installed with this package) or another editor with its pi-ide client.",
			"info",
		);
		return;
	}
	const choice = await ctx.ui.select("Connect pi to an editor", rows);
	if (choice === undefined) return;
	const action = actions[rows.indexOf(choice)];
	if (!action) return;
	if (action.kind === "disconnect") {
		controller.disconnect();
		ctx.ui.notify(DISCONNECTED_MESSAGE, "info");
		return;
	}
	controller.pick(action.pid);
	ctx.ui.notify(`pi-ide-context: ${describeConnection(controller)}`, "info");
}

function describeConnection(controller: IdeController): string {
	const editor = controller.connectedEditor();
	if (!editor) return "not connected";
	const state = editor.record.state;
	return `connected to ${formatEditorName(state)} (pid ${state.pid}, ${oneLine(state.cwd)})`;
}

/**
 * The ide-context messages the model will see with the next request: the session's projection (the current
 * branch, compaction applied), so compaction, /tree, /fork and /resume are all accounted for. Unreadable: as if
 * none (the full block goes out).
 */
function visibleContext(ctx: ExtensionContext): ModelView {
	try {
		const messages = ctx.sessionManager.buildSessionProjection().messages;
		return modelView(
			messages.flatMap((m) => (m.role === "custom" && m.customType === MESSAGE_TYPE ? [{ details: m.details }] : [])),
		);
	} catch {
		return modelView([]);
	}
}

function uiPort(ctx: ExtensionContext): UiPort {
	return {
		setStatus: (text) => ctx.ui.setStatus(STATUS_KEY, text),
		notify: (message, level) => ctx.ui.notify(message, level),
	};
}

function readIdeSettings(pi: ExtensionAPI): unknown {
	const settings: unknown = pi.getSettings();
	return settings && typeof settings === "object" ? (settings as Record<string, unknown>)["ideContext"] : undefined;
}

function reportError(ctx: ExtensionContext, where: string, error: unknown): void {
	try {
		if (ctx.hasUI) ctx.ui.notify(`pi-ide-context: ${where} failed: ${String(error)}`, "error");
	} catch {
		// Reporting must not become the second failure.
	}
}

/** One line, cut to the width it gets: the quote never wraps. */
function quoteLine(text: string, pad: number): Component {
	const padding = " ".repeat(pad);
	return {
		render: (width: number) => [truncateToWidth(`${padding}${text}`, Math.max(1, width))],
		invalidate: () => {},
	};
}
