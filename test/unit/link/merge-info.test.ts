/**
 * Issue 26, pi's side of a merge into the editor's unsaved buffer: what a change carries (`changed[].merge`: its
 * hunks, the hash of what the tool wrote, the previous change of the file), the cap on all of them in one message,
 * and the tool result for the editor's `merged` and `conflict` reports. Tables of cases.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { contentOf, type FileContent, mergeInfo } from "../../../src/link/change-set.ts";
import { EditorLink } from "../../../src/link/editor-link.ts";
import { ChangeLog, capMerges, formatToolNote } from "../../../src/link/pi-message.ts";
import { MAX_PI_MERGE_BYTES } from "../../../src/protocol/limits.ts";
import type { FileReport, PiMessage } from "../../../src/protocol/protocol.ts";
import { makeState, writeStateFile } from "../../helpers/state-files.ts";

const text = (t: string): FileContent => contentOf(Buffer.from(t));
const sha = (t: string) => createHash("sha256").update(t).digest("hex");

describe("mergeInfo: a change's hunks and the hash of what the tool wrote", () => {
	const cases: { name: string; before: FileContent; after: FileContent; hunks?: unknown[] | undefined }[] = [
		{
			name: "one line changed",
			before: text("a\nb\nc\n"),
			after: text("a\nB\nc\n"),
			hunks: [{ old_start: 2, old_lines: 1, new_start: 2, new_lines: 1, old_text: ["b"], new_text: ["B"] }],
		},
		{
			name: "a line inserted: starts at the line after it",
			before: text("a\nc\n"),
			after: text("a\nb\nc\n"),
			hunks: [{ old_start: 2, old_lines: 0, new_start: 2, new_lines: 1, old_text: [], new_text: ["b"] }],
		},
		{
			name: "a new file: everything inserted",
			before: { kind: "absent" },
			after: text("x\n"),
			hunks: [{ old_start: 1, old_lines: 0, new_start: 1, new_lines: 1, old_text: [], new_text: ["x"] }],
		},
		{ name: "before not text (binary): nothing", before: text("a\0b"), after: text("a\n"), hunks: undefined },
		{ name: "after not carried (too large): nothing", before: text("a\n"), after: { kind: "note", note: "too large" } },
	];
	for (const c of cases) {
		it(c.name, () => {
			const info = mergeInfo(c.before, c.after);
			if (c.hunks === undefined) return assert.equal(info, undefined);
			assert.deepEqual(info?.hunks, c.hunks);
			assert.equal(info?.sha256, sha(c.after.kind === "text" ? c.after.text : ""));
		});
	}
});

describe("ChangeLog and capMerges", () => {
	it("each change of a file names the previous change of that file", () => {
		const log = new ChangeLog({ last: 10 });
		const m = { hunks: [], sha256: sha("") };
		log.record("/a", "edit", m);
		log.record("/b", "edit", m);
		log.record("/a", "write", m);
		log.record("/a", "edit");
		assert.deepEqual(
			log.changed.map((c) => [c.file, c.seq, c.merge?.prev_seq ?? null, c.merge !== undefined]),
			[
				["/a", 11, null, true],
				["/b", 12, null, true],
				["/a", 13, 11, true],
				["/a", 14, null, false],
			],
		);
	});

	it("the newest changes keep their merge; from the first past the cap, older ones go without", () => {
		const big = (n: number) => ({ hunks: [{ ...HUNK, new_text: ["x".repeat(n)] }], sha256: sha("") });
		const changed: PiMessage["changed"] = [
			{ file: "/a", seq: 1, tool: "edit", merge: big(10) },
			{ file: "/b", seq: 2, tool: "edit", merge: big(MAX_PI_MERGE_BYTES / 2) },
			{ file: "/c", seq: 3, tool: "edit", merge: big(MAX_PI_MERGE_BYTES / 2) },
			{ file: "/d", seq: 4, tool: "edit", merge: big(10) },
		];
		assert.deepEqual(
			capMerges(changed).map((c) => c.merge !== undefined),
			[false, false, true, true],
		);
		assert.equal(changed[0]?.merge !== undefined, true, "the log itself keeps them");
	});
});

const HUNK = { old_start: 1, old_lines: 1, new_start: 1, new_lines: 1, old_text: ["a"], new_text: ["b"] };
const NVIM = { app: "nvim" } as const;

const report = (overrides: Partial<FileReport>): FileReport => ({
	file: "/p/a.ts",
	seq: 1,
	status: "merged",
	version: 9,
	modified: true,
	diagnostics_expected: false,
	diagnostics: null,
	...overrides,
});

describe("formatToolNote: merged and conflict", () => {
	const note = (r: FileReport) => formatToolNote(NVIM, "/p/a.ts", { report: r, ended: "settled" }) ?? "";
	const cases: { name: string; report: FileReport; has: RegExp[]; hasNot?: RegExp[] }[] = [
		{
			name: "merged",
			report: report({ merge: { hunks: 2, merged: 2, conflicts: [] } }),
			has: [/merged this change into the editor's unsaved buffer/, /exactly what the tool wrote/],
			hasNot: [/[Cc]onflict/],
		},
		{
			name: "a conflict on one line, the other hunk merged",
			report: report({
				status: "conflict",
				merge: { hunks: 2, merged: 1, conflicts: [{ line: 3, lines: 1, text: ["user's three"] }] },
			}),
			has: [
				/Conflict: 1 of this change's 2 hunks/,
				/the other 1 were merged/,
				/- line 3 of/,
				/user's three/,
				/user decides/,
			],
		},
		{
			name: "a conflict on lines 4-6, the user's text inert and fenced",
			report: report({
				status: "conflict",
				merge: { hunks: 1, merged: 0, conflicts: [{ line: 4, lines: 3, text: ["```", "a\u0007b", "c"] }] },
			}),
			has: [/- lines 4-6 of the user's unsaved buffer:\n````+\n```\na\\u0007b\nc\n````+/],
			hasNot: [new RegExp(String.fromCharCode(7)), /were merged/],
		},
		{
			name: "the user deleted the lines there",
			report: report({
				status: "conflict",
				merge: { hunks: 1, merged: 0, conflicts: [{ line: 7, lines: 0, text: [] }] },
			}),
			has: [/at line 7 of the buffer: the user deleted the lines there/],
		},
	];
	for (const c of cases) {
		it(c.name, () => {
			const n = note(c.report);
			for (const re of c.has) assert.match(n, re);
			for (const re of c.hasNot ?? []) assert.doesNotMatch(n, re);
		});
	}
});

const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe("EditorLink: pi's message carries each change's merge", () => {
	it("the file before and after each tool, the hash of what it wrote, the previous change", async () => {
		const root = mkdtempSync(join(tmpdir(), "pi-ide-merge-"));
		roots.push(root);
		const dir = join(root, "pi-ide");
		mkdirSync(dir);
		chmodSync(dir, 0o700);
		const file = join(root, "a.txt");
		const state = makeState({ pid: 4_000_011, cwd: root, timestamp: 1 });
		const link = new EditorLink({
			stateDir: dir,
			uid: process.getuid?.() ?? 0,
			pid: 4_000_012,
			cwd: root,
			home: "/home/u",
			connected: () => ({ path: join(dir, "4000011.json"), pid: 4_000_011, state, writtenAt: 1, ino: 0 }),
			waitCaps: { answerMs: 50, diagnosticsMs: 50 },
			seqCounter: { last: 0 },
		});
		writeStateFile(dir, state);
		const message = () => JSON.parse(readFileSync(join(dir, "pi-4000012.json"), "utf8")) as PiMessage;
		const steps = [
			{ before: "one\ntwo\n", after: "one\nTWO\n" },
			{ before: "one\nTWO\n", after: "zero\none\nTWO\n" },
		];
		for (const s of steps) {
			writeFileSync(file, s.before);
			link.beforeTool("edit", { path: file });
			writeFileSync(file, s.after);
			await link.afterTool("edit", { path: file });
		}
		await link.flush();
		const changed = message().changed;
		assert.deepEqual(
			changed.map((c) => [c.seq, c.merge?.sha256, c.merge?.prev_seq ?? null, c.merge?.hunks.length]),
			[
				[1, sha("one\nTWO\n"), null, 1],
				[2, sha("zero\none\nTWO\n"), 1, 1],
			],
		);
		// A file written by another tool between this one's before and after: its hunks are not known.
		writeFileSync(file, "a\n");
		link.beforeTool("edit", { path: file });
		link.beforeTool("write", { path: file });
		writeFileSync(file, "b\n");
		await link.afterTool("write", { path: file });
		writeFileSync(file, "c\n");
		await link.afterTool("edit", { path: file });
		await link.flush();
		assert.deepEqual(
			message()
				.changed.slice(2)
				.map((c) => c.merge !== undefined),
			[true, false],
		);
		link.close();
	});
});
