/**
 * Optional approval (v0.4), the I/O half: reads the file a write/edit is about to change, publishes the proposal
 * as `pi-<pid>.approval.json` (under the rules of pi's message: private dir, 0600, atomic, size cap) while it
 * waits, and removes it once decided. The decisions and words are approval.ts's; the dry run of the tool is
 * the pi shell's (src/index.ts), handed in. Never throws.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { mapApprovalRequest } from "../protocol/path-map.ts";
import { piFileName } from "../protocol/wire.ts";
import {
	type ApprovalOutcome,
	answersApprovals,
	awaitDecision,
	buildRequest,
	type DecisionPorts,
	describeOutcome,
	dialogTitle,
	editorName,
	encodeApprovalMessage,
	type OutcomeWords,
	refusedDirWarning,
} from "./approval.ts";
import type { WaitPorts } from "./await-report.ts";
import { type EditorLinkOptions, readForReview } from "./editor-link.ts";
import { FILE_WRITING_TOOLS, resolveToolPath } from "./pi-message.ts";
import { PiMessageWriter } from "./pi-writer.ts";

/** EditorLink's options that the desk shares (the same state dir, identity and connection), and its ports. */
export interface ApprovalDeskOptions
	extends Pick<
		EditorLinkOptions,
		"stateDir" | "uid" | "pid" | "cwd" | "home" | "connected" | "warn" | "nowMs" | "pidNamespace" | "paths"
	> {
	/** The editor's state file, read fresh and watched (EditorLink's). */
	editorPorts: (pid: number) => WaitPorts;
	/**
	 * Why pi refuses its state dir now (formatDirHealth), or null when it reads it (or it does not exist yet). A
	 * refused dir means no editor can be asked: never a silent approval (PROTOCOL.md, Approval).
	 */
	stateDirProblem?: () => string | null;
}

export interface ReviewCall {
	toolName: string;
	input: unknown;
	/** A fresh id for the request. */
	id: string;
	timeoutS: number;
	/**
	 * What the tool would leave in the file, given its text now (null: no such file); null when the tool would
	 * fail (an edit whose text is not found): then there is nothing to approve and the tool runs to its error.
	 */
	propose: (current: string | null) => Promise<string | null>;
	/** pi's dialog, when pi has a UI. */
	dialog?: (title: string, signal: AbortSignal) => Promise<"accept" | "reject" | undefined>;
	signal?: AbortSignal;
}

/**
 * What the file holds now, as a hash of its bytes ("absent", "unreadable"): an approved proposal applies only to
 * the content it was made from. Opened as readForReview opens it (non-blocking, regular files only).
 */
