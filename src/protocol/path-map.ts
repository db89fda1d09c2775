/**
 * Paths as the editors know them and as pi's tools can open them, for pi in a sandbox or a container (bubblewrap,
 * docker, podman, a devcontainer) beside editors on the host. Pure: the text of /proc/self/mountinfo and the
 * user's `ideContext.paths` setting in, mappings out; a path mapped either way with the longest matching directory.
 *
 * A mapping says "the editor's directory E is pi's directory P". They come from two places:
 * - the setting, an object `{ "<E>": "<P>" }` (absolute paths; the user's word, taken first);
 * - bind mounts pi sees in /proc/self/mountinfo whose `root` field (the directory of the mounted file system that
 *   was bound) differs from where it is mounted: bubblewrap's `--bind /home/u/proj /workspace/proj` shows root
 *   /home/u/proj at /workspace/proj. That root is the host's path when the bound directory's file system is the
 *   host's root file system (or mounted at the same path inside); the setting covers the rest.
 */
import type { EditorState, PiMessage } from "./protocol.ts";
import type { ApprovalRequest, ReviewFile, ReviewRun } from "./wire.ts";

/** The editor's directory and the same directory as pi sees it. */
export interface PathMapping {
	readonly editor: string;
	readonly pi: string;
	readonly from: "setting" | "mount";
}

/** One line of /proc/self/mountinfo: the bound root and where it is mounted, both unescaped. */
export interface MountEntry {
	readonly root: string;
	readonly mountPoint: string;
	readonly fsType: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040, \011, \012, \134). */
const unescapeMount = (field: string): string =>
	field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));

/** The entries of /proc/self/mountinfo; lines that do not parse are skipped (the kernel writes it, not a user). */
export function parseMountinfo(text: string): MountEntry[] {
	const entries: MountEntry[] = [];
	for (const line of text.split("\n")) {
		const fields = line.split(" ");
		const dash = fields.indexOf("-", 6);
		const root = fields[3];
		const mountPoint = fields[4];
		const fsType = fields[dash + 1];
		if (dash < 0 || root === undefined || mountPoint === undefined || fsType === undefined) continue;
		entries.push({ root: unescapeMount(root), mountPoint: unescapeMount(mountPoint), fsType });
	}
	return entries;
}

