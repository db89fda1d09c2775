/**
 * The VS Code extension's review shell (editors/vscode/src/review-view.ts) against the fake VS Code API
 * (test/helpers/fake-vscode.ts), for the order the kit's review case met by chance (issue 24): pi's change set is
 * read while the document still shows the baseline (VS Code's watcher has not reloaded it yet), so no hunk can be
 * placed; the reload that follows places them, and must draw them. Before the fix an event without
 * `contentChanges` (the fake's reload) threw after the book had placed the marks and before they were drawn, and
 * nothing drew them later: the first change set after a fresh session stayed unmarked.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { ChangeSet, encodeReviewMessage } from "../../../../src/link/change-set.ts";
import { piReviewFileName } from "../../../../src/protocol/wire.ts";
import type { TextDocument, TextDocumentChangeEvent } from "../../../helpers/fake-vscode.ts";
import "../../../helpers/fake-vscode-hook.ts";

const vscode = await import("../../../helpers/fake-vscode.ts");
const { ReviewView } = await import("../../../../editors/vscode/src/review-view.ts");

const BASELINE = "a\nb\nc\nd\ne\nf\n";
const PIS = "a\nB\nc\nD\ne\nf\nG\n";
const PI_PID = 4242;

const root = mkdtempSync(join(tmpdir(), "vscode-review-view-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** The lines (1-based) the review's decorations cover in `file` (the adapter's reading, adapters/vscode.ts). */
function marked(bench: InstanceType<typeof vscode.Workbench>, file: string): number[] {
	const lines = new Set<number>();
	for (const [type, ranges] of bench.decorations.get(file) ?? []) {
		const border = (type.options as { borderColor?: { id?: string } }).borderColor?.id;
		if (!String(border).startsWith("editorGutter.")) continue;
		for (const range of ranges) for (let l = range.start.line; l <= range.end.line; l++) lines.add(l + 1);
	}
	return [...lines].sort((a, b) => a - b);
}

/** How VS Code's reload of the clean document reaches the extension. */
const RELOADS: {
	name: string;
	event: (document: TextDocument, old: string) => TextDocumentChangeEvent;
}[] = [
	{
		name: "an event that carries no contentChanges (the fake's reload)",
		event: (document) => ({ document }),
	},
	{
		name: "VS Code's event: one content change replacing the whole old text",
		event: (document, old) => {
			const lines = old.split("\n");
			return {
				document,
				contentChanges: [
					{ range: new vscode.Range(0, 0, lines.length - 1, (lines.at(-1) ?? "").length), text: document.getText() },
				],
			};
		},
	},
];

describe("VS Code review: a change set read before VS Code reloads the document", () => {
	for (const [i, { name, event }] of RELOADS.entries()) {
		test(`is marked once the reload comes: ${name}`, () => {
			const dir = mkdtempSync(join(root, `state-${i}-`));
			chmodSync(dir, 0o700);
			const file = join(dir, "file.txt");
			writeFileSync(file, BASELINE);
			const bench = new vscode.Workbench(dir);
			vscode.useWorkbench(bench);
			const log: string[] = [];
			const view = new ReviewView({
				dir,
				log: (line) => void log.push(line),
				changed: () => {},
				marksEnabled: () => true,
				guard: (fn) => fn,
			});
			try {
				const document = bench.open(file).document;
				const set = new ChangeSet();
				set.startRun();
				set.before(file, { kind: "text", text: BASELINE }, 1);
				set.after(file, { kind: "text", text: PIS });
				const review = encodeReviewMessage({
					protocol: "0.4",
					kind: "pi-review",
					pid: PI_PID,
					editor_pid: process.pid,
					timestamp: Date.now() / 1000,
					runs: set.runs(),
				});
				writeFileSync(join(dir, piReviewFileName(PI_PID)), review, { mode: 0o600 });
				// pi's message is handled first: the document still shows the baseline, nothing of pi's is there.
				view.load(PI_PID);
				assert.deepEqual(marked(bench, file), [], "nothing marked on the baseline");
				// Then VS Code reloads the clean document from pi's file (all in this tick: the fake's watcher waits).
				writeFileSync(file, PIS);
				document.setText(PIS);
				view.documentChanged(event(document, BASELINE) as never);
				assert.deepEqual(marked(bench, file), [2, 4, 7], "pi's hunks marked after the reload");
				// v0.5 send to pi's hunk form: the hunk under a line (0-based), none where pi changed nothing.
				assert.deepEqual(
					[1, 3, 6, 0, 2].map((line) => view.hunkAt(document as never, line)),
					[{ first: 1, last: 1 }, { first: 3, last: 3 }, { first: 6, last: 6 }, undefined, undefined],
				);
				assert.deepEqual(log, [], "nothing logged");
			} finally {
				view.dispose();
				bench.dispose();
				vscode.useWorkbench(undefined);
			}
		});
	}
});

describe("VS Code review: a merge's conflict is listed with pi's hunks (issue 26 item 6)", () => {
	const CASES: { name: string; conflicts: { line: number; lines: number }[]; listed: string[]; said: string[] }[] = [
		{
			name: "a conflict and no change set: listed alone",
			conflicts: [{ line: 3, lines: 2 }],
			listed: ["$(warning) file.txt: conflict: your unsaved lines 3-4 kept"],
			said: [],
		},
		{
			name: "the user deleted the lines: where they were",
			conflicts: [{ line: 7, lines: 0 }],
			listed: ["$(warning) file.txt: conflict: your unsaved line 7 kept"],
			said: [],
		},
		{
			name: "no conflict, no change set: nothing to list",
			conflicts: [],
			listed: [],
			said: ["pi has changed no files"],
		},
	];
	for (const [i, c] of CASES.entries()) {
		test(c.name, async () => {
			const dir = mkdtempSync(join(root, `conflict-${i}-`));
			chmodSync(dir, 0o700);
			const file = join(dir, "file.txt");
			writeFileSync(file, BASELINE);
			const bench = new vscode.Workbench(dir);
			vscode.useWorkbench(bench);
			const view = new ReviewView({
				dir,
				log: () => {},
				changed: () => {},
				marksEnabled: () => true,
				guard: (fn) => fn,
				conflicts: () => c.conflicts.map((k) => ({ file, ...k })),
			});
			try {
				await bench.commands.get("piIdeContext.reviewList")?.();
				const asked = bench.asked.filter((a) => a.startsWith("pick:"));
				assert.deepEqual(
					c.listed.map((label) => asked.some((a) => a.includes(label))),
					c.listed.map(() => true),
					`listed: ${JSON.stringify(asked)}`,
				);
				if (c.listed.length === 0) assert.deepEqual(asked, []);
				assert.deepEqual(
					bench.shown.map((m) => m.slice(0, 23)),
					c.said,
				);
			} finally {
				view.dispose();
				bench.dispose();
				vscode.useWorkbench(undefined);
			}
		});
	}
});
