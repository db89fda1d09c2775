/**
 * The code-server adapter's edit (test/conformance/adapters/vscode-code-server.ts, `changedLines`): the kit's
 * `setLines` becomes one replacement of only the lines that differ, so VS Code keeps the selection and marks
 * on the rest (an edit below a selection must not move it). Each row is checked two ways: the lines it
 * replaces, and that the replacement applied to the old text gives the new one.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { changedLines } from "../../conformance/adapters/vscode-code-server.ts";

const text = (...lines: string[]) => lines.map((line) => `${line}\n`).join("");

/** `old` with lines [from, to) replaced by `replacement`, as VS Code applies the edit. */
function apply(old: string, edit: { from: number; to: number; text: string }): string {
	const lines = old.split("\n");
	return [...lines.slice(0, edit.from).map((l) => `${l}\n`), edit.text, lines.slice(edit.to).join("\n")].join("");
}

const CASES: { name: string; old: string; next: string; from: number; to: number }[] = [
	{ name: "a line appended", old: text("a", "b"), next: text("a", "b", "c"), from: 2, to: 2 },
	{ name: "lines deleted in the middle", old: text("a", "b", "c", "d"), next: text("a", "d"), from: 1, to: 3 },
	{ name: "a line replaced", old: text("a", "b", "c"), next: text("a", "X", "c"), from: 1, to: 2 },
	{ name: "nothing changed", old: text("a", "b"), next: text("a", "b"), from: 2, to: 2 },
	{ name: "everything replaced", old: text("one", "two"), next: text("USER", "TEXT"), from: 0, to: 2 },
	{ name: "a repeated line inserted", old: text("a", "a"), next: text("a", "a", "a"), from: 2, to: 2 },
	{ name: "an empty document filled", old: "\n", next: text("a", "b"), from: 0, to: 1 },
	{ name: "the first line deleted", old: text("a", "b", "c"), next: text("b", "c"), from: 0, to: 1 },
];

for (const c of CASES) {
	test(`changedLines: ${c.name}`, () => {
		const edit = changedLines(c.old, c.next);
		assert.deepEqual([edit.from, edit.to], [c.from, c.to], "only the lines that differ");
		assert.equal(apply(c.old, edit), c.next, "the edit gives the new text");
	});
}
