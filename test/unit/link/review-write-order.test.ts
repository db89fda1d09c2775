/**
 * pi's change set is written off pi's thread (src/link/editor-link.ts), and the message that announces a change
 * must never land before the change set that carries it: an editor reloads on the message and marks what the
 * change set says. A seeded randomised check drives an EditorLink through runs of edits to a few files, with
 * connections dropped and restored, turns ending and the event loop let run at random points, and looks at the
 * state dir as an editor does (the message, then the change set) between the steps. Its oracle is independent
 * of pi's code: the content each file had after each seq, and a replay of the change set's hunks on their
 * baseline. Replay a failure with REVIEW_ORDER_SEED.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { EditorRecord } from "../../../src/discovery/scan.ts";
import { EditorLink } from "../../../src/link/editor-link.ts";
import { seededInts } from "../../helpers/seeded.ts";
import { makeState } from "../../helpers/state-files.ts";

const PI = 4_100_002;
const INITIAL = "one\ntwo\nthree\n";
const EDITOR = 4_100_001;
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

interface Hunk {
	old_start: number;
	old_lines: number;
	new_text: string[];
}

/** The lines of `baseline` with `hunks` applied (the protocol's meaning of a hunk, written here from PROTOCOL.md). */
function replay(baseline: string | null, hunks: readonly Hunk[]): string[] {
	const old = baseline === null || baseline === "" ? [] : baseline.replace(/\n$/, "").split("\n");
	const out: string[] = [];
	let next = 1; // the next baseline line not yet copied
	for (const h of hunks) {
		// old_lines 0: an insertion before old_start; else old_start is the first line replaced.
		while (next < h.old_start) out.push(old[next++ - 1] as string);
		out.push(...h.new_text);
		next += h.old_lines;
	}
	while (next <= old.length) out.push(old[next++ - 1] as string);
	return out;
}

/** Whatever an editor would read now: the message's newest change, and the change set (or undefined). */
function look(dir: string) {
	const read = (name: string) => {
		try {
			return JSON.parse(readFileSync(join(dir, name), "utf8"));
		} catch {
			return undefined;
		}
	};
	// In the editor's order: the message first, then the change set it announces.
	const message = read(`pi-${PI}.json`) as { changed: { file: string; seq: number }[] } | undefined;
	const review = read(`pi-${PI}.review.json`) as
		| { runs: { run: number; files: { file: string; baseline: string | null; hunks: Hunk[] }[] }[] }
		| undefined;
	return { message, review };
}

describe("pi's change set lands before the message that announces it", () => {
	it("seeded: at every look, the newest announced change is in the change set, with content at least that new", async () => {
		const seed = Number(process.env["REVIEW_ORDER_SEED"] ?? 20261202);
		const rand = seededInts(seed);
		for (let round = 0; round < 12; round++) {
			const root = mkdtempSync(join(tmpdir(), "pi-ide-review-order-"));
			roots.push(root);
			const dir = join(root, "pi-ide");
			mkdirSync(dir);
			chmodSync(dir, 0o700);
			const files = ["a.txt", "b.txt", "c.txt"].map((name) => join(root, name));
			for (const file of files) writeFileSync(file, INITIAL);
			const state = makeState({ pid: EDITOR, cwd: root });
			let connected: EditorRecord | undefined = {
				path: join(dir, `${EDITOR}.json`),
				pid: EDITOR,
				state,
				writtenAt: 0,
				ino: 0,
			};
			const link = new EditorLink({
				stateDir: dir,
				uid: process.getuid?.() ?? -1,
				pid: PI,
				cwd: root,
				home: root,
				connected: () => connected,
				seqCounter: { last: 0 },
			});
			// The oracle: each file's content after each seq.
			const contents = new Map<string, Map<number, string>>(files.map((f) => [f, new Map()]));
			let seq = 0;
			const steps: string[] = [];
			// The run of each seq: a run begins with the first edit after startRun (or the first edit of all).
			const runOf = new Map<number, number>();
			let run = 0;
			let runOpen = false;
			/** What `file` held just before seq `before`: its content at the newest earlier seq, or as created. */
			const contentBefore = (file: string, before: number) =>
				[...(contents.get(file) ?? [])].filter(([s]) => s < before).at(-1)?.[1] ?? INITIAL;
			const check = () => {
				const { message, review } = look(dir);
				const newest = message?.changed.reduce((a, c) => (c.seq > a.seq ? c : a), { file: "", seq: 0 });
				if (!newest || newest.seq === 0) return;
				const where = `seed ${seed}, round ${round}, after ${steps.join(" ")}`;
				assert.ok(review, `${where}: the message names seq ${newest.seq}, no change set`);
				const newestRun = runOf.get(newest.seq);
				const entry = review.runs.find((r) => r.run === newestRun)?.files.find((f) => f.file === newest.file);
				// Without an entry the file is as it was before the run (pi's changes in it cancelled out).
				const shown =
					entry === undefined
						? contentBefore(newest.file, newestRun ?? 0)
						: `${replay(entry.baseline, entry.hunks).join("\n")}\n`;
				const since = [...(contents.get(newest.file) ?? [])].filter(([s]) => s >= newest.seq).map(([, c]) => c);
				assert.ok(
					since.includes(shown),
					`${where}: the change set shows ${newest.file} older than seq ${newest.seq} (run ${newestRun})`,
				);
			};
			for (let step = 0; step < 30; step++) {
				const roll = rand(10);
				if (roll < 5) {
					const file = files[rand(files.length)] as string;
					const lines = readFileSync(file, "utf8").replace(/\n$/, "").split("\n");
					const at = rand(lines.length + 1);
					if (rand(3) === 0 && lines.length > 1) lines.splice(Math.min(at, lines.length - 1), 1);
					else lines.splice(at, rand(2), `line ${step}`);
					link.beforeTool("edit", { path: file });
					const text = `${lines.join("\n")}\n`;
					writeFileSync(file, text);
					seq++;
					if (!runOpen) [run, runOpen] = [seq, true];
					runOf.set(seq, run);
					contents.get(file)?.set(seq, text);
					await link.afterTool("edit", { path: file });
					steps.push(`edit${seq}`);
				} else if (roll === 5) {
					link.startRun();
					runOpen = false;
					steps.push("run");
				} else if (roll === 6) {
					link.endTurn();
					steps.push("turn");
				} else if (roll === 7) {
					connected = connected
						? undefined
						: { path: join(dir, `${EDITOR}.json`), pid: EDITOR, state, writtenAt: 0, ino: 0 };
					link.sync();
					steps.push(connected ? "connect" : "disconnect");
				} else {
					// Let the event loop turn: the writes under way move on (one thread-pool step or more).
					for (let i = rand(4); i >= 0; i--) await new Promise((resolve) => setImmediate(resolve));
					steps.push("tick");
				}
				check();
			}
			await link.flush();
			check();
			await link.close();
			assert.deepEqual(readdirSync(dir), [], `seed ${seed}, round ${round}: pi's files are gone after close`);
		}
	});
});
