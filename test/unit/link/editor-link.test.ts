/**
 * EditorLink against a real state dir (no editor process: the test writes the editor's answers): what pi
 * publishes and when, and what a write/edit's tool result gets for each kind of answer.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { parsePiMessage } from "../../../editors/shared/pi-message.ts";
import type { EditorRecord } from "../../../src/discovery/scan.ts";
import { EditorLink, type EditorLinkOptions } from "../../../src/link/editor-link.ts";
import type { WaitCaps } from "../../../src/link/pi-message.ts";
import type { FileReport } from "../../../src/protocol/protocol.ts";
import { makeState, writeStateFile } from "../../helpers/state-files.ts";

const UID = process.getuid?.() ?? 0;
const EDITOR = 4_000_001;
const PI = 4_000_002;
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const CAPS: WaitCaps = { answerMs: 200, diagnosticsMs: 300 };

/**
 * A private state dir, an editor (pi is connected to it) whose answers the test writes, and a link of pi's.
 * `options` replace the link's defaults (caps above, a seq counter of its own); `newLink` builds another link
 * in the same "process" (same dir, pid and defaults), as the next session's session_start does.
 */
function world(protocol: string | null = "0.3", options: Partial<EditorLinkOptions> = {}) {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-link-"));
	roots.push(root);
	const dir = join(root, "pi-ide");
	mkdirSync(dir);
	chmodSync(dir, 0o700);
	const state = makeState({
		pid: EDITOR,
		cwd: "/w",
		timestamp: 1,
		...(protocol ? { protocol } : {}),
		active_buffer: { file: "/w/a.ts", cursor: { line: 1, column: 1 }, lines_total: 1 },
	});
	let connected: EditorRecord | undefined = {
		path: join(dir, `${EDITOR}.json`),
		pid: EDITOR,
		state,
		writtenAt: state.timestamp,
		ino: 0,
	};
	const answer = (files: FileReport[]) => writeStateFile(dir, { ...state, files });
	const newLink = () =>
		new EditorLink({
			stateDir: dir,
			uid: UID,
			pid: PI,
			cwd: "/w",
			home: "/home/u",
			connected: () => connected,
			waitCaps: CAPS,
			seqCounter: { last: 0 },
			...options,
		});
	const message = () => {
		const parsed = parsePiMessage(readFileSync(join(dir, `pi-${PI}.json`), "utf8"));
		assert.ok(parsed.ok, JSON.stringify(parsed));
		return parsed.message;
	};
	return {
		dir,
		link: newLink(),
		newLink,
		answer,
		message,
		disconnect: () => {
			connected = undefined;
		},
		/** The state the controller's last scan holds for the connected editor (its file on disk unchanged). */
		scanned: (next: EditorRecord["state"]) => {
			if (connected) connected = { ...connected, state: next };
		},
	};
}

const report = (overrides: Partial<FileReport> = {}): FileReport => ({
	file: "/w/src/a.ts",
	seq: 1,
	status: "reloaded",
	version: 3,
	modified: false,
	diagnostics_expected: false,
	diagnostics: null,
	...overrides,
});

