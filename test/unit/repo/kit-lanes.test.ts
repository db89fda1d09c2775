/**
 * The conformance kit's scheduling of one adapter's cases (test/conformance/suite.ts), on fake adapters whose
 * editors cost nothing: with `rowLanes`, the cases in editors of their own (`ownEditors`, the editor-per-row
 * rows) run that many at a time beside the cases of the shared editor, which stay one at a time and in order; such
 * a case is refused the shared editor; once the shared editor's cases end, it closes and one more lane opens; an
 * in-process adapter runs one case at a time whatever it says; the cases that wait on purpose (`long`) start first
 * and those that quit their editor (`quits`) last.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Capability, ClientAdapter, ClientSession } from "../../conformance/client.ts";
import type { KitCase } from "../../conformance/kit.ts";
import { describeAdapter } from "../../conformance/suite.ts";
import { pollFor } from "../../helpers/poll.ts";

const LANES = 3;

let nextPid = 4_000_000;
function fakeAdapter(name: string, extra: Partial<ClientAdapter>): ClientAdapter {
	return {
		name,
		app: "fake",
		capabilities: new Set<Capability>(["editor-per-row"]),
		missing: {},
		rowLanes: LANES,
		...extra,
		start: async () => ({ pid: ++nextPid, dispose: async () => undefined }) as Partial<ClientSession> as ClientSession,
	};
}

/**
 * What one adapter's cases did: the order the shared ones ran in, and the most cases at once per kind (of their own:
 * while the shared editor's cases ran, and at any time).
 */
interface Record {
	sharedOrder: string[];
	sharedNow: number;
	sharedMost: number;
	ownNow: number;
	ownMostBeside: number;
	ownMost: number;
	ownDone: number;
	refusal: string;
}
const newRecord = (): Record => ({
	sharedOrder: [],
	sharedNow: 0,
	sharedMost: 0,
	ownNow: 0,
	ownMostBeside: 0,
	ownMost: 0,
	ownDone: 0,
	refusal: "",
});
const turn = () => new Promise((resolve) => setImmediate(resolve));

const OWN = 7;
/** The shared editor's cases, in the order they must run. */
const SHARED = ["S1", "S2", "S3", "S4"];

/**
 * Four cases of the shared editor, then six own-editor cases and one editor-per-row row (each, where the adapter
 * has lanes, waits until its lanes are full, or every such case left is running: run one after another, the first
 * never sees a second and times out), and one own-editor case that asks for the shared editor.
 */
function casesFor(r: Record, barrier: boolean): KitCase[] {
	const shared = SHARED.map(
		(name): KitCase => ({
			name,
			run: async (kit) => {
				await kit.shared();
				r.sharedOrder.push(name);
				r.sharedMost = Math.max(r.sharedMost, ++r.sharedNow);
				for (let i = 0; i < 5; i++) await turn();
				r.sharedNow--;
			},
		}),
	);
	const own = Array.from(
		{ length: OWN },
		(_, i): KitCase => ({
			name: `O${i + 1}`,
			...(i === OWN - 1 ? { needs: ["editor-per-row" as const] } : { ownEditors: true }),
			run: async (kit) => {
				await kit.start();
				r.ownMost = Math.max(r.ownMost, ++r.ownNow);
				if (r.sharedOrder.length < SHARED.length) r.ownMostBeside = Math.max(r.ownMostBeside, r.ownNow);
				if (barrier) {
					await pollFor(
						() => r.ownNow >= LANES || r.ownNow + r.ownDone === OWN,
						() => `${LANES} cases in editors of their own at once (${r.ownNow} running, ${r.ownDone} done)`,
					);
				} else for (let j = 0; j < 5; j++) await turn();
				r.ownNow--;
				r.ownDone++;
			},
		}),
	);
	const asks: KitCase = {
		name: "own, asking for the shared editor",
		ownEditors: true,
		run: async (kit) => {
			await kit.shared().then(
				() => {
					r.refusal = "(given the shared editor)";
				},
				(error: Error) => {
					r.refusal = error.message;
				},
			);
		},
	};
	return [shared[0], ...own.slice(0, 3), shared[1], asks, ...own.slice(3), shared[2], shared[3]] as KitCase[];
}

