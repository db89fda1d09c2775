/**
 * A child process that speaks one JSON message per line on stdout (pi's RPC mode, pi-acp's ACP): collects
 * every message in order, waits for messages by predicate, and closes the child by ending its stdin. Stdout is
 * split on "\n" only, never with readline, which also splits on U+2028/U+2029 inside JSON strings.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { WAIT_MS } from "./pi-env.ts";

export interface JsonlChild<T> {
	/** Every message, in order of arrival. */
	messages: T[];
	stderr(): string;
	/** Write one message as a line on stdin. */
	send(message: object): void;
	/**
	 * Resolve with the first message at index >= `since` that satisfies `accept` (already received or arriving
	 * within `timeoutMs`). Rejects with the last messages and stderr on timeout or when the child exits.
	 */
	waitFor(accept: (message: T) => boolean, since?: number, timeoutMs?: number): Promise<T>;
	/** End stdin and wait for the exit (SIGKILL after `timeoutMs`). Resolves with the exit code. */
	close(timeoutMs?: number): Promise<number | null>;
}

export interface JsonlOptions<T> {
	/** What the child is, for error messages ("pi", "pi-acp"). */
	name: string;
	/** A stdout line that is not JSON: a message to keep, or undefined to note it in stderr only. */
	unparsed?: (line: string) => T | undefined;
}

export function followJsonl<T>(child: ChildProcessWithoutNullStreams, options: JsonlOptions<T>): JsonlChild<T> {
	const messages: T[] = [];
	const waiters = new Set<() => void>();
	let stderr = "";
	let buffer = "";
	let exited = false;
	const wakeAll = () => {
		for (const wake of waiters) wake();
	};
	const exit = new Promise<number | null>((resolve) =>
		child.once("close", (code) => {
			exited = true;
			wakeAll();
			resolve(code);
		}),
	);
	child.stderr.setEncoding("utf8").on("data", (d: string) => {
		stderr += d;
	});
	child.stdout.setEncoding("utf8").on("data", (d: string) => {
		buffer += d;
		for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
			const line = buffer.slice(0, nl).replace(/\r$/, "");
			buffer = buffer.slice(nl + 1);
			if (line.trim() === "") continue;
			try {
				messages.push(JSON.parse(line) as T);
			} catch {
				const kept = options.unparsed?.(line);
				if (kept === undefined) stderr += `unparsed stdout line: ${line}\n`;
				else messages.push(kept);
			}
		}
		wakeAll();
	});
	const dump = () =>
		messages
			.slice(-30)
			.map((m) => JSON.stringify(m).slice(0, 300))
			.join("\n");

	const waitFor: JsonlChild<T>["waitFor"] = (accept, since = 0, timeoutMs = WAIT_MS) =>
		new Promise((resolve, reject) => {
			let scanned = since;
			const check = () => {
				for (; scanned < messages.length; scanned++) {
					const message = messages[scanned] as T;
					if (accept(message)) {
						done();
						resolve(message);
						return;
					}
				}
				if (exited) {
					done();
					reject(
						new Error(`${options.name} exited before the awaited message.\nmessages: ${dump()}\nstderr: ${stderr}`),
					);
				}
			};
			const timer = setTimeout(() => {
				done();
				reject(
					new Error(
						`no matching ${options.name} message within ${timeoutMs} ms.\nmessages: ${dump()}\nstderr: ${stderr}`,
					),
				);
			}, timeoutMs);
			const done = () => {
				clearTimeout(timer);
				waiters.delete(check);
			};
			waiters.add(check);
			check();
		});

	return {
		messages,
		stderr: () => stderr,
		send: (message) => {
			child.stdin.write(`${JSON.stringify(message)}\n`);
		},
		waitFor,
		close: async (timeoutMs = 10_000) => {
			if (!exited) child.stdin.end();
			const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
			const code = await exit;
			clearTimeout(timer);
			return code;
		},
	};
}
