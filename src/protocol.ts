/**
 * Protocol v0.2: the shape of one editor state file, as a typebox schema, and
 * `parseEditorState`, which turns untrusted JSON text into a typed value or a
 * list of problems. Pure: no I/O, no pi imports. Unknown fields are tolerated so
 * newer clients keep working with this reader (see PROTOCOL.md, "Compatibility").
 */
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";
import { checkPathLength } from "./paths.ts";

export const PROTOCOL_VERSION = "0.2";

/** Seconds a selection stays fresh after the user made it (spec: SELECTION_FRESH_SECONDS). */
export const SELECTION_FRESH_SECONDS = 60;

/**
 * How far a `selected_at` may lie ahead of pi's clock and still count (as just
 * made): clocks of two processes on one machine agree, but rounding and a
 * client's own clock source may not. Further ahead, the timestamp is invalid.
 */
export const MAX_CLOCK_SKEW_SECONDS = 5;

/** State files larger than this are refused unread (PROTOCOL.md, "Limits"; defined with the other state-dir rules). */
export { MAX_STATE_FILE_BYTES } from "./state-dir.ts";

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

export const EditorStateSchema = Type.Object({
	pid: Type.Integer({ minimum: 1 }),
	cwd: Type.String({ minLength: 1 }),
	timestamp: Type.Number({ minimum: 0 }),
	app: Type.String({ minLength: 1 }),
	product: Type.Optional(Type.String()),
	argv: Type.Optional(Type.Array(Type.String())),
	active_buffer: ActiveBufferSchema,
	database: Type.Optional(DatabaseSchema),
});

export type Position = Static<typeof PositionSchema>;
export type Cursor = Static<typeof CursorSchema>;
export type Selection = Static<typeof SelectionSchema>;
export type ActiveBuffer = Static<typeof ActiveBufferSchema>;
export type DatabaseView = Static<typeof DatabaseSchema>;
export type EditorState = Static<typeof EditorStateSchema>;

const editorStateValidator = Compile(EditorStateSchema);

export type ParseResult = { ok: true; state: EditorState } | { ok: false; problems: string[] };

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

/** Validate an already-decoded value against the v0.2 schema. */
export function validateEditorState(raw: unknown): ParseResult {
	if (editorStateValidator.Check(raw)) {
		const problems = checkPaths(raw);
		return problems.length === 0 ? { ok: true, state: raw } : { ok: false, problems };
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
 */
function checkPaths(state: EditorState): string[] {
	const fields: [string, string | null][] = [
		["/cwd", state.cwd],
		["/active_buffer/file", state.active_buffer.file],
		...(state.argv ?? []).map((arg, i): [string, string] => [`/argv/${i}`, arg]),
	];
	const problems: string[] = [];
	for (const [where, value] of fields) {
		const problem = value === null ? undefined : checkPathLength(value);
		if (problem) problems.push(`${where}: ${problem}`);
		if (problems.length >= MAX_PROBLEMS) break;
	}
	return problems;
}
