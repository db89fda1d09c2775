/**
 * Protocol v0.3: the shape of one editor state file, as a typebox schema, and
 * `parseEditorState`, which turns untrusted JSON text into a typed value or a
 * list of problems; plus pi's own message file (`pi-<pid>.json`) and its parser.
 * Pure: no I/O, no pi imports. Unknown fields are tolerated so newer clients keep
 * working with this reader (see PROTOCOL.md, "Compatibility").
 *
 * v0.3 only adds optional fields. The v0.2 core decides whether a file is an
 * editor at all; a v0.3 field that is malformed is dropped (with a warning), never
 * the whole editor: a bug in a new feature must not take away the old ones.
 */
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";
import {
	MAX_CONFLICT_LINES,
	MAX_CONFLICTS,
	MAX_DECISIONS,
	MAX_DIAGNOSTIC_ITEMS,
	MAX_DIAGNOSTIC_MESSAGE_CHARS,
	MAX_FILE_REPORTS,
	MAX_PI_CHANGED,
	MAX_PI_LAST_TURN,
	MAX_REVERTED_REPORTS,
} from "./limits.ts";
import { PID_NAMESPACE_PATTERN } from "./liveness.ts";
import { checkPathLength } from "./paths.ts";

export const PROTOCOL_VERSION = "0.3";

/** Seconds a selection stays fresh after the user made it (spec: SELECTION_FRESH_SECONDS). */
export const SELECTION_FRESH_SECONDS = 60;

/**
 * How far a `selected_at` may lie ahead of pi's clock and still count (as just
 * made): clocks of two processes on one machine agree, but rounding and a
 * client's own clock source may not. Further ahead, the timestamp is invalid
 * (PROTOCOL.md, "The selection and its clock").
 */
export const MAX_CLOCK_SKEW_SECONDS = 5;

/** The protocol's numeric limits (PROTOCOL.md, "Limits" and v0.3), written once in limits.ts. */
export {
	MAX_DIAGNOSTIC_ITEMS,
	MAX_DIAGNOSTIC_MESSAGE_CHARS,
	MAX_FILE_REPORTS,
	MAX_PI_CHANGED,
	MAX_PI_LAST_TURN,
	MAX_PI_MESSAGE_BYTES,
	MAX_STATE_FILE_BYTES,
} from "./limits.ts";

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

const Line = Type.Integer({ minimum: 1 });
const Column = Type.Integer({ minimum: 1 });

export const PositionSchema = Type.Object({ line: Line, column: Column });

export const CursorSchema = Type.Object({ line: Nullable(Line), column: Nullable(Column) });

export const SelectionSchema = Type.Object({
	start: PositionSchema,
	end: PositionSchema,
	text: Type.String(),
	selected_at: Nullable(Type.Number({ minimum: 0 })),
	/** True when the client cut `text` to keep the state file small (optional, v0.2-compatible). */
	truncated: Type.Optional(Type.Boolean()),
});

export const ActiveBufferSchema = Type.Object({
	file: Nullable(Type.String({ minLength: 1 })),
	name: Type.String(),
	language: Nullable(Type.String()),
	cursor: CursorSchema,
	selection: Nullable(SelectionSchema),
	modified: Type.Boolean(),
	lines_total: Type.Integer({ minimum: 0 }),
});

export const DatabaseSchema = Type.Object({
	table: Type.String({ minLength: 1 }),
	data_source: Type.Optional(Nullable(Type.String())),
	schema: Type.Optional(Nullable(Type.String())),
	primary_key: Type.Optional(Nullable(Type.Array(Type.String()))),
	columns: Type.Optional(
		Nullable(Type.Array(Type.Object({ name: Type.String(), type: Type.Optional(Nullable(Type.String())) }))),
	),
	columns_total: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
	foreign_keys: Type.Optional(
		Nullable(
			Type.Array(
				Type.Object({
					columns: Type.Array(Type.String()),
					ref_table: Type.String(),
					ref_columns: Type.Array(Type.String()),
					on_delete: Type.Optional(Nullable(Type.String())),
				}),
			),
		),
	),
	filter: Type.Optional(Nullable(Type.String())),
	row_count: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
	cell: Type.Optional(
		Nullable(
			Type.Object({
				row: Type.Integer({ minimum: 0 }),
				column: Type.String(),
				type: Type.Optional(Nullable(Type.String())),
				value: Nullable(Type.String()),
			}),
		),
	),
});

