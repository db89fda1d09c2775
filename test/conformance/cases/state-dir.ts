/**
 * The state dir's rules against whole editors (PROTOCOL.md, "Where the files live", "Writing"): the `check`
 * and `write` rows of the one state dir table (test/fixtures/state-dir-cases.ts, also run against
 * src/protocol/state-dir.ts and the Neovim writer module). Each row's directory is laid out before the editor
 * starts (prepareCase: the runtime dir is the case's root, the state dir `<root>/pi-ide`); a row's target
 * and temp entries are planted at the editor's own `<pid>.json` after its first write, and the next write
 * must do what the row says. A refused dir gets one notice and nothing written in it, however often the
 * editor tries again; a trusted one gets a 0600 file by atomic replace with no temp left.
 */
import assert from "node:assert/strict";
import { chownSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
	DECOY,
	LEFTOVER,
	type Left,
	placeEntry,
	prepareCase,
	STATE_DIR_CASES,
	type StateDirCase,
} from "../../fixtures/state-dir-cases.ts";
import { pollUntil } from "../../helpers/poll.ts";
import { type Editor, type Kit, type KitCase, QUIET_MS, quietPeriod, readAsPi, WRITE_WAIT_MS } from "../kit.ts";

/** A uid that is not ours, for a foreign-owned dir (chown needs root). */
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

const TEXT = "one\ntwo\nthree\n";

/** The rows a whole editor can meet: a dir it finds at start, entries it finds at its own file's name. */
const ROWS = STATE_DIR_CASES.filter(
	(c) => (c.op === "write" || c.op === "check") && c.dir.kind !== "missing-parent" && c.expect.problem !== "missing",
);

/** New notices of the client since `before` (a count taken earlier). */
async function noticesSince(editor: Editor, before: number): Promise<string[]> {
	return (await editor.notices()).slice(before);
}

/** Move the cursor to each line in turn: each move is a change the client must try to write. */
async function nudge(editor: Editor, lines: number[]): Promise<void> {
	for (const line of lines) await editor.session.moveCursor({ line, column: 1 });
}

function leftAt(path: string, old: string | null): Left {
	const stats = lstatSync(path, { throwIfNoEntry: false });
	if (!stats) return "absent";
	if (stats.isSymbolicLink()) return "symlink";
	if (stats.isDirectory()) return "directory";
	const text = readFileSync(path, "utf8");
	if (text === old) return "old";
	if (text === LEFTOVER) return "leftover";
	readAsPi(text, path);
	return "new";
}

async function runRow(kit: Kit, c: StateDirCase): Promise<void> {
	const layout = prepareCase({ ...c, target: "none", temp: "none" }, kit.tmp());
	if (c.owner === "other") chownSync(layout.dir, NOBODY, NOBODY);
	const editor = await kit.start({ runtimeDir: layout.root, file: { name: "a.txt", text: TEXT } });
	const decoyIntact = () => readFileSync(layout.decoy, "utf8") === DECOY;
	const planted = c.target !== undefined || c.temp !== undefined;
	const target = join(layout.realDir, `${editor.session.pid}.json`);

	if (c.expect.problem !== null && !planted) {
		// Refused from the start: one notice, then nothing written there however often it tries.
		const notices = await pollUntil(
			async () => ((await editor.notices()).length > 0 ? editor.notices() : undefined),
			"a notice that the state dir is refused",
			WRITE_WAIT_MS,
		);
		await nudge(editor, [2, 1]);
		await quietPeriod(QUIET_MS);
		assert.equal((await editor.notices()).length, notices.length, `one notice, not one per write: ${notices}`);
		const inside = lstatSync(layout.realDir, { throwIfNoEntry: false })?.isDirectory()
			? readdirSync(layout.realDir)
			: [];
		assert.deepEqual(inside, [], "nothing written in the refused dir");
		if (c.dir.kind === "dangling-symlink") {
			assert.equal(lstatSync(join(layout.root, "nowhere"), { throwIfNoEntry: false }), undefined, "not created");
		}
		if (typeof c.expect.dirMode === "number") {
			assert.equal(lstatSync(layout.dir).mode & 0o7777, c.expect.dirMode, "the dir is left as it was");
		}
		assert.ok(decoyIntact(), "the decoy is intact");
		return;
	}

	await editor.until((s) => s.active_buffer.name === "a.txt", "the first write");
	if (typeof c.expect.dirMode === "number" && c.owner !== "other") {
		assert.equal(lstatSync(layout.dir).mode & 0o7777, c.expect.dirMode);
	}
	if (!planted) {
		assert.equal(lstatSync(target).mode & 0o777, 0o600, "the state file is 0600");
		assert.deepEqual(readdirSync(layout.realDir), [`${editor.session.pid}.json`], "no temp file left");
		return;
	}

	// Plant the row's entries at this editor's names, then make it write again.
	const noticesBefore = (await editor.notices()).length;
	const old = readFileSync(target, "utf8");
	if (c.target !== undefined && c.target !== "file") {
		rmSync(target);
		placeEntry(target, c.target, old, layout.decoy);
	}
	placeEntry(`${target}.tmp`, c.temp ?? "none", LEFTOVER, layout.decoy);
	await editor.session.moveCursor({ line: 3, column: 1 });
	if (c.expect.problem === null) {
		await editor.until((s) => s.active_buffer.cursor.line === 3, "the write after the planted entries");
		assert.equal(leftAt(target, old), "new");
		assert.equal(lstatSync(target).mode & 0o777, 0o600, "the state file is 0600");
	} else {
		await pollUntil(
			async () => ((await noticesSince(editor, noticesBefore)).length > 0 ? true : undefined),
			"a notice that the write is refused",
			WRITE_WAIT_MS,
		);
		await nudge(editor, [2, 1]);
		await quietPeriod(QUIET_MS);
		assert.equal((await noticesSince(editor, noticesBefore)).length, 1, "one notice, not one per write");
		assert.equal(leftAt(target, old), "old", "the old state file stays");
	}
	if (c.expect.temp !== undefined) assert.equal(leftAt(`${target}.tmp`, old), c.expect.temp);
	assert.ok(decoyIntact(), "the decoy is intact");
}

export const cases: KitCase[] = ROWS.map(
	(c): KitCase => ({
		name: `state dir (${c.op} row): ${c.name}`,
		needs: ["editor-per-row"],
		...(c.owner === "other"
			? { unavailable: () => (isRoot ? undefined : "a dir of another owner needs root to chown") }
			: {}),
		run: (kit) => runRow(kit, c),
	}),
);
