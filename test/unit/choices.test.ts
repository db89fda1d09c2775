import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ChoiceStore } from "../../src/choice-store.ts";
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
} from "../../src/choices.ts";

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
			"same pid, start time unknown: the app must match",
			pick(1, nvim(), null),
			[live(1, nvim(), null)],
			"pick 1 same editor",
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
		assert.deepEqual(s.load(), { choices: { version: 1, projects: {} }, problems: [] });
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
		// Writing replaces the link itself (rename), never the file it points to.
		assert.equal(s.remember("/b", { kind: "off", at: 1 }), null);
		assert.match(readFileSync(target, "utf8"), /"\/a"/);
	});

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
