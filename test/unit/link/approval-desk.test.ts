/**
 * The approval's I/O half (src/link/approval-desk.ts) on a real private directory: the request file exists, 0600,
 * only while a write/edit waits and only for an editor that answers approvals; nobody to ask means applied and
 * said; nothing to approve (the tool would fail, or change nothing) asks nobody.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { EditorRecord } from "../../../src/discovery/scan.ts";
import { ApprovalDesk, type ReviewCall } from "../../../src/link/approval-desk.ts";
import type { PathMapping } from "../../../src/protocol/path-map.ts";
import type { EditorState } from "../../../src/protocol/protocol.ts";
import type { ApprovalMessage } from "../../../src/protocol/wire.ts";
import { makeState } from "../../helpers/state-files.ts";

const PI = 4242;
const EDITOR = 777;
const UID = process.getuid?.() ?? 0;
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function world(
	editorState: Partial<EditorState> | null,
	refusedDir: string | null = null,
	/** pi in a sandbox: the editors know pi's project as this directory. */
	hostWork: string | null = null,
) {
	const root = mkdtempSync(join(tmpdir(), "pi-ide-approval-"));
	roots.push(root);
	const dir = join(root, "pi-ide");
	mkdirSync(dir);
	chmodSync(dir, 0o700);
	const work = join(root, "w");
	mkdirSync(work);
	let state: EditorState | null = editorState ? { ...makeState({ pid: EDITOR, cwd: work }), ...editorState } : null;
	const listeners = new Set<() => void>();
	const record = (): EditorRecord | undefined =>
		state ? { path: join(dir, `${EDITOR}.json`), pid: EDITOR, state, writtenAt: 1, ino: 0 } : undefined;
	const desk = new ApprovalDesk({
		stateDir: dir,
		uid: UID,
		pid: PI,
		cwd: work,
		home: root,
		connected: record,
		editorPorts: () => ({
			read: () => state,
			subscribe: (l) => {
				listeners.add(l);
				return () => listeners.delete(l);
			},
			now: () => 0,
			setTimer: () => () => {},
		}),
		stateDirProblem: () => refusedDir,
		paths: hostWork === null ? [] : [{ editor: hostWork, pi: work, from: "mount" } satisfies PathMapping],
	});
	const decide = (decision: "accept" | "reject", id: string) => {
		if (state) state = { ...state, decisions: [{ pi_pid: PI, id, decision }] };
		for (const l of listeners) l();
	};
	const approvalFile = join(dir, `pi-${PI}.approval.json`);
	return { dir, work, desk, decide, approvalFile };
}

const call = (over: Partial<ReviewCall>): ReviewCall => ({
	toolName: "write",
	input: { path: "a.txt", content: "new\n" },
	id: "req-1",
	timeoutS: 60,
	propose: async () => "new\n",
	...over,
});

