/**
 * pi's show and ask (protocol v0.5) in the TypeScript clients (editors/shared/show-ask.ts, read by pi-reader.ts):
 * the request file's parser (a table of good and malformed files and requests, built by pi's own encoder), the file
 * checks on a real temp dir (oversized, group-readable, symlink, another editor's, a dead pi), the ask's answer and
 * its caps (the active buffer first, 200 buffers, 100 items a buffer, 200 in all), the inert notice, and the
 * responder: each request answered once by pi and id, expired ones never, the newest 16 answers kept, the file
 * read back with pi's own validator.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { readPiAsk } from "../../../../editors/shared/pi-reader.ts";
import {
	type AskFile,
	AskResponder,
	answerAsk,
	describeShow,
	type OpenDocument,
	parseAskFile,
	type ShowAskHost,
} from "../../../../editors/shared/show-ask.ts";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../../../src/link/show-ask.ts";
import { editorAnswersFileName, parseAnswers, type ShowAskRequest } from "../../../../src/protocol/show-ask.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-show-ask-client-"));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshDir = () => {
	const dir = join(root, `case-${++counter}`);
	mkdirSync(dir, { mode: 0o700 });
	return dir;
};

const PI = 4242;
const EDITOR = 777;
const NOW = 1_700_000_000;
const show = (id: string, line = 2, end: number | null = null, note: string | null = "look") =>
	buildShow(id, "/p/b.ts", { path: "/p/b.ts", line, endLine: end, note }, NOW + 30);

/** pi's request file as pi encodes it; `patch` changes the message. */
function encoded(requests: unknown[], patch: Record<string, unknown> = {}): string {
	const text = encodeAskMessage({
		pid: PI,
		pidNs: null,
		editorPid: EDITOR,
		now: NOW,
		requests: requests as ShowAskRequest[],
	});
	return JSON.stringify({ ...JSON.parse(text), ...patch });
}

describe("parseAskFile", () => {
	const cases: { name: string; text: string; ok: boolean; ids?: string[]; problem?: RegExp }[] = [
		{
			name: "a show and an ask",
			text: encoded([show("s"), buildAsk("a", "all", NOW + 30)]),
			ok: true,
			ids: ["s", "a"],
		},
		{ name: "not JSON", text: '{"kind": "pi-ask", ', ok: false, problem: /invalid JSON/ },
		{ name: "another kind", text: encoded([], { kind: "pi" }), ok: false, problem: /kind/ },
		{ name: "its pid is not the name's", text: encoded([], { pid: PI + 1 }), ok: false, problem: /pid field/ },
		{ name: "no editor_pid", text: encoded([], { editor_pid: null }), ok: false, problem: /editor_pid/ },
		{ name: "a bad pid_ns", text: encoded([], { pid_ns: "net:[1]" }), ok: false, problem: /pid_ns/ },
		{
			name: "nine requests",
			text: encoded(Array.from({ length: 9 }, (_, i) => show(`s${i}`))),
			ok: false,
			problem: /at most 8/,
		},
		{
			name: "a show without a line: left out, the other kept",
			text: encoded([{ ...show("bad"), line: undefined }, show("good")]),
			ok: true,
			ids: ["good"],
			problem: /no absolute file and line/,
		},
		{
			name: "a relative file",
			text: encoded([{ ...show("bad"), file: "b.ts" }]),
			ok: true,
			ids: [],
			problem: /absolute/,
		},
		{ name: "end_line before line", text: encoded([show("bad", 3, 2)]), ok: true, ids: [], problem: /end_line/ },
		{
			name: "a note over 1 KiB",
			text: encoded([show("bad", 2, null, "é".repeat(513))]),
			ok: true,
			ids: [],
			problem: /note/,
		},
		{ name: "a note of 1 KiB", text: encoded([show("ok", 2, null, "n".repeat(1024))]), ok: true, ids: ["ok"] },
		{ name: "an id over 64 bytes", text: encoded([show("i".repeat(65))]), ok: true, ids: [], problem: /id/ },
		{ name: "no expires", text: encoded([{ ...show("bad"), expires: "soon" }]), ok: true, ids: [], problem: /expires/ },
		{
			name: "an ask for a file without one",
			text: encoded([{ ...buildAsk("bad", "/p/a.ts", NOW), file: null }]),
			ok: true,
			ids: [],
			problem: /names no absolute file/,
		},
		{
			name: "an ask of unknown diagnostics",
			text: encoded([{ ...buildAsk("bad", "all", NOW), diagnostics: "some" }]),
			ok: true,
			ids: [],
			problem: /file, all or none/,
		},
		{
			name: "another request kind",
			text: encoded([{ ...show("bad"), kind: "open" }]),
			ok: true,
			ids: [],
			problem: /show or ask/,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const parsed = parseAskFile(c.text, PI);
			assert.equal(parsed.ok, c.ok, JSON.stringify(parsed));
			if (parsed.ok) {
				assert.deepEqual(
					parsed.file.requests.map((r) => r.id),
					c.ids,
				);
				if (c.problem) assert.match(parsed.file.problem ?? "", c.problem);
				else assert.equal(parsed.file.problem, undefined);
			} else if (c.problem) assert.match(parsed.problem, c.problem);
		});
	}
});