/** v0.2, unchanged: what makes a file an editor's state file. */
export const EditorStateV02Schema = Type.Object({
	pid: Type.Integer({ minimum: 1 }),
	cwd: Type.String({ minLength: 1 }),
	timestamp: Type.Number({ minimum: 0 }),
	app: Type.String({ minLength: 1 }),
	product: Type.Optional(Type.String()),
	argv: Type.Optional(Type.Array(Type.String())),
	active_buffer: ActiveBufferSchema,
	database: Type.Optional(DatabaseSchema),
});

// ---- v0.3 additions (all optional) ----------------------------------------------------------------------

// Caps a v0.3 writer applies and this reader enforces again: src/protocol/limits.ts.

export const SEVERITIES = ["error", "warning", "info", "hint"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const DiagnosticItemSchema = Type.Object({
	severity: Type.Union([Type.Literal("error"), Type.Literal("warning"), Type.Literal("info"), Type.Literal("hint")]),
	line: Line,
	column: Column,
	end_line: Type.Optional(Nullable(Line)),
	end_column: Type.Optional(Nullable(Column)),
	message: Type.String(),
	source: Type.Optional(Nullable(Type.String())),
	code: Type.Optional(Nullable(Type.String())),
});

export const DiagnosticsSchema = Type.Object({
	/** The buffer version these diagnostics were current for. */
	version: Type.Integer({ minimum: 0 }),
	/** How many there were before the cap. */
	total: Type.Integer({ minimum: 0 }),
	items: Type.Array(DiagnosticItemSchema),
});

export { PID_NAMESPACE_PATTERN };

/** A v0.5 `pid_ns` or `pi_ns` value: `pid:[<digits>]`. */
const PidNamespaceSchema = Type.String({ pattern: PID_NAMESPACE_PATTERN.source });

export const FILE_STATUSES = [
	"reloaded",
	"unchanged",
	"modified",
	"not-open",
	"gone",
	"refused",
	"merged",
	"conflict",
] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export const FileReportSchema = Type.Object({
	file: Type.String({ minLength: 1 }),
	seq: Type.Integer({ minimum: 0 }),
	status: Type.Union([
		Type.Literal("reloaded"),
		Type.Literal("unchanged"),
		Type.Literal("modified"),
		Type.Literal("not-open"),
		Type.Literal("gone"),
		Type.Literal("refused"),
		/** Issue 26: pi's change merged into the unsaved buffer (only for a change whose message carried `merge`). */
		Type.Literal("merged"),
		/** Issue 26: some of pi's hunks touch the user's unsaved lines: those kept the user's text. */
		Type.Literal("conflict"),
	]),
	version: Nullable(Type.Integer({ minimum: 0 })),
	modified: Type.Boolean(),
	diagnostics_expected: Type.Boolean(),
	diagnostics: Nullable(DiagnosticsSchema),
	/** Optional: the pi whose message this answers (two pis connected to one editor count seqs separately). */
	pi_pid: Type.Optional(Type.Integer({ minimum: 1 })),
	/** Optional (v0.5): that pi's `pid_ns`, as its message said; absent: the initial namespace (or an older editor). */
	pi_ns: Type.Optional(PidNamespaceSchema),
	/** Issue 26, with `merged` and `conflict`: pi's hunks, those merged, and the user's lines where the others would go. */
	merge: Type.Optional(
		Type.Object({
			hunks: Type.Integer({ minimum: 0 }),
			merged: Type.Integer({ minimum: 0 }),
			conflicts: Type.Array(
				Type.Object({
					line: Type.Integer({ minimum: 1 }),
					lines: Type.Integer({ minimum: 0 }),
					text: Type.Array(Type.String(), { maxItems: MAX_CONFLICT_LINES }),
				}),
				{ maxItems: MAX_CONFLICTS },
			),
		}),
	),
});

export const PiSeenSchema = Type.Object({ pid: Type.Integer({ minimum: 1 }), seq: Type.Integer({ minimum: 0 }) });

/** The active buffer with v0.3's optional fields, as the top level and each window carry it. */
const ActiveBufferV03Schema = Type.Object({
	...ActiveBufferSchema.properties,
	version: Type.Optional(Type.Integer({ minimum: 0 })),
	diagnostics: Type.Optional(Nullable(DiagnosticsSchema)),
});

/**
 * v0.3, several windows of one process (JetBrains IDEs): each other open project window, described as the top
 * level describes the window the user touched last. `files` and `pi` stay at the top level: documents are the
 * process's, not a window's.
 */
export const WindowSchema = Type.Object({
	cwd: Type.String({ minLength: 1 }),
	argv: Type.Optional(Type.Array(Type.String())),
	active_buffer: ActiveBufferV03Schema,
	database: Type.Optional(DatabaseSchema),
});

/** v0.4: one of pi's hunks the user reverted in the editor (in the buffer; on disk once they save). */
export const RevertedHunkSchema = Type.Object({
	pi_pid: Type.Integer({ minimum: 1 }),
	/** v0.5: the pi's `pid_ns` as its change set said; absent: the initial namespace. */
	pi_ns: Type.Optional(PidNamespaceSchema),
	run: Type.Integer({ minimum: 0 }),
	id: Type.String({ minLength: 1, maxLength: 64 }),
	file: Type.String({ minLength: 1 }),
	/** Where the hunk stood in the buffer when it was reverted (1-based), and how many of pi's lines it had. */
	line: Type.Integer({ minimum: 1 }),
	lines: Type.Integer({ minimum: 0 }),
});

/** v0.4 approval: the user's decision on one of pi's proposed edits (`pi-<pid>.approval.json`). */
export const ApprovalDecisionSchema = Type.Object({
	pi_pid: Type.Integer({ minimum: 1 }),
	/** v0.5: the pi's `pid_ns` as its request said; absent: the initial namespace. */
	pi_ns: Type.Optional(PidNamespaceSchema),
	id: Type.String({ minLength: 1, maxLength: 64 }),
	decision: Type.Union([Type.Literal("accept"), Type.Literal("reject")]),
});

/** The whole v0.3 editor state: v0.2 plus optional fields. */
export const EditorStateSchema = Type.Object({
	...EditorStateV02Schema.properties,
	protocol: Type.Optional(Type.String()),
	active_buffer: ActiveBufferV03Schema,
	files: Type.Optional(Type.Array(FileReportSchema)),
	pi: Type.Optional(Nullable(PiSeenSchema)),
	windows: Type.Optional(Type.Array(WindowSchema)),
	reverted: Type.Optional(Type.Array(RevertedHunkSchema)),
	decisions: Type.Optional(Type.Array(ApprovalDecisionSchema)),
	/** v0.5: the writer's pid namespace (`pid:[4026531836]`): a pid means something only there. */
	pid_ns: Type.Optional(Type.String()),
	/** v0.5: the `serial` of the current `<pid>.buffers.json` (unsaved buffers); absent or null when there is none. */
	buffers_serial: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});

export type Position = Static<typeof PositionSchema>;
export type Cursor = Static<typeof CursorSchema>;
export type Selection = Static<typeof SelectionSchema>;
export type ActiveBuffer = Static<typeof ActiveBufferSchema>;
export type DatabaseView = Static<typeof DatabaseSchema>;
export type EditorState = Static<typeof EditorStateSchema>;
export type DiagnosticItem = Static<typeof DiagnosticItemSchema>;
export type Diagnostics = Static<typeof DiagnosticsSchema>;
export type FileReport = Static<typeof FileReportSchema>;
export type EditorWindow = Static<typeof WindowSchema>;

/** Most other windows read from one state file (a writer lists at most 8; more are dropped, not refused). */
export const MAX_WINDOWS = 16;
export type RevertedHunk = Static<typeof RevertedHunkSchema>;
export type ApprovalDecision = Static<typeof ApprovalDecisionSchema>;

const editorStateValidator = Compile(EditorStateV02Schema);
const versionValidator = Compile(Type.Integer({ minimum: 0 }));
const diagnosticsValidator = Compile(Nullable(DiagnosticsSchema));
const fileReportValidator = Compile(FileReportSchema);
const piSeenValidator = Compile(Nullable(PiSeenSchema));
const windowValidator = Compile(WindowSchema);
const revertedValidator = Compile(RevertedHunkSchema);
const decisionValidator = Compile(ApprovalDecisionSchema);

/** `warnings`: v0.3 fields that were present but malformed, and were dropped. */
export type ParseResult = { ok: true; state: EditorState; warnings?: string[] } | { ok: false; problems: string[] };

/** Most problems reported for one file; a file that is wrong everywhere should not flood `/ide status`. */
const MAX_PROBLEMS = 5;

/**
 * Parse the text of a state file. Never throws: malformed JSON and schema
 * violations come back as `problems`, each a short "path: message" string.
 */
export function parseEditorState(text: string): ParseResult {
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		return { ok: false, problems: [`invalid JSON: ${(error as Error).message}`] };
	}
	return validateEditorState(raw);
}

