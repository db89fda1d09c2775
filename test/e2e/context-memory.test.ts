/**
 * Only what the model does not already have (issue 9), with real pi in RPC mode and the fake model: what the
 * model receives over many prompts, and the full block coming back after every operation that takes the
 * earlier one out of the model's view (compaction, /tree, /fork, /new and /resume).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors, makeSelection } from "../helpers/editors.ts";
import { injectedAfter, messageText, type RecordedRequest, requestMessages } from "../helpers/fake-llm.ts";
import { PILL_NVIM_TS, STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, PRODUCT_EXTENSION, REPO, WAIT_MS } from "../helpers/pi-env.ts";
import { type RpcPi, type RpcRecord, startRpc } from "../helpers/rpc.ts";
import {
	envFor as baseEnvFor,
	fileLine,
	type PlacedEditor,
	placeEditor,
	switchBuffer,
	touch,
} from "../helpers/scenario.ts";

const TREE_EXTENSION = join(REPO, "test/fixtures/tree-extension.ts");
const PRUNE_EXTENSION = join(REPO, "test/fixtures/prune-context-extension.ts");
const DROP_EXTENSION = join(REPO, "test/fixtures/drop-context-extension.ts");
const WINDOW_EXTENSION = join(REPO, "test/fixtures/window-context-extension.ts");

/** No Neovim-link notify; compaction keeps as little as it can, so `compact` summarises the earlier prompts. */
const envFor = (
	t: Parameters<typeof baseEnvFor>[0],
	ideContext: Record<string, unknown> = {},
	compaction: Record<string, unknown> = {},
) =>
	baseEnvFor(t, {
		settings: { ideContext: { linkNvim: false, ...ideContext }, compaction: { keepRecentTokens: 1, ...compaction } },
	});

/** Other extensions pi loads with the product: `before` it (their handlers run first) and `after` it. */
interface Around {
	before?: string;
	after?: string;
}

async function rpcFor(
	t: { after(fn: () => unknown): void },
	env: PiEnv,
	session = false,
	around: Around = {},
): Promise<RpcPi> {
	const extensions = [PRODUCT_EXTENSION, TREE_EXTENSION, ...(around.after ? [around.after] : [])];
	const [first, ...rest] = around.before ? [around.before, ...extensions] : extensions;
	const rpc = await startRpc(env, { session, extension: first, args: rest.flatMap((e) => ["-e", e]) });
	t.after(() => rpc.close());
	// Connected (the Neovim + TypeScript pill) before the first prompt.
	await rpc.waitFor(
		(r) =>
			r.type === "extension_ui_request" &&
			r.method === "setStatus" &&
			r.statusKey === STATUS_KEY &&
			PILL_NVIM_TS.test(String(r.statusText)),
	);
	return rpc;
}

/** What the model got right after `prompt` in the request that answered it (the injected messages). */
async function send(rpc: RpcPi, env: PiEnv, prompt: string): Promise<string[]> {
	await rpc.prompt(prompt);
	return injectedAfter(requestFor(env, prompt), prompt);
}

/** The last request that answered `prompt` (pi's own compaction requests come after it and quote it only inside a summary text). */
function requestFor(env: PiEnv, prompt: string): RecordedRequest | undefined {
	return env.model.requests.findLast((r) =>
		requestMessages(r).some((m) => m.role === "user" && messageText(m) === prompt),
	);
}

/** Every message text of a request, joined: the whole context the model read. */
function contextText(request: RecordedRequest | undefined): string {
	return requestMessages(request).map(messageText).join("\n");
}

/** The user-role message right before the last prompt `prompt` of a request (where a repaired block goes). */
function userBefore(request: RecordedRequest | undefined, prompt: string): string {
	const messages = requestMessages(request);
	const at = messages.findLastIndex((m) => m.role === "user" && messageText(m) === prompt);
	const before = at > 0 ? messages[at - 1] : undefined;
	assert.equal(before?.role, "user", `no user message before ${prompt}: ${JSON.stringify(messages)}`);
	return messageText(before as (typeof messages)[number]);
}

function count(haystack: string, needle: string): number {
	return haystack.split(needle).length - 1;
}

const utf8 = (texts: string[]) => texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0);

/** A 200-line selection whose lines are all distinct and easy to count. */
const SELECTION_200 = Array.from(
	{ length: 200 },
	(_, i) => `  const v${i} = compute(${i}); // selected line ${i}`,
).join("\n");
const MARKER = "// selected line 137";

