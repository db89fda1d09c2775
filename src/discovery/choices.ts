/**
 * Remembered `/ide` choices, per project (pi's working directory, real path):
 * a pick, or off. Pure: parsing (the file is untrusted input: anything odd is
 * a problem and is dropped, never an exception), updating, and resolving a
 * remembered pick against the live editors. The file itself is read and
 * written by choice-store.ts.
 *
 * A pick applies while the picked editor runs (same pid and same start time;
 * where a start time is unknown, same pid and the whole fingerprint: a pid and
 * an app alone match an unrelated editor after a reboot) and to a restarted
 * editor that looks the same: same app, product, cwd and argv. Two live editors that both look the same make it ambiguous: then
 * it does not apply and `/ide status` says so.
 */
import type { EditorState } from "../protocol/protocol.ts";

export const CHOICES_VERSION = 1;
/** The newest choices kept; older projects are forgotten first. */
export const MAX_PROJECTS = 200;
const MAX_ARGV = 64;
const MAX_STRING = 4096;
/** Start times of the same process read by two pi sessions differ by at most the boot time's rounding. */
const SAME_START_SLACK_SECONDS = 1;

export interface EditorFingerprint {
	app: string;
	product: string | null;
	cwd: string;
	argv: string[];
}

export type RememberedChoice =
	| { kind: "pick"; pid: number; startedAt: number | null; editor: EditorFingerprint; at: number }
	| { kind: "off"; at: number };

export interface ChoicesFile {
	version: typeof CHOICES_VERSION;
	projects: Record<string, RememberedChoice>;
}

export const EMPTY_CHOICES: ChoicesFile = { version: CHOICES_VERSION, projects: {} };

export function fingerprintOf(state: EditorState): EditorFingerprint {
	return { app: state.app, product: state.product ?? null, cwd: state.cwd, argv: [...(state.argv ?? [])] };
}

export function sameFingerprint(a: EditorFingerprint, b: EditorFingerprint): boolean {
	return (
		a.app === b.app &&
		a.product === b.product &&
		a.cwd === b.cwd &&
		a.argv.length === b.argv.length &&
		a.argv.every((arg, i) => arg === b.argv[i])
	);
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.length <= MAX_STRING;
const isTime = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

function parseFingerprint(raw: unknown): EditorFingerprint | null {
	if (!isObject(raw)) return null;
	const { app, product, cwd, argv } = raw;
	if (!isText(app) || !isText(cwd) || (product !== null && !isText(product))) return null;
	if (!Array.isArray(argv) || argv.length > MAX_ARGV || !argv.every(isText)) return null;
	return { app, product, cwd, argv: [...argv] };
}

function parseChoice(raw: unknown): RememberedChoice | null {
	if (!isObject(raw) || !isTime(raw["at"])) return null;
	const at = raw["at"];
	if (raw["kind"] === "off") return { kind: "off", at };
	if (raw["kind"] !== "pick") return null;
	const pid = raw["pid"];
	const startedAt = raw["started_at"];
	if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return null;
	if (startedAt !== null && !isTime(startedAt)) return null;
	const editor = parseFingerprint(raw["editor"]);
	return editor ? { kind: "pick", pid: pid as number, startedAt, editor, at } : null;
}

/** Parse the file's text. Never throws: bad parts are dropped and described. */
export function parseChoices(text: string): { choices: ChoicesFile; problems: string[] } {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		return { choices: EMPTY_CHOICES, problems: [`not JSON (${(error as Error).message})`] };
	}
	if (!isObject(raw)) return { choices: EMPTY_CHOICES, problems: ["not a JSON object"] };
	if (raw["version"] !== CHOICES_VERSION) {
		return { choices: EMPTY_CHOICES, problems: [`unknown version ${JSON.stringify(raw["version"])}`] };
	}
	const projects = raw["projects"];
	if (!isObject(projects)) return { choices: EMPTY_CHOICES, problems: ['"projects" is not an object'] };
	const out: Record<string, RememberedChoice> = {};
	const problems: string[] = [];
	for (const [project, value] of Object.entries(projects)) {
		const choice = isText(project) && project.startsWith("/") ? parseChoice(value) : null;
		if (choice) out[project] = choice;
		else problems.push(`invalid entry for ${JSON.stringify(project.slice(0, 200))}: dropped`);
	}
	return { choices: { version: CHOICES_VERSION, projects: out }, problems };
}

/** The file's text (snake_case on disk, like the protocol). */
export function formatChoices(choices: ChoicesFile): string {
	const projects: Record<string, unknown> = {};
	for (const [project, c] of Object.entries(choices.projects)) {
		projects[project] =
			c.kind === "off"
				? { kind: "off", at: c.at }
				: { kind: "pick", pid: c.pid, started_at: c.startedAt, editor: c.editor, at: c.at };
	}
	return `${JSON.stringify({ version: CHOICES_VERSION, projects }, null, 1)}\n`;
}

/** Set (or with null, forget) a project's choice; keeps the newest MAX_PROJECTS. */
export function withChoice(choices: ChoicesFile, project: string, choice: RememberedChoice | null): ChoicesFile {
	const projects = { ...choices.projects };
	delete projects[project];
	if (choice) projects[project] = choice;
	const kept = Object.entries(projects)
		.sort((a, b) => b[1].at - a[1].at)
		.slice(0, MAX_PROJECTS);
	return { version: CHOICES_VERSION, projects: Object.fromEntries(kept) };
}

export interface LiveEditor {
	pid: number;
	/** Unix seconds the process started, null when unknown. */
	startedAt: number | null;
	fingerprint: EditorFingerprint;
}

export type RememberedResolution =
	| { kind: "none" }
	| { kind: "off"; at: number }
	| { kind: "pick"; pid: number; how: "same editor" | "restarted editor"; at: number }
	| { kind: "ambiguous"; pids: number[]; at: number }
	| { kind: "absent"; editor: EditorFingerprint; at: number };

/** What a remembered choice means among the editors live now. */
export function resolveRemembered(
	choice: RememberedChoice | undefined,
	live: readonly LiveEditor[],
): RememberedResolution {
	if (!choice) return { kind: "none" };
	if (choice.kind === "off") return { kind: "off", at: choice.at };
	const same = live.find(
		(e) =>
			e.pid === choice.pid &&
			(e.startedAt === null || choice.startedAt === null
				? sameFingerprint(e.fingerprint, choice.editor)
				: Math.abs(e.startedAt - choice.startedAt) <= SAME_START_SLACK_SECONDS),
	);
	if (same) return { kind: "pick", pid: same.pid, how: "same editor", at: choice.at };
	const alike = live.filter((e) => sameFingerprint(e.fingerprint, choice.editor));
	const [only, ...others] = alike;
	if (only && others.length === 0) return { kind: "pick", pid: only.pid, how: "restarted editor", at: choice.at };
	if (only) return { kind: "ambiguous", pids: alike.map((e) => e.pid), at: choice.at };
	return { kind: "absent", editor: choice.editor, at: choice.at };
}
