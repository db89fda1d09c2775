/**
 * v0.5 send to pi, the I/O half: reads an editor's `<pid>.send.json` when the state dir's watcher names it, judges
 * it (send-deliver.ts), hands the text to pi (a draft in pi's input, or a prompt / follow-up) through the caller's
 * `deliver`, and reports the fate through `published` (pi's message, `sent`). Never throws.
 */

import { lstatSync, readdirSync, type Stats } from "node:fs";
import { join } from "node:path";
import { oneLine } from "../protocol/inert.ts";
import { MAX_SEND_FILE_BYTES } from "../protocol/limits.ts";
import { readPrivateFile, refusePrivate } from "../protocol/state-dir.ts";
import { parseSendFileName, parseSendRequest, type SendMode } from "../protocol/wire.ts";
import { formatSend, judgeSend, type SendCaps, type SendOutcome } from "./send-deliver.ts";

/** How many taken ids pi keeps per editor (each id is taken once; an editor writes a new one per send). */
const SEEN_PER_EDITOR = 64;

const SEEN_KEY = Symbol.for("pi-ide-context.seen-sends");

/**
 * The ids this pi process has taken, per editor: shared by the SendDesk of every session it runs (/new, /resume,
 * /reload), so a new session's first scan does not take the last send again. On globalThis, as the seq counter
 * (editor-link.ts: pi reloads extensions with a fresh module cache).
 */
export function processSeenSends(): Map<number, string[]> {
	const slots = globalThis as unknown as Record<symbol, unknown>;
	const existing = slots[SEEN_KEY];
	if (existing instanceof Map) return existing as Map<number, string[]>;
	const seen = new Map<number, string[]>();
	slots[SEEN_KEY] = seen;
	return seen;
}

export interface SendDeskOptions {
	stateDir: string;
	uid: number;
	piPid: number;
	/** The `pid_ns` pi writes (its files' names and messages), or null: a send naming another namespace is not ours. */
	piNs?: string | null;
	cwd: string;
	connectedPid: () => number | null;
	excluded: (file: string) => boolean;
	caps: () => SendCaps;
	/** Put `text` into pi: a draft in its input, or sent at once; returns what it became. */
	deliver: (text: string, mode: SendMode) => "draft" | "prompt" | "follow-up";
	/** The latest send's fate changed: tell the editor (pi's message). */
	published: (outcome: SendOutcome) => void;
	warn?: (message: string) => void;
	nowS?: () => number;
	/** The ids taken so far; default the process's own (processSeenSends). */
	seen?: Map<number, string[]>;
}

export class SendDesk {
	readonly #options: SendDeskOptions;
	readonly #seen: Map<number, string[]>;
	#last: SendOutcome | null = null;

	constructor(options: SendDeskOptions) {
		this.#options = options;
		this.#seen = options.seen ?? processSeenSends();
	}

	/** The latest send this pi answered, for `/ide status` and pi's message. */
	last(): SendOutcome | null {
		return this.#last;
	}

	/** The watcher saw `name` change in the state dir: a send file is read and handled. Never throws. */
	changed(name: string): void {
		try {
			const editorPid = parseSendFileName(name);
			if (editorPid === undefined) return;
			this.#handle(editorPid, join(this.#options.stateDir, name));
		} catch (error) {
			this.#options.warn?.(`pi-ide-context: a send from the editor failed: ${oneLine(String(error), 200)}`);
		}
	}

	/**
	 * Look at every send file: the watcher may have missed one (written before it went live, or while it was not
	 * trusted). Each id is taken once and a stale send is refused, so a send handled already stays handled.
	 */
	verify(): void {
		try {
			for (const name of readdirSync(this.#options.stateDir))
				if (parseSendFileName(name) !== undefined) this.changed(name);
		} catch {
			// No dir, or unreadable: the controller reports the state dir's problems.
		}
	}

	#handle(editorPid: number, path: string): void {
		let seen: Stats | undefined;
		try {
			seen = lstatSync(path, { throwIfNoEntry: false });
		} catch {
			return;
		}
		if (!seen?.isFile()) return; // gone, or a symlink / something else: never followed
		const uid = this.#options.uid;
		const read = readPrivateFile(path, seen, {
			maxBytes: MAX_SEND_FILE_BYTES,
			refuse: (stats) => refusePrivate(stats, uid, MAX_SEND_FILE_BYTES),
		});
		if (read.kind === "gone") return;
		if (read.kind === "problem") {
			this.#options.warn?.(`pi-ide-context: the send file of editor ${editorPid} ${read.message}`);
			return;
		}
		const parsed = parseSendRequest(read.text, editorPid);
		if (!parsed.ok) {
			this.#options.warn?.(`pi-ide-context: the send file of editor ${editorPid} is refused: ${parsed.reason}`);
			return;
		}
		const request = parsed.request;
		const ids = this.#seen.get(editorPid) ?? [];
		const verdict = judgeSend(request, {
			piPid: this.#options.piPid,
			piNs: this.#options.piNs ?? null,
			connectedPid: this.#options.connectedPid(),
			now: this.#options.nowS?.() ?? Date.now() / 1000,
			seen: ids.includes(request.id),
			excluded: (file) => {
				try {
					return this.#options.excluded(file);
				} catch {
					return true;
				}
			},
		});
		if (verdict.kind === "ignore") return;
		ids.push(request.id);
		if (ids.length > SEEN_PER_EDITOR) ids.shift();
		this.#seen.set(editorPid, ids);
		let outcome: SendOutcome;
		if (verdict.kind === "refuse") {
			outcome = { editor_pid: editorPid, id: request.id, fate: verdict.fate, reason: verdict.reason };
		} else {
			try {
				const text = formatSend(request, this.#options.cwd, this.#options.caps());
				outcome = { editor_pid: editorPid, id: request.id, fate: this.#options.deliver(text, request.mode) };
			} catch (error) {
				const reason = `pi could not take it: ${oneLine(String(error), 200)}`;
				outcome = { editor_pid: editorPid, id: request.id, fate: "refused", reason };
			}
		}
		this.#last = outcome;
		this.#options.published(outcome);
	}
}