function selectionEditor(env: PiEnv): Promise<PlacedEditor> {
	return placeEditor(env, {
		active_buffer: {
			file: touch(env.workDir, "src/main.ts"),
			selection: makeSelection(SELECTION_200, { ageSeconds: 0 }),
		},
	});
}

interface Entry {
	type: string;
	id: string;
	message?: { role?: string; content?: unknown };
}

async function entries(rpc: RpcPi): Promise<Entry[]> {
	const response = await rpc.command({ type: "get_entries" });
	assert.equal(response.success, true, JSON.stringify(response));
	return (response.data as { entries: Entry[] }).entries;
}

/** The id of the user message whose text is `prompt`, and of the assistant reply after it. */
async function promptEntries(rpc: RpcPi, prompt: string): Promise<{ user: string; reply: string }> {
	const all = await entries(rpc);
	const at = all.findIndex((e) => e.message?.role === "user" && JSON.stringify(e.message.content).includes(prompt));
	assert.ok(at >= 0, `no user entry for ${prompt}`);
	const reply = all.slice(at).find((e) => e.message?.role === "assistant");
	assert.ok(reply, `no reply after ${prompt}`);
	return { user: (all[at] as Entry).id, reply: reply.id };
}

function moveCursor(env: PiEnv, editor: PlacedEditor, line: number): void {
	switchBuffer(env, editor, { ...editor.state.active_buffer, cursor: { line, column: 5 } });
}

/** `/ide status` over RPC: the report itself. */
async function ideStatus(rpc: RpcPi): Promise<string> {
	const since = rpc.records.length;
	await rpc.prompt("/ide status");
	const notify = await rpc.waitFor(
		(r: RpcRecord) =>
			r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("State dir:"),
		WAIT_MS,
		since,
	);
	return String(notify.message);
}

