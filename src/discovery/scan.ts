/**
 * The only module that reads the state directory. It decides which files may be
 * trusted at all (owner, mode, no symlinks, size, name) and hands the rest to
 * the protocol parser. Expected failures come back as diagnostics, never as
 * exceptions: a file that vanishes mid-scan is normal (an editor just exited or
 * renamed its temp file over it), and one bad file never hides the good ones.
 *
 * A small cache keyed by each file's version (src/protocol/file-version.ts: its
 * lstat signature, trusted once settled) means a verifying rescan costs one
 * readdir plus one lstat per file; only files that changed, or were read too soon
 * after a write to tell the next one apart, are opened again (and parsed again only
 * when their text changed). While a watcher
 * reports every change, a rescan may skip even the lstat of files no event named
 * (`scan("changed")`).
 *
 * Where the directory is and when it may be trusted: src/protocol/state-dir.ts.
 */
import { lstatSync, readdirSync, type Stats, unlinkSync } from "node:fs";
import { join } from "node:path";
import { type FileVersion, isUnchanged, RACY_WINDOW_MS, signatureOf, versionOf } from "../protocol/file-version.ts";
import { MAX_BUFFERS_FILE_BYTES, MAX_REVIEW_BYTES } from "../protocol/limits.ts";
import { mapEditorState, type PathMapping } from "../protocol/path-map.ts";
import { type EditorState, PID_NAMESPACE_PATTERN, parseEditorState } from "../protocol/protocol.ts";
import {
	checkStateDir,
	type DirHealth,
	dirInfoOf,
	judgeStateDir,
	MAX_STATE_FILE_BYTES,
	oversize,
	type PrivateRead,
	parseStateFileName,
	readPrivateFile,
	refusePrivate,
	stateFileName,
} from "../protocol/state-dir.ts";
import { editorAnswersFileName, editorBuffersFileName, parsePiFileName } from "../protocol/wire.ts";

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

/**
 * One of another pi's files (`pi-<pid>.json`, `.review.json`, `.approval.json`): regular, ours, as the listing
 * saw it. Only ever a candidate for removal, once its pi is gone (IdeController).
 */
export interface PiFileRecord {
	path: string;
	pid: number;
	/**
	 * The pid namespace its name gives (v0.5 `pi-<pid>-<ns>.json`: `pid:[<ns>]`), or null for `pi-<pid>.json`, whose
	 * namespace only its `pid_ns` field says (piFileNamespace).
	 */
	nameNs: string | null;
	writtenAt: number;
	ino: number;
}

export interface ScanResult {
	health: DirHealth;
	editors: EditorRecord[];
	diagnostics: ScanDiagnostic[];
	/** pis' files in the directory, as the last full listing saw them (leftovers of a killed pi among them). */
	piFiles: PiFileRecord[];
}

type FileVerdict = { kind: "editor"; record: EditorRecord } | { kind: "problem"; message: string } | { kind: "gone" };

/** A state file the last verifying scan refused (a problem), to look at again. */
interface RefusedFile {
	name: string;
	path: string;
	pid: number;
}

interface CacheEntry {
	version: FileVersion;
	/** The text the verdict was made of (none for a file refused before reading). */
	text: string | undefined;
	verdict: FileVerdict;
}

export type ScanMode = "verify" | "changed";

/** How often one scan looks again at a state file that was replaced while it was being read. */
const MAX_READ_ATTEMPTS = 5;

export class StateDirScanner {
	readonly dir: string;
	readonly uid: number;
	readonly #cache = new Map<string, CacheEntry>();
	/** What the last verifying scan found, and the directory's version then. */
	#listing:
		| { version: FileVersion; editors: EditorRecord[]; refused: RefusedFile[]; piFiles: PiFileRecord[] }
		| undefined;
	/** Names a watcher reported since the last scan; `scan("changed")` checks only these (and new names). */
	readonly #dirty = new Set<string>();

	readonly #nowMs: () => number;
	readonly #racyWindowMs: number;
	readonly #paths: readonly PathMapping[];

