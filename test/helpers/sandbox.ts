/**
 * A real pi in a sandbox for the end-to-end tests (issue 23): `unshare --pid --fork --mount-proc` with pi at a pid
 * that no process has on the host. As root, host pids 1-3 are live and pi would be pid 1 in a bare `unshare
 * --fork`: an editor that judged pi's pid by kill(pid, 0) would pass by accident. So pi runs under a shell in the
 * namespace that first sets ns_last_pid (`startAtPid`: under unshare `sandboxAt`, under bubblewrap
 * test/helpers/bwrap.ts's `piPid`), and the pid comes from `hostDeadPid`.
 */
import { existsSync, readFileSync } from "node:fs";
import { type FakeReply, messageText, type RecordedRequest, requestMessages, toolResults } from "./fake-llm.ts";

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
