import assert from "node:assert/strict";
import { homedir } from "node:os";
import { describe, it } from "node:test";
import { parsePiMessage } from "../../../editors/shared/pi-message.ts";
// pi's own rule for its write/edit tools' path argument (not exported: imported by file, the version pinned).
import { resolveToCwd as piResolveToCwd } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/tools/path-utils.js";
import {
	buildPiMessage,
	ChangeLog,
	encodePiMessage,
	findReport,
	formatToolNote,
	isSettled,
	resolveToolPath,
	type SeqCounter,
	speaksV03,
	type WaitEnd,
} from "../../../src/link/pi-message.ts";
import type { EditorState, FileReport } from "../../../src/protocol/protocol.ts";

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

	it("seqs from a shared counter keep growing across logs (one pi process, a new session)", () => {
		const counter: SeqCounter = { last: 0 };
		const first = new ChangeLog(counter);
		first.record("/p/a", "edit");
		first.record("/p/a", "edit");
		const second = new ChangeLog(counter);
		assert.equal(second.seq, 2, "a new session's message carries the process's newest seq, not 0");
		assert.equal(second.record("/p/a", "edit"), 3);
		assert.deepEqual(second.changed, [{ file: "/p/a", seq: 3, tool: "edit" }]);
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
	it("builds a message the editors' parser accepts as it is; the content ignores the timestamp", () => {
		const log = new ChangeLog();
		log.record("/p/a.ts", "write");
		const message = buildPiMessage({ pid: 42, cwd: "/p", now: 1.5, editorPid: 7, log });
		const parsed = parsePiMessage(encodePiMessage(message).text);
		assert.ok(parsed.ok);
		assert.deepEqual(parsed.message, message);
		const later = buildPiMessage({ pid: 42, cwd: "/p", now: 9, editorPid: 7, log });
		assert.equal(encodePiMessage(later).content, encodePiMessage(message).content);
	});
});

describe("resolveToolPath: as pi's write/edit tools resolve their path", () => {
	interface Case {
		name: string;
		input: string;
		/** With cwd /w and home /home/u; null: pi's tool fails on it too. */
		expected: string | null;
	}
	const CASES: Case[] = [
		{ name: "relative", input: "src/a.ts", expected: "/w/src/a.ts" },
		{ name: "absolute", input: "/abs/b.ts", expected: "/abs/b.ts" },
		{ name: "a leading @ goes", input: "@src/c.ts", expected: "/w/src/c.ts" },
		{ name: "only one @ goes", input: "@@x.ts", expected: "/w/@x.ts" },
		{ name: "~/ is the home directory", input: "~/d.ts", expected: "/home/u/d.ts" },
		{ name: "~ alone is the home directory", input: "~", expected: "/home/u" },
		{ name: "@ then ~", input: "@~/d.ts", expected: "/home/u/d.ts" },
		{ name: "~user is a plain name", input: "~user/x", expected: "/w/~user/x" },
		{ name: ". and ..", input: "../x/./e.ts", expected: "/x/e.ts" },
		{ name: "~/.. leaves home", input: "~/../x", expected: "/home/x" },
		{ name: "no-break space is a space", input: "a\u00a0b.ts", expected: "/w/a b.ts" },
		{ name: "narrow no-break and ideographic spaces", input: "a\u202fb\u3000c", expected: "/w/a b c" },
		{ name: "leading spaces are kept", input: " ./a", expected: "/w/ ./a" },
		{ name: "a file URL is its path, decoded", input: "file:///tmp/a%20b.ts", expected: "/tmp/a b.ts" },
		{ name: "@ then a file URL", input: "@file:///t/x", expected: "/t/x" },
		{ name: "a file URL with a host: pi refuses it", input: "file://host/x", expected: null },
	];
	for (const { name, input, expected } of CASES) {
		it(name, () => {
			assert.equal(resolveToolPath(input, "/w", "/home/u"), expected);
			// The same as pi, with pi's own home directory.
			let pi: string | null;
			try {
				pi = piResolveToCwd(input, "/w");
			} catch {
				pi = null;
			}
			assert.equal(resolveToolPath(input, "/w", homedir()), pi);
		});
	}
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
	interface Case {
		name: string;
		report: FileReport | undefined;
		ended: WaitEnd;
		expected: string | null;
	}
	const CASES: Case[] = [
		{
			name: "no answer within the answer cap",
			report: undefined,
			ended: "no answer",
			expected: "Neovim did not answer within 1 s (suspended or busy?): it may still show the old content of /p/a.ts.",
		},
		{ name: "aborted before any answer", report: undefined, ended: "aborted", expected: null },
		{ name: "not open", report: report({ status: "not-open" }), ended: "settled", expected: null },
		{
			name: "reloaded without a checker",
			report: report({ diagnostics_expected: false }),
			ended: "settled",
			expected: null,
		},
		{
			name: "unsaved changes in the editor",
			report: report({ status: "modified", modified: true }),
			ended: "settled",
			expected:
				"Note: /p/a.ts is open in Neovim with unsaved changes. The editor kept the user's version and did not reload it; the user's buffer differs from the file on disk.",
		},
		{
			name: "no fresh diagnostics within the diagnostics cap",
			report: report(),
			ended: "no diagnostics",
			expected: "Neovim reloaded /p/a.ts; no diagnostics for the new content arrived within 2 s.",
		},
		{
			name: "stale diagnostics are not shown",
			report: report({ diagnostics: { version: 4, total: 1, items: [item] } }),
			ended: "no diagnostics",
			expected: "Neovim reloaded /p/a.ts; no diagnostics for the new content arrived within 2 s.",
		},
		{
			name: "fresh and clean",
			report: report({ diagnostics: { version: 5, total: 0, items: [] } }),
			ended: "settled",
			expected: "Neovim reloaded /p/a.ts: no diagnostics for the new content.",
		},
		{
			name: "fresh, counted but none listed: not 'clean'",
			report: report({ diagnostics: { version: 5, total: 3, items: [] } }),
			ended: "settled",
			expected: "Neovim reloaded /p/a.ts. Diagnostics (3 reported, none listed by the editor):",
		},
		{
			name: "fresh errors",
			report: report({ diagnostics: { version: 5, total: 1, items: [item] } }),
			ended: "settled",
			expected: "Neovim reloaded /p/a.ts. Diagnostics (1 error):\n- error 3:2 bad [ts 1]",
		},
	];
	for (const { name, report: r, ended, expected } of CASES)
		it(name, () => assert.equal(formatToolNote(NVIM, "/p/a.ts", { report: r, ended }), expected));

	it("words the caps it was given", () => {
		const caps = { answerMs: 250, diagnosticsMs: 1500 };
		assert.match(
			formatToolNote(NVIM, "/p/a.ts", { report: undefined, ended: "no answer" }, caps) ?? "",
			/within 250 ms/,
		);
		assert.match(
			formatToolNote(NVIM, "/p/a.ts", { report: report(), ended: "no diagnostics" }, caps) ?? "",
			/within 1500 ms/,
		);
	});
});

describe("formatToolNote: an answer wait extended while the editor kept answering others", () => {
	it("says how long pi waited, to the second", () => {
		const note = (waitedMs: number) =>
			formatToolNote(NVIM, "/p/a.ts", { report: undefined, ended: "no answer", waitedMs }) ?? "";
		assert.match(note(1000), /did not answer within 1 s /);
		assert.match(note(1300), /did not answer within 1 s /);
		assert.match(note(3900), /did not answer within 4 s /);
		assert.match(note(5000), /did not answer within 5 s /);
	});
});
