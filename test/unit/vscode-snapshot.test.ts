/**
 * editors/vscode/src/snapshot.ts with plain objects shaped like VS Code's: cwd choice in multi-root
 * workspaces, the per-window argv fingerprint, untitled and non-file documents, UTF-16 positions turned into
 * byte columns end to end, and selected_at kept while the selection stays.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildEditorState, MAX_SELECTION_TEXT_BYTES, SelectionClock } from "../../editors/shared/state.ts";
import {
	type DocumentLike,
	type EditorLike,
	pickCwd,
	snapshotDocument,
	snapshotWindow,
	type UriLike,
	type WorkspaceLike,
	windowFingerprint,
} from "../../editors/vscode/src/snapshot.ts";
import { MAX_STATE_FILE_BYTES, validateEditorState } from "../../src/protocol.ts";
import { checkCappedSelection, endOf, HUGE_SELECTIONS } from "../fixtures/huge-selections.ts";

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

	// [description, anchor, active, expected cursor [line, col], expected selection or null]
	const cases: [
		string,
		[number, number],
		[number, number],
		[number, number],
		{ start: [number, number]; end: [number, number]; text: string } | null,
	][] = [
		["cursor only, after CJK", [1, 8], [1, 8], [2, 13], null],
		["cursor before the emoji", [1, 12], [1, 12], [2, 17], null],
		["cursor after the emoji (4 bytes)", [1, 14], [1, 14], [2, 21], null],
		["single-line selection of CJK", [1, 6], [1, 8], [2, 13], { start: [2, 7], end: [2, 12], text: "名前" }],
		[
			"single-line selection of the emoji, made backwards",
			[1, 14],
			[1, 12],
			[2, 17],
			{ start: [2, 17], end: [2, 20], text: "😀" },
		],
		[
			"multi-line: full lines, cursor at the active end",
			[0, 7],
			[3, 2],
			[4, 3],
			{ start: [1, 8], end: [4, 2], text: "import x from 'y';\nconst 名前 = '😀';\n\nexport { 名前 };" },
		],
	];
	for (const [name, anchor, active, cursor, selection] of cases) {
		test(name, () => {
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
