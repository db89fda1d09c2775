/**
 * Protocol v0.5, pi's identity across pid namespaces (PROTOCOL.md "pi's identity is (pid, pid_ns)", "pi's message
 * file" and "What an editor may and may not do with it"): a pi in a sandbox or container names its files
 * `pi-<pid>-<ns digits>.json` with a `pid_ns` to match; an editor checks pi's pid with kill(pid, 0) only when pi's
 * namespace is its own, so a sandboxed pi (whose pid is dead, or another process, here) is acted on without that
 * check; reports, reverts and decisions echo the file's `pid_ns` as `pi_ns`; and everything an editor keys per pi
 * (the highest seq, reports, answered requests) is keyed by the pair, so two pis with one pid in two namespaces
 * are two pis. The "sandboxed pi" here is a pid dead on this host under a namespace that is not the editor's: what
 * an editor sees of a real one (test/e2e/sandbox-writeback.test.ts runs a real pi under `unshare --pid`).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildRequest, encodeApprovalMessage } from "../../../src/link/approval.ts";
import { ChangeSet, encodeReviewMessage } from "../../../src/link/change-set.ts";
import { INITIAL_PID_NAMESPACE } from "../../../src/protocol/liveness.ts";
import type { ApprovalDecision, FileReport, PiMessage } from "../../../src/protocol/protocol.ts";
import { readOwnPidNamespace } from "../../../src/protocol/state-dir.ts";
import type { ApprovalMessage, RevertedHunk } from "../../../src/protocol/wire.ts";
import { makePiMessage } from "../../fixtures/pi-message.ts";
import { deadPid, spawnLiveEditor, writeRawStateFile } from "../../helpers/editors.ts";
import { pollUntil } from "../../helpers/poll.ts";
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

const ORIGINAL = "one\ntwo\nthree\n";
const PIS_VERSION = "pi's\nnew\nversion\n";

/** The editor's namespace is the kit's (it runs on the kit's host); a client that cannot read it counts the initial. */
const OWN_NS = readOwnPidNamespace() ?? INITIAL_PID_NAMESPACE;

/** Two namespaces that are neither the editor's nor the initial one: two sandboxes. */
const [SANDBOX_A, SANDBOX_B] = ["4026532455", "4026532999", "4026533111"]
	.map((digits) => `pid:[${digits}]`)
	.filter((ns) => ns !== OWN_NS && ns !== INITIAL_PID_NAMESPACE) as [string, string];

const digitsOf = (ns: string): string => ns.slice("pid:[".length, -1);

/** pi's message file name for the pi (pid, ns): PROTOCOL.md's rule, spelled out here as a client reads it. */
const messageName = (pid: number, ns: string | undefined): string =>
	ns === undefined || ns === INITIAL_PID_NAMESPACE ? `pi-${pid}.json` : `pi-${pid}-${digitsOf(ns)}.json`;

interface Pi {
	pid: number;
	/** The `pid_ns` its files carry, or none (an older pi, or one that cannot read its own). */
	ns: string | undefined;
}

/** pi's message naming `files` (each changed at its own seq from `firstSeq`), from `pi` to `editor`. */
function messageFor(editor: Editor, pi: Pi, files: string[], firstSeq = 1): PiMessage {
	return makePiMessage({
		pid: pi.pid,
		cwd: editor.project,
		timestamp: nowSeconds(),
		editor_pid: editor.session.pid,
		seq: files.length === 0 ? firstSeq - 1 : firstSeq + files.length - 1,
		changed: files.map((file, i) => ({ file, seq: firstSeq + i, tool: "write" })),
		last_turn: files,
		...(pi.ns === undefined ? {} : { pid_ns: pi.ns }),
	});
}

/** Write `message` as pi does, under its identity's name (or `name`). */
function send(editor: Editor, pi: Pi, message: unknown, name = messageName(pi.pid, pi.ns)): void {
	writeRawStateFile(editor.stateDir, name, JSON.stringify(message));
}

const sameNs = (report: { pi_ns?: string }, ns: string | undefined) => report.pi_ns === ns;

/** The reports on `file` that answer `pi` (its pid and, exactly, its `pid_ns` or none). */
const reportsOf = (files: FileReport[] | undefined, file: string, pi: Pi): FileReport[] =>
	(files ?? []).filter((r) => r.file === file && r.pi_pid === pi.pid && sameNs(r, pi.ns));

