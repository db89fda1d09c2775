/**
 * v0.5 show and ask, the I/O half (src/link/ask-desk.ts) against a real private state dir and a stand-in editor
 * that answers pi's `pi-<pid>.ask.json` in its `<pid>.answers.json`: nothing is written until a call; each call's
 * request names the connected editor, maps pi's path to the editor's, and goes once answered; an answer is read only
 * from a regular private file of ours, for this pi and this id; an excluded or missing file is refused before the
 * editor is asked; no editor, or no answer within the wait, is said in a clear result.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { AskDesk } from "../../../src/link/ask-desk.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import type { AskMessage, ShowAskAnswer } from "../../../src/protocol/show-ask.ts";
import { touch } from "../../helpers/scenario.ts";
import { makeState, privateStateDirs } from "../../helpers/state-files.ts";

const newStateDir = privateStateDirs("pi-ide-ask-desk-");
const EDITOR = 4321;
const PI = 9876;

/** An editor that answers each request with `answer(request)` (undefined: silence), written as `how` says. */
function standInEditor(
	dir: string,
	answer: (request: AskMessage["requests"][number], message: AskMessage) => ShowAskAnswer | undefined,
	how: { mode?: number; symlink?: boolean } = {},
): { seen: AskMessage[]; stop: () => void } {
	const seen: AskMessage[] = [];
	const answered = new Set<string>();
	const timer = setInterval(() => {
		let message: AskMessage;
		try {
			message = JSON.parse(readFileSync(join(dir, `pi-${PI}.ask.json`), "utf8")) as AskMessage;
		} catch {
			return;
		}
		const fresh = message.requests.filter((r) => !answered.has(r.id));
		if (fresh.length === 0) return;
		seen.push(message);
		const answers = fresh.map((r) => {
			answered.add(r.id);
			return answer(r, message);
		});
		const text = JSON.stringify({
			protocol: "0.5",
			kind: "editor-answers",
			pid: EDITOR,
			timestamp: 1,
			answers: answers.filter(Boolean),
		});
		const target = join(dir, `${EDITOR}.answers.json`);
		if (how.symlink) {
			const elsewhere = join(dir, "..", "elsewhere.json");
			writeFileSync(elsewhere, text, { mode: 0o600 });
			if (!existsSync(target)) symlinkSync(elsewhere, target);
			return;
		}
		writeFileSync(`${target}.tmp`, text, { mode: 0o600 });
		chmodSync(`${target}.tmp`, how.mode ?? 0o600);
		renameSync(`${target}.tmp`, target);
	}, 5);
	return { seen, stop: () => clearInterval(timer) };
}

function desk(dir: string, project: string, options: { editor?: EditorState | null; waitMs?: number } = {}): AskDesk {
	const state = options.editor === undefined ? makeState({ pid: EDITOR, cwd: project }) : options.editor;
	return new AskDesk({
		stateDir: dir,
		uid: process.getuid?.() ?? 0,
		pid: PI,
		pidNamespace: null,
		cwd: project,
		home: "/nonexistent-home",
		connected: () => (state ? { pid: state.pid, state } : undefined),
		excluded: (file) => file.endsWith(".env"),
		paths: [{ pi: project, editor: "/host/project", from: "setting" }],
		waitMs: options.waitMs ?? 1000,
	});
}

const listed = (r: { id: string }): ShowAskAnswer => ({
	pi_pid: PI,
	id: r.id,
	kind: "show",
	status: "listed",
	list: "quickfix",
	reason: null,
});

