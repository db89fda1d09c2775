/**
 * Optional approval of pi's edits (src/link/approval.ts): the request, the editor's decisions, the wait for the
 * first answer (tables, and a seeded randomised test against a simple oracle), and the words the model reads.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	type ApprovalOutcome,
	answersApprovals,
	awaitDecision,
	buildRequest,
	type DecisionPorts,
	DIALOG_NAME,
	decisionIn,
	describeOutcome,
	dialogTitle,
	encodeApprovalMessage,
} from "../../../src/link/approval.ts";
import type { ApprovalDecision, EditorState } from "../../../src/protocol/protocol.ts";
import { parseEditorState } from "../../../src/protocol/protocol.ts";
import type { ApprovalMessage } from "../../../src/protocol/wire.ts";
import { seededInts } from "../../helpers/seeded.ts";
import { makeState } from "../../helpers/state-files.ts";

const PI = 4242;
const ID = "a-1";
const stateWith = (decisions: ApprovalDecision[] | undefined): EditorState => ({
	...makeState({ pid: 9 }),
	...(decisions ? { decisions } : {}),
});

describe("buildRequest", () => {
	const base = { id: ID, tool: "edit", file: "/p/a.txt", timeoutS: 120, now: 1000 };
	test("an edit of a text file: its hunks against the file now, and when it expires", () => {
		const r = buildRequest({ ...base, before: { kind: "text", text: "a\nb\nc\n" }, after: "a\nB\nc\n" });
		assert.equal(r.created, false);
		assert.equal(r.note, null);
		assert.equal(r.hunks_total, 1);
		assert.deepEqual([r.hunks[0]?.old_text, r.hunks[0]?.new_text, r.hunks[0]?.new_start], [["b"], ["B"], 2]);
		assert.equal(r.expires, 1120);
	});
	test("a write that creates the file", () => {
		const r = buildRequest({ ...base, tool: "write", before: { kind: "absent" }, after: "x\ny\n" });
		assert.equal(r.created, true);
		assert.deepEqual(r.hunks[0]?.new_text, ["x", "y"]);
	});
	test("a file whose text is not carried: a note, no hunks (the user is still asked)", () => {
		const r = buildRequest({ ...base, before: { kind: "note", note: "binary" }, after: null });
		assert.deepEqual([r.note, r.hunks, r.hunks_total], ["binary", [], 0]);
	});
	test("a proposal too large for the file loses its hunks, with a note", () => {
		const request = buildRequest({ ...base, before: { kind: "absent" }, after: "x".repeat(3000) });
		const message: ApprovalMessage = {
			protocol: "0.4",
			kind: "pi-approval",
			pid: PI,
			editor_pid: 9,
			timestamp: 1,
			request,
		};
		const small = JSON.parse(encodeApprovalMessage(message, 1000)) as ApprovalMessage;
		assert.deepEqual([small.request.note, small.request.hunks], ["too large", []]);
		assert.equal((JSON.parse(encodeApprovalMessage(message)) as ApprovalMessage).request.hunks.length, 1);
	});
	test("the dialog's title says what changes, how much, and what silence means", () => {
		const r = buildRequest({ ...base, before: { kind: "text", text: "a\n" }, after: "b\nc\n" });
		assert.equal(
			dialogTitle(r, "/p"),
			"pi wants to edit a.txt (+2 -1 in 1 hunk). No answer within 120 s leaves the file unchanged.",
		);
	});
});

describe("the editor's decisions", () => {
	const cases: { name: string; decisions: ApprovalDecision[] | undefined; want: "accept" | "reject" | undefined }[] = [
		{ name: "none listed", decisions: [], want: undefined },
		{ name: "no decisions field (an editor without approval)", decisions: undefined, want: undefined },
		{ name: "accepted", decisions: [{ pi_pid: PI, id: ID, decision: "accept" }], want: "accept" },
		{ name: "rejected", decisions: [{ pi_pid: PI, id: ID, decision: "reject" }], want: "reject" },
		{ name: "another pi's, same id", decisions: [{ pi_pid: 1, id: ID, decision: "accept" }], want: undefined },
		{
			name: "an unknown id (an older request)",
			decisions: [{ pi_pid: PI, id: "a-0", decision: "reject" }],
			want: undefined,
		},
		{
			name: "two for the same request: the newest",
			decisions: [
				{ pi_pid: PI, id: ID, decision: "reject" },
				{ pi_pid: PI, id: ID, decision: "accept" },
			],
			want: "accept",
		},
	];
	for (const c of cases)
		test(c.name, () => {
			assert.equal(decisionIn(stateWith(c.decisions), PI, ID), c.want);
		});
	test("an editor answers approvals when it writes `decisions`, even empty", () => {
		assert.equal(answersApprovals(stateWith([])), true);
		assert.equal(answersApprovals(stateWith(undefined)), false);
		assert.equal(answersApprovals(null), false);
	});

	const parseCases: { name: string; decisions: unknown; kept: number; warning: RegExp | null }[] = [
		{ name: "well formed", decisions: [{ pi_pid: PI, id: ID, decision: "accept" }], kept: 1, warning: null },
		{
			name: "malformed entries dropped, one note",
			decisions: [
				{ pi_pid: PI, id: ID, decision: "maybe" },
				{ pi_pid: 0, id: ID, decision: "accept" },
				{ pi_pid: PI, id: "", decision: "reject" },
				{ pi_pid: PI, id: "x".repeat(65), decision: "reject" },
				"accept",
				{ pi_pid: PI, id: ID, decision: "reject" },
			],
			kept: 1,
			warning: /\/decisions: 5 malformed entries ignored/,
		},
		{ name: "not a list", decisions: { accept: true }, kept: -1, warning: /\/decisions: not an array, ignored/ },
		{
			name: "more than 20: the newest 20",
			decisions: Array.from({ length: 25 }, (_, i) => ({ pi_pid: PI, id: `a-${i}`, decision: "accept" })),
			kept: 20,
			warning: null,
		},
	];
	for (const c of parseCases)
		test(`the state file's decisions: ${c.name}`, () => {
			const parsed = parseEditorState(JSON.stringify({ ...makeState({ pid: 9 }), decisions: c.decisions }));
			assert.ok(parsed.ok);
			const kept = parsed.state.decisions;
			assert.equal(kept === undefined ? -1 : kept.length, c.kept);
			if (c.kept === 20) assert.equal(kept?.[0]?.id, "a-5");
			const warnings = parsed.warnings ?? [];
			if (c.warning)
				assert.ok(
					warnings.some((w) => c.warning?.test(w)),
					warnings.join("; "),
				);
			else assert.deepEqual(warnings, []);
		});
});

describe("what the model is told", () => {
	const cases: { outcome: ApprovalOutcome; block: RegExp | null; note: RegExp | null }[] = [
		{ outcome: { kind: "accepted", where: "Neovim" }, block: null, note: /approved this change to a\.txt in Neovim/ },
		{
			outcome: { kind: "rejected", where: "Neovim" },
			block: /^The user rejected this change in Neovim: a\.txt is unchanged\. Do not make it again unless/,
			note: null,
		},
		{
			outcome: { kind: "changed", where: "Neovim" },
			block:
				/^The user approved this change in Neovim, but a\.txt changed after .*not applied, so the file keeps its new content\. Read a\.txt again/,
			note: null,
		},
		{
			outcome: { kind: "rejected", where: DIALOG_NAME },
			block: /rejected this change in pi's approval dialog/,
			note: null,
		},
		{
			outcome: { kind: "timeout", seconds: 120 },
			block: /^No decision within 120 s .*not applied and a\.txt is unchanged\. This is not a rejection: ask the user/,
			note: null,
		},
		{
			outcome: { kind: "dismissed" },
			block: /closed pi's approval dialog without deciding.*not a rejection/,
			note: null,
		},
		{ outcome: { kind: "editor gone", where: "Neovim" }, block: /^Neovim closed while .*not a rejection/, note: null },
		{ outcome: { kind: "aborted" }, block: /run was stopped .*not applied and a\.txt is unchanged/, note: null },
		{ outcome: { kind: "unattended" }, block: null, note: /applied without approval/ },
	];
	for (const c of cases)
		test(c.outcome.kind + ("where" in c.outcome ? ` in ${c.outcome.where}` : ""), () => {
			const words = describeOutcome(c.outcome, "/p/a.txt", "/p");
			assert.ok(words.block !== null || words.note !== null, "never silent");
			if (c.block) assert.match(words.block ?? "", c.block);
			else assert.equal(words.block, null);
			if (c.note) assert.match(words.note ?? "", c.note);
			else assert.equal(words.note, null);
		});
	test("a file outside the project is named whole", () => {
		assert.match(
			describeOutcome({ kind: "rejected", where: "Neovim" }, "/etc/x", "/p").block ?? "",
			/\/etc\/x is unchanged/,
		);
	});
});

// ---- the wait ------------------------------------------------------------------------------------------

type EditorEvent = { at: number; kind: "decide"; decision: ApprovalDecision } | { at: number; kind: "gone" };
type DialogEvent = { at: number; answer: "accept" | "reject" | undefined };

interface Scenario {
	timeoutS: number;
	editor: EditorEvent[] | null;
	dialog: DialogEvent | null;
	abortAt: number | null;
}

/** Runs a scenario on a fake clock; every event at its own millisecond. */
async function run(s: Scenario): Promise<{ outcome: ApprovalOutcome; dialogDismissed: boolean }> {
	let now = 0;
	const timers: { at: number; fn: () => void; live: boolean }[] = [];
	let state: EditorState | null = stateWith([]);
	const listeners = new Set<() => void>();
	let dialogSignal: AbortSignal | undefined;
	let answerDialog: ((a: "accept" | "reject" | undefined) => void) | undefined;
	const abort = new AbortController();
	const ports: DecisionPorts = {
		setTimer: (fn, ms) => {
			const t = { at: now + ms, fn, live: true };
			timers.push(t);
			return () => {
				t.live = false;
			};
		},
		...(s.editor
			? {
					editor: {
						name: "Neovim",
						read: () => state,
						subscribe: (l: () => void) => {
							listeners.add(l);
							return () => listeners.delete(l);
						},
					},
				}
			: {}),
		...(s.dialog
			? {
					dialog: (signal: AbortSignal) =>
						new Promise<"accept" | "reject" | undefined>((resolve) => {
							dialogSignal = signal;
							answerDialog = resolve;
							signal.addEventListener("abort", () => resolve(undefined));
						}),
				}
			: {}),
	};
	let outcome: ApprovalOutcome | undefined;
	void awaitDecision(ports, { piPid: PI, id: ID, timeoutS: s.timeoutS }, abort.signal).then((o) => {
		outcome = o;
	});
	const settle = () => new Promise((r) => setImmediate(r));
	const events: { at: number; act: () => void }[] = [];
	for (const e of s.editor ?? [])
		events.push({
			at: e.at,
			act: () => {
				if (e.kind === "gone") state = null;
				else if (state) state = { ...state, decisions: [...(state.decisions ?? []), e.decision] };
				for (const l of listeners) l();
			},
		});
	if (s.dialog) {
		const d = s.dialog;
		events.push({ at: d.at, act: () => answerDialog?.(d.answer) });
	}
	if (s.abortAt !== null) events.push({ at: s.abortAt, act: () => abort.abort() });
	events.sort((a, b) => a.at - b.at);
	await settle();
	for (const e of events) {
		for (const t of timers.filter((t) => t.live && t.at <= e.at)) {
			now = t.at;
			t.live = false;
			t.fn();
		}
		await settle();
		if (outcome) break;
		now = e.at;
		e.act();
		await settle();
		if (outcome) break;
	}
	for (const t of timers.filter((t) => t.live)) {
		if (outcome) break;
		now = t.at;
		t.live = false;
		t.fn();
		await settle();
	}
	assert.ok(outcome, "the wait always ends");
	return { outcome, dialogDismissed: dialogSignal?.aborted ?? false };
}