/** pi's first message (seq 0, no changes), handled: a client may take the changes of a pi's first message as history. */
async function connect(editor: Editor, pi: Pi): Promise<void> {
	send(editor, pi, messageFor(editor, pi, [], 1));
	await editor.until((s) => s.pi?.pid === pi.pid && s.pi.seq === 0, "pi's first message is handled");
}

let fileCount = 0;
const unique = (stem: string) => `${stem}-id-${++fileCount}.txt`;

async function openFile(editor: Editor, name: string): Promise<string> {
	const file = editor.file(name, ORIGINAL);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	return file;
}

/** pi (dead here, or live) changes `file` (open, unmodified) at seq `seq` and the editor must reload and report. */
async function changeAndReport(editor: Editor, pi: Pi, file: string, seq = 1): Promise<FileReport> {
	writeFileSync(file, `${PIS_VERSION}${pi.pid} ${pi.ns ?? "none"} ${seq}\n`);
	send(editor, pi, messageFor(editor, pi, [file], seq));
	// pi's text always differs from the buffer's.
	const settled = (r: FileReport) => r.seq === seq && settledOnChange(r);
	const state = await editor.until(
		(s) => reportsOf(s.files, file, pi).some(settled),
		`the report on ${file} for pi ${pi.pid} ${pi.ns ?? "(no pid_ns)"} at seq ${seq}`,
		// Three writes' time: the JetBrains driver, a JVM started for the row, once took more than one under the
		// whole suite's load (as for a bad message's notice in the v0.3 cases); that the report comes is the rule.
		3 * WRITE_WAIT_MS,
	);
	const report = reportsOf(state.files, file, pi).find(settled);
	assert.ok(report);
	return report;
}

/** A message an editor must not act on: no report on the file it names, at most or exactly one notice. */
interface Refused {
	name: string;
	notice: "one" | "at most one";
	/** The (dead here) pid and what is written: the pi's identity, the message's `pid_ns`, the file's name. */
	write: (editor: Editor, pid: number, victim: string) => void;
}

const REFUSED: Refused[] = [
	{
		name: "named for one namespace, its pid_ns another's",
		notice: "one",
		write: (e, pid, victim) =>
			send(e, { pid, ns: SANDBOX_B }, messageFor(e, { pid, ns: SANDBOX_B }, [victim]), messageName(pid, SANDBOX_A)),
	},
	{
		name: "named for a namespace, without pid_ns",
		notice: "one",
		write: (e, pid, victim) =>
			send(e, { pid, ns: undefined }, messageFor(e, { pid, ns: undefined }, [victim]), messageName(pid, SANDBOX_A)),
	},
	{
		name: "named pi-<pid>.json, its pid_ns another namespace's",
		notice: "one",
		write: (e, pid, victim) =>
			send(e, { pid, ns: SANDBOX_A }, messageFor(e, { pid, ns: SANDBOX_A }, [victim]), `pi-${pid}.json`),
	},
	{
		name: "named for the initial namespace's number (pi-<pid>-4026531836.json: not a pi file name)",
		notice: "at most one",
		write: (e, pid, victim) =>
			send(
				e,
				{ pid, ns: INITIAL_PID_NAMESPACE },
				messageFor(e, { pid, ns: INITIAL_PID_NAMESPACE }, [victim]),
				`pi-${pid}-${digitsOf(INITIAL_PID_NAMESPACE)}.json`,
			),
	},
	{
		name: "named with a non-canonical namespace (a leading zero)",
		notice: "at most one",
		write: (e, pid, victim) =>
			send(
				e,
				{ pid, ns: SANDBOX_A },
				messageFor(e, { pid, ns: SANDBOX_A }, [victim]),
				`pi-${pid}-0${digitsOf(SANDBOX_A)}.json`,
			),
	},
	{
		// The editor's own namespace: kill(pid, 0) decides, and this pid is dead.
		name: "from a dead pi of the editor's own namespace, pid_ns spelled out",
		notice: "at most one",
		write: (e, pid, victim) => {
			const pi = { pid, ns: OWN_NS };
			send(e, pi, messageFor(e, pi, [victim]));
		},
	},
];

