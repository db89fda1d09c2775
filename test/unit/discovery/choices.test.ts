import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs, {
	chmodSync,
	chownSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ChoiceStore } from "../../../src/discovery/choice-store.ts";
import {
	type ChoicesFile,
	type EditorFingerprint,
	formatChoices,
	type LiveEditor,
	MAX_PROJECTS,
	parseChoices,
	type RememberedChoice,
	resolveRemembered,
	withChoice,
} from "../../../src/discovery/choices.ts";

const nvim = (cwd = "/p", argv: string[] = []): EditorFingerprint => ({ app: "nvim", product: null, cwd, argv });
const pick = (pid: number, editor = nvim(), startedAt: number | null = 100): RememberedChoice => ({
	kind: "pick",
	pid,
	startedAt,
	editor,
	at: 1000,
});
const live = (pid: number, fingerprint = nvim(), startedAt: number | null = 100): LiveEditor => ({
	pid,
	startedAt,
	fingerprint,
});

describe("resolveRemembered", () => {
	const cases: Array<[string, RememberedChoice | undefined, LiveEditor[], string]> = [
		["nothing remembered", undefined, [live(1)], "none"],
		["off", { kind: "off", at: 5 }, [live(1)], "off"],
		["the picked editor still runs", pick(1), [live(1), live(2)], "pick 1 same editor"],
		["same pid, start time within the slack", pick(1, nvim(), 100), [live(1, nvim(), 100.8)], "pick 1 same editor"],
		[
			"same pid, start time unknown: the whole fingerprint matches",
			pick(1, nvim(), null),
			[live(1, nvim(), null)],
			"pick 1 same editor",
		],
		[
			"same pid and app, remembered start time unknown, another cwd (after a reboot): not that editor",
			pick(1, nvim("/p"), null),
			[live(1, nvim("/elsewhere"), 100)],
			"absent",
		],
		[
			"same pid and app, live start time unknown (not Linux), other argv: not that editor",
			pick(1, nvim("/p", ["a.ts"]), 100),
			[live(1, nvim("/p", ["b.ts"]), null)],
			"absent",
		],
		[
			"same pid, start time unknown, another product: not that editor",
			pick(1, { ...nvim(), app: "jetbrains", product: "WebStorm" }, null),
			[live(1, { ...nvim(), app: "jetbrains", product: "PyCharm" }, null)],
			"absent",
		],
		[
			"same pid, another process (reused): not the same editor, and it does not look the same",
			pick(1),
			[live(1, { ...nvim(), app: "vscode" }, 500)],
			"absent",
		],
		["restarted: one live editor looks the same", pick(1), [live(2), live(3, nvim("/q"))], "pick 2 restarted editor"],
		["restarted twice over: ambiguous", pick(1), [live(2), live(3)], "ambiguous 2,3"],
		[
			"argv tells them apart",
			pick(1, nvim("/p", ["a.ts"])),
			[live(2), live(3, nvim("/p", ["a.ts"]))],
			"pick 3 restarted editor",
		],
		[
			"product tells them apart",
			pick(1, { ...nvim(), app: "jetbrains", product: "WebStorm" }),
			[live(2, { ...nvim(), app: "jetbrains", product: "PyCharm" })],
			"absent",
		],
		["not running", pick(1), [live(2, nvim("/other"))], "absent"],
	];
	for (const [name, choice, editors, expected] of cases) {
		it(name, () => {
			const r = resolveRemembered(choice, editors);
			const got =
				r.kind === "pick"
					? `pick ${r.pid} ${r.how}`
					: r.kind === "ambiguous"
						? `ambiguous ${r.pids.join(",")}`
						: r.kind;
			assert.equal(got, expected);
		});
	}
});

describe("parseChoices", () => {
	const good = formatChoices(
		withChoice(withChoice({ version: 1, projects: {} }, "/a", pick(7)), "/b", { kind: "off", at: 3 }),
	);
	const cases: Array<[string, string, string[], RegExp[]]> = [
		["round trip", good, ["/a", "/b"], []],
		["not JSON", "{", [], [/not JSON/]],
		["not an object", "[]", [], [/not a JSON object/]],
		["unknown version", '{"version":2,"projects":{}}', [], [/unknown version 2/]],
		["projects not an object", '{"version":1,"projects":[]}', [], [/"projects" is not an object/]],
		[
			"bad entries are dropped, good ones kept",
			JSON.stringify({
				version: 1,
				projects: {
					"/ok": { kind: "off", at: 1 },
					relative: { kind: "off", at: 1 },
					"/badkind": { kind: "maybe", at: 1 },
					"/badpid": { kind: "pick", pid: -1, started_at: null, editor: nvim(), at: 1 },
					"/badargv": { kind: "pick", pid: 3, started_at: null, editor: { ...nvim(), argv: [1] }, at: 1 },
					"/noat": { kind: "off" },
					"/proto": { kind: "pick", pid: 3, started_at: "x", editor: nvim(), at: 1 },
				},
			}),
			["/ok"],
			[/relative/, /badkind/, /badpid/, /badargv/, /noat/, /proto/],
		],
	];
	for (const [name, text, projects, problems] of cases) {
		it(name, () => {
			const parsed = parseChoices(text);
			assert.deepEqual(Object.keys(parsed.choices.projects).sort(), projects);
			assert.equal(parsed.problems.length, problems.length, parsed.problems.join("\n"));
			for (const [i, re] of problems.entries()) assert.match(parsed.problems[i] ?? "", re);
		});
	}
	it("round trip keeps every field", () => {
		assert.deepEqual(parseChoices(good).choices.projects["/a"], pick(7));
	});
});

