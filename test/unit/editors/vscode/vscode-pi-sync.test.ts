/**
 * editors/vscode/src/pi-sync.ts with a fake VS Code: what the client reports about each file pi changed
 * (reloaded at once or at VS Code's reload event, unchanged after the wait, modified with one warning,
 * not-open, gone, refused; the document's own path read, with what it was when the document opened),
 * diagnostics refreshed in the reports, connections for the status bar; and the
 * status bar text (status.ts) and `sameContent`.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import type { DiagnosticsReport } from "../../../../editors/shared/diagnostics.ts";
import type { TextEdit } from "../../../../editors/shared/merge.ts";
import type { ChangedFile, PiMessage } from "../../../../editors/shared/pi-message.ts";
import type { OpenedAs } from "../../../../editors/vscode/src/pi-sync.ts";
import {
	type DiskState,
	type OpenDocument,
	PiSync,
	RELOAD_WAIT_MS,
	sameContent,
} from "../../../../editors/vscode/src/pi-sync.ts";
import { formatStatus, MAX_LISTED } from "../../../../editors/vscode/src/status.ts";
import { contentOf, mergeInfo } from "../../../../src/link/change-set.ts";
import { KEPT_FILE_REPORTS } from "../../../../src/protocol/limits.ts";
import { piIdentityKey } from "../../../../src/protocol/wire.ts";

const OWN = 77;

interface FakeDoc extends OpenDocument {
	text: string;
}

/** A fake host: documents, disk and diagnostics are plain maps; timers run when the test says so. */
function fakeHost() {
	const documents = new Map<string, FakeDoc>();
	const disk = new Map<string, DiskState>();
	/** What each path is recorded as when a document opens from it (openedAs). */
	const recorded = new Map<string, OpenedAs>();
	const reads: { file: string; opened: OpenedAs | undefined }[] = [];
	const diagnostics = new Map<string, DiagnosticsReport>();
	const warnings: string[] = [];
	const applied: TextEdit[][] = [];
	const refuseEdits = { on: false };
	const timers = new Map<number, { fn: () => void; ms: number }>();
	let nextTimer = 1;
	let changes = 0;
	const host = {
		ownPid: OWN,
		findDocument: (file: string) => documents.get(file),
		openedAs: (file: string) => recorded.get(file),
		readDisk: (file: string, opened: OpenedAs | undefined): DiskState => {
			reads.push({ file, opened });
			return disk.get(file) ?? { kind: "gone" };
		},
		diagnostics: (file: string) => diagnostics.get(file) ?? null,
		diagnosticsExpected: (file: string) => diagnostics.has(file),
		warnModified: (file: string, where?: string) => warnings.push(where === undefined ? file : `${file}: ${where}`),
		sha256: (text: string) => createHash("sha256").update(text, "utf8").digest("hex"),
		/** VS Code's applyEdit: the edits at once (one undo step), refused for another version. */
		applyEdits: async (document: OpenDocument, edits: TextEdit[], version: number) => {
			const doc = document as FakeDoc;
			if (doc.version !== version || refuseEdits.on) return false;
			const offset = (p: { line: number; character: number }) =>
				doc.text
					.split("\n")
					.slice(0, p.line)
					.reduce((n, l) => n + l.length + 1, 0) + p.character;
			for (const e of [...edits].reverse()) {
				doc.text = doc.text.slice(0, offset(e.start)) + e.text + doc.text.slice(offset(e.end));
			}
			doc.version++;
			applied.push(edits);
			return true;
		},
		changed: () => changes++,
		setTimeout: (fn: () => void, ms: number) => {
			timers.set(nextTimer, { fn, ms });
			return nextTimer++;
		},
		clearTimeout: (handle: unknown) => timers.delete(handle as number),
	};
	const sync = new PiSync(host);
	const open = (file: string, text: string, version = 1, isDirty = false) => {
		const doc: FakeDoc = { uri: { fsPath: file }, text, version, isDirty, getText: () => doc.text };
		documents.set(file, doc);
		return doc;
	};
	const onDisk = (file: string, text: string | undefined) => disk.set(file, { kind: "file", text });
	/** VS Code reloads `file` from disk (a new version, clean) and fires its change event. */
	const reload = (file: string) => {
		const doc = documents.get(file)!;
		const state = disk.get(file);
		doc.text = state?.kind === "file" ? (state.text ?? "") : doc.text;
		doc.version++;
		doc.isDirty = false;
		sync.documentChanged(file);
	};
	const runTimers = () => {
		const due = [...timers.values()];
		timers.clear();
		for (const timer of due) timer.fn();
		return due.map((t) => t.ms);
	};
	return {
		sync,
		documents,
		disk,
		recorded,
		reads,
		diagnostics,
		warnings,
		applied,
		refuseEdits,
		timers,
		open,
		onDisk,
		reload,
		runTimers,
		changes: () => changes,
	};
}

