import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkPathLength, MAX_PATH_BYTES, resolveEditorFile } from "../../../src/protocol/paths.ts";
import { parseEditorState } from "../../../src/protocol/protocol.ts";
import { makeState } from "../../helpers/state-files.ts";

const state = (cwd: string, file: string | null, argv: string[] = []) =>
	JSON.stringify(
		makeState({
			pid: 42,
			cwd,
			timestamp: 1,
			argv,
			active_buffer: { file, name: "x", language: null, cursor: { line: 1, column: 1 }, lines_total: 1 },
		}),
	);

describe("checkPathLength", () => {
	const cases: [string, string, boolean][] = [
		["a short path", "/p/src/main.ts", true],
		["exactly the limit", `/${"a".repeat(MAX_PATH_BYTES - 1)}`, true],
		["one byte over", `/${"a".repeat(MAX_PATH_BYTES)}`, false],
		["counted in UTF-8 bytes, not characters", `/${"é".repeat(2048)}`, false],
		["/a repeated 100,000 times", "/a".repeat(100_000), false],
	];
	for (const [description, path, ok] of cases) {
		it(description, () => assert.equal(checkPathLength(path) === undefined, ok));
	}
});

describe("resolveEditorFile", () => {
	const cases: [string | null, string, string | null][] = [
		[null, "/p", null],
		["/p/a.ts", "/elsewhere", "/p/a.ts"],
		["/p/../q/a.ts", "/p", "/q/a.ts"],
		["notes/a.md", "/vault", "/vault/notes/a.md"],
	];
	for (const [file, cwd, expected] of cases) {
		it(`${file} in ${cwd} -> ${expected}`, () => assert.equal(resolveEditorFile(file, cwd), expected));
	}
});

describe("state files with paths over the platform limit are refused with a diagnostic", () => {
	const long = "/a".repeat(100_000);
	const cases: [string, string, RegExp][] = [
		["cwd", state(long, "/p/a.ts"), /^\/cwd: is 200000 bytes long, over the 4095-byte path limit$/],
		["file", state("/p", long), /^\/active_buffer\/file: is 200000 bytes long/],
	];
	for (const [field, text, problem] of cases) {
		it(field, () => {
			const parsed = parseEditorState(text);
			assert.equal(parsed.ok, false);
			if (!parsed.ok) assert.match(parsed.problems[0] ?? "", problem);
		});
	}
	it("a path at the limit is accepted", () => {
		assert.equal(parseEditorState(state(`/${"a".repeat(MAX_PATH_BYTES - 1)}`, null)).ok, true);
	});
	it("an argv entry over the limit is accepted: argv holds arguments (nvim -c '<5 KB of Lua>'), not paths", () => {
		const lua = `lua ${"x".repeat(5000)}`;
		const parsed = parseEditorState(state("/p", "/p/a.ts", ["-c", lua, long]));
		assert.ok(parsed.ok, JSON.stringify(parsed));
		assert.deepEqual(parsed.state.argv, ["-c", lua, long]);
	});
});
