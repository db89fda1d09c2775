/**
 * The Vim adapter of the conformance kit (test/conformance/adapters/vim.ts) proven on its own: a session
 * starts real Vim, opens a file, moves, selects, edits, saves and quits, and the state file says each step.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { adapters } from "../conformance/adapters/vim.ts";
import { pollUntil } from "../helpers/poll.ts";
import { makeVimDirs, readState } from "../helpers/vim.ts";

interface Buf {
	file: string;
	cursor: { line: number; column: number };
	modified: boolean;
	selection: { start: object; end: object; text: string; selected_at: number | null } | null;
}

it("vim adapter: open, move, select, edit, save, quit", async (t) => {
	const adapter = adapters[0];
	assert.ok(adapter);
	assert.equal(adapter.app, "vim");
	const dirs = makeVimDirs(t);
	const file = join(dirs.work, "a.txt");
	writeFileSync(file, "alpha\nbéta\ngamma\n");
	mkdirSync(join(dirs.home, ".vim"), { recursive: true });
	const session = await adapter.start({
		cwd: dirs.work,
		env: { HOME: dirs.home, XDG_RUNTIME_DIR: dirs.run, PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
	});
	t.after(() => session.dispose());
	const stateFile = join(dirs.stateDir, `${session.pid}.json`);
	const until = (pred: (b: Buf) => boolean, what: string) =>
		pollUntil(
			() => {
				const s = readState(stateFile);
				const b = s?.["active_buffer"] as Buf | undefined;
				return b && pred(b) ? b : undefined;
			},
			() => `${what}: ${readFileSync(stateFile, "utf8")}`,
		);

	await session.open(file);
	await until((b) => b.file === file, "the file is open");
	await session.moveCursor({ line: 2, column: 4 });
	await until((b) => b.cursor.line === 2 && b.cursor.column === 4, "the cursor after é");
	await session.select({ line: 2, column: 2 }, { line: 2, column: 3 });
	let b = await until((b) => b.selection?.text === "é", "é selected");
	assert.deepEqual(b.selection?.start, { line: 2, column: 2 });
	assert.deepEqual(b.selection?.end, { line: 2, column: 3 });
	assert.equal(typeof b.selection?.selected_at, "number");
	await session.clearSelection();
	await session.setLines(file, ["one", "two"]);
	b = await until((b) => b.modified, "modified after setLines");
	assert.deepEqual(await session.buffer(file), { text: "one\ntwo\n", modified: true });
	assert.deepEqual(await session.loadedFiles(), [file]);
	await session.save(file);
	await until((b) => !b.modified, "saved");
	assert.equal(readFileSync(file, "utf8"), "one\ntwo\n");
	assert.deepEqual(
		await session.messages(),
		(await session.messages()).filter((m) => !/E\d+:/.test(m)),
	);
	await session.quit();
	assert.equal(existsSync(stateFile), false);
});
