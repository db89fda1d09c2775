/**
 * Drive pi through pi-acp (the ACP adapter Zed uses, from npm) as an ACP client does: JSON-RPC 2.0, one
 * message per line on stdio; initialize, session/new, session/prompt; answer session/request_permission
 * (how pi-acp shows a pi select dialog). pi-acp starts `pi --mode rpc`; PI_ACP_PI_COMMAND points it at a
 * wrapper that adds this product's extension, --offline and the fake model.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { followJsonl, type JsonlChild } from "./jsonl-child.ts";
import { BIN, MODEL_ARG, type PiEnv, PRODUCT_EXTENSION, REPO, WAIT_MS } from "./pi-env.ts";

/** pi-acp's entry point: the devDependency, or PI_ACP_JS. */
export const PI_ACP_JS = process.env["PI_ACP_JS"] || join(REPO, "node_modules/pi-acp/dist/index.js");

export interface AcpMessage {
	jsonrpc: "2.0";
	id?: number | string;
	method?: string;
	params?: Record<string, unknown>;
	result?: Record<string, unknown>;
	error?: unknown;
}

export interface AcpClient {
	child: ChildProcessWithoutNullStreams;
	messages: AcpMessage[];
	/** A request; resolves with its response message. */
	request(method: string, params: Record<string, unknown>): Promise<AcpMessage>;
	/** Resolve with the first message from index `since` on that satisfies `accept`. */
	waitFor: JsonlChild<AcpMessage>["waitFor"];
	/** Answer an agent → client request. */
	reply(id: number | string, result: Record<string, unknown>): void;
	/** initialize + session/new in `cwd`; returns the session id. */
	newSession(cwd: string): Promise<string>;
	/** Text of the agent_message_chunk updates from `since` on, joined. */
	agentText(since?: number): string;
	close(): Promise<void>;
}

export function startAcp(env: PiEnv): AcpClient {
	if (!existsSync(PI_ACP_JS)) {
		throw new Error(`pi-acp is missing at ${PI_ACP_JS}: run \`npm ci\` (it is a devDependency) or set PI_ACP_JS`);
	}
	const wrapper = join(env.root, "pi-for-acp.sh");
	writeFileSync(
		wrapper,
		`#!/bin/sh\nexec ${join(BIN, "pi")} --offline -e ${PRODUCT_EXTENSION} --model ${MODEL_ARG} "$@"\n`,
	);
	chmodSync(wrapper, 0o755);
	const child = spawn(join(BIN, "node"), [PI_ACP_JS], {
		cwd: env.workDir,
		env: { ...env.env, PI_ACP_PI_COMMAND: wrapper },
		stdio: "pipe",
	});
	const acp = followJsonl<AcpMessage>(child, { name: "pi-acp" });
	const { messages, waitFor } = acp;
	const send = (message: object) => acp.send({ jsonrpc: "2.0", ...message });
	let ids = 0;
	const request: AcpClient["request"] = (method, params) => {
		ids += 1;
		const id = ids;
		const since = messages.length;
		send({ id, method, params });
		return waitFor((m) => m.id === id && m.method === undefined, since, 2 * WAIT_MS);
	};
	const client: AcpClient = {
		child,
		messages,
		request,
		waitFor,
		reply: (id, result) => send({ id, result }),
		newSession: async (cwd) => {
			const init = await request("initialize", { protocolVersion: 1, clientCapabilities: {} });
			if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
			const session = await request("session/new", { cwd, mcpServers: [] });
			const id = session.result?.["sessionId"];
			if (typeof id !== "string") throw new Error(`session/new failed: ${JSON.stringify(session)}\n${acp.stderr()}`);
			return id;
		},
		agentText: (since = 0) =>
			messages
				.slice(since)
				.map((m) => {
					const update = m.params?.["update"] as { sessionUpdate?: string; content?: { text?: string } } | undefined;
					return update?.sessionUpdate === "agent_message_chunk" ? (update.content?.text ?? "") : "";
				})
				.join(""),
		close: async () => {
			await acp.close(5000);
		},
	};
	return client;
}
