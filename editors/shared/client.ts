/**
 * The write rules every TypeScript client shares, around one host callback (`snapshot`): urgent events
 * (active editor, workspace, focus) write at once, cursor and text events are debounced (200 ms), a state
 * that differs from the last written one only in `timestamp` is not written again unless forced (focus:
 * the `/ide` picker orders editors by that time), and disabling or disposing deletes the file. Nothing here
 * throws into the host: a failure becomes one warning (until a write succeeds again) plus a log line.
 */

import {
	MAX_STATE_FILE_BYTES,
	readOwnPidNamespace,
	removeStateFile,
	stateFilePath,
	writeStateFile,
} from "../../src/protocol/state-dir.ts";
import {
	buildEditorState,
	type EditorState,
	fitStateFile,
	type HostSnapshot,
	SelectionClock,
	type StateV03,
	stateKey,
} from "./state.ts";
import { type DirtyDocument, UnsavedBuffers } from "./unsaved-buffers.ts";

export const DEBOUNCE_MS = 200;

export interface Timers {
	setTimeout(fn: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

export interface ClientOptions {
	app: string;
	pid: number;
	dir: string;
	/**
	 * The host's current state; `undefined` means "nothing to report now, keep the last file", `keepDocument` "keep
	 * the last file's document, write the rest" (nothing is written before a first state with a document).
	 */
	snapshot(): HostSnapshot | undefined;
	/** Shown to the user, once per failure streak. */
	warn(message: string): void;
	log?(message: string): void;
	debounceMs?: number;
	/** Milliseconds since the epoch. */
	now?(): number;
	timers?: Timers;
	/** Owner the state dir must have; default the process uid. */
	uid?: number;
	/**
	 * v0.5: the documents with unsaved changes, the active one first, handed to pi in `<pid>.buffers.json`
	 * (unsaved-buffers.ts); undefined while no pi is connected (no document is looked at then). Absent: never.
	 */
	unsavedBuffers?(): DirtyDocument[] | undefined;
}

const defaultTimers: Timers = {
	setTimeout: (fn, ms) => setTimeout(fn, ms),
	clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export type FlushOutcome = "written" | "unchanged" | "skipped" | "disabled" | "failed";

export class StateClient {
	readonly path: string;
	readonly #options: ClientOptions;
	readonly #clock = new SelectionClock();
	/** This process's pid namespace, read once (PROTOCOL.md v0.5 `pid_ns`). */
	readonly #pidNamespace = readOwnPidNamespace();
	readonly #timers: Timers;
	#timer: unknown;
	#lastKey: string | undefined;
	/** The state last written: its document stays while the host reports `keepDocument`. */
	#last: (EditorState & StateV03) | undefined;
	#enabled = true;
	#warned = false;
	#lastError: string | undefined;
	/** v0.5: the unsaved buffers' file, written before the state that names it. */
	readonly #buffers: UnsavedBuffers;
	#buffersWarned = false;

	constructor(options: ClientOptions) {
		this.#options = options;
		this.#timers = options.timers ?? defaultTimers;
		this.path = stateFilePath(options.dir, options.pid);
		// An undefined uid is the process uid (state-dir.ts's default).
		this.#buffers = new UnsavedBuffers(options.dir, options.pid, options.uid);
	}

	get enabled(): boolean {
		return this.#enabled;
	}

	/** The last failure, if the latest attempt failed. */
	get lastError(): string | undefined {
		return this.#lastError;
	}

	/** Debounced write, for cursor and text events. */
	schedule(): void {
		if (!this.#enabled) return;
		this.#cancel();
		this.#timer = this.#timers.setTimeout(() => {
			this.#timer = undefined;
			this.flush();
		}, this.#options.debounceMs ?? DEBOUNCE_MS);
	}

	/** Write now (cancelling a pending debounced write). `force` writes even an unchanged state. */
	flush(options: { force?: boolean } = {}): FlushOutcome {
		this.#cancel();
		if (!this.#enabled) return "disabled";
		try {
			const snapshot = this.#options.snapshot();
			if (snapshot === undefined) return "skipped";
			const now = Math.floor((this.#options.now?.() ?? Date.now()) / 1000);
			const built = buildEditorState(snapshot, {
				pid: this.#options.pid,
				pidNamespace: this.#pidNamespace,
				app: this.#options.app,
				now,
				clock: this.#clock,
			});
			const last = this.#last;
			if (snapshot.keepDocument && last === undefined) return "skipped";
			const state: EditorState & StateV03 =
				snapshot.keepDocument && last !== undefined
					? { ...built, cwd: last.cwd, argv: last.argv, active_buffer: last.active_buffer }
					: built;
			const serial = this.#prepareBuffers(now);
			if (serial !== undefined) state.buffers_serial = serial;
			const key = stateKey(state);
			if (!options.force && key === this.#lastKey) {
				if (serial === undefined) this.#removeBuffers();
				return "unchanged";
			}
			const fitted = fitStateFile(state, MAX_STATE_FILE_BYTES);
			if (!fitted.ok) {
				return this.#fail(
					`pi-ide-context: the state would be ${fitted.bytes} bytes, over pi's ${MAX_STATE_FILE_BYTES}-byte limit; not written`,
				);
			}
			const result = writeStateFile(this.#options.dir, this.#options.pid, fitted.content, this.#uid());
			if (!result.ok) return this.#fail(result.error);
			this.#lastKey = key;
			this.#last = fitted.state;
			this.#succeed();
			// The state no longer names the unsaved buffers (none dirty, or no pi connected): their file goes.
			if (serial === undefined) this.#removeBuffers();
			return "written";
		} catch (error) {
			return this.#fail(`pi-ide-context: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	/** Turn writing on (writes at once) or off (deletes the file). */
	setEnabled(enabled: boolean): void {
		if (enabled === this.#enabled) return;
		this.#enabled = enabled;
		if (enabled) {
			this.flush({ force: true });
		} else {
			this.#cancel();
			this.#remove();
		}
	}

	/** Stop and delete the state file; the client stays disabled. */
	dispose(): void {
		this.#enabled = false;
		this.#cancel();
		this.#remove();
	}

	#uid(): number | undefined {
		return this.#options.uid ?? process.getuid?.();
	}

	#remove(): void {
		// Only a file this client wrote: never delete a same-named file in a dir we did not write into.
		if (this.#lastKey === undefined) return;
		this.#lastKey = undefined;
		this.#last = undefined;
		const result = removeStateFile(this.#options.dir, this.#options.pid, this.#uid());
		if (!result.ok) this.#fail(result.error);
		this.#removeBuffers();
	}

	/** Write the unsaved buffers' file when due; the serial the state names, or undefined. */
	#prepareBuffers(now: number): number | undefined {
		const documents = this.#options.unsavedBuffers?.();
		if (documents === undefined || documents.length === 0) return undefined;
		const prepared = this.#buffers.prepare(documents, now);
		if (prepared.ok) {
			this.#buffersWarned = false;
			return prepared.serial;
		}
		// The state goes without buffers_serial: pi reads the disk, as before.
		const message = `pi-ide-context: not handing the unsaved buffers to pi: ${prepared.error}`;
		this.#options.log?.(message);
		if (!this.#buffersWarned) {
			this.#buffersWarned = true;
			try {
				this.#options.warn(message);
			} catch {
				// the host's own notification failed: nothing sensible is left to do
			}
		}
		return undefined;
	}

	#removeBuffers(): void {
		const result = this.#buffers.remove();
		if (!result.ok) this.#options.log?.(`pi-ide-context: ${result.error}`);
	}

	#cancel(): void {
		if (this.#timer === undefined) return;
		this.#timers.clearTimeout(this.#timer);
		this.#timer = undefined;
	}

	#fail(message: string): "failed" {
		this.#lastError = message;
		this.#options.log?.(message);
		if (!this.#warned) {
			this.#warned = true;
			try {
				this.#options.warn(message);
			} catch {
				// the host's own notification failed: nothing sensible is left to do
			}
		}
		return "failed";
	}

	#succeed(): void {
		this.#lastError = undefined;
		this.#warned = false;
	}
}
