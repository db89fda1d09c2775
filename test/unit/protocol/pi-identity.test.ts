/**
 * pi's identity across pid namespaces (issue 23 items 3-5, PROTOCOL.md "pi's identity is (pid, pid_ns)"): the one
 * parser and writer of pi's file names (src/protocol/wire.ts), the agreement of a name and its `pid_ns`, and the
 * rule by which pi takes an editor's entry (a report, a revert, a decision) as its own, in tables; pi's files written
 * under its identity's name.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { addRevert, type Mark, ReviewBook } from "../../../editors/shared/review.ts";
import { decisionIn } from "../../../src/link/approval.ts";
import { EditorLink } from "../../../src/link/editor-link.ts";
import { findReport } from "../../../src/link/pi-message.ts";
import { newReverts } from "../../../src/link/reverts.ts";
import { INITIAL_PID_NAMESPACE } from "../../../src/protocol/liveness.ts";
import type { EditorState, FileReport } from "../../../src/protocol/protocol.ts";
import { parseEditorState } from "../../../src/protocol/protocol.ts";
import {
	isPisEntry,
	type PiFileKind,
	parsePiFileName,
	piFileName,
	piIdentityKey,
	piNamespaceAgrees,
	type ReviewRun,
	revertKey,
} from "../../../src/protocol/wire.ts";
import { REVERT_KEY_CASES, REVERT_KEY_NS_CASES } from "../../fixtures/revert-key.ts";
import { PI_FILE_NAME_CASES } from "../../fixtures/state-dir-cases.ts";
import { makeState } from "../../helpers/state-files.ts";

const HOST = INITIAL_PID_NAMESPACE;
const BOX = "pid:[4026532455]";
const OTHER_BOX = "pid:[4026532999]";

const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe("parsePiFileName: the one parser of pi's file names (PI_FILE_NAME_CASES)", () => {
	for (const c of PI_FILE_NAME_CASES) {
		test(`${c.name}: ${c.expect ? `${c.expect.kind} of pi ${c.expect.pid} ns ${c.expect.ns ?? "initial"}` : "not a pi file"}`, () =>
			assert.deepEqual(parsePiFileName(c.name), c.expect));
	}
});

describe("piFileName: pi's name for its files, and back", () => {
	const rows: { ns: string | null | undefined; suffix: string }[] = [
		{ ns: undefined, suffix: "" },
		{ ns: null, suffix: "" },
		{ ns: HOST, suffix: "" },
		{ ns: BOX, suffix: "-4026532455" },
		{ ns: "pid:[1]", suffix: "-1" },
	];
	const ext: Record<PiFileKind, string> = {
		message: ".json",
		review: ".review.json",
		approval: ".approval.json",
		ask: ".ask.json",
	};
	for (const row of rows) {
		for (const kind of ["message", "review", "approval", "ask"] as const) {
			test(`${kind}, pid_ns ${row.ns}`, () => {
				const name = piFileName(kind, 42, row.ns);
				assert.equal(name, `pi-42${row.suffix}${ext[kind]}`);
				const parsed = parsePiFileName(name);
				assert.deepEqual(parsed, { kind, pid: 42, ns: row.suffix === "" ? null : row.suffix.slice(1) });
				assert.ok(
					parsed && piNamespaceAgrees(parsed, row.ns ?? undefined),
					"the name agrees with the pid_ns pi writes",
				);
			});
		}
	}
});

describe("piNamespaceAgrees: a name and its file's pid_ns", () => {
	const rows: { name: string; pidNs: unknown; agrees: boolean }[] = [
		{ name: "pi-7.json", pidNs: undefined, agrees: true },
		{ name: "pi-7.json", pidNs: HOST, agrees: true },
		{ name: "pi-7.json", pidNs: BOX, agrees: false },
		{ name: "pi-7.json", pidNs: "pid:[x]", agrees: false },
		{ name: "pi-7-4026532455.json", pidNs: BOX, agrees: true },
		{ name: "pi-7-4026532455.review.json", pidNs: BOX, agrees: true },
		{ name: "pi-7-4026532455.json", pidNs: OTHER_BOX, agrees: false },
		{ name: "pi-7-4026532455.json", pidNs: undefined, agrees: false },
		{ name: "pi-7-4026532455.json", pidNs: HOST, agrees: false },
		{ name: "pi-7-4026532455.json", pidNs: "pid:[04026532455]", agrees: false },
		{ name: "pi-7-4026532455.json", pidNs: 4026532455, agrees: false },
	];
	for (const row of rows) {
		test(`${row.name} with pid_ns ${JSON.stringify(row.pidNs)}: ${row.agrees}`, () => {
			const parsed = parsePiFileName(row.name);
			assert.ok(parsed);
			assert.equal(piNamespaceAgrees(parsed, row.pidNs), row.agrees);
		});
	}
});

describe("isPisEntry: pi takes an entry as its own by pi_pid and pi_ns (absent: an older editor)", () => {
	const rows: { name: string; entry: { pi_pid?: number; pi_ns?: string }; ownNs: string | null; own: boolean }[] = [
		{ name: "host pi, an old editor's entry", entry: { pi_pid: 7 }, ownNs: HOST, own: true },
		{ name: "host pi, its namespace echoed", entry: { pi_pid: 7, pi_ns: HOST }, ownNs: HOST, own: true },
		{ name: "host pi, a sandboxed pi's of the same pid", entry: { pi_pid: 7, pi_ns: BOX }, ownNs: HOST, own: false },
		{ name: "sandboxed pi, its namespace echoed", entry: { pi_pid: 7, pi_ns: BOX }, ownNs: BOX, own: true },
		{ name: "sandboxed pi, another sandbox's pid 7", entry: { pi_pid: 7, pi_ns: OTHER_BOX }, ownNs: BOX, own: false },
		{ name: "sandboxed pi, the host pi 7's", entry: { pi_pid: 7, pi_ns: HOST }, ownNs: BOX, own: false },
		{ name: "sandboxed pi, no pi_ns (an older editor)", entry: { pi_pid: 7 }, ownNs: BOX, own: true },
		{ name: "pi not knowing its own, no pi_ns", entry: { pi_pid: 7 }, ownNs: null, own: true },
		{ name: "pi not knowing its own, a pi_ns", entry: { pi_pid: 7, pi_ns: HOST }, ownNs: null, own: false },
		{ name: "another pid", entry: { pi_pid: 8, pi_ns: BOX }, ownNs: BOX, own: false },
		{ name: "no pi_pid", entry: {}, ownNs: BOX, own: false },
	];
	for (const row of rows)
		test(`${row.name}: ${row.own}`, () => assert.equal(isPisEntry(row.entry, 7, row.ownNs), row.own));
});

describe("the readers of pi's link take only their own pi's entries", () => {
	const report = (seq: number, ns?: string): FileReport => ({
		file: "/w/a.ts",
		seq,
		status: "reloaded",
		version: seq,
		modified: false,
		diagnostics_expected: false,
		diagnostics: null,
		pi_pid: 1,
		...(ns ? { pi_ns: ns } : {}),
	});
	test("findReport: pid 1 of another namespace answers a later seq; pi's own is found", () => {
		const state = { files: [report(3, BOX), report(9, OTHER_BOX)] } as unknown as EditorState;
		assert.equal(findReport(state, "/w/a.ts", 3, 1, BOX)?.seq, 3);
		assert.equal(findReport(state, "/w/a.ts", 4, 1, BOX), undefined, "not the other sandbox's seq 9");
		assert.equal(findReport(state, "/w/a.ts", 3, 1, HOST), undefined, "the host pi 1 takes neither");
	});
	test("decisionIn: a decision for pid 1 of another namespace is not this pi's", () => {
		const state = {
			decisions: [
				{ pi_pid: 1, pi_ns: OTHER_BOX, id: "r", decision: "accept" },
				{ pi_pid: 1, pi_ns: BOX, id: "r", decision: "reject" },
			],
		} as unknown as EditorState;
		assert.equal(decisionIn(state, 1, "r", BOX), "reject");
		assert.equal(decisionIn(state, 1, "r", OTHER_BOX), "accept");
		assert.equal(decisionIn(state, 1, "r", HOST), undefined);
	});
	test("newReverts: only the reverts naming this pi's namespace (or none)", () => {
		const hunk = { id: "h1", old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, old_text: ["a"], new_text: ["b"] };
		const runs: ReviewRun[] = [
			{ run: 4, files: [{ file: "/w/a.ts", baseline: "a\n", note: null, hunks_total: 1, hunks: [hunk] }] },
		];
		const entry = { run: 4, id: "h1", file: "/w/a.ts", line: 1, lines: 1, pi_pid: 1 };
		const state = { reverted: [{ ...entry, pi_ns: OTHER_BOX }] } as unknown as EditorState;
		assert.deepEqual(
			newReverts(state, 1, runs, new Set(), () => false, BOX),
			[],
		);
		const mine = { reverted: [{ ...entry, pi_ns: BOX }] } as unknown as EditorState;
		assert.deepEqual(
			newReverts(mine, 1, runs, new Set(), () => false, BOX).map((r) => r.pi_ns),
			[BOX],
		);
	});
	test("the validator keeps pi_ns in files, reverted and decisions, and drops an entry whose pi_ns is malformed", () => {
		const base = makeState({ pid: 9, cwd: "/w" });
		const parsed = parseEditorState(
			JSON.stringify({
				...base,
				files: [report(1, BOX), report(2, "pid:[no]")],
				reverted: [{ pi_pid: 1, pi_ns: BOX, run: 4, id: "h1", file: "/w/a.ts", line: 1, lines: 1 }],
				decisions: [{ pi_pid: 1, pi_ns: BOX, id: "r", decision: "accept" }],
			}),
		);
		assert.ok(parsed.ok, JSON.stringify(parsed));
		assert.deepEqual(
			parsed.state.files?.map((f) => f.pi_ns),
			[BOX],
		);
		assert.equal(parsed.state.reverted?.[0]?.pi_ns, BOX);
		assert.equal(parsed.state.decisions?.[0]?.pi_ns, BOX);
	});
});

describe("revertKey and piIdentityKey: keyed by the pair, pi_ns left out read as the initial namespace", () => {
	for (const c of [...REVERT_KEY_CASES, ...REVERT_KEY_NS_CASES]) {
		test(c.name, () => assert.equal(revertKey(c.first) === revertKey(c.second), c.same));
	}
	test("piIdentityKey", () => {
		assert.equal(piIdentityKey(1, undefined), piIdentityKey(1, HOST));
		assert.notEqual(piIdentityKey(1, BOX), piIdentityKey(1, OTHER_BOX));
		assert.notEqual(piIdentityKey(1, BOX), piIdentityKey(1, null));
	});
});

describe("pi writes its files under its identity's name", () => {
	for (const row of [
		{ ns: HOST, name: "pi-4242.json" },
		{ ns: null, name: "pi-4242.json" },
		{ ns: BOX, name: "pi-4242-4026532455.json" },
	]) {
		test(`pid_ns ${row.ns}: ${row.name}`, () => {
			const root = mkdtempSync(join(tmpdir(), "pi-ide-identity-"));
			roots.push(root);
			const dir = join(root, "pi-ide");
			mkdirSync(dir);
			chmodSync(dir, 0o700);
			const link = new EditorLink({
				stateDir: dir,
				uid: process.getuid?.() ?? 0,
				pid: 4242,
				cwd: "/w",
				home: "/home/u",
				connected: () => ({
					path: join(dir, "9.json"),
					pid: 9,
					state: makeState({ pid: 9, cwd: "/w" }),
					writtenAt: 1,
					ino: 0,
				}),
				pidNamespace: row.ns,
			});
			link.sync();
			assert.deepEqual(readdirSync(dir), [row.name]);
			void link.close();
		});
	}
});

describe("the TypeScript clients' change sets (editors/shared/review.ts ReviewBook) by the pair", () => {
	const runOf = (file: string, run: number): ReviewRun[] => [
		{
			run,
			files: [
				{
					file,
					baseline: "a\n",
					note: null,
					hunks_total: 1,
					hunks: [
						{ id: "h1", old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, old_text: ["a"], new_text: ["b"] },
					],
				},
			],
		},
	];
	test("pid 1 of two namespaces: two change sets; each found with its namespace, forgotten alone", () => {
		const book = new ReviewBook();
		book.setRuns(1, runOf("/w/a.ts", 3), BOX);
		book.setRuns(1, runOf("/w/b.ts", 5), OTHER_BOX);
		assert.equal(book.entryFor("/w/a.ts")?.piNs, BOX);
		assert.equal(book.entryFor("/w/b.ts")?.piNs, OTHER_BOX);
		assert.equal(book.forget(1, BOX), true);
		assert.equal(book.entryFor("/w/a.ts"), undefined);
		assert.equal(book.entryFor("/w/b.ts")?.pid, 1, "the other sandbox's pi 1 keeps its change set");
	});
	test("a revert of a sandboxed pi's hunk is listed with its pi_ns", () => {
		const mark: Mark = {
			pid: 1,
			piNs: BOX,
			run: 3,
			file: "/w/a.ts",
			hunk: { id: "h1", old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, old_text: ["a"], new_text: ["b"] },
			line: 0,
			reverted: true,
		};
		assert.deepEqual(addRevert([], mark), [
			{ pi_pid: 1, pi_ns: BOX, run: 3, id: "h1", file: "/w/a.ts", line: 1, lines: 1 },
		]);
	});
});
