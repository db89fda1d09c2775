/**
 * Shared steps of the product's end-to-end tests: an env per test (cleaned up with the test), project files in
 * pi's work dir, one print-mode prompt, and the text the model received right after it (the injected block).
 */
import assert from "node:assert/strict";
import { mkdirSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import type { EditorState } from "../../src/protocol/protocol.ts";
import {
	type LiveEditor,
	makeState,
	nowSeconds,
	type StateOverrides,
	spawnLiveEditor,
	writeStateFile,
} from "./editors.ts";
import { callToolsThenAnswer, injectedAfter, messageText, requestMessages, toolResults } from "./fake-llm.ts";
import { createPiEnv, type PiEnv, type PiEnvOptions, type RunResult, runPrint } from "./pi-env.ts";

export const PROMPT = "What am I looking at?";

/** A fresh env, removed when the test ends. */
export async function envFor(t: TestContext, options: PiEnvOptions = {}): Promise<PiEnv> {
	const env = await createPiEnv(options);
	t.after(env.cleanup);
	return env;
}

/**
 * One `pi -p` whose model calls pi's `read` with `args` and then answers (decided by the last message's role, so
 * it works for any number of earlier runs): the read's result as the model got it.
 */
export async function readThroughPi(env: PiEnv, args: Record<string, unknown>): Promise<string> {
	env.model.respond = callToolsThenAnswer([{ name: "read", arguments: args }]);
	const before = env.model.requests.length;
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.equal(env.model.requests.length - before, 2, "the read, then the answer");
	return toolResults(env.model.requests.at(-1)).join("\n");
}

/** Create `relative` (and its parents) under `base` with some content; returns the absolute path. */
export function touch(base: string, relative: string, content = "export const x = 1;\n"): string {
	const path = join(base, relative);
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, content);
	return path;
}

export interface PromptOutcome {
	result: RunResult;
	/** The user-role messages the model received right after the prompt (what the extension injected). */
	injected: string[];
}

/** Run one print-mode prompt; asserts pi exited 0 and the model answered. */
export async function promptOnce(env: PiEnv, extraArgs: string[] = [], prompt = PROMPT): Promise<PromptOutcome> {
	const result = await runPrint(env, [prompt], extraArgs);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.equal(result.stdout.trim(), "FAKE-REPLY-OK", result.stderr);
	assert.equal(env.model.requests.length, 1, "one prompt, one model request");
	const messages = requestMessages(env.model.requests[0]);
	assert.ok(
		messages.some((m) => m.role === "user" && messageText(m) === prompt),
		"the prompt reached the model",
	);
	return { result, injected: injectedAfter(env.model.requests[0], prompt) };
}

/** Exactly one injected block, returned. */
export function theBlock(outcome: PromptOutcome): string {
	assert.equal(
		outcome.injected.length,
		1,
		`expected exactly one injected block, got ${outcome.injected.length}: ${JSON.stringify(outcome.injected)}\nstderr: ${outcome.result.stderr}`,
	);
	return outcome.injected[0] as string;
}

/** Nothing injected after the prompt. */
export function assertNoBlock(outcome: PromptOutcome): void {
	assert.deepEqual(outcome.injected, [], `expected no injected block.\nstderr: ${outcome.result.stderr}`);
}

/** The `File: ...` line's path, or null when there is no such line. */
export function fileLine(block: string): string | null {
	const match = /^File: (.*)$/m.exec(block);
	return match ? (match[1] as string) : null;
}

export interface Fenced {
	fence: string;
	info: string;
	body: string;
}

/**
 * The first fenced section of a block read the way a Markdown reader does (CommonMark): an opening run of
 * n >= 3 backticks, closed by the first later line that is a backtick run of at least n and nothing else.
 */
export function firstFence(block: string): Fenced | null {
	const lines = block.split("\n");
	const open = lines.findIndex((l) => /^`{3,}[^`]*$/.test(l));
	if (open < 0) return null;
	const opening = lines[open] as string;
	const fence = (/^`+/.exec(opening) as RegExpExecArray)[0];
	const close = lines.findIndex((l, i) => i > open && /^`+\s*$/.test(l) && l.trim().length >= fence.length);
	if (close < 0) return null;
	return { fence, info: opening.slice(fence.length).trim(), body: lines.slice(open + 1, close).join("\n") };
}