export function contentHash(path: string): string {
	let fd: number | undefined;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
		if (!fstatSync(fd).isFile()) return "unreadable";
		const hash = createHash("sha256");
		const chunk = Buffer.allocUnsafe(64 * 1024);
		for (let n = readSync(fd, chunk, 0, chunk.length, null); n > 0; n = readSync(fd, chunk, 0, chunk.length, null))
			hash.update(chunk.subarray(0, n));
		return hash.digest("hex");
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		return code === "ENOENT" || code === "ENOTDIR" ? "absent" : "unreadable";
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

export class ApprovalDesk {
	readonly #options: ApprovalDeskOptions;
	readonly #writer: PiMessageWriter;
	#closed = false;
	/** The write/edit waiting for a decision now (for `/ide status`). */
	#pending: { tool: string; file: string; sinceMs: number } | null = null;

	constructor(options: ApprovalDeskOptions) {
		this.#options = options;
		this.#writer = new PiMessageWriter(
			options.stateDir,
			options.pid,
			options.uid,
			piFileName("approval", options.pid, options.pidNamespace),
		);
	}

	/** The outcome of asking about one write/edit and what the model is told, or null: nothing to approve. */
	async review(call: ReviewCall): Promise<{ outcome: ApprovalOutcome; words: OutcomeWords } | null> {
		if (this.#closed || !FILE_WRITING_TOOLS.has(call.toolName)) return null;
		const { cwd, home, pid } = this.#options;
		const path = call.input && typeof call.input === "object" ? (call.input as { path?: unknown }).path : undefined;
		const file = typeof path === "string" && path !== "" ? resolveToolPath(path, cwd, home) : null;
		if (file === null) return null;
		// Hashed first: a change between the two reads makes the check below refuse, never apply over it.
		const madeFrom = contentHash(file);
		const before = readForReview(file);
		let after: string | null = null;
		if (before.kind !== "note") {
			after = await call.propose(before.kind === "text" ? before.text : null);
			if (after === null || (before.kind === "text" && after === before.text)) return null;
		}
		const now = (this.#options.nowMs?.() ?? Date.now()) / 1000;
		const request = buildRequest({
			id: call.id,
			tool: call.toolName,
			file,
			before,
			after,
			timeoutS: call.timeoutS,
			now,
		});
		const editor = this.#options.connected();
		const editorPorts = editor ? this.#options.editorPorts(editor.pid) : undefined;
		const state = editorPorts?.read() ?? null;
		const answering = editor && editorPorts && state && answersApprovals(state) ? editorPorts : undefined;
		const refused = this.#stateDirProblem();
		if (!answering && !call.dialog) {
			const outcome: ApprovalOutcome =
				refused === null ? { kind: "unattended" } : { kind: "dir refused", problem: refused };
			return { outcome, words: describeOutcome(outcome, file, cwd) };
		}
		this.#pending = { tool: call.toolName, file, sinceMs: now * 1000 };
		try {
			if (answering && editor && state) {
				const text = encodeApprovalMessage({
					protocol: "0.4",
					kind: "pi-approval",
					pid,
					editor_pid: editor.pid,
					timestamp: now,
					request: mapApprovalRequest(request, this.#options.paths ?? []),
					...(this.#options.pidNamespace ? { pid_ns: this.#options.pidNamespace } : {}),
				});
				const written = this.#writer.write(text, text);
				if (!written.ok) this.#options.warn?.(`pi-ide-context: ${written.message}`);
			}
			const dialog = call.dialog;
			const ports: DecisionPorts = {
				...(answering && state
					? { editor: { name: editorName(state), read: answering.read, subscribe: answering.subscribe } }
					: {}),
				...(dialog
					? {
							dialog: (signal: AbortSignal) =>
								dialog(`${dialogTitle(request, cwd)}${refused === null ? "" : refusedDirWarning(refused)}`, signal),
						}
					: {}),
				setTimer: (fn, ms) => {
					const timer = setTimeout(fn, ms);
					return () => clearTimeout(timer);
				},
			};
			let outcome = await awaitDecision(
				ports,
				{ piPid: pid, piNs: this.#options.pidNamespace ?? null, id: request.id, timeoutS: call.timeoutS },
				call.signal,
			);
			// The user may have saved the file while reviewing: the approval was for the content pi proposed against.
			if (outcome.kind === "accepted" && contentHash(file) !== madeFrom)
				outcome = { kind: "changed", where: outcome.where };
			return { outcome, words: describeOutcome(outcome, file, cwd) };
		} finally {
			this.#pending = null;
			this.#writer.remove();
		}
	}

	/** The write/edit waiting for a decision now, and how long it has waited, if any. */
	pending(): { tool: string; file: string; waitedS: number } | null {
		if (!this.#pending) return null;
		const { tool, file, sinceMs } = this.#pending;
		return { tool, file, waitedS: Math.max(0, ((this.#options.nowMs?.() ?? Date.now()) - sinceMs) / 1000) };
	}

	/** The state dir's problem; one that cannot be told counts as refused. */
	#stateDirProblem(): string | null {
		try {
			return this.#options.stateDirProblem?.() ?? null;
		} catch (error) {
			return `(cannot tell: ${String(error)})`;
		}
	}

	close(): void {
		this.#closed = true;
		this.#writer.remove();
	}
}
