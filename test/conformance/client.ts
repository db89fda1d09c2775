/**
 * The conformance kit's one seam: what a case may ask of any editor client, in the protocol's own terms.
 * Each client has an adapter in test/conformance/adapters/<name>.ts that exports `adapters: ClientAdapter[]`
 * (one per version it runs on, e.g. Neovim 0.7.2 and 0.10), driving the real editor (or, where no editor can
 * run here, the client's own code through its documented headless driver). The kit runs every case against
 * every adapter it finds there; a third-party author adds one file and runs
 * `node --test test/conformance/kit.test.ts` (test/conformance/README.md).
 *
 * Positions are the protocol's: 1-based line, 1-based UTF-8 byte column. Paths are absolute.
 */

/** A position in a buffer, as the state file writes it. */
export interface Position {
	line: number;
	column: number;
}

/**
 * What a client can be driven to do. A case that needs a capability the adapter lacks is not run for it, and
 * the kit's report lists it with the adapter's reason (`missing`): never a silent pass.
 */
export type Capability =
	/** The user can select text (a visual selection, a region, a selection in the document). */
	| "selection"
	/** The user can change a buffer without saving it. */
	| "edit"
	/** Protocol v0.3: the client reads pi's `pi-<pid>.json`, reloads unmodified buffers and reports per file. */
	| "reload"
	/** A checker's diagnostics can be published for a buffer, and the client writes them dated with its version. */
	| "diagnostics"
	/** The editor can start without a UI (it must write nothing) and gain one later (it starts writing). */
	| "ui-gate"
	/**
	 * Editors start cheaply enough for a table that starts one of its own per row (the state dir's 21 rows,
	 * the 13 kinds of bad message). An adapter whose editor takes seconds to start (a browser window with a
	 * whole workbench) leaves such tables to a faster adapter of the same client, and says which.
	 */
	| "editor-per-row"
	/**
	 * Protocol v0.4, pi's change set (`pi-<pid>.review.json`) and `reverted`: the client marks pi's hunks in the
	 * buffers it has open and reverts one in the buffer on the user's command. The session has the review
	 * methods (`reviewMarks`, `editLines`, `revertHunk`, `undo`).
	 */
	| "review"
	// ---- approval (protocol v0.4, cases/approval.ts) ----
	/**
	 * The client answers pi's approval requests (`pi-<pid>.approval.json`, `decisions`): it announces a request
	 * for it (a notice) and the user answers with a command that names no request (ClientSession.approve/reject).
	 */
	| "approval"
	/** The client marks a proposal in an open buffer, and the adapter reads the marks (ClientSession.approvalMarks). */
	| "approval-marks"
	/**
	 * Protocol v0.5, pi's identity is (pid, pid_ns) (cases/identity.ts): the client reads `pi-<pid>-<ns>.json`,
	 * checks pi's pid only in its own namespace, echoes `pid_ns` as `pi_ns` and keys per pi by the pair.
	 */
	| "pi-identity"
	/**
	 * Protocol v0.5: the client hands its unsaved file buffers' text over in `<pid>.buffers.json`, named by the
	 * state file's `buffers_serial` (cases/unsaved-buffers.ts; the session's `setLines` and `save` drive it).
	 */
	| "unsaved-buffers"
	/**
	 * Protocol v0.5 send to pi (cases/send.ts): the user's command hands the pi connected to the editor what they
	 * point at (ClientSession.sendToPi), written as `<pid>.send.json`, and the client shows pi's answer (`sent`).
	 */
	| "send"
	/**
	 * Issue 26 (cases/merge.ts): the client merges pi's change (`changed[].merge`) into a buffer with unsaved
	 * changes, reports `merged` or `conflict`; the session's `editLines` makes the user's edit, its `undo` takes one
	 * step back (the merge's own step).
	 */
	| "merge"
	/**
	 * Protocol v0.5 show (cases/show-ask.ts): the client answers a show in pi's `pi-<pid>.ask.json` in its
	 * `<pid>.answers.json` and puts the place in its list of places (quickfix, location list, problems view), read
	 * by ClientSession.shownPlaces, without changing the user's buffer or cursor.
	 */
	| "show"
	/** Protocol v0.5 ask (cases/show-ask.ts): the client answers an ask with its open file buffers and diagnostics. */
	| "ask";