export interface PlacedEditor extends LiveEditor {
	state: EditorState;
	path: string;
}

/**
 * A live editor (a real process) whose state file is in the env's state dir. Defaults: cwd = pi's work dir,
 * file `<cwd>/src/main.ts`.
 */
export async function placeEditor(
	env: PiEnv,
	overrides: Omit<StateOverrides, "pid"> = {},
	stateDir = env.stateDir,
): Promise<PlacedEditor> {
	const editor = await spawnLiveEditor();
	const state = makeState({ cwd: env.workDir, ...overrides, pid: editor.pid });
	const path = writeStateFile(stateDir, state);
	return { ...editor, state, path };
}

export const FIRST = "First prompt: anything from the editor?";
export const SECOND = "Second prompt: and now?";

/**
 * A negative case with its own positive control, in ONE pi run: the first prompt must get no block; then, while
 * the model "thinks" about that prompt, `repair` fixes the one thing that was wrong; the second prompt must then
 * get a block for `expectedFile` (null: any block). So a negative can never pass merely because the extension
 * failed to load or never injects anything.
 */
export async function assertBlockedUntilRepaired(
	env: PiEnv,
	repair: () => unknown,
	expectedFile: string | null,
	extraArgs: string[] = [],
): Promise<{ first: string[]; second: string[] }> {
	env.model.beforeReply = async (_request, index) => {
		if (index === 0) await repair();
	};
	const result = await runPrint(env, [FIRST, SECOND], extraArgs);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.equal(env.model.requests.length, 2, "two prompts, two model requests");
	const first = injectedAfter(env.model.requests[0], FIRST);
	const second = injectedAfter(env.model.requests[1], SECOND);
	assert.deepEqual(first, [], `expected no block for the first prompt.\nstderr: ${result.stderr}`);
	assert.equal(
		second.length,
		1,
		`after the repair, the second prompt should get one block: ${JSON.stringify(second)}\nstderr: ${result.stderr}`,
	);
	if (expectedFile !== null) assert.equal(fileLine(second[0] as string), expectedFile);
	return { first, second };
}

/** After the model's last reply, pi exits within this long (nothing the extension started keeps it alive). */
export const EXIT_LAG_MS = 5000;

/** One print-mode prompt; pi must exit soon after the model's reply was sent. */
export async function assertExitsPromptly(env: PiEnv): Promise<void> {
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, result.stderr);
	const replied = env.model.repliedAt[0];
	assert.ok(replied !== undefined, "the model replied");
	const lag = result.exitedAt - replied;
	assert.ok(lag < EXIT_LAG_MS, `pi exited ${Math.round(lag)} ms after the reply`);
}

/**
 * The same editor now shows another buffer: `buffer` over makeState's defaults (as placeEditor builds them),
 * the rest of its state (cwd, argv, ...) kept, a new timestamp.
 */
export function switchBuffer(env: PiEnv, editor: PlacedEditor, buffer: StateOverrides["active_buffer"] = {}): void {
	const { timestamp: _old, active_buffer: _previous, ...rest } = editor.state;
	editor.state = makeState({ ...rest, active_buffer: buffer });
	writeStateFile(env.stateDir, editor.state);
}

/** The editor writes its state again, same file, with some top-level fields changed (cwd, argv, ...). */
export function rewriteEditor(env: PiEnv, editor: PlacedEditor, changes: Partial<Omit<EditorState, "pid">>): void {
	editor.state = { ...editor.state, ...changes, timestamp: nowSeconds() };
	writeStateFile(env.stateDir, editor.state);
}

/**
 * The editor is replaced by a new live one (new pid, new file) whose state differs by `changes`; the old file
 * is removed. A control that does not depend on how fast the extension notices a rewrite of the same file.
 */
export async function replaceEditor(
	env: PiEnv,
	editor: PlacedEditor,
	changes: Partial<Omit<EditorState, "pid">> = {},
): Promise<PlacedEditor> {
	const { pid: _old, ...state } = editor.state;
	const next = await placeEditor(env, { ...state, ...changes, active_buffer: state.active_buffer });
	unlinkSync(editor.path);
	return next;
}
