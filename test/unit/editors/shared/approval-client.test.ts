/**
 * pi's requests for approval in the TypeScript clients (editors/shared/approval.ts, read by pi-reader.ts and the
 * PiWatcher): the parser, the file checks on a real temp dir (malformed, oversized, foreign owner, symlink, FIFO,
 * another editor's, run out, a dead or foreign pi), the proposal worked out in memory, the `decisions` list and its
 * cap, the inbox of waiting requests, the state file's `decisions` (always written once the client answers, also
 * while the active editor is a virtual document) and the watcher reporting requests as they come and go; then a
 * seeded randomised test of the proposal against two independent oracles (pi's after-text itself; which lines pi
 * read), shown to catch a planted defect.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
	type ApprovalDecision,
	ApprovalInbox,
	addDecision,
	approvalPid,
	approvalVerb,
	type DecideOutcome,
	type DecisionTarget,
	describeApproval,
	MAX_APPROVAL_BYTES,
	MAX_DECISIONS,
	type PendingApproval,
	parseApproval,
	piApprovalName,
	proposalDiff,
	proposalLines,
	proposalText,
} from "../../../../editors/shared/approval.ts";
import { StateClient } from "../../../../editors/shared/client.ts";
import { type PidProbe, readPiApproval } from "../../../../editors/shared/pi-reader.ts";
import { PiWatcher } from "../../../../editors/shared/pi-watcher.ts";
import { buildEditorState, type HostSnapshot, SelectionClock } from "../../../../editors/shared/state.ts";
import { type EditorLike, snapshotWindow, type V03Extras } from "../../../../editors/vscode/src/snapshot.ts";
import { buildRequest } from "../../../../src/link/approval.ts";
import { splitLines } from "../../../../src/link/change-set.ts";
import { parseEditorState } from "../../../../src/protocol/protocol.ts";
import { piApprovalFileName } from "../../../../src/protocol/wire.ts";
import { seededInts } from "../../../helpers/seeded.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-approval-client-"));
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
const FILE = "/p/notes.txt";
const BEFORE = "alpha\nbeta\ngamma\n";
const AFTER = "alpha\nbeta, by pi\ngamma\ndelta\n";

/** pi's own request (src/link/approval.ts), as pi writes it. */
function message(overrides: { pid?: number; editor_pid?: number | null; request?: Record<string, unknown> } = {}) {
	const request = buildRequest({
		id: "req-1",
		tool: "edit",
		file: FILE,
		before: { kind: "text", text: BEFORE },
		after: AFTER,
		timeoutS: 120,
		now: NOW,
	});
	return {
		protocol: "0.4",
		kind: "pi-approval",
		pid: overrides.pid ?? PI,
		editor_pid: overrides.editor_pid === undefined ? EDITOR : overrides.editor_pid,
		timestamp: NOW,
		request: { ...request, ...overrides.request },
	};
}
const good = JSON.stringify(message());
const parsedGood = (): PendingApproval => {
	const parsed = parseApproval(good, PI);
	assert.ok(parsed.ok);
	return parsed.request;
};

describe("approval file names", () => {
	test("pi's name for the file", () => assert.equal(piApprovalName(PI), piApprovalFileName(PI)));
	const names: [string, number | undefined][] = [
		["pi-4242.approval.json", 4242],
		["pi-042.approval.json", undefined],
		["pi-4242.json", undefined],
		["pi-4242.review.json", undefined],
		["pi-4242.approval.json.tmp", undefined],
		["pi-.approval.json", undefined],
		["4242.approval.json", undefined],
		["pi-99999999999.approval.json", undefined],
	];
	for (const [name, pid] of names) test(`${name} -> ${pid}`, () => assert.equal(approvalPid(name), pid));
});

