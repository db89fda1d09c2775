/**
 * Protocol v0.2: the shape of one editor state file, as a typebox schema, and
 * `parseEditorState`, which turns untrusted JSON text into a typed value or a
 * list of problems. Pure: no I/O, no pi imports. Unknown fields are tolerated so
 * newer clients keep working with this reader (see PROTOCOL.md, "Compatibility").
 */
import { type Static, Type } from "typebox";
import { Compile } from "typebox/compile";

export const PROTOCOL_VERSION = "0.2";

/** Seconds a selection stays fresh after the user made it (spec: SELECTION_FRESH_SECONDS). */
export const SELECTION_FRESH_SECONDS = 60;

/** State files larger than this are refused unread (PROTOCOL.md, "Limits"). */
export const MAX_STATE_FILE_BYTES = 1024 * 1024;

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
	if (editorStateValidator.Check(raw)) return { ok: true, state: raw };
	const problems = editorStateValidator
		.Errors(raw)
		.slice(0, MAX_PROBLEMS)
		.map((e) => `${e.instancePath || "/"}: ${e.message}`);
	return { ok: false, problems: problems.length > 0 ? problems : ["does not match protocol v0.2"] };
}
