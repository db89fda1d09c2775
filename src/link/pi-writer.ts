/**
 * pi's files for editors, `<state dir>/pi-<pid>.json` and `pi-<pid>.review.json`, written under exactly the rules of an editor's state file
 * (src/protocol/state-dir.ts: a private directory only, 0600, atomic through an O_EXCL temp file `pi-<pid>.json.tmp`,
 * removal only inside a directory that passes the checks). This class adds only the name and the skip of
 * writes that would change nothing. Never throws.
 */
import { join } from "node:path";
import { removePrivateFile, type WriteResult, writePrivateFile, writePrivateFileAsync } from "../protocol/state-dir.ts";
import { piMessageFileName } from "../protocol/wire.ts";

export type WriteOutcome = { ok: true; skipped: boolean } | { ok: false; message: string };

export class PiMessageWriter {
	readonly path: string;
	readonly #dir: string;
	readonly #name: string;
	readonly #uid: number;
	#lastContent: string | null | undefined;
	#written = false;

	/** `name`: the file's name in `dir`; default pi's message, `pi-<pid>.json` (the change set passes its own). */
	constructor(dir: string, pid: number, uid: number, name = piMessageFileName(pid)) {
		this.#dir = dir;
		this.#uid = uid;
		this.#name = name;
		this.path = join(dir, this.#name);
	}

	/**
	 * Replace the file with `text` unless `content` (the text minus volatile fields) is what it already holds;
	 * a null `content` always writes.
	 */
	write(content: string | null, text: string | Uint8Array | readonly Uint8Array[]): WriteOutcome {
		if (this.#written && content !== null && content === this.#lastContent) return { ok: true, skipped: true };
		try {
			return this.#settle(writePrivateFile(this.#dir, this.#name, text, this.#uid), content);
		} catch (error) {
			return { ok: false, message: `cannot write ${this.path}: ${String(error)}` };
		}
	}

	/**
	 * Replace the file with `text`, the bytes written and the rename done off pi's thread
	 * (`writePrivateFileAsync`): for the change set, a megabyte or more. Always writes; one at a time.
	 */
	async writeAsync(text: string | Uint8Array | readonly Uint8Array[]): Promise<WriteOutcome> {
		try {
			return this.#settle(await writePrivateFileAsync(this.#dir, this.#name, text, this.#uid), null);
		} catch (error) {
			return { ok: false, message: `cannot write ${this.path}: ${String(error)}` };
		}
	}

	/** A write's outcome; a written file now holds `content`. */
	#settle(result: WriteResult, content: string | null): WriteOutcome {
		if (!result.ok) return { ok: false, message: result.error };
		this.#lastContent = content;
		this.#written = true;
		return { ok: true, skipped: false };
	}

	/** Delete the file (session end). */
	remove(): void {
		if (!this.#written) return;
		this.#written = false;
		this.#lastContent = undefined;
		try {
			removePrivateFile(this.#dir, this.#name, this.#uid);
		} catch {
			// Shutting down: nothing left to report to.
		}
	}
}