describe("EditorLink", () => {
	it("publishes when connected, follows the connection, removes its file on close", () => {
		const w = world();
		w.link.sync();
		assert.equal(w.message().editor_pid, EDITOR);
		assert.equal(w.message().seq, 0);
		w.disconnect();
		w.link.sync();
		assert.equal(w.message().editor_pid, null);
		w.link.close();
		assert.equal(existsSync(join(w.dir, `pi-${PI}.json`)), false);
	});

	it("does not write anything while never connected", async () => {
		const w = world();
		w.disconnect();
		w.link.sync();
		assert.equal(await w.link.afterTool("write", { path: "src/a.ts" }), null);
		assert.equal(existsSync(join(w.dir, `pi-${PI}.json`)), false);
	});

	it("records the change (resolved path, seq, tool) and last_turn at the turn's end", async () => {
		const w = world();
		w.link.startRun();
		w.answer([report({ status: "not-open", version: null })]);
		assert.equal(await w.link.afterTool("edit", { path: "@src/a.ts" }), null);
		assert.deepEqual(w.message().changed, [{ file: "/w/src/a.ts", seq: 1, tool: "edit" }]);
		assert.deepEqual(w.message().last_turn, []);
		w.link.endTurn();
		assert.deepEqual(w.message().last_turn, ["/w/src/a.ts"]);
	});

	it("ignores other tools, inputs without a path, and paths pi's tools refuse", async () => {
		const w = world();
		assert.equal(await w.link.afterTool("bash", { command: "rm -rf /" }), null);
		assert.equal(await w.link.afterTool("write", { content: "x" }), null);
		assert.equal(await w.link.afterTool("write", { path: "file://host/x" }), null);
		assert.equal(w.link.log.seq, 0);
	});

	it("an unsaved buffer in the editor: the model is told", async () => {
		const w = world();
		w.answer([report({ status: "modified", modified: true })]);
		const note = await w.link.afterTool("write", { path: "/w/src/a.ts" });
		assert.match(note ?? "", /open in Neovim with unsaved changes/);
	});

	it("reloaded with a checker but no fresh diagnostics: 'none arrived' at the diagnostics cap", async () => {
		const w = world();
		w.answer([report({ diagnostics_expected: true, diagnostics: { version: 2, total: 1, items: [] } })]);
		const note = await w.link.afterTool("write", { path: "/w/src/a.ts" });
		assert.equal(note, "Neovim reloaded /w/src/a.ts; no diagnostics for the new content arrived within 300 ms.");
	});

	it("a v0.3 editor that does not answer: the note says so at the answer cap", { timeout: 30_000 }, async () => {
		// A 10-minute diagnostics cap: were pi to wait for it without any answer, the test's timeout would fail it.
		const w = world("0.3", { waitCaps: { answerMs: 200, diagnosticsMs: 600_000 } });
		const note = await w.link.afterTool("write", { path: "/w/src/a.ts" });
		assert.equal(
			note,
			"Neovim did not answer within 200 ms (suspended or busy?): it may still show the old content of /w/src/a.ts.",
		);
	});

	it("a v0.2 editor: published, but no wait and no note", { timeout: 30_000 }, async () => {
		// 10-minute caps: were pi to wait for an editor that cannot answer, the test's timeout would fail it.
		const w = world(null, { waitCaps: { answerMs: 600_000, diagnosticsMs: 600_000 } });
		assert.equal(await w.link.afterTool("write", { path: "/w/src/a.ts" }), null);
		assert.equal(w.message().seq, 1);
	});
});

describe("EditorLink: one pi process, several sessions (/new, /resume, /fork, /reload)", () => {
	it("the next session's seqs continue the last one's: an old report never answers a new change", async () => {
		// The process's own counter (no seqCounter), as index.ts builds a link at every session_start.
		const w = world("0.3", { seqCounter: undefined });
		const first = w.link;
		await first.afterTool("edit", { path: "/w/src/a.ts" });
		const oldSeq = w.message().seq;
		// The editor answered the first session's change; its state keeps that report after the session ends.
		const old = { severity: "error" as const, line: 1, column: 1, message: "OLD error" };
		w.answer([
			report({
				seq: oldSeq,
				pi_pid: PI,
				diagnostics_expected: true,
				diagnostics: { version: 3, total: 1, items: [old] },
			}),
		]);
		first.close();

		const second = w.newLink();
		second.sync();
		assert.equal(w.message().seq, oldSeq, "the new session's first message does not go back to 0");
		const note = await second.afterTool("edit", { path: "/w/src/a.ts" });
		assert.ok(w.message().seq > oldSeq, `new change ${w.message().seq} after old ${oldSeq}`);
		assert.equal(
			note,
			"Neovim did not answer within 200 ms (suspended or busy?): it may still show the old content of /w/src/a.ts.",
			"the first session's report (and its diagnostics) does not answer the new change",
		);
		second.close();
	});
});

