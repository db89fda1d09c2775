import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { awaitFileReport, type WaitPorts } from "../../../src/link/await-report.ts";
import { WAIT_CAPS, type WaitCaps, waitCapsFor } from "../../../src/link/pi-message.ts";
import type { EditorState, FileReport } from "../../../src/protocol/protocol.ts";

const CAPS: WaitCaps = { answerMs: 1000, diagnosticsMs: 2000 };

/** A fake clock and a fake editor: `advance` fires due timers; `publish` changes the state and tells subscribers. */
function fakeWorld(initial: FileReport[] = []) {
	let now = 0;
	let files = initial;
	let reads = 0;
	let throwOnRead = false;
	const timers: { at: number; fn: () => void; live: boolean }[] = [];
	const listeners = new Set<() => void>();
	const ports: WaitPorts = {
		read: () => {
			reads += 1;
			if (throwOnRead) throw new Error("EIO");
			return { files } as EditorState;
		},
		subscribe: (listener) => {
			listeners.add(listener);
			return () => listeners.delete(listener);
		},
		now: () => now,
		setTimer: (fn, ms) => {
			const timer = { at: now + ms, fn, live: true };
			timers.push(timer);
			return () => {
				timer.live = false;
			};
		},
	};
	return {
		ports,
		listeners,
		get reads() {
			return reads;
		},
		failReads(on: boolean) {
			throwOnRead = on;
		},
		setFilesSilently(next: FileReport[]) {
			files = next;
		},
		publish(next: FileReport[]) {
			files = next;
			for (const l of [...listeners]) l();
		},
		advance(ms: number) {
			now += ms;
			for (const t of timers) {
				if (!t.live || t.at > now) continue;
				t.live = false;
				t.fn();
			}
		},
	};
}

const report = (overrides: Partial<FileReport> = {}): FileReport => ({
	file: "/p/a.ts",
	seq: 2,
	status: "reloaded",
	version: 5,
	modified: false,
	diagnostics_expected: true,
	diagnostics: null,
	...overrides,
});

describe("awaitFileReport", () => {
	it("resolves at once when the answer is already there", async () => {
		const w = fakeWorld([report({ diagnostics_expected: false })]);
		const out = await awaitFileReport(w.ports, "/p/a.ts", 2, CAPS);
		assert.equal(out.ended, "settled");
		assert.equal(out.waitedMs, 0);
		assert.equal(w.listeners.size, 0, "unsubscribed");
	});

	it("ignores answers to older changes and waits for diagnostics of the reloaded version", async () => {
		const w = fakeWorld([report({ seq: 1, diagnostics_expected: false })]);
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, CAPS);
		w.advance(100);
		w.publish([report()]); // reloaded, diagnostics expected, none yet
		w.advance(100);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]); // stale
		w.advance(150);
		w.publish([report({ diagnostics: { version: 5, total: 0, items: [] } })]);
		const out = await pending;
		assert.equal(out.ended, "settled");
		assert.equal(out.waitedMs, 350);
		assert.equal(out.report?.diagnostics?.version, 5);
	});

	it("gives up at the diagnostics cap with the last report (stale diagnostics stay unsettled)", async () => {
		const w = fakeWorld();
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, CAPS);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]);
		w.advance(1999);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]);
		w.advance(1);
		const out = await pending;
		assert.equal(out.ended, "no diagnostics");
		assert.equal(out.waitedMs, 2000);
		assert.equal(out.report?.diagnostics?.version, 4);
		assert.equal(w.listeners.size, 0);
	});

	it("a read that throws is 'no answer yet', never a rejection", async () => {
		const w = fakeWorld();
		w.failReads(true);
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, { answerMs: 500, diagnosticsMs: 500 });
		w.publish([report({ diagnostics_expected: false })]);
		w.failReads(false);
		w.publish([report({ diagnostics_expected: false })]);
		const out = await pending;
		assert.equal(out.ended, "settled");
		assert.ok(w.reads >= 3);
	});

	it("an abort ends the wait unsettled", async () => {
		const w = fakeWorld();
		const abort = new AbortController();
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, CAPS, abort.signal);
		abort.abort();
		const out = await pending;
		assert.equal(out.ended, "aborted");
		assert.equal(out.report, undefined);
	});

	describe("two stages: the answer cap, then the diagnostics cap only for a reload with a checker", () => {
		interface Case {
			name: string;
			/** When the editor's report lands (ms after the tool), if at all. */
			answerAt: number | null;
			/** The report it writes then. */
			answer?: FileReport;
			ended: string;
			waitedMs: number;
		}
		const CASES: Case[] = [
			{ name: "no answer at all: over at the answer cap", answerAt: null, ended: "no answer", waitedMs: 1000 },
			{
				name: "an answer to an older change only: over at the answer cap",
				answerAt: 100,
				answer: report({ seq: 1 }),
				ended: "no answer",
				waitedMs: 1000,
			},
			{
				name: "a reload with a checker before the answer cap: waits on to the diagnostics cap",
				answerAt: 900,
				answer: report(),
				ended: "no diagnostics",
				waitedMs: 2000,
			},
			{
				name: "a reload without a checker: settled when it lands",
				answerAt: 40,
				answer: report({ diagnostics_expected: false }),
				ended: "settled",
				waitedMs: 40,
			},
			{
				name: "a late reload, after the answer cap: not waited for",
				answerAt: 1200,
				answer: report({ diagnostics_expected: false }),
				ended: "no answer",
				waitedMs: 1000,
			},
		];
		for (const c of CASES) {
			it(c.name, async () => {
				const w = fakeWorld();
				let outcome: { ended: string; waitedMs: number } | undefined;
				void awaitFileReport(w.ports, "/p/a.ts", 2, CAPS).then((out) => {
					outcome = out;
				});
				for (let t = 10; t <= 3000 && outcome === undefined; t += 10) {
					w.advance(10);
					if (t === c.answerAt && c.answer) w.publish([c.answer]);
					await Promise.resolve();
				}
				assert.deepEqual(outcome && { ended: outcome.ended, waitedMs: outcome.waitedMs }, {
					ended: c.ended,
					waitedMs: c.waitedMs,
				});
				assert.equal(w.listeners.size, 0, "unsubscribed");
			});
		}

		it("at the answer cap, looks once more before giving up (an answer whose event is still queued)", async () => {
			const w = fakeWorld();
			const pending = awaitFileReport(w.ports, "/p/a.ts", 2, CAPS);
			w.advance(999);
			const quietly = report({ diagnostics_expected: false });
			// The report is there, but no change was heard: only the last look finds it.
			w.setFilesSilently([quietly]);
			w.advance(1);
			const out = await pending;
			assert.equal(out.ended, "settled");
			assert.equal(out.waitedMs, 1000);
		});
	});
});

