/**
 * What the model already has: decide, for each prompt, whether the editor context
 * goes to the model in full, as a short update, or not at all. Pure: it reads the
 * details of the ide-context messages the model will actually see (the session's
 * projection, after compaction, /tree, /fork or /resume) and the block the
 * controller built now, and returns data.
 *
 * A block is compared in a canonical form: its lines grouped into sections by
 * their leading key (`File:`, `Cursor:`, `Selection (...)`, or any key another
 * part of the extension adds later), ages ("made 4 s ago") removed, and the
 * selection replaced by its identity (editor, file, range, selected_at and a hash
 * of the text). Every message records that canonical state in its details, with
 * an id and the id of the message it updates, so a chain of updates is only
 * trusted while every link of it is still in the model's view, and a hash of the
 * text it was sent with: a `context_edit` that swaps a message's content keeps its
 * details, and a record is only believed while the content still matches it.
 */
import { createHash, hash } from "node:crypto";
import type { ContextBlock, ContextDetails } from "./blocks.ts";

/** What the next prompt sends. */
export type SendKind = "full" | "update" | "none";

/**
 * Version of the record kept in a message's details; another version is not trusted as a baseline. 2 added
 * `textHash`: a version 1 record cannot show that its content is still the one it was sent with.
 */
const MEMORY_VERSION = 2;

/** The canonical form of a block: the header line and its sections in order, ages removed. */
export interface CanonicalState {
	header: string;
	sections: Array<[key: string, value: string]>;
}

/** A selection as the model received it: same editor, file, range, time and text means the same selection. */
export interface SelectionIdentity {
	pid: number;
	file: string;
	range: string;
	selectedAt: number;
	/** sha256 of the selection text as it appears in the block, first 16 hex digits. */
	hash: string;
}

/** Kept in `details.memory` of every ide-context message this module produced. */
export interface MemoryRecord {
	v: typeof MEMORY_VERSION;
	id: string;
	kind: "full" | "update";
	/** The message this update applies to (null for a full block). */
	prev: string | null;
	state: CanonicalState;
	selection: SelectionIdentity | null;
	/** True when this message carries the selection's text (not a reference to an earlier one). */
	selectionSent: boolean;
	/** `textHash` of the text the message was sent with. */
	textHash: string;
}

/** `ContextDetails` plus the memory record (older sessions' messages have no memory). */
export interface MemoryDetails extends ContextDetails {
	memory?: MemoryRecord;
}

/** An ide-context message as the model reads it (the session's projection, or a request), reduced to what this module reads. */
export interface ReadMessage {
	details: unknown;
	/** As pi holds it: a string, or text (and image) parts. */
	content: unknown;
}

/** What the model has, as far as the editor context goes. */
export interface ModelView {
	/** The last editor context the model sees, when every message it builds on is visible too. */
	latest: MemoryRecord | null;
	/** Why there is no usable `latest` (for /ide status). */
	why: string;
	/** Keys (`selectionKey`) of the selections whose text the model sees. */
	selections: ReadonlySet<string>;
}

export interface Decision {
	kind: SendKind;
	/** The message text (empty for "none"). */
	text: string;
	/** The message details (with the new memory record); undefined for "none". */
	details: MemoryDetails | undefined;
	/** One line for /ide status: what is sent and why. */
	why: string;
	/** The selection is in the block but its text is not repeated: the model has it. */
	selectionReferenced: boolean;
}

export interface DecideOptions {
	/** Every prompt gets the full block, selection text included (the behaviour before this module). */
	always: boolean;
	/** Id for the new message's memory record. */
	id: string;
}

const NO_CONTEXT = "the model has no editor context in this conversation yet";
const LOST_CONTEXT =
	"the editor context sent earlier is no longer in the model's view (compaction, /tree, /fork or another session)";

/** Read the model's view from the ide-context messages it will see, oldest first. Never throws on odd details. */
export function modelView(messages: readonly ReadMessage[]): ModelView {
	return viewOf(readRecords(messages));
}

/** A message the model reads, with its record: null for one without a usable record (an older version's). */
interface ReadRecord {
	message: ReadMessage;
	record: MemoryRecord | null;
}