let seq = 0;
function piMessage(changed: string[], overrides: Partial<PiMessage> = {}): PiMessage {
	seq++;
	const entries: ChangedFile[] = changed.map((file) => ({ file, seq, tool: "edit" }));
	return {
		protocol: "0.3",
		kind: "pi",
		pid: 500,
		cwd: "/w",
		timestamp: 1,
		editor_pid: OWN,
		seq,
		changed: entries,
		last_turn: changed,
		...overrides,
	};
}

const dated = (version: number, total = 0): DiagnosticsReport => ({ version, total, items: [] });

describe("PiSync: one status per situation", () => {
	// [description, set-up, expected report fields, warnings]
	const cases: [
		string,
		(h: ReturnType<typeof fakeHost>) => void,
		{ status: string; version: number | null; modified: boolean },
		number,
	][] = [
		["not open here", (h) => h.onDisk("/w/a.ts", "new"), { status: "not-open", version: null, modified: false }, 0],
		[
			"VS Code already reloaded it (buffer = disk)",
			(h) => {
				h.open("/w/a.ts", "new", 4);
				h.onDisk("/w/a.ts", "new");
			},
			{ status: "reloaded", version: 4, modified: false },
			0,
		],
		[
			"buffer = disk but for a BOM and CRLF",
			(h) => {
				h.open("/w/a.ts", "x\ny\n", 2);
				h.onDisk("/w/a.ts", "\ufeffx\r\ny\r\n");
			},
			{ status: "reloaded", version: 2, modified: false },
			0,
		],
		[
			"unsaved changes: kept, one warning",
			(h) => {
				h.open("/w/a.ts", "mine", 9, true);
				h.onDisk("/w/a.ts", "pi's");
			},
			{ status: "modified", version: 9, modified: true },
			1,
		],
		[
			"file deleted after pi's write",
			(h) => {
				h.open("/w/a.ts", "old", 3);
				h.disk.set("/w/a.ts", { kind: "gone" });
			},
			{ status: "gone", version: 3, modified: false },
			0,
		],
		[
			"file replaced by a symlink",
			(h) => {
				h.open("/w/a.ts", "old", 3);
				h.disk.set("/w/a.ts", { kind: "refused" });
			},
			{ status: "refused", version: 3, modified: false },
			0,
		],
	];
	for (const [name, setUp, expected, warnings] of cases) {
		test(name, () => {
			const h = fakeHost();
			setUp(h);
			h.sync.handleMessage(piMessage(["/w/a.ts"]));
			const [report] = h.sync.reports;
			assert.deepEqual({ status: report?.status, version: report?.version, modified: report?.modified }, expected);
			assert.equal(h.warnings.length, warnings);
			assert.equal(h.timers.size, 0, "nothing left waiting");
			assert.deepEqual(h.sync.handled, { pid: 500, seq });
		});
	}
});

