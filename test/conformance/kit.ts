/**
 * The conformance kit's harness, between the cases (test/conformance/cases/*.ts) and a client's adapter
 * (test/conformance/client.ts): it lays out a project and a runtime dir for an editor, starts it through the
 * adapter, and reads what the client wrote through pi's own rules (src/protocol: the validator, the state
 * file name, the limits). A case is data plus one `run` function over a `Kit`; test/conformance/kit.test.ts
 * runs every case against every adapter.
 */
import assert from "node:assert/strict";
import {
	chmodSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type EditorState, parseEditorState } from "../../src/protocol/protocol.ts";
import { STATE_DIR_NAME } from "../../src/protocol/state-dir.ts";
import { pollUntil } from "../helpers/poll.ts";
import type { Capability, ClientAdapter, ClientSession } from "./client.ts";

/**
 * How long a case waits for a client to write what an act calls for (debounced writes take 200 ms). A
 * failure detector, not a latency bound (the benchmarks measure latency): the test command runs four files
 * at once on two cores, where one of code-server's browser round trips once took over 5 s.
 */
export const WRITE_WAIT_MS = 15_000;

/**
 * How long a case watches for something that must not happen (a write without a UI, a reload of a modified
 * buffer). A negative cannot be awaited; each such wait is followed by a positive control in the same editor.
 */
export const QUIET_MS = 400;

/** One editor as a case sees it: the session, where its files are, and pi's reading of what it wrote. */
export interface Editor {
	readonly session: ClientSession;
	/** The editor's working directory (a real path). */
	readonly project: string;
	/** `XDG_RUNTIME_DIR` the editor started with. */
	readonly runtimeDir: string;
	/** `<runtimeDir>/pi-ide`. */
	readonly stateDir: string;
	/** `<stateDir>/<pid>.json`. */
	readonly statePath: string;
	/** Write `text` to `<project>/<name>` and return its absolute path. */
	file(name: string, text: string): string;
	/** The state file's text, or null when there is none. */
	rawState(): string | null;
	/**
	 * The state file as pi reads it, or null when there is none. A file pi's validator refuses, or one whose
	 * v0.3 fields it would drop, fails the case with the validator's words.
	 */
	readState(): EditorState | null;
	/** Poll the state file until `accept` holds. */
	until(accept: (state: EditorState) => boolean, what: string, timeoutMs?: number): Promise<EditorState>;
	/** The client's notices since the editor started (ClientSession.messages). */
	notices(): Promise<string[]>;
}

export interface StartEditor {
	/** Lay out the runtime dir before the editor starts (the state dir is `<runtimeDir>/pi-ide`). */
	layout?: (runtimeDir: string) => void;
	/** The runtime dir itself; default a fresh private dir. */
	runtimeDir?: string;
	headless?: boolean;
	/** A file of the project (by name) to open at start, with this text. */
	file?: { name: string; text: string };
}

/** What a case gets: the adapter, its shared editor, and editors of its own (disposed after the case). */
export interface Kit {
	readonly adapter: ClientAdapter;
	/** The adapter's one editor shared by every case that allows it; started on first use. */
	shared(): Promise<Editor>;
	/** An editor for this case alone. */
	start(options?: StartEditor): Promise<Editor>;
	/** A fresh private temp dir, removed after the case. */
	tmp(): string;
}

export interface KitCase {
	name: string;
	/** Capabilities the case drives; without one of them it is not run for that adapter (and the kit says so). */
	needs?: Capability[];
	/**
	 * Why the case cannot run on this machine for this adapter, or undefined when it can (a foreign owner
	 * needs root to chown). Reported like a missing capability, never a pass.
	 */
	unavailable?: () => string | undefined;
	/**
	 * The case drives only editors it starts itself (`kit.start`), never the shared one, so the kit may run it
	 * beside the shared editor's cases (ClientAdapter.rowLanes). The rows of the editor-per-row tables are such
	 * cases without saying so. A case that says so and asks for the shared editor fails.
	 */
	ownEditors?: boolean;
	/**
	 * A case in editors of its own that waits seconds on purpose (quiet periods for what must not happen, a
	 * client's probe of a dead pi): the suite starts these first, so that its lanes end together.
	 */
	long?: boolean;
	/**
	 * A case in an editor of its own that quits it: the suite starts these last, where what an adapter does to
	 * replace the editor (code-server loads a new window for the next session, seconds) delays no other case.
	 */
	quits?: boolean;
	run(kit: Kit): Promise<void>;
}

