import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import {
	bestTier,
	MAX_ARGV_PROBES,
	type Ranked,
	rankEditors,
	scoreEditor,
	type Tier,
} from "../../../src/discovery/tiers.ts";
import { nodePathProbe } from "../../../src/protocol/path-probe.ts";
import { isInside, MAX_PATH_BYTES, type PathProbe, resolveReal } from "../../../src/protocol/paths.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import { makeState } from "../../helpers/state-files.ts";

/**
 * A fake file system: "dir", "file", or "->target" (a symlink). Parents of every
 * entry exist as directories. realpath resolves symlinks component by component,
 * as the kernel does.
 */
function fakeProbe(entries: Record<string, string>): PathProbe {
	const kinds = new Map<string, string>([["/", "dir"]]);
	for (const [entry, kind] of Object.entries(entries)) {
		kinds.set(entry, kind);
		for (let parent = path.dirname(entry); !kinds.has(parent); parent = path.dirname(parent)) kinds.set(parent, "dir");
	}
	const realpath = (target: string): string | null => {
		let current = "/";
		const pending = target.split("/").filter((part) => part !== "" && part !== ".");
		for (let hops = 0; pending.length > 0; ) {
			const part = pending.shift() ?? "";
			const next = part === ".." ? path.dirname(current) : path.join(current, part);
			const kind = kinds.get(next);
			if (kind === undefined) return null;
			if (kind.startsWith("->")) {
				if (++hops > 40) return null;
				const link = kind.slice(2);
				pending.unshift(...link.split("/").filter((p) => p !== ""));
				current = link.startsWith("/") ? "/" : current;
				continue;
			}
			if (kind === "file" && pending.length > 0) return null;
			current = next;
		}
		return current;
	};
	return {
		realpath,
		isDirectory: (target) => {
			const real = realpath(target);
			return real !== null && kinds.get(real) === "dir";
		},
	};
}

const FS = fakeProbe({
	"/home/u/Projects/x/src/main.ts": "file",
	"/home/u/Projects/x/sub/deep": "dir",
	"/home/u/Projects/xy/file.ts": "file",
	"/home/u/Projects/other/a.ts": "file",
	"/home/u/Projects/x-link": "->/home/u/Projects/x",
	"/home/u/Projects/x/in-link": "->/home/u/Projects/other",
	"/home/u/Projects/notes.txt": "file",
	"/l/proj": "->/home/u/Projects/x",
	"/vault/Notes/foo.md": "file",
});

function editor(cwd: string, file: string | null = null, argv?: string[], timestamp = 100): EditorState {
	return makeState({
		pid: 10,
		cwd,
		timestamp,
		...(argv === undefined ? {} : { argv }),
		active_buffer: {
			file,
			name: file === null ? "" : path.basename(file),
			language: null,
			cursor: { line: 1, column: 1 },
			lines_total: 1,
		},
	});
}

const PI = "/home/u/Projects/x";

describe("isInside", () => {
	const cases: [string, string, boolean][] = [
		["/a/b", "/a/b", true],
		["/a/b/c", "/a/b", true],
		["/a/bc", "/a/b", false],
		["/a", "/a/b", false],
		["/a/b", "/", true],
		["/", "/", true],
		["/a/b-c/d", "/a/b", false],
	];
	for (const [child, parent, expected] of cases) {
		it(`${child} inside ${parent} -> ${expected}`, () => assert.equal(isInside(child, parent), expected));
	}
});

describe("resolveReal", () => {
	const cases: [string, string, string][] = [
		["existing dir", "/home/u/Projects/x", "/home/u/Projects/x"],
		["trailing slash", "/home/u/Projects/x/", "/home/u/Projects/x"],
		["double slashes and dot", "/home/u//Projects/./x", "/home/u/Projects/x"],
		["symlinked dir", "/home/u/Projects/x-link", "/home/u/Projects/x"],
		["file below symlink", "/l/proj/src/main.ts", "/home/u/Projects/x/src/main.ts"],
		["new file in existing dir", "/home/u/Projects/x/src/new.ts", "/home/u/Projects/x/src/new.ts"],
		["new file under symlink", "/l/proj/new/dir/file.ts", "/home/u/Projects/x/new/dir/file.ts"],
		["nothing exists but root", "/nope/a/b", "/nope/a/b"],
		["relative stays relative", "Notes/./foo.md", "Notes/foo.md"],
	];
	for (const [description, input, expected] of cases) {
		it(description, () => assert.equal(resolveReal(input, FS), expected));
	}
});