/**
 * The records of `messages`, leaving out every message whose content no longer is the text its record was sent
 * with (a `context_edit` replaced it, another extension rewrote it): the model does not read what that record says.
 */
function readRecords(messages: readonly ReadMessage[], checked?: readonly ReadRecord[]): ReadRecord[] {
	// A text equal to one already checked (the request's copy of a session message) needs no second hash.
	const known = new Map<string, string>(
		checked?.flatMap((r) => (r.record ? [[r.record.id, contentText(r.message.content)]] : [])),
	);
	return messages.flatMap((message): ReadRecord[] => {
		const record = readMemory(message.details);
		if (!record) return [{ message, record }];
		const text = contentText(message.content);
		if (known.get(record.id) !== text && record.textHash !== textHash(text)) return [];
		return [{ message, record }];
	});
}

function viewOf(read: readonly ReadRecord[]): ModelView {
	const selections = new Set<string>();
	const records = read.map((r) => r.record);
	for (const record of records) {
		if (record?.selection && record.selectionSent) selections.add(selectionKey(record.selection));
	}
	if (records.length === 0) return { latest: null, why: NO_CONTEXT, selections };
	const latest = records.at(-1) ?? null;
	if (!latest) return { latest: null, why: "the last editor context the model has predates this version", selections };
	// An update is only as good as every message it builds on: walk the chain back to its full block.
	let current = latest;
	for (let i = records.length - 2; current.kind === "update"; i--) {
		const before = i >= 0 ? records[i] : null;
		if (!before || before.id !== current.prev) return { latest: null, why: LOST_CONTEXT, selections };
		current = before;
	}
	return { latest, why: "", selections };
}

/** Decide what this prompt sends for `block`, given what the model has. */
export function decide(block: ContextBlock, view: ModelView, options: DecideOptions): Decision {
	const parsed = parseBlock(block.text);
	const selection = selectionIdentity(block.details, parsed);
	const state = canonicalState(parsed, selection);
	const known = selection !== null && view.selections.has(selectionKey(selection));
	const record = (kind: MemoryRecord["kind"], prev: string | null, sent: boolean, text: string): MemoryDetails => {
		const { selection: injected, ...rest } = block.details;
		const details: MemoryDetails = { ...rest };
		if (injected && sent) details.selection = injected;
		details.memory = {
			v: MEMORY_VERSION,
			id: options.id,
			kind,
			prev,
			state,
			selection,
			selectionSent: sent,
			textHash: textHash(text),
		};
		return details;
	};
	const full = (reason: string): Decision => {
		const sent = selection !== null && (options.always || !known);
		const text = sent || selection === null ? block.text : renderBlock(parsed, true);
		const why = `a new block (${reason})`;
		return {
			kind: "full",
			text,
			details: record("full", null, sent, text),
			why: sent || selection === null ? why : `${why}; ${SELECTION_REFERENCED}`,
			selectionReferenced: !sent && selection !== null,
		};
	};
	if (options.always) return full("ideContext.sendUnchanged is on: a block with every prompt");
	const base = view.latest;
	if (!base) return full(view.why);
	if (base.state.header !== state.header) return full("the editor or what it shows changed");
	const before = new Map(base.state.sections);
	const after = new Map(state.sections);
	for (const key of IDENTITY_KEYS) {
		if (before.get(key) !== after.get(key)) return full(`the ${key.toLowerCase()} changed`);
	}
	const changed = state.sections.filter(([key, value]) => before.get(key) !== value).map(([key]) => key);
	// A selection the model has only as a reference (its text was compacted away) goes out again.
	if (selection !== null && !known && !changed.includes(SELECTION_KEY)) changed.push(SELECTION_KEY);
	const removed = base.state.sections.map(([key]) => key).filter((key) => !after.has(key));
	if (changed.length === 0 && removed.length === 0) {
		return {
			kind: "none",
			text: "",
			details: undefined,
			why: selection
				? `nothing (unchanged since the editor context the model has; ${SELECTION_REFERENCED})`
				: "nothing (unchanged since the editor context the model has)",
			selectionReferenced: selection !== null,
		};
	}
	const sent = selection !== null && !known && changed.includes(SELECTION_KEY);
	const update = renderUpdate(block.details.editor, parsed, changed, removed, known);
	const fullSize = (selection !== null && !known ? block.text : renderBlock(parsed, true)).length;
	if (update.length >= fullSize) return full("most of it changed");
	const keys = [...changed, ...removed].map(displayKey).join(", ");
	return {
		kind: "update",
		text: update,
		details: record("update", base.id, sent, update),
		why: `an update (${keys}) to the editor context the model has${known ? `; ${SELECTION_REFERENCED}` : ""}`,
		selectionReferenced: known,
	};
}

