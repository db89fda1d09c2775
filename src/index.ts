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
	type ContextWithSystemEvent,
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	type ExtensionAPI,
	type ExtensionContext,
	getAgentDir,
} from "@earendil-works/pi-coding-agent";
import { type Component, truncateToWidth } from "@earendil-works/pi-tui";
import { Type } from "typebox";
import { formatQuote } from "./context/blocks.ts";
import {
	type Decision,
	type MemoryDetails,
	nextMessage,
	type ReadMessage,
	withUserSends,
} from "./context/model-view.ts";
import { type RequestMessage, repairMessages, repairPayload } from "./context/request-repair.ts";
import { type SessionFacts, SessionFactsCache } from "./context/session-facts.ts";
import { IdeController, type Injection, type UiPort } from "./controller.ts";
import { ChoiceStore } from "./discovery/choice-store.ts";
import { EDITOR_PID_ENV, parseEditorPid } from "./discovery/host-editor.ts";
import { sessionPathMappings } from "./discovery/mounts.ts";
import { ProcessClock, readAncestry } from "./discovery/proc-info.ts";
import { installNvimClient, isNvimInstallDisabled, nvimDataHome } from "./install/nvim-client.ts";
import { installVimClient, isVimInstallDisabled, vimDir } from "./install/vim-client.ts";
import { answersApprovals, editorName } from "./link/approval.ts";
import { ApprovalDesk } from "./link/approval-desk.ts";
import { AskDesk, type ToolText } from "./link/ask-desk.ts";
import { EditorLink } from "./link/editor-link.ts";
import { waitCapsFor } from "./link/pi-message.ts";
import type { SendOutcome } from "./link/send-deliver.ts";
import { SendDesk } from "./link/send-desk.ts";
import { ASK_TOOL, SHOW_TOOL } from "./link/show-ask.ts";
import { askApproval, proposeContent } from "./pi-api/approval-shell.ts";
import { userTrustCheck } from "./pi-api/trust.ts";
import { formatEditorName, oneLine } from "./protocol/inert.ts";
import { formatDirHealth, readOwnPidNamespace, resolveStateDir } from "./protocol/state-dir.ts";
import { DEFAULT_SETTINGS, parseSettings } from "./ui/settings.ts";
import type { StatusFacts } from "./ui/status-report.ts";