/** Validate an already-decoded value: the v0.2 core must hold; malformed v0.3 fields are dropped. */
export function validateEditorState(raw: unknown): ParseResult {
	if (editorStateValidator.Check(raw)) {
		const problems = checkPaths(raw);
		return problems.length === 0 ? checkV03Fields(raw as EditorState) : { ok: false, problems };
	}
	const problems = editorStateValidator
		.Errors(raw)
		.slice(0, MAX_PROBLEMS)
		.map((e) => `${e.instancePath || "/"}: ${e.message}`);
	return { ok: false, problems: problems.length > 0 ? problems : ["does not match protocol v0.2"] };
}

/**
 * Paths longer than the platform allows cannot name a file, and resolving one
 * component by component on every prompt would stall pi (a 200 KB cwd of
 * `/a/a/a...` took over 20 s): such a state file is refused with a diagnostic.
 * Only the fields that are paths: `argv` entries are launch arguments (`nvim -c
 * '<5 KB of Lua>'` is legal), so a long one is no fault of the file; tiers.ts
 * just does not take it for a project path.
 */
function checkPaths(state: Pick<EditorState, "cwd" | "active_buffer">): string[] {
	const fields: [string, string | null][] = [
		["/cwd", state.cwd],
		["/active_buffer/file", state.active_buffer.file],
	];
	const problems: string[] = [];
	for (const [where, value] of fields) {
		const problem = value === null ? undefined : checkPathLength(value);
		if (problem) problems.push(`${where}: ${problem}`);
		if (problems.length >= MAX_PROBLEMS) break;
	}
	return problems;
}