describe("readPiAsk: the file checks", () => {
	const alive = () => "alive" as const;
	const cases: {
		name: string;
		write: (dir: string, name: string) => void;
		probe?: () => "alive" | "dead";
		kind: "ask" | "gone" | "problem";
		problem?: RegExp;
	}[] = [
		{
			name: "a good file",
			write: (d, n) => writeFileSync(join(d, n), encoded([show("s")]), { mode: 0o600 }),
			kind: "ask",
		},
		{ name: "no file", write: () => {}, kind: "gone" },
		{
			name: "a dead pi's file is not read",
			write: (d, n) => writeFileSync(join(d, n), "not json", { mode: 0o600 }),
			probe: () => "dead",
			kind: "gone",
		},
		{
			name: "another editor's",
			write: (d, n) => writeFileSync(join(d, n), encoded([show("s")], { editor_pid: EDITOR + 1 }), { mode: 0o600 }),
			kind: "gone",
		},
		{
			name: "group-readable",
			write: (d, n) => writeFileSync(join(d, n), encoded([show("s")]), { mode: 0o640 }),
			kind: "problem",
			problem: /mode 0640/,
		},
		{
			name: "over 64 KiB",
			write: (d, n) => writeFileSync(join(d, n), encoded([show("s")], { pad: "x".repeat(64 * 1024) }), { mode: 0o600 }),
			kind: "problem",
			problem: /KiB|bytes|large/,
		},
		{
			name: "a symlink",
			write: (d, n) => {
				writeFileSync(join(d, "target"), encoded([show("s")]), { mode: 0o600 });
				symlinkSync(join(d, "target"), join(d, n));
			},
			kind: "problem",
			problem: /symbolic link/,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const dir = freshDir();
			c.write(dir, `pi-${PI}.ask.json`);
			const verdict = readPiAsk(dir, PI, { ownPid: EDITOR, probe: c.probe ?? alive, ownNs: null });
			assert.equal(verdict.kind, c.kind, JSON.stringify(verdict));
			if (verdict.kind === "problem" && c.problem) assert.match(verdict.problem, c.problem);
		});
	}
});

/** An open document of the host, with `items` diagnostics (null: none reported). */
function doc(
	file: string,
	options: { active?: boolean; modified?: boolean; items?: number | null } = {},
): OpenDocument {
	const items = options.items === undefined ? null : options.items;
	return {
		file,
		modified: options.modified ?? false,
		version: 7,
		lines_total: 3,
		active: options.active ?? false,
		is: (f) => f === file,
		diagnostics: (max) =>
			items === null
				? null
				: {
						version: 7,
						total: items,
						items: Array.from({ length: Math.min(items, max, 100) }, (_, i) => ({
							severity: "error" as const,
							line: 1,
							column: 1,
							message: `e${i}`,
							source: null,
							code: null,
						})),
					},
	};
}

describe("answerAsk", () => {
	test("the active buffer first; only the named file's diagnostics; null when none reported", () => {
		const answer = answerAsk(buildAsk("a", "/p/b.ts", NOW), [
			doc("/p/b.ts", { modified: true, items: 1 }),
			doc("/p/a.ts", { active: true, items: 2 }),
			doc("/p/c.ts"),
		]);
		assert.deepEqual(
			answer.buffers.map((b) => [b.file, b.active, b.modified, "diagnostics" in b]),
			[
				["/p/a.ts", true, false, false],
				["/p/b.ts", false, true, true],
				["/p/c.ts", false, false, false],
			],
		);
		const all = answerAsk(buildAsk("a", "all", NOW), [doc("/p/a.ts", { active: true }), doc("/p/b.ts", { items: 1 })]);
		assert.deepEqual(
			all.buffers.map((b) => b.diagnostics?.items.length ?? b.diagnostics),
			[null, 1],
		);
		const none = answerAsk(buildAsk("a", "none", NOW), [doc("/p/a.ts", { items: 1 })]);
		assert.ok(none.buffers.every((b) => !("diagnostics" in b)));
	});

	test("caps: 200 buffers (buffers_total counts all), 100 items a buffer, 200 items in all", () => {
		const documents = Array.from({ length: 250 }, (_, i) => doc(`/p/f${i}.ts`, { items: 150 }));
		const answer = answerAsk(buildAsk("a", "all", NOW), documents);
		assert.equal(answer.buffers.length, 200);
		assert.equal(answer.buffers_total, 250);
		const counts = answer.buffers.map((b) => b.diagnostics?.items.length ?? 0);
		assert.deepEqual(counts.slice(0, 3), [100, 100, 0]);
		assert.equal(
			counts.reduce((a, b) => a + b, 0),
			200,
		);
		assert.equal(answer.buffers[0]?.diagnostics?.total, 150, "total still counts them all");
		// pi's own validator takes it.
		const text = JSON.stringify({
			protocol: "0.5",
			kind: "editor-answers",
			pid: EDITOR,
			timestamp: NOW,
			answers: [{ pi_pid: PI, id: "a", ...answer }],
		});
		const parsed = parseAnswers(text, EDITOR);
		assert.ok(parsed.ok && parsed.dropped === 0 && parsed.answers.length === 1, JSON.stringify(parsed).slice(0, 200));
	});
});

