/**
 * pi's identity across pid namespaces (PROTOCOL.md v0.5) in the Vim client, in real Vim under tmux: the state file
 * says Vim's own `pid_ns`; pi's files are read under `pi-<pid>.json` and `pi-<pid>-<ns digits>.json` with `pid_ns`
 * agreeing with the name (test/fixtures/pi-identity-cases.ts); a pi of another namespace is acted upon without a
 * liveness check (its pid is dead on the host); reports, decisions and reverts echo `pi_ns` as pi's file said; two
 * pis with the same pid in two namespaces are two pis (their own seqs, their own reports).
 */
import assert from "node:assert/strict";
import { readlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it, type TestContext } from "node:test";
import { buildRequest, encodeApprovalMessage } from "../../src/link/approval.ts";
import { IDENTITY_CASES, INITIAL_NS, NS_A, NS_B } from "../fixtures/pi-identity-cases.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { PI_FILE_NAME_CASES } from "../fixtures/state-dir-cases.ts";
import { deadPid, killAllEditors, spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { runVimRules, startVim, type Vim } from "../helpers/vim.ts";

after(killAllEditors);

interface Report {
	file: string;
	seq: number;
	status: string;
	pi_pid: number;
	pi_ns?: string;
}
const files = (s: Record<string, unknown>) => (s["files"] as Report[] | undefined) ?? [];
const lines = (vim: Vim) => vim.expr<string[]>("getline(1, '$')");

async function world(t: TestContext): Promise<{ vim: Vim; file: string }> {
	const vim = await startVim(t);
	const file = join(vim.dirs.work, "a.txt");
	writeFileSync(file, "start\n");
	await vim.ex("edit a.txt");
	await vim.until((s) => (s["active_buffer"] as { file: string }).file === file, "a.txt open");
	return { vim, file };
}

let seqs = 100;
function message(vim: Vim, file: string, pid: number, pidNs: string | undefined, seq: number): string {
	return JSON.stringify({
		protocol: "0.3",
		kind: "pi",
		pid,
		...(pidNs === undefined ? {} : { pid_ns: pidNs }),
		cwd: vim.dirs.work,
		timestamp: Date.now() / 1000,
		editor_pid: vim.pid,
		seq,
		changed: [{ file, seq, tool: "write" }],
		last_turn: [file],
	});
}

describe("vim: pi's identity across pid namespaces (v0.5)", () => {
	it("pi's file names: the shared table (PI_FILE_NAME_CASES), with 'ignorecase' set", (t) => {
		const out = runVimRules<{ keys: string[] }>(
			t,
			PI_FILE_NAME_CASES.map((c) => c.name),
			`set ignorecase
import autoload 'pi_ide/writer.vim'
var out = {keys: mapnew(c, (_, n) => writer.PiKeyOfName(n))}`,
		);
		PI_FILE_NAME_CASES.forEach((c, i) => {
			const want =
				c.expect === undefined ? "" : c.expect.ns === null ? `${c.expect.pid}` : `${c.expect.pid}-${c.expect.ns}`;
			assert.equal(out.keys[i], want, c.name);
		});
	});

	it("the state file says Vim's own pid namespace, as readlink /proc/self/ns/pid does", async (t) => {
		const { vim } = await world(t);
		const s = vim.state() ?? {};
		assert.equal(s["pid_ns"], readlinkSync("/proc/self/ns/pid"));
	});

	it("which of pi's file names and pid_ns are acted upon; pi_ns echoed as pi's file said", async (t) => {
		const { vim, file } = await world(t);
		const pids = { dead: await deadPid(), live: (await spawnLiveEditor()).pid };
		// The control: another live pi of the host, after each case that must not be acted upon.
		const control = (await spawnLiveEditor()).pid;
		for (const [i, c] of IDENTITY_CASES.entries()) {
			seqs += 1;
			const seq = seqs;
			writeFileSync(file, `case ${i}\n`);
			writeRawStateFile(vim.dirs.stateDir, `pi-${c.stem(pids)}.json`, message(vim, file, c.pid(pids), c.pidNs, seq));
			if (c.acted) {
				const s = await vim.until(
					(s) => files(s).some((f) => f.seq === seq && f.status === "reloaded"),
					`acted upon: ${c.name}`,
				);
				const report = files(s).find((f) => f.seq === seq);
				assert.equal(report?.pi_pid, c.pid(pids), c.name);
				assert.equal(report?.pi_ns, c.pidNs, `pi_ns as pi's file said (left out when it said none): ${c.name}`);
				assert.equal("pi_ns" in (report ?? {}), c.pidNs !== undefined, c.name);
				assert.deepEqual(await lines(vim), [`case ${i}`], c.name);
			} else {
				seqs += 1;
				const controlSeq = seqs;
				writeFileSync(file, `control ${i}\n`);
				writeRawStateFile(vim.dirs.stateDir, `pi-${control}.json`, message(vim, file, control, undefined, controlSeq));
				const s = await vim.until(
					(s) => files(s).some((f) => f.seq === controlSeq && f.status === "reloaded"),
					`the control after: ${c.name}`,
				);
				assert.ok(!files(s).some((f) => f.seq === seq), `not acted upon: ${c.name}`);
			}
		}
		const said = await vim.expr<string>("execute('messages')");
		assert.doesNotMatch(said, /E\d{2,4}:|Error|internal error/, said);
	});

	it("two pis with the same pid in two namespaces are two pis: their own seq, their own report", async (t) => {
		const { vim, file } = await world(t);
		const pid = await deadPid();
		writeFileSync(file, "both\n");
		writeRawStateFile(vim.dirs.stateDir, `pi-${pid}-${NS_A}.json`, message(vim, file, pid, `pid:[${NS_A}]`, 1));
		writeRawStateFile(vim.dirs.stateDir, `pi-${pid}-${NS_B}.json`, message(vim, file, pid, `pid:[${NS_B}]`, 1));
		const s = await vim.until(
			(s) => files(s).filter((f) => f.pi_pid === pid && f.seq === 1).length === 2,
			"a report for each pi",
		);
		assert.deepEqual(
			files(s)
				.filter((f) => f.pi_pid === pid)
				.map((f) => f.pi_ns)
				.sort(),
			[`pid:[${NS_A}]`, `pid:[${NS_B}]`],
		);
	});

	it("a sandboxed pi's approval request is answered, the decision naming it by pid and pi_ns", async (t) => {
		const { vim, file } = await world(t);
		const pid = await deadPid();
		const now = Date.now() / 1000;
		const request = {
			protocol: "0.4",
			kind: "pi-approval",
			pid,
			pid_ns: `pid:[${NS_A}]`,
			editor_pid: vim.pid,
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
		writeRawStateFile(
			vim.dirs.stateDir,
			`pi-${pid}-${NS_A}.approval.json`,
			encodeApprovalMessage(request as Parameters<typeof encodeApprovalMessage>[0]),
		);
		await vim.waitExpr("len(pi_ide#approval#Debug().pending) == 1");
		assert.equal(
			await vim.expr<string>("trim(execute('PiIde approve'))"),
			"(pi-ide) approved: pi applies its change to a.txt",
		);
		const s = await vim.until((s) => ((s["decisions"] as unknown[] | undefined) ?? []).length === 1, "decided");
		assert.deepEqual(s["decisions"], [{ pi_pid: pid, pi_ns: `pid:[${NS_A}]`, id: "req-1", decision: "accept" }]);
	});

	it("a hunk reverted here is listed with pi_ns as pi's change set said: a sandboxed pi's, a host pi's", async (t) => {
		const { vim, file } = await world(t);
		for (const [pid, pidNs] of [
			[await deadPid(), `pid:[${NS_A}]`],
			[(await spawnLiveEditor()).pid, INITIAL_NS],
		] as const) {
			const name = pidNs === INITIAL_NS ? `${pid}` : `${pid}-${NS_A}`;
			writeFileSync(file, "new\n");
			const review = JSON.parse(
				oneRunReview([{ file, before: "old\n", after: "new\n" }], { pid, editorPid: vim.pid }).toString(),
			);
			writeRawStateFile(vim.dirs.stateDir, `pi-${name}.review.json`, JSON.stringify({ ...review, pid_ns: pidNs }));
			seqs += 1;
			const seq = seqs;
			writeRawStateFile(vim.dirs.stateDir, `pi-${name}.json`, message(vim, file, pid, pidNs, seq));
			await vim.until((s) => files(s).some((f) => f.seq === seq), "the message is handled");
			await vim.waitExpr("len(sign_getplaced(bufnr(), {'group': '*'})[0].signs) > 0");
			await vim.ex("PiIde revert");
			await vim.waitExpr(`getline(1, '$') == ['old']`);
			const s = await vim.until(
				(s) => ((s["reverted"] as { pi_pid: number }[] | undefined) ?? []).some((r) => r.pi_pid === pid),
				"reverted",
			);
			const entry = (s["reverted"] as { pi_pid: number; pi_ns?: string }[]).find((r) => r.pi_pid === pid);
			assert.equal(entry?.pi_ns, pidNs);
			// This pi exits (its files go): its change set is forgotten before the next pi's comes.
			for (const kind of ["", ".review"]) unlinkSync(join(vim.dirs.stateDir, `pi-${name}${kind}.json`));
			await vim.waitExpr("empty(pi_ide#inbox#Connected())");
			await vim.ex("edit!");
		}
	});
});
