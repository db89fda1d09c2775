/**
 * The only module that reads the state directory. It decides which files may be
 * trusted at all (owner, mode, no symlinks, size, name) and hands the rest to
 * the protocol parser. Expected failures come back as diagnostics, never as
 * exceptions: a file that vanishes mid-scan is normal (an editor just exited or
 * renamed its temp file over it), and one bad file never hides the good ones.
 *
 * A small cache keyed by (inode, size, mtime, ctime) means a verifying rescan
 * costs one readdir plus one lstat per file; only files that changed are opened
 * again. While a watcher reports every change, a rescan may skip even the lstat
 * of files no event named (`scan("changed")`).
 *
 * Where the directory is and when it may be trusted: src/protocol/state-dir.ts.
 */
import { lstatSync, readdirSync, type Stats, unlinkSync } from "node:fs";
import { join } from "node:path";
import { type EditorState, parseEditorState } from "../protocol/protocol.ts";
import {
	checkStateDir,
	type DirHealth,
	MAX_STATE_FILE_BYTES,
	oversize,
	parseStateFileName,
	readPrivateFile,
	stateFileName,
} from "../protocol/state-dir.ts";

export interface EditorRecord {
	/** Absolute path of the state file. */
	path: string;
	pid: number;
	state: EditorState;
	/** The file's mtime in unix seconds: when its editor last wrote it. */
	writtenAt: number;
	/** The file's inode: a leftover is removed only if it is still the very file judged. */
	ino: number;
	/** v0.3 fields that were present but malformed and were dropped (protocol.ts), for `/ide status`. */
	warnings?: readonly string[];
}

export interface ScanDiagnostic {
	path: string;
	message: string;
}

export interface ScanResult {
	health: DirHealth;
	editors: EditorRecord[];
	diagnostics: ScanDiagnostic[];
}

type FileVerdict = { kind: "editor"; record: EditorRecord } | { kind: "problem"; message: string } | { kind: "gone" };

interface CacheEntry {
	signature: string;
	verdict: FileVerdict;
}

export type ScanMode = "verify" | "changed";

/** How often one scan looks again at a state file that was replaced while it was being read. */
const MAX_READ_ATTEMPTS = 5;

export class StateDirScanner {
	readonly dir: string;
	readonly uid: number;
	readonly #cache = new Map<string, CacheEntry>();
	/** Names a watcher reported since the last scan; `scan("changed")` checks only these (and new names). */
	readonly #dirty = new Set<string>();

	constructor(dir: string, uid: number) {
		this.dir = dir;
		this.uid = uid;
	}

	/** A watcher saw `name` change. */
	markChanged(name: string): void {
		this.#dirty.add(name);
	}

