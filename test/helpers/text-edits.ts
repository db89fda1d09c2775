/**
 * Editor edits on plain text, for the tests of the shared review code (editors/shared/review.ts): a document as
 * VS Code holds it, an edit applied, the edit an undo makes, and the change event VS Code reports for an edit.
 */
import type { LineChange, TextEdit } from "../../editors/shared/review.ts";
import type { TextLines } from "../../editors/shared/state.ts";

/** A document as VS Code holds it: a final line break makes an empty last line. */
export const doc = (lines: string[]): TextLines => ({ count: lines.length, text: (i) => lines[i] ?? "" });
export const docOf = (text: string): TextLines => doc(text.split("\n"));

/** The offset in `text` of a 0-based line and character. */
function offsetIn(text: string, p: { line: number; character: number }): number {
	return (
		text
			.split("\n")
			.slice(0, p.line)
			.reduce((sum, l) => sum + l.length + 1, 0) + p.character
	);
}

/** Apply one editor edit to a text (0-based lines and characters). */
export function applyEdit(text: string, edit: TextEdit): string {
	return text.slice(0, offsetIn(text, edit.start)) + edit.text + text.slice(offsetIn(text, edit.end));
}

/** The edit that takes `edit` back (an undo), in the text `edit` was applied to. */
export function inverseOf(text: string, edit: TextEdit): TextEdit {
	const added = edit.text.split("\n");
	const end = {
		line: edit.start.line + added.length - 1,
		character: (added.length === 1 ? edit.start.character : 0) + (added.at(-1) ?? "").length,
	};
	return { start: edit.start, end, text: text.slice(offsetIn(text, edit.start), offsetIn(text, edit.end)) };
}

/** The change VS Code's change event reports for `edit`. */
export const changeOf = (edit: TextEdit): LineChange => ({
	startLine: edit.start.line,
	startCharacter: edit.start.character,
	endLine: edit.end.line,
	endCharacter: edit.end.character,
	text: edit.text,
});