/** Own-editor cases in file order, some that wait on purpose (`long`) and one that quits its editor (`quits`). */
const started: string[] = [];
const ordered: KitCase[] = [
	{ name: "Q", quits: true },
	{ name: "A" },
	{ name: "L1", long: true },
	{ name: "B" },
	{ name: "L2", long: true },
].map((c) => ({
	...c,
	ownEditors: true,
	run: async (kit) => {
		started.push(c.name);
		await kit.start();
		for (let i = 0; i < 5; i++) await turn();
	},
}));

/**
 * Two lanes and one shared case: the two first cases of their own each wait until a third starts beside them, which
 * only the shared editor's lane, opened once its case ends and its editor closed, can give them.
 */
const widening = { events: [] as string[], sharedPid: 0 };
const widened: KitCase[] = [
	{
		name: "S",
		run: async (kit) => {
			widening.sharedPid = (await kit.shared()).session.pid;
			widening.events.push("S ran");
		},
	},
	...["W1", "W2", "W3"].map(
		(name): KitCase => ({
			name,
			ownEditors: true,
			run: async (kit) => {
				await kit.start();
				widening.events.push(`${name} started`);
				if (name !== "W3") {
					await pollFor(
						() => widening.events.includes("W3 started"),
						() => `a third case of its own beside ${name} (events: ${widening.events.join(", ")})`,
					);
				}
			},
		}),
	),
];
const wideningAdapter: ClientAdapter = {
	...fakeAdapter("fake with lanes, widened", { rowLanes: 2 }),
	start: async () => {
		const pid = ++nextPid;
		return {
			pid,
			dispose: async () => {
				if (pid === widening.sharedPid) widening.events.push("shared editor closed");
			},
		} as Partial<ClientSession> as ClientSession;
	},
};

const lanes = newRecord();
const inProcess = newRecord();
const notRun: string[] = [];
describeAdapter(fakeAdapter("fake with lanes", {}), casesFor(lanes, true), notRun);
describeAdapter(fakeAdapter("fake in-process", { inProcess: true }), casesFor(inProcess, false), notRun);
describeAdapter(fakeAdapter("fake with lanes, ordered", {}), ordered, notRun);
describeAdapter(wideningAdapter, widened, notRun);

describe("the kit's lanes", () => {
	it("ran the shared editor's cases one at a time, in order, and the others three at a time beside them", () => {
		assert.deepEqual(notRun, []);
		assert.deepEqual(lanes.sharedOrder, SHARED);
		assert.equal(lanes.sharedMost, 1);
		assert.equal(lanes.ownMostBeside, LANES);
		assert.ok(lanes.ownMost <= LANES + 1, `at most one lane more after them: ${lanes.ownMost}`);
		assert.equal(lanes.ownDone, OWN);
		assert.match(lanes.refusal, /asked for the shared one/);
	});
	it("started the cases that wait on purpose first and the one that quits its editor last, the rest in order", () => {
		assert.deepEqual(started, ["L1", "L2", "A", "B", "Q"]);
	});
	it("once the shared editor's cases ended, that editor closed and its lane took a case of its own", () => {
		const at = (event: string) => widening.events.indexOf(event);
		assert.ok(at("S ran") >= 0 && at("S ran") < at("shared editor closed"), widening.events.join(", "));
		assert.ok(at("shared editor closed") < at("W3 started"), widening.events.join(", "));
		assert.equal(widening.events.filter((e) => e === "shared editor closed").length, 1);
	});
	it("ran an in-process adapter's cases one at a time, whatever its rowLanes", () => {
		assert.deepEqual(inProcess.sharedOrder, SHARED);
		assert.equal(inProcess.sharedMost, 1);
		assert.equal(inProcess.ownMost, 1);
		assert.equal(inProcess.ownDone, OWN);
		assert.match(inProcess.refusal, /asked for the shared one/);
	});
});
