import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import {
	CONNECTED_MARKER,
	formatAge,
	formatPickerRows,
	type PickerEditor,
	shortenPath,
} from "../../../src/ui/picker.ts";
import { makeState } from "../../helpers/state-files.ts";

const HOME = "/home/u";
const NOW = 1_700_000_000;

interface EditorSpec {
	pid: number;
	cwd: string;
	file: string | null;
	age: number;
	app?: string;
	product?: string;
	argv?: string[];
	database?: EditorState["database"];
}

function picker({ pid, cwd, file, age, app = "nvim", product, argv, database }: EditorSpec): PickerEditor {
	const state = makeState({
		pid,
		cwd,
		timestamp: NOW - age,
		app,
		...(product === undefined ? {} : { product }),
		...(argv === undefined ? {} : { argv }),
		...(database === undefined ? {} : { database }),
		active_buffer: { file, name: file ?? "", language: null, cursor: { line: 1, column: 1 }, lines_total: 1 },
	});
	return { state, tier: 0 };
}

const rows = (editors: EditorSpec[], maxWidth = 200, connectedPid: number | null = null): string[] =>
	formatPickerRows(editors.map(picker), { now: NOW, home: HOME, connectedPid, maxWidth });

/** Visible column at which `needle` starts in `row`. */
function columnOf(row: string, needle: string): number {
	const index = row.indexOf(needle);
	assert.notEqual(index, -1, `${JSON.stringify(needle)} not in ${JSON.stringify(row)}`);
	return visibleWidth(row.slice(0, index));
}

describe("formatAge", () => {
	const cases: [number, string][] = [
		[0, "0s ago"],
		[5, "5s ago"],
		[59.9, "59s ago"],
		[60, "1m ago"],
		[180, "3m ago"],
		[3599, "59m ago"],
		[3600, "1h ago"],
		[7200, "2h ago"],
		[86399, "23h ago"],
		[86400, "1d ago"],
		[4 * 86400 + 5, "4d ago"],
		[-3, "0s ago"],
		[Number.NaN, "?"],
	];
	for (const [seconds, expected] of cases)
		it(`${seconds} -> ${expected}`, () => assert.equal(formatAge(seconds), expected));
});

describe("shortenPath", () => {
	const cases: { description: string; path: string; home: string; max: number; expected: string }[] = [
		{ description: "home subdirectory", path: "/home/u/Projects/x", home: HOME, max: 80, expected: "~/Projects/x" },
		{ description: "home itself", path: "/home/u", home: HOME, max: 80, expected: "~" },
		{ description: "home with trailing slash", path: "/home/u/x", home: "/home/u/", max: 80, expected: "~/x" },
		{
			description: "a longer user name is not home",
			path: "/home/user2/x",
			home: HOME,
			max: 80,
			expected: "/home/user2/x",
		},
		{ description: "no home", path: "/home/u/x", home: "", max: 80, expected: "/home/u/x" },
		{ description: "fits exactly", path: "/a/bb/ccc", home: "", max: 9, expected: "/a/bb/ccc" },
		{
			description: "whole components from the left",
			path: "/home/u/Projects/deep/nested/x",
			home: HOME,
			max: 16,
			expected: "…/deep/nested/x",
		},
		{
			description: "keeps as many components as fit",
			path: "/aaaa/bbbb/cccc/dddd",
			home: "",
			max: 11,
			expected: "…/cccc/dddd",
		},
		{
			description: "basename too long: its tail",
			path: "/a/very-long-file-name.ts",
			home: "",
			max: 10,
			expected: "…e-name.ts",
		},
		{
			description: "CJK components",
			path: "/home/u/项目/源代码/主文件.ts",
			home: HOME,
			max: 18,
			expected: "…/源代码/主文件.ts",
		},
		{
			description: "CJK components, one cell short",
			path: "/home/u/项目/源代码/主文件.ts",
			home: HOME,
			max: 17,
			expected: "…/主文件.ts",
		},
		{
			description: "CJK basename cut between wide characters",
			path: "/x/一二三四五六",
			home: "",
			max: 6,
			expected: "…五六",
		},
		{ description: "emoji stays whole", path: "/x/🚀🚀🚀🚀.md", home: "", max: 8, expected: "…🚀🚀.md" },
		{ description: "zero width", path: "/a/b", home: "", max: 0, expected: "" },
		{ description: "width one", path: "/a/bcd", home: "", max: 1, expected: "…" },
	];
	for (const { description, path, home, max, expected } of cases) {
		it(description, () => {
			const short = shortenPath(path, home, max);
			assert.equal(short, expected);
			assert.ok(visibleWidth(short) <= max);
		});
	}
});

