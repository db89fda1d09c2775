/**
 * VS Code specifics of the state, pure: which workspace folder is the `cwd`, the per-window `argv`
 * fingerprint, and the active text editor as a host-neutral `DocumentSnapshot`. Takes structural
 * look-alikes of VS Code's types (the real objects fit them), so it is tested without VS Code.
 */
import { dirname } from "node:path";
import { isInside } from "../../../src/protocol/paths.ts";
import type { ApprovalDecision } from "../../shared/approval.ts";
import type { DiagnosticsReport } from "../../shared/diagnostics.ts";
import type { FileReport, HandledMessage } from "../../shared/pi-message.ts";
import type { RevertedHunk } from "../../shared/review.ts";
import type { DocumentSnapshot, HostPosition, HostSnapshot } from "../../shared/state.ts";

export interface UriLike {
	scheme: string;
	fsPath: string;
	toString(): string;
}

export interface DocumentLike {
	uri: UriLike;
	fileName: string;
	isUntitled: boolean;
	languageId: string;
	isDirty: boolean;
	lineCount: number;
	lineAt(line: number): { text: string };
	/** VS Code's `document.version` (protocol v0.3 `active_buffer.version`). */
	version?: number;
}

export interface EditorLike {
	document: DocumentLike;
	selection: { anchor: HostPosition; active: HostPosition };
}

export interface WorkspaceLike {
	workspaceFolders: readonly { uri: UriLike }[] | undefined;
	workspaceFile: UriLike | undefined;
}

/**
 * URI schemes whose documents are the user's files: `file`, and `vscode-userdata` (settings.json and other
 * profile files, real files on disk). Everything else that can become the active editor (output channels,
 * git diffs, `vscode-notebook-cell`, ...) is not a buffer the user is working in, and is ignored.
 */
const FILE_SCHEMES = new Set(["file", "vscode-userdata"]);

function folderPaths(workspace: WorkspaceLike): string[] {
	return (workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/**
 * The innermost of `folders` that contains `file` (nested workspace folders: the deepest one), or undefined
 * when none does. The one rule for the state's `cwd` and the status bar's short paths.
 */
export function innermostFolder(file: string, folders: readonly string[]): string | undefined {
	let best: string | undefined;
	for (const folder of folders) {
		if (isInside(file, folder) && (best === undefined || folder.length > best.length)) best = folder;
	}
	return best;
}

/**
 * `cwd`: the innermost workspace folder that contains the active file, else the first folder; a window
 * without folders uses the file's directory, else `fallback`.
 */
export function pickCwd(workspace: WorkspaceLike, file: string | null, fallback: string): string {
	const folders = folderPaths(workspace);
	const containing = file === null ? undefined : innermostFolder(file, folders);
	if (containing !== undefined) return containing;
	if (folders[0] !== undefined) return folders[0];
	return file !== null ? dirname(file) : fallback;
}

/** `argv`: the saved workspace file, else the folder paths, so two windows on different projects differ. */
export function windowFingerprint(workspace: WorkspaceLike): string[] {
	const file = workspace.workspaceFile;
	if (file !== undefined && file.scheme === "file") return [file.fsPath];
	return folderPaths(workspace);
}

/** Last path segment of an absolute path or of an untitled document's name. */
function baseName(path: string): string {
	const parts = path.split(/[\\/]/);
	return parts[parts.length - 1] || path;
}

/** The protocol v0.3 additions (the active document's diagnostics, the reports on pi's changes) and v0.4's. */
export interface V03Extras {
	/** The document's dated diagnostics, undefined while none can be dated. */
	diagnostics(document: DocumentLike): DiagnosticsReport | undefined;
	files: FileReport[];
	pi: HandledMessage | null;
	/** v0.4: pi's hunks the user reverted (review-view.ts). */
	reverted?: RevertedHunk[];
	/** v0.4: the user's answers to pi's requests for approval (approval-view.ts); always a list once it answers. */
	decisions?: ApprovalDecision[];
}

/** The active editor as a snapshot, or undefined when it is not a user document (see FILE_SCHEMES). */
export function snapshotDocument(editor: EditorLike, extras?: V03Extras): DocumentSnapshot | undefined {
	const { document, selection } = editor;
	let file: string | null;
	if (document.isUntitled || document.uri.scheme === "untitled") file = null;
	else if (FILE_SCHEMES.has(document.uri.scheme)) file = document.uri.fsPath;
	else return undefined;
	return {
		key: document.uri.toString(),
		file,
		name: baseName(file ?? document.fileName),
		language: document.languageId || null,
		lines: { count: document.lineCount, text: (line) => document.lineAt(line).text },
		cursor: selection.active,
		selection: { anchor: selection.anchor, head: selection.active },
		modified: document.isDirty,
		...(document.version === undefined ? {} : { version: document.version }),
		...(extras === undefined ? {} : { diagnostics: extras.diagnostics(document) }),
	};
}

/**
 * The window's snapshot. `editor` undefined means no text editor is active at all: an empty buffer is reported, so
 * a closed file is no longer offered to the model. An active editor that is not a user document (an output pane,
 * the proposal side of a diff) keeps the last state's document: undefined without `extras` (nothing new to say),
 * else a snapshot that keeps the document and carries the reports and decisions (an answer given while such an
 * editor has the focus still reaches pi).
 */
export function snapshotWindow(
	editor: EditorLike | undefined,
	workspace: WorkspaceLike,
	fallbackCwd: string,
	extras?: V03Extras,
): HostSnapshot | undefined {
	const document = editor === undefined ? null : snapshotDocument(editor, extras);
	if (document === undefined && extras === undefined) return undefined;
	return {
		cwd: pickCwd(workspace, document?.file ?? null, fallbackCwd),
		argv: windowFingerprint(workspace),
		document: document ?? null,
		...(document === undefined ? { keepDocument: true } : {}),
		...(extras === undefined ? {} : { protocol: "0.3", files: extras.files, pi: extras.pi }),
		...(extras?.reverted === undefined ? {} : { reverted: extras.reverted }),
		...(extras?.decisions === undefined ? {} : { decisions: extras.decisions }),
	};
}
