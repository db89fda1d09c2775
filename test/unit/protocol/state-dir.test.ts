/**
 * src/protocol/state-dir.ts: the state dir's path, the canonical state file names, and the table of trust, create,
 * write and remove cases (test/fixtures/state-dir-cases.ts) that the Neovim writer runs too
 * (test/nvim/state-dir.test.ts).
 */
import assert from "node:assert/strict";
import {
	lstatSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	type Stats,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
	checkStateDir,
	createStateDir,
	type DirInfo,
	judgeStateDir,
	parseStateFileName,
	readPrivateFile,
	removeStateFile,
	resolveStateDir,
	stateFileName,
	writePrivateFile,
	writePrivateFileAsync,
	writeStateFile,
} from "../../../src/protocol/state-dir.ts";
import {
	CONTENT,
	expectedFor,
	observeCase,
	PID,
	type Problem,
	prepareCase,
	removeCase,
	STATE_DIR_CASES,
	type StateDirCase,
} from "../../fixtures/state-dir-cases.ts";

describe("resolveStateDir", () => {
	const cases: { env: Record<string, string | undefined>; platform: string; dir: string }[] = [
		{ env: { XDG_RUNTIME_DIR: "/run/user/1000" }, platform: "linux", dir: "/run/user/1000/pi-ide" },
		{ env: { XDG_RUNTIME_DIR: "/run/user/1000/" }, platform: "linux", dir: "/run/user/1000/pi-ide" },
		{ env: {}, platform: "linux", dir: "/tmp/pi-ide" },
		{ env: { XDG_RUNTIME_DIR: "" }, platform: "darwin", dir: "/tmp/pi-ide" },
		{ env: { XDG_RUNTIME_DIR: "run/user" }, platform: "linux", dir: "/tmp/pi-ide" },
	];
	for (const { env, platform, dir } of cases) {
		it(`${JSON.stringify(env)} on ${platform} -> ${dir}`, () => assert.equal(resolveStateDir(env, platform), dir));
	}
});

describe("parseStateFileName accepts only canonical <pid>.json", () => {
	const cases: [string, number | undefined][] = [
		["1.json", 1],
		["123.json", 123],
		["2147483647.json", 2147483647],
		["0123.json", undefined],
		["00123.json", undefined],
		["0.json", undefined],
		["2147483648.json", undefined],
		["12345678901.json", undefined],
		["+123.json", undefined],
		["-123.json", undefined],
		["123.json.tmp", undefined],
		["123.JSON", undefined],
		[" 123.json", undefined],
		["123 .json", undefined],
		["1e3.json", undefined],
		["0x1f.json", undefined],
		["١٢٣.json", undefined],
		["pi-123.json", undefined],
		[".json", undefined],
	];
	for (const [name, pid] of cases)
		it(`${JSON.stringify(name)} -> ${pid}`, () => assert.equal(parseStateFileName(name), pid));
});

describe("judgeStateDir: reasons and remedies for the user", () => {
	const dir = "/run/user/1000/pi-ide";
	const cases: { info: DirInfo; uid: number | undefined; platform?: string; says: string | null }[] = [
		{ info: { exists: true, type: "directory", uid: 1000, perm: 0o700 }, uid: 1000, says: null },
		{ info: { exists: false }, uid: 1000, says: "does not exist yet (no editor has written to it)" },
		{
			info: { exists: true, type: "link", uid: 1000, perm: 0o777 },
			uid: 1000,
			says: `is a symbolic link (fix: remove it: rm ${dir})`,
		},
		{
			info: { exists: true, type: "file", uid: 1000, perm: 0o600 },
			uid: 1000,
			says: `is not a directory (fix: remove it: rm ${dir})`,
		},
		{
			info: { exists: true, type: "directory", uid: 0, perm: 0o700 },
			uid: 1000,
			says: "is owned by uid 0, not by you (uid 1000) (fix: another user created it; set XDG_RUNTIME_DIR to a private directory)",
		},
		{
			info: { exists: true, type: "directory", uid: 1000, perm: 0o750 },
			uid: 1000,
			says: `has group/other permissions (0750) (fix: chmod 700 ${dir})`,
		},
		{ info: { exists: true, type: "directory", uid: 0, perm: 0o700 }, uid: undefined, says: null },
		{ info: { exists: true, type: "directory", uid: 1000, perm: 0o777 }, uid: 1000, platform: "win32", says: null },
	];
	for (const { info, uid, platform, says } of cases) {
		it(`${JSON.stringify(info)} uid ${uid} ${platform ?? "linux"}: ${says ?? "ok"}`, () => {
			const health = judgeStateDir(dir, info, uid, platform ?? "linux");
			const said = health.ok ? null : `${health.reason}${health.remedy ? ` (fix: ${health.remedy})` : ""}`;
			assert.equal(said, says);
		});
	}
});

