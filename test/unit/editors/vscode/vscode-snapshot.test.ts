/**
 * editors/vscode/src/snapshot.ts with plain objects shaped like VS Code's: cwd choice in multi-root
 * workspaces, the per-window argv fingerprint, untitled and non-file documents, UTF-16 positions turned into
 * byte columns end to end, and selected_at kept while the selection stays.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type FileReport, KEPT_FILE_REPORTS } from "../../../../editors/shared/pi-message.ts";
import {
	buildEditorState,
	linesOf,
	MAX_SELECTION_TEXT_BYTES,
	SelectionClock,
} from "../../../../editors/shared/state.ts";
import { reportDiagnostics } from "../../../../editors/vscode/src/diagnostics.ts";
import {
	type DocumentLike,
	type EditorLike,
	pickCwd,
	snapshotDocument,
	snapshotWindow,
	type UriLike,
	type V03Extras,
	type WorkspaceLike,
	windowFingerprint,
} from "../../../../editors/vscode/src/snapshot.ts";
import { MAX_STATE_FILE_BYTES, validateEditorState } from "../../../../src/protocol/protocol.ts";
import { checkCappedSelection, endOf, HUGE_SELECTIONS } from "../../../fixtures/huge-selections.ts";

const uri = (scheme: string, fsPath: string): UriLike => ({
	scheme,
	fsPath,
	toString: () => `${scheme}://${fsPath}`,
});

const workspace = (folders: string[], workspaceFile?: UriLike): WorkspaceLike => ({
	workspaceFolders: folders.length > 0 ? folders.map((f) => ({ uri: uri("file", f) })) : undefined,
	workspaceFile,
});

function document(text: string, overrides: Partial<DocumentLike> = {}): DocumentLike {
	const lines = text.split("\n");
	return {
		uri: uri("file", "/w/app/src/main.ts"),
		fileName: "/w/app/src/main.ts",
		isUntitled: false,
		languageId: "typescript",
		isDirty: false,
		lineCount: lines.length,
		lineAt: (line) => ({ text: lines[line] ?? "" }),
		...overrides,
	};
}

function editor(doc: DocumentLike, anchor: [number, number], active: [number, number] = anchor): EditorLike {
	return {
		document: doc,
		selection: {
			anchor: { line: anchor[0], character: anchor[1] },
			active: { line: active[0], character: active[1] },
		},
	};
}

describe("pickCwd", () => {
	// [description, folders, file, expected cwd]
	const cases: [string, string[], string | null, string][] = [
		["single folder", ["/w/app"], "/w/app/src/main.ts", "/w/app"],
		["multi-root: the folder containing the file", ["/w/app", "/w/lib"], "/w/lib/index.ts", "/w/lib"],
		["multi-root, nested folders: the innermost", ["/w", "/w/app"], "/w/app/src/main.ts", "/w/app"],
		["file outside every folder: the first folder", ["/w/app", "/w/lib"], "/tmp/scratch.ts", "/w/app"],
		["untitled: the first folder", ["/w/app", "/w/lib"], null, "/w/app"],
		["no folder: the file's directory", [], "/tmp/notes/todo.md", "/tmp/notes"],
		["no folder, untitled: the fallback", [], null, "/home/me"],
		["sibling with a common prefix is not a parent", ["/w/app", "/w/app2"], "/w/app2/x.ts", "/w/app2"],
	];
	for (const [name, folders, file, expected] of cases) {
		test(name, () => assert.equal(pickCwd(workspace(folders), file, "/home/me"), expected));
	}

	test("non-file workspace folders (remote) are ignored", () => {
		const ws: WorkspaceLike = {
			workspaceFolders: [{ uri: uri("vscode-remote", "/r") }, { uri: uri("file", "/w/app") }],
			workspaceFile: undefined,
		};
		assert.equal(pickCwd(ws, null, "/home/me"), "/w/app");
	});
});

describe("windowFingerprint", () => {
	const cases: [string, WorkspaceLike, string[]][] = [
		["empty window", workspace([]), []],
		["one folder", workspace(["/w/app"]), ["/w/app"]],
		["multi-root, unsaved", workspace(["/w/app", "/w/lib"]), ["/w/app", "/w/lib"]],
		[
			"saved workspace file wins",
			workspace(["/w/app", "/w/lib"], uri("file", "/w/all.code-workspace")),
			["/w/all.code-workspace"],
		],
		["untitled workspace file: folders", workspace(["/w/app"], uri("untitled", "/Untitled-1")), ["/w/app"]],
	];
	for (const [name, ws, expected] of cases) {
		test(name, () => assert.deepEqual(windowFingerprint(ws), expected));
	}
});

describe("snapshotDocument", () => {
	test("untitled documents report file null and their display name", () => {
		const doc = document("scratch", {
			uri: uri("untitled", "Untitled-1"),
			fileName: "Untitled-1",
			isUntitled: true,
			languageId: "plaintext",
		});
		const snap = snapshotDocument(editor(doc, [0, 0]));
		assert.equal(snap?.file, null);
		assert.equal(snap?.name, "Untitled-1");
		assert.equal(snap?.key, "untitled://Untitled-1");
	});

	const ignored = ["output", "git", "vscode-notebook-cell", "debug"];
	for (const scheme of ignored) {
		test(`scheme ${scheme} is not a user buffer`, () => {
			assert.equal(snapshotDocument(editor(document("x", { uri: uri(scheme, "/x") }), [0, 0])), undefined);
		});
	}

	test("vscode-userdata (settings.json) is a real file", () => {
		const doc = document("{}", { uri: uri("vscode-userdata", "/home/me/.config/Code/User/settings.json") });
		assert.equal(snapshotDocument(editor(doc, [0, 0]))?.file, "/home/me/.config/Code/User/settings.json");
	});
});

describe("snapshotWindow -> state", () => {
	const text = ["import x from 'y';", "const 名前 = '😀';", "", "export { 名前 };", ""].join("\n");
	const build = (ed: EditorLike | undefined, now = 1000, clock = new SelectionClock()) => {
		const snap = snapshotWindow(ed, workspace(["/w/app", "/w/lib"]), "/home/me");
		assert.ok(snap);
		const state = buildEditorState(snap, { pid: 77, app: "vscode", now, clock });
		const valid = validateEditorState(state);
		assert.ok(valid.ok, JSON.stringify(valid));
		return state;
	};

	/** Host positions are [0-based line, UTF-16 character]; wire ones [1-based line, 1-based byte column]. */
	interface Case {
		description: string;
		anchor: [number, number];
		active: [number, number];
		cursor: [number, number];
		selection: { start: [number, number]; end: [number, number]; text: string } | null;
	}
	const cases: Case[] = [
		{ description: "cursor only, after CJK", anchor: [1, 8], active: [1, 8], cursor: [2, 13], selection: null },
		{ description: "cursor before the emoji", anchor: [1, 12], active: [1, 12], cursor: [2, 17], selection: null },
		{
			description: "cursor after the emoji (4 bytes)",
			anchor: [1, 14],
			active: [1, 14],
			cursor: [2, 21],
			selection: null,
		},
		{
			description: "single-line selection of CJK",
			anchor: [1, 6],
			active: [1, 8],
			cursor: [2, 13],
			selection: { start: [2, 7], end: [2, 12], text: "名前" },
		},
		{
			description: "single-line selection of the emoji, made backwards",
			anchor: [1, 14],
			active: [1, 12],
			cursor: [2, 17],
			selection: { start: [2, 17], end: [2, 20], text: "😀" },
		},
		{
			description: "multi-line: full lines, cursor at the active end",
			anchor: [0, 7],
			active: [3, 2],
			cursor: [4, 3],
			selection: { start: [1, 8], end: [4, 2], text: "import x from 'y';\nconst 名前 = '😀';\n\nexport { 名前 };" },
		},
	];
	for (const { description, anchor, active, cursor, selection } of cases) {
		test(description, () => {
			const state = build(editor(document(text, { isDirty: true }), anchor, active));
			assert.equal(state.app, "vscode");
			assert.equal(state.cwd, "/w/app");
			assert.deepEqual(state.argv, ["/w/app", "/w/lib"]);
			assert.equal(state.active_buffer.file, "/w/app/src/main.ts");
			assert.equal(state.active_buffer.name, "main.ts");
			assert.equal(state.active_buffer.language, "typescript");
			assert.equal(state.active_buffer.modified, true);
			assert.equal(state.active_buffer.lines_total, 4, "the empty line after the final newline is not a line");
			assert.deepEqual(state.active_buffer.cursor, { line: cursor[0], column: cursor[1] });
			if (selection === null) {
				assert.equal(state.active_buffer.selection, null);
			} else {
				assert.deepEqual(state.active_buffer.selection, {
					start: { line: selection.start[0], column: selection.start[1] },
					end: { line: selection.end[0], column: selection.end[1] },
					text: selection.text,
					selected_at: 1000,
				});
			}
		});
	}

	test("selected_at stays while the selection stays, even as the document changes below it", () => {
		const clock = new SelectionClock();
		const doc = document(text);
		assert.equal(build(editor(doc, [1, 6], [1, 8]), 1000, clock).active_buffer.selection?.selected_at, 1000);
		const edited = document(`${text}more\n`, { isDirty: true });
		assert.equal(build(editor(edited, [1, 6], [1, 8]), 1030, clock).active_buffer.selection?.selected_at, 1000);
		assert.equal(build(editor(edited, [1, 6], [1, 7]), 1040, clock).active_buffer.selection?.selected_at, 1040);
		assert.equal(build(editor(edited, [1, 7]), 1050, clock).active_buffer.selection, null);
	});

	test("no active editor: an unnamed, empty buffer", () => {
		const state = build(undefined);
		assert.equal(state.active_buffer.file, null);
		assert.deepEqual(state.active_buffer.cursor, { line: null, column: null });
		assert.equal(state.cwd, "/w/app");
	});

	test("an output pane as active editor: keep the last state", () => {
		assert.equal(
			snapshotWindow(editor(document("x", { uri: uri("output", "x") }), [0, 0]), workspace([]), "/"),
			undefined,
		);
	});
});