/** Every temp dir of the kit starts with this. */
const TEMP_PREFIX = "pi-ide-kit-";

export function makeTempDir(): string {
	return realpathSync(mkdtempSync(join(tmpdir(), TEMP_PREFIX)));
}

/**
 * Start `adapter`'s editor in a fresh project with a throwaway HOME. Returns the editor and its cleanup (the
 * session's dispose, then the temp dirs).
 */
export async function startEditor(
	adapter: ClientAdapter,
	options: StartEditor = {},
): Promise<{ editor: Editor; dispose: () => Promise<void> }> {
	const root = makeTempDir();
	const project = join(root, "project");
	const home = join(root, "home");
	mkdirSync(project);
	mkdirSync(home);
	let runtimeDir = options.runtimeDir;
	if (runtimeDir === undefined) {
		runtimeDir = join(root, "run");
		mkdirSync(runtimeDir);
		chmodSync(runtimeDir, 0o700);
	}
	options.layout?.(runtimeDir);
	const env: Record<string, string> = {
		HOME: home,
		XDG_RUNTIME_DIR: runtimeDir,
		PATH: process.env["PATH"] ?? "/usr/bin:/bin",
		LANG: "C.UTF-8",
	};
	let file: string | undefined;
	if (options.file) {
		file = join(project, options.file.name);
		writeText(file, options.file.text);
	}
	let session: ClientSession | undefined;
	const dispose = async () => {
		try {
			await session?.dispose();
		} finally {
			// A killed editor's helper can still be moving its last state file into place (Vim's client writes
			// through an `mv` job, which outlives a SIGKILLed Vim): the removal tries again rather than leave
			// the directory behind (ENOTEMPTY).
			rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
		}
	};
	try {
		session = await adapter.start({
			cwd: project,
			env,
			...(file === undefined ? {} : { file }),
			...(options.headless ? { headless: true } : {}),
		});
	} catch (error) {
		await dispose();
		throw error;
	}
	return { editor: makeEditor(session, project, runtimeDir), dispose };
}

function makeEditor(session: ClientSession, project: string, runtimeDir: string): Editor {
	const stateDir = join(runtimeDir, STATE_DIR_NAME);
	const statePath = join(stateDir, `${session.pid}.json`);
	const rawState = (): string | null => readTextOrNull(statePath);
	const readState = (): EditorState | null => {
		const text = rawState();
		if (text === null) return null;
		return readAsPi(text, statePath);
	};
	return {
		session,
		project,
		runtimeDir,
		stateDir,
		statePath,
		file: (name, text) => {
			const path = join(project, name);
			writeText(path, text);
			return path;
		},
		rawState,
		readState,
		until: async (accept, what, timeoutMs = WRITE_WAIT_MS) => {
			let last: string | null = null;
			// pi's reading of the text last read: the same text reads the same (a poll reads it every 10 ms).
			let read: { text: string; state: EditorState } | undefined;
			return pollUntil(
				() => {
					last = rawState();
					if (last === null) return undefined;
					if (read?.text !== last) read = { text: last, state: readAsPi(last, statePath) };
					return accept(read.state) ? read.state : undefined;
				},
				() => `${what}; last state file: ${last === null ? "(none)" : last.slice(0, 2000)}`,
				timeoutMs,
			);
		},
		notices: () => session.messages(),
	};
}