describe("PiSync: the document's own path, judged against what it was when the document opened", () => {
	test("pi names another path of the document's file: the document's path is read and reported", () => {
		const h = fakeHost();
		const doc = h.open("/w/a.ts", "new", 4);
		h.documents.set("/w/link-to-a.ts", doc); // found by real path, as extension.ts's findDocument does
		h.onDisk("/w/a.ts", "new");
		h.sync.handleMessage(piMessage(["/w/link-to-a.ts"]));
		assert.deepEqual(
			h.reads.map((r) => r.file),
			["/w/a.ts"],
		);
		assert.deepEqual(
			{ file: h.sync.reports[0]?.file, status: h.sync.reports[0]?.status },
			{ file: "/w/link-to-a.ts", status: "reloaded" },
		);
	});

	test("the record taken when the document opened is what the path is judged against, until it closes", () => {
		const h = fakeHost();
		const atOpen: OpenedAs = { kind: "link", real: "/dotfiles/a.ts" };
		h.recorded.set("/w/a.ts", atOpen);
		h.open("/w/a.ts", "old", 1);
		h.sync.documentOpened("/w/a.ts");
		h.recorded.set("/w/a.ts", { kind: "link", real: "/elsewhere/a.ts" }); // later records are not taken
		h.onDisk("/w/a.ts", "old");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		h.sync.documentClosed("/w/a.ts");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		assert.deepEqual(h.reads, [
			{ file: "/w/a.ts", opened: atOpen },
			{ file: "/w/a.ts", opened: undefined },
		]);
	});

	test("Compare reads the same: the open document's path with its record; nothing for a file not open", () => {
		const h = fakeHost();
		const atOpen: OpenedAs = { kind: "link", real: "/dotfiles/a.ts" };
		h.recorded.set("/w/a.ts", atOpen);
		const doc = h.open("/w/a.ts", "mine", 2, true);
		h.sync.documentOpened("/w/a.ts");
		h.documents.set("/w/link-to-a.ts", doc);
		h.onDisk("/w/a.ts", "pi's");
		assert.deepEqual(h.sync.diskOf("/w/link-to-a.ts"), { kind: "file", text: "pi's" });
		assert.deepEqual(h.reads, [{ file: "/w/a.ts", opened: atOpen }]);
		assert.equal(h.sync.diskOf("/w/not-open.ts"), undefined);
	});
});

describe("PiSync: waiting for VS Code's reload", () => {
	test("a clean buffer that differs from disk is reported once VS Code reloads it, with its diagnostics", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "old", 5);
		h.onDisk("/w/a.ts", "new");
		h.diagnostics.set("/w/a.ts", dated(5, 2));
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		assert.equal(h.sync.reports.length, 0, "nothing reported before the reload");
		assert.equal(h.timers.size, 1);
		const before = h.changes();
		h.reload("/w/a.ts");
		assert.equal(h.timers.size, 0, "the wait is cancelled");
		assert.ok(h.changes() > before, "the state is written");
		assert.deepEqual(h.sync.reports[0], {
			file: "/w/a.ts",
			seq,
			status: "reloaded",
			version: 6,
			modified: false,
			diagnostics_expected: true,
			diagnostics: dated(5, 2),
			pi_pid: 500,
		});
		// The language server answers for the new version: the report follows.
		h.diagnostics.set("/w/a.ts", dated(6, 0));
		h.sync.diagnosticsChanged(["/w/a.ts"]);
		assert.deepEqual(h.sync.reports[0]?.diagnostics, dated(6, 0));
	});

	test("no reload within the wait: `unchanged`; a later reload still makes it `reloaded`", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "old", 5);
		h.onDisk("/w/a.ts", "new");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		assert.deepEqual(h.runTimers(), [RELOAD_WAIT_MS]);
		assert.equal(h.sync.reports[0]?.status, "unchanged");
		assert.equal(h.sync.reports[0]?.version, 5);
		h.reload("/w/a.ts");
		assert.equal(h.sync.reports[0]?.status, "reloaded");
		assert.equal(h.sync.reports[0]?.version, 6);
	});

	test("closing the document ends the wait", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "old", 5);
		h.onDisk("/w/a.ts", "new");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		h.documents.delete("/w/a.ts");
		h.sync.documentClosed("/w/a.ts");
		assert.equal(h.timers.size, 0);
		assert.equal(h.sync.reports.length, 0);
	});

	test("a file too large to compare counts as reloaded at VS Code's clean change", () => {
		const h = fakeHost();
		h.open("/w/big.log", "old", 1);
		h.onDisk("/w/big.log", undefined);
		h.sync.handleMessage(piMessage(["/w/big.log"]));
		assert.equal(h.sync.reports.length, 0);
		h.documents.get("/w/big.log")!.version = 2;
		h.sync.documentChanged("/w/big.log");
		assert.equal(h.sync.reports[0]?.status, "reloaded");
	});

	test("the user types before VS Code reloads: `modified`, with the warning", () => {
		const h = fakeHost();
		const doc = h.open("/w/a.ts", "old", 5);
		h.onDisk("/w/a.ts", "new");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		doc.text = "old!";
		doc.version = 6;
		doc.isDirty = true;
		h.sync.documentChanged("/w/a.ts");
		assert.equal(h.sync.reports[0]?.status, "modified");
		assert.deepEqual(h.warnings, ["/w/a.ts"]);
	});
});

