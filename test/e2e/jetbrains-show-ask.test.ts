/**
 * v0.5 show and ask (issue 25 items 2-3) with real pi (print mode), the fake model calling both tools, and the
 * JetBrains client's headless driver (its core and client, as the plugin runs them): `ide_show` puts the place in
 * the list "pi: pi's places" shows, with one notice, while the active file and caret stay; with the follow setting
 * on it is opened; `ide_open_files` answers with every open document, its modified flag and the named file's
 * diagnostics dated with its version; a file the ignore rules exclude is refused (show) or only counted (ask), never
 * named. Follows test/e2e/emacs-show-ask.test.ts.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { type FakeToolCall, type RecordedRequest, requestMessages, toolResults } from "../helpers/fake-llm.ts";
import { startJetBrainsDriver } from "../helpers/jetbrains.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, touch } from "../helpers/scenario.ts";

function callTools(calls: FakeToolCall[]) {
	return (request: RecordedRequest) =>
		requestMessages(request).at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: calls };
}

interface Place {
	file: string;
	line: number;
	end_line: number | null;
	text: string;
}

it("jetbrains driver + pi: show to pi's places, caret kept, one notice; follow opens; ask: documents, modified, diagnostics; excluded never named", async (t) => {
	const env = await envFor(t);
	mkdirSync(join(env.workDir, ".pi"), { recursive: true });
	writeFileSync(join(env.workDir, ".pi", "ide-context.local.ignore"), "secret.env\n");
	const a = touch(env.workDir, "src/a.kt", "val a = 1\nval b = 2\nval c = 3\n");
	const b = touch(env.workDir, "src/b.kt", "var x = 1\nvar y = 2\nvar z = 3\n");
	const secret = touch(env.workDir, "secret.env", "TOKEN=hunter2\n");
	const driver = await startJetBrainsDriver({ project: env.workDir, env: env.env, file: secret });
	t.after(() => driver.kill());
	await driver.command({ cmd: "open", file: b });
	await driver.command({ cmd: "setLines", file: b, lines: ["var x = 10", "var y = 2", "var z = 3"] });
	await driver.command({
		cmd: "diagnostics",
		file: b,
		items: [{ severity: "error", line: 2, column: 5, message: "y is unused", source: "kotlin" }],
	});
	await driver.command({ cmd: "open", file: a });
	await driver.command({ cmd: "cursor", line: 3, column: 1 });
	const messagesBefore = ((await driver.command({ cmd: "messages" }))["messages"] as string[]).length;

	env.model.respond = callTools([
		{ name: "ide_show", arguments: { path: "src/b.kt", line: 2, end_line: 3, note: "y is\u001b[31m never used" } },
		{ name: "ide_open_files", arguments: { path: "src/b.kt" } },
		{ name: "ide_show", arguments: { path: "secret.env", line: 1 } },
	]);
	const run = await runPrint(env, ["Where is it?"]);
	assert.equal(run.code, 0, run.stderr);
	const results = toolResults(env.model.requests.at(-1));
	assert.match(
		results[0] ?? "",
		/^Shown in .*: src\/b\.kt:2-3 is in the user's list of places \("pi's places"\) with a one-line notice; the user's window and cursor stayed/,
	);
	const ask = results[1] ?? "";
	assert.match(ask, /^Open file buffers in .* \(3; \* = unsaved changes/);
	assert.match(ask, /\n- src\/a\.kt \(active\)\n- src\/b\.kt \*\n- 1 more excluded by pi-ide-context's ignore rules/);
	assert.match(ask, /\nsrc\/b\.kt: Diagnostics \(1 error\):\n- error 2:5 y is unused/);
	assert.match(results[2] ?? "", /^Not shown: pi-ide-context's ignore rules exclude this file/);
	for (const result of results) assert.ok(!result.includes("secret"), result);

	const state = JSON.parse(readFileSync(driver.stateFile, "utf8")) as {
		active_buffer: { file: string; cursor: { line: number } };
	};
	assert.deepEqual(
		[state.active_buffer.file, state.active_buffer.cursor.line],
		[a, 3],
		"the active file and caret stay",
	);
	assert.deepEqual((await driver.command({ cmd: "places" }))["places"] as Place[], [
		{ file: b, line: 2, end_line: 3, text: "pi: y is [31m never used" },
	]);
	const added = ((await driver.command({ cmd: "messages" }))["messages"] as string[]).slice(messagesBefore);
	assert.deepEqual(added, ["pi shows src/b.kt:2-3: y is [31m never used"], "one inert notice");

	// The follow setting on: the place is opened (the driver's active file and caret move there).
	await driver.command({ cmd: "showFollow", on: true });
	env.model.respond = callTools([{ name: "ide_show", arguments: { path: "src/b.kt", line: 3 } }]);
	const followed = await runPrint(env, ["And there?"]);
	assert.equal(followed.code, 0, followed.stderr);
	assert.match(toolResults(env.model.requests.at(-1))[0] ?? "", /^Shown in .*: src\/b\.kt:3 was opened for the user/);
	await pollUntil(() => {
		const now = JSON.parse(readFileSync(driver.stateFile, "utf8")) as typeof state;
		return now.active_buffer.file === b && now.active_buffer.cursor.line === 3 ? true : undefined;
	}, "the state file: b.kt:3, opened");
});