describe("parseApproval", () => {
	test("pi's own request reads back whole", () => {
		const request = parsedGood();
		assert.equal(request.piPid, PI);
		assert.equal(request.editorPid, EDITOR);
		assert.equal(request.id, "req-1");
		assert.equal(request.hunks_total, 2);
		assert.deepEqual(
			request.hunks.map((h) => [h.old_start, h.old_text, h.new_text]),
			[
				[2, ["beta"], ["beta, by pi"]],
				[4, [], ["delta"]],
			],
		);
		assert.equal(request.expires, NOW + 120);
	});

	const bad: { name: string; text: string; pid?: number; problem: RegExp }[] = [
		{ name: "malformed JSON", text: "{", problem: /^invalid JSON/ },
		{ name: "a list", text: "[]", problem: /not a JSON object/ },
		{ name: "another kind", text: JSON.stringify({ ...message(), kind: "pi" }), problem: /kind/ },
		{ name: "another pi's", text: good, pid: PI + 1, problem: /pid field 4242 does not match/ },
		{ name: "editor_pid a string", text: JSON.stringify({ ...message(), editor_pid: "777" }), problem: /editor_pid/ },
		{ name: "no request", text: JSON.stringify({ ...message(), request: null }), problem: /request: not an object/ },
		{ name: "an empty id", text: JSON.stringify(message({ request: { id: "" } })), problem: /request\.id/ },
		{ name: "a 65-character id", text: JSON.stringify(message({ request: { id: "x".repeat(65) } })), problem: /id/ },
		{ name: "a tool not a string", text: JSON.stringify(message({ request: { tool: 5 } })), problem: /request\.tool/ },
		{ name: "a relative file", text: JSON.stringify(message({ request: { file: "notes.txt" } })), problem: /file/ },
		{ name: "an unknown note", text: JSON.stringify(message({ request: { note: "huge" } })), problem: /note/ },
		{ name: "hunks not a list", text: JSON.stringify(message({ request: { hunks: {} } })), problem: /hunks/ },
		{ name: "no timeout", text: JSON.stringify(message({ request: { timeout_s: 0 } })), problem: /timeout_s/ },
		{ name: "expires a string", text: JSON.stringify(message({ request: { expires: "soon" } })), problem: /expires/ },
	];
	for (const c of bad) {
		test(`refused: ${c.name}`, () => {
			const parsed = parseApproval(c.text, c.pid ?? PI);
			assert.equal(parsed.ok, false);
			if (!parsed.ok) assert.match(parsed.problem, c.problem);
		});
	}

	test("any string is a tool (no length cap, as in every client): it only picks the verb", () => {
		for (const tool of ["x".repeat(65), "t".repeat(5000), ""]) {
			const parsed = parseApproval(JSON.stringify(message({ request: { tool } })), PI);
			assert.ok(parsed.ok, `tool of ${tool.length} characters`);
			assert.equal(approvalVerb(parsed.request), "edit");
		}
	});

	test("a malformed hunk is dropped and counted: the proposal is then not shown as pi's", () => {
		const text = JSON.stringify(message({ request: { hunks: [...message().request.hunks, { id: 5 }] } }));
		const parsed = parseApproval(text, PI);
		assert.ok(parsed.ok);
		assert.equal(parsed.dropped, 1);
		assert.equal(parsed.request.hunks.length, 2);
		assert.equal(parsed.request.hunks_total, 3);
		assert.equal(proposalLines(parsed.request, ["alpha", "beta", "gamma", ""]), undefined);
	});

	test("a note (binary, too large) carries no hunks; a null editor_pid names no editor", () => {
		const parsed = parseApproval(JSON.stringify(message({ editor_pid: null, request: { note: "too large" } })), PI);
		assert.ok(parsed.ok);
		assert.equal(parsed.request.note, "too large");
		assert.deepEqual(parsed.request.hunks, []);
		assert.equal(parsed.request.editorPid, null);
		assert.equal(describeApproval(parsed.request, "notes.txt"), "pi wants to edit notes.txt: too large, no preview");
	});
});

