import assert from "node:assert/strict";
import type { Stats } from "node:fs";
import { describe, it } from "node:test";
import { isUnchanged, RACY_WINDOW_MS, readKey, signatureOf, versionOf } from "../../../src/protocol/file-version.ts";

/** The fields of an lstat result the rule reads. */
function stats(over: Partial<Stats> = {}): Stats {
	return {
		dev: 1,
		ino: 100,
		size: 42,
		mtimeMs: 1_000_000,
		ctimeMs: 1_000_000,
		mode: 0o100600,
		uid: 1000,
		...over,
	} as Stats;
}

describe("file-version: when a file read earlier may be used again unread", () => {
	const cases: { name: string; readAt: number; read: Partial<Stats>; now: Partial<Stats>; unchanged: boolean }[] = [
		{
			name: "settled, the same file: used again",
			readAt: 1_000_000 + RACY_WINDOW_MS + 1,
			read: {},
			now: {},
			unchanged: true,
		},
		{
			name: "read within the window of its last change: read again (a second write may share the tick)",
			readAt: 1_000_000 + 1,
			read: {},
			now: {},
			unchanged: false,
		},
		{
			name: "exactly at the window's end: read again",
			readAt: 1_000_000 + RACY_WINDOW_MS,
			read: {},
			now: {},
			unchanged: false,
		},
		{
			name: "a change of status (ctime) after the content: the later time counts",
			readAt: 1_000_000 + RACY_WINDOW_MS + 1,
			read: { ctimeMs: 1_000_000 + 10 },
			now: { ctimeMs: 1_000_000 + 10 },
			unchanged: false,
		},
		{
			name: "times in the future (a clock set back): never settled",
			readAt: 1_000_000,
			read: { mtimeMs: 9_000_000, ctimeMs: 9_000_000 },
			now: { mtimeMs: 9_000_000, ctimeMs: 9_000_000 },
			unchanged: false,
		},
		...(["dev", "ino", "size", "mtimeMs", "ctimeMs", "mode", "uid"] as const).map((field) => ({
			name: `settled, but its ${field} differs: read again`,
			readAt: 1_000_000 + RACY_WINDOW_MS + 1,
			read: {},
			now: { [field]: 7 },
			unchanged: false,
		})),
	];
	for (const c of cases) {
		it(c.name, () => {
			assert.equal(isUnchanged(versionOf(stats(c.read), c.readAt), stats(c.now)), c.unchanged);
		});
	}

	it("nothing read yet: read", () => {
		assert.equal(isUnchanged(undefined, stats()), false);
	});

	it("a scaled window (tests) moves the boundary", () => {
		assert.equal(versionOf(stats(), 1_000_000 + 31, 30).settled, true);
		assert.equal(versionOf(stats(), 1_000_000 + 30, 30).settled, false);
		assert.equal(signatureOf(stats()), versionOf(stats(), 0).signature);
	});

	it("readKey: the signature once settled; before, a key that matches no other (read again)", () => {
		const settled = 1_000_000 + RACY_WINDOW_MS + 1;
		assert.equal(readKey(stats(), settled), readKey(stats(), settled));
		assert.equal(readKey(stats(), settled), signatureOf(stats()));
		assert.notEqual(readKey(stats(), 1_000_001), readKey(stats(), 1_000_001));
	});
});