describe("the change set (v0.4 review): pi-<pid>.review.json", () => {
	function project() {
		const root = mkdtempSync(join(tmpdir(), "pi-ide-review-"));
		roots.push(root);
		return root;
	}
	const review = (dir: string) => JSON.parse(readFileSync(join(dir, `pi-${PI}.review.json`), "utf8"));

	it("keeps the content before pi's first write in the run as the baseline, and the hunks to what pi left", async () => {
		const cwd = project();
		const file = join(cwd, "a.txt");
		writeFileSync(file, "one\ntwo\nthree\n");
		const { dir, link } = world(null, { cwd });
		link.startRun();
		link.beforeTool("edit", { path: "a.txt" });
		writeFileSync(file, "one\nTWO\nthree\n");
		await link.afterTool("edit", { path: "a.txt" });
		link.beforeTool("write", { path: "a.txt" });
		writeFileSync(file, "one\nTWO\nthree\nfour\n");
		await link.afterTool("write", { path: "a.txt" });
		await link.flush();
		const message = review(dir);
		assert.deepEqual(
			[message.kind, message.protocol, message.pid, message.editor_pid],
			["pi-review", "0.4", PI, EDITOR],
		);
		const [run] = message.runs;
		assert.equal(run.run, 1);
		assert.equal(run.files[0].file, file);
		assert.equal(run.files[0].baseline, "one\ntwo\nthree\n");
		assert.deepEqual(
			run.files[0].hunks.map((h: { old_start: number; new_text: string[] }) => [h.old_start, h.new_text]),
			[
				[2, ["TWO"]],
				[4, ["four"]],
			],
		);
		assert.equal(lstatSync(join(dir, `pi-${PI}.review.json`)).mode & 0o777, 0o600);
		await link.close();
		assert.equal(existsSync(join(dir, `pi-${PI}.review.json`)), false);
	});

	it("pi in a sandbox: its message and change set name the editor's paths; the editor's report, in them, answers", async () => {
		const cwd = project();
		const file = join(cwd, "a.txt");
		writeFileSync(file, "one\n");
		// The editor knows pi's project as /host/proj (pi's bind mount, or the ideContext.paths setting).
		const { dir, link, answer, message } = world("0.3", {
			cwd,
			paths: [{ editor: "/host/proj", pi: cwd, from: "mount" }],
		});
		answer([report({ file: "/host/proj/a.txt", status: "modified", modified: true })]);
		link.startRun();
		link.beforeTool("write", { path: "a.txt" });
		writeFileSync(file, "two\n");
		const note = await link.afterTool("write", { path: "a.txt" });
		link.endTurn();
		await link.flush();
		assert.match(note ?? "", new RegExp(`${file} is open in Neovim with unsaved changes`));
		// Each change also carries its hunks for a merge into an unsaved buffer (`merge`, v0.5): left out here.
		const changed = message().changed.map(({ file, seq, tool }) => ({ file, seq, tool }));
		assert.deepEqual(
			[message().cwd, changed, message().last_turn],
			["/host/proj", [{ file: "/host/proj/a.txt", seq: 1, tool: "write" }], ["/host/proj/a.txt"]],
		);
		assert.equal(review(dir).runs[0].files[0].file, "/host/proj/a.txt");
		await link.close();
	});

	it("is written off pi's thread, before the message that announces it; the tool's note does not wait for it", async () => {
		const cwd = project();
		const file = join(cwd, "a.txt");
		writeFileSync(file, "one\n");
		// A v0.2 editor: pi publishes for it and does not wait for an answer.
		const { dir, link, message } = world(null, { cwd });
		link.sync();
		const announced = () => message().changed.map((c) => c.file);
		assert.deepEqual(announced(), []);
		link.startRun();
		link.beforeTool("edit", { path: "a.txt" });
		writeFileSync(file, "two\n");
		assert.equal(await link.afterTool("edit", { path: "a.txt" }), null);
		// The tool is done; the change set is still on its way, and the message waits for it.
		assert.equal(existsSync(join(dir, `pi-${PI}.review.json`)), false);
		assert.deepEqual(announced(), []);
		await link.flush();
		assert.deepEqual(announced(), [file]);
		assert.equal(review(dir).runs[0].files[0].baseline, "one\n");
		assert.equal(existsSync(join(dir, `pi-${PI}.review.json.tmp`)), false);
		await link.close();
	});

	it("a close while the change set is being written waits for it, then removes pi's files", async () => {
		const cwd = project();
		writeFileSync(join(cwd, "a.txt"), "one\n");
		const { dir, link } = world(null, { cwd });
		link.startRun();
		link.beforeTool("edit", { path: "a.txt" });
		writeFileSync(join(cwd, "a.txt"), "two\n");
		await link.afterTool("edit", { path: "a.txt" });
		const closing = link.close();
		link.sync(); // closed: writes nothing more
		await closing;
		await link.flush();
		assert.deepEqual(readdirSync(dir), []);
	});

	it("a new file has a null baseline; a FIFO at the path is never read (no hang), it gets a note", async () => {
		const cwd = project();
		const { dir, link } = world(null, { cwd });
		link.startRun();
		link.beforeTool("write", { path: "new.txt" });
		writeFileSync(join(cwd, "new.txt"), "hello\n");
		await link.afterTool("write", { path: "new.txt" });
		execFileSync("mkfifo", [join(cwd, "pipe")]);
		link.beforeTool("write", { path: "pipe" });
		await link.afterTool("write", { path: "pipe" });
		await link.flush();
		const files = review(dir).runs[0].files;
		assert.deepEqual(
			files.map((f: { file: string; baseline: string | null; note: string | null }) => [f.file, f.baseline, f.note]),
			[
				[join(cwd, "new.txt"), null, null],
				[join(cwd, "pipe"), null, "unreadable"],
			],
		);
	});

	it("other tools, and a write without a baseline, publish no change set", async () => {
		const cwd = project();
		const { dir, link } = world(null, { cwd });
		link.startRun();
		link.beforeTool("bash", { command: "touch x" });
		writeFileSync(join(cwd, "b.txt"), "x\n");
		await link.afterTool("write", { path: "b.txt" });
		await link.flush();
		assert.equal(existsSync(join(dir, `pi-${PI}.review.json`)), false);
	});
});