/** The rule, written plainly: the first event that decides, in time order. */
function oracle(s: Scenario): ApprovalOutcome {
	const candidates: { at: number; outcome: ApprovalOutcome | null }[] = [
		{ at: s.timeoutS * 1000, outcome: { kind: "timeout", seconds: s.timeoutS } },
	];
	if (s.abortAt !== null) candidates.push({ at: s.abortAt, outcome: { kind: "aborted" } });
	for (const e of s.editor ?? []) {
		if (e.kind === "gone")
			candidates.push({ at: e.at, outcome: s.dialog ? null : { kind: "editor gone", where: "Neovim" } });
		else if (e.decision.pi_pid === PI && e.decision.id === ID)
			candidates.push({
				at: e.at,
				outcome: { kind: e.decision.decision === "accept" ? "accepted" : "rejected", where: "Neovim" },
			});
	}
	if (s.dialog) {
		const a = s.dialog.answer;
		candidates.push({
			at: s.dialog.at,
			outcome:
				a === undefined
					? { kind: "dismissed" }
					: { kind: a === "accept" ? "accepted" : "rejected", where: DIALOG_NAME },
		});
	}
	// Editor events after the editor went away never happen.
	const goneAt = (s.editor ?? []).find((e) => e.kind === "gone")?.at ?? Number.POSITIVE_INFINITY;
	const live = candidates.filter(
		(c) =>
			c.outcome !== null &&
			!(
				c.at > goneAt &&
				c.outcome.kind !== "timeout" &&
				c.outcome.kind !== "aborted" &&
				"where" in c.outcome &&
				c.outcome.where === "Neovim"
			),
	);
	live.sort((a, b) => a.at - b.at);
	const first = live[0]?.outcome;
	assert.ok(first);
	return first;
}

