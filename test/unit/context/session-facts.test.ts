/**
 * The session's facts carried forward from one leaf to the next (src/context/session-facts.ts) against the same
 * facts computed whole from pi's own projection, over seeded random sessions built with pi's real
 * SessionManager: prompts, replies, ide-context and other extensions' messages, custom entries, model and label
 * changes, compactions, context edits, /tree jumps with and without a summary, and new sessions.
 * PI_IDE_FACTS_SEED=<n> replays one sequence; PI_IDE_FACTS_STEPS sets its length.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { MAX_STEPS_FORWARD, type SessionFacts, SessionFactsCache } from "../../../src/context/session-facts.ts";
import { seededInts } from "../../helpers/seeded.ts";

const TYPE = "ide-context";

function assistant(text: string) {
	const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		api: "openai-completions",
		provider: "fake",
		model: "fake",
		usage: { ...zero, totalTokens: 0, cost: { ...zero, total: 0 } },
		stopReason: "stop",
		timestamp: Date.now(),
	} as never;
}

/** What is compared: the facts as plain data (the sends in user messages as a sorted list). */
const plain = (facts: SessionFacts) =>
	JSON.parse(JSON.stringify({ ...facts, sent: [...facts.sent].sort() })) as unknown;

/** A prompt as a send from the editor leaves it (formatSend's shape): a selection's lines and text. */
const sendPrompt = (n: number) =>
	`explain\n\nSelection from src/a.ts, lines ${n}-${n + 1}:\n\`\`\`ts\nconst a${n} = 1;\n\`\`\``;

describe("session facts: carried forward = computed whole", () => {
	const fixed = process.env["PI_IDE_FACTS_SEED"];
	const seeds = fixed ? [Number(fixed)] : [8101, 8102, 8103, 8104];
	const STEPS = Number(process.env["PI_IDE_FACTS_STEPS"] ?? 300);

	for (const seed of seeds) {
		it(`seed ${seed}`, () => {
			const int = seededInts(seed);
			let session = SessionManager.inMemory("/tmp/project");
			const carried = new SessionFactsCache(TYPE);
			const log: string[] = [];
			const ids = () => session.getEntries().map((e) => e.id);
			const pick = () => {
				const all = ids();
				return all[int(all.length)];
			};
			let blocks = 0;
			let withSends = 0;
			try {
				for (let step = 0; step < STEPS; step++) {
					const op = int(20);
					if (op <= 3) {
						// Some prompts hold a selection sent from the editor: the facts list it while the prompt is in view.
						const sent = int(2) === 0;
						log.push(sent ? `prompt with a send ${step % 7}` : "prompt");
						const text = sent ? sendPrompt(step % 7) : `prompt ${step}`;
						session.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
					} else if (op <= 6) {
						log.push("reply");
						session.appendMessage(assistant(`reply ${step}`));
					} else if (op <= 9) {
						blocks++;
						log.push(`ide-context ${blocks}`);
						// Details as the extension writes them: each block's record has an id.
						session.appendCustomMessageEntry(TYPE, `File: a.ts\nCursor: line ${step}`, true, {
							memory: { v: 1, id: `b${blocks}` },
						});
					} else if (op === 10) {
						log.push("other extension's message");
						session.appendCustomMessageEntry("other", "hello", true, { n: step });
					} else if (op === 11) {
						log.push("custom entry / model / label");
						const kind = int(3);
						if (kind === 0) session.appendCustomEntry("ide-context-selection", { step });
						else if (kind === 1) session.appendModelChange("fake", `m${step}`);
						else {
							const target = pick();
							if (target) session.appendLabelChange(target, `l${step}`);
						}
					} else if (op === 12) {
						const kept = int(2) === 0 ? pick() : session.getLeafId();
						log.push(`compaction keeping from ${kept}`);
						session.appendCompaction(`summary ${step}`, kept ?? null, 1000);
					} else if (op === 13) {
						const target = session.getBranch().filter((e) => e.type === "custom_message" || e.type === "message");
						const entry = target[int(Math.max(1, target.length))];
						if (entry) {
							const remove = int(2) === 0;
							log.push(`context edit ${remove ? "removing" : "replacing"} ${entry.id}`);
							session.appendContextEdit(entry.id, remove ? null : { content: `edited ${step}` });
						}
					} else if (op === 14) {
						const to = pick();
						if (to) {
							const summary = int(2) === 0;
							log.push(`/tree to ${to}${summary ? " with a summary" : ""}`);
							if (summary) session.branchWithSummary(to, `left ${step}`);
							else session.branch(to);
						}
					} else if (op === 15 && int(8) === 0) {
						log.push("new session");
						session = SessionManager.inMemory("/tmp/project");
					} else {
						log.push("look twice (a request: context_with_system, then before_provider_request)");
						carried.facts(session);
					}
					const got = carried.facts(session);
					const whole = new SessionFactsCache(TYPE).facts(session);
					assert.deepEqual(plain(got), plain(whole));
					if (got.sent.size > 0) withSends++;
				}
				assert.ok(withSends > 0, "some steps had a send in view");
			} catch (error) {
				throw new Error(
					`facts differ; replay with PI_IDE_FACTS_SEED=${seed} PI_IDE_FACTS_STEPS=${STEPS}\n  ${log.slice(-25).join("\n  ")}\n${String(error)}`,
				);
			}
		});
	}

	it("a leaf far ahead is computed whole (the walk is bounded), and still right", () => {
		const session = SessionManager.inMemory("/tmp/project");
		const cache = new SessionFactsCache(TYPE);
		cache.facts(session);
		for (let i = 0; i < MAX_STEPS_FORWARD + 10; i++)
			session.appendCustomMessageEntry(TYPE, `File: a.ts\nCursor: line ${i}`, true, { memory: { v: 1, id: `b${i}` } });
		assert.equal(cache.facts(session).projected.length, MAX_STEPS_FORWARD + 10);
	});

	it("a session manager that throws: no facts, no error", () => {
		const broken = {
			getSessionId: () => {
				throw new Error("closed");
			},
		} as never;
		assert.deepEqual(new SessionFactsCache(TYPE).facts(broken), {
			projected: [],
			session: [],
			branch: [],
			prompt: undefined,
			sent: new Map(),
		});
	});
});
