import assert from "node:assert/strict";
import fs, { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { basename, dirname, join } from "node:path";
import { describe, it } from "node:test";
import { StateDirScanner } from "../../../src/discovery/scan.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import { makeState, privateStateDirs, writeStateFile } from "../../helpers/state-files.ts";

const UID = process.getuid?.() ?? 0;
const privateDir = privateStateDirs("pi-ide-scan-");

/** A valid state of editor `pid` (plus any extra, unknown fields); see makeState. */
function validState(pid: number, extra: Record<string, unknown> = {}): EditorState & Record<string, unknown> {
	return { ...makeState({ pid, cwd: "/p", timestamp: 1, active_buffer: { file: "/p/a.ts" } }), ...extra };
}

/** Write `<dir>/<name>`: a state as JSON, a string as it is. */
function put(dir: string, name: string, content: object | string): string {
	return writeStateFile(dir, typeof content === "string" ? {} : content, {
		name,
		...(typeof content === "string" ? { text: content } : {}),
	});
}

describe("a scanner over an untrusted dir", () => {
	it("a scanner over an insecure dir reads nothing", () => {
		const dir = privateDir();
		put(dir, "100.json", validState(100));
		chmodSync(dir, 0o755);
		const result = new StateDirScanner(dir, UID).scan();
		assert.equal(result.health.ok, false);
		assert.deepEqual(result.editors, []);
	});
});

describe("StateDirScanner: only canonical <pid>.json names are state files", () => {
	// [name, the pid its content claims]; every one would alias <pid>.json if digits were read loosely.
	const aliases: [string, number][] = [
		["0300.json", 300],
		["00300.json", 300],
		["0.json", 0],
		["+300.json", 300],
		["300.0.json", 300],
		["1e2.json", 100],
		["٣٠٠.json", 300],
	];
	for (const [name, pid] of aliases) {
		it(`${name} is ignored, silently`, () => {
			const dir = privateDir();
			put(dir, name, validState(pid));
			const result = new StateDirScanner(dir, UID).scan();
			assert.deepEqual([result.editors, result.diagnostics], [[], []]);
		});
	}
	it("the canonical name is read", () => {
		const dir = privateDir();
		put(dir, "300.json", validState(300));
		assert.deepEqual(
			new StateDirScanner(dir, UID).scan().editors.map((e) => e.pid),
			[300],
		);
	});
});

describe("StateDirScanner: which files are trusted", () => {
	const dir = privateDir();
	put(dir, "100.json", validState(100));
	put(dir, "101.json", "{ not json");
	put(dir, "102.json", validState(999));
	put(dir, "103.json", { pid: 103, cwd: "/p" });
	put(dir, "104.json", validState(104, { future_field: { nested: true } }));
	put(dir, "105.json.tmp", validState(105));
	put(dir, "notes.txt", "hello");
	put(dir, "abc.json", validState(106));
	put(dir, "107.json", `${JSON.stringify(validState(107))}${" ".repeat(1024 * 1024)}`);
	const elsewhere = join(dir, "..", "outside.json");
	writeFileSync(elsewhere, JSON.stringify(validState(108)));
	symlinkSync(elsewhere, join(dir, "108.json"));
	mkdirSync(join(dir, "109.json"));
	put(dir, "110.json", validState(110));
	chownSync(join(dir, "110.json"), 65534, 65534); // needs root: CI and the dev machines run tests as root

	const result = new StateDirScanner(dir, UID).scan();
	const problems = new Map(result.diagnostics.map((d) => [d.path.slice(dir.length + 1), d.message]));

	it("keeps the valid files, unknown fields tolerated", () => {
		assert.deepEqual(result.editors.map((e) => e.pid).sort(), [100, 104]);
	});

	const expected: Array<[string, RegExp]> = [
		["101.json", /^invalid state file: invalid JSON/],
		["102.json", /^pid field 999 does not match the file name 102\.json$/],
		["103.json", /^invalid state file: .*active_buffer/],
		["107.json", /over the 1048576-byte limit/],
		["108.json", /symbolic link: refused/],
		["109.json", /not a regular file/],
		["110.json", /owned by uid 65534/],
	];
	for (const [name, message] of expected) {
		it(`${name}: ${message.source}`, () => assert.match(problems.get(name) ?? "(no diagnostic)", message));
	}

	it("ignores *.tmp and names that are not <digits>.json, silently", () => {
		assert.equal(problems.size, expected.length);
	});

	it("rescans from cache and sees changes, additions and removals", () => {
		const scanner = new StateDirScanner(dir, UID);
		scanner.scan();
		put(dir, "100.json", validState(100, { app: "vscode" }));
		rmSync(join(dir, "104.json"));
		put(dir, "111.json", validState(111));
		const again = scanner.scan();
		assert.deepEqual(again.editors.map((e) => [e.pid, e.state.app]).sort(), [
			[100, "vscode"],
			[111, "nvim"],
		]);
	});

	it('scan("changed") re-reads only what a watcher named; scan("verify") sees every change', () => {
		const dir = privateDir();
		const scanner = new StateDirScanner(dir, UID);
		put(dir, "200.json", validState(200));
		put(dir, "201.json", validState(201));
		scanner.scan();
		put(dir, "200.json", validState(200, { app: "changed-unreported" }));
		put(dir, "201.json", validState(201, { app: "changed-reported" }));
		scanner.markChanged("201.json");
		put(dir, "202.json", validState(202));
		const apps = (result: ReturnType<StateDirScanner["scan"]>) =>
			Object.fromEntries(result.editors.filter((e) => e.pid >= 200).map((e) => [e.pid, e.state.app]));
		assert.deepEqual(apps(scanner.scan("changed")), { 200: "nvim", 201: "changed-reported", 202: "nvim" });
		assert.deepEqual(apps(scanner.scan("verify")), { 200: "changed-unreported", 201: "changed-reported", 202: "nvim" });
	});

	it("readOne re-reads a single editor and reports a vanished one as gone", () => {
		const scanner = new StateDirScanner(dir, UID);
		assert.equal(scanner.readOne(100).kind, "editor");
		assert.equal(scanner.readOne(4_000_000).kind, "gone");
	});
});

describe("StateDirScanner: an editor that rewrites its file while pi reads it", () => {
	/**
	 * Run `body` while every lstat of `path` is followed, before the scanner opens the file, by the editor's
	 * next write (a new file renamed over the old one), at most `rewrites` times. The scanner imports
	 * lstatSync from node:fs; syncBuiltinESMExports makes that binding see the wrapper.
	 */
	function whileRewriting<T>(path: string, rewrites: number, body: () => T): T {
		const real = fs.lstatSync;
		const mutableFs = fs as { lstatSync: typeof fs.lstatSync };
		let left = rewrites;
		let app = 0;
		mutableFs.lstatSync = ((p: string, options?: object) => {
			const stats = real(p, options as never);
			if (p === path && left > 0) {
				left -= 1;
				app += 1;
				put(dirname(path), basename(path), validState(Number(basename(path, ".json")), { app: `rewrite-${app}` }));
			}
			return stats;
		}) as typeof fs.lstatSync;
		syncBuiltinESMExports();
		try {
			return body();
		} finally {
			mutableFs.lstatSync = real;
			syncBuiltinESMExports();
		}
	}

	const cases: { name: string; rewrites: number; expect: string }[] = [
		{ name: "one write between lstat and open: the newer state", rewrites: 1, expect: "rewrite-1" },
		{ name: "four writes in a row: still found, the newest state", rewrites: 4, expect: "rewrite-4" },
		{ name: "a file replaced on every look: skipped with a diagnostic", rewrites: 100, expect: "problem" },
	];
	for (const { name, rewrites, expect } of cases) {
		it(name, () => {
			const dir = privateDir();
			const path = put(dir, "300.json", validState(300));
			const scanner = new StateDirScanner(dir, UID);
			const result = whileRewriting(path, rewrites, () => scanner.scan());
			if (expect === "problem") {
				assert.deepEqual(result.editors, []);
				assert.match(result.diagnostics[0]?.message ?? "", /replaced 5 times while being read/);
			} else {
				assert.deepEqual(
					result.editors.map((e) => e.state.app),
					[expect],
				);
				assert.deepEqual(result.diagnostics, []);
				// The read right before injecting (readOne) holds up the same way.
				const one = whileRewriting(path, 1, () => scanner.readOne(300));
				assert.equal(one.kind === "editor" && one.record.state.app, "rewrite-1");
			}
		});
	}
});

describe("StateDirScanner.removeLeftover: only the very file judged, only ours, only in a trusted dir", () => {
	interface Case {
		name: string;
		/** What happens to `path` (in `dir`) between the scan that judged it and the removal. */
		meanwhile: (path: string, dir: string) => void;
		removed: boolean;
	}
	const cases: Case[] = [
		{ name: "unchanged: removed", meanwhile: () => {}, removed: true },
		{
			name: "rewritten (a new editor renamed its file over it): stays",
			meanwhile: (path, dir) => put(dir, basename(path), validState(Number(basename(path, ".json")), { app: "new" })),
			removed: false,
		},
		{
			name: "written in place (same inode, new mtime): stays",
			meanwhile: (path) => {
				const later = Date.now() / 1000 + 5;
				fs.utimesSync(path, later, later);
			},
			removed: false,
		},
		{
			name: "replaced by a symlink: stays",
			meanwhile: (path, dir) => {
				const target = join(dir, "..", "target.json");
				writeFileSync(target, "{}");
				rmSync(path);
				symlinkSync(target, path);
			},
			removed: false,
		},
		{
			name: "now another user's (needs root: the tests run as root): stays",
			meanwhile: (path) => chownSync(path, 65534, 65534),
			removed: false,
		},
		{
			name: "the dir is no longer trusted (0755): stays",
			meanwhile: (_path, dir) => chmodSync(dir, 0o755),
			removed: false,
		},
	];
	for (const { name, meanwhile, removed } of cases) {
		it(name, () => {
			const dir = privateDir();
			const path = put(dir, "400.json", validState(400));
			const scanner = new StateDirScanner(dir, UID);
			const [record] = scanner.scan().editors;
			assert.ok(record);
			meanwhile(path, dir);
			assert.equal(scanner.removeLeftover(record), removed);
			assert.equal(fs.existsSync(path) || fs.lstatSync(path, { throwIfNoEntry: false }) !== undefined, !removed);
		});
	}

	// v0.5: a gone editor's unsaved buffers go with its state file; only a regular file of ours.
	const sidecars: { name: string; file?: string; make: (path: string) => void; removed: boolean }[] = [
		{
			name: "its <pid>.buffers.json: removed with it",
			make: (p) => writeFileSync(p, "{}", { mode: 0o600 }),
			removed: true,
		},
		{
			name: "another user's <pid>.buffers.json: stays",
			make: (p) => {
				writeFileSync(p, "{}", { mode: 0o600 });
				chownSync(p, 65534, 65534);
			},
			removed: false,
		},
		{ name: "a directory named <pid>.buffers.json: stays", make: (p) => fs.mkdirSync(p), removed: false },
		{
			name: "its <pid>.answers.json (v0.5 show and ask): removed with it",
			file: "400.answers.json",
			make: (p) => writeFileSync(p, "{}", { mode: 0o600 }),
			removed: true,
		},
		{
			name: "a symlink named <pid>.answers.json: stays",
			file: "400.answers.json",
			make: (p) => fs.symlinkSync("/dev/null", p),
			removed: false,
		},
	];
	for (const c of sidecars) {
		it(c.name, () => {
			const dir = privateDir();
			put(dir, "400.json", validState(400));
			const sidecar = join(dir, c.file ?? "400.buffers.json");
			c.make(sidecar);
			const scanner = new StateDirScanner(dir, UID);
			const [record] = scanner.scan().editors;
			assert.ok(record);
			assert.equal(scanner.removeLeftover(record), true);
			assert.equal(fs.lstatSync(sidecar, { throwIfNoEntry: false }) === undefined, c.removed);
		});
	}
});
