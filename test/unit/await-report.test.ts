import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { awaitFileReport, type WaitPorts } from "../../src/await-report.ts";
import type { EditorState, FileReport } from "../../src/protocol.ts";

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
		const out = await awaitFileReport(w.ports, "/p/a.ts", 2, 2000);
		assert.equal(out.settled, true);
		assert.equal(out.waitedMs, 0);
		assert.equal(w.listeners.size, 0, "unsubscribed");
	});

	it("ignores answers to older changes and waits for diagnostics of the reloaded version", async () => {
		const w = fakeWorld([report({ seq: 1, diagnostics_expected: false })]);
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, 2000);
		w.advance(100);
		w.publish([report()]); // reloaded, diagnostics expected, none yet
		w.advance(100);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]); // stale
		w.advance(150);
		w.publish([report({ diagnostics: { version: 5, total: 0, items: [] } })]);
		const out = await pending;
		assert.equal(out.settled, true);
		assert.equal(out.waitedMs, 350);
		assert.equal(out.report?.diagnostics?.version, 5);
	});

	it("gives up at the cap with the last report (stale diagnostics stay unsettled)", async () => {
		const w = fakeWorld();
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, 2000);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]);
		w.advance(1999);
		w.publish([report({ diagnostics: { version: 4, total: 1, items: [] } })]);
		w.advance(1);
		const out = await pending;
		assert.equal(out.settled, false);
		assert.equal(out.waitedMs, 2000);
		assert.equal(out.report?.diagnostics?.version, 4);
		assert.equal(w.listeners.size, 0);
	});

	it("a read that throws is 'no answer yet', never a rejection", async () => {
		const w = fakeWorld();
		w.failReads(true);
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, 500);
		w.publish([report({ diagnostics_expected: false })]);
		w.failReads(false);
		w.publish([report({ diagnostics_expected: false })]);
		const out = await pending;
		assert.equal(out.settled, true);
		assert.ok(w.reads >= 3);
	});

	it("an abort ends the wait unsettled", async () => {
		const w = fakeWorld();
		const abort = new AbortController();
		const pending = awaitFileReport(w.ports, "/p/a.ts", 2, 2000, abort.signal);
		abort.abort();
		const out = await pending;
		assert.equal(out.settled, false);
		assert.equal(out.report, undefined);
	});
});
