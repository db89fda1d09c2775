/**
 * Where remembered `/ide` choices live: `<agent dir>/ide-context/choices.json`
 * (`~/.pi/agent/ide-context/choices.json` by default). The directory is created
 * 0700; the file is written 0600 through an O_EXCL temp file and a rename, so a
 * reader never sees half a file; it is read without following symlinks, only
 * when it is a regular file of ours under the size limit, and parsed as
 * untrusted input (choices.ts). Nothing here throws: problems are returned.
 */
import {
	closeSync,
	constants,
	fchmodSync,
	fstatSync,
	lstatSync,
	mkdirSync,
	openSync,
	readSync,
	renameSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { join } from "node:path";
import {
	type ChoicesFile,
	EMPTY_CHOICES,
	formatChoices,
	parseChoices,
	type RememberedChoice,
	withChoice,
} from "./choices.ts";

export const CHOICES_DIR = "ide-context";
export const CHOICES_FILE = "choices.json";
const MAX_BYTES = 256 * 1024;

export interface LoadResult {
	choices: ChoicesFile;
	/** Why (part of) the file was not used; empty when all is well or the file does not exist yet. */
	problems: string[];
}

export class ChoiceStore {
	readonly dir: string;
	readonly path: string;
	readonly #uid: number;

	constructor(agentDir: string, uid: number) {
		this.dir = join(agentDir, CHOICES_DIR);
		this.path = join(this.dir, CHOICES_FILE);
		this.#uid = uid;
	}

	/**
	 * What the file looks like now (inode, size, mtime), without reading it: a change means another pi
	 * session remembered a choice. null when it does not exist.
	 */
	signature(): string | null {
		try {
			const stats = lstatSync(this.path, { throwIfNoEntry: false });
			return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}` : null;
		} catch {
			return null;
		}
	}

	load(): LoadResult {
		const refused = (why: string): LoadResult => ({ choices: EMPTY_CHOICES, problems: [`${this.path} ${why}`] });
		let fd: number;
		try {
			const seen = lstatSync(this.path, { throwIfNoEntry: false });
			if (!seen) return { choices: EMPTY_CHOICES, problems: [] };
			if (!seen.isFile()) return refused("is not a regular file: ignored");
			fd = openSync(this.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		} catch (error) {
			return refused(`cannot be read: ${describe(error)}`);
		}
		try {
			const stats = fstatSync(fd);
			if (!stats.isFile()) return refused("is not a regular file: ignored");
			if (this.#uid >= 0 && stats.uid !== this.#uid) return refused(`is owned by uid ${stats.uid}: ignored`);
			if (stats.size > MAX_BYTES) return refused(`is ${stats.size} bytes, over ${MAX_BYTES}: ignored`);
			const buffer = Buffer.allocUnsafe(MAX_BYTES + 1);
			let length = 0;
			for (;;) {
				const n = readSync(fd, buffer, length, buffer.length - length, null);
				if (n === 0) break;
				length += n;
				if (length > MAX_BYTES) return refused(`is over ${MAX_BYTES} bytes: ignored`);
			}
			const parsed = parseChoices(buffer.toString("utf8", 0, length));
			return { choices: parsed.choices, problems: parsed.problems.map((p) => `${this.path}: ${p}`) };
		} catch (error) {
			return refused(`cannot be read: ${describe(error)}`);
		} finally {
			closeSync(fd);
		}
	}

	/**
	 * Set (or with null, forget) one project's choice. Re-reads the file first, so two pi sessions
	 * remembering choices for different projects do not undo each other. Returns a problem or null.
	 */
	remember(project: string, choice: RememberedChoice | null): string | null {
		const current = this.load();
		return this.#write(withChoice(current.choices, project, choice));
	}

	#write(choices: ChoicesFile): string | null {
		const tmp = `${this.path}.${process.pid}.tmp`;
		try {
			mkdirSync(this.dir, { recursive: true, mode: 0o700 });
			const dir = lstatSync(this.dir);
			if (!dir.isDirectory()) return `${this.dir} is not a directory: choice not remembered`;
			if (this.#uid >= 0 && dir.uid !== this.#uid) return `${this.dir} is not yours: choice not remembered`;
		} catch (error) {
			return `cannot create ${this.dir}: ${describe(error)}`;
		}
		let fd: number | undefined;
		try {
			try {
				fd = openSync(tmp, "wx", 0o600);
			} catch (error) {
				// A temp file of an earlier pi with our pid that died mid-write: ours, remove it once.
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
				const stale = lstatSync(tmp);
				if (!stale.isFile() || (this.#uid >= 0 && stale.uid !== this.#uid)) throw error;
				unlinkSync(tmp);
				fd = openSync(tmp, "wx", 0o600);
			}
			fchmodSync(fd, 0o600);
			const data = Buffer.from(formatChoices(choices), "utf8");
			let offset = 0;
			while (offset < data.length) offset += writeSync(fd, data, offset);
			closeSync(fd);
			fd = undefined;
			renameSync(tmp, this.path);
			return null;
		} catch (error) {
			if (fd !== undefined) closeSync(fd);
			try {
				unlinkSync(tmp);
			} catch {
				// nothing left behind
			}
			return `cannot write ${this.path}: ${describe(error)}`;
		}
	}
}

function describe(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code}` : String(error);
}