/** pi's reading of a state file: the validator's problems, and v0.3 fields it would drop, fail the case. */
export function readAsPi(text: string, path: string): EditorState {
	const parsed = parseEditorState(text);
	if (!parsed.ok) throw new Error(`pi refuses ${path}: ${parsed.problems.join("; ")}\n${text.slice(0, 2000)}`);
	if (parsed.warnings && parsed.warnings.length > 0) {
		throw new Error(`pi drops fields of ${path}: ${parsed.warnings.join("; ")}\n${text.slice(0, 2000)}`);
	}
	return parsed.state;
}

/** The text of the regular file at `path`, or null when there is none (pi never reads through a symlink). */
function readTextOrNull(path: string): string | null {
	if (lstatSync(path, { throwIfNoEntry: false })?.isFile() !== true) return null;
	try {
		return readFileSync(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw error;
	}
}

function writeText(path: string, text: string): void {
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, text);
}

/**
 * That no temp file (`*.tmp`) is left in the editor's state dir. The editor may be writing its state file at any
 * moment, and a write in flight has its temp for that moment: this waits for none to be there, so only a temp that
 * stays fails.
 */
export async function assertNoTempLeft(editor: Editor, what = "no temp file left"): Promise<void> {
	const temps = () => stateDirEntries(editor).filter((n) => n.endsWith(".tmp"));
	await pollUntil(() => (temps().length === 0 ? true : undefined), what, WRITE_WAIT_MS).catch(() => undefined);
	assert.deepEqual(temps(), [], what);
}

/**
 * Whether a report on a file pi changed (pi's text is not the buffer's) is the one the editor settles on: VS Code
 * says `unchanged` while its own reload of the clean buffer is late (over 1.5 s under the suite's load), then
 * `reloaded`.
 */
export const settledOnChange = (report: { status: string }): boolean => report.status !== "unchanged";

/** Names in the state dir (none when it is missing). */
export function stateDirEntries(editor: Editor): string[] {
	try {
		return readdirSync(editor.stateDir).sort();
	} catch {
		return [];
	}
}

/**
 * The JSON string value of the first `"<key>":` in `json`, exactly as it is spelled in the file (escapes
 * included), or undefined. For limits that apply to the encoded text: what the file spends on it.
 */
export function encodedStringField(json: string, key: string): string | undefined {
	const match = new RegExp(`"${key}"\\s*:\\s*"`).exec(json);
	if (!match) return undefined;
	const start = match.index + match[0].length;
	for (let i = start; i < json.length; i++) {
		if (json[i] === "\\") i++;
		else if (json[i] === '"') return json.slice(start, i);
	}
	return undefined;
}

/** Unix seconds now, fractional, as the clients write them. */
export const nowSeconds = (): number => Date.now() / 1000;

/** Wait `ms` for something that must not happen (see QUIET_MS). */
export function quietPeriod(ms = QUIET_MS): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Lines of `text` as a buffer holds them (the text ends with a newline). */
export const linesOf = (text: string): string[] => text.replace(/\n$/, "").split("\n");

/**
 * The active buffer's file as an absolute path: a relative `file` (a host that only knows vault-relative
 * paths, Obsidian) resolves against `cwd`, as pi resolves it.
 */
export function activeFile(state: EditorState): string | null {
	const file = state.active_buffer.file;
	if (file === null) return null;
	return isAbsolute(file) ? file : resolve(state.cwd, file);
}

/**
 * For adapters of hosts that count in UTF-16 (VS Code, CodeMirror): the 0-based UTF-16 offset in `line` of
 * the character that starts at 1-based byte column `column`, and the offset just after that character (a
 * selection's exclusive end for the protocol's inclusive one).
 */
export function utf16Span(line: string, column: number): { start: number; end: number } {
	let bytes = 0;
	let offset = 0;
	for (const char of line) {
		if (bytes >= column - 1) return { start: offset, end: offset + char.length };
		bytes += Buffer.byteLength(char);
		offset += char.length;
	}
	return { start: offset, end: offset };
}
