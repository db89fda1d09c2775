/**
 * Never a stale picture (issue 15), checked by a seeded randomised differential test: real pi in RPC mode, the
 * fake model recording every request, editors scripted as state files, and random sequences of editor changes
 * (moves, selections, other files, ignored files, unnamed buffers, editors starting, dying and tying), `/ide`
 * pick/off/auto, compactions (manual, automatic in the middle of a run), /new, /fork, /tree, /resume, and one
 * other context extension of each kind loaded before or after this one. Every request the model receives is
 * checked against a small model of its own (the oracle below: the editors, the connection rules, what a request
 * says): the newest editor context is true now or marked out of date for the right reason, every update and
 * selection reference resolves within the request, an editor context put back by the request check reads as
 * in an unpruned request (never glued to the prompt's text), and an ignored file's name never appears.
 *
 * Reproducible: PI_IDE_STALE_SEED=<n> replays one sequence exactly (a failure prints its seed and its steps);
 * PI_IDE_STALE_SEQUENCES and PI_IDE_STALE_STEPS make long runs; PI_IDE_STALE_LOG=1 prints each sequence's steps.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { messageText, type RecordedRequest, requestMessages } from "../helpers/fake-llm.ts";
import { STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, PRODUCT_EXTENSION, REPO, WAIT_MS } from "../helpers/pi-env.ts";
import { type RpcPi, startRpc } from "../helpers/rpc.ts";
import { envFor, type PlacedEditor, placeEditor, switchBuffer, touch } from "../helpers/scenario.ts";
import { mulberry32 as prng } from "../helpers/seeded.ts";
import { makeSelection } from "../helpers/state-files.ts";

const SEQUENCES = Number(process.env["PI_IDE_STALE_SEQUENCES"] ?? 4);
const STEPS = Number(process.env["PI_IDE_STALE_STEPS"] ?? 12);
const FIXED_SEED = process.env["PI_IDE_STALE_SEED"];
/** Default seeds: fixed, so `npm test` is reproducible; a long run takes PI_IDE_STALE_SEED or these plus n. */
const SEEDS = FIXED_SEED ? [Number(FIXED_SEED)] : Array.from({ length: SEQUENCES }, (_, i) => 1501 + i);

/**
 * The other context extension of a sequence, by seed (seed - 1501, modulo): the default seeds cover the kinds
 * most likely to break the rule (a window and a pruner loaded after this extension, a dropper before it, none).
 */
const AROUND: ReadonlyArray<{ name: string; before: boolean } | null> = [
	{ name: "window-context-extension", before: false },
	{ name: "prune-context-extension", before: false },
	{ name: "drop-context-extension", before: true },
	null,
	{ name: "window-context-extension", before: true },
	{ name: "prune-context-extension", before: true },
	{ name: "drop-context-extension", before: false },
];

// ---------------------------------------------------------------------------
// The oracle: the editors, the connection, and what must hold of a request.

type Reason = "ignored" | "no-file" | "off" | "gone" | "choose";

interface OracleSelection {
	text: string;
	start: number;
	end: number;
	/** Unix seconds. */
	at: number;
}

interface OracleEditor {
	k: number;
	placed: PlacedEditor;
	alive: boolean;
	kind: "file" | "secret" | "unnamed";
	file: string;
	cursor: number;
	selection: OracleSelection | null;
}

interface Connection {
	mode: { kind: "auto" } | { kind: "off" } | { kind: "picked"; pid: number };
	sticky: number | null;
	remembered: { kind: "none" } | { kind: "off" } | { kind: "pick"; pid: number };
}

/** What the editor shows now, as the model must have it, or why pi cannot say. */
type Expected =
	| { describable: true; file: string; cursor: number; selection: OracleSelection | null }
	| { describable: false; reason: Reason };