describe("awaitDecision", () => {
	const mine = (decision: "accept" | "reject"): ApprovalDecision => ({ pi_pid: PI, id: ID, decision });
	const cases: { name: string; s: Scenario; want: ApprovalOutcome }[] = [
		{
			name: "the editor accepts first; the dialog is dismissed",
			s: {
				timeoutS: 10,
				editor: [{ at: 100, kind: "decide", decision: mine("accept") }],
				dialog: { at: 500, answer: "reject" },
				abortAt: null,
			},
			want: { kind: "accepted", where: "Neovim" },
		},
		{
			name: "the dialog rejects first",
			s: {
				timeoutS: 10,
				editor: [{ at: 900, kind: "decide", decision: mine("accept") }],
				dialog: { at: 500, answer: "reject" },
				abortAt: null,
			},
			want: { kind: "rejected", where: DIALOG_NAME },
		},
		{
			name: "nobody answers: the timeout",
			s: { timeoutS: 2, editor: [], dialog: null, abortAt: null },
			want: { kind: "timeout", seconds: 2 },
		},
		{
			name: "another pi's decision and an old id are not ours",
			s: {
				timeoutS: 2,
				editor: [
					{ at: 100, kind: "decide", decision: { pi_pid: 7, id: ID, decision: "reject" } },
					{ at: 200, kind: "decide", decision: { pi_pid: PI, id: "a-0", decision: "reject" } },
				],
				dialog: null,
				abortAt: null,
			},
			want: { kind: "timeout", seconds: 2 },
		},
		{
			name: "pi's abort",
			s: { timeoutS: 10, editor: [], dialog: { at: 5000, answer: "accept" }, abortAt: 300 },
			want: { kind: "aborted" },
		},
		{
			name: "the dialog closed without an answer is not a rejection",
			s: { timeoutS: 10, editor: null, dialog: { at: 300, answer: undefined }, abortAt: null },
			want: { kind: "dismissed" },
		},
		{
			name: "the editor went away, no dialog",
			s: { timeoutS: 10, editor: [{ at: 300, kind: "gone" }], dialog: null, abortAt: null },
			want: { kind: "editor gone", where: "Neovim" },
		},
		{
			name: "the editor went away, the dialog still answers",
			s: { timeoutS: 10, editor: [{ at: 300, kind: "gone" }], dialog: { at: 800, answer: "accept" }, abortAt: null },
			want: { kind: "accepted", where: DIALOG_NAME },
		},
	];
	for (const c of cases)
		test(c.name, async () => {
			const { outcome, dialogDismissed } = await run(c.s);
			assert.deepEqual(outcome, c.want);
			assert.deepEqual(oracle(c.s), c.want, "the oracle agrees with the table");
			if (c.s.dialog && !(outcome.kind === "dismissed" || ("where" in outcome && outcome.where === DIALOG_NAME)))
				assert.ok(dialogDismissed, "the dialog is dismissed once something else decided");
		});

	test("an aborted signal before the wait: aborted at once", async () => {
		const abort = new AbortController();
		abort.abort();
		const outcome = await awaitDecision({ setTimer: () => () => {} }, { piPid: PI, id: ID, timeoutS: 1 }, abort.signal);
		assert.deepEqual(outcome, { kind: "aborted" });
	});

	test("seeded: any mix of editor, dialog, abort and timeout ends as the oracle says", async () => {
		const seed = Number(process.env["APPROVAL_SEED"] ?? 20261202);
		for (let round = 0; round < 300; round++) {
			const int = seededInts(seed + round);
			const times = new Set<number>();
			const at = () => {
				let t = 0;
				do t = 1 + int(4000) * 3;
				while (times.has(t) || t % 1000 === 0);
				times.add(t);
				return t;
			};
			const editor: EditorEvent[] | null = int(4) === 0 ? null : [];
			if (editor)
				for (let i = int(4); i > 0; i--) {
					const r = int(5);
					if (r === 0) {
						editor.push({ at: at(), kind: "gone" });
						break;
					}
					const decision: ApprovalDecision = {
						pi_pid: r === 1 ? 7 : PI,
						id: r === 2 ? "a-0" : ID,
						decision: int(2) === 0 ? "accept" : "reject",
					};
					editor.push({ at: at(), kind: "decide", decision });
				}
			const answers = ["accept", "reject", undefined] as const;
			const dialog: DialogEvent | null = int(3) === 0 ? null : { at: at(), answer: answers[int(3)] };
			const s: Scenario = { timeoutS: 1 + int(12), editor, dialog, abortAt: int(4) === 0 ? at() : null };
			const { outcome } = await run(s);
			assert.deepEqual(outcome, oracle(s), `seed ${seed + round}: ${JSON.stringify(s)}`);
		}
	});
});
