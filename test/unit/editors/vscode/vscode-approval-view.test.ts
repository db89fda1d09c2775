/**
 * Issue 26 item 6 in VS Code's approval shell (editors/vscode/src/approval-view.ts) against the fake VS Code API
 * (test/helpers/fake-vscode.ts): a request for a file whose document has unsaved changes is shown against what the
 * user sees. The arrival notice names the unsaved lines a hunk touches; the marks stand where the merge would put
 * each hunk (a touching one on the user's lines); "Show change" is the document beside itself with the hunks that
 * touch nothing placed. A clean document keeps what it had.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseApproval } from "../../../../editors/shared/approval.ts";
import { buildRequest } from "../../../../src/link/approval.ts";
import type { Uri as FakeUri } from "../../../helpers/fake-vscode.ts";
import "../../../helpers/fake-vscode-hook.ts";

const vscode = await import("../../../helpers/fake-vscode.ts");
const { ApprovalView, PROPOSAL_SCHEME } = await import("../../../../editors/vscode/src/approval-view.ts");

const PI_PID = 4242;
const lines = (...l: string[]) => `${l.join("\n")}\n`;
const DISK = lines("1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
/** pi replaces line 2 and line 8. */
const PI_TEXT = lines("1", "TWO", "3", "4", "5", "6", "7", "EIGHT", "9", "10");
const TOUCH_8 =
	"1 of 2 hunks touches your unsaved line 8: if accepted, the file gets pi's text and your buffer keeps yours there";

const root = mkdtempSync(join(tmpdir(), "vscode-approval-view-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** The lines (1-based) the approval's decorations cover in `file`, with the notes drawn after them. */
function marked(bench: InstanceType<typeof vscode.Workbench>, file: string): { lines: number[]; notes: string[] } {
	const out = { lines: [] as number[], notes: [] as string[] };
	for (const [type, ranges] of bench.decorations.get(file) ?? []) {
		const background = (type.options as { backgroundColor?: { id?: string } }).backgroundColor?.id;
		if (background !== "diffEditor.removedLineBackground") continue;
		for (const range of ranges as (InstanceType<typeof vscode.Range> & {
			renderOptions?: { after?: { contentText?: string } };
		})[]) {
			const r = (range as { range?: InstanceType<typeof vscode.Range> }).range ?? range;
			for (let l = r.start.line; l <= r.end.line; l++) out.lines.push(l + 1);
			out.notes.push(range.renderOptions?.after?.contentText ?? "");
		}
	}
	return out;
}

interface Case {
	name: string;
	/** The user's unsaved text; undefined: the document is clean. */
	buffer?: string;
	/** What the notice adds after the request's description. */
	notice: string;
	marks: number[];
	/** Which marks' notes say the hunk touches the user's lines. */
	touching: boolean[];
	/** The proposal view's right side. */
	proposal: string;
	/** What the diff's title says after the file's names. */
	title: string;
}

const CASES: Case[] = [
	{
		name: "clean document: the proposal itself",
		notice: "",
		marks: [2, 8],
		touching: [false, false],
		proposal: PI_TEXT,
		title: "(pi's proposal)",
	},
	{
		name: "two unsaved lines typed at the top: pi's hunks marked two lines down, placed there",
		buffer: lines("u1", "u2", ...DISK.trimEnd().split("\n")),
		notice: "",
		marks: [4, 10],
		touching: [false, false],
		proposal: lines("u1", "u2", ...PI_TEXT.trimEnd().split("\n")),
		title: "(pi's proposal in your unsaved buffer)",
	},
	{
		name: "line 8 changed unsaved: its hunk named and marked there, the user's line kept in the proposal",
		buffer: lines("1", "2", "3", "4", "5", "6", "7", "mine", "9", "10"),
		notice: `; ${TOUCH_8}`,
		marks: [2, 8],
		touching: [false, true],
		proposal: lines("1", "TWO", "3", "4", "5", "6", "7", "mine", "9", "10"),
		title: "(pi's proposal in your unsaved buffer; 1 of 2 hunks touches your unsaved line 8)",
	},
];

describe("VS Code approval: the proposal against a document with unsaved changes", () => {
	for (const [i, c] of CASES.entries()) {
		test(c.name, async () => {
			const dir = mkdtempSync(join(root, `state-${i}-`));
			chmodSync(dir, 0o700);
			const file = join(dir, "notes.txt");
			writeFileSync(file, DISK);
			const bench = new vscode.Workbench(dir);
			vscode.useWorkbench(bench);
			const log: string[] = [];
			const view = new ApprovalView({
				log: (line) => void log.push(line),
				marksEnabled: () => true,
				changed: () => {},
				findDocument: (path) => bench.documents.find((d) => d.fileName === path) as never,
				diskText: () => DISK,
				guard: (fn) => fn,
				now: () => Date.now() / 1000,
			});
			try {
				const document = bench.open(file).document;
				if (c.buffer !== undefined) bench.edit(document, c.buffer);
				const now = Date.now() / 1000;
				const raw = {
					protocol: "0.4",
					kind: "pi-approval",
					pid: PI_PID,
					editor_pid: process.pid,
					timestamp: now,
					request: buildRequest({
						id: "r1",
						tool: "edit",
						file,
						before: { kind: "text", text: DISK },
						after: PI_TEXT,
						timeoutS: 120,
						now,
					}),
				};
				const parsed = parseApproval(JSON.stringify(raw), PI_PID);
				assert.ok(parsed.ok);
				view.received(PI_PID, { kind: "request", request: parsed.request, dropped: 0 });
				assert.deepEqual(bench.shown, [
					`pi wants to edit notes.txt: 2 hunks${c.notice}. No answer within 120 s leaves it unchanged.`,
				]);
				const marks = marked(bench, file);
				assert.deepEqual(marks.lines, c.marks);
				assert.deepEqual(
					marks.notes.map((n) => n.includes("touches your unsaved lines")),
					c.touching,
				);
				await bench.commands.get("piIdeContext.showProposal")?.();
				const diff = bench.executed.find((e) => e.id === "vscode.diff");
				assert.ok(diff, `the diff shown (log: ${log.join(" | ")})`);
				const [left, right, title] = diff.args as [FakeUri, FakeUri, string];
				assert.equal(title, `notes.txt ↔ notes.txt ${c.title}`);
				assert.equal(left?.toString(), document.uri.toString(), "the document itself on the left");
				assert.equal(right?.scheme, PROPOSAL_SCHEME);
				assert.equal(bench.contentProviders.get(PROPOSAL_SCHEME)?.provideTextDocumentContent(right), c.proposal);
				assert.equal(document.getText(), c.buffer ?? DISK, "the document untouched");
			} finally {
				view.dispose();
				bench.dispose();
				vscode.useWorkbench(undefined);
			}
		});
	}
});