describe("withChoice", () => {
	it("sets, replaces, forgets, and keeps the newest MAX_PROJECTS", () => {
		let file: ChoicesFile = { version: 1, projects: {} };
		file = withChoice(file, "/a", pick(1));
		file = withChoice(file, "/a", { kind: "off", at: 2000 });
		assert.deepEqual(file.projects["/a"], { kind: "off", at: 2000 });
		file = withChoice(file, "/a", null);
		assert.deepEqual(file.projects, {});
		for (let i = 0; i <= MAX_PROJECTS; i++) file = withChoice(file, `/p${i}`, { kind: "off", at: i });
		assert.equal(Object.keys(file.projects).length, MAX_PROJECTS);
		assert.equal(file.projects["/p0"], undefined, "the oldest is forgotten");
	});
});

describe("ChoiceStore (real files)", () => {
	const roots: string[] = [];
	after(() => {
		for (const root of roots) rmSync(root, { recursive: true, force: true });
	});
	const store = () => {
		const root = mkdtempSync(join(tmpdir(), "pi-ide-choices-"));
		roots.push(root);
		return { root, store: new ChoiceStore(join(root, "agent"), process.getuid?.() ?? -1) };
	};

	it("nothing stored yet: empty, no problem", () => {
		const { store: s } = store();
		assert.deepEqual(s.load(), { choices: { version: 1, projects: {} }, problems: [], replaceable: true });
	});

	it("remembers atomically in a 0700 dir, 0600 file, no temp left; two projects do not undo each other", () => {
		const { store: s } = store();
		assert.equal(s.remember("/a", pick(1)), null);
		assert.equal(s.remember("/b", { kind: "off", at: 1 }), null);
		assert.deepEqual(Object.keys(s.load().choices.projects).sort(), ["/a", "/b"]);
		assert.equal(statSync(s.dir).mode & 0o777, 0o700);
		assert.equal(statSync(s.path).mode & 0o777, 0o600);
		assert.deepEqual(
			readFileSync(s.path, "utf8").includes('"started_at"'),
			true,
			"snake_case on disk, like the protocol",
		);
		assert.equal(s.remember("/a", null), null);
		assert.deepEqual(Object.keys(s.load().choices.projects), ["/b"]);
	});

	it("a bad file is a problem, not a crash, and the next remember replaces it", () => {
		const { store: s } = store();
		mkdirSync(s.dir, { recursive: true, mode: 0o700 });
		writeFileSync(s.path, "{not json", { mode: 0o600 });
		const loaded = s.load();
		assert.deepEqual(loaded.choices.projects, {});
		assert.match(loaded.problems[0] ?? "", /choices\.json: not JSON/);
		assert.equal(s.remember("/a", pick(1)), null);
		assert.deepEqual(s.load().problems, []);
	});

	it("a symlinked file is not followed", () => {
		const { root, store: s } = store();
		mkdirSync(s.dir, { recursive: true, mode: 0o700 });
		const target = join(root, "elsewhere.json");
		writeFileSync(target, formatChoices(withChoice({ version: 1, projects: {} }, "/a", pick(1))));
		symlinkSync(target, s.path);
		const loaded = s.load();
		assert.deepEqual(loaded.choices.projects, {});
		assert.match(loaded.problems[0] ?? "", /not a regular file/);
		// Neither the link nor the file it points to is written.
		assert.match(s.remember("/b", { kind: "off", at: 1 }) ?? "", /choice not remembered: .*not a regular file/);
		assert.match(readFileSync(target, "utf8"), /"\/a"/);
		assert.equal(lstatSync(s.path).isSymbolicLink(), true);
	});

	/**
	 * remember() replaces the file only when it is missing or its contents were read and found invalid; after a
	 * problem reading it (its contents unknown: other projects' choices may be in it) it writes nothing.
	 */
	interface ReplaceCase {
		name: string;
		/** Put the file in place (the store's dir exists, 0700). */
		prepare: (path: string) => void;
		/** Does remember("/new", ...) write the file? */
		replaced: boolean;
	}
	const others = formatChoices(withChoice({ version: 1, projects: {} }, "/other-project", pick(1)));
	const replaceCases: ReplaceCase[] = [
		{ name: "missing", prepare: () => {}, replaced: true },
		{ name: "not JSON", prepare: (path) => writeFileSync(path, "{", { mode: 0o600 }), replaced: true },
		{
			name: "an unknown version",
			prepare: (path) => writeFileSync(path, '{"version":9,"projects":{}}', { mode: 0o600 }),
			replaced: true,
		},
		{
			name: "over the size limit",
			prepare: (path) => writeFileSync(path, " ".repeat(300 * 1024), { mode: 0o600 }),
			replaced: true,
		},
		{
			name: "owned by another user (needs root: the tests run as root)",
			prepare: (path) => {
				writeFileSync(path, others, { mode: 0o600 });
				chownSync(path, 65534, 65534);
			},
			replaced: false,
		},
		{
			name: "a directory",
			prepare: (path) => mkdirSync(path),
			replaced: false,
		},
		{
			name: "a FIFO",
			prepare: (path) => execFileSync("mkfifo", [path]),
			replaced: false,
		},
	];
	for (const { name, prepare, replaced } of replaceCases) {
		it(`remember over a file that is ${name}: ${replaced ? "replaced" : "left alone, with a problem"}`, () => {
			const { store: s } = store();
			mkdirSync(s.dir, { recursive: true, mode: 0o700 });
			prepare(s.path);
			const before = lstatSync(s.path, { throwIfNoEntry: false });
			const problem = s.remember("/new", { kind: "off", at: 5 });
			if (replaced) {
				assert.equal(problem, null);
				assert.deepEqual(Object.keys(s.load().choices.projects), ["/new"]);
			} else {
				assert.match(problem ?? "", /choice not remembered: .*left as it is/);
				const after = lstatSync(s.path);
				assert.deepEqual([after.ino, after.mtimeMs], [before?.ino, before?.mtimeMs], "the file is untouched");
			}
		});
	}

	/** I/O problems no file on disk can stage portably (as root): the store's lstat is made to misbehave. */
	interface IoCase {
		name: string;
		/** What the store's lstat of choices.json does instead (`real`: the real lstat of it). */
		lstat: (real: () => fs.Stats) => fs.Stats;
		problem: RegExp;
	}
	const ioCases: IoCase[] = [
		{
			name: "lstat fails with EACCES",
			lstat: () => {
				throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
			},
			problem: /cannot be read: EACCES/,
		},
		{
			name: "the file is replaced on every read",
			lstat: (real) => {
				const stats = real();
				return Object.assign(Object.create(Object.getPrototypeOf(stats)), stats, { ino: stats.ino + 1 });
			},
			problem: /kept changing while read/,
		},
	];
	for (const { name, lstat, problem: expected } of ioCases) {
		it(`remember after an I/O problem (${name}): nothing written, other projects' choices kept`, () => {
			const { store: s } = store();
			mkdirSync(s.dir, { recursive: true, mode: 0o700 });
			writeFileSync(s.path, others, { mode: 0o600 });
			const real = fs.lstatSync;
			const mutableFs = fs as { lstatSync: typeof fs.lstatSync };
			mutableFs.lstatSync = ((p: string, options?: object) =>
				p === s.path ? lstat(() => real(p) as fs.Stats) : real(p, options as never)) as typeof fs.lstatSync;
			syncBuiltinESMExports();
			let problem: string | null;
			try {
				problem = s.remember("/new", { kind: "off", at: 5 });
			} finally {
				mutableFs.lstatSync = real;
				syncBuiltinESMExports();
			}
			assert.match(problem ?? "", /choice not remembered: /);
			assert.match(problem ?? "", expected);
			assert.deepEqual(Object.keys(s.load().choices.projects), ["/other-project"]);
		});
	}

	it("an oversized file is refused", () => {
		const { store: s } = store();
		mkdirSync(s.dir, { recursive: true, mode: 0o700 });
		writeFileSync(s.path, " ".repeat(300 * 1024), { mode: 0o600 });
		assert.match(s.load().problems[0] ?? "", /over/);
	});

	it("an unwritable dir is a problem, not a crash", () => {
		const { store: s } = store();
		mkdirSync(s.dir, { recursive: true, mode: 0o700 });
		writeFileSync(join(s.dir, "x"), "");
		if ((process.getuid?.() ?? 0) === 0) {
			// root ignores permissions: make the dir a file instead
			rmSync(s.dir, { recursive: true });
			writeFileSync(s.dir, "");
		} else chmodSync(s.dir, 0o500);
		assert.match(s.remember("/a", pick(1)) ?? "", /choice not remembered|cannot/);
	});
});