describe("AskDesk: pi's side of show and ask", () => {
	test("a show: the request names the editor and its path, the answer is read, the file goes", async (t) => {
		const dir = newStateDir();
		const project = join(dir, "..");
		touch(project, "src/a.ts", "one\ntwo\n");
		const editor = standInEditor(dir, listed);
		t.after(editor.stop);
		const d = desk(dir, project);
		assert.deepEqual(readdirSync(dir), [], "nothing written before a call");
		const result = await d.show({ path: "src/a.ts", line: 2, note: "here" }, "id-1");
		assert.match(result.text, /^Shown in Neovim: src\/a\.ts:2 is in the user's quickfix list/);
		assert.equal(result.isError, false);
		const request = editor.seen[0];
		assert.equal(request?.editor_pid, EDITOR);
		assert.deepEqual(request?.requests[0] && { ...request.requests[0], expires: 0 }, {
			id: "id-1",
			kind: "show",
			file: "/host/project/src/a.ts",
			line: 2,
			end_line: null,
			note: "here",
			expires: 0,
		});
		assert.ok(!existsSync(join(dir, `pi-${PI}.ask.json`)), "the request file goes once answered");
	});

	test("an ask: the named file's diagnostics asked for, by the editor's path; an excluded one's never", async (t) => {
		const dir = newStateDir();
		const project = join(dir, "..");
		const editor = standInEditor(dir, (r) => ({ pi_pid: PI, id: r.id, kind: "ask", buffers: [], buffers_total: 0 }));
		t.after(editor.stop);
		const d = desk(dir, project);
		await d.ask({ path: "src/a.ts" }, "ask-1");
		await d.ask({ path: ".env" }, "ask-2");
		await d.ask({}, "ask-3");
		assert.deepEqual(
			editor.seen.map((m) => m.requests.map((r) => (r.kind === "ask" ? [r.diagnostics, r.file] : []))),
			[[["file", "/host/project/src/a.ts"]], [["none", null]], [["all", null]]],
		);
		assert.ok(!JSON.stringify(editor.seen).includes(".env"), "the excluded file is never named to the editor");
	});

	const refusals: {
		name: string;
		call: (d: AskDesk) => Promise<{ text: string; isError: boolean }>;
		expect: RegExp;
	}[] = [
		{
			name: "an excluded file",
			call: (d) => d.show({ path: "secret.env", line: 1 }, "r1"),
			expect: /^Not shown: pi-ide-context's ignore rules exclude/,
		},
		{
			name: "no such file",
			call: (d) => d.show({ path: "nope.ts", line: 1 }, "r2"),
			expect: /^Not shown: nope\.ts is not a file\.$/,
		},
		{
			name: "a bad line",
			call: (d) => d.show({ path: "a.ts", line: 0 }, "r3"),
			expect: /^Not shown: line is not a line number/,
		},
	];
	for (const row of refusals)
		test(`refused before the editor is asked: ${row.name}`, async () => {
			const dir = newStateDir();
			const project = join(dir, "..");
			touch(project, "a.ts");
			touch(project, "secret.env");
			const result = await row.call(desk(dir, project));
			assert.match(result.text, row.expect);
			assert.equal(result.isError, true);
			assert.deepEqual(readdirSync(dir), [], "nothing written");
		});

	test("nothing runs while no call waits: no watcher or timer before a call, none left after it", async (t) => {
		const dir = newStateDir();
		const project = join(dir, "..");
		touch(project, "a.ts");
		const running = () =>
			process
				.getActiveResourcesInfo()
				.filter((r) => r === "FSEventWrap" || r === "Timeout")
				.sort();
		const before = running();
		const d = desk(dir, project);
		assert.deepEqual(running(), before, "a desk alone runs nothing");
		const editor = standInEditor(dir, listed);
		t.after(editor.stop);
		assert.match((await d.show({ path: "a.ts", line: 1 }, "z1")).text, /^Shown in Neovim/);
		editor.stop();
		await new Promise((resolve) => setImmediate(resolve));
		assert.deepEqual(running(), before, "the call's watcher and timers are gone");
	});

	test("no editor connected: a clear result, nothing written", async () => {
		const dir = newStateDir();
		const project = join(dir, "..");
		touch(project, "a.ts");
		const d = desk(dir, project, { editor: null });
		assert.match((await d.show({ path: "a.ts", line: 1 }, "n1")).text, /^No editor is connected to pi/);
		assert.match((await d.ask({}, "n2")).text, /^No editor is connected to pi/);
		assert.deepEqual(readdirSync(dir), []);
	});

	const silent: {
		name: string;
		answer: (r: { id: string }) => ShowAskAnswer | undefined;
		how?: { mode?: number; symlink?: boolean };
	}[] = [
		{ name: "an editor that never answers", answer: () => undefined },
		{ name: "an answer for another pi", answer: (r) => ({ ...listed(r), pi_pid: PI + 1 }) },
		{ name: "an answer for another id", answer: (r) => ({ ...listed(r), id: `${r.id}x` }) },
		{ name: "an answer readable by others", answer: listed, how: { mode: 0o644 } },
		{ name: "an answer through a symlink", answer: listed, how: { symlink: true } },
	];
	for (const row of silent)
		test(`no answer within the wait: ${row.name}`, async (t) => {
			const dir = newStateDir();
			const project = join(dir, "..");
			touch(project, "a.ts");
			const editor = standInEditor(dir, row.answer, row.how);
			t.after(editor.stop);
			const result = await desk(dir, project, { waitMs: 300 }).show({ path: "a.ts", line: 1 }, "w1");
			assert.equal(
				result.text,
				"Neovim did not answer within 0.3 s (its pi-ide client may be older than protocol v0.5 show and ask, or busy): nothing was shown.",
			);
			assert.ok(editor.seen.length > 0, "the editor saw the request");
			assert.ok(!existsSync(join(dir, `pi-${PI}.ask.json`)), "the request file goes after the wait");
		});

	test("calls at once share the request file; each gets its own answer", async (t) => {
		const dir = newStateDir();
		const project = join(dir, "..");
		touch(project, "a.ts");
		touch(project, "b.ts");
		const editor = standInEditor(dir, (r) => (r.kind === "show" ? listed(r) : undefined));
		t.after(editor.stop);
		const d = desk(dir, project);
		const [a, b] = await Promise.all([
			d.show({ path: "a.ts", line: 1 }, "p1"),
			d.show({ path: "b.ts", line: 2 }, "p2"),
		]);
		assert.match(a.text, /a\.ts:1/);
		assert.match(b.text, /b\.ts:2/);
	});
});