/**
 * Keep the v0.3 fields that are well-formed and within the caps; drop the rest with a warning. A state
 * without any of them comes back as it was (a v0.2 file).
 */
function checkV03Fields(state: EditorState): ParseResult {
	const warnings: string[] = [];
	const buffer = state.active_buffer;
	if ("protocol" in state && typeof state.protocol !== "string") {
		delete state.protocol;
		warnings.push("/protocol: not a string, ignored");
	}
	if ("version" in buffer && !versionValidator.Check(buffer.version)) {
		delete buffer.version;
		warnings.push("/active_buffer/version: not an integer >= 0, ignored");
	}
	if ("diagnostics" in buffer) {
		if (diagnosticsValidator.Check(buffer.diagnostics)) buffer.diagnostics = capDiagnostics(buffer.diagnostics);
		else {
			delete buffer.diagnostics;
			warnings.push("/active_buffer/diagnostics: malformed, ignored");
		}
	}
	if ("files" in state) {
		const files: unknown = state.files;
		if (Array.isArray(files)) {
			const good = files.filter((f) => fileReportValidator.Check(f)) as FileReport[];
			if (good.length < files.length) warnings.push(`/files: ${files.length - good.length} malformed entries ignored`);
			state.files = good.slice(-MAX_FILE_REPORTS).map((f) => ({ ...f, diagnostics: capDiagnostics(f.diagnostics) }));
		} else {
			delete state.files;
			warnings.push("/files: not an array, ignored");
		}
	}
	if ("pid_ns" in state && !(typeof state.pid_ns === "string" && PID_NAMESPACE_PATTERN.test(state.pid_ns))) {
		delete state.pid_ns;
		warnings.push("/pid_ns: not a pid namespace (pid:[<inode>]), ignored");
	}
	if (
		"buffers_serial" in state &&
		state.buffers_serial !== null &&
		!(Number.isSafeInteger(state.buffers_serial) && (state.buffers_serial as number) >= 0)
	) {
		delete state.buffers_serial;
		warnings.push("/buffers_serial: not an integer >= 0, ignored");
	}
	if ("pi" in state && !piSeenValidator.Check(state.pi)) {
		delete state.pi;
		warnings.push("/pi: malformed, ignored");
	}
	if ("windows" in state) {
		const windows: unknown = state.windows;
		if (Array.isArray(windows)) {
			// A window is kept only whole: schema, path lengths and its diagnostics capped like the top level's.
			const good = windows.filter(
				(w) => windowValidator.Check(w) && checkPaths({ cwd: w.cwd, active_buffer: w.active_buffer }).length === 0,
			) as EditorWindow[];
			if (good.length < windows.length)
				warnings.push(`/windows: ${windows.length - good.length} malformed entries ignored`);
			state.windows = good
				.slice(0, MAX_WINDOWS)
				.map((w) =>
					"diagnostics" in w.active_buffer
						? { ...w, active_buffer: { ...w.active_buffer, diagnostics: capDiagnostics(w.active_buffer.diagnostics) } }
						: w,
				);
		} else {
			delete state.windows;
			warnings.push("/windows: not an array, ignored");
		}
	}
	if ("reverted" in state) {
		const reverted: unknown = state.reverted;
		if (Array.isArray(reverted)) {
			const good = reverted.filter((r) => revertedValidator.Check(r)) as RevertedHunk[];
			if (good.length < reverted.length)
				warnings.push(`/reverted: ${reverted.length - good.length} malformed entries ignored`);
			state.reverted = good.slice(-MAX_REVERTED_REPORTS);
		} else {
			delete state.reverted;
			warnings.push("/reverted: not an array, ignored");
		}
	}
	if ("decisions" in state) {
		const decisions: unknown = state.decisions;
		if (Array.isArray(decisions)) {
			const good = decisions.filter((d) => decisionValidator.Check(d)) as ApprovalDecision[];
			if (good.length < decisions.length)
				warnings.push(`/decisions: ${decisions.length - good.length} malformed entries ignored`);
			state.decisions = good.slice(-MAX_DECISIONS);
		} else {
			delete state.decisions;
			warnings.push("/decisions: not an array, ignored");
		}
	}
	return warnings.length > 0 ? { ok: true, state, warnings } : { ok: true, state };
}

