/**
 * Protocol v0.3, pi -> editor (PROTOCOL.md, "pi's message file", "What an editor may and may not do with
 * it"): the "pi" is a live process of ours (its pid is what matters) and its messages are built by the one
 * factory (test/fixtures/pi-message.ts) and written as pi writes them. One message naming files in every
 * situation gets one report per file with its status; only unmodified buffers the editor has loaded are
 * reloaded; nothing is ever opened, run, created or deleted; and each kind of bad message is ignored (at most
 * one notice, never an error, nothing touched), followed by a good message the same editor must still handle.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { MAX_PI_CHANGED, MAX_PI_MESSAGE_BYTES } from "../../../src/protocol/limits.ts";
import type { EditorState, FileStatus, PiMessage } from "../../../src/protocol/protocol.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { deadPid, spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollFor, pollUntil } from "../../helpers/poll.ts";
import {
	activeFile,
	type Editor,
	type KitCase,
	nowSeconds,
	QUIET_MS,
	quietPeriod,
	settledOnChange,
	WRITE_WAIT_MS,
} from "../kit.ts";

const isRoot = process.getuid?.() === 0;

const ORIGINAL = "one\ntwo\nthree\n";
const PIS_VERSION = "pi's\nnew\nversion\n";
const USER_TEXT = ["USER", "TEXT"];

/** pi's message naming `files` (each changed at its own seq), from `piPid` to `editor`. */
function messageFor(editor: Editor, piPid: number, files: string[], overrides: Partial<PiMessage> = {}): PiMessage {
	return makePiMessage({
		pid: piPid,
		cwd: editor.project,
		timestamp: nowSeconds(),
		editor_pid: editor.session.pid,
		seq: files.length,
		changed: files.map((file, i) => ({ file, seq: i + 1, tool: "write" })),
		last_turn: files,
		...overrides,
	});
}

/** Write `message` as pi does: `<state dir>/pi-<pid>.json`, atomically, 0600 (or as `options` say). */
function send(editor: Editor, message: unknown, options: { name?: string; mode?: number; raw?: string } = {}): string {
	const name = options.name ?? `pi-${(message as { pid: number }).pid}.json`;
	return writeRawStateFile(editor.stateDir, name, options.raw ?? JSON.stringify(message), options.mode);
}

/**
 * pi's first message on connecting (no changes yet, seq 0), handled: a client may take the changes listed in
 * the first message it sees from a pi as history (only the newest is news), so every later one counts.
 */
async function connect(editor: Editor, piPid: number): Promise<void> {
	send(editor, messageFor(editor, piPid, [], { seq: 0 }));
	await editor.until((s) => s.pi?.pid === piPid && s.pi.seq === 0, "pi's first message is handled");
}

/** A live pi for one message; killed after the case by the kit's cleanup. */
async function livePi(): Promise<{ pid: number; kill: () => Promise<void> }> {
	return spawnLiveEditor();
}

/** Open `name` with ORIGINAL in the editor and wait until it is the active buffer. */
async function openFile(editor: Editor, name: string): Promise<string> {
	const file = editor.file(name, ORIGINAL);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	return file;
}

/** Where a file named in pi's message stands when the message comes, and what the editor must report. */
interface Situation {
	name: string;
	/** Lay the file out (it starts open, unmodified, with ORIGINAL), then pi changes it. */
	arrange: (editor: Editor, file: string) => Promise<void>;
	status: FileStatus | FileStatus[];
	/** The buffer afterwards: undefined when no loaded buffer may hold the file. */
	buffer?: { text: string; modified: boolean };
	/** An editor that reloads by itself (ClientAdapter.hostReloads) may have read the new file into it. */
	hostMayReload?: boolean;
}

const SITUATIONS: Situation[] = [
	{
		name: "open, unmodified, changed by pi",
		arrange: async (_editor, file) => writeFileSync(file, PIS_VERSION),
		status: "reloaded",
		buffer: { text: PIS_VERSION, modified: false },
	},
	{
		name: "open, unmodified, same content on disk",
		arrange: async () => {},
		// A client that cannot tell its host's reload from no change at all (VS Code) says reloaded.
		status: ["unchanged", "reloaded"],
		buffer: { text: ORIGINAL, modified: false },
	},
	{
		name: "open with unsaved changes",
		arrange: async (editor, file) => {
			await editor.session.setLines(file, USER_TEXT);
			writeFileSync(file, PIS_VERSION);
		},
		status: "modified",
		buffer: { text: `${USER_TEXT.join("\n")}\n`, modified: true },
	},
	{
		name: "open, its file deleted",
		arrange: async (_editor, file) => rmSync(file),
		status: "gone",
		buffer: { text: ORIGINAL, modified: false },
	},
	{
		name: "open, its file replaced by a symlink",
		arrange: async (editor, file) => {
			const elsewhere = join(editor.project, "elsewhere.txt");
			writeFileSync(elsewhere, PIS_VERSION);
			rmSync(file);
			symlinkSync(elsewhere, file);
		},
		status: "refused",
		buffer: { text: ORIGINAL, modified: false },
		hostMayReload: true,
	},
];