describe("protocol v0.3 fields", () => {
	const report = (file: string, total: number): FileReport => ({
		file,
		seq: 1,
		status: "reloaded",
		version: 2,
		modified: false,
		diagnostics_expected: true,
		diagnostics: { version: 2, total, items: [] },
	});
	const build = (extras?: V03Extras) => {
		const snapshot = snapshotWindow(
			editor(document("a\n", { version: 7 }), [0, 0]),
			workspace(["/w/app"]),
			"/",
			extras,
		);
		assert.ok(snapshot);
		return buildEditorState(snapshot, { pid: 42, app: "vscode", now: 1000, clock: new SelectionClock() });
	};

	test("with the extras: protocol, version, dated diagnostics, files and pi", () => {
		const diagnostics = { version: 6, total: 0, items: [] };
		const state = build({ diagnostics: () => diagnostics, files: [report("/w/app/a.ts", 0)], pi: { pid: 9, seq: 3 } });
		assert.equal(state.protocol, "0.3");
		assert.equal(state.active_buffer.version, 7);
		assert.deepEqual(state.active_buffer.diagnostics, diagnostics);
		assert.deepEqual(state.files, [report("/w/app/a.ts", 0)]);
		assert.deepEqual(state.pi, { pid: 9, seq: 3 });
		assert.ok(validateEditorState(JSON.parse(JSON.stringify(state))).ok);
	});

	test("diagnostics that cannot be dated yet are left out, not sent undated", () => {
		const state = build({ diagnostics: () => undefined, files: [], pi: null });
		assert.equal("diagnostics" in state.active_buffer, false);
		assert.deepEqual(state.files, []);
		assert.equal(state.pi, null);
	});

	test("without the extras (other hosts): no v0.3 top-level fields", () => {
		const state = build();
		for (const field of ["protocol", "files", "pi"]) assert.equal(field in state, false, field);
		assert.equal("diagnostics" in state.active_buffer, false);
	});

	test("worst case: 100 diagnostics and 20 reports of escaped control characters stay far below 1 MiB", () => {
		const nasty = "\u0001".repeat(2000);
		const items = Array.from({ length: 1000 }, (_, i) => ({
			severity: 0,
			range: { start: { line: 0, character: i }, end: { line: 0, character: i + 1 } },
			message: nasty,
			source: nasty,
			code: nasty,
		}));
		const lines = linesOf("x".repeat(2000));
		const files = Array.from({ length: KEPT_FILE_REPORTS }, (_, i) => ({
			...report(`/w/app/${i}.ts`, 1000),
			diagnostics: reportDiagnostics(items, lines, 2, { maxItems: 25, maxBytes: 16 * 1024 }),
		}));
		const state = build({ diagnostics: () => reportDiagnostics(items, lines, 7), files, pi: { pid: 9, seq: 3 } });
		const bytes = Buffer.byteLength(JSON.stringify(state));
		assert.ok(bytes < 512 * 1024, `${bytes} bytes`);
		assert.equal(state.active_buffer.diagnostics?.total, 1000);
	});
});

describe("a select-all of a huge document stays under pi's 1 MiB limit, and says it was cut", () => {
	const limits = { file: MAX_STATE_FILE_BYTES, selection: MAX_SELECTION_TEXT_BYTES };
	const stateOf = (ed: EditorLike) =>
		buildEditorState(snapshotWindow(ed, workspace(["/w/app"]), "/") ?? assert.fail("no snapshot"), {
			pid: 7,
			app: "vscode",
			now: 100,
			clock: new SelectionClock(),
		});
	for (const { name, text } of HUGE_SELECTIONS) {
		test(name, () => {
			const end = endOf(text);
			const state = stateOf(editor(document(text), [0, 0], [end.line, end.character]));
			assert.ok(validateEditorState(state).ok);
			checkCappedSelection(state, text, limits);
		});
	}

	test("a selection that fits is sent whole, without the field", () => {
		const text = "a\nb";
		const selection = stateOf(editor(document(text), [0, 0], [1, 1])).active_buffer.selection;
		assert.deepEqual(selection && { text: selection.text, truncated: "truncated" in selection }, {
			text,
			truncated: false,
		});
	});
});