/** The connection rules (discovery/connection.ts) for editors that all work in pi's project, no host editor. */
function connect(c: Connection, alive: readonly number[]): { pid: number } | { reason: Reason } {
	if (c.mode.kind === "picked") {
		if (alive.includes(c.mode.pid)) return { pid: c.mode.pid };
		c.mode = { kind: "auto" };
		c.sticky = null;
	}
	if (c.mode.kind === "off" || c.remembered.kind === "off") return { reason: "off" };
	if (c.remembered.kind === "pick" && alive.includes(c.remembered.pid)) {
		c.sticky = c.remembered.pid;
		return { pid: c.remembered.pid };
	}
	const single = alive.length === 1 ? alive[0] : undefined;
	if (c.sticky !== null && c.sticky !== single && alive.includes(c.sticky)) return { pid: c.sticky };
	if (single !== undefined) {
		c.sticky = single;
		return { pid: single };
	}
	return { reason: alive.length === 0 ? "gone" : "choose" };
}

/** Seconds within which a selection counts as fresh for sure / stale for sure (the protocol says 60). */
const FRESH_FOR_SURE = 45;
const STALE_FOR_SURE = 75;

function expectedNow(editors: readonly OracleEditor[], c: Connection): Expected {
	const to = connect(
		c,
		editors.filter((e) => e.alive).map((e) => e.placed.pid),
	);
	if ("reason" in to) return { describable: false, reason: to.reason };
	const editor = editors.find((e) => e.placed.pid === to.pid) as OracleEditor;
	if (editor.kind === "secret") return { describable: false, reason: "ignored" };
	if (editor.kind === "unnamed") return { describable: false, reason: "no-file" };
	return { describable: true, file: editor.file, cursor: editor.cursor, selection: editor.selection };
}

/** What a request says about the editor, read message by message: the picture the model is left with. */
type Picture =
	| { kind: "none" }
	| { kind: "notice"; text: string }
	| {
			kind: "block";
			file: string;
			cursor: number | null;
			/** The selection's range and whether its text is in the request (null: no selection). */
			selection: { range: string; text: string | null } | null;
	  };

const NOTICE_WORDS: Readonly<Record<Reason, RegExp>> = {
	ignored: /excluded/,
	"no-file": /not a file/,
	off: /\/ide off/,
	gone: /no longer running/,
	choose: /pick one/,
};

/** Read a request the way the model does; every broken reference is a problem. */
function readRequest(messages: readonly string[]): { picture: Picture; problems: string[] } {
	const problems: string[] = [];
	let picture: Picture = { kind: "none" };
	const all = messages.join("\n");
	/** The text of each selection (by range) an earlier message of the request carries: what a reference may name. */
	const copies = new Map<string, string>();
	for (const text of messages) {
		if (text.startsWith("Editor context out of date: ")) picture = { kind: "notice", text };
		else if (text.startsWith("The user's editor (")) {
			const file = /^File: (.*)$/m.exec(text)?.[1] ?? "";
			picture = { kind: "block", file, cursor: null, selection: null };
			applySections(picture, text, all, copies, problems);
		} else if (/^Editor update \([^)]*\), the rest as before:/.test(text)) {
			if (picture.kind !== "block") problems.push(`an update with no block before it: ${JSON.stringify(text)}`);
			else applySections(picture, text, all, copies, problems);
		}
		if (picture.kind === "block" && picture.selection?.text)
			copies.set(picture.selection.range, picture.selection.text);
	}
	return { picture, problems };
}

/** What starts an editor context: at the start of a message's text, or after a blank line, as a part of its own. */
const CONTEXT_HEADS = /The user's editor \(|Editor update \(|Editor context out of date: /g;

/**
 * A repaired request reads like an unpruned one: an editor context and the prompt each start a message (or follow
 * a blank line), never glued to the text before them ("Diagnostics: noneprompt 3").
 */
function separationProblems(messages: readonly string[], prompt: string): string[] {
	const problems: string[] = [];
	const glued = (text: string, at: number) => at > 0 && !text.slice(0, at).endsWith("\n\n");
	for (const text of messages) {
		for (const head of text.matchAll(CONTEXT_HEADS))
			if (glued(text, head.index))
				problems.push(`an editor context glued to the text before it: ${JSON.stringify(text)}`);
		const own = new RegExp(`${prompt.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?!\\d)`, "g");
		for (const hit of text.matchAll(own))
			if (glued(text, hit.index)) problems.push(`the prompt glued to the text before it: ${JSON.stringify(text)}`);
	}
	return problems;
}