describe("formatPickerRows: content", () => {
	const cases: [string, EditorSpec, string[]][] = [
		["app name", { pid: 1, cwd: "/p", file: "/p/a.ts", age: 5 }, ["nvim", "5s ago"]],
		[
			"product over app",
			{ pid: 1, cwd: "/p", file: null, age: 180, app: "jetbrains", product: "WebStorm" },
			["WebStorm", "3m ago"],
		],
		["argv joined", { pid: 1, cwd: "/p", file: null, age: 0, argv: ["-p", "pi-ide-context/"] }, ["-p pi-ide-context/"]],
		["cwd under home", { pid: 1, cwd: "/home/u/Projects/x", file: null, age: 0 }, ["~/Projects/x"]],
		[
			"file relative to the editor cwd",
			{ pid: 1, cwd: "/home/u/x", file: "/home/u/x/src/main.ts", age: 0 },
			[" src/main.ts"],
		],
		["file outside the cwd, ~-shortened", { pid: 1, cwd: "/home/u/x", file: "/home/u/y/b.ts", age: 0 }, ["~/y/b.ts"]],
		["file outside home", { pid: 1, cwd: "/home/u/x", file: "/etc/hosts", age: 0 }, ["/etc/hosts"]],
		["cwd prefix is not inside", { pid: 1, cwd: "/home/u/x", file: "/home/u/xy/b.ts", age: 0 }, ["~/xy/b.ts"]],
		["unnamed buffer", { pid: 1, cwd: "/p", file: null, age: 7200 }, ["[No Name]", "2h ago"]],
		[
			"vault-relative file as is",
			{ pid: 1, cwd: "/vault", file: "Notes/a.md", age: 4 * 86400, app: "obsidian" },
			["Notes/a.md", "4d ago"],
		],
		[
			"database view shows the table",
			{
				pid: 1,
				cwd: "/p",
				file: null,
				age: 0,
				app: "jetbrains",
				product: "DataGrip",
				database: { table: "rooms", schema: "public" },
			},
			["DataGrip", "table public.rooms"],
		],
	];
	for (const [description, spec, expected] of cases) {
		it(description, () => {
			const [row = ""] = rows([spec]);
			for (const text of expected)
				assert.ok(row.includes(text), `${JSON.stringify(text)} not in ${JSON.stringify(row)}`);
		});
	}

	it("control characters from the state file never reach the terminal", () => {
		const [row = ""] = rows([
			{ pid: 1, cwd: "/p\u001b]0;pwned\u0007", file: "/p/a\nb.ts", age: 0, app: "nvim\u001b[2J", argv: ["\u009b31m"] },
		]);
		const controls = [...row].filter((char) => {
			const code = char.codePointAt(0) ?? 0;
			return code < 0x20 || (code >= 0x7f && code <= 0x9f);
		});
		assert.deepEqual(controls, []);
	});

	it("no editors, no rows", () => assert.deepEqual(rows([]), []));
});

describe("formatPickerRows: order and marker", () => {
	const editors: EditorSpec[] = [
		{ pid: 30, cwd: "/p", file: "/p/c.ts", age: 1 },
		{ pid: 10, cwd: "/p", file: "/p/a.ts", age: 99 },
		{ pid: 20, cwd: "/p", file: "/p/b.ts", age: 50 },
	];
	const cases: [string, number | null, number | null][] = [
		["nobody connected", null, null],
		["first connected", 30, 0],
		["middle connected", 10, 1],
		["unknown pid", 99, null],
	];
	for (const [description, connectedPid, markedRow] of cases) {
		it(description, () => {
			const result = rows(editors, 200, connectedPid);
			assert.deepEqual(
				result.map((row) => row.match(/[abc]\.ts/)?.[0]),
				["c.ts", "a.ts", "b.ts"],
			);
			assert.deepEqual(
				result.map((row, index) => (row.startsWith(CONNECTED_MARKER) ? index : -1)).filter((i) => i >= 0),
				markedRow === null ? [] : [markedRow],
			);
			for (const row of result) assert.ok(row.startsWith(CONNECTED_MARKER) || row.startsWith(" "));
		});
	}
});