function capDiagnostics(d: Diagnostics | null | undefined): Diagnostics | null {
	if (!d) return null;
	const items =
		d.items.length > MAX_DIAGNOSTIC_ITEMS || d.items.some((i) => i.message.length > MAX_DIAGNOSTIC_MESSAGE_CHARS)
			? d.items
					.slice(0, MAX_DIAGNOSTIC_ITEMS)
					.map((i) =>
						i.message.length > MAX_DIAGNOSTIC_MESSAGE_CHARS
							? { ...i, message: i.message.slice(0, MAX_DIAGNOSTIC_MESSAGE_CHARS) }
							: i,
					)
			: d.items;
	return { version: d.version, total: Math.max(d.total, d.items.length), items };
}

// ---- pi -> editor: <state dir>/pi-<pid>.json ------------------------------------------------------------

/** A hunk of one change (the file before pi's tool -> after it), in the change set's shape without an id. */
export const MergeHunkSchema = Type.Object({
	old_start: Type.Integer({ minimum: 1 }),
	old_lines: Type.Integer({ minimum: 0 }),
	new_start: Type.Integer({ minimum: 1 }),
	new_lines: Type.Integer({ minimum: 0 }),
	old_text: Type.Array(Type.String()),
	new_text: Type.Array(Type.String()),
});

export const PiChangeSchema = Type.Object({
	file: Type.String({ minLength: 1 }),
	seq: Type.Integer({ minimum: 1 }),
	tool: Type.String(),
	/**
	 * Issue 26 (optional): what an editor needs to merge this change into an unsaved buffer: the change's hunks,
	 * the SHA-256 (hex) of the file's bytes the tool left, and the seq of pi's previous change to the file.
	 */
	merge: Type.Optional(
		Type.Object({
			hunks: Type.Array(MergeHunkSchema),
			sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
			prev_seq: Type.Optional(Type.Integer({ minimum: 1 })),
		}),
	),
});

export const PiMessageSchema = Type.Object({
	protocol: Type.String(),
	kind: Type.Literal("pi"),
	pid: Type.Integer({ minimum: 1 }),
	cwd: Type.String({ minLength: 1 }),
	timestamp: Type.Number({ minimum: 0 }),
	editor_pid: Nullable(Type.Integer({ minimum: 1 })),
	seq: Type.Integer({ minimum: 0 }),
	changed: Type.Array(PiChangeSchema, { maxItems: MAX_PI_CHANGED }),
	last_turn: Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_PI_LAST_TURN }),
	/** v0.5: pi's pid namespace (`pid:[4026531836]`): its pid means something only there. */
	pid_ns: Type.Optional(Type.String()),
	/** v0.5 send to pi: what became of the latest send pi answered (PROTOCOL.md). */
	sent: Type.Optional(
		Type.Object({
			editor_pid: Type.Integer({ minimum: 1 }),
			id: Type.String({ minLength: 1 }),
			fate: Type.String(),
			reason: Type.Optional(Type.String()),
		}),
	),
});

export type PiChange = Static<typeof PiChangeSchema>;
export type PiMessage = Static<typeof PiMessageSchema>;