describe("a file the ignore rules exclude: nothing the editor reports about it reaches the model", () => {
	const SECRET = "API_KEY=hunter2";
	const quoting = report({
		file: "/w/.env",
		status: "reloaded",
		version: 2,
		diagnostics_expected: true,
		diagnostics: {
			version: 2,
			total: 1,
			items: [{ severity: "warning", line: 1, column: 1, message: `weak key: ${SECRET}` }],
		},
	});
	const cases: { name: string; excluded?: (file: string) => boolean; note: RegExp }[] = [
		{ name: "not excluded: the editor's diagnostics", note: /Diagnostics \(1 warning\):\n- warning 1:1 weak key/ },
		{
			name: "excluded: pi's own words only",
			excluded: (file) => file === "/w/.env",
			note: /^\/w\/\.env is excluded by pi-ide-context's ignore rules: nothing the editor reports about it/,
		},
		{
			name: "a predicate that throws counts as excluded",
			excluded: () => {
				throw new Error("rules unreadable");
			},
			note: /is excluded by pi-ide-context's ignore rules/,
		},
	];
	for (const c of cases) {
		it(c.name, async () => {
			const w = world("0.3", c.excluded ? { excluded: c.excluded } : {});
			w.link.startRun();
			w.answer([quoting]);
			const note = (await w.link.afterTool("edit", { path: "/w/.env" })) ?? "";
			assert.match(note, c.note);
			if (c.excluded) assert.ok(!note.includes(SECRET), note);
		});
	}

	it("a revert of pi's hunk in an excluded file, and its undo, are never told", async () => {
		const cwd = mkdtempSync(join(tmpdir(), "pi-ide-revert-"));
		roots.push(cwd);
		const file = join(cwd, ".env");
		writeFileSync(file, "one\n");
		let excluded = false;
		const { dir, link } = world(null, { cwd, excluded: () => excluded });
		link.startRun();
		link.beforeTool("write", { path: ".env" });
		writeFileSync(file, "ONE\n");
		await link.afterTool("write", { path: ".env" });
		const [run] = link.changes.runs();
		const revert = { pi_pid: PI, run: run?.run ?? 0, id: run?.files[0]?.hunks[0]?.id ?? "", file, line: 1, lines: 1 };
		writeStateFile(dir, makeState({ pid: EDITOR, reverted: [revert] } as Parameters<typeof makeState>[0]));
		excluded = true;
		assert.equal(link.revertNote(), null, "excluded: not told");
		excluded = false;
		assert.match(link.revertNote() ?? "", /the user reverted one of your changes/);
		// Told, then the file becomes excluded, and the user undoes the revert: nothing said of it either.
		excluded = true;
		writeStateFile(dir, makeState({ pid: EDITOR, reverted: [] } as Parameters<typeof makeState>[0]));
		assert.equal(link.revertNote(), null);
	});
});