/** The user's send-to-pi command (capability "send"): what it sends, how, with which typed words. */
export interface KitSend {
	/** `draft` (the default command) or `now` (its "at once" variant). */
	mode: "draft" | "now";
	prompt: string;
	/**
	 * What: the selected lines (`lines`, 1-based inclusive, as a selection the user made), else the line under the
	 * cursor, or the documented form for the diagnostic under the cursor or the whole file.
	 */
	lines?: [number, number];
	form?: "diagnostic" | "file";
}

/** A diagnostic as a checker publishes it, positions in the protocol's terms. */
export interface KitDiagnostic {
	severity: "error" | "warning" | "info" | "hint";
	line: number;
	column: number;
	message: string;
	source?: string;
}

export interface StartOptions {
	/** The editor's working directory: a project folder the kit made. */
	cwd: string;
	/**
	 * The whole environment the editor starts with: a throwaway HOME, XDG_RUNTIME_DIR at the kit's runtime dir
	 * (so the state dir is `<XDG_RUNTIME_DIR>/pi-ide`), PATH. The adapter may add what its editor needs.
	 */
	env: Record<string, string>;
	/** A file to open at start, absolute. */
	file?: string;
	/** Start without a UI (capability "ui-gate"): the client must write nothing until `attachUi`. */
	headless?: boolean;
}

export interface ClientSession {
	/** The pid in the state file's name (Neovim, Vim, Emacs: the editor; VS Code: the extension host). */
	readonly pid: number;
	open(file: string): Promise<void>;
	moveCursor(to: Position): Promise<void>;
	/** Select from `start` to `end`, both inclusive, as a user would (the client sets `selected_at`). */
	select(start: Position, end: Position): Promise<void>;
	clearSelection(): Promise<void>;
	/**
	 * The user stops selecting and keeps the selection as made (Neovim: leaves visual mode, the marks stay;
	 * a GUI editor, whose selection is made once `select` returns: nothing to do). Without it a case that
	 * needs a kept selection uses `clearSelection`, and accepts that the selection may be gone.
	 */
	endSelecting?(): Promise<void>;
	/** Replace the lines of the buffer holding `file`, without saving (capability "edit"). */
	setLines(file: string, lines: string[]): Promise<void>;
	save(file: string): Promise<void>;
	/** The buffer holding `file` as the editor has it now, or undefined when no loaded buffer holds it. */
	buffer(file: string): Promise<{ text: string; modified: boolean } | undefined>;
	/** Every file the editor has loaded in a buffer: a message must never make it load one. */
	loadedFiles(): Promise<string[]>;
	/** Publish `items` for the buffer holding `file`, for its current content (capability "diagnostics"). */
	setDiagnostics(file: string, items: KitDiagnostic[]): Promise<void>;
	/** What the editor told the user since it started (its notices about bad input), oldest first. */
	messages(): Promise<string[]>;
	// ---- approval (protocol v0.4, capability "approval"; cases/approval.ts) ----
	/**
	 * The user's command that approves the request the editor showed, naming none (`:PiIde approve`, M-x
	 * pi-ide-approve, VS Code's "Accept pi's proposed change", JetBrains' action). Returns what the editor told
	 * the user in reply (its line or lines, joined).
	 */
	approve?(): Promise<string>;
	/** The same, rejecting. */
	reject?(): Promise<string>;
	/**
	 * The approval marks in the buffer holding `file`, read through the editor's API (capability
	 * "approval-marks"): the name each carries (namespace, sign group, text property type, overlay face or
	 * property) and the 1-based line it is on.
	 */
	approvalMarks?(file: string): Promise<{ name: string; line: number }[]>;
	/**
	 * The notices that announced pi's requests as they arrived, oldest first, for a client that also tells of other
	 * things about them (a request ending): without it the cases take every notice (`messages`) as one.
	 */
	approvalNotices?(): Promise<string[]>;
	// ---- end approval ----
	/**
	 * Send to pi (capability "send"): the user gives the client's command in the buffer holding `file` (made the
	 * current one); returns once the client has handled it (written its request, or told the user why not).
	 */
	sendToPi?(file: string, send: KitSend): Promise<void>;
	/**
	 * The places pi showed (capability "show"), as the editor's list holds them (Neovim: the quickfix list pi's
	 * places go to), oldest first: file, 1-based line and end line (null: one line), and the entry's text.
	 */
	shownPlaces?(): Promise<{ file: string; line: number; end_line: number | null; text: string }[]>;
	/** Give a headless editor its UI (capability "ui-gate"). */
	attachUi?(): Promise<void>;
	/** A clean exit: the client removes its state file. */
	quit(): Promise<void>;
	/** End the editor however it is (idempotent) and release what the adapter holds. Called after every case. */
	dispose(): Promise<void>;