	/**
	 * `clock`: tests set the time reads are stamped with, and scale the racy window (file-version.ts). `paths`:
	 * the editors' directories as pi sees them (pi in a sandbox or a container, path-map.ts): every state read
	 * names pi's paths from here on.
	 */
	constructor(
		dir: string,
		uid: number,
		clock: { nowMs?: () => number; racyWindowMs?: number; paths?: readonly PathMapping[] } = {},
	) {
		this.dir = dir;
		this.uid = uid;
		this.#nowMs = clock.nowMs ?? Date.now;
		this.#racyWindowMs = clock.racyWindowMs ?? RACY_WINDOW_MS;
		this.#paths = clock.paths ?? [];
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
		// Taken before the lstat: the listing that follows began no earlier (see file-version.ts).
		const readStartedMs = this.#nowMs();
		let dirStats: Stats | undefined;
		let health: DirHealth;
		try {
			dirStats = lstatSync(this.dir, { throwIfNoEntry: false });
			health = judgeStateDir(this.dir, dirInfoOf(dirStats), this.uid);
		} catch {
			health = checkStateDir(this.dir, this.uid); // says why it cannot be inspected
		}
		if (!health.ok || !dirStats) {
			this.#cache.clear();
			this.#listing = undefined;
			return { health, editors: [], diagnostics: [], piFiles: [] };
		}
		// Editors replace their files by rename (PROTOCOL.md, Writing), which changes the directory: while it stays
		// as the last verifying scan saw it (settled) and no watcher event came, every editor's file is as that scan
		// judged. A refused file is looked at again all the same: the user's repair (a chown, a chmod) changes
		// the file in place, and the next prompt must see it.
		const listing = this.#listing;
		if (this.#dirty.size === 0 && listing && isUnchanged(listing.version, dirStats)) {
			const editors = [...listing.editors];
			const diagnostics: ScanDiagnostic[] = [];
			for (const { name, path, pid } of listing.refused) {
				const verdict = this.#readCached(name, path, pid);
				if (verdict.kind === "editor") editors.push(verdict.record);
				else if (verdict.kind === "problem") diagnostics.push({ path, message: verdict.message });
			}
			return { health, editors, diagnostics, piFiles: [...listing.piFiles] };
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
				piFiles: [],
			};
		}
		const editors: EditorRecord[] = [];
		const piFiles: PiFileRecord[] = [];
		const diagnostics: ScanDiagnostic[] = [];
		const refused: RefusedFile[] = [];
		const seen = new Set<string>();
		for (const name of names) {
			const pid = parseStateFileName(name);
			// `<pid>.json.tmp` is a write in progress; anything else (`0<pid>.json` too) is not ours to judge.
			if (pid === undefined) {
				const piFile = this.#piFile(name);
				if (piFile) piFiles.push(piFile);
				continue;
			}
			seen.add(name);
			const path = join(this.dir, name);
			const cached = mode === "changed" && !this.#dirty.has(name) ? this.#cache.get(name) : undefined;
			const verdict = cached ? cached.verdict : this.#readCached(name, path, pid);
			if (verdict.kind === "editor") editors.push(verdict.record);
			else if (verdict.kind === "problem") {
				diagnostics.push({ path, message: verdict.message });
				refused.push({ name, path, pid });
			}
		}
		for (const name of this.#cache.keys()) if (!seen.has(name)) this.#cache.delete(name);
		this.#dirty.clear();
		// Only a verifying scan looked at every file; a "changed" one took the watcher's word for the rest.
		this.#listing =
			mode === "verify"
				? { version: versionOf(dirStats, readStartedMs, this.#racyWindowMs), editors, refused, piFiles }
				: undefined;
		return { health, editors: [...editors], diagnostics, piFiles: [...piFiles] };
	}

	/**
	 * Look at one state file now: one lstat, and a read only when it changed since the last (settled) read, as a
	 * verifying scan does for every file.
	 */
	readOne(pid: number): FileVerdict {
		const name = stateFileName(pid);
		if (!checkStateDir(this.dir, this.uid).ok) return { kind: "gone" };
		return this.#readCached(name, join(this.dir, name), pid);
	}

	/**
	 * Read editor `pid`'s unsaved buffers, `<pid>.buffers.json` (v0.5), under the state file's rules: a regular file
	 * of ours, never through a link, no group or other permission bits, at most MAX_BUFFERS_FILE_BYTES.
	 */
	readBuffers(pid: number): PrivateRead {
		try {
			if (!checkStateDir(this.dir, this.uid).ok) return { kind: "gone" };
			const path = join(this.dir, editorBuffersFileName(pid));
			const stats = lstatSync(path, { throwIfNoEntry: false });
			if (!stats) return { kind: "gone" };
			const refused = (s: Stats) => refusePrivate(s, this.uid, MAX_BUFFERS_FILE_BYTES);
			const early = refused(stats);
			if (early) return { kind: "problem", message: early };
			return readPrivateFile(path, stats, { maxBytes: MAX_BUFFERS_FILE_BYTES, refuse: refused });
		} catch (error) {
			return { kind: "problem", message: `cannot read: ${describeError(error)}` };
		}
	}

	/**
	 * Remove the state file of an editor, or a file of a pi, that has exited (its pid is dead or reused). Only the
	 * very file judged (same inode and mtime, still a regular file of ours) and only inside a trusted directory:
	 * never a file a new editor or pi just wrote, never a file that is not ours. Returns whether it was removed.
	 */
	removeLeftover(record: Pick<EditorRecord, "path" | "pid" | "ino" | "writtenAt">): boolean {
		try {
			if (!checkStateDir(this.dir, this.uid).ok) return false;
			const stats = lstatSync(record.path, { throwIfNoEntry: false });
			if (!stats?.isFile() || stats.uid !== this.uid) return false;
			if (stats.ino !== record.ino || stats.mtimeMs / 1000 !== record.writtenAt) return false;
			unlinkSync(record.path);
			// A gone editor's unsaved buffers (v0.5) go with its state file (never with a pi's file of the same pid).
			if (record.path === join(this.dir, stateFileName(record.pid))) this.#removeBuffersOf(record.pid);
			this.#cache.delete(stateFileName(record.pid));
			if (this.#listing) this.#listing.piFiles = this.#listing.piFiles.filter((f) => f.path !== record.path);
			return true;
		} catch {
			return false;
		}
	}

	/** `<pid>.buffers.json` and `<pid>.answers.json` (v0.5) of a gone editor: only a regular file of ours. */
	#removeBuffersOf(pid: number): void {
		for (const name of [editorBuffersFileName(pid), editorAnswersFileName(pid)]) {
			try {
				const path = join(this.dir, name);
				const stats = lstatSync(path, { throwIfNoEntry: false });
				if (stats?.isFile() && stats.uid === this.uid) unlinkSync(path);
			} catch {
				// Gone already, or not ours to remove.
			}
		}
	}

	/**
	 * The pid namespace a pi's file names (v0.5 `pid_ns`): undefined when it names none (a pi before v0.5), null
	 * when it cannot be read or parsed (then nothing about it is known: it is never removed). Read only on the way
	 * to removing the file, so a scan costs nothing more.
	 */
	piFileNamespace(file: Pick<PiFileRecord, "path">): string | undefined | null {
		try {
			const stats = lstatSync(file.path, { throwIfNoEntry: false });
			if (!stats?.isFile() || stats.uid !== this.uid) return null;
			const read = readPrivateFile(file.path, stats, { maxBytes: MAX_REVIEW_BYTES });
			if (read.kind !== "text") return null;
			const value: unknown = (JSON.parse(read.text) as { pid_ns?: unknown }).pid_ns;
			if (value === undefined) return undefined;
			return typeof value === "string" && PID_NAMESPACE_PATTERN.test(value) ? value : null;
		} catch {
			return null;
		}
	}

	/** A pi's file by its name: a regular file of ours (anything else is not a candidate for removal). */
	#piFile(name: string): PiFileRecord | undefined {
		const parsed = parsePiFileName(name);
		if (parsed === undefined) return undefined;
		const { pid } = parsed;
		const nameNs = parsed.ns === null ? null : `pid:[${parsed.ns}]`;
		const path = join(this.dir, name);
		try {
			const stats = lstatSync(path, { throwIfNoEntry: false });
			if (!stats?.isFile() || stats.uid !== this.uid) return undefined;
			return { path, pid, nameNs, writtenAt: stats.mtimeMs / 1000, ino: stats.ino };
		} catch {
			return undefined;
		}
	}

	#readCached(name: string, path: string, pidFromName: number): FileVerdict {
		// An editor renames a new file over its state file on every write; one that lands between the lstat and
		// the open makes the read see another inode ("gone"). That is a newer state, not a vanished editor: look
		// again, a few times, so a busy editor never drops out of a scan (or out of the read before injecting).
		for (let attempt = 1; ; attempt++) {
			// Taken before the lstat: the read that follows began no earlier (see file-version.ts).
			const readStartedMs = this.#nowMs();
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
			const cached = this.#cache.get(name);
			if (isUnchanged(cached?.version, stats)) return (cached as CacheEntry).verdict;
			// Read again only to settle it (the same signature), and found as before: the verdict stands, unparsed
			// (and its state object, which the controller's memos of tiers and ignore verdicts are keyed by).
			const settling = cached !== undefined && cached.version.signature === signatureOf(stats) ? cached : undefined;
			const judged = this.#judge(path, stats, pidFromName, settling);
			if (judged.verdict.kind !== "gone") {
				this.#cache.set(name, {
					version: versionOf(stats, readStartedMs, this.#racyWindowMs),
					text: judged.text,
					verdict: judged.verdict,
				});
				return judged.verdict;
			}
			if (attempt === MAX_READ_ATTEMPTS) {
				return { kind: "problem", message: `replaced ${MAX_READ_ATTEMPTS} times while being read: skipped this time` };
			}
		}
	}

	/** `settling`: what was read of this very signature before; the same text again keeps its verdict. */
	#judge(
		path: string,
		stats: Stats,
		pidFromName: number,
		settling?: CacheEntry,
	): { verdict: FileVerdict; text?: string } {
		const refused = this.#refuse(stats);
		if (refused) return { verdict: { kind: "problem", message: refused } };
		const read = readPrivateFile(path, stats, { maxBytes: MAX_STATE_FILE_BYTES });
		if (read.kind !== "text") return { verdict: read };
		const text = read.text;
		if (settling?.text === text) return { verdict: settling.verdict, text };
		const parsed = parseEditorState(text);
		if (!parsed.ok)
			return { verdict: { kind: "problem", message: `invalid state file: ${parsed.problems.join("; ")}` }, text };
		if (parsed.state.pid !== pidFromName) {
			return {
				verdict: {
					kind: "problem",
					message: `pid field ${parsed.state.pid} does not match the file name ${pidFromName}.json`,
				},
				text,
			};
		}
		const record: EditorRecord = {
			path,
			pid: pidFromName,
			state: mapEditorState(parsed.state, this.#paths),
			writtenAt: stats.mtimeMs / 1000,
			ino: stats.ino,
		};
		if (parsed.warnings) record.warnings = parsed.warnings;
		return { verdict: { kind: "editor", record }, text };
	}

	#refuse(stats: Stats, maxBytes = MAX_STATE_FILE_BYTES): string | undefined {
		if (stats.isSymbolicLink()) return "is a symbolic link: refused";
		if (!stats.isFile()) return "is not a regular file: refused";
		if (stats.uid !== this.uid) return `is owned by uid ${stats.uid}, not by you: refused`;
		return oversize(stats.size, maxBytes);
	}
}

function describeError(error: unknown): string {
	const e = error as NodeJS.ErrnoException;
	return e.code ? `${e.code} (${e.message})` : String(error);
}