export const STATUS_KEY = "ide-context";
export const MESSAGE_TYPE = "ide-context";
/** The note on pi's hunks the user reverted in the editor (v0.4): a message of its own, never an editor block. */
export const REVERTS_MESSAGE_TYPE = "ide-context-reverts";
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
	/** ideContext.approve and approveTimeoutSeconds (v0.4): write/edit wait for the user's approval. */
	let approval: ApprovalDesk | undefined;
	let approve = DEFAULT_SETTINGS.approve;
	let approveTimeoutS = DEFAULT_SETTINGS.approveTimeoutSeconds;
	/** v0.5 send to pi: the editor's sends, taken into pi's input or sent. */
	let sendDesk: SendDesk | undefined;
	/** v0.5 show and ask: the model's `ide_show` and `ide_open_files` calls, asked of the connected editor. */
	let askDesk: AskDesk | undefined;
	/** What the model is told with an approved tool's result, by tool call id (until that result). */
	const approvalNotes = new Map<string, string>();
	/**
	 * What the next message sends for `injection`, given what the model already has (from the session, never memory)
	 * and `message`, the text of the user message it goes with (a selection sent from the editor in it counts).
	 */
	const messageFor = (injection: Injection, ctx: ExtensionContext, id: string, message?: string): Decision => {
		const facts = sessionFacts(ctx);
		const sent = message === undefined ? facts.sent : withUserSends(facts.sent, [message]);
		return nextMessage(injection, {
			projected: facts.projected,
			session: facts.session,
			sent,
			always: sendUnchanged,
			id,
		});
	};

	pi.on("session_start", async (_event, ctx) => {
		try {
			await controller?.stop();
			const { settings, problems } = parseSettings(readIdeSettings(pi), process.env);
			const ui = ctx.hasUI ? uiPort(ctx) : null;
			const home = homedir();
			// One state dir and one uid for the controller, pi's messages and the approval desk.
			const stateDir = resolveStateDir(process.env);
			const uid = process.getuid?.() ?? -1;
			// pi's pid namespace: on the host the initial one; in a sandbox or container another (issue 23).
			const pidNamespace = readOwnPidNamespace();
			// The editors' directories as pi sees them (a sandbox or container): the setting, then pi's bind mounts.
			const paths = sessionPathMappings(settings.paths);
			for (const problem of problems) ui?.notify(`pi-ide-context: ${problem}`, "warning");
			sendUnchanged = settings.sendUnchanged;
			approve = settings.approve;
			approveTimeoutS = settings.approveTimeoutSeconds;
			controller = new IdeController({
				piCwd: ctx.cwd,
				stateDir,
				agentDir: getAgentDir(),
				configDirName: CONFIG_DIR_NAME,
				uid,
				home,
				settings,
				ui,
				isProjectTrusted: userTrustCheck({
					cwd: ctx.cwd,
					agentDir: getAgentDir(),
					piTrusts: () => ctx.isProjectTrusted(),
					argv: process.argv.slice(2),
				}),
				// Read once: pi's own environment and ancestors do not change during a session.
				hostHints: {
					envPid: parseEditorPid(process.env[EDITOR_PID_ENV]),
					ancestors: process.platform === "linux" ? readAncestry() : [],
				},
				startClock: new ProcessClock(),
				choiceStore: new ChoiceStore(getAgentDir(), uid),
				pidNamespace,
				paths,
			});
			await editorLink?.close();
			const current = controller;
			const published = new EditorLink({
				stateDir,
				uid,
				pid: process.pid,
				cwd: ctx.cwd,
				home,
				connected: () => current.connectedEditor()?.record,
				warn: (message) => ui?.notify(message, "warning"),
				excluded: (file) => current.excludes(file),
				pidNamespace,
				paths,
				waitCaps: waitCapsFor(settings.answerWaitMs),
			});
			editorLink = published;
			approval?.close();
			approval = new ApprovalDesk({
				stateDir,
				uid,
				pid: process.pid,
				cwd: ctx.cwd,
				home,
				connected: () => current.connectedEditor()?.record,
				editorPorts: (pid) => published.editorPorts(pid),
				warn: (message) => ui?.notify(message, "warning"),
				stateDirProblem: () => refusedStateDir(current),
				pidNamespace,
				paths,
			});
			/** The pill as last set: set again after a draft, which makes pi's TUI draw its input anew. */
			let pill: string | undefined;
			current.onPill = (text) => {
				pill = text;
				published.sync();
			};
			sendDesk = new SendDesk({
				stateDir,
				uid,
				piPid: process.pid,
				piNs: pidNamespace,
				cwd: ctx.cwd,
				connectedPid: () => current.connectedEditor()?.record.pid ?? null,
				excluded: (file) => current.excludes(file),
				caps: () => ({ maxLines: settings.maxSelectionLines, maxBytes: settings.maxSelectionBytes }),
				deliver: (text, mode) => {
					if (mode === "draft") {
						if (!ctx.hasUI) throw new Error("pi has no input to put a draft in (print or JSON mode)");
						ctx.ui.setEditorText(text);
						// The TUI's editor does not ask for a redraw when its text is set from outside a key.
						ctx.ui.setStatus(STATUS_KEY, pill);
						return "draft";
					}
					if (ctx.isIdle()) {
						pi.sendUserMessage(text);
						return "prompt";
					}
					pi.sendUserMessage(text, { deliverAs: "followUp" });
					return "follow-up";
				},
				published: (outcome) => published.sendFate(outcome),
				warn: (message) => ui?.notify(message, "warning"),
			});
			askDesk?.close();
			askDesk = new AskDesk({
				stateDir,
				uid,
				pid: process.pid,
				pidNamespace,
				cwd: ctx.cwd,
				home,
				connected: () => {
					const record = current.connectedEditor()?.record;
					return record ? { pid: record.pid, state: record.state } : undefined;
				},
				excluded: (file) => current.excludes(file),
				paths,
			});
			const desk = sendDesk;
			current.onFileChanged = (name) => desk.changed(name);
			current.onVerify = () => desk.verify();
			void controller.start();
			published.sync();
			const links = [
				installNvimClient({
					packageRoot: PACKAGE_ROOT,
					dataHome: nvimDataHome(process.env, home),
					disabled: !settings.linkNvim || isNvimInstallDisabled(process.env),
				}),
				installVimClient({
					packageRoot: PACKAGE_ROOT,
					vimDir: vimDir(process.env, home),
					disabled: !settings.linkVim || isVimInstallDisabled(process.env),
				}),
			];
			// "already" and "disabled" are the quiet, usual outcomes; the rest is said once, here.
			for (const link of links) {
				if (link.status === "linked") ui?.notify(`pi-ide-context: ${link.message}`, "info");
				else if (link.status === "conflict" || link.status === "error")
					ui?.notify(`pi-ide-context: ${link.message}`, "warning");
			}
		} catch (error) {
			reportError(ctx, "session_start", error);
		}
	});

	pi.on("session_shutdown", async () => {
		try {
			await editorLink?.close();
			editorLink = undefined;
			approval?.close();
			approval = undefined;
			approvalNotes.clear();
			sendDesk = undefined;
			askDesk?.close();
			askDesk = undefined;
			await controller?.stop();
		} catch {
			// Shutting down: nothing useful left to report to.
		}
		controller = undefined;
	});

	/** What `/ide status` says of this session beyond the editors: pi's change set and the approval setting. */
	const statusFacts = (
		current: IdeController,
		ctx: ExtensionContext,
	): Pick<StatusFacts, "changes" | "approval" | "lastSend"> => {
		const state = current.connectedEditor()?.record.state;
		const sent: SendOutcome | null = sendDesk?.last() ?? null;
		return {
			lastSend: sent ? { editorPid: sent.editor_pid, id: sent.id, fate: sent.fate, reason: sent.reason } : null,
			...(editorLink ? { changes: editorLink.changeSummary() } : {}),
			approval: {
				mode: approve,
				timeoutS: approveTimeoutS,
				answeringEditor: state && answersApprovals(state) ? editorName(state) : null,
				dialog: ctx.hasUI,
				pending: approval?.pending() ?? null,
				refusedDir: refusedStateDir(current),
			},
		};
	};

	/**
	 * The ide-context message for a prompt (or a steering or follow-up message) now: the block, an update, a notice
	 * that the model's editor context is out of date, or nothing.
	 */
	const contextMessage = (ctx: ExtensionContext, message: string) => {
		if (!controller) return undefined;
		const decision = messageFor(controller.prepareInjection(), ctx, randomUUID(), message);
		if (decision.kind === "none" || !decision.details) return undefined;
		const { text, details } = decision;
		// The quote and the entry come from the same snapshot as the injected text; a selection only
		// referred to (the model has it already) is not quoted again.
		if (details.selection) pi.appendEntry(SELECTION_ENTRY_TYPE, details.selection);
		return { customType: MESSAGE_TYPE, content: text, display: true, details };
	};

	/**
	 * The context of the prompt whose editor context was just prepared (a verifying scan of the state dir): pi
	 * gives every before_agent_start handler of one prompt the same one, so the revert note below reads the
	 * connected editor's state from that scan.
	 */
	let scannedFor: ExtensionContext | undefined;
	pi.on("before_agent_start", async (event, ctx) => {
		scannedFor = undefined;
		try {
			if (event.messageType !== "user") return undefined;
			const message = contextMessage(ctx, event.prompt);
			if (controller) scannedFor = ctx;
			return message ? { message } : undefined;
		} catch (error) {
			reportError(ctx, "before_agent_start", error);
			return undefined;
		}
	});

	// A message typed while pi works (steering, follow-up) is a prompt too: the editor news since goes with it.
	pi.on("input", async (event, ctx) => {
		try {
			const deliverAs = event.streamingBehavior;
			if (!deliverAs) return undefined; // An idle prompt: before_agent_start sends its editor context.
			const message = contextMessage(ctx, event.text);
			if (message) pi.sendMessage(message, { deliverAs });
		} catch (error) {
			reportError(ctx, "input", error);
		}
		return undefined;
	});

	// v0.4 review: with a prompt, the model learns once which of pi's hunks the user reverted in the editor, so it
	// does not put them back. A message of its own (pi collects one from each before_agent_start handler).
	pi.on("before_agent_start", async (event, ctx) => {
		try {
			if (event.messageType !== "user") return undefined;
			const scanned = scannedFor === ctx;
			scannedFor = undefined;
			const note = editorLink?.revertNote(scanned);
			return note ? { message: { customType: REVERTS_MESSAGE_TYPE, content: note, display: true } } : undefined;
		} catch (error) {
			reportError(ctx, "before_agent_start", error);
			return undefined;
		}
	});

	// v0.4 approval (off by default): a write/edit waits for the user's decision in the editor or pi's dialog, and
	// the model is told what happened. Registered before the baseline below: a blocked tool records nothing, and
	// an approved one's baseline is the file as it is once the user decided.
	pi.on("tool_call", async (event, ctx) => {
		if (approve === "off" || !approval) return undefined;
		try {
			const reviewed = await approval.review({
				toolName: event.toolName,
				input: event.input,
				id: randomUUID(),
				timeoutS: approveTimeoutS,
				propose: (current) => proposeContent(event.toolName, event.input, current, ctx.cwd),
				dialog: ctx.hasUI ? (title, signal) => askApproval(ctx, title, signal) : undefined,
				signal: ctx.signal,
			});
			if (!reviewed) return undefined;
			if (reviewed.words.block) return { block: true, reason: reviewed.words.block };
			if (reviewed.words.note) approvalNotes.set(event.toolCallId, reviewed.words.note);
			return undefined;
		} catch (error) {
			// Approval is on: a change nobody could be asked about is not made behind the user's back.
			reportError(ctx, "approval", error);
			return {
				block: true,
				reason: `pi could not ask the user to approve this change (${oneLine(String(error), 200)}): it was not applied. Ask the user.`,
			};
		}
	});

	// v0.4 review: before a write/edit runs, keep the file's content as the run's baseline. A tool_call handler
	// that throws blocks the tool, so this one never does.
	pi.on("tool_call", async (event) => {
		try {
			editorLink?.beforeTool(event.toolName, event.input);
		} catch {
			// No baseline: the change set leaves this file out; the tool runs as usual.
		}
		return undefined;
	});
	// Protocol v0.5: pi's `read` of a file the editor holds unsaved returns the editor's buffer (what the user sees),
	// also where the disk read failed (a new file not saved yet, an offset past the saved file's end).
	pi.on("tool_result", async (event, ctx) => {
		try {
			if (event.toolName !== "read") return undefined;
			if (event.content.some((c) => c.type !== "text")) return undefined;
			const read = await editorLink?.unsavedRead(
				event.input,
				{ maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES },
				ctx.signal,
			);
			if (!read) return undefined;
			if (read.kind === "note") {
				if (event.isError) return undefined;
				return { content: [...event.content, { type: "text" as const, text: `\n${read.text}` }] };
			}
			return { content: [{ type: "text" as const, text: read.text }], isError: false };
		} catch (error) {
			reportError(ctx, "tool_result", error);
			return undefined;
		}
	});
	// Protocol v0.3: tell the editor what pi's tools changed; append its fresh diagnostics to the tool result.
	pi.on("tool_result", async (event, ctx) => {
		try {
			const approved = approvalNotes.get(event.toolCallId);
			approvalNotes.delete(event.toolCallId);
			if (event.isError) return undefined;
			const editorNote = await editorLink?.afterTool(event.toolName, event.input, ctx.signal);
			const note = [approved, editorNote].filter(Boolean).join("\n");
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
	/** What the request check put into the current request: the payload check finds it by its text. */
	let repaired: ReadMessage[] = [];
	// Before each model request, after every `context` handler (context_with_system runs after all of them): the
	// request must carry the editor context the session says the model has. When it lost it, or a block it builds
	// on (pi compacted in the middle of a run, an extension pruned), one self-contained block takes its place. The
	// system head stays at index 0. A context_with_system handler of an extension loaded later runs after this
	// one: before_provider_request checks the payload once more.
	pi.on("context_with_system", async (event, ctx) => {
		repaired = [];
		try {
			const repair = repairMessages(event.messages, requestMessage, sessionFacts(ctx), (content, details) => ({
				role: "custom" as const,
				customType: MESSAGE_TYPE,
				content,
				display: false,
				details,
				timestamp: Date.now(),
			}));
			if (!repair) return undefined;
			repaired = repair.repaired;
			return { messages: repair.messages };
		} catch {
			return undefined;
		}
	});
	pi.on("before_provider_request", async (event, ctx) => {
		try {
			const { session, branch, prompt } = sessionFacts(ctx);
			const payload = repairPayload(event.payload, { session, branch, prompt, repaired });
			return payload === undefined ? undefined : payload;
		} catch {
			return undefined;
		}
	});

	// One line under the prompt for what pi sent: the selection's quote, or what else the model was told.
	pi.registerMessageRenderer<MemoryDetails>(MESSAGE_TYPE, (message, options, theme) => {
		const selection = message.details?.selection;
		const sent = message.details?.sent;
		if (selection) return quoteLine(theme.fg("muted", formatQuote(selection)), options.outputPad);
		if (typeof sent !== "string") return undefined;
		return quoteLine(theme.fg("muted", `↳ ${oneLine(sent, 300)}`), options.outputPad);
	});

	// The review's notes to the model (a revert, an undone revert), shown under the prompt as pi's own lines, not
	// as a raw message with its type tag.
	pi.registerMessageRenderer(REVERTS_MESSAGE_TYPE, (message, options, theme) => {
		if (typeof message.content !== "string") return undefined;
		const lines = message.content.split("\n").map((line, i) => `${i === 0 ? "↳" : " "} ${line}`);
		return noteLines(
			lines.map((line) => theme.fg("muted", line)),
			options.outputPad,
		);
	});

	// v0.5 show and ask: two tools for the model, asked of the connected editor (nothing runs until a call).
	const toolResult = (result: ToolText) => ({
		content: [{ type: "text" as const, text: result.text }],
		details: undefined,
		...(result.isError ? { isError: true } : {}),
	});
	const noDesk: ToolText = {
		text: "pi-ide-context is not running in this session: nothing was asked.",
		isError: false,
	};
	pi.registerTool({
		name: SHOW_TOOL,
		label: "Show in editor",
		description:
			"Show the user a place in a file in their editor (the one connected to pi): the file and line (or lines) go to the editor's quickfix list with a one-line notice, without moving the user's cursor or changing their window, unless the user set the editor to follow. Use it when you found the place the user should look at (a bug, a definition, where to change something). The result says whether the editor took it or that no editor is connected.",
		promptSnippet: "Show the user a file location in their editor without taking their focus",
		parameters: Type.Object({
			path: Type.String({ description: "The file, relative to the working directory or absolute" }),
			line: Type.Integer({ minimum: 1, description: "The first line (1-based)" }),
			end_line: Type.Optional(Type.Integer({ minimum: 1, description: "The last line of a range (1-based)" })),
			note: Type.Optional(Type.String({ description: "A short note for the user: why this place matters" })),
		}),
		async execute(_toolCallId, params, signal) {
			return toolResult((await askDesk?.show(params, randomUUID(), signal)) ?? noDesk);
		},
	});
	pi.registerTool({
		name: ASK_TOOL,
		label: "Editor's open files",
		description:
			"Ask the user's editor (the one connected to pi) what it has open: every open file buffer, marked when it has unsaved changes (the file on disk then differs from what the user sees), and the editor's current diagnostics (errors, warnings) of the file named by `path`, or of every open file without it. Use it to learn what the user is working on, or what is broken in a file other than the active one.",
		promptSnippet: "List the files open in the user's editor, their unsaved state and diagnostics",
		parameters: Type.Object({
			path: Type.Optional(
				Type.String({ description: "Only this file's diagnostics (relative or absolute); all open files' without it" }),
			),
		}),
		async execute(_toolCallId, params, signal) {
			return toolResult((await askDesk?.ask(params, randomUUID(), signal)) ?? noDesk);
		},
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
				if (sub === "status") {
					const injection = controller.prepareInjection();
					const next = { injection, decision: messageFor(injection, ctx, "status") };
					ctx.ui.notify(controller.statusReport(next, statusFacts(controller, ctx)), "info");
				} else if (sub === "off") {
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
	controller.pick(action.pid, action.window);
	ctx.ui.notify(`pi-ide-context: ${describeConnection(controller)}`, "info");
}

/** Why pi refuses its state dir now (no editor can be asked), or null: it reads it, or there is none yet. */
function refusedStateDir(controller: IdeController): string | null {
	const health = controller.view.health;
	return health.ok || health.missing ? null : formatDirHealth(health);
}

function describeConnection(controller: IdeController): string {
	const editor = controller.connectedEditor();
	if (!editor) return "not connected";
	const state = editor.record.state;
	return `connected to ${formatEditorName(state)} (pid ${state.pid}, ${oneLine(state.cwd)})`;
}

/** One cache of the session's facts per session manager (src/context/session-facts.ts). */
const factsCaches = new WeakMap<object, SessionFactsCache>();

function sessionFacts(ctx: ExtensionContext): SessionFacts {
	const manager = ctx.sessionManager;
	let cache = factsCaches.get(manager);
	if (!cache) {
		cache = new SessionFactsCache(MESSAGE_TYPE);
		factsCaches.set(manager, cache);
	}
	return cache.facts(manager);
}

/** A message of a model request, as the request-time check reads it. */
function requestMessage(m: ContextWithSystemEvent["messages"][number]): RequestMessage {
	if (m.role === "custom" && m.customType === MESSAGE_TYPE)
		return { kind: "ide-context", details: m.details, content: m.content };
	// A user message's content: a selection sent from the editor in it is a copy the request check looks for.
	return {
		kind: m.role === "user" ? "user" : m.role === "system" ? "system" : "other",
		details: undefined,
		content: m.role === "user" ? m.content : undefined,
	};
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
	return noteLines([text], pad);
}

/** Lines under the prompt, each cut to the terminal's width. */
function noteLines(lines: readonly string[], pad: number): Component {
	const padding = " ".repeat(pad);
	return {
		render: (width: number) => lines.map((line) => truncateToWidth(`${padding}${line}`, Math.max(1, width))),
		invalidate: () => {},
	};
}