function run(c: StateDirCase, dir: string, uid: number): Problem | null {
	const result = (() => {
		switch (c.op) {
			case "check":
				return checkStateDir(dir, uid);
			case "create":
				return createStateDir(dir, uid);
			case "write":
				return writeStateFile(dir, PID, CONTENT, uid);
			case "remove":
				return removeStateFile(dir, PID, uid);
		}
	})();
	if (result.ok) return null;
	assert.notEqual(result.problem, "uninspectable");
	return result.problem as Problem;
}

describe("the state dir table (shared with the Neovim writer)", () => {
	for (const c of STATE_DIR_CASES) {
		it(`${c.op}: ${c.name}`, () => {
			const prepared = prepareCase(c);
			try {
				const problem = run(c, prepared.dir, prepared.uid);
				assert.deepEqual(observeCase(c, prepared, problem), expectedFor(c));
			} finally {
				removeCase(prepared);
			}
		});
	}
});

describe("the state dir table's writes, off the caller's thread (writePrivateFileAsync): the same outcomes", () => {
	for (const c of STATE_DIR_CASES.filter((x) => x.op === "write")) {
		it(c.name, async () => {
			const prepared = prepareCase(c);
			try {
				const result = await writePrivateFileAsync(prepared.dir, stateFileName(PID), CONTENT, prepared.uid);
				if (!result.ok) assert.notEqual(result.problem, "uninspectable");
				const problem = result.ok ? null : (result.problem as Problem);
				assert.deepEqual(observeCase(c, prepared, problem), expectedFor(c));
			} finally {
				removeCase(prepared);
			}
		});
	}
});

describe("write under a restrictive or permissive umask", () => {
	for (const mask of [0o000, 0o077, 0o277]) {
		it(`umask 0${mask.toString(8)}: dir 0700, file 0600`, () => {
			const c = STATE_DIR_CASES.find((x) => x.op === "write" && x.dir.kind === "missing");
			assert.ok(c);
			const prepared = prepareCase(c);
			const old = process.umask(mask);
			try {
				assert.deepEqual(writeStateFile(prepared.dir, PID, CONTENT, prepared.uid), { ok: true });
				assert.deepEqual(observeCase(c, prepared, null), expectedFor(c));
			} finally {
				process.umask(old);
				removeCase(prepared);
			}
		});
	}
});

describe("writePrivateFile: content as a string, bytes or chunks written in order", () => {
	const cases: { name: string; content: string | Uint8Array | Uint8Array[]; expected: string }[] = [
		{ name: "string", content: "héllo", expected: "héllo" },
		{ name: "bytes", content: Buffer.from("héllo"), expected: "héllo" },
		{ name: "chunks", content: [Buffer.from("hé"), Buffer.alloc(0), Buffer.from("llo")], expected: "héllo" },
		{ name: "no chunks", content: [], expected: "" },
	];
	for (const { name, content, expected } of cases) {
		for (const [how, write] of [
			["", async (dir: string) => writePrivateFile(dir, "f.json", content)],
			[" (async)", (dir: string) => writePrivateFileAsync(dir, "f.json", content)],
		] as const) {
			it(`${name}${how}`, async () => {
				const root = mkdtempSync(join(tmpdir(), "pi-ide-write-"));
				try {
					const dir = join(root, "pi-ide");
					assert.deepEqual(await write(dir), { ok: true });
					assert.equal(readFileSync(join(dir, "f.json"), "utf8"), expected);
					assert.equal(lstatSync(join(dir, "f.json")).mode & 0o777, 0o600);
					assert.deepEqual(readdirSync(dir), ["f.json"]);
				} finally {
					rmSync(root, { recursive: true, force: true });
				}
			});
		}
	}
});