/**
 * The session's editor context for the request check: the projection's ide-context messages, plus `run`, the
 * block this run started with, when the projection no longer has it (a compaction in the middle of the run
 * summarised it away: the run still works on that editor context).
 */
export function withRunContext(projected: readonly ReadMessage[], run: ReadMessage | undefined): ReadMessage[] {
	const id = run && readMemory(run.details)?.id;
	if (!run || id === undefined || projected.some((m) => readMemory(m.details)?.id === id)) return [...projected];
	return [...projected, run];
}

/** One message of a model request, as the request-time check reads it. */
export interface RequestMessage extends ReadMessage {
	/** "ide-context": one of this extension's messages; "user": a user prompt; "system": pi's prompt and tools. */
	kind: "ide-context" | "user" | "system" | "other";
}

/** How a request is made to carry the editor context the model should have. */
export interface RequestRepair {
	/** Where the self-contained editor context goes. */
	index: number;
	/** True: it replaces the ide-context message at `index`; false: it is inserted before the message there. */
	replace: boolean;
	text: string;
	/** The details of the session's message it stands for. */
	details: unknown;
}

const SELECTION_GONE =
	"Selection: made earlier in this conversation; its text is no longer in the model's context (select it again to send it).";

/**
 * The last resort, for the request itself (after every other extension changed it): the newest editor context of
 * the session (`session`: the ide-context messages of its projection, oldest first) is what the model should
 * read. When the request lacks it, or a message it builds on (pi compacted in the middle of a run, another
 * extension pruned), the request gets one self-contained block for it instead: in place of the last ide-context
 * message it still has, or before the last user prompt when it has none. Undefined when the request holds it
 * (or the session has no editor context of this version): the request is then left untouched.
 */
export function repairRequest(
	request: readonly RequestMessage[],
	session: readonly ReadMessage[],
): RequestRepair | undefined {
	const fromSession = readRecords(session);
	const newest = fromSession.at(-1);
	const target = newest?.record;
	if (!newest || !target) return undefined;
	const ours = request.flatMap((message, index) => (message.kind === "ide-context" ? [{ index, message }] : []));
	const inRequest = readRecords(
		ours.map((o) => o.message),
		fromSession,
	);
	// A request whose newest editor context the session does not know (yet) is newer than what the session
	// says: it is never wound back to the session's.
	const requestNewest = inRequest.at(-1)?.record;
	if (requestNewest && !fromSession.some((r) => r.record?.id === requestNewest.id)) return undefined;
	const view = viewOf(inRequest);
	const selectionHeld = !target.selection || view.selections.has(selectionKey(target.selection));
	if (view.latest?.id === target.id && selectionHeld) return undefined;
	const replaced = ours.at(-1);
	// The selections the request still holds once the replaced message is gone.
	const kept = viewOf(inRequest.filter((r) => r.message !== replaced?.message)).selections;
	const text = selfContainedText({ record: target, content: newest.message.content }, kept, fromSession);
	if (replaced) return { index: replaced.index, replace: true, text, details: newest.message.details };
	// Before the prompt it came with; with no prompt left, first after the system head (which stays first).
	const lastUser = request.findLastIndex((m) => m.kind === "user");
	const afterSystem = request.findIndex((m) => m.kind !== "system");
	const index = lastUser >= 0 ? lastUser : afterSystem >= 0 ? afterSystem : request.length;
	return { index, replace: false, text, details: newest.message.details };
}

