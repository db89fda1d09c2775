/**
 * When a selection counts and when a client writes at all (PROTOCOL.md, "The selection and its clock",
 * "Writing"): `selected_at` is the moment of the user's act, never the time of a later write; a selection
 * whose text was deleted or replaced is no selection; an editor without a UI writes nothing until one
 * attaches; a clean exit removes the state file.
 */
import assert from "node:assert/strict";
import { pollFor } from "../../helpers/poll.ts";
import {
	activeFile,
	type Editor,
	type KitCase,
	nowSeconds,
	QUIET_MS,
	quietPeriod,
	stateDirEntries,
	WRITE_WAIT_MS,
} from "../kit.ts";

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
const TEXT = `${LINES.join("\n")}\n`;

/** Open a fresh copy of the 30 lines as `name`, select lines 10-15 and clear the selection. */
async function selectedThenLeft(editor: Editor, name: string): Promise<string> {
	const file = editor.file(name, TEXT);
	await editor.session.open(file);
	await editor.until((s) => activeFile(s) === file, `${name} open`);
	await editor.session.select({ line: 10, column: 1 }, { line: 15, column: 7 });
	await editor.until((s) => s.active_buffer.selection?.start.line === 10, "the selection of lines 10-15");
	await editor.session.clearSelection();
	return file;
}

/** How a selection's text goes away, and the buffer's lines afterwards. */
const GONE_CASES: { name: string; lines: string[] }[] = [
	{ name: "deleted", lines: [...LINES.slice(0, 9), ...LINES.slice(15)] },
	{ name: "replaced", lines: [...LINES.slice(0, 9), "NEW TEXT", ...LINES.slice(15)] },
];

export const cases: KitCase[] = [
	{
		name: "freshness: selected_at is the user's act; a later write (an edit elsewhere) keeps it",
		needs: ["selection", "edit"],
		run: async (kit) => {
			const editor = await kit.shared();
			const before = nowSeconds();
			const file = editor.file("fresh.txt", TEXT);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "fresh.txt open");
			await editor.session.select({ line: 10, column: 1 }, { line: 15, column: 7 });
			await editor.until((s) => s.active_buffer.selection?.end.line === 15, "the selection of lines 10-15");
			const { endSelecting } = editor.session;
			if (endSelecting) await endSelecting.call(editor.session);
			else await editor.session.clearSelection();
			const letGo = nowSeconds();
			// Long enough that a selected_at taken from a later write (in whole or fractional seconds) shows.
			await quietPeriod(1500);
			const edited = nowSeconds();
			await editor.session.setLines(file, [...LINES, "appended"]);
			const state = await editor.until((s) => s.active_buffer.lines_total === 31, "the edit below the selection");
			const selection = state.active_buffer.selection;
			if (endSelecting) assert.ok(selection, "an edit elsewhere keeps the selection");
			if (selection !== null) {
				assert.deepEqual([selection.start.line, selection.end.line], [10, 15]);
				assert.ok(selection.selected_at !== null, "a selection the user just made has a time");
				assert.ok(
					selection.selected_at >= Math.floor(before) - 1 && selection.selected_at <= letGo + 0.5,
					`selected_at ${selection.selected_at} is the act (between ${before} and ${letGo}), not the write at ${edited}`,
				);
			}
		},
	},
	...GONE_CASES.map(
		(c): KitCase => ({
			name: `freshness: a selection whose text was ${c.name} is no selection`,
			needs: ["selection", "edit"],
			run: async (kit) => {
				const editor = await kit.shared();
				const file = await selectedThenLeft(editor, `${c.name}.txt`);
				await editor.session.setLines(file, c.lines);
				const state = await editor.until(
					(s) => s.active_buffer.lines_total === c.lines.length,
					`the edit (${c.lines.length} lines)`,
				);
				const selection = state.active_buffer.selection;
				assert.ok(
					selection === null || selection.selected_at === null,
					`no selection, not ${JSON.stringify(selection)}`,
				);
			},
		}),
	),
	{
		name: "ui gate: without a UI nothing is written; a UI attaching starts the writes",
		ownEditors: true,
		needs: ["ui-gate"],
		run: async (kit) => {
			const editor = await kit.start({ headless: true, file: { name: "a.txt", text: TEXT } });
			await editor.session.moveCursor({ line: 5, column: 1 });
			await editor.session.open(editor.file("b.txt", TEXT));
			await quietPeriod(QUIET_MS);
			assert.deepEqual(stateDirEntries(editor), [], "no state file without a UI");
			assert.ok(editor.session.attachUi, "an adapter with ui-gate can attach a UI");
			await editor.session.attachUi();
			const state = await editor.until(() => true, "the first write with a UI");
			assert.equal(state.pid, editor.session.pid);
		},
	},
	{
		name: "lifecycle: a clean exit removes the state file and leaves nothing behind",
		ownEditors: true,
		quits: true,
		run: async (kit) => {
			const editor = await kit.start({ file: { name: "a.txt", text: TEXT } });
			await editor.until((s) => s.active_buffer.name === "a.txt", "the first write");
			await editor.session.quit();
			await pollFor(
				() => stateDirEntries(editor).length === 0,
				() => `the state dir is empty after the exit: ${stateDirEntries(editor).join(", ")}`,
				WRITE_WAIT_MS,
			);
		},
	},
];
