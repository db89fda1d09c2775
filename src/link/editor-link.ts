/**
 * pi -> editor (protocol v0.3), the I/O half: publishes pi's message file (the connected editor, the files
 * pi's tools changed, the last turn's files) and, after a write/edit, waits for the editor's answer and
 * returns the note for the tool result. The decisions live in pure modules (pi-message.ts,
 * await-report.ts, diagnostics.ts); this class only reads and writes files and runs timers. Never throws.
 */
import { closeSync, constants, type FSWatcher, fstatSync, openSync, readSync, realpathSync, watch } from "node:fs";
import { formatUnsavedRead, parseEditorBuffers, type ReadCaps, type UnsavedRead } from "../context/unsaved-read.ts";
import type { EditorRecord } from "../discovery/scan.ts";
import { StateDirScanner } from "../discovery/scan.ts";
import { formatEditorName, oneLine } from "../protocol/inert.ts";
import { mapPiMessage, mapReviewRuns, type PathMapping, toPiPath } from "../protocol/path-map.ts";
import type { EditorState } from "../protocol/protocol.ts";
import { stateFileName } from "../protocol/state-dir.ts";
import { type PiMessage, piFileName } from "../protocol/wire.ts";
import { awaitFileReport, releaseAll, type WaitPorts } from "./await-report.ts";
import {
	ChangeSet,
	contentOf,
	encodeReviewChunks,
	type FileContent,
	MAX_REVIEW_FILE_BYTES,
	mergeInfo,
} from "./change-set.ts";
import {
	buildPiMessage,
	ChangeLog,
	encodePiMessage,
	FILE_WRITING_TOOLS,
	formatToolNote,
	resolveToolPath,
	type SeqCounter,
	speaksV03,
	WAIT_CAPS,
	type WaitCaps,
} from "./pi-message.ts";
import { PiMessageWriter } from "./pi-writer.ts";
import { PublishQueue } from "./publish-queue.ts";
import {
	formatRevertNote,
	formatUndoneNote,
	newReverts,
	revertKey,
	type ToldRevert,
	undoneReverts,
} from "./reverts.ts";

/** While waiting, re-read this often too, in case a directory event was missed. */
const BACKSTOP_MS = 250;

const SEQ_COUNTER_KEY = Symbol.for("pi-ide-context.seq-counter");

/**
 * The one seq counter of this pi process, shared by the EditorLink of every session it runs (/new, /resume,
 * /fork, /reload), so its seqs only grow (see SeqCounter). Kept on globalThis: pi loads extensions with
 * jiti's module cache off, so /reload evaluates this module afresh and a module-level counter would restart.
 */
export function processSeqCounter(): SeqCounter {
	const slots = globalThis as unknown as Record<symbol, unknown>;
	const existing = slots[SEQ_COUNTER_KEY] as Partial<SeqCounter> | undefined;
	if (existing && Number.isSafeInteger(existing.last)) return existing as SeqCounter;
	const counter: SeqCounter = { last: 0 };
	slots[SEQ_COUNTER_KEY] = counter;
	return counter;
}

export interface EditorLinkOptions {
	stateDir: string;
	uid: number;
	pid: number;
	cwd: string;
	home: string;
	/** The editor pi is connected to now, if any. */
	connected: () => EditorRecord | undefined;
	warn?: (message: string) => void;
	nowMs?: () => number;
	/** Default WAIT_CAPS. */
	waitCaps?: WaitCaps;
	/** Where seqs come from; default the process's own (processSeqCounter). */
	seqCounter?: SeqCounter;
	/**
	 * Files the ignore rules keep from the model (IdeController.excludes): pi says nothing an editor reported about
	 * them (diagnostics, reload, reverts). Default: none.
	 */
	excluded?: (file: string) => boolean;
	/** pi's pid namespace (`pid:[...]`, v0.5), written in pi's files so a reader elsewhere knows its pid is not theirs. */
	pidNamespace?: string | null;
	/** The editors' directories as pi sees them (path-map.ts): read in pi's paths, written in the editors'. */
	paths?: readonly PathMapping[];
}

/**
 * A project file's content for the change set, read without ever blocking (a FIFO at the path: O_NONBLOCK, then
 * only a regular file is read) and only up to the cap. pi's tools follow a symlink, so this does too.
 */
