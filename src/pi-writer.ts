/**
 * Writes pi's message file, `<state dir>/pi-<pid>.json`, under the same rules as an editor's state file:
 * only into a state dir that passes checkStateDir (ours, 0700, not a symlink), mode 0600, atomically through
 * an O_EXCL temp file (`pi-<pid>.json.tmp`, never followed if something else sits there), removed on exit.
 * Never throws: failures come back as a message for the shell to report once.
 */
import { closeSync, constants, fchmodSync, lstatSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { piMessageFileName } from "./protocol.ts";
import { checkStateDir, ensureStateDir } from "./scan.ts";

export type WriteOutcome = { ok: true; skipped: boolean } | { ok: false; message: string };

export class PiMessageWriter {
	readonly path: string;
	readonly #dir: string;
	readonly #uid: number;
	#lastContent: string | undefined;
	#written = false;

	constructor(dir: string, pid: number, uid: number) {
		this.#dir = dir;
		this.#uid = uid;
		this.path = join(dir, piMessageFileName(pid));
	}

	/** Replace the file with `text` unless `content` (the text minus volatile fields) is what it already holds. */
	write(content: string, text: string): WriteOutcome {
		if (this.#written && content === this.#lastContent) return { ok: true, skipped: true };
		try {
			ensureStateDir(this.#dir);
			const health = checkStateDir(this.#dir, this.#uid);
			if (!health.ok) return { ok: false, message: `not writing to ${this.#dir}: it ${health.reason}` };
			const tmp = `${this.path}.tmp`;
			const fd = this.#openTemp(tmp);
			if (typeof fd === "string") return { ok: false, message: fd };
			try {
				const data = Buffer.from(text, "utf8");
				let offset = 0;
				while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
				// The umask can only remove bits from 0600; fchmod makes the mode exact.
				fchmodSync(fd, 0o600);
			} catch (error) {
				closeSync(fd);
				unlinkQuietly(tmp);
				return { ok: false, message: `cannot write ${tmp}: ${String(error)}` };
			}
			closeSync(fd);
			renameSync(tmp, this.path);
			this.#lastContent = content;
			this.#written = true;
			return { ok: true, skipped: false };
		} catch (error) {
			return { ok: false, message: `cannot write ${this.path}: ${String(error)}` };
		}
	}

	/** Delete the file (session end). Only inside a state dir that still passes the checks. */
	remove(): void {
		if (!this.#written) return;
		this.#written = false;
		this.#lastContent = undefined;
		if (!checkStateDir(this.#dir, this.#uid).ok) return;
		unlinkQuietly(`${this.path}.tmp`);
		unlinkQuietly(this.path);
	}

	/** O_EXCL|O_NOFOLLOW: never write through something planted at the temp path. Our own leftover is replaced once. */
	#openTemp(tmp: string): number | string {
		const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
		try {
			return openSync(tmp, flags, 0o600);
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") return `cannot create ${tmp}: ${String(error)}`;
		}
		const stats = lstatSync(tmp, { throwIfNoEntry: false });
		if (!stats?.isFile() || stats.uid !== this.#uid) return `${tmp} exists and is not our temp file; not writing`;
		unlinkQuietly(tmp);
		try {
			return openSync(tmp, flags, 0o600);
		} catch (error) {
			return `cannot create ${tmp}: ${String(error)}`;
		}
	}
}

function unlinkQuietly(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Already gone is the goal.
	}
}