describe("PiSync: warnings, messages and connections", () => {
	test("a dirty file is warned about once until it is clean again", () => {
		const h = fakeHost();
		const doc = h.open("/w/a.ts", "mine", 2, true);
		h.onDisk("/w/a.ts", "pi 1");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		h.onDisk("/w/a.ts", "pi 2");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		assert.deepEqual(h.warnings, ["/w/a.ts"], "once");
		assert.equal(h.sync.reports[0]?.seq, seq, "but each change is reported");
		doc.isDirty = false; // saved or reverted
		h.sync.documentChanged("/w/a.ts");
		doc.isDirty = true;
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		assert.deepEqual(h.warnings, ["/w/a.ts", "/w/a.ts"], "again after it was clean");
	});

	test("a message naming another editor is not acted on, and that pi is not connected", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "mine", 2, true);
		h.onDisk("/w/a.ts", "pi");
		h.sync.handleMessage(piMessage(["/w/a.ts"], { editor_pid: OWN + 1 }));
		assert.equal(h.sync.reports.length, 0);
		assert.deepEqual(h.warnings, []);
		assert.equal(h.sync.handled, null);
		assert.deepEqual(h.sync.connected, []);
	});

	test("two pis: each report names the pi whose change it answers", () => {
		const h = fakeHost();
		h.onDisk("/w/a.ts", "x");
		h.sync.handleMessage(piMessage(["/w/a.ts"], { pid: 600 }));
		h.sync.handleMessage(piMessage(["/w/b.ts"], { pid: 601 }));
		assert.deepEqual(
			h.sync.reports.map((r) => [r.file, r.pi_pid]),
			[
				["/w/a.ts", 600],
				["/w/b.ts", 601],
			],
		);
		assert.deepEqual(h.sync.handled, { pid: 601, seq });
	});

	test("the same message read twice is handled once", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "mine", 2, true);
		h.onDisk("/w/a.ts", "pi");
		const message = piMessage(["/w/a.ts"]);
		h.sync.handleMessage(message);
		h.sync.handleMessage({ ...message, timestamp: 2 });
		assert.equal(h.sync.reports.length, 1);
		assert.equal(h.warnings.length, 1);
	});

	test("connected pis and their last turn; a pi that exits is forgotten", () => {
		const h = fakeHost();
		h.sync.handleMessage(piMessage(["/w/a.ts", "/w/b.ts"]));
		assert.deepEqual(h.sync.connected, [{ pid: 500, cwd: "/w", lastTurn: ["/w/a.ts", "/w/b.ts"] }]);
		h.sync.handleMessage(piMessage([], { pid: 501, editor_pid: null }));
		assert.equal(h.sync.connected.length, 1, "a pi connected to no editor is not listed");
		h.sync.forgetPi(piIdentityKey(500, undefined));
		assert.deepEqual(h.sync.connected, []);
		assert.equal(h.sync.handled, null);
	});

	test("diagnostics of files without a report, or not open, change nothing", () => {
		const h = fakeHost();
		h.onDisk("/w/a.ts", "x");
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		const before = h.changes();
		h.diagnostics.set("/w/a.ts", dated(1));
		h.sync.diagnosticsChanged(["/w/a.ts", "/w/zzz.ts"]);
		assert.equal(h.changes(), before);
		assert.equal(h.sync.reports[0]?.diagnostics, null);
	});
});

