/**
 * Obsidian specifics of the state, pure: the language of a vault file, the active note as a host-neutral
 * `DocumentSnapshot` (editing mode reads the CodeMirror 6 editor through Obsidian's `Editor`; reading mode
 * has no cursor, and its selection is the rendered text, located in the Markdown source when it appears
 * there), and the window snapshot with the vault root as `cwd` and vault-relative `file`. Takes structural
 * look-alikes of Obsidian's types, so it is tested without Obsidian.
 */
import { type DocumentSnapshot, type HostSnapshot, linesOf, positionAt, type TextLines } from "../../shared/state.ts";

/** The subset of Obsidian's `Editor` this plugin reads (0-based `{line, ch}` positions, UTF-16). */
export interface EditorLike {
	lineCount(): number;
	getLine(line: number): string;
	getCursor(side?: "from" | "to" | "head" | "anchor"): { line: number; ch: number };
}

export interface FileLike {
	/** Vault-relative, "/"-separated. */
	path: string;
	name: string;
	extension: string;
}

/** What the plugin found in the active leaf. */
export type ActiveView =
	| { kind: "none" }
	/** A file that has no Markdown view (PDF, image, canvas). */
	| { kind: "file"; file: FileLike }
	| ({ kind: "editing"; file: FileLike; editor: EditorLike } & NoteStatus)
	/** Reading mode: the note's source and the user's rendered-text selection ("" for none). */
	| ({ kind: "reading"; file: FileLike; source: string; selectedText: string } & NoteStatus);

/** v0.5: the note's content version and whether its text differs from its file on disk (notes.ts). */
export interface NoteStatus {
	version?: number;
	modified?: boolean;
}

/** Language id by file extension, VS Code's ids where they exist; unknown extensions report the extension. */
const LANGUAGES: Readonly<Record<string, string>> = {
	md: "markdown",
	markdown: "markdown",
	txt: "plaintext",
	canvas: "json",
	json: "json",
	base: "yaml",
	yaml: "yaml",
	yml: "yaml",
	css: "css",
	js: "javascript",
	mjs: "javascript",
	ts: "typescript",
	py: "python",
	sh: "shellscript",
	html: "html",
	csv: "csv",
	pdf: "pdf",
};

export function languageForExtension(extension: string): string | null {
	const ext = extension.toLowerCase();
	if (ext === "") return null;
	return LANGUAGES[ext] ?? ext;
}

/**
 * Where rendered reading-mode text sits in the Markdown source: the first exact occurrence, else null.
 * Rendering drops markup (`**`, `[[ ]]`, list markers), so a selection across formatting is often not
 * found; that selection is then not reported, rather than reported with invented positions.
 */
export function locateInSource(source: string, selected: string): { from: number; to: number } | null {
	const text = selected.replace(/\r\n?/g, "\n");
	if (text.trim() === "") return null;
	const from = source.replace(/\r\n?/g, "\n").indexOf(text);
	return from < 0 ? null : { from, to: from + text.length };
}

function editorLines(editor: EditorLike): TextLines {
	return { count: editor.lineCount(), text: (line) => editor.getLine(line) };
}

const EMPTY: TextLines = { count: 0, text: () => "" };

/** The active view as a snapshot, or null when there is no active file. */
export function snapshotDocument(view: ActiveView): DocumentSnapshot | null {
	if (view.kind === "none") return null;
	const { file } = view;
	const base = { key: file.path, file: file.path, name: file.name, language: languageForExtension(file.extension) };
	// Obsidian exposes no dirty flag: a note is modified while its text differs from the disk (notes.ts), a file
	// without a Markdown view never.
	const status =
		view.kind === "file"
			? { modified: false }
			: { modified: view.modified ?? false, ...(view.version === undefined ? {} : { version: view.version }) };
	switch (view.kind) {
		case "file":
			return { ...base, lines: EMPTY, cursor: null, selection: null, ...status };
		case "editing": {
			const anchor = view.editor.getCursor("anchor");
			const head = view.editor.getCursor("head");
			return {
				...base,
				lines: editorLines(view.editor),
				cursor: { line: head.line, character: head.ch },
				selection: {
					anchor: { line: anchor.line, character: anchor.ch },
					head: { line: head.line, character: head.ch },
				},
				...status,
			};
		}
		case "reading": {
			const source = view.source.replace(/\r\n?/g, "\n");
			const found = locateInSource(source, view.selectedText);
			return {
				...base,
				lines: linesOf(source),
				cursor: null,
				selection: found ? { anchor: positionAt(source, found.from), head: positionAt(source, found.to) } : null,
				...status,
			};
		}
	}
}

/** The window's snapshot: `cwd` is the vault root, `argv` the vault path (stable per vault window). */
export function snapshotVault(view: ActiveView, vaultRoot: string): HostSnapshot {
	return { cwd: vaultRoot, argv: [vaultRoot], document: snapshotDocument(view) };
}
