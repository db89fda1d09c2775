/**
 * v0.5 show and ask, calls at once (the model's parallel tool calls): a seeded randomised test of pi's desk
 * (src/link/ask-desk.ts) against a stand-in editor on a real private state dir. Each round starts 1 to 8 calls
 * (shows and asks) at random moments; the editor answers each request it sees after a random delay, or never, or
 * for another pi, or for another id. The oracle, written apart from the desk: a call gets the editor's answer
 * exactly when the editor answered it for this pi and this id, else "did not answer"; every call's request was in
 * the request file while the call waited; the file is gone once no call waits. A failing round prints its seed.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { AskDesk } from "../../../src/link/ask-desk.ts";
import type { AskMessage, ShowAskAnswer } from "../../../src/protocol/show-ask.ts";
import { touch } from "../../helpers/scenario.ts";
import { seededInts } from "../../helpers/seeded.ts";
import { makeState, privateStateDirs } from "../../helpers/state-files.ts";

const newStateDir = privateStateDirs("pi-ide-ask-random-");
const EDITOR = 5432;
const PI = 8765;
const SEEDS = Array.from({ length: 12 }, (_, i) => 2501 + i);
const BEHAVIOURS = ["answer", "answer", "answer", "silent", "other pi", "other id"] as const;
type Behaviour = (typeof BEHAVIOURS)[number];

interface Call {
	id: string;
	kind: "show" | "ask";
	startMs: number;
	behaviour: Behaviour;
	answerAfterMs: number;
}

function plan(seed: number): Call[] {
	const int = seededInts(seed);
	return Array.from({ length: 1 + int(8) }, (_, i) => ({
		id: `c${seed}-${i}`,
		kind: int(2) === 0 ? "show" : "ask",
		startMs: int(60),
		behaviour: BEHAVIOURS[int(BEHAVIOURS.length)] as Behaviour,
		answerAfterMs: int(80),
	}));
}

/** The stand-in editor: answers as each call's behaviour says; records every id the request file listed. */
function editor(dir: string, calls: Call[]): { listed: Set<string>; stop: () => void } {
	const listed = new Set<string>();
	const answers: ShowAskAnswer[] = [];
	const byId = new Map(calls.map((c) => [c.id, c]));
	const timers: NodeJS.Timeout[] = [];
	const write = () => {
		const target = join(dir, `${EDITOR}.answers.json`);
		const text = JSON.stringify({
			protocol: "0.5",
			kind: "editor-answers",
			pid: EDITOR,
			timestamp: 1,
			answers: answers.slice(-16),
		});
		writeFileSync(`${target}.tmp`, text, { mode: 0o600 });
		renameSync(`${target}.tmp`, target);
	};
	const poll = setInterval(() => {
		let message: AskMessage;
		try {
			message = JSON.parse(readFileSync(join(dir, `pi-${PI}.ask.json`), "utf8")) as AskMessage;
		} catch {
			return;
		}
		for (const r of message.requests) {
			if (listed.has(r.id)) continue;
			listed.add(r.id);
			const call = byId.get(r.id);
			if (!call || call.behaviour === "silent") continue;
			const answer: ShowAskAnswer =
				r.kind === "show"
					? { pi_pid: PI, id: r.id, kind: "show", status: "listed", list: "quickfix", reason: null }
					: { pi_pid: PI, id: r.id, kind: "ask", buffers: [], buffers_total: 0 };
			if (call.behaviour === "other pi") answer.pi_pid = PI + 1;
			if (call.behaviour === "other id") answer.id = `${r.id}-other`;
			timers.push(
				setTimeout(() => {
					answers.push(answer);
					write();
				}, call.answerAfterMs),
			);
		}
	}, 3);
	return {
		listed,
		stop: () => {
			clearInterval(poll);
			for (const t of timers) clearTimeout(t);
		},
	};
}

describe("AskDesk: calls at once, seeded (an independent oracle of which call gets an answer)", () => {
	for (const seed of SEEDS)
		test(`seed ${seed}`, async (t) => {
			const dir = newStateDir();
			const project = join(dir, "..");
			touch(project, "a.ts", "one\ntwo\n");
			const calls = plan(seed);
			const stand = editor(dir, calls);
			t.after(stand.stop);
			const state = makeState({ pid: EDITOR, cwd: project });
			const desk = new AskDesk({
				stateDir: dir,
				uid: process.getuid?.() ?? 0,
				pid: PI,
				pidNamespace: null,
				cwd: project,
				home: project,
				connected: () => ({ pid: EDITOR, state }),
				excluded: () => false,
				waitMs: 1000,
			});
			const results = await Promise.all(
				calls.map(
					(c) =>
						new Promise<string>((resolve) =>
							setTimeout(() => {
								const call = c.kind === "show" ? desk.show({ path: "a.ts", line: 1 }, c.id) : desk.ask({}, c.id);
								void call.then((r) => resolve(r.text));
							}, c.startMs),
						),
				),
			);
			const replay = `seed ${seed}: ${JSON.stringify(calls)}`;
			calls.forEach((c, i) => {
				const text = results[i] ?? "";
				const expected =
					c.behaviour !== "answer"
						? /^Neovim did not answer within 1 s/
						: c.kind === "show"
							? /^Shown in Neovim: a\.ts:1 /
							: /^Open file buffers in Neovim \(0;/;
				assert.match(text, expected, `${replay}\ncall ${c.id}`);
				assert.ok(stand.listed.has(c.id), `${replay}\ncall ${c.id}: its request was in the file`);
			});
			assert.equal(existsSync(join(dir, `pi-${PI}.ask.json`)), false, `${replay}: the request file is gone`);
		});
});