describe("the proposal, in memory", () => {
	const cases: { name: string; lines: string[]; expected: string[] | undefined }[] = [
		{
			name: "a document as VS Code holds it (the empty line after the last line break)",
			lines: ["alpha", "beta", "gamma", ""],
			expected: ["alpha", "beta, by pi", "gamma", "delta", ""],
		},
		{
			name: "a document without a final line break",
			lines: ["alpha", "beta", "gamma"],
			expected: ["alpha", "beta, by pi", "gamma", "delta"],
		},
		{ name: "the user changed a line pi replaces", lines: ["alpha", "BETA", "gamma", ""], expected: undefined },
		{
			name: "a line inserted above: pi's lines are not where pi read them",
			lines: ["x", "alpha", "beta", "gamma", ""],
			expected: undefined,
		},
		{ name: "an empty document", lines: [], expected: undefined },
	];
	for (const c of cases) {
		test(c.name, () => assert.deepEqual(proposalLines(parsedGood(), c.lines), c.expected));
	}
	test("lines of a CRLF file: compared without the CR", () => {
		const crlf = parseApproval(
			JSON.stringify({
				...message(),
				request: buildRequest({
					id: "r",
					tool: "edit",
					file: FILE,
					before: { kind: "text", text: "a\r\nb\r\n" },
					after: "a\r\nB\r\n",
					timeoutS: 5,
					now: NOW,
				}),
			}),
			PI,
		);
		assert.ok(crlf.ok);
		assert.deepEqual(proposalLines(crlf.request, ["a", "b", ""]), ["a", "B\r", ""]);
	});
	test("a file pi would create: the proposal from nothing", () => {
		const parsed = parseApproval(
			JSON.stringify({
				...message(),
				request: buildRequest({
					id: "r",
					tool: "write",
					file: FILE,
					before: { kind: "absent" },
					after: "one\ntwo\n",
					timeoutS: 5,
					now: NOW,
				}),
			}),
			PI,
		);
		assert.ok(parsed.ok);
		assert.deepEqual(proposalLines(parsed.request, []), ["one", "two"]);
		assert.equal(describeApproval(parsed.request, "notes.txt"), "pi wants to create notes.txt: 1 hunk");
	});
	const texts: { name: string; document: string; expected: string | undefined }[] = [
		{ name: "text: a document with a final line break keeps it", document: BEFORE, expected: AFTER },
		{
			name: "text: one without keeps that",
			document: "alpha\nbeta\ngamma",
			expected: "alpha\nbeta, by pi\ngamma\ndelta",
		},
		{ name: "text: the user's line under a hunk", document: "alpha\nBETA\ngamma\n", expected: undefined },
	];
	for (const c of texts) {
		test(c.name, () => assert.equal(proposalText(parsedGood(), c.document.split("\n"), "\n"), c.expected));
	}
	test("text: CRLF lines joined with the document's line break", () =>
		assert.equal(
			proposalText(parsedGood(), ["alpha", "beta", "gamma", ""], "\r\n"),
			"alpha\r\nbeta, by pi\r\ngamma\r\ndelta\r\n",
		));
	test("the unified diff shown when the proposal cannot be", () => {
		assert.deepEqual(proposalDiff(parsedGood()), [
			`--- ${FILE}`,
			`+++ ${FILE} (pi's proposal)`,
			"@@ -2,1 +2,1 @@",
			"-beta",
			"+beta, by pi",
			"@@ -4,0 +4,1 @@",
			"+delta",
		]);
	});
	test("the notice's line", () =>
		assert.equal(describeApproval(parsedGood(), "notes.txt"), "pi wants to edit notes.txt: 2 hunks"));
});

describe("decisions", () => {
	const d = (n: number): ApprovalDecision => ({ pi_pid: PI, id: `r${n}`, decision: n % 2 ? "accept" : "reject" });
	const cases: { name: string; before: number; length: number; first: string }[] = [
		{ name: "the first", before: 0, length: 1, first: "r0" },
		{ name: "below the cap: all kept", before: 2, length: 3, first: "r0" },
		{ name: "at the cap: the oldest goes", before: MAX_DECISIONS, length: MAX_DECISIONS, first: "r1" },
	];
	for (const c of cases) {
		test(c.name, () => {
			const list = addDecision(
				Array.from({ length: c.before }, (_, i) => d(i)),
				d(c.before),
			);
			assert.equal(list.length, c.length);
			assert.equal(list[0]?.id, c.first);
			assert.deepEqual(list.at(-1), d(c.before), "newest last");
		});
	}
	test("25 decisions keep the newest 20, in order", () => {
		let list: ApprovalDecision[] = [];
		for (let i = 0; i < 25; i++) list = addDecision(list, d(i));
		assert.deepEqual(
			list.map((x) => x.id),
			Array.from({ length: 20 }, (_, i) => `r${i + 5}`),
		);
	});
});

