/**
 * Drive pi in RPC mode (`--mode rpc`): JSONL on stdin/stdout (see jsonl-child.ts). Collects every record,
 * waits for records by predicate, answers `extension_ui_request` dialogs, and shuts pi down by closing stdin.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { followJsonl } from "./jsonl-child.ts";
import { BIN, type PiEnv, PRODUCT_EXTENSION, piArgs, WAIT_MS } from "./pi-env.ts";

/** One stdout record; the fields the tests read are named, the rest stay reachable by index. */
export interface RpcRecord {
	type: string;
	id?: string;
	command?: string;
	success?: boolean;
	data?: unknown;
	error?: string;
	/** extension_ui_request fields */
	method?: string;
	title?: string;
	options?: string[];
	message?: unknown;
	notifyType?: string;
	statusKey?: string;
	statusText?: string;
	timeout?: number;
	[key: string]: unknown;
}

export interface UiRequest extends RpcRecord {
	type: "extension_ui_request";
	id: string;
	method: string;
}

export interface RpcOptions {
	/** The `-e` extension; default the product's src/index.ts; null for none. */
	extension?: string | null;
	/** Extra pi args. */
	args?: string[];
	cwd?: string;
	/** Keep a session file (in the agent dir's sessions/) instead of `--no-session`: for /fork and /resume. */
	session?: boolean;
}

export interface RpcPi {
	child: ChildProcessWithoutNullStreams;
	/** Every record pi wrote on stdout, in order. */
	records: RpcRecord[];
	stderr(): string;
	send(record: object): void;
	/**
	 * Resolve with the first record at index >= `since` matching `predicate` (already received or arriving
	 * within `timeoutMs`). Rejects with the records seen on timeout or when pi exits.
	 */
	waitFor<T extends RpcRecord = RpcRecord>(
		predicate: (record: RpcRecord) => boolean,
		timeoutMs?: number,
		since?: number,
	): Promise<T>;
	/** Send a command with a fresh id and resolve with its `response` record. */
	command(record: { type: string; [key: string]: unknown }, timeoutMs?: number): Promise<RpcRecord>;
	/** Send a prompt and wait until pi has settled (or the prompt was handled without a run). */
	prompt(message: string, timeoutMs?: number): Promise<{ response: RpcRecord; since: number }>;
	/** Answer a dialog request. */
	respond(id: string, answer: { value: string } | { confirmed: boolean } | { cancelled: true }): void;
	uiRequests(method?: string, since?: number): UiRequest[];
	/** Close stdin and wait for exit (SIGKILL after `timeoutMs`). Resolves with the exit code. */
	close(timeoutMs?: number): Promise<number | null>;
}

let ids = 0;

export async function startRpc(env: PiEnv, options: RpcOptions = {}): Promise<RpcPi> {
	const extension = options.extension === undefined ? PRODUCT_EXTENSION : options.extension;
	const args = [
		"--mode",
		"rpc",
		...(options.session ? [] : ["--no-session"]),
		...piArgs(extension, options.args ?? []),
	];
	const child = spawn(join(BIN, "pi"), args, { cwd: options.cwd ?? env.workDir, env: env.env, stdio: "pipe" });
	const pi = followJsonl<RpcRecord>(child, { name: "pi", unparsed: (line) => ({ type: "unparsed", line }) });
	const records = pi.messages;
	const waitFor: RpcPi["waitFor"] = (predicate, timeoutMs = WAIT_MS, since = 0) =>
		pi.waitFor(predicate, since, timeoutMs) as never;

	const command: RpcPi["command"] = async (record, timeoutMs = WAIT_MS) => {
		ids += 1;
		const id = `t${ids}`;
		const since = records.length;
		pi.send({ ...record, id });
		return waitFor((r) => r.type === "response" && r.id === id, timeoutMs, since);
	};

	const rpc: RpcPi = {
		child,
		records,
		stderr: pi.stderr,
		send: pi.send,
		waitFor,
		command,
		prompt: async (message, timeoutMs = 2 * WAIT_MS) => {
			const since = records.length;
			const response = await command({ type: "prompt", message }, timeoutMs);
			if (response.success !== true) throw new Error(`prompt failed: ${JSON.stringify(response)}`);
			const data = response.data as { disposition?: string } | undefined;
			if (data?.disposition !== "handled") await waitFor((r) => r.type === "agent_settled", timeoutMs, since);
			return { response, since };
		},
		respond: (id, answer) => pi.send({ type: "extension_ui_response", id, ...answer }),
		uiRequests: (method, since = 0) =>
			records
				.slice(since)
				.filter(
					(r): r is UiRequest => r.type === "extension_ui_request" && (method === undefined || r.method === method),
				),
		close: pi.close,
	};
	return rpc;
}