/** Pseudo file systems, whose roots are no directory of the host's. */
const PSEUDO = new Set(["proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "tmpfs", "devtmpfs", "overlay"]);

/**
 * The bind mounts that put a directory at another path (root is not "/" and not the mount point), newest mount
 * last wins for a mount point (mountinfo lists in mount order); pseudo file systems are left out.
 */
export function mountMappings(entries: readonly MountEntry[]): PathMapping[] {
	const byMountPoint = new Map<string, PathMapping>();
	for (const entry of entries) {
		byMountPoint.delete(entry.mountPoint);
		if (PSEUDO.has(entry.fsType) || entry.root === "/" || entry.root === entry.mountPoint) continue;
		if (!entry.root.startsWith("/") || entry.root.includes("//deleted")) continue;
		byMountPoint.set(entry.mountPoint, { editor: entry.root, pi: entry.mountPoint, from: "mount" });
	}
	return [...byMountPoint.values()];
}

/** A directory without its trailing slashes ("/" stays "/"). */
const trimmed = (dir: string): string => (dir.length > 1 ? dir.replace(/\/+$/, "") || "/" : dir);

/** `path` is `dir` or inside it, at a component boundary. */
function under(path: string, dir: string): boolean {
	if (dir === "/") return path.startsWith("/");
	return path === dir || path.startsWith(`${dir}/`);
}

/**
 * The `ideContext.paths` setting: an object of absolute directories, the editor's to pi's. Problems name the entry
 * and are reported once; the good entries are used.
 */
export function parsePathSetting(value: unknown): { mappings: PathMapping[]; problems: string[] } {
	if (value === undefined) return { mappings: [], problems: [] };
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		return {
			mappings: [],
			problems: [
				'"paths" must be an object: { "<directory as the editors report it>": "<the same directory as pi sees it>" }',
			],
		};
	}
	const mappings: PathMapping[] = [];
	const problems: string[] = [];
	for (const [editor, pi] of Object.entries(value)) {
		if (!editor.startsWith("/") || typeof pi !== "string" || !pi.startsWith("/")) {
			problems.push(
				`"paths": ${JSON.stringify(editor)} -> ${JSON.stringify(pi)} is not an absolute directory to an absolute directory`,
			);
			continue;
		}
		mappings.push({ editor: trimmed(editor), pi: trimmed(pi), from: "setting" });
	}
	return { mappings, problems };
}

/** The setting's mappings first (the user's word), then the mounts' where the setting says nothing of that directory. */
export function combineMappings(setting: readonly PathMapping[], mounts: readonly PathMapping[]): PathMapping[] {
	const taken = new Set(setting.map((m) => m.editor));
	return [...setting, ...mounts.filter((m) => !taken.has(m.editor))];
}

function mapWith(path: string, mappings: readonly PathMapping[], from: "editor" | "pi", to: "editor" | "pi"): string {
	let best: PathMapping | undefined;
	for (const mapping of mappings) {
		if (!under(path, mapping[from])) continue;
		if (best === undefined || mapping[from].length > best[from].length) best = mapping;
	}
	if (best === undefined) return path;
	const rest = best[from] === "/" ? path.slice(1) : path.slice(best[from].length + 1);
	if (rest === "" || path === best[from]) return best[to];
	return best[to] === "/" ? `/${rest}` : `${best[to]}/${rest}`;
}

/** Some mapping covers `path` (one of pi's paths, or an editor's): it is the same file on both sides. */
export const isMapped = (path: string, mappings: readonly PathMapping[], side: "editor" | "pi"): boolean =>
	mappings.some((mapping) => under(path, mapping[side]));

/** An editor's absolute path as pi's tools can open it (unchanged when no mapping covers it). */
export const toPiPath = (path: string, mappings: readonly PathMapping[]): string =>
	mapWith(path, mappings, "editor", "pi");

/** One of pi's absolute paths as the editors know it (unchanged when no mapping covers it). */
export const toEditorPath = (path: string, mappings: readonly PathMapping[]): string =>
	mapWith(path, mappings, "pi", "editor");

// ---- The two directions of the data path: an editor's state as pi reads it, pi's files as editors read them ----

const absoluteToPi = (path: string, mappings: readonly PathMapping[]): string =>
	path.startsWith("/") ? toPiPath(path, mappings) : path;

/**
 * An editor's state with every path in pi's terms: `cwd`, the active buffer's `file` (a relative one stays
 * relative to the mapped cwd), absolute `argv` entries, `files` reports, `windows` and `reverted` hunks. The
 * scanner applies it to every state it reads (src/discovery/scan.ts), so the rest of pi only ever sees pi's own
 * paths. The same object when nothing maps.
 */
export function mapEditorState<S extends EditorState>(state: S, mappings: readonly PathMapping[]): S {
	if (mappings.length === 0) return state;
	const map = (path: string) => absoluteToPi(path, mappings);
	const buffer = <B extends { file: string | null }>(b: B): B => (b.file === null ? b : { ...b, file: map(b.file) });
	const mapped: S = { ...state, cwd: map(state.cwd), active_buffer: buffer(state.active_buffer) };
	if (state.argv) mapped.argv = state.argv.map(map);
	if (state.files) mapped.files = state.files.map((f) => ({ ...f, file: map(f.file) }));
	if (state.reverted) mapped.reverted = state.reverted.map((r) => ({ ...r, file: map(r.file) }));
	if (state.windows)
		mapped.windows = state.windows.map((w) => ({
			...w,
			cwd: map(w.cwd),
			active_buffer: buffer(w.active_buffer),
			...(w.argv ? { argv: w.argv.map(map) } : {}),
		}));
	return mapped;
}

/** pi's message (`pi-<pid>.json`) naming files as the editors know them: `cwd`, `changed`, `last_turn`. */
export function mapPiMessage(message: PiMessage, mappings: readonly PathMapping[]): PiMessage {
	if (mappings.length === 0) return message;
	const map = (path: string) => toEditorPath(path, mappings);
	return {
		...message,
		cwd: map(message.cwd),
		changed: message.changed.map((c) => ({ ...c, file: map(c.file) })),
		last_turn: message.last_turn.map(map),
	};
}

/**
 * Each mapped change-set file, by pi's own object: the encoder keeps each file's bytes by object
 * (src/link/change-set.ts), so an unchanged file must map to the same object again.
 */
const mappedFiles = new WeakMap<ReviewFile, { mappings: readonly PathMapping[]; file: ReviewFile }>();

/** The change set's runs naming files as the editors know them (the same runs when nothing maps). */
export function mapReviewRuns(runs: readonly ReviewRun[], mappings: readonly PathMapping[]): ReviewRun[] {
	if (mappings.length === 0) return [...runs];
	return runs.map((run) => ({
		...run,
		files: run.files.map((file) => {
			const known = mappedFiles.get(file);
			if (known?.mappings === mappings) return known.file;
			const mapped = { ...file, file: toEditorPath(file.file, mappings) };
			mappedFiles.set(file, { mappings, file: mapped });
			return mapped;
		}),
	}));
}

/** An approval request naming its file as the editors know it. */
export function mapApprovalRequest(request: ApprovalRequest, mappings: readonly PathMapping[]): ApprovalRequest {
	return mappings.length === 0 ? request : { ...request, file: toEditorPath(request.file, mappings) };
}