describe("scoreEditor (fake file system)", () => {
	const cases: [string, EditorState, string, Tier | null][] = [
		["same cwd", editor(PI), PI, 0],
		["same cwd, trailing slash on pi side", editor(PI), `${PI}/`, 0],
		["same cwd, trailing slash on editor side", editor(`${PI}/`), PI, 0],
		["same cwd through a symlink", editor("/l/proj"), PI, 0],
		["pi cwd is the symlink", editor(PI), "/home/u/Projects/x-link", 0],
		["cwd inside", editor(`${PI}/sub/deep`), PI, 1],
		["cwd inside, not existing any more", editor(`${PI}/gone`), PI, 1],
		["sibling with a common prefix", editor("/home/u/Projects/xy"), PI, null],
		["symlink inside pi cwd pointing out", editor(`${PI}/in-link`), PI, null],
		["ancestor cwd alone", editor("/home/u/Projects"), PI, null],
		["ancestor cwd, file from another project", editor("/home/u/Projects", "/home/u/Projects/other/a.ts"), PI, null],
		["ancestor cwd, absolute file inside", editor("/home/u/Projects", `${PI}/src/main.ts`), PI, 1],
		["unrelated cwd, new unsaved file inside", editor("/tmp", `${PI}/src/unsaved.ts`), PI, 1],
		["file inside through a symlink", editor("/tmp", "/l/proj/src/main.ts"), PI, 1],
		["file in the sibling with common prefix", editor("/tmp", "/home/u/Projects/xy/file.ts"), PI, null],
		["relative file never counts", editor("/vault", "x/src/main.ts"), PI, null],
		["relative file that would resolve inside", editor("/home/u/Projects", "x/src/main.ts"), PI, null],
		["argv dir equal to pi cwd", editor("/home/u/Projects", null, ["x/"]), PI, 1],
		["argv dir inside pi cwd", editor("/home/u/Projects", null, ["-p", "x/sub"]), PI, 1],
		["argv dir through a symlink", editor("/home/u/Projects", null, ["x-link"]), PI, 1],
		["argv absolute dir", editor("/tmp", null, ["/l/proj/sub/deep"]), PI, 1],
		["argv dir does not exist", editor("/home/u/Projects", null, ["x/missing"]), PI, null],
		["argv is a file, not a directory", editor("/home/u/Projects", null, ["x/src/main.ts"]), PI, null],
		["argv dot from an ancestor", editor("/home/u/Projects", null, ["."]), PI, null],
		["argv other project", editor("/home/u/Projects", null, ["other"]), PI, null],
		["argv flags and empty", editor("/home/u/Projects", null, ["", "--clean", "+42"]), PI, null],
		["argv relative with relative cwd", editor("Projects", null, ["x"]), PI, null],
		["relative cwd never matches", editor("x"), PI, null],
		["pi cwd is root: everything is inside", editor("/tmp"), "/", 1],
		["pi cwd does not exist", editor("/home/u/Projects"), "/nowhere", null],
	];
	for (const [description, state, piCwd, expected] of cases) {
		it(description, () => assert.equal(scoreEditor(state, piCwd, FS), expected));
	}

	it(`probes at most ${MAX_ARGV_PROBES} argv entries`, () => {
		const argv = [...Array.from({ length: MAX_ARGV_PROBES }, (_, i) => `file${i}.ts`), "x"];
		assert.equal(scoreEditor(editor("/home/u/Projects", null, argv), PI, FS), null);
		assert.equal(scoreEditor(editor("/home/u/Projects", null, argv.slice(1)), PI, FS), 1);
	});

	it("an argv entry over the path limit (a -c with 5 KB of Lua) is never probed; the others still count", () => {
		const probed: string[] = [];
		const recording: PathProbe = {
			realpath: (target) => {
				probed.push(target);
				return FS.realpath(target);
			},
			isDirectory: (target) => {
				probed.push(target);
				return FS.isDirectory(target);
			},
		};
		const argv = ["-c", `lua ${"x".repeat(5000)}`, "x"];
		assert.equal(scoreEditor(editor("/home/u/Projects", null, argv), PI, recording), 1);
		assert.deepEqual(
			probed.filter((target) => Buffer.byteLength(target) > MAX_PATH_BYTES).map((target) => target.length),
			[],
		);
	});
});