/**
 * The editor context `target` records, standing on its own: the state it records, its own lines where it has
 * them. Its selection: the text when it carries it; a reference when `requestSelections` (what the request
 * still holds) has the text; the text put back from the session message that carries it; only then "gone".
 */
function selfContainedText(
	target: { record: MemoryRecord; content: unknown },
	requestSelections: ReadonlySet<string>,
	session: readonly ReadRecord[],
): string {
	const { record } = target;
	const own = new Map(parseBlock(contentText(target.content)).sections.map((s) => [s.key, s]));
	const lines = [record.state.header];
	for (const [key, value] of record.state.sections) {
		const mine = own.get(key);
		if (key === SELECTION_KEY && record.selection)
			lines.push(...selectionLines(record, record.selection, mine, requestSelections, session));
		else lines.push(...(mine?.lines ?? [value]));
	}
	return lines.join("\n");
}

function selectionLines(
	record: MemoryRecord,
	selection: SelectionIdentity,
	own: Section | undefined,
	requestSelections: ReadonlySet<string>,
	session: readonly ReadRecord[],
): string[] {
	if (own && record.selectionSent) return own.lines;
	const key = selectionKey(selection);
	const holder = session.findLast(
		(r) => r.record?.selectionSent && r.record.selection && selectionKey(r.record.selection) === key,
	);
	const held = holder && parseBlock(contentText(holder.message.content)).sections.find((s) => s.key === SELECTION_KEY);
	if (requestSelections.has(key)) {
		// `own` is then already the reference line ("... the same selection as in an earlier editor context ...").
		return own ? own.lines : [selectionReference(held ?? { key: SELECTION_KEY, lines: ["Selection:"] })];
	}
	return held ? held.lines : [SELECTION_GONE];
}

/** The short hash a record keeps of the text its message was sent with (one-shot `hash`: checked per message). */
function textHash(text: string): string {
	return hash("sha256", text).slice(0, 16);
}

function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: unknown) =>
			isRecord(part) && part["type"] === "text" && typeof part["text"] === "string" ? part["text"] : "",
		)
		.join("");
}

/** The key that identifies a selection across messages. */
export function selectionKey(selection: SelectionIdentity): string {
	return `${selection.pid}\u0000${selection.file}\u0000${selection.range}\u0000${selection.selectedAt}\u0000${selection.hash}`;
}

// ---------------------------------------------------------------------------
// Blocks as sections

const SELECTION_KEY = "Selection";
const SELECTION_REFERENCED = "the selection was sent already, not repeated";
/** A change in one of these means another file or table: the model gets the whole block again. */
const IDENTITY_KEYS = ["File", "Table"];

interface Section {
	key: string;
	lines: string[];
}

export interface ParsedBlock {
	header: string;
	sections: Section[];
}

/**
 * Split a block into its header line and sections. A section starts at a line
 * that begins with a capitalised key followed by ":" or " (" (`Cursor: ...`,
 * `Selection (lines 1-3, ...):`); other lines (indented items, fenced text)
 * belong to the section before them. A repeated key gets a `#n` suffix.
 */
