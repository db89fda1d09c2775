/**
 * The one factory for editor states and state files in the tests: `makeState` builds a valid v0.2 state
 * from named overrides, `writeStateFile` puts one in a state dir the way a client does (`<pid>.json`, atomic
 * tmp + rename, 0600) or deliberately wrong (misnamed, malformed, oversized, mid-write, through a symlink,
 * with another mode). Pure apart from `node:fs`, so unit tests use it as well as the end-to-end ones.
 */
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after } from "node:test";
import type { EditorState, Selection } from "../../src/protocol/protocol.ts";

/** Unix seconds now, whole (as the fixtures' editors write them). */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Any field of a v0.3 state (v0.3's `protocol`, `files`, `pi`, `active_buffer.version`/`diagnostics` too). */
export interface StateOverrides extends Partial<Omit<EditorState, "active_buffer">> {
	active_buffer?: Partial<EditorState["active_buffer"]>;
}

/**
 * A valid v0.2 state: nvim (pid 4242) in `cwd` (default `/p`) with `file` (default `<cwd>/src/main.ts`)
 * open, named after the file, TypeScript, cursor 42:10, 200 lines, saved, no selection, written now.
 * `active_buffer` overrides are merged field by field; everything else replaces. v0.3 fields are added
 * only when given, so a state without them stays a v0.2 file.
 */
export function makeState(overrides: StateOverrides = {}): EditorState {
	const { active_buffer: buffer, ...rest } = overrides;
	const cwd = overrides.cwd ?? "/p";
	const file = buffer?.file === undefined ? join(cwd, "src/main.ts") : buffer.file;
	return {
		pid: 4242,
		cwd,
		timestamp: nowSeconds(),
		app: "nvim",
		...rest,
		active_buffer: {
			file,
			name: file === null ? "[No Name]" : basename(file),
			language: "typescript",
			cursor: { line: 42, column: 10 },
			selection: null,
			modified: false,
			lines_total: 200,
			...buffer,
		},
	};
}

/** A selection of `text` made `ageSeconds` ago (default now: fresh; null: no time); lines start..start+n-1. */
export function makeSelection(
	text: string,
	options: { startLine?: number; ageSeconds?: number | null } = {},
): Selection {
	const startLine = options.startLine ?? 40;
	const lines = text.split("\n");
	const age = options.ageSeconds === undefined ? 0 : options.ageSeconds;
	return {
		start: { line: startLine, column: 1 },
		end: { line: startLine + lines.length - 1, column: Math.max(1, (lines.at(-1) ?? "").length) },
		text,
		selected_at: age === null ? null : nowSeconds() - age,
	};
}

export interface WriteOptions {
	/** File name; default `<pid>.json`. */
	name?: string;
	/** File mode; default 0o600. */
	mode?: number;
	/** Write this text instead of the state's JSON (malformed files). */
	text?: string;
	/** Pad the JSON past this many bytes with an unknown field (which the schema tolerates). */
	padTo?: number;
	/** Leave the file as `<name>.tmp`, as a client mid-write does (readers must ignore it). */
	inFlight?: boolean;
	/** Write the file into this directory instead and make `<stateDir>/<name>` a symlink to it. */
	symlinkTo?: string;
}

/** Write a state file (see WriteOptions for the wrong kinds) and return the path in the state dir. */
export function writeStateFile(stateDir: string, state: EditorState | object, options: WriteOptions = {}): string {
	const name = options.name ?? `${String((state as { pid?: unknown }).pid)}.json`;
	const mode = options.mode ?? 0o600;
	let text = options.text ?? JSON.stringify(state);
	if (options.padTo !== undefined) {
		text = JSON.stringify({ ...state, padding: "x".repeat(Math.max(0, options.padTo - text.length)) });
	}
	const path = join(stateDir, name);
	if (options.symlinkTo !== undefined) {
		const target = join(options.symlinkTo, name);
		writeFileSync(target, text, { mode });
		symlinkSync(target, path);
		return path;
	}
	if (options.inFlight) {
		writeFileSync(`${path}.tmp`, text, { mode });
		return `${path}.tmp`;
	}
	const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
	writeFileSync(tmp, text, { mode });
	chmodSync(tmp, mode); // the umask filters writeFileSync's mode
	renameSync(tmp, path);
	return path;
}

/**
 * A maker of private state dirs (`<tmp>/<prefix>XXXX/pi-ide`, mode 0700) for one test file, all removed when the
 * file's tests end. Call it at the top of the file.
 */
export function privateStateDirs(prefix: string): () => string {
	const roots: string[] = [];
	after(() => {
		for (const root of roots) rmSync(root, { recursive: true, force: true });
	});
	return () => {
		const root = mkdtempSync(join(tmpdir(), prefix));
		roots.push(root);
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700); // the umask filters mkdir's mode
		return dir;
	};
}