describe("only what the model does not have", { concurrency: 4 }, () => {
	after(killAllEditors);

	test("20 prompts, editor untouched: at most two blocks' worth in the model's context", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		const prompts = Array.from({ length: 20 }, (_, i) => `question ${i + 1}?`);
		for (const prompt of prompts) await send(rpc, env, prompt);
		const last = requestFor(env, prompts.at(-1) as string);
		const injected = prompts.flatMap((p) => injectedAfter(last, p));
		const first = injectedAfter(last, prompts[0] as string);
		assert.equal(first.length, 1, "the first prompt gets the block");
		assert.equal(fileLine(first[0] as string), join(env.workDir, "src/main.ts"));
		assert.ok(
			utf8(injected) <= 2 * utf8(first),
			`20 prompts carried ${utf8(injected)} bytes: ${JSON.stringify(injected)}`,
		);
		assert.equal(count(contextText(last), "File: "), 1, "one File line in the whole context");
	});

	test("a 200-line selection reaches the model once over six prompts", async (t) => {
		const env = await envFor(t);
		await selectionEditor(env);
		const rpc = await rpcFor(t, env);
		const first = await send(rpc, env, "explain this");
		assert.equal(count(first.join("\n"), MARKER), 1, "the first prompt carries the selection");
		for (let i = 1; i <= 5; i++) await send(rpc, env, `follow-up ${i}`);
		assert.equal(count(contextText(requestFor(env, "follow-up 5")), MARKER), 1, "and no later prompt repeats it");
		assert.match(await ideStatus(rpc), /Next prompt sends nothing \(unchanged .*the selection was sent already/);
	});

	test("a cursor move reaches the model, as an update", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		assert.match((await send(rpc, env, "where am I?")).join("\n"), /^Cursor: line 42, column 10$/m);
		moveCursor(env, editor, 77);
		const update = (await send(rpc, env, "and now?")).join("\n");
		assert.match(update, /^Cursor: line 77, column 5$/m);
		assert.doesNotMatch(update, /^File: /m, "an update, not the whole block");
	});

	test("/ide status: a new block before the first prompt, nothing after it, an update after a move", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		assert.match(
			await ideStatus(rpc),
			/^Next prompt sends a new block \(the model has no editor context .*\):\nThe user's editor/m,
		);
		await send(rpc, env, "first");
		assert.match(
			await ideStatus(rpc),
			/^Next prompt sends nothing \(unchanged since the editor context the model has\)$/m,
		);
		moveCursor(env, editor, 60);
		assert.match(
			await ideStatus(rpc),
			/^Next prompt sends an update \(Cursor\) .*:\nEditor update \(Neovim\), the rest as before:\nCursor: line 60, column 5$/m,
		);
	});

	test("compaction: the next prompt sends the full block, selection included, again", async (t) => {
		const env = await envFor(t);
		await selectionEditor(env);
		const rpc = await rpcFor(t, env);
		await send(rpc, env, "explain this");
		assert.deepEqual(await send(rpc, env, "more?"), [], "nothing new before compaction");
		const compact = await rpc.command({ type: "compact" }, 2 * WAIT_MS);
		assert.equal(compact.success, true, JSON.stringify(compact));
		const after = await send(rpc, env, "after compaction?");
		const last = requestFor(env, "after compaction?");
		assert.equal(after.length, 1, JSON.stringify(after));
		assert.equal(fileLine(after[0] as string), join(env.workDir, "src/main.ts"));
		assert.equal(count(after[0] as string, MARKER), 1, "with the selection text");
		assert.equal(count(contextText(last), MARKER), 1, "the summary replaced the first copy");
	});

	test("automatic (threshold) compaction: the next prompt sends the full block again", async (t) => {
		// The fake model reports 13 tokens of context; a 128k window less 127,995 reserved leaves 5: every prompt
		// after the first starts with a threshold compaction.
		const env = await envFor(t, {}, { reserveTokens: 127_995 });
		await selectionEditor(env);
		const rpc = await rpcFor(t, env);
		await send(rpc, env, "explain this");
		const compacted = rpc.records.filter((r) => r.type === "compaction_end" && r["reason"] === "threshold");
		assert.equal(compacted.length, 1, "pi compacted after the first prompt");
		const after = await send(rpc, env, "and then?");
		assert.equal(after.length, 1, JSON.stringify(after));
		assert.equal(fileLine(after[0] as string), join(env.workDir, "src/main.ts"));
		assert.equal(count(contextText(requestFor(env, "and then?")), MARKER), 1, "the selection text, once");
	});

	test("/tree: decided from the branch the model sees, not from what was sent last", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		await send(rpc, env, "one");
		moveCursor(env, editor, 50);
		assert.match((await send(rpc, env, "two")).join("\n"), /Cursor: line 50/);
		const one = await promptEntries(rpc, "one");

		// Back to the reply to "one": that branch has the block with line 42, not the update to 50.
		await treeTo(rpc, one.reply);
		assert.match((await send(rpc, env, "three")).join("\n"), /^Cursor: line 50, column 5$/m);

		// Back to before "one": no editor context on that branch at all.
		await treeTo(rpc, one.user);
		const fresh = await send(rpc, env, "four");
		assert.equal(fresh.length, 1);
		assert.equal(fileLine(fresh[0] as string), join(env.workDir, "src/main.ts"));
	});

	test("/fork: the new session has only the blocks before the fork point", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env, true);
		await send(rpc, env, "one");
		moveCursor(env, editor, 50);
		await send(rpc, env, "two");
		const two = await promptEntries(rpc, "two");
		await fork(rpc, two.user);
		// The forked session has the block with line 42 (from "one") but not the update to 50 (from "two").
		const three = (await send(rpc, env, "three")).join("\n");
		assert.match(three, /^Cursor: line 50, column 5$/m);
		assert.doesNotMatch(three, /^File: /m, "an update on the block the forked session has");
		const one = await promptEntries(rpc, "one");
		await fork(rpc, one.user);
		const fresh = await send(rpc, env, "four");
		assert.equal(fileLine(fresh[0] as string), join(env.workDir, "src/main.ts"), "nothing before 'one': full block");
	});

	test("/new and /resume: each session gets what it lacks", async (t) => {
		const env = await envFor(t);
		await selectionEditor(env);
		const rpc = await rpcFor(t, env, true);
		await send(rpc, env, "in session A");
		const state = await rpc.command({ type: "get_state" });
		const sessionA = (state.data as { sessionFile?: string }).sessionFile;
		assert.ok(sessionA, JSON.stringify(state));

		assert.equal((await rpc.command({ type: "new_session" })).success, true);
		const inB = await send(rpc, env, "in session B");
		assert.equal(count(inB.join("\n"), MARKER), 1, "a new session: the full block with the selection");

		const switched = await rpc.command({ type: "switch_session", sessionPath: sessionA });
		assert.equal(switched.success, true, JSON.stringify(switched));
		assert.deepEqual(await send(rpc, env, "back in A"), [], "session A has the block already");
		assert.equal(count(contextText(requestFor(env, "back in A")), MARKER), 1);
	});

	const pruners: Array<{ name: string; around: Around }> = [
		{ name: "a pruner loaded before this extension", around: { before: PRUNE_EXTENSION } },
		{
			name: "a pruner loaded after this extension (its context handler runs later)",
			around: { after: PRUNE_EXTENSION },
		},
		{
			name: "a context_with_system window loaded before this extension",
			around: { before: WINDOW_EXTENSION },
		},
		{
			// Its context_with_system handler runs after this extension's: only the payload check sees what it left.
			name: "a context_with_system window loaded after this extension",
			around: { after: WINDOW_EXTENSION },
		},
	];
	for (const { name, around } of pruners) {
		test(`${name} drops the block an update builds on: the update is made whole`, async (t) => {
			const env = await envFor(t);
			const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
			const rpc = await rpcFor(t, env, false, around);
			await send(rpc, env, "one");
			moveCursor(env, editor, 50);
			const two = (await send(rpc, env, "two")).join("\n");
			assert.equal(count(contextText(requestFor(env, "two")), "File: "), 1, "the first block was pruned");
			assert.doesNotMatch(contextText(requestFor(env, "two")), /the rest as before/, "no dangling update");
			assert.match(two, /^The user's editor \(Neovim\) shows this file:$/m);
			assert.equal(fileLine(two), join(env.workDir, "src/main.ts"));
			assert.match(two, /^Cursor: line 50, column 5$/m);
		});
	}

	test("a context_with_system window after this extension left only the prompt: the block goes in as a message of its own", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env, false, { after: WINDOW_EXTENSION });
		await rpc.prompt("one");
		// The editor unchanged: "two" brings no block, and the window keeps only the reply to "one" and "two".
		await rpc.prompt("two");
		const last = env.model.requests.at(-1);
		const users = requestMessages(last).filter((m) => m.role === "user");
		assert.deepEqual(
			users.map(messageText).map((text) => text.split("\n")[0]),
			["The user's editor (Neovim) shows this file:", "two"],
			"the block and the prompt each a message, never glued into one text",
		);
		const block = userBefore(last, "two");
		assert.equal(fileLine(block), join(env.workDir, "src/main.ts"));
		assert.match(block, /^Buffer: .*saved$/m, "the block whole, its last line its own");
	});

	test("a pruner dropping every editor context: the request gets the session's, before the prompt", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env, false, { after: DROP_EXTENSION });
		await rpc.prompt("one");
		const one = requestFor(env, "one");
		assert.equal(count(contextText(one), "File: "), 1, contextText(one));
		assert.equal(fileLine(userBefore(one, "one")), join(env.workDir, "src/main.ts"));
		moveCursor(env, editor, 50);
		await rpc.prompt("two");
		const two = requestFor(env, "two");
		assert.equal(count(contextText(two), "File: "), 1, "one self-contained block, not one per prompt");
		const block = userBefore(two, "two");
		assert.equal(fileLine(block), join(env.workDir, "src/main.ts"));
		assert.match(block, /^Cursor: line 50, column 5$/m);
		assert.doesNotMatch(contextText(two), /^Cursor: line 42/m, "no stale cursor");
	});

	test("a compaction in the middle of a run that summarised the run's block: the next request gets it back", async (t) => {
		// As in the threshold test, every turn after the first starts with a compaction; the model's first reply is
		// a tool call, so the run's second request comes after a compaction that split the turn (the prompt and its
		// block are in the summary).
		const env = await envFor(t, {}, { reserveTokens: 127_995 });
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		// The first request only: a tool call (the summariser's requests get the plain text reply).
		env.model.respond = (_request, index) =>
			index === 0 ? { toolCalls: [{ name: "read", arguments: { path: file } }] } : undefined;
		await rpc.prompt("read it");
		const compacted = rpc.records.filter((r) => r.type === "compaction_end" && r["reason"] === "threshold");
		assert.ok(compacted.length >= 1, "pi compacted in the middle of the run");
		const afterTool = env.model.requests.find((r) => requestMessages(r).some((m) => m.role === "tool"));
		assert.ok(afterTool, "a request after the tool ran");
		assert.ok(
			!requestMessages(afterTool).some((m) => messageText(m) === "read it"),
			"the compaction summarised the prompt (and the block with it)",
		);
		const context = contextText(afterTool);
		assert.equal(count(context, "File: "), 1, context);
		assert.equal(fileLine(context), file);
		assert.match(context, /^Cursor: line 42, column 10$/m);
	});

	test("diagnostics changing between prompts reach the model as an update", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const error = (line: number, name: string) => ({
			severity: "error" as const,
			line,
			column: 3,
			message: `Cannot find name '${name}'.`,
			source: "typescript",
			code: "2304",
		});
		// A v0.3 editor: diagnostics dated with the buffer version they were computed for.
		const checked = (version: number, items: ReturnType<typeof error>[]) => ({
			file,
			version,
			diagnostics: { version, total: items.length, items },
		});
		const editor = await placeEditor(env, { protocol: "0.3", active_buffer: checked(3, [error(12, "x")]) });
		const rpc = await rpcFor(t, env);
		const one = (await send(rpc, env, "one")).join("\n");
		assert.match(one, /^- error 12:3 Cannot find name 'x'\. \[typescript 2304\]$/m);
		assert.deepEqual(await send(rpc, env, "unchanged?"), [], "the same diagnostics are not news");
		switchBuffer(env, editor, checked(4, [error(12, "x"), error(30, "y")]));
		const two = (await send(rpc, env, "two")).join("\n");
		assert.match(two, /^Editor update \(Neovim\), the rest as before:\nDiagnostics \(2 errors\):$/m);
		assert.match(two, /^- error 30:3 Cannot find name 'y'\. \[typescript 2304\]$/m);
		assert.doesNotMatch(two, /^File: /m, "an update, not the whole block");
	});

	test("sendUnchanged: the whole block, selection included, with every prompt", async (t) => {
		const env = await envFor(t, { sendUnchanged: true });
		await selectionEditor(env);
		const rpc = await rpcFor(t, env);
		for (let i = 1; i <= 3; i++) await send(rpc, env, `prompt ${i}`);
		assert.equal(count(contextText(requestFor(env, "prompt 3")), MARKER), 3);
		assert.match(await ideStatus(rpc), /Next prompt sends a new block \(ideContext.sendUnchanged is on/);
	});
});

