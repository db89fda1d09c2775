/**
 * pi's identity across pid namespaces (PROTOCOL.md v0.5) in the Emacs client, in a real Emacs daemon with a tty
 * frame in tmux: the state file says Emacs's own `pid_ns`; pi's files are read under `pi-<pid>.json` and
 * `pi-<pid>-<ns digits>.json` with `pid_ns` agreeing with the name (test/fixtures/pi-identity-cases.ts); a pi of
 * another namespace is acted upon without a liveness check (its pid is dead on the host); reports, decisions and
 * reverts echo `pi_ns` as pi's file said; two pis with the same pid in two namespaces are two pis. (The Vim twin:
 * test/vim/pi-identity.test.ts.)
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readlinkSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import { IDENTITY_CASES, INITIAL_NS, NS_A, NS_B } from "../fixtures/pi-identity-cases.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { PI_FILE_NAME_CASES } from "../fixtures/state-dir-cases.ts";
import { deadPid, killAllEditors, spawnLiveEditor } from "../helpers/editors.ts";
import { EMACS_BIN, EMACS_CLIENT_DIR, type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { pollUntil } from "../helpers/poll.ts";

after(killAllEditors);

interface Report {
	file: string;
	seq: number;
	status: string;
	pi_pid: number;
	pi_ns?: string;
}
const files = (s: unknown) => ((s as { files?: Report[] } | null)?.files ?? []) as Report[];

/** Write one of pi's files atomically, as pi does (temp file, rename), mode 0600. */
function place(e: Emacs, name: string, text: string): void {
	mkdirSync(e.stateDir, { recursive: true, mode: 0o700 });
	const tmp = join(e.stateDir, `${name}.tmp`);
	writeFileSync(tmp, text, { mode: 0o600 });
	renameSync(tmp, join(e.stateDir, name));
}

function message(e: Emacs, file: string, pid: number, pidNs: string | undefined, seq: number): string {
	return JSON.stringify({
		protocol: "0.3",
		kind: "pi",
		pid,
		...(pidNs === undefined ? {} : { pid_ns: pidNs }),
		cwd: e.dir,
		timestamp: Date.now() / 1000,
		editor_pid: e.pid,
		seq,
		changed: [{ file, seq, tool: "write" }],
		last_turn: [file],
	});
}

async function openFile(e: Emacs, file: string, text: string): Promise<void> {
	writeFileSync(file, text);
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), `${file} open`);
}

/** Wait until `form` evaluates to `want` in the daemon. */
const evalsTo = (e: Emacs, form: string, want: string, what: string) =>
	pollUntil(async () => ((await e.eval(form)) === want ? true : undefined), what);