describe("ApprovalInbox", () => {
	const request = (over: Partial<PendingApproval> = {}): PendingApproval => ({ ...parsedGood(), ...over });

	test("decisions are a list from the start (pi reads that the editor answers)", () => {
		assert.deepEqual(new ApprovalInbox().decisions, []);
	});

	const cases: {
		name: string;
		waiting: Partial<PendingApproval>[];
		answer: "accept" | "reject";
		target: { piPid: number; id: string } | "current";
		now: number;
		outcome: string;
		decisions: ApprovalDecision[];
		left: number;
	}[] = [
		{
			name: "accept the request a notice showed",
			waiting: [{}],
			answer: "accept",
			target: { piPid: PI, id: "req-1" },
			now: NOW,
			outcome: "decided",
			decisions: [{ pi_pid: PI, id: "req-1", decision: "accept" }],
			left: 0,
		},
		{
			name: "reject the current one (a command)",
			waiting: [{}],
			answer: "reject",
			target: "current",
			now: NOW,
			outcome: "decided",
			decisions: [{ pi_pid: PI, id: "req-1", decision: "reject" }],
			left: 0,
		},
		{
			name: "a command answers the request shown (told first), not the one that runs out first",
			waiting: [
				{ piPid: 1, id: "late", expires: NOW + 50 },
				{ piPid: 2, id: "soon", expires: NOW + 10 },
			],
			answer: "accept",
			target: "current",
			now: NOW,
			outcome: "decided",
			decisions: [{ pi_pid: 1, id: "late", decision: "accept" }],
			left: 1,
		},
		{
			name: "a notice of an older request of the same pi: gone, nothing sent",
			waiting: [{ id: "req-2" }],
			answer: "accept",
			target: { piPid: PI, id: "req-1" },
			now: NOW,
			outcome: "gone",
			decisions: [],
			left: 1,
		},
		{
			name: "nothing waits: gone",
			waiting: [],
			answer: "reject",
			target: "current",
			now: NOW,
			outcome: "gone",
			decisions: [],
			left: 0,
		},
		{
			name: "run out: nothing sent, the request forgotten",
			waiting: [{}],
			answer: "accept",
			target: "current",
			now: NOW + 121,
			outcome: "expired",
			decisions: [],
			left: 0,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const inbox = new ApprovalInbox();
			for (const w of c.waiting) inbox.receive(request(w));
			assert.equal(inbox.decide(c.answer, c.target, c.now).kind, c.outcome);
			assert.deepEqual(inbox.decisions, c.decisions);
			assert.equal(inbox.pending.length, c.left);
		});
	}

	// Issue 22, item 8 (PROTOCOL.md "An answer is for the request the user saw"): steps in order, then what a
	// command's answer does. `arrive` a request of pi PI, `end` pi's wait, `show` the proposal (the host's #show).
	type Step = { arrive: string } | { end: true } | { show: true } | { answer: "accept" | "reject"; want: string };
	const BOUND: { name: string; steps: Step[]; decisions: { id: string; decision: string }[] }[] = [
		{
			name: "A shown, A ends, B arrives: the command names B (moved), the same command again answers B",
			steps: [
				{ arrive: "A" },
				{ end: true },
				{ arrive: "B" },
				{ answer: "accept", want: "moved B" },
				{ answer: "accept", want: "decided B" },
			],
			decisions: [{ id: "B", decision: "accept" }],
		},
		{
			name: "A replaced by B in one read (pi's file rewritten): B is not rejected unseen",
			steps: [{ arrive: "A" }, { arrive: "B" }, { answer: "reject", want: "moved B" }],
			decisions: [],
		},
		{
			name: "A shown, A ends, B arrives, B's proposal shown: the command answers B",
			steps: [{ arrive: "A" }, { end: true }, { arrive: "B" }, { show: true }, { answer: "reject", want: "decided B" }],
			decisions: [{ id: "B", decision: "reject" }],
		},
		{
			name: "A answered, then B arrives: B is shown by its notice, the command answers it",
			steps: [
				{ arrive: "A" },
				{ answer: "accept", want: "decided A" },
				{ arrive: "B" },
				{ answer: "accept", want: "decided B" },
			],
			decisions: [
				{ id: "A", decision: "accept" },
				{ id: "B", decision: "accept" },
			],
		},
		{
			name: "A ends, nothing else waits: gone",
			steps: [{ arrive: "A" }, { end: true }, { answer: "accept", want: "gone" }],
			decisions: [],
		},
	];
	for (const c of BOUND)
		test(`an answer is for the request the user saw: ${c.name}`, () => {
			const inbox = new ApprovalInbox();
			for (const step of c.steps) {
				if ("arrive" in step) inbox.receive(request({ id: step.arrive }));
				else if ("end" in step) inbox.end(PI);
				else if ("show" in step) {
					const shown = inbox.seen() ?? inbox.current();
					if (shown) inbox.shown(shown);
				} else {
					const outcome = inbox.decide(step.answer, "current", NOW);
					const got = outcome.kind === "gone" ? "gone" : `${outcome.kind} ${outcome.request.id}`;
					assert.equal(got, step.want);
				}
			}
			assert.deepEqual(
				inbox.decisions,
				c.decisions.map((d) => ({ pi_pid: PI, ...d })),
			);
		});

	/**
	 * Seeded: two pis ask, end, the user looks (Show change) and answers from a notice (by id) or by command. The
	 * oracle replays what the user was shown since their last answer (PROTOCOL.md: the first request told, then any
	 * shown on purpose or named by a refused command, the latest counting) and says what a command must do.
	 */
	function runBound(seed: number, inbox: ApprovalInbox): string | undefined {
		const int = seededInts(seed);
		const trace: string[] = [];
		let since: { kind: "told" | "show" | "moved"; id: string }[] = [];
		let ids = 0;
		const pendingNow = () => inbox.pending;
		const soonest = () => [...pendingNow()].sort((a, b) => a.expires - b.expires)[0];
		const seenByOracle = () => {
			let seen: string | undefined;
			for (const e of since) if (e.kind !== "told" || seen === undefined) seen = e.id;
			return pendingNow().find((r) => r.id === seen);
		};
		for (let step = 0; step < 30; step++) {
			const what = int(10);
			const piPid = 1 + int(2);
			if (what < 3) {
				const id = `r${ids++}`;
				const got = inbox.receive(request({ piPid, id, expires: NOW + 10 + int(50) + ids / 1000 }));
				if (got.kind !== "same") since.push({ kind: "told", id });
				trace.push(`pi ${piPid} asks ${id}`);
			} else if (what < 4) {
				inbox.end(piPid);
				trace.push(`pi ${piPid} ends`);
			} else if (what < 5) {
				const shown = inbox.seen() ?? inbox.current();
				const want = seenByOracle() ?? soonest();
				trace.push(`show ${shown?.id}`);
				if (shown?.id !== want?.id)
					return `seed ${seed}: showed ${shown?.id}, not ${want?.id}\n  ${trace.join("\n  ")}`;
				if (shown) {
					inbox.shown(shown);
					since.push({ kind: "show", id: shown.id });
				}
			} else if (what < 7) {
				const target = pendingNow()[int(Math.max(1, pendingNow().length))];
				const id = target?.id ?? "r-none";
				const outcome = inbox.decide("accept", { piPid: target?.piPid ?? piPid, id }, NOW);
				trace.push(`notice of ${id}: ${outcome.kind}`);
				if (outcome.kind !== (target ? "decided" : "gone"))
					return `seed ${seed}: ${outcome.kind}\n  ${trace.join("\n  ")}`;
				if (target) since = [];
			} else {
				const seen = seenByOracle();
				const instead = seen ? undefined : soonest();
				const want = seen ? `decided ${seen.id}` : instead ? `moved ${instead.id}` : "gone";
				const outcome = inbox.decide("reject", "current", NOW);
				const got = outcome.kind === "gone" ? "gone" : `${outcome.kind} ${outcome.request.id}`;
				trace.push(`command: ${got}`);
				if (got !== want) return `seed ${seed}: the command gave ${got}, the oracle ${want}\n  ${trace.join("\n  ")}`;
				if (instead) since.push({ kind: "moved", id: instead.id });
				else since = [];
			}
		}
		return undefined;
	}

	test("seeded: a command answers only the request the user saw (the oracle replays the screen); a planted defect is caught", () => {
		for (let seed = 1; seed <= 300; seed++) {
			const failure = runBound(seed, new ApprovalInbox());
			assert.equal(failure, undefined, failure);
		}
		/** The defect of issue 22, item 8: a command answers whatever request runs out first. */
		class AnswersCurrent extends ApprovalInbox {
			override decide(decision: "accept" | "reject", target: DecisionTarget, now: number): DecideOutcome {
				const current = this.current();
				return super.decide(decision, target === "current" && current ? current : target, now);
			}
		}
		const caught = Array.from({ length: 300 }, (_, i) => runBound(i + 1, new AnswersCurrent())).filter(Boolean);
		assert.ok(caught.length > 10, `the planted defect was caught by ${caught.length} seeds`);
	});

	test("receive: new, a rewrite of the same, another that replaces it; end and expire forget", () => {
		const inbox = new ApprovalInbox();
		assert.deepEqual(inbox.receive(request()), { kind: "new" });
		assert.deepEqual(inbox.receive(request()), { kind: "same" });
		const next = inbox.receive(request({ id: "req-2" }));
		assert.equal(next.kind, "replaced");
		assert.equal(next.kind === "replaced" && next.ended.id, "req-1");
		assert.equal(inbox.end(PI)?.id, "req-2");
		assert.equal(inbox.end(PI), undefined);
		inbox.receive(request({ piPid: 1, expires: NOW + 1 }));
		inbox.receive(request({ piPid: 2, expires: NOW + 9 }));
		assert.deepEqual(
			inbox.expire(NOW + 5).map((r) => r.piPid),
			[1],
		);
		assert.deepEqual(
			inbox.pending.map((r) => r.piPid),
			[2],
		);
	});
});