describe("rankEditors / bestTier", () => {
	type Item = { id: string; state: EditorState };
	const item = (id: string, cwd: string, timestamp: number, file: string | null = null): Item => ({
		id,
		state: editor(cwd, file, undefined, timestamp),
	});
	const cases: [string, Item[], string[], string[]][] = [
		["empty", [], [], []],
		["no tier at all", [item("a", "/tmp", 1), item("b", "/home/u/Projects", 2)], ["b", "a"], []],
		[
			"tier 0 beats newer tier 1",
			[item("inside", `${PI}/sub`, 50), item("exact", PI, 10), item("none", "/tmp", 99)],
			["exact", "inside", "none"],
			["exact"],
		],
		[
			"most recent first within a tier",
			[item("old", PI, 10), item("new", PI, 30), item("mid", "/l/proj", 20)],
			["new", "mid", "old"],
			["new", "mid", "old"],
		],
		[
			"equal timestamps keep input order",
			[item("a", `${PI}/sub`, 5), item("b", "/tmp", 5, `${PI}/src/main.ts`), item("c", `${PI}/sub/deep`, 5)],
			["a", "b", "c"],
			["a", "b", "c"],
		],
		[
			"only tier 1",
			[item("none", "/tmp", 9), item("t1", "/home/u/Projects", 1, `${PI}/src/main.ts`)],
			["t1", "none"],
			["t1"],
		],
	];
	for (const [description, items, order, best] of cases) {
		it(description, () => {
			const ranked = rankEditors(items, PI, FS);
			assert.deepEqual(
				ranked.map((r) => r.item.id),
				order,
			);
			assert.deepEqual(
				bestTier(ranked).map((r) => r.item.id),
				best,
			);
		});
	}

	it("bestTier does not need sorted input", () => {
		const ranked: Ranked<string>[] = [
			{ item: "a", tier: 1 },
			{ item: "b", tier: null },
			{ item: "c", tier: 0 },
			{ item: "d", tier: 0 },
		];
		assert.deepEqual(
			bestTier(ranked).map((r) => r.item),
			["c", "d"],
		);
	});
});

describe("scoreEditor (real file system, nodePathProbe)", () => {
	let root = "";
	before(() => {
		root = realpathSync(mkdtempSync(path.join(tmpdir(), "pi-ide-tiers-")));
		mkdirSync(path.join(root, "Projects/x/src"), { recursive: true });
		mkdirSync(path.join(root, "Projects/xy"), { recursive: true });
		mkdirSync(path.join(root, "Projects/other"), { recursive: true });
		writeFileSync(path.join(root, "Projects/x/src/main.ts"), "");
		symlinkSync(path.join(root, "Projects/x"), path.join(root, "link"));
		symlinkSync(path.join(root, "Projects/other"), path.join(root, "Projects/x/out"));
		symlinkSync(path.join(root, "dangling-target"), path.join(root, "dangling"));
	});
	after(() => rmSync(root, { recursive: true, force: true }));

	const cases: [string, (r: string) => EditorState, (r: string) => string, Tier | null][] = [
		["same cwd", (r) => editor(`${r}/Projects/x`), (r) => `${r}/Projects/x`, 0],
		["editor cwd is a symlink", (r) => editor(`${r}/link/`), (r) => `${r}/Projects/x`, 0],
		["pi cwd is a symlink", (r) => editor(`${r}/Projects/x`), (r) => `${r}/link`, 0],
		["cwd inside", (r) => editor(`${r}/Projects/x/src`), (r) => `${r}/link`, 1],
		["symlink out of the project", (r) => editor(`${r}/Projects/x/out`), (r) => `${r}/Projects/x`, null],
		["sibling prefix", (r) => editor(`${r}/Projects/xy`), (r) => `${r}/Projects/x`, null],
		["ancestor cwd alone", (r) => editor(`${r}/Projects`), (r) => `${r}/Projects/x`, null],
		[
			"unsaved file via symlink",
			(r) => editor(`${r}/Projects`, `${r}/link/src/new/file.ts`),
			(r) => `${r}/Projects/x`,
			1,
		],
		["argv dir", (r) => editor(`${r}/Projects`, null, ["x/"]), (r) => `${r}/Projects/x`, 1],
		["argv symlink dir", (r) => editor(r, null, ["link"]), (r) => `${r}/Projects/x`, 1],
		["argv file", (r) => editor(`${r}/Projects`, null, ["x/src/main.ts"]), (r) => `${r}/Projects/x`, null],
		["argv dangling symlink", (r) => editor(r, null, ["dangling"]), (r) => `${r}/Projects/x`, null],
	];
	for (const [description, makeState, makePiCwd, expected] of cases) {
		it(description, () => assert.equal(scoreEditor(makeState(root), makePiCwd(root), nodePathProbe()), expected));
	}

	it("probe answers", () => {
		const probe = nodePathProbe();
		assert.equal(probe.realpath(path.join(root, "link/src")), path.join(root, "Projects/x/src"));
		assert.equal(probe.realpath(path.join(root, "missing")), null);
		assert.equal(probe.realpath(path.join(root, "dangling")), null);
		assert.equal(probe.isDirectory(path.join(root, "link")), true);
		assert.equal(probe.isDirectory(path.join(root, "Projects/x/src/main.ts")), false);
		assert.equal(probe.isDirectory(path.join(root, "Projects/x/src/main.ts/below")), false);
	});
});
