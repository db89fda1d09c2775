/**
 * Shared steps of the product's end-to-end tests: an env per test (cleaned up with the test), project files in
 * pi's work dir, one print-mode prompt, and the text the model received right after it (the injected block).
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import type { EditorState } from "../../src/protocol.ts";
import { type LiveEditor, makeState, type StateOverrides, spawnLiveEditor, writeStateFile } from "./editors.ts";
import { injectedAfter, messageText, requestMessages } from "./fake-llm.ts";
import { createPiEnv, type PiEnv, type PiEnvOptions, type RunResult, runPrint } from "./pi-env.ts";

export const PROMPT = "What am I looking at?";

/** A fresh env, removed when the test ends. */
export async function envFor(t: TestContext, options: PiEnvOptions = {}): Promise<PiEnv> {
	const env = await createPiEnv(options);
	t.after(env.cleanup);
	return env;
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