/** Levels of a message nested too deep, within its 64 KiB. */
const DEEP_MESSAGE = 30_000;

/** Kinds of bad message, each written in place of a good one naming an open, unmodified file pi changed. */
interface BadMessage {
	name: string;
	/** Write it; `good` is the message it spoils (from a live pi). */
	write: (editor: Editor, good: PiMessage) => Promise<void> | void;
	/** "one": bad input, told once; "at most one": not for this editor to act on (no notice required). */
	notice: "one" | "at most one";
	unavailable?: () => string | undefined;
}

const BAD: BadMessage[] = [
	{ name: "malformed JSON", notice: "one", write: (e, m) => void send(e, m, { raw: '{"protocol": "0.3", ' }) },
	{
		name: `over the ${MAX_PI_MESSAGE_BYTES / 1024} KiB limit`,
		notice: "one",
		write: (e, m) => void send(e, { ...m, padding: "x".repeat(MAX_PI_MESSAGE_BYTES) }),
	},
	{
		// PROTOCOL.md "Limits": refused before it is decoded (Vim 9.0's json_decode() crashed on it).
		name: `nested ${DEEP_MESSAGE.toLocaleString("en")} levels deep`,
		notice: "one",
		write: (e, m) =>
			void send(e, m, {
				raw: JSON.stringify({ ...m, deep: 0 }).replace(
					'"deep":0',
					`"deep":${"[".repeat(DEEP_MESSAGE)}${"]".repeat(DEEP_MESSAGE)}`,
				),
			}),
	},
	{ name: "of another kind", notice: "one", write: (e, m) => void send(e, { ...m, kind: "editor" }) },
	{ name: "with a malformed field (seq a string)", notice: "one", write: (e, m) => void send(e, { ...m, seq: "4" }) },
	{
		name: "whose pid field is not its name's",
		notice: "one",
		write: (e, m) => void send(e, { ...m, pid: m.pid + 1 }, { name: `pi-${m.pid}.json` }),
	},
	{
		// Refused whole (Neovim) or cut to its newest 50 (VS Code): either way the change beyond the cap, the
		// oldest, which names the file, is never acted on.
		name: `over the ${MAX_PI_CHANGED}-change cap (the oldest, beyond the cap, naming the file)`,
		notice: "at most one",
		write: (e, m) => {
			const victim = m.changed[0]?.file ?? "";
			const elsewhere = join(e.project, "not-open.txt");
			const changed = Array.from({ length: MAX_PI_CHANGED + 1 }, (_, i) => ({
				file: i === 0 ? victim : elsewhere,
				seq: i + 1,
				tool: "edit",
			}));
			send(e, { ...m, changed, seq: changed.length });
		},
	},
	{ name: "group/other-readable (0644)", notice: "one", write: (e, m) => void send(e, m, { mode: 0o644 }) },
	{
		name: "owned by another user",
		notice: "one",
		unavailable: () => (isRoot ? undefined : "a file of another owner needs root to chown"),
		write: (e, m) => {
			const path = join(e.project, "foreign.json");
			writeFileSync(path, JSON.stringify(m), { mode: 0o600 });
			chownSync(path, 4242, 4242);
			renameSync(path, join(e.stateDir, `pi-${m.pid}.json`));
		},
	},
	{
		name: "a symlink to a good message",
		notice: "one",
		write: (e, m) => {
			const target = join(e.project, "elsewhere.json");
			writeFileSync(target, JSON.stringify(m), { mode: 0o600 });
			chmodSync(target, 0o600);
			// Renamed over pi's message, as a planted link would replace it.
			const link = join(e.project, "link.json");
			symlinkSync(target, link);
			renameSync(link, join(e.stateDir, `pi-${m.pid}.json`));
		},
	},
	{
		name: "from a pi that has exited",
		notice: "at most one",
		write: async (e, m) => {
			const gone = await deadPid();
			send(e, { ...m, pid: gone });
		},
	},
	{
		name: "for another editor",
		notice: "at most one",
		write: (e, m) => void send(e, { ...m, editor_pid: e.session.pid + 100_000 }),
	},
	{
		name: "under a non-canonical name (pi-0<pid>.json)",
		notice: "at most one",
		write: (e, m) => void send(e, m, { name: `pi-0${m.pid}.json` }),
	},
];

