/**
 * A fake OpenAI-compatible chat-completions model on 127.0.0.1: it records every request body (in memory,
 * optionally appended to a JSONL file) and answers with a fixed reply, streamed as SSE chunks or as one JSON
 * body for `stream: false`. The only fake in the end-to-end tests: pi itself is real.
 */
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export const DEFAULT_REPLY = "FAKE-REPLY-OK";

export interface ChatMessage {
	role: string;
	content?: unknown;
	[key: string]: unknown;
}

export interface RecordedRequest {
	method: string;
	url: string;
	headers: Record<string, string | string[] | undefined>;
	/** Parsed JSON body, or the raw text when it was not JSON. */
	body: { messages?: ChatMessage[]; stream?: boolean; [key: string]: unknown } | string;
}

export interface FakeModel {
	port: number;
	baseUrl: string;
	requests: RecordedRequest[];
	/** performance.now() when each reply was fully sent, by request index. */
	repliedAt: number[];
	/**
	 * Called with each request (and its 0-based index) before the reply is sent; the reply waits for it. Lets a
	 * test change the world between two prompts of one pi run.
	 */
	beforeReply: ((request: RecordedRequest, index: number) => void | Promise<void>) | undefined;
	/**
	 * Decides each reply (after beforeReply): a text, or tool calls pi should run (pi then sends another request
	 * holding the results). Undefined, or returning undefined: the fixed text reply.
	 */
	respond: ((request: RecordedRequest, index: number) => FakeReply | undefined) | undefined;
	close(): Promise<void>;
}

/**
 * A scripted reply: plain text, or tool calls (name + arguments object), streamed as pi's provider expects.
 * `promptTokens`: the context size the reply reports (default 10): a large one makes pi compact before its next turn.
 */
export type FakeReply = ({ text: string } | { toolCalls: FakeToolCall[] }) & {
	promptTokens?: number;
};

/** One tool call the fake model asks pi to make. */
export type FakeToolCall = { name: string; arguments: Record<string, unknown> };

/** A `respond` that asks pi to make `calls` in answer to the first request, and replies to every later one. */
export const toolsThenReply =
	(calls: FakeToolCall[]) =>
	(_request: RecordedRequest, index: number): FakeReply =>
		index === 0 ? { toolCalls: calls } : { text: DEFAULT_REPLY };

export interface FakeModelOptions {
	reply?: string;
	/** Also append each request as one JSON line to this file. */
	logFile?: string;
}

export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
	const reply = options.reply ?? DEFAULT_REPLY;
	const requests: RecordedRequest[] = [];
	const repliedAt: number[] = [];
	let fake: FakeModel | undefined;
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", async () => {
			const raw = Buffer.concat(chunks).toString("utf8");
			let body: RecordedRequest["body"] = raw;
			try {
				body = JSON.parse(raw) as RecordedRequest["body"];
			} catch {
				// keep the raw text: a test can still look at it
			}
			const record: RecordedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
			const index = requests.push(record) - 1;
			res.once("finish", () => {
				repliedAt[index] = performance.now();
			});
			if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify(record)}\n`);
			try {
				await fake?.beforeReply?.(record, index);
			} catch (error) {
				res.writeHead(500, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `fake model: beforeReply failed: ${String(error)}` } }));
				return;
			}

			if (!(req.url ?? "").endsWith("/chat/completions")) {
				res.writeHead(404, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `fake model: no route ${req.url}` } }));
				return;
			}
			const id = `chatcmpl-fake-${requests.length}`;
			const created = Math.floor(Date.now() / 1000);
			const { model: requested } = typeof body === "object" ? body : { model: undefined };
			const model = typeof requested === "string" ? requested : "fake-model";
			const usage = { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 };
			if (typeof body === "object" && body.stream === false) {
				res.writeHead(200, { "content-type": "application/json" });
				res.end(
					JSON.stringify({
						id,
						object: "chat.completion",
						created,
						model,
						choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
						usage,
					}),
				);
				return;
			}
			const scripted = fake?.respond?.(record, index);
			if (scripted?.promptTokens !== undefined) {
				usage.prompt_tokens = scripted.promptTokens;
				usage.total_tokens = scripted.promptTokens + usage.completion_tokens;
			}
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
			const chunk = (delta: object, finishReason: string | null = null) =>
				`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
			res.write(chunk({ role: "assistant", content: "" }));
			if (scripted && "toolCalls" in scripted) {
				const calls = scripted.toolCalls.map((call, i) => ({
					index: i,
					id: `call_${index}_${i}`,
					type: "function",
					function: { name: call.name, arguments: JSON.stringify(call.arguments) },
				}));
				res.write(chunk({ tool_calls: calls }));
				res.write(chunk({}, "tool_calls"));
			} else {
				res.write(chunk({ content: scripted ? scripted.text : reply }));
				res.write(chunk({}, "stop"));
			}
			res.write(
				`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
			);
			res.end("data: [DONE]\n\n");
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	const { port } = server.address() as AddressInfo;
	fake = {
		port,
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		repliedAt,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
		beforeReply: undefined,
		respond: undefined,
	};
	return fake;
}

/** The text of one chat message: a string content, or the concatenated `text` parts of an array content. */
export function messageText(message: ChatMessage): string {
	const { content } = message;
	if (typeof content === "string") return content;
	if (Array.isArray(content)) {
		return content
			.map((part: unknown) =>
				typeof part === "object" && part !== null && "text" in part && typeof part.text === "string" ? part.text : "",
			)
			.join("");
	}
	return "";
}

/** The messages of a recorded request (empty when the body was not a chat request). */
export function requestMessages(request: RecordedRequest | undefined): ChatMessage[] {
	if (!request || typeof request.body !== "object" || !Array.isArray(request.body.messages)) return [];
	return request.body.messages;
}

/** The texts of every user-role message in a request, in order. */
export function userTexts(request: RecordedRequest | undefined): string[] {
	return requestMessages(request)
		.filter((m) => m.role === "user")
		.map(messageText);
}

/** The user-role message texts of the last request the model received. */
export function lastUserTexts(model: Pick<FakeModel, "requests">): string[] {
	return userTexts(model.requests.at(-1));
}

/**
 * The user-role messages of the last request that come after the one whose text equals `prompt`
 * (the last such prompt): what the extension injected for that prompt, up to the next non-user message.
 */
export function injectedAfter(request: RecordedRequest | undefined, prompt: string): string[] {
	const messages = requestMessages(request);
	let index = -1;
	messages.forEach((m, i) => {
		if (m.role === "user" && messageText(m) === prompt) index = i;
	});
	if (index < 0) return [];
	const out: string[] = [];
	for (const m of messages.slice(index + 1)) {
		if (m.role !== "user") break;
		out.push(messageText(m));
	}
	return out;
}

/** The texts of the `role: "tool"` messages of a request (what pi sent back after running tools). */
export function toolResults(request: RecordedRequest | undefined): string[] {
	return requestMessages(request)
		.filter((m) => m.role === "tool")
		.map(messageText);
}

/**
 * A `respond` for a model that calls `calls` on each run's first turn and then answers "done" (told apart by the
 * last message's role, so it works for any number of earlier runs).
 */
export function callToolsThenAnswer(calls: FakeToolCall[]): (request: RecordedRequest) => FakeReply {
	return (request) => (requestMessages(request).at(-1)?.role === "tool" ? { text: "done" } : { toolCalls: calls });
}
