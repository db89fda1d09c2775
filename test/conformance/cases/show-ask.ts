/**
 * Protocol v0.5 show and ask (PROTOCOL.md, "v0.5: the model shows a place and asks what is open"). The "pi" is a
 * live process of ours; its request file `pi-<pid>.ask.json` is built by pi's own code (src/link/show-ask.ts) and
 * written as pi writes it (0600, atomically); the editor's `<pid>.answers.json` is read with pi's own validator
 * (src/protocol/show-ask.ts) and pi's own rule for which answer is its (findAnswer). Rules:
 * - a show goes to the editor's list of places (ClientSession.shownPlaces), the user's buffer and cursor stay,
 *   no file is loaded, one notice; answered once, bound to its id;
 * - a show from a dead pi, for another editor, expired, malformed, oversized, of a pi file whose pid is not its
 *   name's, or group-readable is ignored (never answered, nothing listed), never an error;
 * - an ask is answered with every open file buffer and its `modified` flag, the active one first; the named
 *   file's diagnostics (or every one's, or none) dated with the buffer's version; each answer bound to its id;
 *   with or without diagnostics, `modified` holds while the buffer's text is not the file's and not once saved;
 * - a sandboxed pi's request (`pi-<pid>-<ns>.ask.json`, a pid dead here) is answered with its `pid_ns` as `pi_ns`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../../src/link/show-ask.ts";
import {
	type AskAnswer,
	editorAnswersFileName,
	parseAnswers,
	type ShowAnswer,
	type ShowAskAnswer,
	type ShowAskRequest,
} from "../../../src/protocol/show-ask.ts";
import { deadPid, spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
import { activeFile, type Editor, type KitCase, nowSeconds, WRITE_WAIT_MS } from "../kit.ts";

const TEXT = "one\ntwo\nthree\n";

/** pi `piPid`'s request file naming `editor`, built by pi's code; `patch` changes the message, `text` replaces it. */
function ask(
	editor: Editor,
	piPid: number,
	requests: ShowAskRequest[],
	options: { patch?: Record<string, unknown>; text?: string; mode?: number; name?: string } = {},
): void {
	const encoded = encodeAskMessage({
		pid: piPid,
		pidNs: null,
		editorPid: editor.session.pid,
		now: nowSeconds(),
		requests,
	});
	const text = options.text ?? JSON.stringify({ ...JSON.parse(encoded), ...options.patch });
	writeRawStateFile(editor.stateDir, options.name ?? `pi-${piPid}.ask.json`, text, options.mode);
}

const expires = () => nowSeconds() + 30;
const show = (id: string, file: string, line = 2, end: number | null = null, note: string | null = "look here") =>
	buildShow(id, file, { path: file, line, endLine: end, note }, expires());

/** Every answer in the editor's answers file as pi reads it (none while there is no file). */
function answers(editor: Editor): ShowAskAnswer[] {
	let text: string;
	try {
		text = readFileSync(join(editor.stateDir, editorAnswersFileName(editor.session.pid)), "utf8");
	} catch {
		return [];
	}
	const parsed = parseAnswers(text, editor.session.pid);
	if (!parsed.ok) throw new Error(`pi refuses the answers file: ${parsed.reason}\n${text.slice(0, 300)}`);
	assert.equal(parsed.dropped, 0, "every answer valid for pi");
	return parsed.answers;
}

async function answerOf(editor: Editor, piPid: number, id: string): Promise<ShowAskAnswer> {
	return pollUntil(() => findAnswer(answers(editor), piPid, null, id), `the answer to ${id}`, WRITE_WAIT_MS);
}

interface Ignored {
	name: string;
	/** Write the request `id` (a show of `file`) as this row spoils it, `pi` live and `other` another live pi. */
	write: (editor: Editor, pi: number, id: string, file: string) => Promise<void> | void;
}

const IGNORED: Ignored[] = [
	{
		name: "from a dead pi",
		write: async (e, _pi, id, file) => {
			const dead = await deadPid();
			ask(e, dead, [show(id, file)]);
		},
	},
	{
		name: "for another editor",
		write: (e, pi, id, file) => ask(e, pi, [show(id, file)], { patch: { editor_pid: pi } }),
	},
	{
		name: "expired",
		write: (e, pi, id, file) => ask(e, pi, [{ ...show(id, file), expires: nowSeconds() - 60 }]),
	},
	{ name: "malformed JSON", write: (e, pi, _id, _file) => ask(e, pi, [], { text: '{"kind": "pi-ask", ' }) },
	{
		name: "malformed: a show without a line",
		write: (e, pi, id, file) => {
			const { line: _, ...bad } = show(id, file);
			ask(e, pi, [bad as ShowAskRequest]);
		},
	},
	{
		name: "a note over 1 KiB",
		write: (e, pi, id, file) => ask(e, pi, [show(id, file, 2, null, "n".repeat(1025))]),
	},
	{
		name: "oversized (over 64 KiB)",
		write: (e, pi, id, file) => ask(e, pi, [show(id, file)], { patch: { pad: "x".repeat(64 * 1024) } }),
	},
	{
		name: "from another pi: the file's pid is not its name's",
		write: (e, pi, id, file) => ask(e, pi, [show(id, file)], { patch: { pid: pi + 1 } }),
	},
	{ name: "group-readable", write: (e, pi, id, file) => ask(e, pi, [show(id, file)], { mode: 0o640 }) },
];