describe("describeShow: one inert line", () => {
	const cases: { note: string | null; line: number; end: number | null; want: string }[] = [
		{ note: null, line: 2, end: null, want: "pi shows b.ts:2" },
		{ note: "look", line: 2, end: 3, want: "pi shows b.ts:2-3: look" },
		{ note: "x", line: 4, end: 4, want: "pi shows b.ts:4: x" },
		{ note: "a\nb\u001b[31mred\u2028c", line: 1, end: null, want: "pi shows b.ts:1: a b [31mred c" },
	];
	for (const c of cases) {
		test(JSON.stringify(c.note), () => {
			assert.equal(describeShow({ line: c.line, end_line: c.end, note: c.note }, "b.ts"), c.want);
		});
	}
});

describe("AskResponder", () => {
	const host = (shown: string[]): ShowAskHost => ({
		show: (r) => {
			shown.push(r.id);
			return { status: "listed", list: "places", reason: null };
		},
		documents: () => [doc("/p/a.ts", { active: true })],
	});
	const read = (dir: string) => {
		const text = readFileSync(join(dir, editorAnswersFileName(EDITOR)), "utf8");
		const parsed = parseAnswers(text, EDITOR);
		assert.ok(parsed.ok && parsed.dropped === 0, text.slice(0, 200));
		return parsed.answers;
	};
	const file = (requests: ShowAskRequest[], piNs?: string): AskFile => ({
		editorPid: EDITOR,
		requests,
		...(piNs === undefined ? {} : { piNs }),
	});

	test("each request once by pi and id; expired never; bound to its pi and namespace; 0600", () => {
		const dir = freshDir();
		const shown: string[] = [];
		const responder = new AskResponder(dir, EDITOR);
		assert.equal(responder.receive(PI, file([show("s1")]), host(shown), NOW), undefined);
		responder.receive(PI, file([show("s1"), show("s2"), { ...show("old"), expires: NOW - 1 }]), host(shown), NOW);
		responder.receive(PI + 1, file([show("s1")]), host(shown), NOW);
		responder.receive(PI, file([show("s1")], "pid:[4026532455]"), host(shown), NOW);
		assert.deepEqual(shown, ["s1", "s2", "s1", "s1"]);
		const answers = read(dir);
		assert.deepEqual(
			answers.map((a) => [a.pi_pid, a.pi_ns ?? null, a.id]),
			[
				[PI, null, "s1"],
				[PI, null, "s2"],
				[PI + 1, null, "s1"],
				[PI, "pid:[4026532455]", "s1"],
			],
		);
		assert.equal(findAnswer(answers, PI, null, "old"), undefined);
		assert.equal(statSync(join(dir, editorAnswersFileName(EDITOR))).mode & 0o777, 0o600);
		responder.dispose();
		assert.throws(() => statSync(join(dir, editorAnswersFileName(EDITOR))), /ENOENT/, "removed on a clean exit");
	});

	test("the newest 16 answers kept; a host failure answers refused, never throws", () => {
		const dir = freshDir();
		const responder = new AskResponder(dir, EDITOR);
		for (let i = 0; i < 20; i++) responder.receive(PI, file([show(`s${i}`)]), host([]), NOW);
		assert.deepEqual(
			read(dir).map((a) => a.id),
			Array.from({ length: 16 }, (_, i) => `s${i + 4}`),
		);
		const failing: ShowAskHost = {
			show: () => {
				throw new Error("boom");
			},
			documents: () => {
				throw new Error("boom");
			},
		};
		responder.receive(PI, file([show("f"), buildAsk("g", "all", NOW + 30)]), failing, NOW);
		const answers = read(dir);
		assert.deepEqual(
			[findAnswer(answers, PI, null, "f")?.kind, (findAnswer(answers, PI, null, "f") as { status: string }).status],
			["show", "refused"],
		);
		assert.deepEqual((findAnswer(answers, PI, null, "g") as { buffers: unknown[] }).buffers, []);
	});
});