	/**
	 * Read the directory now. Never throws. "verify" (the default) lstats every file;
	 * "changed" reuses cached files no watcher event named, which is only right while
	 * a live watcher reports every change.
	 */
	scan(mode: ScanMode = "verify"): ScanResult {
		const health = checkStateDir(this.dir, this.uid);
		if (!health.ok) {
			this.#cache.clear();
			return { health, editors: [], diagnostics: [] };
		}
		let names: string[];
		try {
			names = readdirSync(this.dir);
		} catch (error) {
			return {
				health: {
					ok: false,
					dir: this.dir,
					problem: "uninspectable",
					missing: false,
					reason: `cannot list it: ${describeError(error)}`,
				},
				editors: [],
				diagnostics: [],
			};
		}
		const editors: EditorRecord[] = [];
		const diagnostics: ScanDiagnostic[] = [];
		const seen = new Set<string>();
		for (const name of names) {
			const pid = parseStateFileName(name);
			// `<pid>.json.tmp` is a write in progress; anything else (`0<pid>.json` too) is not ours to judge.
			if (pid === undefined) continue;
			seen.add(name);
			const path = join(this.dir, name);
			const cached = mode === "changed" && !this.#dirty.has(name) ? this.#cache.get(name) : undefined;
			const verdict = cached ? cached.verdict : this.#readCached(name, path, pid);
			if (verdict.kind === "editor") editors.push(verdict.record);
			else if (verdict.kind === "problem") diagnostics.push({ path, message: verdict.message });
		}
		for (const name of this.#cache.keys()) if (!seen.has(name)) this.#cache.delete(name);
		this.#dirty.clear();
		return { health, editors, diagnostics };
	}

	/** Re-read one state file, bypassing the cache (the connected editor, right before injecting). */
	readOne(pid: number): FileVerdict {
		const name = stateFileName(pid);
		this.#cache.delete(name);
		if (!checkStateDir(this.dir, this.uid).ok) return { kind: "gone" };
		return this.#readCached(name, join(this.dir, name), pid);
	}

	/**
	 * Remove the state file of an editor that has exited (its pid is dead). Only the very file judged
	 * (same inode and mtime, still a regular file of ours) and only inside a trusted directory: never a
	 * file a new editor just wrote, never a file that is not ours. Returns whether it was removed.
	 */
	removeLeftover(record: EditorRecord): boolean {
		try {
			if (!checkStateDir(this.dir, this.uid).ok) return false;
			const stats = lstatSync(record.path, { throwIfNoEntry: false });
			if (!stats?.isFile() || stats.uid !== this.uid) return false;
			if (stats.ino !== record.ino || stats.mtimeMs / 1000 !== record.writtenAt) return false;
			unlinkSync(record.path);
			this.#cache.delete(stateFileName(record.pid));
			return true;
		} catch {
			return false;
		}
	}

	#readCached(name: string, path: string, pidFromName: number): FileVerdict {
		// An editor renames a new file over its state file on every write; one that lands between the lstat and
		// the open makes the read see another inode ("gone"). That is a newer state, not a vanished editor: look
		// again, a few times, so a busy editor never drops out of a scan (or out of the read before injecting).
		for (let attempt = 1; ; attempt++) {
			let stats: Stats | undefined;
			try {
				stats = lstatSync(path, { throwIfNoEntry: false });
			} catch (error) {
				return { kind: "problem", message: `cannot inspect: ${describeError(error)}` };
			}
			if (!stats) {
				this.#cache.delete(name);
				return { kind: "gone" };
			}
			const signature = `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.mode}:${stats.uid}`;
			const cached = this.#cache.get(name);
			if (cached && cached.signature === signature) return cached.verdict;
			const verdict = this.#judge(path, stats, pidFromName);
			if (verdict.kind !== "gone") {
				this.#cache.set(name, { signature, verdict });
				return verdict;
			}
			if (attempt === MAX_READ_ATTEMPTS) {
				return { kind: "problem", message: `replaced ${MAX_READ_ATTEMPTS} times while being read: skipped this time` };
			}
		}
	}

	#judge(path: string, stats: Stats, pidFromName: number): FileVerdict {
		const refused = this.#refuse(stats);
		if (refused) return { kind: "problem", message: refused };
		const read = readPrivateFile(path, stats, { maxBytes: MAX_STATE_FILE_BYTES });
		if (read.kind !== "text") return read;
		const parsed = parseEditorState(read.text);
		if (!parsed.ok) return { kind: "problem", message: `invalid state file: ${parsed.problems.join("; ")}` };
		if (parsed.state.pid !== pidFromName) {
			return {
				kind: "problem",
				message: `pid field ${parsed.state.pid} does not match the file name ${pidFromName}.json`,
			};
		}
		const record: EditorRecord = {
			path,
			pid: pidFromName,
			state: parsed.state,
			writtenAt: stats.mtimeMs / 1000,
			ino: stats.ino,
		};
		if (parsed.warnings) record.warnings = parsed.warnings;
		return { kind: "editor", record };
	}

	#refuse(stats: Stats): string | undefined {
		if (stats.isSymbolicLink()) return "is a symbolic link: refused";
		if (!stats.isFile()) return "is not a regular file: refused";
		if (stats.uid !== this.uid) return `is owned by uid ${stats.uid}, not by you: refused`;
		return oversize(stats.size, MAX_STATE_FILE_BYTES);
	}
}

function describeError(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code} (${e.message})` : String(error);
}