describe("awaitFileReport: an editor at work on pi's changes gets longer (answerMaxMs)", () => {
	const EXTENDED: WaitCaps = { answerMs: 1000, answerMaxMs: 5000, diagnosticsMs: 2000 };
	const other = (seq: number) => report({ file: `/p/other-${seq}.ts`, seq, diagnostics_expected: false });
	const ours = report({ seq: 50, diagnostics_expected: false });
	/** Each row: the reports the editor has at the start, then at each second; what the wait ends with, and when. */
	const rows: {
		name: string;
		start: FileReport[];
		steps: FileReport[][];
		ended: string;
		at: number;
		caps?: WaitCaps;
		outstanding?: number;
	}[] = [
		{
			name: "answering others during the wait, then ours at 2.5 s: settled",
			start: [],
			steps: [[other(40)], [other(40), other(41)], [other(40), other(41), ours]],
			ended: "settled",
			at: 2500,
		},
		{
			name: "answering nothing: no answer at the cap, 1 s",
			start: [other(40)],
			steps: [[other(40)], [other(40)], [other(40)]],
			ended: "no answer",
			at: 1000,
		},
		{
			name: "answering others without end, never ours: no answer at answerMaxMs, 5 s",
			start: [],
			steps: Array.from({ length: 8 }, (_, i) => Array.from({ length: i + 1 }, (_, k) => other(10 + k))),
			ended: "no answer",
			at: 5000,
		},
		{
			name: "answers from before the wait prove nothing: no answer at 1 s",
			start: [other(40), other(41)],
			steps: [
				[other(40), other(41)],
				[other(40), other(41)],
			],
			ended: "no answer",
			at: 1000,
		},
		{
			name: "without answerMaxMs no extension: no answer at 1 s though the editor answers others",
			start: [],
			steps: [[other(40)], [other(40), other(41)], [other(40), other(41), ours]],
			ended: "no answer",
			at: 1000,
			caps: CAPS,
		},
		{
			name: "40 changes to answer at once, no answer yet at 1 s: 1 s + 39 x 50 ms, ours at 2.5 s settles",
			start: [],
			steps: [[], [], [ours]],
			ended: "settled",
			at: 2500,
			caps: { ...EXTENDED, answerPerChangeMs: 50 },
			outstanding: 40,
		},
		{
			name: "40 changes to answer at once, never answered: no answer at 2.95 s",
			start: [],
			steps: [[], []],
			ended: "no answer",
			at: 2950,
			caps: { ...EXTENDED, answerPerChangeMs: 50 },
			outstanding: 40,
		},
		{
			name: "one change to answer: the per-change time adds nothing, no answer at 1 s",
			start: [],
			steps: [[], [], [ours]],
			ended: "no answer",
			at: 1000,
			caps: { ...EXTENDED, answerPerChangeMs: 50 },
			outstanding: 1,
		},
	];
	for (const row of rows) {
		it(row.name, async () => {
			const w = fakeWorld(row.start);
			const ports = row.outstanding === undefined ? w.ports : { ...w.ports, outstanding: () => row.outstanding ?? 1 };
			const outcome = awaitFileReport(ports, "/p/a.ts", 50, row.caps ?? EXTENDED);
			let done: { ended: string; waitedMs: number } | undefined;
			void outcome.then((o) => {
				done = o;
			});
			for (const [i, files] of row.steps.entries()) {
				// Half a second before each whole second the editor writes; the whole second is a cap's look.
				w.advance(i === 0 ? 500 : 500);
				w.publish(files);
				w.advance(500);
				await Promise.resolve();
				if (done) break;
			}
			for (let i = 0; i < 100 && !done; i++) {
				w.advance(50);
				await Promise.resolve();
			}
			const out = await outcome;
			assert.equal(out.ended, row.ended);
			assert.equal(out.waitedMs, row.at);
		});
	}
});

describe("waitCapsFor: the answerWaitMs setting scales every cap of the wait", () => {
	it("1000 ms is the default caps; 5000 ms five times each", () => {
		assert.deepEqual(waitCapsFor(1000), WAIT_CAPS);
		assert.deepEqual(waitCapsFor(5000), {
			answerMs: 5000,
			answerMaxMs: 25000,
			answerPerChangeMs: 250,
			diagnosticsMs: 10000,
		});
	});
});