export const cases: KitCase[] = [
	{
		name: "pi identity: a sandboxed pi's message is acted on without a liveness check",
		needs: ["reload", "pi-identity"],
		run: async (kit) => {
			const editor = await kit.shared();
			const file = await openFile(editor, unique("sandboxed"));
			// A pid dead on this host, in a namespace that is not the editor's: kill(pid, 0) says ESRCH, which
			// proves nothing about a process in another namespace.
			const pi: Pi = { pid: await deadPid(), ns: SANDBOX_A };
			await connect(editor, pi);
			const report = await changeAndReport(editor, pi, file);
			assert.equal(report.status, "reloaded");
			assert.deepEqual(await editor.session.buffer(file), {
				text: `${PIS_VERSION}${pi.pid} ${pi.ns} 1\n`,
				modified: false,
			});
		},
	},
	{
		name: "pi identity: reports echo pi_ns exactly as pi's file said, and leave it out when it said none",
		needs: ["reload", "pi-identity"],
		run: async (kit) => {
			const editor = await kit.shared();
			const live = await spawnLiveEditor();
			try {
				const rows: { what: string; pi: Pi }[] = [
					{ what: "a sandboxed pi", pi: { pid: await deadPid(), ns: SANDBOX_B } },
					{ what: "a host pi that names its namespace", pi: { pid: live.pid, ns: OWN_NS } },
				];
				const plain = await spawnLiveEditor();
				try {
					rows.push({
						what: "a pi without pid_ns (older, or not knowing its own)",
						pi: { pid: plain.pid, ns: undefined },
					});
					for (const { what, pi } of rows) {
						const file = await openFile(editor, unique("echo"));
						await connect(editor, pi);
						const report = await changeAndReport(editor, pi, file);
						assert.equal(report.status, "reloaded", what);
						if (pi.ns === undefined) assert.ok(!("pi_ns" in report), `${what}: no pi_ns in ${JSON.stringify(report)}`);
						else assert.equal(report.pi_ns, pi.ns, `${what}: pi_ns as its file said`);
					}
				} finally {
					await plain.kill();
				}
			} finally {
				await live.kill();
			}
		},
	},
	{
		name: "pi identity: two pis with the same pid in different namespaces keep separate seqs and reports",
		needs: ["reload", "pi-identity"],
		run: async (kit) => {
			const editor = await kit.shared();
			const pid = await deadPid();
			const a: Pi = { pid, ns: SANDBOX_A };
			const b: Pi = { pid, ns: SANDBOX_B };
			const shared = await openFile(editor, unique("both"));
			const other = await openFile(editor, unique("a-only"));
			await connect(editor, a);
			await changeAndReport(editor, a, shared, 1);
			await changeAndReport(editor, a, other, 2);
			// b's seq 1 is new for b, whatever a's highest seq is: the seqs are per pi, and the pi is the pair.
			await connect(editor, b);
			const fromB = await changeAndReport(editor, b, shared, 1);
			assert.equal(fromB.status, "reloaded");
			const state = editor.readState();
			assert.ok(state);
			const onShared = (state.files ?? []).filter((r) => r.file === shared && r.pi_pid === pid);
			assert.deepEqual(
				onShared.map((r) => [r.pi_ns, r.seq]).sort(),
				[
					[SANDBOX_A, 1],
					[SANDBOX_B, 1],
				].sort(),
				"one report per pi on the file: b's did not replace a's",
			);
		},
	},
	{
		name: "pi identity: a sandboxed pi's approval request is answered, the decision naming it by pi_pid and pi_ns",
		ownEditors: true,
		needs: ["approval", "pi-identity"],
		run: async (kit) => {
			const name = unique("approve");
			const editor = await kit.start({ file: { name, text: ORIGINAL } });
			const file = join(editor.project, name);
			await editor.until((s) => Array.isArray((s as { decisions?: unknown }).decisions), "`decisions` written");
			const pi: Pi = { pid: await deadPid(), ns: SANDBOX_A };
			const before = (await (editor.session.approvalNotices?.() ?? editor.notices())).length;
			const now = nowSeconds();
			const message: ApprovalMessage = {
				protocol: "0.4",
				kind: "pi-approval",
				pid: pi.pid,
				pid_ns: SANDBOX_A,
				editor_pid: editor.session.pid,
				timestamp: now,
				request: buildRequest({
					id: "kit-sandboxed",
					tool: "edit",
					file,
					before: { kind: "text", text: ORIGINAL },
					after: `${ORIGINAL}four\n`,
					timeoutS: 120,
					now,
				}),
			};
			writeRawStateFile(
				editor.stateDir,
				`pi-${pi.pid}-${digitsOf(SANDBOX_A)}.approval.json`,
				encodeApprovalMessage(message),
			);
			await pollUntil(
				async () =>
					(await (editor.session.approvalNotices?.() ?? editor.notices())).length > before ? true : undefined,
				"the sandboxed pi's request is announced",
				WRITE_WAIT_MS,
			);
			const approve = editor.session.approve;
			assert.ok(approve, 'capability "approval" without approve()');
			await approve.call(editor.session);
			const state = await editor.until(
				(s) => ((s as { decisions?: ApprovalDecision[] }).decisions ?? []).some((d) => d.id === "kit-sandboxed"),
				"the decision",
			);
			const decisions = (state as { decisions?: ApprovalDecision[] }).decisions ?? [];
			assert.deepEqual(
				decisions.filter((d) => d.id === "kit-sandboxed"),
				[{ pi_pid: pi.pid, pi_ns: SANDBOX_A, id: "kit-sandboxed", decision: "accept" }],
			);
		},
	},
	{
		name: "pi identity: a sandboxed pi's change set is marked, and its revert is listed with pi_ns (the key is the pair)",
		needs: ["review", "pi-identity"],
		run: async (kit) => {
			const editor = await kit.shared();
			const baseline = "a\nb\nc\nd\ne\nf\n";
			const pis = "a\nB\nc\nD\ne\nf\nG\n";
			const file = editor.file(unique("review"), baseline);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "the file open");
			const pi: Pi = { pid: await deadPid(), ns: SANDBOX_A };
			await connect(editor, pi);
			const set = new ChangeSet();
			set.startRun();
			set.before(file, { kind: "text", text: baseline }, 1);
			set.after(file, { kind: "text", text: pis });
			const runs = set.runs();
			writeFileSync(file, pis);
			const review = encodeReviewMessage({
				protocol: "0.4",
				kind: "pi-review",
				pid: pi.pid,
				pid_ns: SANDBOX_A,
				editor_pid: editor.session.pid,
				timestamp: nowSeconds(),
				runs,
			});
			writeRawStateFile(editor.stateDir, `pi-${pi.pid}-${digitsOf(SANDBOX_A)}.review.json`, review.toString());
			send(editor, pi, messageFor(editor, pi, [file], 1));
			const { reviewMarks, revertHunk } = editor.session;
			assert.ok(reviewMarks && revertHunk, 'capability "review" without its methods');
			let last: number[] = [];
			await pollUntil(
				async () => {
					last = await reviewMarks.call(editor.session, file);
					return JSON.stringify(last) === "[2,4,7]" ? true : undefined;
				},
				() => `the sandboxed pi's hunks marked: ${JSON.stringify(last)}`,
				WRITE_WAIT_MS,
			);
			await revertHunk.call(editor.session, file, 4);
			const reverted = (s: unknown) =>
				((s as { reverted?: RevertedHunk[] }).reverted ?? []).filter((r) => r.file === file && r.pi_pid === pi.pid);
			const state = await editor.until((s) => reverted(s).length === 1, "the revert is listed");
			assert.deepEqual(reverted(state), [
				{
					pi_pid: pi.pid,
					pi_ns: SANDBOX_A,
					run: runs[0]?.run,
					id: runs[0]?.files[0]?.hunks[1]?.id,
					file,
					line: 4,
					lines: 1,
				},
			]);
		},
	},
	...REFUSED.map(
		(refused): KitCase => ({
			name: `pi identity: a message ${refused.name} is ignored (${refused.notice} notice), and the next good one handled`,
			needs: ["reload", "pi-identity", "editor-per-row"],
			run: async (kit) => {
				const editor = await kit.start();
				const victim = await openFile(editor, unique("victim"));
				const control = await openFile(editor, unique("control"));
				const pid = await deadPid();
				writeFileSync(victim, PIS_VERSION);
				const noticesBefore = (await editor.notices()).length;
				refused.write(editor, pid, victim);
				if (refused.notice === "one") {
					await pollUntil(
						async () => ((await editor.notices()).length > noticesBefore ? true : undefined),
						"one notice about the bad message",
						3 * WRITE_WAIT_MS,
					);
				} else {
					await quietPeriod(QUIET_MS);
				}
				// A good sandboxed pi after it is still handled.
				const good: Pi = { pid: await deadPid(), ns: SANDBOX_B };
				await connect(editor, good);
				await changeAndReport(editor, good, control);
				const state = editor.readState();
				assert.ok(state);
				assert.ok(!state.files?.some((f) => f.file === victim), "no report on the file the bad message named");
				if (!kit.adapter.hostReloads) {
					assert.deepEqual(await editor.session.buffer(victim), { text: ORIGINAL, modified: false }, "not reloaded");
				}
				const told = (await editor.notices()).slice(noticesBefore);
				assert.ok(told.length <= 1, `at most one notice: ${JSON.stringify(told)}`);
				if (refused.notice === "one") assert.equal(told.length, 1, "one notice");
			},
		}),
	),
];