describe("sameContent", () => {
	const cases: [string, string, string, boolean][] = [
		["identical", "a\nb", "a\nb", true],
		["BOM on disk", "a", "\ufeffa", true],
		["CRLF on disk, LF in the buffer", "a\nb\n", "a\r\nb\r\n", true],
		["different text", "a", "b", false],
		["a trailing newline matters", "a", "a\n", false],
	];
	for (const [name, buffer, disk, expected] of cases)
		test(name, () => assert.equal(sameContent(buffer, disk), expected));
});

describe("formatStatus", () => {
	const base = { enabled: true, path: "/run/pi-ide/77.json", connected: [], folders: ["/w"] };
	test("writing off", () => assert.equal(formatStatus({ ...base, enabled: false }).text, "$(eye-closed) pi"));
	test("no pi connected", () => {
		const status = formatStatus(base);
		assert.equal(status.text, "$(eye) pi");
		assert.equal(status.tooltip, "pi IDE context: writing /run/pi-ide/77.json");
	});
	test("a connected pi that changed files: the count, relative paths in the tooltip", () => {
		const status = formatStatus({ ...base, connected: [{ pid: 500, lastTurn: ["/w/src/a.ts", "/elsewhere/b.ts"] }] });
		assert.equal(status.text, "$(plug) pi 2");
		assert.match(
			status.tooltip,
			/pi session 500 is connected to this window\.\nChanged in its last turn:\n {2}src\/a\.ts\n {2}\/elsewhere\/b\.ts$/,
		);
	});
	test("a connected pi with no changes", () => {
		const status = formatStatus({ ...base, connected: [{ pid: 500, lastTurn: [] }] });
		assert.equal(status.text, "$(plug) pi");
		assert.match(status.tooltip, /changed no files/);
	});
	test("long lists are cut", () => {
		const lastTurn = Array.from({ length: MAX_LISTED + 3 }, (_, i) => `/w/f${i}.ts`);
		const status = formatStatus({ ...base, connected: [{ pid: 500, lastTurn }] });
		assert.match(status.tooltip, /and 3 more$/);
		assert.equal(status.tooltip.split("\n").filter((l) => l.startsWith("  f")).length, MAX_LISTED);
	});
});

describe("PiSync: report retention (PROTOCOL.md `files`)", () => {
	test("pi writing 40 open files in one message finds all 40 answers while its message lists them; a newer message listing 5 leaves its newest 20", () => {
		const h = fakeHost();
		const files = Array.from({ length: 41 }, (_, i) => `/w/f${i}.ts`);
		for (const file of files) {
			h.open(file, "new");
			h.onDisk(file, "new");
		}
		h.sync.handleMessage(piMessage([], { seq: 1000, changed: [] })); // connected: every later change is news
		const first = files.slice(0, 40).map((file, i) => ({ file, seq: 1001 + i, tool: "write" }));
		h.sync.handleMessage(piMessage([], { seq: 1040, changed: first }));
		assert.deepEqual(
			h.sync.reports.map((r) => r.file),
			files.slice(0, 40),
			"no clock: read however late, all 40 are there",
		);
		const newer = [...first.slice(-4), { file: files[40] as string, seq: 1041, tool: "write" }];
		h.sync.handleMessage(piMessage([], { seq: 1041, changed: newer }));
		assert.deepEqual(
			h.sync.reports.map((r) => r.file),
			files.slice(-KEPT_FILE_REPORTS),
		);
	});

	test("two pis writing one file: each finds its own answer, and both follow the file's diagnostics", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "new", 3);
		h.onDisk("/w/a.ts", "new");
		h.sync.handleMessage(piMessage(["/w/a.ts"], { pid: 500 }));
		h.sync.handleMessage(piMessage(["/w/a.ts"], { pid: 600 }));
		assert.deepEqual(
			h.sync.reports.map((r) => r.pi_pid),
			[500, 600],
		);
		h.diagnostics.set("/w/a.ts", dated(3, 1));
		h.sync.diagnosticsChanged(["/w/a.ts"]);
		assert.deepEqual(
			h.sync.reports.map((r) => r.diagnostics?.total),
			[1, 1],
		);
	});
});

