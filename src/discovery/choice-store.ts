/**
 * Where remembered `/ide` choices live: `<agent dir>/ide-context/choices.json`
 * (`~/.pi/agent/ide-context/choices.json` by default), written with the state
 * dir's rules for private files (state-dir.ts: a 0700 directory of ours, an
 * O_EXCL temp file, 0600, a rename, so a reader never sees half a file); read
 * without following symlinks, only when it is a regular file of ours under the
 * size limit, and parsed as untrusted input (choices.ts). Nothing here throws:
 * problems are returned.
 */

import { lstatSync, mkdirSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { readKey } from "../protocol/file-version.ts";
import { oversize, readPrivateFile, writePrivateFile } from "../protocol/state-dir.ts";
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
	/**
	 * May remember() replace the file? Only when it is missing or was read and found invalid (not JSON, bad
	 * entries, over the size limit). After any other problem (unreadable, another owner, not a regular file,
	 * replaced on every read) its contents are unknown: other projects' choices may be in it.
	 */
	replaceable: boolean;
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
	 * What the file looks like now, without reading it (src/protocol/file-version.ts): a change means another pi
	 * session remembered a choice. null when it does not exist.
	 */
	signature(): string | null {
		try {
			const stats = lstatSync(this.path, { throwIfNoEntry: false });
			return stats ? readKey(stats) : null;
		} catch {
			return null;
		}
	}

	load(): LoadResult {
		// A file replaced while being read (another pi session remembering a choice) is read again: treating it
		// as empty would let remember() write back a file without the other session's choices.
		for (let attempt = 0; ; attempt++) {
			const loaded = this.#loadOnce();
			if (loaded !== "replaced") return loaded;
			if (attempt >= 2) {
				return {
					choices: EMPTY_CHOICES,
					problems: [`${this.path} kept changing while read: ignored`],
					replaceable: false,
				};
			}
		}
	}

	#loadOnce(): LoadResult | "replaced" {
		const refused = (why: string, replaceable = false): LoadResult => ({
			choices: EMPTY_CHOICES,
			problems: [`${this.path} ${why}`],
			replaceable,
		});
		let seen: Stats | undefined;
		try {
			seen = lstatSync(this.path, { throwIfNoEntry: false });
		} catch (error) {
			return refused(`cannot be read: ${describe(error)}`);
		}
		if (!seen) return { choices: EMPTY_CHOICES, problems: [], replaceable: true };
		if (!seen.isFile()) return refused("is not a regular file: ignored");
		// Too big is invalid content (we never write that much): replaceable. Another owner is not.
		let oversized = false;
		const read = readPrivateFile(this.path, seen, {
			maxBytes: MAX_BYTES,
			refuse: (stats) => {
				if (this.#uid >= 0 && stats.uid !== this.#uid) return `is owned by uid ${stats.uid}: ignored`;
				const tooBig = oversize(stats.size, MAX_BYTES);
				oversized = tooBig !== undefined;
				return tooBig;
			},
		});
		if (read.kind === "gone") return "replaced";
		if (read.kind === "problem") return refused(read.message, oversized);
		const parsed = parseChoices(read.text);
		return {
			choices: parsed.choices,
			problems: parsed.problems.map((p) => `${this.path}: ${p}`),
			replaceable: true,
		};
	}

	/**
	 * Set (or with null, forget) one project's choice. Re-reads the file first, so two pi sessions
	 * remembering choices for different projects do not undo each other. Returns a problem or null. A file
	 * that could not be read (see LoadResult.replaceable) is left alone: writing would drop what it holds.
	 */
	remember(project: string, choice: RememberedChoice | null): string | null {
		const current = this.load();
		if (!current.replaceable) {
			return `choice not remembered: ${current.problems.join("; ")}; the file is left as it is (it may hold other projects' choices): fix or remove it`;
		}
		return this.#write(withChoice(current.choices, project, choice));
	}

	#write(choices: ChoicesFile): string | null {
		try {
			// pi makes its agent dir; a fresh one may not exist yet (the rules below create only the last part).
			mkdirSync(dirname(this.dir), { recursive: true, mode: 0o700 });
		} catch {
			// writePrivateFile says what is wrong
		}
		// The state dir's rules for private files (0700 dir, O_EXCL temp, 0600, rename): one home for them.
		const written = writePrivateFile(
			this.dir,
			CHOICES_FILE,
			formatChoices(choices),
			this.#uid >= 0 ? this.#uid : undefined,
		);
		return written.ok ? null : `choice not remembered: ${written.error}`;
	}
}

function describe(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code}` : String(error);
}