it("a write failure names the dir and why", () => {
	const c = STATE_DIR_CASES.find((x) => x.op === "write" && x.expect.problem === "open-permissions");
	assert.ok(c);
	const prepared = prepareCase(c);
	try {
		const result = writeStateFile(prepared.dir, PID, CONTENT, prepared.uid);
		assert.deepEqual(result, {
			ok: false,
			problem: "open-permissions",
			error: `not writing: ${prepared.dir} has group/other permissions (0755) (fix: chmod 700 ${prepared.dir})`,
		});
	} finally {
		removeCase(prepared);
	}
	rmSync(join(prepared.root), { recursive: true, force: true });
});

describe("readPrivateFile: the one read routine for files another process could swap", () => {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-read-"));
	after(() => rmSync(dir, { recursive: true, force: true }));
	const file = (name: string, content = "{}") => {
		const path = join(dir, name);
		writeFileSync(path, content, { mode: 0o600 });
		return path;
	};
	const cases: {
		description: string;
		setUp: () => [string, Stats];
		maxBytes?: number;
		refuse?: (stats: Stats) => string | undefined;
		kind: "text" | "gone" | "problem";
		message?: RegExp;
	}[] = [
		{
			description: "a regular file is read",
			setUp: () => [file("a.json"), lstatSync(join(dir, "a.json"))],
			kind: "text",
		},
		{
			description: "a file removed after its lstat is gone",
			setUp: () => {
				const path = file("b.json");
				const seen = lstatSync(path);
				rmSync(path);
				return [path, seen];
			},
			kind: "gone",
		},
		{
			description: "a file swapped for a symlink after its lstat is refused",
			setUp: () => {
				const path = file("c.json");
				const seen = lstatSync(path);
				rmSync(path);
				symlinkSync(file("target.json"), path);
				return [path, seen];
			},
			kind: "problem",
			message: /^is a symbolic link: refused$/,
		},
		{
			description: "a file replaced by another one after its lstat is gone (read again next time)",
			setUp: () => {
				const path = file("d.json");
				const seen = lstatSync(path);
				renameSync(file("d2.json"), path);
				return [path, seen];
			},
			kind: "gone",
		},
		{
			description: "over the limit is refused",
			setUp: () => [file("e.json", "x".repeat(11)), lstatSync(join(dir, "e.json"))],
			maxBytes: 10,
			kind: "problem",
			message: /^is 11 bytes, over the 10-byte limit$/,
		},
		{
			description: "the caller's refusal applies to the opened file",
			setUp: () => [file("f.json"), lstatSync(join(dir, "f.json"))],
			refuse: (stats) => (stats.mode & 0o077 ? undefined : "is private: refused by the test"),
			kind: "problem",
			message: /^is private: refused by the test$/,
		},
	];
	for (const c of cases) {
		it(c.description, () => {
			const [path, seen] = c.setUp();
			const read = readPrivateFile(path, seen, {
				maxBytes: c.maxBytes ?? 1024,
				...(c.refuse ? { refuse: c.refuse } : {}),
			});
			assert.equal(read.kind, c.kind);
			if (read.kind === "problem") assert.match(read.message, c.message ?? /./);
			if (read.kind === "text") assert.equal(read.text, "{}");
		});
	}
});