function applySections(
	picture: Extract<Picture, { kind: "block" }>,
	text: string,
	all: string,
	copies: ReadonlyMap<string, string>,
	problems: string[],
): void {
	const cursor = /^Cursor: line (\d+)/m.exec(text);
	if (cursor) picture.cursor = Number(cursor[1]);
	if (/^Selection: none now$/m.test(text)) picture.selection = null;
	const head = /^Selection \((lines \d+-\d+)[^)]*\):(.*)$/m.exec(text);
	if (!head) {
		if (text.startsWith("The user's editor (")) picture.selection = null;
		return;
	}
	const range = head[1] as string;
	const rest = head[2] as string;
	if (rest.trim() === "") {
		const fenced = /^Selection \([^)]*\):\n(`{3,})[^\n]*\n([\s\S]*?)\n\1$/m.exec(text);
		picture.selection = { range, text: fenced ? (fenced[2] as string) : null };
	} else if (/the same selection as in an earlier editor context/.test(rest)) {
		// Resolves to the copy an earlier message of the same request carries (a whole block may refer to it too).
		const earlier = copies.get(range) ?? null;
		if (earlier === null || !all.includes(earlier))
			problems.push(`a selection reference with no copy in the request: ${JSON.stringify(head[0])}`);
		picture.selection = { range, text: earlier };
	} else picture.selection = { range, text: null };
}

/**
 * Every problem of one request against what the editor shows. `windowed`: a context_with_system extension loaded
 * after this one may cut the request down to its last messages, prompt and editor context included; with nothing
 * left to anchor a block on, the model then has no editor context at all (not a stale one).
 */
function checkRequest(request: RecordedRequest, expected: Expected, prompt: string, windowed: boolean): string[] {
	const messages = requestMessages(request);
	const texts = messages.filter((m) => m.role === "user").map(messageText);
	const { picture, problems } = readRequest(texts);
	problems.push(...separationProblems(texts, prompt));
	if (JSON.stringify(messages).includes("secret-")) problems.push("an ignored file's name reached the model");
	const hasPrompt = texts.includes(prompt);
	if (expected.describable) {
		if (picture.kind === "none") {
			if (hasPrompt || !windowed) problems.push("no editor context at all, though the editor can be described");
			return problems;
		}
		if (picture.kind === "notice") {
			problems.push(`marked out of date, though the editor can be described: ${picture.text}`);
			return problems;
		}
		if (picture.file !== expected.file) problems.push(`file ${picture.file}, the editor shows ${expected.file}`);
		if (picture.cursor !== expected.cursor)
			problems.push(`cursor ${picture.cursor}, the editor has ${expected.cursor}`);
		const sel = expected.selection;
		const age = sel ? Date.now() / 1000 - sel.at : 0;
		if (sel && age < FRESH_FOR_SURE) {
			if (picture.selection?.range !== `lines ${sel.start}-${sel.end}`)
				problems.push(`selection ${JSON.stringify(picture.selection)}, the editor has lines ${sel.start}-${sel.end}`);
			else if (picture.selection.text !== sel.text) problems.push("the selection's text is not in the request");
		} else if ((!sel || age > STALE_FOR_SURE) && picture.selection !== null)
			problems.push(`a selection (${picture.selection.range}) the editor no longer has (fresh)`);
	} else if (picture.kind === "block")
		problems.push(`the model is left with ${picture.file} at line ${picture.cursor}, but: ${expected.reason}`);
	else if (picture.kind === "notice" && !NOTICE_WORDS[expected.reason].test(picture.text))
		problems.push(`a notice for another reason (${expected.reason} expected): ${picture.text}`);
	return problems;
}

// ---------------------------------------------------------------------------
// Driving real pi.

interface Sequence {
	env: PiEnv;
	rpc: RpcPi;
	random: () => number;
	editors: OracleEditor[];
	connection: Connection;
	log: string[];
	prompts: number;
	sessions: string[];
	nextEditor: number;
	/** A context_with_system window loaded after this extension (see checkRequest). */
	windowed: boolean;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

async function addEditor(s: Sequence): Promise<OracleEditor> {
	const k = s.nextEditor++;
	const file = touch(s.env.workDir, `src/e${k}.ts`);
	const placed = await placeEditor(s.env, { argv: [`ed${k}`], active_buffer: { file } });
	const editor: OracleEditor = { k, placed, alive: true, kind: "file", file, cursor: 42, selection: null };
	s.editors.push(editor);
	return editor;
}

function writeEditor(s: Sequence, e: OracleEditor): void {
	const selection = e.selection
		? { ...makeSelection(e.selection.text, { startLine: e.selection.start }), selected_at: e.selection.at }
		: null;
	switchBuffer(s.env, e.placed, {
		file: e.kind === "unnamed" ? null : e.file,
		cursor: { line: e.cursor, column: 1 },
		selection: e.kind === "unnamed" ? null : selection,
	});
}

/** A command pi handles at once (`/ide ...`), waited for. */
async function command(s: Sequence, text: string): Promise<void> {
	await s.rpc.prompt(text);
}

type Action = { name: string; weight: number; when?: (s: Sequence) => boolean; run: (s: Sequence) => Promise<string> };

const alive = (s: Sequence) => s.editors.filter((e) => e.alive);
const someAlive = (s: Sequence) => alive(s).length > 0;

const ACTIONS: Action[] = [
	{ name: "prompt", weight: 6, run: (s) => prompt(s) },
	{
		name: "move",
		weight: 3,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			e.cursor = 1 + Math.floor(s.random() * 300);
			writeEditor(s, e);
			return `ed${e.k} cursor ${e.cursor}`;
		},
	},
	{
		name: "select",
		weight: 2,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			const start = 1 + Math.floor(s.random() * 100);
			const text = `const s${start} = ${Math.floor(s.random() * 1e6)};\nreturn s${start};`;
			e.selection = { text, start, end: start + 1, at: Math.floor(Date.now() / 1000) };
			writeEditor(s, e);
			return `ed${e.k} selects ${start}-${start + 1}`;
		},
	},
	{
		name: "unselect",
		weight: 1,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			e.selection = null;
			writeEditor(s, e);
			return `ed${e.k} selection cleared`;
		},
	},
	{
		name: "open",
		weight: 2,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			const r = s.random();
			e.kind = r < 0.25 ? "secret" : r < 0.45 ? "unnamed" : "file";
			e.selection = null;
			if (e.kind !== "unnamed")
				e.file = touch(s.env.workDir, `src/${e.kind === "secret" ? "secret-" : ""}f${Math.floor(s.random() * 5)}.ts`);
			writeEditor(s, e);
			return `ed${e.k} opens ${e.kind === "unnamed" ? "[No Name]" : e.file.slice(s.env.workDir.length + 1)}`;
		},
	},
	{
		name: "start editor",
		weight: 1,
		when: (s) => alive(s).length < 3,
		run: async (s) => {
			const e = await addEditor(s);
			await command(s, "/ide status");
			return `ed${e.k} starts`;
		},
	},
	{
		name: "kill editor",
		weight: 1,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			await e.placed.kill();
			e.alive = false;
			await command(s, "/ide status");
			return `ed${e.k} dies`;
		},
	},
	{
		name: "/ide off",
		weight: 0.6,
		run: async (s) => {
			await command(s, "/ide off");
			s.connection.mode = { kind: "off" };
			s.connection.remembered = { kind: "off" };
			return "/ide off";
		},
	},
	{
		name: "/ide auto",
		weight: 0.8,
		run: async (s) => {
			await command(s, "/ide auto");
			// pi keeps a live connection through /ide auto, as an automatic one (sticky: controller.resumeAuto).
			const before = connect(
				s.connection,
				alive(s).map((e) => e.placed.pid),
			);
			s.connection.mode = { kind: "auto" };
			s.connection.sticky = "pid" in before ? before.pid : null;
			s.connection.remembered = { kind: "none" };
			return "/ide auto";
		},
	},
	{
		name: "/ide pick",
		weight: 0.8,
		when: someAlive,
		run: async (s) => {
			const e = pick(s.random, alive(s));
			const since = s.rpc.records.length;
			const done = s.rpc.prompt("/ide");
			const request = await s.rpc.waitFor(
				(r) => r.type === "extension_ui_request" && r.method === "select",
				WAIT_MS,
				since,
			);
			const row = (request.options ?? []).find((o) => o.includes(`ed${e.k} `) || o.includes(`ed${e.k}\u2026`));
			assert.ok(row, `no picker row for ed${e.k}: ${JSON.stringify(request.options)}`);
			s.rpc.respond(String(request.id), { value: row });
			await done;
			s.connection.mode = { kind: "picked", pid: e.placed.pid };
			s.connection.remembered = { kind: "pick", pid: e.placed.pid };
			return `/ide pick ed${e.k}`;
		},
	},
	{
		name: "compact",
		weight: 1,
		when: (s) => s.prompts > 0,
		run: async (s) => {
			const response = await s.rpc.command({ type: "compact" }, 2 * WAIT_MS);
			return `compact (${response.success ? "done" : String(response.error)})`;
		},
	},
	{
		name: "new",
		weight: 0.4,
		run: async (s) => {
			await rememberSession(s);
			assert.equal((await s.rpc.command({ type: "new_session" })).success, true);
			return restarted(s, "/new");
		},
	},
	{
		name: "resume",
		weight: 0.4,
		when: (s) => s.sessions.length > 0,
		run: async (s) => {
			const path = pick(s.random, s.sessions);
			await rememberSession(s);
			const switched = await s.rpc.command({ type: "switch_session", sessionPath: path });
			assert.equal(switched.success, true, JSON.stringify(switched));
			return restarted(s, `/resume ${path.split("/").at(-1)}`);
		},
	},
	{
		name: "fork",
		weight: 0.4,
		when: (s) => s.prompts > 0,
		run: async (s) => {
			const users = (await entries(s)).filter((e) => e.type === "message" && e.message?.role === "user");
			if (users.length === 0) return "fork (no user entry)";
			const at = pick(s.random, users);
			await rememberSession(s);
			const forked = await s.rpc.command({ type: "fork", entryId: at.id });
			assert.equal(forked.success, true, JSON.stringify(forked));
			return restarted(s, "/fork");
		},
	},
	{
		name: "tree",
		weight: 0.4,
		when: (s) => s.prompts > 0,
		run: async (s) => {
			const all = (await entries(s)).filter((e) => e.type === "message");
			if (all.length === 0) return "tree (no entry)";
			const at = pick(s.random, all);
			const since = s.rpc.records.length;
			await s.rpc.prompt(`/test-tree ${at.id}`);
			await s.rpc.waitFor(
				(r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("TREE:"),
				WAIT_MS,
				since,
			);
			return `/tree to a ${at.message?.role} entry`;
		},
	},
];

interface Entry {
	type: string;
	id: string;
	message?: { role?: string };
}

async function entries(s: Sequence): Promise<Entry[]> {
	const response = await s.rpc.command({ type: "get_entries" });
	return (response.data as { entries?: Entry[] } | undefined)?.entries ?? [];
}

async function rememberSession(s: Sequence): Promise<void> {
	const state = await s.rpc.command({ type: "get_state" });
	const file = (state.data as { sessionFile?: string } | undefined)?.sessionFile;
	if (file && !s.sessions.includes(file)) s.sessions.push(file);
}

/** A new session runtime: a new controller, auto again, nothing sticky (a remembered choice still applies). */
async function restarted(s: Sequence, what: string): Promise<string> {
	s.connection.mode = { kind: "auto" };
	s.connection.sticky = null;
	await command(s, "/ide status");
	return what;
}

/** One prompt; sometimes a tool call first, sometimes one that fills the context (pi compacts mid-run). */
async function prompt(s: Sequence): Promise<string> {
	s.prompts += 1;
	const text = `prompt ${s.prompts}`;
	const expected = expectedNow(s.editors, s.connection);
	const r = s.random();
	const tool = r < 0.35;
	const fill = r < 0.15;
	const first = s.env.model.requests.length;
	const read = touch(s.env.workDir, "README.md", "# project\n");
	s.env.model.respond = (request) => {
		// One tool call per run: the request answering it ends with the tool's result.
		if (!tool || !isAgentRequest(request) || requestMessages(request).at(-1)?.role === "tool") return undefined;
		return { toolCalls: [{ name: "read", arguments: { path: read } }], ...(fill ? { promptTokens: 127_000 } : {}) };
	};
	await s.rpc.prompt(text);
	s.env.model.respond = undefined;
	const requests = s.env.model.requests.slice(first).filter(isAgentRequest);
	assert.ok(requests.length > 0, "the prompt reached the model");
	for (const [i, request] of requests.entries()) {
		const problems = checkRequest(request, expected, text, s.windowed);
		if (problems.length > 0)
			throw new Error(
				`request ${i + 1} of "${text}" (editor: ${JSON.stringify(expected)}):\n  ${problems.join("\n  ")}\nits editor context:\n${requestMessages(
					request,
				)
					.filter((m) => m.role === "user")
					.map(messageText)
					.join("\n---\n")}`,
			);
	}
	return `${text}${tool ? (fill ? " (tool call, context full: compaction mid-run)" : " (tool call)") : ""} -> ${requests.length} request(s) checked`;
}

/** The agent's own requests (they offer tools); pi's summariser requests do not. */
function isAgentRequest(request: RecordedRequest): boolean {
	return typeof request.body === "object" && Array.isArray(request.body["tools"]);
}

async function runSequence(t: Parameters<typeof envFor>[0], seed: number): Promise<void> {
	const random = prng(seed);
	const around = AROUND[(((seed - 1501) % AROUND.length) + AROUND.length) % AROUND.length] ?? null;
	const env = await envFor(t, {
		settings: { ideContext: { linkNvim: false }, compaction: { keepRecentTokens: 1 } },
	});
	writeFileSync(join(env.agentDir, "ide-context.ignore"), "secret-*\n");
	const s: Sequence = {
		env,
		rpc: undefined as unknown as RpcPi,
		random,
		editors: [],
		connection: { mode: { kind: "auto" }, sticky: null, remembered: { kind: "none" } },
		log: [
			`seed ${seed}: ${around ? `${around.name} loaded ${around.before ? "before" : "after"}` : "no other extension"}`,
		],
		prompts: 0,
		sessions: [],
		nextEditor: 0,
		windowed: around?.name === "window-context-extension" && !around.before,
	};
	await addEditor(s);
	const others = around ? [join(REPO, "test/fixtures", `${around.name}.ts`)] : [];
	const tree = join(REPO, "test/fixtures/tree-extension.ts");
	const order = around?.before ? [...others, PRODUCT_EXTENSION, tree] : [PRODUCT_EXTENSION, tree, ...others];
	const [first, ...rest] = order as [string, ...string[]];
	s.rpc = await startRpc(env, { session: true, extension: first, args: rest.flatMap((e) => ["-e", e]) });
	t.after(() => s.rpc.close());
	try {
		// pi's start on a loaded machine can take long: the pill says the extension is up.
		await s.rpc.waitFor(
			(r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === STATUS_KEY,
			3 * WAIT_MS,
		);
		// pi connected to the first editor on its own (sticky): a second one starting later does not take over.
		expectedNow(s.editors, s.connection);
		for (let step = 0; step < STEPS; step++) {
			const possible = ACTIONS.filter((a) => !a.when || a.when(s));
			const total = possible.reduce((n, a) => n + a.weight, 0);
			const roll = random() * total;
			let sum = 0;
			const action =
				possible.find((a) => {
					sum += a.weight;
					return roll < sum;
				}) ?? (possible[0] as Action);
			s.log.push(await action.run(s));
			// pi re-decides its connection after every action that can change it (each ends with a refresh): so does the oracle.
			expectedNow(s.editors, s.connection);
		}
		s.log.push(await prompt(s));
		if (process.env["PI_IDE_STALE_LOG"]) console.log(s.log.join("\n  "));
	} catch (error) {
		throw new Error(
			`never-stale sequence failed; replay with PI_IDE_STALE_SEED=${seed} PI_IDE_STALE_STEPS=${STEPS}\nsteps:\n  ${s.log.join("\n  ")}\n${error instanceof Error ? error.message : String(error)}`,
		);
	}
}

describe("never a stale picture: random sequences through real pi, every request checked", { concurrency: 2 }, () => {
	after(killAllEditors);
	for (const seed of SEEDS) test(`seed ${seed}`, { timeout: 15 * 60_000 }, (t) => runSequence(t, seed));
});

describe("the oracle itself", () => {
	const block = (file: string, cursor: number, selection = "") =>
		`The user's editor (Neovim) shows this file:\nFile: ${file}\nCursor: line ${cursor}, column 1${selection}`;
	const selected = "Selection (lines 1-2, made 1 s ago):\n```ts\nconst s1 = 5;\nreturn s1;\n```";
	const referred =
		"Selection (lines 1-2, made 1 s ago): the same selection as in an earlier editor context of this conversation; not repeated.";
	const cases: Array<{ name: string; texts: string[]; problems: number; picture: string }> = [
		{ name: "a block", texts: [block("/a.ts", 3)], problems: 0, picture: "block" },
		{
			name: "an update on a block",
			texts: [block("/a.ts", 3), "Editor update (Neovim), the rest as before:\nCursor: line 9, column 1"],
			problems: 0,
			picture: "block",
		},
		{
			name: "a dangling update",
			texts: ["Editor update (Neovim), the rest as before:\nCursor: line 9, column 1"],
			problems: 1,
			picture: "none",
		},
		{
			name: "a selection reference with no copy",
			texts: [
				block(
					"/a.ts",
					3,
					"\nSelection (lines 1-2, made 1 s ago): the same selection as in an earlier editor context of this conversation; not repeated.",
				),
			],
			problems: 1,
			picture: "block",
		},
		{ name: "a notice", texts: [block("/a.ts", 3), "Editor context out of date: x."], problems: 0, picture: "notice" },
		{
			name: "a whole block referring to the copy an earlier message carries",
			texts: [block("/a.ts", 3, `\n${selected}`), block("/b.ts", 4), block("/a.ts", 5, `\n${referred}`)],
			problems: 0,
			picture: "block",
		},
		{
			name: "a reference whose copy is no longer in the request (superseded)",
			texts: ["(An earlier editor context stood here ...)", block("/a.ts", 5, `\n${referred}`)],
			problems: 1,
			picture: "block",
		},
	];
	for (const { name, texts, problems, picture } of cases) {
		test(name, () => {
			const read = readRequest(texts);
			assert.equal(read.problems.length, problems, read.problems.join("; "));
			assert.equal(read.picture.kind, picture);
		});
	}

	const separation: Array<{ name: string; texts: string[]; problems: number }> = [
		{ name: "block and prompt, each a message", texts: [block("/a.ts", 3), "prompt 3"], problems: 0 },
		{
			name: "block and prompt in one text, a blank line between",
			texts: [`${block("/a.ts", 3)}\n\nprompt 3`],
			problems: 0,
		},
		{ name: "the prompt glued to the block (parts read as one)", texts: [`${block("/a.ts", 3)}prompt 3`], problems: 1 },
		{ name: "a block glued to the text before it", texts: [`see:${block("/a.ts", 3)}`, "prompt 3"], problems: 1 },
		{ name: "another prompt's number is not this prompt", texts: [block("/a.ts", 3), "prompt 31"], problems: 0 },
	];
	for (const { name, texts, problems } of separation) {
		test(`separation: ${name}`, () => assert.equal(separationProblems(texts, "prompt 3").length, problems));
	}
});