describe("PiSync: VS Code's own reload read something else (issue 22)", () => {
	// VS Code reloads a clean document through its path by itself; when the path was swapped for a symlink to a
	// secret meanwhile, the document holds what the verified read (no symlink followed) did not find.
	test("a reload that does not hold the verified read's content is `refused`, with no diagnostics, until one does", () => {
		const h = fakeHost();
		h.open("/w/a.ts", "old", 5);
		h.onDisk("/w/a.ts", "new");
		h.diagnostics.set("/w/a.ts", dated(6, 2));
		h.sync.handleMessage(piMessage(["/w/a.ts"]));
		const doc = h.documents.get("/w/a.ts")!;
		doc.text = "SECRET";
		doc.version = 6;
		h.sync.documentChanged("/w/a.ts");
		assert.equal(h.sync.reports.length, 0, "not `reloaded`");
		h.runTimers();
		assert.deepEqual(
			{ ...h.sync.reports[0], seq: 0 },
			{
				file: "/w/a.ts",
				seq: 0,
				status: "refused",
				version: 6,
				modified: false,
				diagnostics_expected: false,
				diagnostics: null,
				pi_pid: 500,
			},
		);
		h.sync.diagnosticsChanged(["/w/a.ts"]);
		assert.equal(h.sync.reports[0]?.diagnostics, null, "the secret's diagnostics never go to pi");
		h.reload("/w/a.ts");
		assert.equal(h.sync.reports[0]?.status, "reloaded");
		assert.equal(h.sync.reports[0]?.version, 7);
	});
});