describe("formatPickerRows: alignment by display width", () => {
	// Each row: [spec, texts that start a column], cwd and file texts unique per row.
	const editors: [EditorSpec, string, string][] = [
		[{ pid: 1, cwd: "/home/u/项目", file: "/home/u/项目/源代码.ts", age: 30, argv: ["项目/"] }, "~/项目", "源代码.ts"],
		[{ pid: 2, cwd: "/home/u/x", file: "/home/u/x/a.ts", age: 3600 * 30, app: "vscode" }, "~/x", "a.ts"],
		[
			{
				pid: 3,
				cwd: "/srv/🚀rocket",
				file: "/srv/🚀rocket/ロケット.md",
				age: 61,
				app: "jetbrains",
				product: "IntelliJ IDEA",
			},
			"/srv/🚀rocket",
			"ロケット.md",
		],
		[{ pid: 4, cwd: "/tmp", file: null, age: 0, argv: ["-p", "a", "b"] }, "/tmp", "[No Name]"],
	];
	const widths: [string, number][] = [
		["wide terminal", 200],
		["80 columns", 80],
		["60 columns", 60],
	];
	for (const [description, maxWidth] of widths) {
		it(description, () => {
			const result = rows(
				editors.map(([spec]) => spec),
				maxWidth,
				2,
			);
			assert.equal(result.length, editors.length);
			const rowWidths = new Set(result.map(visibleWidth));
			assert.equal(rowWidths.size, 1, `rows differ in width: ${JSON.stringify(result)}`);
			for (const width of rowWidths) assert.ok(width <= maxWidth, `${width} > ${maxWidth}`);
			// Equal widths put every row's end in one cell; each row ends with its age (right-aligned, 30s wider than 1d).
			assert.deepEqual(
				result.map((row) => row.match(/\d+[smhd] ago$/)?.[0]),
				["30s ago", "1d ago", "1m ago", "0s ago"],
			);
			if (maxWidth < 200) return;
			const cwdColumns = result.map((row, i) => columnOf(row, editors[i]?.[1] ?? ""));
			const fileColumns = result.map((row, i) => columnOf(row, editors[i]?.[2] ?? ""));
			assert.equal(new Set(cwdColumns).size, 1, `cwd columns ${cwdColumns}`);
			assert.equal(new Set(fileColumns).size, 1, `file columns ${fileColumns}`);
		});
	}

	it("every column boundary lines up when columns are truncated", () => {
		const long: EditorSpec[] = [
			{
				pid: 1,
				cwd: "/home/u/很长的项目名称/子目录/更深的目录",
				file: "/home/u/很长的项目名称/子目录/更深的目录/文件名.ts",
				age: 5,
			},
			{
				pid: 2,
				cwd: "/home/u/another/quite/long/path/to/a/project",
				file: "/elsewhere/deep/file.ts",
				age: 9,
				argv: ["--listen", "/tmp/nvim.sock", "project/"],
			},
		];
		const result = rows(long, 70, 1);
		for (const row of result) assert.ok(visibleWidth(row) <= 70, `${visibleWidth(row)}: ${row}`);
		// The age is the last column, right-aligned: every row ends at the same cell.
		assert.equal(new Set(result.map(visibleWidth)).size, 1);
		// Shortened paths keep their tail: the basenames survive.
		assert.match(result[0] ?? "", /文件名\.ts/);
		assert.match(result[1] ?? "", /file\.ts/);
		// Cells start after a two-space gap; every cell start of the first row (no argv) is one of the second's.
		const starts = result.map((row) => {
			const found: number[] = [];
			const cells = Array.from(new Intl.Segmenter().segment(row), (s) => s.segment);
			let column = 0;
			for (const [i, cell] of cells.entries()) {
				if (cell !== " " && cells[i - 1] === " " && cells[i - 2] === " ") found.push(column);
				column += visibleWidth(cell);
			}
			return found;
		});
		const [first = [], second = []] = starts;
		assert.ok(first.length >= 3, `starts ${JSON.stringify(starts)}`);
		for (const start of first) assert.ok(second.includes(start), `starts ${JSON.stringify(starts)}`);
	});

	it("a narrow terminal gives up argv, then cwd, before the file and the age", () => {
		const specs: EditorSpec[] = [
			{
				pid: 1,
				cwd: "/home/u/a/long/project/path",
				file: "/home/u/a/long/project/path/src/main.ts",
				age: 5,
				argv: ["--listen", "/tmp/sock"],
			},
		];
		const cases: [number, string[], string[]][] = [
			[45, ["nvim", "main.ts", "5s ago"], ["--listen"]],
			[30, ["nvim", "main.ts", "5s ago"], ["--listen", "~/", "…/path"]],
		];
		for (const [maxWidth, present, absent] of cases) {
			const [row = ""] = rows(specs, maxWidth);
			assert.ok(visibleWidth(row) <= maxWidth);
			for (const text of present) assert.ok(row.includes(text), `${maxWidth}: ${text} not in ${row}`);
			for (const text of absent) assert.ok(!row.includes(text), `${maxWidth}: ${text} in ${row}`);
		}
	});

	const narrow: [string, number][] = [
		["narrower than the minimums", 30],
		["tiny", 8],
		["zero", 0],
	];
	for (const [description, maxWidth] of narrow) {
		it(`${description}: rows never exceed maxWidth`, () => {
			for (const row of rows(
				editors.map(([spec]) => spec),
				maxWidth,
			))
				assert.ok(visibleWidth(row) <= maxWidth, `${visibleWidth(row)} > ${maxWidth}: ${row}`);
		});
	}
});
