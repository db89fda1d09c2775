/**
 * User settings, read from the `ideContext` key of pi's settings.json (global
 * `~/.pi/agent/settings.json`, or a trusted project's `.pi/settings.json`), with
 * environment overrides. Pure: bad values fall back to defaults and come back
 * as problems the shell shows once, never as exceptions.
 */
import { DEFAULT_MAX_SELECTION_BYTES, DEFAULT_MAX_SELECTION_LINES } from "../context/blocks.ts";
import { type PathMapping, parsePathSetting } from "../protocol/path-map.ts";

export interface IdeSettings {
	/** "nerd": two Nerd Font glyphs; "plain": short text for terminals without a Nerd Font. */
	glyphs: "nerd" | "plain";
	/** Connect by itself when exactly one editor matches the project. */
	autoConnect: boolean;
	/** Caps for an injected selection. */
	maxSelectionLines: number;
	maxSelectionBytes: number;
	/** Link the bundled Neovim client into Neovim's packpath at session start (also off with PI_IDE_NO_NVIM_LINK=1). */
	linkNvim: boolean;
	/** Link the bundled Vim client into Vim's packpath at session start (also off with PI_IDE_NO_VIM_LINK=1). */
	linkVim: boolean;
	/**
	 * Send the whole block, selection text included, with every prompt (as 0.1.0 did). Off: a prompt
	 * sends only what the model does not already have (see context/model-view.ts).
	 */
	sendUnchanged: boolean;
	/** "edits": pi's write/edit wait for the user's approval in the editor or pi's dialog (v0.4); "off": they do not. */
	approve: "off" | "edits";
	/** How long a write/edit waits for approval; then it is not applied (and the model is told to ask). */
	approveTimeoutSeconds: number;
	/**
	 * How long a write/edit waits for the editor's answer (its reload report) before the model is told the editor
	 * did not answer; it grows with what the editor has to do (src/link/await-report.ts), up to five times this.
	 */
	answerWaitMs: number;
	/**
	 * pi in a sandbox or a container: `{ "<directory as the editors report it>": "<the same directory as pi sees
	 * it>" }`, for what pi's bind mounts do not tell (src/protocol/path-map.ts). Bad entries are named and skipped.
	 */
	paths: readonly PathMapping[];
}

export const DEFAULT_SETTINGS: Readonly<IdeSettings> = {
	glyphs: "nerd",
	autoConnect: true,
	maxSelectionLines: DEFAULT_MAX_SELECTION_LINES,
	maxSelectionBytes: DEFAULT_MAX_SELECTION_BYTES,
	linkNvim: true,
	linkVim: true,
	sendUnchanged: false,
	approve: "off",
	approveTimeoutSeconds: 120,
	answerWaitMs: 1000,
	paths: [],
};

export interface SettingsResult {
	settings: IdeSettings;
	problems: string[];
}

type Reader<T> = (value: unknown) => T | undefined;

const readBoolean: Reader<boolean> = (v) => (typeof v === "boolean" ? v : undefined);
const readPositiveInt: Reader<number> = (v) =>
	typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined;
const readApprove: Reader<IdeSettings["approve"]> = (v) => (v === "off" || v === "edits" ? v : undefined);
/** At most an hour: a tool call waiting longer than that is a stuck session, not a review. */
const readTimeout: Reader<number> = (v) =>
	typeof v === "number" && Number.isSafeInteger(v) && v > 0 && v <= 3600 ? v : undefined;
/** 100 ms to 10 s: shorter than an idle editor's answer is useless, longer keeps the model waiting on a stopped editor. */
const readAnswerWait: Reader<number> = (v) =>
	typeof v === "number" && Number.isSafeInteger(v) && v >= 100 && v <= 10_000 ? v : undefined;
const readGlyphs: Reader<IdeSettings["glyphs"]> = (v) => (v === "nerd" || v === "plain" ? v : undefined);

const READERS: { [K in keyof IdeSettings]: { read: Reader<IdeSettings[K]>; expected: string } } = {
	glyphs: { read: readGlyphs, expected: '"nerd" or "plain"' },
	autoConnect: { read: readBoolean, expected: "true or false" },
	maxSelectionLines: { read: readPositiveInt, expected: "a positive whole number" },
	maxSelectionBytes: { read: readPositiveInt, expected: "a positive whole number" },
	linkNvim: { read: readBoolean, expected: "true or false" },
	linkVim: { read: readBoolean, expected: "true or false" },
	sendUnchanged: { read: readBoolean, expected: "true or false" },
	approve: { read: readApprove, expected: '"off" or "edits"' },
	approveTimeoutSeconds: { read: readTimeout, expected: "a whole number of seconds from 1 to 3600" },
	answerWaitMs: { read: readAnswerWait, expected: "a whole number of milliseconds from 100 to 10000" },
	// Read by parsePathSetting (its good entries are kept, each bad one named): see `assign`.
	paths: { read: () => undefined, expected: "an object of absolute directories" },
};

/** Parse `settings.ideContext` (unknown JSON) and the environment into settings. */
export function parseSettings(raw: unknown, env: NodeJS.ProcessEnv = {}): SettingsResult {
	const settings: IdeSettings = { ...DEFAULT_SETTINGS };
	const problems: string[] = [];
	if (raw !== undefined && raw !== null) {
		if (typeof raw !== "object" || Array.isArray(raw)) {
			problems.push("ideContext should be an object");
		} else {
			const record = raw as Record<string, unknown>;
			for (const key of Object.keys(record)) {
				if (!(key in READERS)) {
					problems.push(`ideContext.${key} is not a known setting`);
					continue;
				}
				assign(settings, key as keyof IdeSettings, record[key], problems);
			}
		}
	}
	if (env["PI_IDE_GLYPHS"] === "plain" || env["PI_IDE_GLYPHS"] === "nerd") settings.glyphs = env["PI_IDE_GLYPHS"];
	return { settings, problems };
}

function assign<K extends keyof IdeSettings>(settings: IdeSettings, key: K, value: unknown, problems: string[]): void {
	if (key === "paths") {
		const parsed = parsePathSetting(value);
		settings.paths = parsed.mappings;
		for (const problem of parsed.problems) problems.push(`ideContext.${problem.replace(/^"paths"/, "paths")}`);
		return;
	}
	const reader = READERS[key];
	const parsed = reader.read(value);
	if (parsed === undefined)
		problems.push(`ideContext.${key} should be ${reader.expected}, not ${JSON.stringify(value)}`);
	else settings[key] = parsed;
}
