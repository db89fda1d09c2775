import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	buildPiMessage,
	ChangeLog,
	encodePiMessage,
	findReport,
	formatToolNote,
	isSettled,
	resolveToolPath,
	speaksV03,
} from "../../src/pi-message.ts";
import { type EditorState, type FileReport, parsePiMessage } from "../../src/protocol.ts";

const report = (overrides: Partial<FileReport> = {}): FileReport => ({
	file: "/p/a.ts",
	seq: 1,
	status: "reloaded",
	version: 5,
	modified: false,
	diagnostics_expected: true,
	diagnostics: null,
	...overrides,
});
const NVIM = { app: "nvim" };

describe("ChangeLog", () => {
	it("numbers changes, caps the list at 50, newest last", () => {
		const log = new ChangeLog();
		for (let i = 1; i <= 60; i++) assert.equal(log.record(`/p/f${i}`, "write"), i);
		assert.equal(log.changed.length, 50);
		assert.deepEqual(log.changed[0], { file: "/p/f11", seq: 11, tool: "write" });
		assert.deepEqual(log.changed.at(-1), { file: "/p/f60", seq: 60, tool: "write" });
	});

	it("last_turn: the files changed since the run began, published at turn ends", () => {
		const log = new ChangeLog();
		log.startRun();
		log.record("/p/a", "write");
		log.record("/p/b", "edit");
		log.record("/p/a", "edit");
		assert.equal(log.endTurn(), true);
		assert.deepEqual(log.lastTurn, ["/p/b", "/p/a"]);
		assert.equal(log.endTurn(), false, "a text-only turn in the same run keeps it");
		log.startRun();
		assert.equal(log.endTurn(), true);
		assert.deepEqual(log.lastTurn, []);
	});
});

describe("buildPiMessage / encodePiMessage", () => {
	it("builds a message its own parser accepts; the content ignores the timestamp", () => {
		const log = new ChangeLog();
		log.record("/p/a.ts", "write");
		const message = buildPiMessage({ pid: 42, cwd: "/p", now: 1.5, editorPid: 7, log });
		const parsed = parsePiMessage(encodePiMessage(message).text, 42);
		assert.ok(parsed.ok);
		assert.deepEqual(parsed.message, message);
		const later = buildPiMessage({ pid: 42, cwd: "/p", now: 9, editorPid: 7, log });
		assert.equal(encodePiMessage(later).content, encodePiMessage(message).content);
	});
});

describe("resolveToolPath", () => {
	const CASES: [string, string][] = [
		["src/a.ts", "/w/src/a.ts"],
		["/abs/b.ts", "/abs/b.ts"],
		["@src/c.ts", "/w/src/c.ts"],
		["~/d.ts", "/home/u/d.ts"],
		["../x/./e.ts", "/x/e.ts"],
	];
	for (const [input, expected] of CASES)
		it(input, () => assert.equal(resolveToolPath(input, "/w", "/home/u"), expected));
});

describe("reports: finding, settling", () => {
	it("speaksV03 only for a 0.3+ editor", () => {
		assert.equal(speaksV03({ protocol: "0.3" } as EditorState), true);
		assert.equal(speaksV03({ protocol: "0.12" } as EditorState), true);
		assert.equal(speaksV03({} as EditorState), false);
		assert.equal(speaksV03({ protocol: "0.2" } as EditorState), false);
	});

	it("findReport takes the newest report answering seq or later, for that file", () => {
		const files = [report({ seq: 1 }), report({ seq: 3 }), report({ file: "/p/b.ts", seq: 9 })];
		const state = { files } as EditorState;
		assert.equal(findReport(state, "/p/a.ts", 2)?.seq, 3);
		assert.equal(findReport(state, "/p/a.ts", 4), undefined);
		assert.equal(findReport({} as EditorState, "/p/a.ts", 1), undefined);
	});

	it("findReport skips reports answering another pi's message", () => {
		const state = { files: [report({ seq: 5, pi_pid: 8 }), report({ seq: 3, pi_pid: 9 })] } as EditorState;
		assert.equal(findReport(state, "/p/a.ts", 2, 9)?.seq, 3);
		assert.equal(findReport(state, "/p/a.ts", 2, 7), undefined);
		assert.equal(findReport(state, "/p/a.ts", 2)?.seq, 5, "without a pid, any report counts");
	});

	const DIAG = (version: number) => ({ version, total: 0, items: [] });
	const SETTLED: [string, FileReport | undefined, boolean][] = [
		["no answer yet", undefined, false],
		["not open", report({ status: "not-open", version: null }), true],
		["modified", report({ status: "modified" }), true],
		["reloaded, no checker", report({ diagnostics_expected: false }), true],
		["reloaded, checker, no diagnostics yet", report(), false],
		["reloaded, checker, stale diagnostics", report({ diagnostics: DIAG(4) }), false],
		["reloaded, checker, current diagnostics", report({ diagnostics: DIAG(5) }), true],
		["reloaded, checker, newer diagnostics (user typed)", report({ diagnostics: DIAG(7) }), true],
	];
	for (const [name, r, settled] of SETTLED) it(`isSettled: ${name}`, () => assert.equal(isSettled(r), settled));
});

describe("formatToolNote", () => {
	const item = { severity: "error" as const, line: 3, column: 2, message: "bad", source: "ts", code: "1" };
	const CASES: [string, FileReport | undefined, string | null][] = [
		["no answer", undefined, null],
		["not open", report({ status: "not-open" }), null],
		["reloaded without a checker", report({ diagnostics_expected: false }), null],
		[
			"unsaved changes in the editor",
			report({ status: "modified", modified: true }),
			"Note: /p/a.ts is open in Neovim with unsaved changes. The editor kept the user's version and did not reload it; the user's buffer differs from the file on disk.",
		],
		[
			"no fresh diagnostics",
			report(),
			"Neovim reloaded /p/a.ts; no diagnostics for the new content arrived within 2 s.",
		],
		[
			"stale diagnostics are not shown",
			report({ diagnostics: { version: 4, total: 1, items: [item] } }),
			"Neovim reloaded /p/a.ts; no diagnostics for the new content arrived within 2 s.",
		],
		[
			"fresh and clean",
			report({ diagnostics: { version: 5, total: 0, items: [] } }),
			"Neovim reloaded /p/a.ts: no diagnostics for the new content.",
		],
		[
			"fresh errors",
			report({ diagnostics: { version: 5, total: 1, items: [item] } }),
			"Neovim reloaded /p/a.ts. Diagnostics (1 error):\n- error 3:2 bad [ts 1]",
		],
	];
	for (const [name, r, expected] of CASES) it(name, () => assert.equal(formatToolNote(NVIM, "/p/a.ts", r), expected));
});
