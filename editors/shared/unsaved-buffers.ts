/**
 * Protocol v0.5 for the TypeScript clients (PROTOCOL.md, "v0.5: the editor's unsaved buffers"): the texts of the
 * host's documents with unsaved changes go to `<pid>.buffers.json` beside the state file, so that pi's `read` of
 * such a file returns what the user sees. `StateClient` (client.ts) calls `prepare` on its own write, never per
 * keystroke, and only while a pi is connected (the host hands over no documents otherwise: none is looked at);
 * the file is written again only when a document's version or the set of dirty documents changed, or it went,
 * always before the state file that names its serial, and removed once the state names none. The same file rules
 * as the state file (src/protocol/state-dir.ts). The Neovim, Vim and Emacs twins: editors/nvim/lua/pi-ide/
 * buffers.lua, editors/vim/autoload/pi_ide/buffers.vim, editors/emacs/pi-ide-buffers.el.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { MAX_UNSAVED_BUFFERS, MAX_UNSAVED_TEXT_BYTES } from "../../src/protocol/limits.ts";
import { removePrivateFile, type WriteResult, writePrivateFile } from "../../src/protocol/state-dir.ts";
import { editorBuffersFileName } from "../../src/protocol/wire.ts";
import { countLines, type TextLines } from "./state.ts";

/** A host document with unsaved changes. */
export interface DirtyDocument {
	/** Absolute path of its file. */
	file: string;
	/** Its content version, the state file's `active_buffer.version` (VS Code `document.version`). */
	version: number;
	lines: TextLines;
}

/**
 * The file's text for `documents` (the first MAX_UNSAVED_BUFFERS, in the host's order: the active one first).
 * Each text is JSON-encoded once: its encoded size decides whether it fits in what is left of
 * MAX_UNSAVED_TEXT_BYTES (a document that does not is listed `too_large` without text), and the encoded string
 * is spliced in as it is. A last empty line (the text's final newline) is no line, as the state file counts.
 */
export function encodeEditorBuffers(pid: number, serial: number, documents: DirtyDocument[], now: number): string {
	let budget = MAX_UNSAVED_TEXT_BYTES;
	const entries = documents.slice(0, MAX_UNSAVED_BUFFERS).map((d) => {
		const total = countLines(d.lines);
		const head = `{"file":${JSON.stringify(d.file)},"version":${d.version},"lines_total":${total},`;
		const lines: string[] = [];
		for (let i = 0; i < total; i++) lines.push(d.lines.text(i));
		const text = JSON.stringify(lines.join("\n"));
		const bytes = Buffer.byteLength(text, "utf8");
		if (bytes > budget) return `${head}"note":"too_large"}`;
		budget -= bytes;
		return `${head}"text":${text}}`;
	});
	return `{"protocol":"0.5","kind":"editor-buffers","pid":${pid},"serial":${serial},"timestamp":${now},"buffers":[${entries.join(",")}]}`;
}

/** What decides whether the file is written again: the documents and their versions. */
export function dirtyKey(documents: DirtyDocument[]): string {
	return documents
		.slice(0, MAX_UNSAVED_BUFFERS)
		.map((d) => `${d.file}\0${d.version}`)
		.join("\n");
}

export type PreparedBuffers = { ok: true; serial: number | undefined } | { ok: false; error: string };

/** One editor's `<pid>.buffers.json`: its serial, and whether a file of ours may exist. */
export class UnsavedBuffers {
	readonly #dir: string;
	readonly #pid: number;
	readonly #uid: number | undefined;
	#serial = 0;
	#key: string | undefined;
	#written = false;

	constructor(dir: string, pid: number, uid: number | undefined) {
		this.#dir = dir;
		this.#pid = pid;
		this.#uid = uid;
	}

	/**
	 * Before the state file's write: write the file for `documents` when due. The serial the state names, undefined
	 * when none (no dirty document, or no pi connected: `documents` undefined); `ok: false` when it could not be
	 * written (the state then names none and pi reads the disk).
	 */
	prepare(documents: DirtyDocument[] | undefined, now: number): PreparedBuffers {
		if (documents === undefined || documents.length === 0) return { ok: true, serial: undefined };
		const key = dirtyKey(documents);
		const name = editorBuffersFileName(this.#pid);
		// Unchanged and still there (it goes with the state dir when someone removes that): named again as it is.
		if (this.#written && key === this.#key && lstatSync(join(this.#dir, name), { throwIfNoEntry: false })?.isFile()) {
			return { ok: true, serial: this.#serial };
		}
		const serial = this.#serial + 1;
		const result = writePrivateFile(this.#dir, name, encodeEditorBuffers(this.#pid, serial, documents, now), this.#uid);
		if (!result.ok) return { ok: false, error: result.error };
		this.#serial = serial;
		this.#key = key;
		this.#written = true;
		return { ok: true, serial };
	}

	/** Remove the file once no state names it (after the state file's write, or its removal). */
	remove(): WriteResult {
		if (!this.#written) return { ok: true };
		const result = removePrivateFile(this.#dir, editorBuffersFileName(this.#pid), this.#uid);
		if (result.ok) {
			this.#written = false;
			this.#key = undefined;
		}
		return result;
	}
}