const bufferText = (e: Emacs, file: string) =>
	e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`);

describe("emacs: pi's identity across pid namespaces (v0.5)", () => {
	it("pi's file names: the shared table (PI_FILE_NAME_CASES), with case-fold-search on", () => {
		const names = PI_FILE_NAME_CASES.map((c) => elispString(c.name)).join(" ");
		const form = `(let ((case-fold-search t)) (princ (mapconcat (lambda (n) (let ((k (pi-ide-state-pi-key-of-name n))) (if k (format "%s" k) ""))) (list ${names}) "\n")))`;
		const out = execFileSync(
			EMACS_BIN,
			["--batch", "-Q", "-L", EMACS_CLIENT_DIR, "-l", "pi-ide-protocol", "--eval", form],
			{
				encoding: "utf8",
			},
		).split("\n");
		PI_FILE_NAME_CASES.forEach((c, i) => {
			const want =
				c.expect === undefined ? "" : c.expect.ns === null ? `${c.expect.pid}` : `${c.expect.pid}-${c.expect.ns}`;
			assert.equal(out[i], want, c.name);
		});
	});

	it("the state file says Emacs's own pid namespace, as readlink /proc/self/ns/pid does", async (t) => {
		const e = await startEmacs(t);
		const s = await e.until((s) => s ?? undefined, "a state file");
		assert.equal((s as { pid_ns?: string }).pid_ns, readlinkSync("/proc/self/ns/pid"));
	});

	it("which of pi's file names and pid_ns are acted upon; pi_ns echoed as pi's file said", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file, "start\n");
		const pids = { dead: await deadPid(), live: (await spawnLiveEditor()).pid };
		const control = (await spawnLiveEditor()).pid;
		let seq = 100;
		for (const [i, c] of IDENTITY_CASES.entries()) {
			seq += 1;
			const mine = seq;
			writeFileSync(file, `case ${i}\n`);
			place(e, `pi-${c.stem(pids)}.json`, message(e, file, c.pid(pids), c.pidNs, mine));
			if (c.acted) {
				const report = await e.until(
					(s) => files(s).find((f) => f.seq === mine && f.status === "reloaded"),
					`acted upon: ${c.name}`,
				);
				assert.equal(report.pi_pid, c.pid(pids), c.name);
				assert.equal(report.pi_ns, c.pidNs, `pi_ns as pi's file said (left out when it said none): ${c.name}`);
				assert.equal("pi_ns" in report, c.pidNs !== undefined, c.name);
				assert.equal(await bufferText(e, file), `case ${i}\n`, c.name);
			} else {
				seq += 1;
				const controlSeq = seq;
				writeFileSync(file, `control ${i}\n`);
				place(e, `pi-${control}.json`, message(e, file, control, undefined, controlSeq));
				const s = await e.until(
					(s) => (files(s).some((f) => f.seq === controlSeq && f.status === "reloaded") ? s : undefined),
					`the control after: ${c.name}`,
				);
				assert.ok(!files(s).some((f) => f.seq === mine), `not acted upon: ${c.name}`);
			}
		}
	});

	it("two pis with the same pid in two namespaces are two pis: their own seq, their own report", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file, "start\n");
		const pid = await deadPid();
		writeFileSync(file, "both\n");
		place(e, `pi-${pid}-${NS_A}.json`, message(e, file, pid, `pid:[${NS_A}]`, 1));
		place(e, `pi-${pid}-${NS_B}.json`, message(e, file, pid, `pid:[${NS_B}]`, 1));
		const mine = await e.until((s) => {
			const list = files(s).filter((f) => f.pi_pid === pid && f.seq === 1);
			return list.length === 2 ? list : undefined;
		}, "a report for each pi");
		assert.deepEqual(mine.map((f) => f.pi_ns).sort(), [`pid:[${NS_A}]`, `pid:[${NS_B}]`]);
	});

	it("a sandboxed pi's approval request is answered, the decision naming it by pid and pi_ns", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file, "start\n");
		const pid = await deadPid();
		const now = Date.now() / 1000;
		const request = {
			protocol: "0.4",
			kind: "pi-approval",
			pid,
			pid_ns: `pid:[${NS_A}]`,
			editor_pid: e.pid,
			timestamp: now,
			request: buildRequest({
				id: "req-1",
				tool: "edit",
				file,
				before: { kind: "text", text: "start\n" },
				after: "started\n",
				timeoutS: 120,
				now,
			}),
		};
		place(
			e,
			`pi-${pid}-${NS_A}.approval.json`,
			encodeApprovalMessage(request as Parameters<typeof encodeApprovalMessage>[0]),
		);
		await evalsTo(e, "(length pi-ide-approval--pending)", "1", "the request is pending");
		assert.match(await e.eval("(pi-ide-approve)"), /approved: pi applies its change to .*a\.txt/);
		const decisions = await e.until((s) => {
			const d = (s as { decisions?: unknown[] } | null)?.decisions;
			return d && d.length === 1 ? d : undefined;
		}, "decided");
		assert.deepEqual(decisions, [{ pi_pid: pid, pi_ns: `pid:[${NS_A}]`, id: "req-1", decision: "accept" }]);
	});

	it("a hunk reverted here is listed with pi_ns as pi's change set said: a sandboxed pi's, a host pi's", async (t) => {
		const e = await startEmacs(t);
		const file = join(e.dir, "a.txt");
		await openFile(e, file, "start\n");
		let seq = 0;
		for (const [pid, pidNs] of [
			[await deadPid(), `pid:[${NS_A}]`],
			[(await spawnLiveEditor()).pid, INITIAL_NS],
		] as const) {
			const name = pidNs === INITIAL_NS ? `${pid}` : `${pid}-${NS_A}`;
			writeFileSync(file, "new\n");
			const review = JSON.parse(
				oneRunReview([{ file, before: "old\n", after: "new\n" }], { pid, editorPid: e.pid }).toString(),
			);
			place(e, `pi-${name}.review.json`, JSON.stringify({ ...review, pid_ns: pidNs }));
			seq += 1;
			const mine = seq;
			place(e, `pi-${name}.json`, message(e, file, pid, pidNs, mine));
			await e.until((s) => files(s).find((f) => f.pi_pid === pid && f.seq === mine), "the message is handled");
			await evalsTo(
				e,
				`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (length (cl-remove-if-not (lambda (o) (overlay-get o 'pi-ide-review)) (overlays-in (point-min) (point-max)))))`,
				"1",
				"pi's hunk is marked",
			);
			await e.act(
				`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (goto-char (point-min)) (undo-boundary) (pi-ide-revert-hunk))`,
			);
			const entry = await e.until(
				(s) =>
					((s as { reverted?: { pi_pid: number; pi_ns?: string }[] } | null)?.reverted ?? []).find(
						(r) => r.pi_pid === pid,
					),
				"reverted",
			);
			assert.equal(entry.pi_ns, pidNs);
			assert.equal(await bufferText(e, file), "old\n");
			// This pi exits (its files go): its change set is forgotten before the next pi's comes.
			for (const kind of ["", ".review"]) unlinkSync(join(e.stateDir, `pi-${name}${kind}.json`));
			await e.act(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (revert-buffer t t))`);
			await evalsTo(e, "(length pi-ide-review--sets)", "0", "the change set forgotten");
		}
	});
});