export const cases: KitCase[] = [
	{
		name: "show: a sandboxed pi's request (pi-<pid>-<ns>.ask.json, a pid dead here) is answered with its pi_ns",
		ownEditors: true,
		needs: ["show", "pi-identity"],
		run: async (kit) => {
			const editor = await kit.start();
			const a = editor.file("a.ts", TEXT);
			await editor.session.open(a);
			await editor.until((s) => activeFile(s) === a, "a.ts open");
			const dead = await deadPid();
			const ns = "pid:[4026532455]";
			ask(editor, dead, [show("boxed", a, 3)], {
				name: `pi-${dead}-4026532455.ask.json`,
				patch: { pid_ns: ns },
			});
			const answer = await pollUntil(
				() => findAnswer(answers(editor), dead, ns, "boxed"),
				"the sandboxed pi's answer",
				WRITE_WAIT_MS,
			);
			assert.equal(answer.pi_ns, ns, "bound to the sandboxed pi, not to a host pi of that pid");
			assert.equal(findAnswer(answers(editor), dead, "pid:[4026532999]", "boxed"), undefined);
		},
	},
	{
		name: "show: the place goes to the editor's list, the user's buffer and cursor stay, one notice; answered once by id",
		ownEditors: true,
		needs: ["show"],
		run: async (kit) => {
			const editor = await kit.start();
			const a = editor.file("a.ts", TEXT);
			const b = editor.file("b.ts", TEXT);
			await editor.session.open(a);
			await editor.session.moveCursor({ line: 2, column: 1 });
			await editor.until((s) => activeFile(s) === a && s.active_buffer.cursor.line === 2, "a.ts:2");
			const pi = await spawnLiveEditor();
			try {
				const before = (await editor.notices()).length;
				ask(editor, pi.pid, [show("show-1", b, 2, 3)]);
				const answer = (await answerOf(editor, pi.pid, "show-1")) as ShowAnswer;
				assert.deepEqual([answer.kind, answer.status], ["show", "listed"]);
				assert.deepEqual(
					(await editor.session.shownPlaces?.())?.map((p) => [
						p.file,
						p.line,
						p.end_line,
						p.text.includes("look here"),
					]),
					[[b, 2, 3, true]],
				);
				const state = editor.readState();
				assert.equal(state && activeFile(state), a, "the user's buffer stays");
				assert.equal(state?.active_buffer.cursor.line, 2, "the user's cursor stays");
				assert.ok(!(await editor.session.loadedFiles()).includes(b), "the shown file is not loaded");
				const notices = await pollUntil(async () => {
					const now = await editor.notices();
					return now.length > before ? now.slice(before) : undefined;
				}, "the notice");
				assert.equal(notices.length, 1, notices.join("\n"));
				assert.match(notices[0] ?? "", /b\.ts/);

				// The same request again beside a new one: only the new one is answered and listed.
				ask(editor, pi.pid, [show("show-1", b, 2, 3), show("show-2", b, 1, null, null)]);
				await answerOf(editor, pi.pid, "show-2");
				assert.deepEqual(
					(await editor.session.shownPlaces?.())?.map((p) => [p.line, p.end_line]),
					[
						[2, 3],
						[1, null],
					],
				);
				assert.equal(answers(editor).filter((x) => x.id === "show-1").length, 1, "show-1 answered once");
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "show: ignored from a dead pi, for another editor, expired, malformed, oversized, misnamed, group-readable",
		ownEditors: true,
		needs: ["show"],
		run: async (kit) => {
			const editor = await kit.start();
			const a = editor.file("a.ts", TEXT);
			await editor.session.open(a);
			await editor.until((s) => activeFile(s) === a, "a.ts open");
			const pi = await spawnLiveEditor();
			const barrier = await spawnLiveEditor();
			try {
				let n = 0;
				for (const row of IGNORED) {
					n++;
					await row.write(editor, pi.pid, `bad-${n}`, a);
					// Another pi's good show, written after it: once it is answered, the bad one was seen too.
					ask(editor, barrier.pid, [show(`good-${n}`, a, n)]);
					await answerOf(editor, barrier.pid, `good-${n}`);
					assert.deepEqual(
						answers(editor).filter((x) => x.id === `bad-${n}`),
						[],
						`${row.name}: never answered`,
					);
				}
				assert.deepEqual(
					(await editor.session.shownPlaces?.())?.map((p) => p.line),
					IGNORED.map((_, i) => i + 1),
					"only the good shows are listed",
				);
				for (const notice of await editor.notices())
					assert.doesNotMatch(notice, /E\d{2,4}:|Error|stack traceback/, "never an error");
			} finally {
				await pi.kill();
				await barrier.kill();
			}
		},
	},
	{
		name: "ask: every open file buffer, the active one first; modified while its text is not the file's, not once saved; by id",
		// No `diagnostics`: a client without them (Obsidian) answers the named buffer's with null, as PROTOCOL.md says.
		ownEditors: true,
		needs: ["ask", "edit"],
		run: async (kit) => {
			const editor = await kit.start();
			const a = editor.file("a.ts", TEXT);
			const b = editor.file("b.ts", TEXT);
			await editor.session.open(b);
			await editor.session.setLines(b, ["one", "TWO", "three"]);
			await editor.session.open(a);
			await editor.until((s) => activeFile(s) === a, "a.ts open");
			const pi = await spawnLiveEditor();
			try {
				ask(editor, pi.pid, [buildAsk("ask-edited", b, expires())]);
				const edited = (await answerOf(editor, pi.pid, "ask-edited")) as AskAnswer;
				// By file: an editor may hold documents an earlier session in its window left (code-server's shared windows).
				const row = (x: AskAnswer["buffers"][number] | undefined) => [x?.file, x?.active, x?.modified, x?.lines_total];
				const byFile = new Map(edited.buffers.map((x) => [x.file, x]));
				assert.deepEqual(
					[row(edited.buffers[0]), row(byFile.get(b))],
					[
						[a, true, false, 3],
						[b, false, true, 3],
					],
					"the active buffer first; the edited one modified",
				);
				assert.equal(edited.buffers_total, edited.buffers.length);
				const named = byFile.get(b);
				assert.ok(named && "diagnostics" in named, "the named buffer's diagnostics (null: none reported)");
				assert.ok(!("diagnostics" in (edited.buffers[0] ?? {})), "no diagnostics of a file not asked about");

				// Saving may visit the buffer (Vim's adapter does): which one is active is not asked here.
				await editor.session.save(b);
				ask(editor, pi.pid, [buildAsk("ask-saved", "none", expires())]);
				const saved = (await answerOf(editor, pi.pid, "ask-saved")) as AskAnswer;
				const savedRows = new Map(saved.buffers.map((x) => [x.file, [x.modified, x.lines_total]]));
				assert.deepEqual(
					[savedRows.get(a), savedRows.get(b)],
					[
						[false, 3],
						[false, 3],
					],
					"saved: no longer modified",
				);
				assert.ok(
					saved.buffers.every((x) => !("diagnostics" in x)),
					"no diagnostics when none are asked for",
				);
				assert.equal(findAnswer(answers(editor), pi.pid + 1, null, "ask-saved"), undefined, "bound to its pi");
			} finally {
				await pi.kill();
			}
		},
	},
	{
		name: "ask: every open file buffer with its modified flag; the named file's diagnostics dated with its version; by id",
		ownEditors: true,
		needs: ["ask", "edit", "diagnostics"],
		run: async (kit) => {
			const editor = await kit.start();
			const a = editor.file("a.ts", TEXT);
			const b = editor.file("b.ts", TEXT);
			await editor.session.open(b);
			await editor.session.setLines(b, ["one", "TWO", "three"]);
			await editor.session.setDiagnostics(b, [{ severity: "error", line: 2, column: 1, message: "TWO is loud" }]);
			await editor.session.open(a);
			await editor.until((s) => activeFile(s) === a, "a.ts open");
			const pi = await spawnLiveEditor();
			try {
				ask(editor, pi.pid, [buildAsk("ask-file", b, expires())]);
				const named = (await answerOf(editor, pi.pid, "ask-file")) as AskAnswer;
				assert.equal(named.kind, "ask");
				const byFile = new Map(named.buffers.map((x) => [x.file, x]));
				assert.equal(named.buffers[0]?.file, a, "the active buffer first");
				assert.deepEqual(
					[byFile.get(a)?.active, byFile.get(a)?.modified, byFile.get(b)?.active, byFile.get(b)?.modified],
					[true, false, false, true],
				);
				assert.equal(named.buffers_total, named.buffers.length);
				const d = byFile.get(b)?.diagnostics;
				assert.ok(d, "the named file's diagnostics");
				assert.equal(d.version, byFile.get(b)?.version, "dated with the buffer's version");
				assert.deepEqual(
					d.items.map((i) => [i.severity, i.line, i.message]),
					[["error", 2, "TWO is loud"]],
				);
				assert.ok(!("diagnostics" in (byFile.get(a) ?? {})), "no diagnostics of a file not asked about");

				ask(editor, pi.pid, [buildAsk("ask-all", "all", expires()), buildAsk("ask-none", "none", expires())]);
				const all = (await answerOf(editor, pi.pid, "ask-all")) as AskAnswer;
				const none = (await answerOf(editor, pi.pid, "ask-none")) as AskAnswer;
				assert.ok(
					all.buffers.every((x) => "diagnostics" in x),
					"every buffer's diagnostics (null: none reported)",
				);
				assert.equal(all.buffers.find((x) => x.file === b)?.diagnostics?.items[0]?.message, "TWO is loud");
				assert.ok(
					none.buffers.every((x) => !("diagnostics" in x)),
					"no diagnostics when none are asked for",
				);
				assert.equal(findAnswer(answers(editor), pi.pid + 1, null, "ask-all"), undefined, "bound to its pi");
			} finally {
				await pi.kill();
			}
		},
	},
];