describe("PiSync: pi's change merged into a dirty document (issue 26)", () => {
	const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
	const text = (lines: string[]) => `${lines.join("\n")}\n`;
	const swap = (lines: string[], at: number, line: string) => lines.map((l, i) => (i === at - 1 ? line : l));
	const FILE = "/w/m.txt";
	/** pi's message for its tool's change `before` -> `after` (the merge fields as pi builds them). */
	const piEdit = (before: string, after: string, extra: Partial<ChangedFile> = {}) => {
		const merge = mergeInfo(contentOf(Buffer.from(before)), contentOf(Buffer.from(after)));
		const message = piMessage([FILE]);
		return { ...message, changed: [{ file: FILE, seq: message.seq, tool: "edit", merge, ...extra }] };
	};
	const cases: {
		name: string;
		buffer: string[];
		pi: string[];
		status: string;
		after: string[];
		conflicts?: { line: number; lines: number; text: string[] }[];
		warnings?: string[];
		refuse?: boolean;
		noMerge?: boolean;
		disk?: string;
	}[] = [
		{
			name: "pi's line away from the user's: merged, the document stays dirty",
			buffer: swap(LINES, 2, "user two"),
			pi: swap(LINES, 10, "pi ten"),
			status: "merged",
			after: swap(swap(LINES, 2, "user two"), 10, "pi ten"),
			conflicts: [],
		},
		{
			name: "pi's line on the user's: conflict, the user's text kept, pi's other line merged, one warning",
			buffer: [...LINES.slice(0, 2), "user three", "user more", ...LINES.slice(3)],
			pi: swap(swap(LINES, 3, "pi three"), 11, "pi eleven"),
			status: "conflict",
			after: [...LINES.slice(0, 2), "user three", "user more", ...swap(LINES, 11, "pi eleven").slice(3)],
			conflicts: [{ line: 3, lines: 2, text: ["user three", "user more"] }],
			warnings: [`${FILE}: lines 3-4`],
		},
		{
			name: "the user typed meanwhile (another version): not merged, modified",
			buffer: swap(LINES, 2, "user two"),
			pi: swap(LINES, 10, "pi ten"),
			status: "modified",
			after: swap(LINES, 2, "user two"),
			warnings: [FILE],
			refuse: true,
		},
		{
			name: "an older pi (no merge field): modified, untouched",
			buffer: swap(LINES, 2, "user two"),
			pi: swap(LINES, 10, "pi ten"),
			status: "modified",
			after: swap(LINES, 2, "user two"),
			warnings: [FILE],
			noMerge: true,
		},
		{
			name: "the file is not what pi's tool wrote (hash): modified, untouched",
			buffer: swap(LINES, 2, "user two"),
			pi: swap(LINES, 10, "pi ten"),
			status: "modified",
			after: swap(LINES, 2, "user two"),
			warnings: [FILE],
			disk: text(swap(LINES, 10, "someone else")),
		},
		{
			name: "CR-LF on disk: modified, untouched",
			buffer: swap(LINES, 2, "user two"),
			pi: swap(LINES, 10, "pi ten"),
			status: "modified",
			after: swap(LINES, 2, "user two"),
			warnings: [FILE],
			disk: text(swap(LINES, 10, "pi ten")).replaceAll("\n", "\r\n"),
		},
	];
	for (const c of cases) {
		test(c.name, async () => {
			const h = fakeHost();
			const doc = h.open(FILE, text(c.buffer), 5, true);
			h.onDisk(FILE, c.disk ?? text(c.pi));
			h.refuseEdits.on = c.refuse === true;
			const message = piEdit(text(LINES), text(c.pi), c.noMerge ? { merge: undefined } : {});
			h.sync.handleMessage(message);
			await new Promise((resolve) => setImmediate(resolve));
			const report = h.sync.reports.find((r) => r.file === FILE);
			assert.equal(report?.status, c.status);
			assert.deepEqual(report?.merge?.conflicts, c.conflicts);
			assert.equal(doc.text, text(c.after));
			assert.equal(doc.isDirty, true, "never saved");
			assert.equal(report?.version, doc.version);
			assert.deepEqual(h.warnings, c.warnings ?? []);
			assert.ok(h.applied.length <= 1, "one WorkspaceEdit at most (one undo step)");
			// Item 6: a conflict is listed (with pi's hunks) while the document stays dirty.
			const listed = c.status === "conflict" ? (c.conflicts ?? []) : [];
			assert.deepEqual(
				h.sync.conflicts,
				listed.map((k) => ({ file: FILE, line: k.line, lines: k.lines })),
			);
			doc.isDirty = false;
			assert.deepEqual(h.sync.conflicts, [], "the document clean again: no longer listed");
		});
	}

	test("two changes of the file in one message: merged from the base before the first", async () => {
		const h = fakeHost();
		const doc = h.open(FILE, text(swap(LINES, 1, "user one")), 5, true);
		const one = swap(LINES, 6, "pi six");
		const two = swap(one, 12, "pi twelve");
		h.onDisk(FILE, text(two));
		h.sync.handleMessage(piMessage([])); // the pi is known: its next message's changes are all new
		const first = piEdit(text(LINES), text(one));
		const second = piEdit(text(one), text(two));
		const m2 = mergeInfo(contentOf(Buffer.from(text(one))), contentOf(Buffer.from(text(two))));
		h.sync.handleMessage({
			...second,
			changed: [
				first.changed[0] as ChangedFile,
				{ file: FILE, seq: second.seq, tool: "edit", merge: { ...m2, prev_seq: first.seq } },
			],
		});
		await new Promise((resolve) => setImmediate(resolve));
		assert.equal(h.sync.reports.find((r) => r.file === FILE)?.status, "merged");
		assert.equal(doc.text, text(swap(two, 1, "user one")));
	});
});
