/**
 * The e2e scenario of v0.5 show and ask (issue 25 items 2-3) that every editor's test runs (test/e2e/*-show-ask):
 * a project with a file the ignore rules exclude, and one print-mode run of real pi whose model shows a range of
 * b.ts, asks for b.ts's diagnostics and tries to show the excluded file. The editor's side (where the place went,
 * the focus kept, the one notice) stays in each test: only pi's side, the tool results, is the same for all.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { callToolsThenAnswer, toolResults } from "./fake-llm.ts";
import { type PiEnv, runPrint } from "./pi-env.ts";
import { touch } from "./scenario.ts";

/** The project: src/a.ts and src/b.ts (three lines each), and secret.env, which the ignore rules exclude. */
export function showAskProject(env: PiEnv): { a: string; b: string; secret: string } {
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	return {
		a: touch(env.workDir, "src/a.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n"),
		b: touch(env.workDir, "src/b.ts", "let x = 1;\nlet y = 2;\nlet z = 3;\n"),
		secret: touch(env.workDir, "secret.env", "TOKEN=hunter2\n"),
	};
}

/**
 * One run in which the model shows src/b.ts:2-3 (a note with an escape sequence), asks what is open with b.ts's
 * diagnostics, and tries to show secret.env; asserts pi's tool results for an editor named `editor` whose places
 * list is `placesList` ("quickfix list"), with a.ts active, b.ts unsaved with one error at 2:5 "y is unused", and
 * secret.env open. The excluded file is named only in the model's own call: no result names it.
 */
export async function showAndAsk(env: PiEnv, editor: string, placesList: string): Promise<void> {
	env.model.respond = callToolsThenAnswer([
		{ name: "ide_show", arguments: { path: "src/b.ts", line: 2, end_line: 3, note: "y is\u001b[31m never used" } },
		{ name: "ide_open_files", arguments: { path: "src/b.ts" } },
		{ name: "ide_show", arguments: { path: "secret.env", line: 1 } },
	]);
	const run = await runPrint(env, ["Where is it?"]);
	assert.equal(run.code, 0, run.stderr);
	const results = toolResults(env.model.requests.at(-1));
	assert.equal(
		results[0],
		`Shown in ${editor}: src/b.ts:2-3 is in the user's ${placesList} with a one-line notice; the user's window and cursor stayed where they were (the user opens it when they choose).`,
	);
	const ask = results[1] ?? "";
	assert.match(ask, new RegExp(`^Open file buffers in ${editor} \\(3; \\* = unsaved changes`));
	assert.match(ask, /\n- src\/a\.ts \(active\)\n- src\/b\.ts \*\n- 1 more excluded by pi-ide-context's ignore rules/);
	assert.match(ask, /\nsrc\/b\.ts: Diagnostics \(1 error\):\n- error 2:5 y is unused/);
	assert.match(results[2] ?? "", /^Not shown: pi-ide-context's ignore rules exclude this file/);
	for (const result of results) assert.ok(!result.includes("secret"), result);
}