describe("readPiApproval (real directory)", () => {
	const alive: PidProbe = () => "alive";
	const path = (dir: string) => join(dir, piApprovalName(PI));
	const cases: {
		name: string;
		plant: (dir: string, path: string) => void;
		probe?: PidProbe;
		now?: number;
		expected: string | RegExp;
	}[] = [
		{ name: "pi's own request", plant: (_d, p) => writeFileSync(p, good, { mode: 0o600 }), expected: "request" },
		{ name: "no file", plant: () => {}, expected: "gone" },
		{
			name: "malformed",
			plant: (_d, p) => writeFileSync(p, "{", { mode: 0o600 }),
			expected: /invalid request: invalid JSON/,
		},
		{
			name: "oversized",
			plant: (_d, p) => writeFileSync(p, " ".repeat(MAX_APPROVAL_BYTES + 1), { mode: 0o600 }),
			expected: /over the 1048576-byte limit/,
		},
		{ name: "group-readable", plant: (_d, p) => writeFileSync(p, good, { mode: 0o640 }), expected: /mode 0640/ },
		{
			name: "a symlink to a good file",
			plant: (d, p) => {
				writeFileSync(join(d, "real.json"), good, { mode: 0o600 });
				symlinkSync(join(d, "real.json"), p);
			},
			expected: /symbolic link/,
		},
		{
			name: "a FIFO (never blocks)",
			plant: (_d, p) => execFileSync("mkfifo", ["-m", "600", p]),
			expected: /not a regular file/,
		},
		{
			name: "another pi's request under this pi's name",
			plant: (_d, p) => writeFileSync(p, JSON.stringify(message({ pid: PI + 1 })), { mode: 0o600 }),
			expected: /pid field 4243/,
		},
		{
			name: "a request for another editor",
			plant: (_d, p) => writeFileSync(p, JSON.stringify(message({ editor_pid: EDITOR + 1 })), { mode: 0o600 }),
			expected: "elsewhere",
		},
		{
			name: "a request naming no editor",
			plant: (_d, p) => writeFileSync(p, JSON.stringify(message({ editor_pid: null })), { mode: 0o600 }),
			expected: "elsewhere",
		},
		{
			name: "run out",
			plant: (_d, p) => writeFileSync(p, good, { mode: 0o600 }),
			now: NOW + 121,
			expected: "expired",
		},
		{
			name: "a dead pi's leftover: not read",
			plant: (_d, p) => writeFileSync(p, good, { mode: 0o600 }),
			probe: () => "dead",
			expected: "dead",
		},
		{
			name: "a pid of another user's process",
			plant: (_d, p) => writeFileSync(p, good, { mode: 0o600 }),
			probe: () => "foreign",
			expected: /another user's process/,
		},
		{
			name: "a probe the kernel did not answer",
			plant: (_d, p) => writeFileSync(p, good, { mode: 0o600 }),
			probe: () => ({ unknown: "EINVAL" }),
			expected: /cannot tell/,
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const dir = freshDir();
			c.plant(dir, path(dir));
			const verdict = readPiApproval(dir, PI, { ownPid: EDITOR, now: c.now ?? NOW, probe: c.probe ?? alive });
			if (typeof c.expected === "string") assert.equal(verdict.kind, c.expected);
			else assert.match(verdict.kind === "problem" ? verdict.problem : verdict.kind, c.expected);
		});
	}
	test("a file owned by another uid is refused", () => {
		const dir = freshDir();
		writeFileSync(path(dir), good, { mode: 0o600 });
		const verdict = readPiApproval(dir, PI, {
			ownPid: EDITOR,
			now: NOW,
			probe: alive,
			uid: (process.getuid?.() ?? 0) + 1,
		});
		assert.match(verdict.kind === "problem" ? verdict.problem : "", /owned by uid/);
	});
	test("the real probe: a pid above pid_max is dead", () => {
		const dir = freshDir();
		const dead = 2 ** 22 + 12345;
		writeFileSync(join(dir, piApprovalName(dead)), JSON.stringify(message({ pid: dead })), { mode: 0o600 });
		assert.equal(readPiApproval(dir, dead, { ownPid: EDITOR, now: NOW }).kind, "dead");
	});
});