describe("ApprovalDesk", () => {
	test("an editor that answers: the request file, 0600, while pi waits; gone after the decision", async () => {
		const w = world({ decisions: [] });
		writeFileSync(join(w.work, "a.txt"), "old\n");
		const pending = w.desk.review(call({}));
		await new Promise((r) => setImmediate(r));
		const stat = lstatSync(w.approvalFile);
		assert.equal(stat.mode & 0o777, 0o600);
		const message = JSON.parse(readFileSync(w.approvalFile, "utf8")) as ApprovalMessage;
		assert.equal(message.editor_pid, EDITOR);
		assert.deepEqual(
			[
				message.request.id,
				message.request.file,
				message.request.hunks[0]?.old_text,
				message.request.hunks[0]?.new_text,
			],
			["req-1", join(w.work, "a.txt"), ["old"], ["new"]],
		);
		w.decide("accept", "req-1");
		const reviewed = await pending;
		assert.deepEqual(reviewed?.outcome, { kind: "accepted", where: "Neovim" });
		assert.equal(existsSync(w.approvalFile), false);
	});

	test("pi in a sandbox: the request names the file as the editor knows it", async () => {
		const w = world({ decisions: [] }, null, "/host/proj");
		writeFileSync(join(w.work, "a.txt"), "old\n");
		const pending = w.desk.review(call({}));
		await new Promise((r) => setImmediate(r));
		const message = JSON.parse(readFileSync(w.approvalFile, "utf8")) as ApprovalMessage;
		assert.equal(message.request.file, "/host/proj/a.txt");
		w.decide("accept", "req-1");
		assert.equal((await pending)?.outcome.kind, "accepted");
	});

	test("an editor without approval and no dialog: applied without asking, and said; no file", async () => {
		const w = world({});
		const reviewed = await w.desk.review(call({}));
		assert.deepEqual(reviewed?.outcome, { kind: "unattended" });
		assert.match(reviewed?.words.note ?? "", /applied without approval/);
		assert.equal(existsSync(w.approvalFile), false);
	});

	describe("a state dir pi refuses (another user made /tmp/pi-ide first) never turns into silent approval", () => {
		const REFUSED = "/tmp/pi-ide is owned by uid 1001, not by you";
		test("no dialog (print mode): not applied, and the model is told why and to tell the user", async () => {
			const w = world(null, REFUSED);
			const reviewed = await w.desk.review(call({}));
			assert.deepEqual(reviewed?.outcome, { kind: "dir refused", problem: REFUSED });
			assert.equal(reviewed?.words.note, null);
			assert.match(reviewed?.words.block ?? "", /pi refuses its state directory \(\/tmp\/pi-ide is owned by uid 1001/);
			assert.match(reviewed?.words.block ?? "", /the change was not applied and a\.txt is unchanged/);
		});
		test("pi's dialog: asked, and its title says the editor cannot be asked and why", async () => {
			const w = world(null, REFUSED);
			let title = "";
			const reviewed = await w.desk.review(
				call({
					dialog: async (t) => {
						title = t;
						return "accept";
					},
				}),
			);
			assert.match(
				title,
				/Your editor cannot be asked: pi refuses its state directory \/tmp\/pi-ide is owned by uid 1001/,
			);
			assert.deepEqual(reviewed?.outcome, { kind: "accepted", where: "pi's approval dialog" });
		});
		test("a problem that cannot be told counts as refused", async () => {
			const w = world(null);
			const desk = new ApprovalDesk({
				stateDir: w.dir,
				uid: UID,
				pid: PI,
				cwd: w.work,
				home: w.dir,
				connected: () => undefined,
				editorPorts: () => {
					throw new Error("no editor");
				},
				stateDirProblem: () => {
					throw new Error("boom");
				},
			});
			const reviewed = await desk.review(call({}));
			assert.equal(reviewed?.outcome.kind, "dir refused");
			assert.ok(reviewed?.words.block);
		});
	});

	test("no editor, pi's dialog: asked with the title, its answer counts; no file", async () => {
		const w = world(null);
		let title = "";
		const reviewed = await w.desk.review(
			call({
				dialog: async (t) => {
					title = t;
					assert.equal(existsSync(w.approvalFile), false);
					return "reject";
				},
			}),
		);
		assert.match(title, /^pi wants to create a\.txt \(\+1 -0 in 1 hunk\)/);
		assert.deepEqual(reviewed?.outcome, { kind: "rejected", where: "pi's approval dialog" });
	});

	test("a binary file: asked all the same, with a note instead of hunks", async () => {
		const w = world({ decisions: [] });
		writeFileSync(join(w.work, "a.txt"), Buffer.from([0, 1, 2]));
		let proposed = false;
		const pending = w.desk.review(
			call({
				propose: async () => {
					proposed = true;
					return "x";
				},
			}),
		);
		await new Promise((r) => setImmediate(r));
		const message = JSON.parse(readFileSync(w.approvalFile, "utf8")) as ApprovalMessage;
		assert.deepEqual([message.request.note, message.request.hunks], ["binary", []]);
		assert.equal(proposed, false, "no dry run on text pi does not carry");
		w.decide("reject", "req-1");
		assert.equal((await pending)?.outcome.kind, "rejected");
	});

	// Item 9 of issue 22: the user saves the file while reviewing; the approval was for the content pi read.
	const MEANWHILE: {
		name: string;
		before: string | null;
		/** What happens to the file while pi waits: new content, null to delete it, undefined to leave it. */
		meanwhile: string | null | undefined;
		decision: "accept" | "reject";
		want: string;
	}[] = [
		{
			name: "the file untouched, approved",
			before: "old\n",
			meanwhile: undefined,
			decision: "accept",
			want: "accepted",
		},
		{ name: "saved with the same bytes", before: "old\n", meanwhile: "old\n", decision: "accept", want: "accepted" },
		{ name: "a line added and saved", before: "old\n", meanwhile: "old\nmine\n", decision: "accept", want: "changed" },
		{ name: "one byte changed", before: "old\n", meanwhile: "olD\n", decision: "accept", want: "changed" },
		{ name: "deleted", before: "old\n", meanwhile: null, decision: "accept", want: "changed" },
		{ name: "a new file created meanwhile", before: null, meanwhile: "mine\n", decision: "accept", want: "changed" },
		{ name: "changed, but rejected", before: "old\n", meanwhile: "old\nmine\n", decision: "reject", want: "rejected" },
	];
	for (const m of MEANWHILE)
		test(`the file while the user reviews: ${m.name} -> ${m.want}`, async () => {
			const w = world({ decisions: [] });
			const path = join(w.work, "a.txt");
			if (m.before !== null) writeFileSync(path, m.before);
			const pending = w.desk.review(call({}));
			await new Promise((r) => setImmediate(r));
			assert.equal(existsSync(w.approvalFile), true, "pi asks");
			if (m.meanwhile === null) rmSync(path);
			else if (m.meanwhile !== undefined) writeFileSync(path, m.meanwhile);
			w.decide(m.decision, "req-1");
			const reviewed = await pending;
			assert.equal(reviewed?.outcome.kind, m.want);
			if (m.want === "changed") {
				assert.deepEqual(reviewed?.outcome, { kind: "changed", where: "Neovim" });
				assert.match(reviewed?.words.block ?? "", /a\.txt changed after the change was proposed.*not applied/);
			}
		});

	const NOTHING: { name: string; c: Partial<ReviewCall> }[] = [
		{ name: "the tool would fail (its text is not in the file)", c: { toolName: "edit", propose: async () => null } },
		{ name: "the tool would change nothing", c: { propose: async () => "old\n" } },
		{ name: "not a file-writing tool", c: { toolName: "bash" } },
		{ name: "no path", c: { input: { content: "x" } } },
	];
	for (const n of NOTHING)
		test(`nothing to approve: ${n.name}`, async () => {
			const w = world({ decisions: [] });
			writeFileSync(join(w.work, "a.txt"), "old\n");
			assert.equal(await w.desk.review(call(n.c)), null);
			assert.equal(existsSync(w.approvalFile), false);
		});
});