/** A good message from a new live pi reloads `file`: the editor still answers after whatever came before. */
async function assertStillHandles(editor: Editor, file: string, cleanup: (fn: () => Promise<void>) => void) {
	const pi = await livePi();
	cleanup(pi.kill);
	writeFileSync(file, "control\n");
	send(editor, messageFor(editor, pi.pid, [file]));
	await editor.until(
		(s) => s.pi?.pid === pi.pid && s.files?.some((f) => f.file === file && f.status === "reloaded") === true,
		"a good message is still handled",
	);
	assert.deepEqual(await editor.session.buffer(file), { text: "control\n", modified: false });
}

let fileCount = 0;
/** A file name no other case of the shared editor uses. */
const unique = (stem: string) => `${stem}-${++fileCount}.txt`;

/**
 * How long the retention case's pi waits before reading: longer than the 5 s the clients once held a report for
 * by the clock (PROTOCOL.md v0.5 keeps what pi's message lists instead, however late pi reads).
 */
const SLOW_PI_MS = 6000;

export const cases: KitCase[] = [
	{
		name: "v0.3: one message, one report per file, with its status; only unmodified open buffers reload",
		ownEditors: true,
		needs: ["reload", "edit"],
		run: async (kit) => {
			const editor = await kit.start();
			const files: { situation: Situation; file: string }[] = [];
			for (const situation of SITUATIONS) files.push({ situation, file: await openFile(editor, unique("sit")) });
			const notOpen = editor.file(unique("not-open"), ORIGINAL);
			for (const { situation, file } of files) await situation.arrange(editor, file);
			writeFileSync(notOpen, PIS_VERSION);
			const loadedBefore = (await editor.session.loadedFiles()).sort();
			const noticesBefore = (await editor.notices()).length;
			const pi = await livePi();
			try {
				await connect(editor, pi.pid);
				const named = [...files.map((f) => f.file), notOpen];
				const message = messageFor(editor, pi.pid, named);
				send(editor, message);
				// Where pi's text differs, the report that counts is the one the editor settles on.
				const late = (s: EditorState) =>
					files.some(({ situation, file }) => {
						const report = s.files?.find((r) => r.file === file);
						return (
							!([] as FileStatus[]).concat(situation.status).includes("unchanged") &&
							report !== undefined &&
							!settledOnChange(report)
						);
					});
				const state = await editor.until(
					(s) => s.pi?.pid === pi.pid && s.pi.seq === message.seq && (s.files?.length ?? 0) >= named.length && !late(s),
					"reports on every file",
				);
				const reports = new Map((state.files ?? []).map((r) => [r.file, r]));
				for (const { situation, file } of files) {
					const report = reports.get(file);
					assert.ok(report, `a report on the file ${situation.name}`);
					const allowed = ([] as FileStatus[]).concat(situation.status);
					assert.ok(allowed.includes(report.status), `${situation.name}: ${report.status}, not ${allowed}`);
					assert.equal(report.seq, named.indexOf(file) + 1, `${situation.name}: the seq of its change`);
					assert.equal(report.modified, situation.buffer?.modified ?? false, `${situation.name}: modified`);
					if (!(situation.hostMayReload && kit.adapter.hostReloads)) {
						assert.deepEqual(await editor.session.buffer(file), situation.buffer, `${situation.name}: the buffer`);
					}
				}
				assert.equal(reports.get(notOpen)?.status, "not-open");
				assert.equal(reports.get(notOpen)?.version ?? null, null, "a file not open has no version");
				assert.deepEqual((await editor.session.loadedFiles()).sort(), loadedBefore, "nothing was opened");
				const modified = basename(files.find((f) => f.situation.status === "modified")?.file ?? "");
				let told: string[] = [];
				await pollFor(
					async () => {
						told = (await editor.notices()).slice(noticesBefore);
						return told.some((n) => n.includes(modified));
					},
					() => `the unsaved buffer is named in a notice: ${JSON.stringify(told)}`,
					WRITE_WAIT_MS,
				);
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "v0.3: a message never makes the editor open, run, create or delete anything",
		needs: ["reload"],
		run: async (kit) => {
			const editor = await kit.shared();
			const marker = join(editor.project, unique("ran"));
			const script = editor.file(unique("run-me"), `#!/bin/sh\ntouch '${marker}'\n`);
			chmodSync(script, 0o700);
			const dir = join(editor.project, unique("a-dir"));
			mkdirSync(dir);
			const missing = join(editor.project, unique("missing"));
			const loadedBefore = (await editor.session.loadedFiles()).sort();
			const pi = await livePi();
			try {
				await connect(editor, pi.pid);
				const named = [script, dir, missing, join(editor.project, "..", "home", ".bashrc")];
				send(editor, messageFor(editor, pi.pid, named));
				await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === named.length, "the message is handled");
				await quietPeriod(QUIET_MS);
				assert.deepEqual((await editor.session.loadedFiles()).sort(), loadedBefore, "nothing was opened");
				assert.ok(existsSync(script) && existsSync(dir), "nothing was deleted");
				assert.ok(!existsSync(marker), "nothing was run");
				assert.ok(!existsSync(missing), "nothing was created");
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "v0.3: a reloaded file's report carries the diagnostics a checker publishes for the new content, dated with its version",
		needs: ["reload", "diagnostics"],
		run: async (kit) => {
			const editor = await kit.shared();
			const file = await openFile(editor, unique("checked"));
			const pi = await livePi();
			try {
				await connect(editor, pi.pid);
				writeFileSync(file, PIS_VERSION);
				send(editor, messageFor(editor, pi.pid, [file]));
				const reloaded = await editor.until(
					(s) => s.files?.some((f) => f.file === file && f.status === "reloaded") === true,
					"the reload's report",
				);
				const version = reloaded.files?.find((f) => f.file === file)?.version;
				assert.ok(typeof version === "number", "a reloaded file's report has its buffer version");
				// The checker runs on pi's text and publishes for it.
				await editor.session.setDiagnostics(file, [
					{ severity: "error", line: 2, column: 1, message: "pi broke it", source: "kit" },
				]);
				const checked = await editor.until(
					(s) => s.files?.find((f) => f.file === file)?.diagnostics?.total === 1,
					"the report's diagnostics",
				);
				const report = checked.files?.find((f) => f.file === file);
				assert.ok(report?.diagnostics);
				assert.equal(report.diagnostics.version, report.version, "dated with the version pi waits for");
				assert.ok(report.version !== null && report.version >= version);
				assert.deepEqual(
					report.diagnostics.items.map((d) => [d.severity, d.line, d.column, d.message]),
					[["error", 2, 1, "pi broke it"]],
				);
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "report retention: one message naming 40 files gets a report on every file, each with its change's seq",
		needs: ["reload"],
		run: async (kit) => {
			const editor = await kit.shared();
			const named = Array.from({ length: 40 }, () => editor.file(unique("many"), ORIGINAL));
			const pi = await livePi();
			try {
				await connect(editor, pi.pid);
				const message = messageFor(editor, pi.pid, named);
				send(editor, message);
				const state = await editor.until(
					(s) => s.pi?.pid === pi.pid && s.pi.seq === message.seq,
					"the message of 40 files is handled",
				);
				const reports = new Map(
					(state.files ?? []).filter((r) => r.pi_pid === undefined || r.pi_pid === pi.pid).map((r) => [r.file, r]),
				);
				const missing = named.filter((file) => !reports.has(file)).map((file) => basename(file));
				assert.deepEqual(missing, [], "every file pi named has its report while pi may still wait for it");
				for (const [i, file] of named.entries()) assert.equal(reports.get(file)?.seq, i + 1, basename(file));
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "report retention: kept while pi's message lists the change, however late pi reads; beyond pi's newest 20, gone once a newer message no longer lists it",
		needs: ["reload"],
		run: async (kit) => {
			const editor = await kit.shared();
			const named = Array.from({ length: 40 }, () => editor.file(unique("slow"), ORIGINAL));
			const pi = await livePi();
			const mine = (s: { files?: { file: string; seq: number; pi_pid?: number }[] | undefined }) =>
				new Map(
					(s.files ?? []).filter((r) => r.pi_pid === undefined || r.pi_pid === pi.pid).map((r) => [r.file, r.seq]),
				);
			try {
				await connect(editor, pi.pid);
				const message = messageFor(editor, pi.pid, named);
				send(editor, message);
				await editor.until(
					(s) => s.pi?.pid === pi.pid && s.pi.seq === message.seq,
					"the message of 40 files is handled",
				);
				// pi is slow to read (a loaded machine): longer than the 5 s the clients once held a report for. The
				// user's act then makes the editor write its state again, and only that write is read.
				await quietPeriod(SLOW_PI_MS);
				const later = await openFile(editor, unique("later"));
				const late = mine(await editor.until((s) => activeFile(s) === later, "a state write after pi's pause"));
				const missing = named.filter((file, i) => late.get(file) !== i + 1).map((file) => basename(file));
				assert.deepEqual(missing, [], "every change pi's message lists keeps its report, however late pi reads");
				// pi's newer message lists only its newest 5 changes (four of the 40 and a new one): the reports beyond its
				// newest 20 that it no longer lists go with the editor's next state write.
				const fresh = editor.file(unique("fresh"), ORIGINAL);
				const newer = messageFor(editor, pi.pid, [], {
					seq: 41,
					changed: [
						...named.slice(-4).map((file, i) => ({ file, seq: 37 + i, tool: "write" })),
						{ file: fresh, seq: 41, tool: "write" },
					],
				});
				send(editor, newer);
				const after = mine(
					await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === 41, "the newer message is handled"),
				);
				const newest = [...named.slice(-19), fresh];
				assert.deepEqual(
					[...after.keys()]
						.filter((f) => f === fresh || named.includes(f))
						.map((f) => basename(f))
						.sort(),
					newest.map((f) => basename(f)).sort(),
					"pi's newest 20 reports stay, the older ones it no longer lists go",
				);
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "report retention: two pis changing one file each find their own report (keyed by pi_pid)",
		needs: ["reload"],
		run: async (kit) => {
			const editor = await kit.shared();
			const file = editor.file(unique("both"), ORIGINAL);
			const first = await livePi();
			const second = await livePi();
			try {
				await connect(editor, first.pid);
				send(editor, messageFor(editor, first.pid, [file]));
				await editor.until((s) => s.pi?.pid === first.pid && s.pi.seq === 1, "the first pi's message is handled");
				await connect(editor, second.pid);
				send(editor, messageFor(editor, second.pid, [file]));
				const state = await editor.until(
					(s) => s.pi?.pid === second.pid && s.pi.seq === 1,
					"the second pi's message is handled",
				);
				const owners = (state.files ?? []).filter((r) => r.file === file).map((r) => r.pi_pid);
				assert.deepEqual(owners.sort(), [first.pid, second.pid].sort(), "one report per pi on the file");
			} finally {
				await first.kill();
				await second.kill();
			}
		},
	},
	...BAD.map(
		(bad): KitCase => ({
			name: `v0.3: a message ${bad.name} is ignored (${bad.notice} notice, nothing touched), and the next good one handled`,
			needs: ["reload", "editor-per-row"],
			...(bad.unavailable ? { unavailable: bad.unavailable } : {}),
			run: async (kit) => {
				// An editor of its own: a client may rate-limit its notices (Neovim: three in ten seconds, then one
				// line for the rest), and the rows before must not use up this one's.
				const editor = await kit.start();
				const victim = await openFile(editor, unique("victim"));
				const control = await openFile(editor, unique("control"));
				writeFileSync(victim, PIS_VERSION);
				const noticesBefore = (await editor.notices()).length;
				const pi = await livePi();
				const kills: (() => Promise<void>)[] = [pi.kill];
				try {
					// Connected first: a client then acts on every change a message lists (not only the newest).
					await connect(editor, pi.pid);
					await bad.write(editor, messageFor(editor, pi.pid, [victim]));
					if (bad.notice === "one") {
						// Three writes' time: an editor of its own was just started (a JVM, under the whole suite's load);
						// when the notice comes is no rule here, that it comes once is.
						await pollUntil(
							async () => ((await editor.notices()).length > noticesBefore ? true : undefined),
							"one notice about the bad message",
							3 * WRITE_WAIT_MS,
						);
					} else {
						await quietPeriod(QUIET_MS);
					}
					await assertStillHandles(editor, control, (fn) => kills.push(fn));
					const state = editor.readState();
					assert.ok(state);
					if (!kit.adapter.hostReloads) {
						assert.deepEqual(
							await editor.session.buffer(victim),
							{ text: ORIGINAL, modified: false },
							"the file the bad message named was not reloaded",
						);
					}
					assert.ok(!state.files?.some((f) => f.file === victim), "no report on it");
					const told = (await editor.notices()).slice(noticesBefore);
					assert.ok(told.length <= 1, `at most one notice: ${JSON.stringify(told)}`);
					if (bad.notice === "one") assert.equal(told.length, 1);
				} finally {
					for (const kill of kills) await kill();
				}
			},
		}),
	),
];