describe("the state file's decisions", () => {
	const snapshot = (over: Partial<HostSnapshot> = {}): HostSnapshot => ({
		cwd: "/p",
		argv: [],
		document: null,
		...over,
	});
	const build = (over: Partial<HostSnapshot>) =>
		buildEditorState(snapshot(over), { pid: EDITOR, app: "vscode", now: NOW, clock: new SelectionClock() });

	const cases: { name: string; decisions: ApprovalDecision[] | undefined; written: ApprovalDecision[] | undefined }[] =
		[
			{ name: "a client that does not answer: no field", decisions: undefined, written: undefined },
			{ name: "one that answers, before its first decision: an empty list", decisions: [], written: [] },
			{
				name: "after a decision",
				decisions: [{ pi_pid: PI, id: "req-1", decision: "reject" }],
				written: [{ pi_pid: PI, id: "req-1", decision: "reject" }],
			},
		];
	for (const c of cases) {
		test(c.name, () => {
			const state = build(c.decisions === undefined ? {} : { decisions: c.decisions });
			const parsed = parseEditorState(JSON.stringify(state));
			assert.ok(parsed.ok);
			assert.deepEqual(parsed.state.decisions, c.written);
		});
	}

	/** VS Code's active editor, as snapshot.ts sees it. */
	const editor = (scheme: string, file: string): EditorLike => ({
		document: {
			uri: { scheme, fsPath: file, toString: () => `${scheme}:${file}` },
			fileName: file,
			isUntitled: false,
			languageId: "plaintext",
			isDirty: false,
			lineCount: 2,
			lineAt: (line) => ({ text: ["alpha", ""][line] ?? "" }),
		},
		selection: { anchor: { line: 0, character: 2 }, active: { line: 0, character: 2 } },
	});
	const ws = {
		workspaceFolders: [{ uri: { scheme: "file", fsPath: "/p", toString: () => "file:///p" } }],
		workspaceFile: undefined,
	};

	test("a decision made while the proposal (a virtual document) is active is written, the file's document kept", () => {
		const dir = freshDir();
		let active = editor("file", FILE);
		let decisions: ApprovalDecision[] = [];
		const extras = (): V03Extras => ({ diagnostics: () => undefined, files: [], pi: null, decisions });
		const client = new StateClient({
			app: "vscode",
			pid: EDITOR,
			dir,
			snapshot: () => snapshotWindow(active, ws, "/home", extras()),
			warn: (m) => assert.fail(m),
		});
		const read = () => JSON.parse(readFileSync(client.path, "utf8"));
		assert.equal(client.flush(), "written");
		assert.deepEqual(read().decisions, []);
		active = editor("pi-proposal", FILE);
		decisions = [{ pi_pid: PI, id: "req-1", decision: "accept" }];
		assert.equal(client.flush(), "written");
		const state = read();
		assert.deepEqual(state.decisions, decisions);
		assert.equal(state.active_buffer.file, FILE, "the file's document, not the proposal");
		assert.deepEqual(state.active_buffer.cursor, { line: 1, column: 3 });
		assert.equal(client.flush(), "unchanged");
		client.dispose();
	});

	test("a virtual document active before anything was written: nothing written", () => {
		const dir = freshDir();
		const client = new StateClient({
			app: "vscode",
			pid: EDITOR,
			dir,
			snapshot: () =>
				snapshotWindow(editor("output", "x"), ws, "/home", {
					diagnostics: () => undefined,
					files: [],
					pi: null,
					decisions: [],
				}),
			warn: (m) => assert.fail(m),
		});
		assert.equal(client.flush(), "skipped");
	});
});