describe("reverts (v0.4): the model is told once which of pi's hunks the user took back", () => {
	it("a revert of a hunk of this pi's run is told once; another pi's, or an unknown run's, never", async () => {
		const cwd = mkdtempSync(join(tmpdir(), "pi-ide-revert-"));
		roots.push(cwd);
		const file = join(cwd, "a.txt");
		writeFileSync(file, "one\n");
		const { dir, link } = world(null, { cwd });
		link.startRun();
		link.beforeTool("write", { path: "a.txt" });
		writeFileSync(file, "ONE\n");
		await link.afterTool("write", { path: "a.txt" });
		const [run] = link.changes.runs();
		const id = run?.files[0]?.hunks[0]?.id ?? "";
		const revert = { run: run?.run ?? 0, id, file, line: 1, lines: 1 };
		writeStateFile(
			dir,
			makeState({
				pid: EDITOR,
				reverted: [
					{ pi_pid: PI, ...revert },
					{ pi_pid: 77, ...revert },
					{ pi_pid: PI, ...revert, run: 999 },
				],
			} as Parameters<typeof makeState>[0]),
		);
		assert.equal(
			link.revertNote(),
			"Editor: the user reverted one of your changes in their editor (in the buffer: the file on disk keeps your " +
				"version until they save). Do not re-apply it unless the user asks:\n- a.txt:1",
		);
		assert.equal(link.revertNote(), null, "told once");
		// The user undoes the revert: the editor lists it no more, and the model is told once.
		const others = [
			{ pi_pid: 77, ...revert },
			{ pi_pid: PI, ...revert, run: 999 },
		];
		writeStateFile(dir, makeState({ pid: EDITOR, reverted: others } as Parameters<typeof makeState>[0]));
		assert.equal(
			link.revertNote(),
			"Editor: the user undid their revert of one of your changes (told to you earlier): it is back in their " +
				"editor's buffer as you made it:\n- a.txt:1",
		);
		assert.equal(link.revertNote(), null, "told once");
		// A redo: a revert again, news again.
		writeStateFile(
			dir,
			makeState({ pid: EDITOR, reverted: [...others, { pi_pid: PI, ...revert }] } as Parameters<typeof makeState>[0]),
		);
		assert.match(link.revertNote() ?? "", /^Editor: the user reverted one of your changes/);
	});

	it("with a prompt whose scan has just read the editor (scanned), that state is used, not read again", async () => {
		const cwd = mkdtempSync(join(tmpdir(), "pi-ide-revert-"));
		roots.push(cwd);
		const file = join(cwd, "a.txt");
		writeFileSync(file, "one\n");
		const { dir, link, scanned } = world(null, { cwd });
		link.startRun();
		link.beforeTool("write", { path: "a.txt" });
		writeFileSync(file, "ONE\n");
		await link.afterTool("write", { path: "a.txt" });
		const [run] = link.changes.runs();
		const revert = { pi_pid: PI, run: run?.run ?? 0, id: run?.files[0]?.hunks[0]?.id ?? "", file, line: 1, lines: 1 };
		// The scan's state lists the revert; the file on disk (written before it) does not.
		writeStateFile(dir, makeState({ pid: EDITOR, reverted: [] } as Parameters<typeof makeState>[0]));
		scanned(makeState({ pid: EDITOR, reverted: [revert] } as Parameters<typeof makeState>[0]));
		assert.equal(link.revertNote(), null, "not scanned: the file is read, and lists no revert");
		assert.match(link.revertNote(true) ?? "", /^Editor: the user reverted one of your changes/);
		assert.equal(link.revertNote(true), null, "told once");
	});
});
