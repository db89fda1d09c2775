/**
 * A real pi in a sandbox for the end-to-end tests (issue 23): `unshare --pid --fork --mount-proc` with pi at a pid
 * that no process has on the host. As root, host pids 1-3 are live and pi would be pid 1 in a bare `unshare
 * --fork`: an editor that judged pi's pid by kill(pid, 0) would pass by accident. So pi runs under a shell in the
 * namespace that first sets ns_last_pid (`startAtPid`: under unshare `sandboxAt`, under bubblewrap
 * test/helpers/bwrap.ts's `piPid`), and the pid comes from `hostDeadPid`.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { type FakeReply, messageText, type RecordedRequest, requestMessages, toolResults } from "./fake-llm.ts";
import { type PiEnv, runPrint } from "./pi-env.ts";

export function isAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code !== "ESRCH";
	}
}

/** A pid no process has on this host now: none under /proc, and kill(pid, 0) says ESRCH. */
export function hostDeadPid(): number {
	const max = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8").trim());
	for (let pid = Math.floor(max * 0.6); pid > 1000; pid -= 7919) {
		if (!existsSync(`/proc/${pid}`) && !isAlive(pid)) return pid;
	}
	throw new Error("no free pid found");
}

/**
 * The end of a `wrap` run inside a new pid namespace (with its own /proc): a shell that makes the namespace's next
 * pid `pid` and starts pi as its child (never exec: exec keeps the shell's pid).
 */
export const startAtPid = (pid: number): string[] => [
	"sh",
	"-c",
	`echo ${pid - 1} > /proc/sys/kernel/ns_last_pid && "$@"; exit $?`,
	"sh",
];

/** `runPrint`'s `wrap`: `unshare` with pi as the child of a shell that made the namespace's next pid `pid`. */
export const sandboxAt = (pid: number): string[] => ["unshare", "--pid", "--fork", "--mount-proc", ...startAtPid(pid)];

/** The model's reply: `write` of the file its prompt names (WRITE <path> <content>), then text after the result. */
export function writeAsAsked(request: RecordedRequest): FakeReply {
	const messages = requestMessages(request);
	if (messages.at(-1)?.role === "tool") return { text: "done" };
	const asked = messages
		.map(messageText)
		.reverse()
		.find((text) => text.includes("WRITE "));
	const match = /WRITE (\S+) (\S+)/.exec(asked ?? "");
	if (!match) return { text: "nothing asked" };
	return { toolCalls: [{ name: "write", arguments: { path: match[1], content: `${match[2]}\n` } }] };
}

/** The tool result of the run that wrote `file` (the request answering the model's `write` of it). */
export function toolResultFor(requests: RecordedRequest[], file: string): string {
	const found = requests.find((r) => {
		const messages = requestMessages(r);
		const call = messages.filter((m) => m.role === "assistant").at(-1);
		return messages.at(-1)?.role === "tool" && JSON.stringify(call ?? {}).includes(file);
	});
	return toolResults(found).join("\n");
}

/** What the sandbox tests read of an editor's report on a file. */
export interface SandboxReport {
	file: string;
	status: string;
	pi_pid?: number;
	pi_ns?: string;
}

/**
 * A real pi in a sandbox, at a pid that is dead on the host, writes `text` into `file` (open in an editor on the
 * host); checks that pi ran, that its pid is dead here (judging it would have refused pi's message) and that the tool
 * result has the editor's answer in time (a reload without a checker adds nothing; no answer says so). Returns pi's pid.
 */
export async function sandboxedWrite(env: PiEnv, file: string, text: string): Promise<number> {
	const piPid = hostDeadPid();
	env.model.respond = writeAsAsked;
	const result = await runPrint(env, [`WRITE ${file} ${text}`], [], { wrap: sandboxAt(piPid) });
	assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
	assert.ok(!isAlive(piPid), `pid ${piPid} is dead on the host: judging it would have refused pi's message`);
	assertAnsweredInTime(env.model.requests, file);
	return piPid;
}

/**
 * A pi on the host writes `host.text` into `host.file` while a sandboxed pi (at a host-dead pid) writes `box.text`
 * into `box.file`, both at once against one editor; both runs succeed and both tool results have the editor's answer
 * in time. Returns the sandboxed pi's pid.
 */
export async function coexistingWrites(
	env: PiEnv,
	host: { file: string; text: string },
	box: { file: string; text: string },
): Promise<number> {
	const piPid = hostDeadPid();
	env.model.respond = writeAsAsked;
	const [hostRun, boxRun] = await Promise.all([
		runPrint(env, [`WRITE ${host.file} ${host.text}`]),
		runPrint(env, [`WRITE ${box.file} ${box.text}`], [], { wrap: sandboxAt(piPid) }),
	]);
	assert.equal(hostRun.code, 0, hostRun.stderr);
	assert.equal(boxRun.code, 0, boxRun.stderr);
	for (const file of [host.file, box.file]) assertAnsweredInTime(env.model.requests, file);
	return piPid;
}

/** The tool result of pi's write of `file` says it wrote it and carries the editor's answer (none is "did not answer"). */
export function assertAnsweredInTime(requests: RecordedRequest[], file: string): void {
	const toolText = toolResultFor(requests, file);
	assert.match(toolText, /Successfully wrote/, `${file}: ${toolText}`);
	assert.doesNotMatch(toolText, /did not answer|not reloaded/, `${file}: ${toolText}`);
}

/** The editor's report on a sandboxed pi's write: reloaded, naming pi by the pid it has in its namespace and that namespace. */
export function assertSandboxedReport(report: SandboxReport | undefined, piPid: number, hostNs: string): void {
	assert.equal(report?.status, "reloaded", JSON.stringify(report));
	assert.equal(report?.pi_pid, piPid, "the report names pi by the pid it has in its namespace");
	assert.match(report?.pi_ns ?? "", /^pid:\[\d+\]$/);
	assert.notEqual(report?.pi_ns, hostNs, "pi's namespace, not the host's");
}

/** Two pis' reports (one on the host, one sandboxed at `piPid`): the sandboxed one names pi and a namespace the host pi's does not. */
export function assertTwoNamespaces(
	hostReport: SandboxReport | undefined,
	boxReport: SandboxReport | undefined,
	piPid: number,
	initialNs: string,
): void {
	assert.equal(boxReport?.pi_pid, piPid);
	assert.match(boxReport?.pi_ns ?? "", /^pid:\[\d+\]$/, "the sandboxed pi's report carries its namespace");
	assert.notEqual(hostReport?.pi_ns ?? initialNs, boxReport?.pi_ns, "two pis, two namespaces");
}