describe("PiWatcher with onApproval (real directory)", () => {
	const atomicWrite = (dir: string, name: string, text: string) => {
		writeFileSync(join(dir, `${name}.tmp`), text, { mode: 0o600, flag: "wx" });
		renameSync(join(dir, `${name}.tmp`), join(dir, name));
	};

	test("a request at start, its removal, a bad one reported once; hosts without onApproval ignore the files", async (t) => {
		const dir = freshDir();
		const pid = process.pid; // a live pi of ours
		const name = piApprovalName(pid);
		atomicWrite(dir, name, JSON.stringify(message({ pid })));
		const events: string[] = [];
		let wake: (() => void) | undefined;
		const next = async (count: number) => {
			while (events.length < count) await new Promise<void>((resolve) => (wake = resolve));
			return events.slice(0, count);
		};
		const push = (event: string) => {
			events.push(event);
			wake?.();
		};
		const watcher = new PiWatcher({
			dir,
			ownPid: EDITOR,
			now: () => NOW,
			onMessage: () => push("message"),
			onGone: () => push("gone"),
			onProblem: (problem) => push(`problem ${problem}`),
			onApproval: (p, verdict) => push(`approval ${p} ${verdict.kind}`),
		});
		t.after(() => watcher.dispose());
		const silent: string[] = [];
		const without = new PiWatcher({
			dir,
			ownPid: EDITOR,
			onMessage: () => silent.push("message"),
			onGone: () => silent.push("gone"),
			onProblem: (problem) => silent.push(problem),
		});
		t.after(() => without.dispose());
		watcher.start();
		without.start();
		assert.deepEqual(await next(1), [`approval ${pid} request`]);
		rmSync(join(dir, name));
		assert.equal((await next(2))[1], `approval ${pid} gone`);
		atomicWrite(dir, name, "{");
		const bad = await next(4);
		assert.match(bad[2] ?? "", /^problem pi-\d+\.approval\.json invalid request: invalid JSON/);
		assert.equal(bad[3], `approval ${pid} problem`);
		atomicWrite(dir, name, "{"); // rewritten, the same problem
		assert.equal((await next(5))[4], `approval ${pid} problem`);
		assert.equal(events.filter((e) => e.startsWith("problem")).length, 1, "the same problem is reported once");
		assert.deepEqual(silent, []);
	});
});