const NOTICE = "Editor context out of date: ";

/** The ide-context notices of a request (the model is told its editor context is out of date). */
function notices(request: RecordedRequest | undefined): string[] {
	return requestMessages(request)
		.map(messageText)
		.filter((text) => text.startsWith(NOTICE));
}

describe("silence is not 'unchanged': the model is told when its editor context is out of date", {
	concurrency: 3,
}, () => {
	after(killAllEditors);

	interface StaleCase {
		name: string;
		/** What happens after the first prompt (which sent the block). */
		change(env: PiEnv, rpc: RpcPi, editor: PlacedEditor): Promise<void>;
		/** The notice's reason, in its words. */
		reason: RegExp;
	}
	const cases: StaleCase[] = [
		{
			name: "the active file is now one the ignore rules exclude (never named)",
			change: async (env, _rpc, editor) => {
				writeFileSync(join(env.agentDir, "ide-context.ignore"), "secret-plans.ts\n");
				switchBuffer(env, editor, { file: touch(env.workDir, "src/secret-plans.ts"), cursor: { line: 3, column: 1 } });
			},
			reason: /excluded/,
		},
		{
			name: "an unnamed buffer",
			change: async (env, _rpc, editor) => switchBuffer(env, editor, { file: null }),
			reason: /not a file/,
		},
		{
			name: "/ide off, then a move",
			change: async (env, rpc, editor) => {
				await rpc.prompt("/ide off");
				moveCursor(env, editor, 99);
			},
			reason: /\/ide off/,
		},
		{
			name: "the editor died",
			change: async (_env, _rpc, editor) => editor.kill(),
			reason: /no longer running/,
		},
		{
			name: "the editor died and two others tie: pi waits for a pick",
			change: async (env, _rpc, editor) => {
				await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/b.ts") } });
				await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/c.ts") } });
				await editor.kill();
			},
			reason: /pick one/,
		},
	];
	for (const { name, change, reason } of cases) {
		test(`${name}: one notice, in general terms, then nothing until it changes`, async (t) => {
			const env = await envFor(t);
			const editor = await placeEditor(env, {
				active_buffer: { file: touch(env.workDir, "src/main.ts"), selection: makeSelection("const a = 1;") },
			});
			const rpc = await rpcFor(t, env);
			assert.equal(fileLine((await send(rpc, env, "one")).join("\n")), join(env.workDir, "src/main.ts"));
			await change(env, rpc, editor);
			const two = await send(rpc, env, "two");
			assert.equal(two.length, 1, JSON.stringify(two));
			assert.ok(two[0]?.startsWith(NOTICE), two[0]);
			assert.match(two[0] as string, reason);
			assert.doesNotMatch(two[0] as string, /secret|main\.ts|const a/, "general terms only");
			await send(rpc, env, "three");
			assert.equal(notices(requestFor(env, "three")).length, 1, "said once");
			assert.doesNotMatch(contextText(requestFor(env, "three")), /secret-plans/);
		});
	}

	test("back on a file after a notice: the whole block again", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const editor = await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		await send(rpc, env, "one");
		switchBuffer(env, editor, { file: null });
		assert.match(
			await ideStatus(rpc),
			/^Next prompt sends a notice that the model's editor context is out of date \(no-file\); .*:\nEditor context out of date: /m,
		);
		assert.ok((await send(rpc, env, "two"))[0]?.startsWith(NOTICE));
		assert.match(await ideStatus(rpc), /^Next prompt: nothing injected/m, "told once");
		switchBuffer(env, editor, { file, cursor: { line: 42, column: 10 } });
		const three = (await send(rpc, env, "three")).join("\n");
		assert.equal(fileLine(three), file, "a whole block, not an update on the one marked out of date");
	});

	test("a compaction in the middle of a run whose prompt sent nothing: the run keeps its editor context", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		await send(rpc, env, "one");
		// The prompt "two" sends nothing (unchanged); the model's tool call reports a nearly full context, so pi
		// compacts before the run's next request (the summariser's request gets the plain reply).
		env.model.respond = (request) =>
			requestMessages(request).some((m) => m.role === "user" && messageText(m) === "two") &&
			!requestMessages(request).some((m) => m.role === "tool")
				? { toolCalls: [{ name: "read", arguments: { path: file } }], promptTokens: 127_000 }
				: undefined;
		await rpc.prompt("two");
		const compacted = rpc.records.filter((r) => r.type === "compaction_end");
		assert.ok(compacted.length >= 1, "pi compacted in the middle of the run");
		const afterTool = env.model.requests.findLast((r) => requestMessages(r).some((m) => m.role === "tool"));
		const context = contextText(afterTool);
		assert.ok(!requestMessages(afterTool).some((m) => messageText(m) === "one"), "the first block was summarised");
		assert.equal(count(context, "File: "), 1, context);
		assert.equal(fileLine(context), file);
	});

	test("a steering message typed while pi works brings the editor news with it", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const editor = await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		env.model.respond = (request) =>
			requestMessages(request).some((m) => m.role === "tool")
				? undefined
				: { toolCalls: [{ name: "read", arguments: { path: file } }] };
		env.model.beforeReply = async (_request, index) => {
			if (index !== 0) return;
			moveCursor(env, editor, 77);
			const steered = await rpc.command({ type: "steer", message: "look at line 77 instead" });
			assert.equal(steered.success, true, JSON.stringify(steered));
		};
		await rpc.prompt("work");
		const afterSteer = env.model.requests.find((r) =>
			requestMessages(r).some((m) => messageText(m) === "look at line 77 instead"),
		);
		assert.ok(afterSteer, "the steering message reached the model");
		assert.match(contextText(afterSteer), /^Cursor: line 77, column 5$/m);
	});
});

async function treeTo(rpc: RpcPi, entryId: string): Promise<void> {
	const since = rpc.records.length;
	await rpc.prompt(`/test-tree ${entryId}`);
	const done = await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("TREE:"),
		WAIT_MS,
		since,
	);
	assert.equal(done.message, "TREE:ok");
}

async function fork(rpc: RpcPi, entryId: string): Promise<void> {
	const response = await rpc.command({ type: "fork", entryId });
	assert.equal(response.success, true, JSON.stringify(response));
	assert.equal((response.data as { cancelled?: boolean }).cancelled, false);
}