export function readForReview(path: string, maxBytes = MAX_REVIEW_FILE_BYTES): FileContent {
	let fd: number | undefined;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
		const stat = fstatSync(fd);
		if (!stat.isFile()) return { kind: "note", note: "unreadable" };
		if (stat.size > maxBytes) return { kind: "note", note: "too large" };
		// Unzeroed: only the bytes read are used.
		const bytes = Buffer.allocUnsafe(Math.min(stat.size + 1, maxBytes + 1));
		let length = 0;
		for (let n = 1; n > 0 && length < bytes.length; length += n)
			n = readSync(fd, bytes, length, bytes.length - length, null);
		return contentOf(bytes.subarray(0, length), maxBytes);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		return code === "ENOENT" || code === "ENOTDIR" ? { kind: "absent" } : { kind: "note", note: "unreadable" };
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The tool-result note for a file the ignore rules exclude: pi's own words only, nothing the editor said. */
export function excludedNote(file: string): string {
	return `${oneLine(file)} is excluded by pi-ide-context's ignore rules: nothing the editor reports about it (diagnostics, reload) is passed on.`;
}

/**
 * The buffer editing the same file as `file` under another name (a symlink on either side: the editor names the
 * path it opened, pi's read the path the model wrote), by their real paths; undefined when none or unresolvable.
 */
function sameFile<T extends { file: string }>(buffers: T[], file: string): T | undefined {
	const real = realPathOrNull(file);
	if (real === null) return undefined;
	return buffers.find((b) => realPathOrNull(b.file) === real);
}

function realPathOrNull(path: string): string | null {
	try {
		return realpathSync.native(path);
	} catch {
		return null;
	}
}

export class EditorLink {
	readonly log: ChangeLog;
	/** What pi's tools changed in the last runs, with baselines: published as `pi-<pid>.review.json` (v0.4). */
	readonly changes = new ChangeSet();
	/** The reverted hunks the model has been told about (revertKey), and the editor that listed each. */
	readonly #toldReverts = new Map<string, ToldRevert>();
	readonly #options: EditorLinkOptions;
	readonly #writer: PiMessageWriter;
	readonly #reviewWriter: PiMessageWriter;
	readonly #scanner: StateDirScanner;
	#editorPid: number | null = null;
	/** pi's writes for editors, in order: the change set, written off pi's thread, and each message that follows it. */
	readonly #queue = new PublishQueue();
	#published = false;
	/** Waits for the editor's answer under way (awaitFileReport): how many of pi's changes it has to answer. */
	#waiting = 0;
	#closed = false;
	#lastWarning: string | undefined;
	/** v0.5: the latest send's fate, published in pi's message. */
	#sent: PiMessage["sent"] | null = null;
	/** Issue 26: each file as a tool about to write it found it, with the newest seq then (for the change's `merge`). */
	readonly #before = new Map<string, { content: FileContent; seq: number }>();
	/** Issue 26: each file's latest change (a `before` read earlier than it is stale: another tool wrote in between). */
	readonly #changedAt = new Map<string, number>();

	constructor(options: EditorLinkOptions) {
		this.#options = options;
		this.log = new ChangeLog(options.seqCounter ?? processSeqCounter());
		// v0.5: named by pi's identity, its pid and (outside the initial namespace) its namespace.
		const ns = options.pidNamespace ?? null;
		this.#writer = new PiMessageWriter(
			options.stateDir,
			options.pid,
			options.uid,
			piFileName("message", options.pid, ns),
		);
		this.#reviewWriter = new PiMessageWriter(
			options.stateDir,
			options.pid,
			options.uid,
			piFileName("review", options.pid, ns),
		);
		this.#scanner = new StateDirScanner(options.stateDir, options.uid, { paths: options.paths ?? [] });
	}

	get path(): string {
		return this.#writer.path;
	}

	/** The connection may have changed: tell the editors (only once there is something to tell). */
	sync(): void {
		const pid = this.#options.connected()?.pid ?? null;
		if (pid === this.#editorPid) return;
		this.#editorPid = pid;
		if (pid !== null || this.#published) this.#publish(this.changes.runs().length > 0);
	}

	/** v0.5: tell the editor what became of its send (pi's message, `sent`). */
	sendFate(sent: NonNullable<PiMessage["sent"]>): void {
		this.#sent = { ...sent };
		this.#publish();
	}

	/** A prompt's run begins. Also re-checks the connection: a switch between look-alike editors leaves the pill as it was. */
	startRun(): void {
		this.log.startRun();
		this.changes.startRun();
		this.sync();
	}

	/**
	 * Before a tool runs: when it will write a file pi has not touched yet in this run, keep the file's content
	 * now as the change set's baseline. The seq it will get is the next one (a blocked or failed tool records
	 * no change, so its baseline is never published).
	 */
	beforeTool(toolName: string, input: unknown): void {
		if (this.#closed) return;
		const file = this.#toolFile(toolName, input);
		if (file === null) return;
		// Issue 26: the change's own hunks (for a merge into an unsaved buffer) need the file before every tool.
		const content = readForReview(file);
		this.#before.set(file, { content, seq: this.log.seq });
		if (!this.changes.hasBaseline(file)) this.changes.before(file, content, this.log.seq + 1);
	}

	endTurn(): void {
		if (this.log.endTurn() && (this.#editorPid !== null || this.#published)) this.#publish();
	}

	/**
	 * After a tool finished: when it wrote a file, publish the change and, if a v0.3 editor is connected,
	 * wait (at most the caps) for its answer. Returns the note for the tool result, or null.
	 */
	async afterTool(toolName: string, input: unknown, signal?: AbortSignal): Promise<string | null> {
		if (this.#closed) return null;
		const file = this.#toolFile(toolName, input);
		if (file === null) return null;
		const after = readForReview(file);
		const before = this.#before.get(file);
		this.#before.delete(file);
		// Another change of the file recorded since `before` was read (parallel tool calls): its hunks are not known.
		const fresh = before !== undefined && (this.#changedAt.get(file) ?? 0) <= before.seq;
		const seq = this.log.record(file, toolName, fresh ? mergeInfo(before.content, after) : undefined);
		this.#changedAt.set(file, seq);
		const recorded = this.changes.after(file, after);
		const editor = this.#options.connected();
		this.#editorPid = editor?.pid ?? null;
		if (!editor) {
			if (this.#published) this.#publish(recorded);
			return null;
		}
		this.#publish(recorded);
		if (!speaksV03(editor.state)) return null;
		// An ignored file: no wait for what the editor will say of it, and none of its words (a linter quotes lines).
		if (this.#excluded(file)) return excludedNote(file);
		// The editor answers the message announcing this change: the wait begins once it is out, not once every
		// write queued since is (the other parallel tool calls' changes: the editor may answer and, its hold
		// passed, drop this report meanwhile, PROTOCOL.md `files`).
		await this.#queue.announced(seq);
		const caps = this.#options.waitCaps ?? WAIT_CAPS;
		// The editor has as many of pi's changes to answer as there are waits under way (parallel tool calls).
		this.#waiting += 1;
		const outcome = await awaitFileReport(
			{ ...this.#ports(editor.pid), outstanding: () => this.#waiting },
			file,
			seq,
			caps,
			signal,
			this.#options.pid,
			this.#options.pidNamespace ?? null,
		).finally(() => {
			this.#waiting -= 1;
		});
		const latest = this.#read(editor.pid) ?? editor.state;
		return formatToolNote(latest, file, outcome, caps);
	}

	/**
	 * With a prompt: the note telling the model which of pi's hunks the user reverted in the connected editor
	 * since it was last told (v0.4), and which reverts it was told of the user undid since, or null. Each once:
	 * an undone revert redone is news again. `scanned`: `connected()` comes from a verifying scan made for this
	 * very prompt (the one its block was built from): its state is used as it is, not read a second time.
	 */
	revertNote(scanned = false): string | null {
		const editor = this.#options.connected();
		if (this.#closed || !editor) return null;
		const state = (scanned ? null : this.#read(editor.pid)) ?? editor.state;
		const excluded = (file: string) => this.#excluded(file);
		const undone = undoneReverts(state, editor.pid, this.#toldReverts);
		for (const r of undone) this.#toldReverts.delete(revertKey(r));
		const fresh = newReverts(
			state,
			this.#options.pid,
			this.changes.runs(),
			this.#toldReverts,
			excluded,
			this.#options.pidNamespace ?? null,
		);
		for (const r of fresh) this.#toldReverts.set(revertKey(r), { revert: r, editorPid: editor.pid });
		const notes = [
			formatUndoneNote(
				undone.filter((r) => !excluded(r.file)),
				this.#options.cwd,
			),
			formatRevertNote(fresh, this.#options.cwd),
		];
		const text = notes.filter((n) => n !== null).join("\n\n");
		return text === "" ? null : text;
	}

	/**
	 * After pi's `read` (v0.5): when the connected editor holds the file with unsaved changes, what the read's result
	 * becomes (the buffer's lines for the read's offset and limit), or null (the disk read stands: no editor, no
	 * unsaved buffer for the file, or the ignore rules exclude it, which sends nothing of the buffer).
	 */
	async unsavedRead(input: unknown, caps: ReadCaps, signal?: AbortSignal): Promise<UnsavedRead | null> {
		if (this.#closed) return null;
		const args = input && typeof input === "object" ? (input as Record<string, unknown>) : {};
		const path = args["path"];
		if (typeof path !== "string" || path === "") return null;
		const file = resolveToolPath(path, this.#options.cwd, this.#options.home);
		if (file === null) return null;
		const editor = this.#options.connected();
		if (!editor) return null;
		await this.#awaitSeen(editor.pid, editor.state, signal);
		const found = this.#unsavedBuffer(editor.pid, editor.state, file);
		if (!found || this.#excluded(file)) return null;
		return formatUnsavedRead({
			path,
			editor: formatEditorName(found.state),
			buffer: found.buffer,
			offset: args["offset"],
			limit: args["limit"],
			caps,
		});
	}

	/**
	 * The editor hands its unsaved buffers over only while a pi's message names it, and writes them once it has seen
	 * that message (its state then echoes this pi in `pi`). A read right after pi connected may come first: wait for
	 * that echo, at most the report wait's `answerMs` (an editor that never answers, or one older than v0.5, costs no
	 * more; the disk read then stands). No wait when the state already names a copy or echoes this pi.
	 */
	async #awaitSeen(pid: number, known: EditorState, signal?: AbortSignal): Promise<void> {
		const seen = (state: EditorState | null) =>
			state === null ||
			(state.buffers_serial !== undefined && state.buffers_serial !== null) ||
			state.pi?.pid === this.#options.pid;
		if (!speaksV03(known) || seen(this.#read(pid) ?? known)) return;
		await this.flush();
		const ports = this.#ports(pid);
		const answerMs = (this.#options.waitCaps ?? WAIT_CAPS).answerMs;
		await new Promise<void>((resolve) => {
			const cleanups: (() => void)[] = [];
			let done = false;
			const finish = () => {
				if (done) return;
				done = true;
				releaseAll(cleanups);
				resolve();
			};
			const check = () => {
				try {
					if (seen(ports.read())) finish();
				} catch {
					// Unreadable now: the next change or the cap decides.
				}
			};
			if (signal?.aborted) return finish();
			signal?.addEventListener("abort", finish, { once: true });
			cleanups.push(() => signal?.removeEventListener("abort", finish));
			cleanups.push(ports.setTimer(finish, answerMs));
			cleanups.push(ports.subscribe(check));
			check();
		});
	}

	/**
	 * The connected editor's unsaved buffer of `file`: its state file read fresh, then the `<pid>.buffers.json` it
	 * names. The editor writes that file before the state naming it, so a serial that does not match is a write
	 * that landed in between: both are read once more.
	 */
	#unsavedBuffer(pid: number, known: EditorState, file: string) {
		for (let attempt = 1; attempt <= 2; attempt++) {
			const state = this.#read(pid) ?? known;
			const serial = state.buffers_serial;
			if (serial === undefined || serial === null) return null;
			const read = this.#scanner.readBuffers(pid);
			if (read.kind === "gone") continue;
			if (read.kind === "problem") {
				this.#warnOnce(`the editor's unsaved buffers (${pid}.buffers.json) ${read.message}`);
				return null;
			}
			const parsed = parseEditorBuffers(read.text, pid, serial);
			if (!parsed.ok) {
				if (parsed.problem.startsWith("serial")) continue;
				this.#warnOnce(`the editor's unsaved buffers (${pid}.buffers.json): ${parsed.problem}`);
				return null;
			}
			// The editor names its buffers by its own paths; a sandboxed pi's `file` is one of pi's (path-map.ts).
			const paths = this.#options.paths ?? [];
			const buffers =
				paths.length === 0 ? parsed.buffers : parsed.buffers.map((b) => ({ ...b, file: toPiPath(b.file, paths) }));
			const buffer = buffers.find((b) => b.file === file) ?? sameFile(buffers, file);
			return buffer ? { state, buffer } : null;
		}
		return null;
	}

	/** For `/ide status`: the change set's runs, files and hunks, and how many reverts the model was told. */
	changeSummary(): { runs: number; files: number; hunks: number; revertsTold: number } {
		const runs = this.changes.runs().filter((r) => r.files.length > 0);
		const files = runs.flatMap((r) => r.files);
		const hunks = files.reduce((n, f) => n + f.hunks_total, 0);
		return { runs: runs.length, files: files.length, hunks, revertsTold: this.#toldReverts.size };
	}

	/** The state file of editor `pid`, read fresh and watched: the v0.4 approval (approval-desk.ts) waits on it too. */
	editorPorts(pid: number): WaitPorts {
		return this.#ports(pid);
	}

	/** Once every write under way has landed (the change set and the messages after it). Never rejects. */
	flush(): Promise<void> {
		return this.#queue.flush();
	}

	/**
	 * No more writes; pi's files are removed, at once when no write is under way, else once it has landed (a
	 * removal before a pending rename would leave the file behind).
	 */
	close(): Promise<void> {
		this.#closed = true;
		const remove = () => {
			this.#writer.remove();
			this.#reviewWriter.remove();
		};
		if (!this.#queue.busy) {
			remove();
			return Promise.resolve();
		}
		return this.flush().then(remove);
	}

	/** Whether the ignore rules keep `file` from the model; a predicate that throws counts as yes. */
	#excluded(file: string): boolean {
		try {
			return this.#options.excluded?.(file) ?? false;
		} catch {
			return true;
		}
	}

	/** The absolute path a file-writing tool's input names, resolved as pi's tools do; null for other tools. */
	#toolFile(toolName: string, input: unknown): string | null {
		if (!FILE_WRITING_TOOLS.has(toolName)) return null;
		const path = input && typeof input === "object" ? (input as Record<string, unknown>)["path"] : undefined;
		if (typeof path !== "string" || path === "") return null;
		return resolveToolPath(path, this.#options.cwd, this.#options.home);
	}

	/**
	 * `withReview`: the change set changed too. It is encoded now and written first, off pi's thread, so an
	 * editor reloading on the message finds it; the message follows it. Without one under way the message is
	 * written at once.
	 */
	#publish(withReview = false): void {
		if (this.#closed) return;
		if (withReview) this.#publishReview();
		// Encoded now, with the change set above: a message built later could announce changes (a later tool's)
		// whose change set is still on its way.
		const { content, text } = encodePiMessage(
			mapPiMessage(
				buildPiMessage({
					pid: this.#options.pid,
					cwd: this.#options.cwd,
					now: (this.#options.nowMs?.() ?? Date.now()) / 1000,
					editorPid: this.#editorPid,
					log: this.log,
					pidNamespace: this.#options.pidNamespace ?? null,
					sent: this.#sent,
				}),
				this.#options.paths ?? [],
			),
		);
		// Published from now on (landed or on its way): later changes of the connection must follow it.
		this.#published = true;
		// Its `seq`: the newest change it announces. A newer message queued behind the writes under way replaces it.
		this.#queue.push("message", () => this.#writeMessage(content, text), { announces: this.log.seq, atOnce: true });
	}

	#writeMessage(content: string, text: string): void {
		if (this.#closed) return;
		const outcome = this.#writer.write(content, text);
		if (outcome.ok) this.#lastWarning = undefined;
		else this.#warnOnce(outcome.message);
	}

	#warnOnce(message: string): void {
		if (message === this.#lastWarning) return;
		this.#lastWarning = message;
		this.#options.warn?.(`pi-ide-context: ${message}`);
	}

	#publishReview(): void {
		const chunks = encodeReviewChunks({
			protocol: "0.4",
			kind: "pi-review",
			pid: this.#options.pid,
			editor_pid: this.#editorPid,
			timestamp: (this.#options.nowMs?.() ?? Date.now()) / 1000,
			runs: mapReviewRuns(this.changes.runs(), this.#options.paths ?? []),
			...(this.#options.pidNamespace ? { pid_ns: this.#options.pidNamespace } : {}),
		});
		// Never skipped as unchanged (its timestamp changes with every publish anyway), only for a newer one. A
		// megabyte or more: written off pi's thread (on ext4 the rename over the old file alone costs about 3 ms),
		// after the writes under way.
		this.#queue.push("review", async () => {
			const outcome = await this.#reviewWriter.writeAsync(chunks);
			if (!outcome.ok) this.#warnOnce(outcome.message);
		});
	}

	#read(pid: number) {
		const verdict = this.#scanner.readOne(pid);
		return verdict.kind === "editor" ? verdict.record.state : null;
	}

	#ports(pid: number): WaitPorts {
		const name = stateFileName(pid);
		return {
			read: () => this.#read(pid),
			subscribe: (listener) => {
				let watcher: FSWatcher | undefined;
				try {
					watcher = watch(this.#options.stateDir, { persistent: false }, (_event, changed) => {
						if (changed === null || changed === name) listener();
					});
					watcher.on("error", () => {});
				} catch {
					// No watcher: the backstop below still notices the answer.
				}
				const backstop = setInterval(listener, BACKSTOP_MS);
				backstop.unref();
				return () => {
					clearInterval(backstop);
					watcher?.close();
				};
			},
			now: () => performance.now(),
			setTimer: (fn, ms) => {
				const timer = setTimeout(fn, ms);
				return () => clearTimeout(timer);
			},
		};
	}
}