describe("the proposal, seeded: pi's hunks on the text pi read give pi's text; a line the user changed under one gives none", () => {
	/** A text of `n` lines from a small alphabet (repeats make the diff's choices ambiguous), with or without a final break. */
	const text = (int: (n: number) => number, n: number) => {
		const lines = Array.from({ length: n }, () => ["a", "b", "c", "", "dd"][int(5)] ?? "");
		return lines.join("\n") + (n > 0 && int(3) > 0 ? "\n" : "");
	};
	/** What a change of line `i` (0-based, of the text pi read) does: it is under a hunk's old lines, or not. */
	const underHunk = (request: PendingApproval, i: number) =>
		request.hunks.some((h) => i >= h.old_start - 1 && i < h.old_start - 1 + h.old_text.length);

	/** One seeded case; returns a failure, or undefined. `apply` is the rule under test (a planted defect swaps it). */
	function check(seed: number, apply: typeof proposalText): string | undefined {
		const int = seededInts(seed);
		const before = text(int, int(12));
		const after = text(int, int(12));
		const parsed = parseApproval(
			JSON.stringify({
				...message(),
				request: buildRequest({
					id: "r",
					tool: "write",
					file: FILE,
					before: { kind: "text", text: before },
					after,
					timeoutS: 5,
					now: NOW,
				}),
			}),
			PI,
		);
		if (!parsed.ok) return `seed ${seed}: ${parsed.problem}`;
		const request = parsed.request;
		// The document as VS Code holds it: split at every break (an empty last line after a final one).
		const document = before.split("\n");
		const proposal = apply(request, document, "\n");
		// Oracle 1: pi's own after-text, line for line (pi's lines carry no final break: that alone may differ).
		if (proposal === undefined || JSON.stringify(splitLines(proposal)) !== JSON.stringify(splitLines(after))) {
			return `seed ${seed}: ${JSON.stringify(before)} -> ${JSON.stringify(after)} gave ${JSON.stringify(proposal)}`;
		}
		// Oracle 2: the user changes one of the lines pi read; the proposal is shown only when no hunk covers it.
		const read = splitLines(before);
		if (read.length === 0) return undefined;
		const i = int(read.length);
		const edited = document.map((line, k) => (k === i ? `${line} (yours)` : line));
		const shown = apply(request, edited, "\n") !== undefined;
		if (shown === underHunk(request, i)) {
			return `seed ${seed}: line ${i + 1} changed under ${JSON.stringify(request.hunks)}: shown ${shown}`;
		}
		return undefined;
	}

	test("500 seeds", () => {
		const failures: string[] = [];
		for (let seed = 1; seed <= 500; seed++) {
			const failure = check(seed, proposalText);
			if (failure) failures.push(failure);
		}
		assert.deepEqual(failures.slice(0, 3), []);
	});

	test("a planted defect (hunks applied without checking the lines pi read) is caught", () => {
		const unchecked: typeof proposalText = (request, lines, eol) =>
			proposalText(
				request,
				lines.map((line, k) => {
					const hunk = request.hunks.find((h) => k >= h.old_start - 1 && k < h.old_start - 1 + h.old_text.length);
					return hunk ? (hunk.old_text[k - hunk.old_start + 1] ?? line) : line;
				}),
				eol,
			);
		const caught = Array.from({ length: 500 }, (_, i) => check(i + 1, unchecked)).filter(Boolean);
		assert.ok(caught.length > 0, "the defect went unnoticed");
	});
});