	// ---- capability "review" (protocol v0.4: pi's change set and reverts; cases/review.ts) ----
	/**
	 * The lines (1-based, ascending, each once) of the buffer holding `file` that the client marks as pi's, read
	 * through the editor's own API and only from marks that are drawn and carry the client's "pi" name (Neovim's
	 * namespace, Vim's sign group, Emacs's overlay property, VS Code's decoration types of the extension).
	 */
	reviewMarks?(file: string): Promise<number[]>;
	/**
	 * The user's edit in the buffer holding `file`, without saving, as one change of their own (its own undo
	 * step): the `remove` lines from `line` (1-based) are replaced by `insert` (`remove` 0: inserted before it).
	 */
	editLines?(file: string, line: number, remove: number, insert: string[]): Promise<void>;
	/**
	 * The user puts the cursor on `line` of the buffer holding `file` (made the current one) and gives the
	 * client's command to revert pi's hunk there; returns once the client has handled it (reverted or refused).
	 */
	revertHunk?(file: string, line: number): Promise<void>;
	/** The user's undo of one step in the buffer holding `file` (Neovim/Vim `u`, Emacs `undo`, Ctrl+Z). */
	undo?(file: string): Promise<void>;
}

export interface ClientAdapter {
	/** Shown in test names: "nvim 0.10", "vim 9", "emacs 28", "vscode (shared client)", "jetbrains (headless)". */
	readonly name: string;
	/** The `app` field its state files carry. */
	readonly app: string;
	readonly capabilities: ReadonlySet<Capability>;
	/** For each capability it lacks, why (one line), shown in the kit's report. */
	readonly missing: Partial<Record<Capability, string>>;
	start(options: StartOptions): Promise<ClientSession>;
	/**
	 * Release what the adapter shares among its sessions (a server, a browser); the kit calls it once, after the
	 * adapter's last case and the dispose of every session.
	 */
	close?(): Promise<void>;
	/**
	 * The client runs inside the kit's own process (its code driven through a fake of the host's API), so its
	 * sessions share the process's pid and environment: the kit runs such adapters one at a time, never beside
	 * another in-process one. Adapters that start an editor process leave it out and run side by side.
	 */
	readonly inProcess?: boolean;
	/**
	 * About how long the kit takes on this client, in seconds, on this project's two-core CI (a scheduling hint:
	 * the kit starts the longest first, so they overlap the short ones). Unset: short.
	 */
	readonly expectedSeconds?: number;
	/**
	 * How many editors of its own (the rows of the editor-per-row tables) the kit may run at once beside the one
	 * the other cases share: an editor that waits on its own timers (a poll, a debounce) more than it uses the
	 * cores. Unset or 1: every case one after another. In-process adapters always run one at a time.
	 */
	readonly rowLanes?: number;
	/**
	 * The editor itself reloads a buffer without unsaved changes whenever its file changes on disk (VS Code's
	 * file watcher), whatever pi's messages say: the kit then judges the client by its reports, not by the
	 * text of such a buffer after a message it must ignore or refuse.
	 */
	readonly hostReloads?: boolean;
}