export function parseBlock(text: string): ParsedBlock {
	const [header = "", ...rest] = text.split("\n");
	const sections: Section[] = [];
	const seen = new Map<string, number>();
	let fence: string | null = null;
	for (const line of rest) {
		const current = sections.at(-1);
		if (fence !== null) {
			current?.lines.push(line);
			if (/^`+\s*$/.test(line) && line.trim().length >= fence.length) fence = null;
			continue;
		}
		const opening = /^(`{3,})/.exec(line);
		if (opening && current) {
			fence = opening[1] as string;
			current.lines.push(line);
			continue;
		}
		const key = /^([A-Z][A-Za-z0-9 _-]*?)(?::| \()/.exec(line)?.[1];
		if (key === undefined && current) {
			current.lines.push(line);
			continue;
		}
		const base = key ?? "Text";
		const count = (seen.get(base) ?? 0) + 1;
		seen.set(base, count);
		sections.push({ key: count === 1 ? base : `${base}#${count}`, lines: [line] });
	}
	return { header, sections };
}

/** Ages move on by themselves; they are not news. */
function withoutAges(text: string): string {
	return text.replace(/\b\d+ (?:s|min|h) ago\b/g, "ago");
}

function canonicalState(parsed: ParsedBlock, selection: SelectionIdentity | null): CanonicalState {
	return {
		header: withoutAges(parsed.header),
		sections: parsed.sections.map(({ key, lines }) => [
			key,
			key === SELECTION_KEY && selection ? `selection ${selectionKey(selection)}` : withoutAges(lines.join("\n")),
		]),
	};
}

/** The selection's identity, from the details and the fenced text in the block. */
function selectionIdentity(details: ContextDetails, parsed: ParsedBlock): SelectionIdentity | null {
	const selection = details.selection;
	if (!selection) return null;
	const section = parsed.sections.find((s) => s.key === SELECTION_KEY);
	const body = section ? section.lines.slice(2, -1).join("\n") : "";
	return {
		pid: details.pid,
		file: selection.file,
		range: `${selection.start.line}:${selection.start.column}-${selection.end.line}:${selection.end.column}`,
		selectedAt: selection.selectedAt,
		hash: createHash("sha256")
			.update(`${selection.lines}:${selection.bytes}:${selection.truncated}\n${body}`)
			.digest("hex")
			.slice(0, 16),
	};
}

/** The selection section's first line, turned into a reference to the copy the model already has. */
function selectionReference(section: Section): string {
	const head = (section.lines[0] ?? "Selection:").replace(/:\s*$/, "");
	return `${head}: the same selection as in an earlier editor context of this conversation; not repeated.`;
}

function renderSection(section: Section, referenceSelection: boolean): string[] {
	return section.key === SELECTION_KEY && referenceSelection ? [selectionReference(section)] : section.lines;
}

/** The block again, with the selection as a reference when `referenceSelection`. */
function renderBlock(parsed: ParsedBlock, referenceSelection: boolean): string {
	return [parsed.header, ...parsed.sections.flatMap((s) => renderSection(s, referenceSelection))].join("\n");
}

function renderUpdate(
	editor: string,
	parsed: ParsedBlock,
	changed: readonly string[],
	removed: readonly string[],
	selectionKnown: boolean,
): string {
	const lines = [`Editor update (${editor}), the rest as before:`];
	for (const section of parsed.sections) {
		if (changed.includes(section.key)) lines.push(...renderSection(section, selectionKnown));
	}
	for (const key of removed) lines.push(`${displayKey(key)}: none now`);
	return lines.join("\n");
}

function displayKey(key: string): string {
	return key.replace(/#\d+$/, "");
}

// ---------------------------------------------------------------------------
// Reading details back from the session (untrusted shape: written by any version)

function readMemory(details: unknown): MemoryRecord | null {
	if (!isRecord(details)) return null;
	const memory = details["memory"];
	if (!isRecord(memory) || memory["v"] !== MEMORY_VERSION) return null;
	const { id, kind, prev, state, selection, selectionSent, textHash } = memory;
	if (typeof id !== "string" || (kind !== "full" && kind !== "update")) return null;
	if (prev !== null && typeof prev !== "string") return null;
	if (!isState(state) || typeof selectionSent !== "boolean" || typeof textHash !== "string") return null;
	if (selection !== null && !isSelection(selection)) return null;
	return { v: MEMORY_VERSION, id, kind, prev, state, selection, selectionSent, textHash };
}

function isState(value: unknown): value is CanonicalState {
	if (!isRecord(value) || typeof value["header"] !== "string" || !Array.isArray(value["sections"])) return false;
	return value["sections"].every(
		(s: unknown) => Array.isArray(s) && s.length === 2 && typeof s[0] === "string" && typeof s[1] === "string",
	);
}

function isSelection(value: unknown): value is SelectionIdentity {
	return (
		isRecord(value) &&
		typeof value["pid"] === "number" &&
		typeof value["file"] === "string" &&
		typeof value["range"] === "string" &&
		typeof value["selectedAt"] === "number" &&
		typeof value["hash"] === "string"
	);
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
