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
import { basename } from "node:path";
import type { ContextBlock, ContextDetails } from "./blocks.ts";

/** What the next prompt sends: the whole block, the changed sections, nothing, or that the picture is out of date. */
export type SendKind = "full" | "update" | "none" | "stale";

/**
 * Why pi cannot describe the editor now. Said to the model in general terms: an ignored file is never named or
 * described, only that the active file is one the user excluded.
 */
export type StaleReason = "ignored" | "no-file" | "off" | "gone" | "choose" | "unreadable";

/** What the model reads for each reason (one table: the notice and /ide status both use it). */
export const STALE_WORDING: Readonly<Record<StaleReason, string>> = {
	ignored: "the file now active in the editor is one the user excluded from what pi may send",
	"no-file": "the editor now shows something that is not a file pi can describe (an unnamed or special buffer)",
	off: "the user turned pi's editor connection off (/ide off)",
	gone: "the editor pi was connected to is no longer running or no longer connected",
	choose: "several editors are open in this project and pi waits for the user to pick one (/ide)",
	unreadable: "pi cannot read the editor's state or its own rules right now",
};

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
	/** "stale": a notice that the editor context before it is out of date (it stands alone, like a full block). */
	kind: "full" | "update" | "stale";
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
	/** One line for pi's screen: what this message told the model (the quote line says it for a selection). */
	sent?: string;
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
	/**
	 * The last editor context the model sees, whole or not: what the request check restores, so what a notice
	 * must mark out of date when pi cannot describe the editor any more.
	 */
	newest: MemoryRecord | null;
	/** Why there is no usable `latest` (for /ide status). */
	why: string;
	/** Keys (`selectionKey`) of the selections whose text the model sees. */
	selections: ReadonlySet<string>;
	/** Messages in the chain of `latest` (its full block and the updates on it). */
	chain?: number;
	/** How many messages back the last copy of a selection's text is (undefined: none). */
	distance?: (key: string) => number | undefined;
}

/**
 * Most messages in a chain of updates: the next one is a whole block again. It keeps the part of the session the
 * request check must compare short whatever the session's length (and costs one block per this many updates).
 */
export const MAX_UPDATE_CHAIN = 32;

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
	return viewOfFold(foldOf(messages));
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
	// A request's copy of a session message (same record id, same text) needs no second hash.
	const known = new Map<string, string>(
		checked?.flatMap((r) => (r.record ? [[r.record.id, contentText(r.message.content)]] : [])),
	);
	const out: ReadRecord[] = [];
	for (const message of messages) {
		const id = known.size > 0 ? memoryId(message.details) : undefined;
		if (id !== undefined && known.get(id) === contentText(message.content)) {
			const record = readMemory(message.details);
			if (record) {
				out.push({ message, record });
				continue;
			}
		}
		const read = readChecked(message);
		if (read !== undefined) out.push({ message, record: read });
	}
	return out;
}

/** The request's last `count` ide-context messages (fewer when it has fewer), read from its end. */
function lastOurs(request: readonly RequestMessage[], count: number): Array<{ message: ReadMessage }> {
	const out: Array<{ message: ReadMessage }> = [];
	for (let i = request.length - 1; i >= 0 && out.length < count; i--) {
		const message = request[i] as RequestMessage;
		if (message.kind === "ide-context") out.push({ message });
	}
	return out.reverse();
}

/**
 * Where the part of the session that the newest record depends on starts: each message depends on itself, an
 * update also on what its chain builds on, and a message that refers to a selection ("not repeated", or an update
 * that keeps it) also on the copy carrying its text, and on what that copy depends on in turn. Read over the last
 * READ_BACK messages, as supersededIn reads a request: what the first of them rest on before that is not judged
 * (the whole window is then the tail). -1: it rests on a broken chain (an update whose block is not right before
 * it) or on a selection copy the session does not show, which no tail vouches for.
 */
function tailStart(session: readonly ReadMessage[], fold: Fold): number {
	const low = Math.max(0, session.length - READ_BACK);
	const start = new Map<number, number>();
	const copies = new Map<string, number>();
	let prev: { id: string; at: number } | null | undefined; // null: an unusable record came between
	let from = fold.at;
	for (let i = low; i <= fold.at; i++) {
		const record = readChecked(session[i] as ReadMessage);
		if (record === undefined) continue;
		if (record === null) {
			prev = null;
			continue;
		}
		const unjudged = low > 0 ? low : -1;
		let first = i;
		if (record.kind === "update")
			first = prev === undefined ? unjudged : prev?.id === record.prev ? (start.get(prev.at) ?? -1) : -1;
		if (record.selection) {
			const key = selectionKey(record.selection);
			const copy = copies.get(key);
			if (record.selectionSent) copies.set(key, i);
			else first = Math.min(first, copy === undefined ? unjudged : (start.get(copy) ?? -1));
		}
		start.set(i, first);
		prev = { id: record.id, at: i };
		from = first;
	}
	return from;
}

/**
 * The request ends with the session's messages from `from` on, as they are (the same record ids with the same
 * texts, in the same order: pi's copies). Older messages do not matter: nothing the newest one says rests on them.
 */
function sameTail(
	ours: ReadonlyArray<{ message: ReadMessage }>,
	session: readonly ReadMessage[],
	from: number,
): boolean {
	const n = session.length - from;
	if (from < 0 || ours.length < n) return false;
	const offset = ours.length - n;
	for (let i = 0; i < n; i++) {
		const x = (ours[offset + i] as { message: ReadMessage }).message;
		const y = session[from + i] as ReadMessage;
		const id = memoryId(x.details);
		if (id === undefined || id !== memoryId(y.details) || contentText(x.content) !== contentText(y.content))
			return false;
	}
	return true;
}

function memoryId(details: unknown): string | undefined {
	if (!isRecord(details)) return undefined;
	const memory = details["memory"];
	return isRecord(memory) && typeof memory["id"] === "string" ? memory["id"] : undefined;
}

/**
 * Per details object (pi keeps one per session entry, and a request's copy of it shares it): its record and the
 * text that record was last found to match. A session is read at every prompt and every model request; each
 * message's record is parsed and its text hashed once, not every time (the cost would grow with the session).
 */
const checkedRecords = new WeakMap<object, { record: MemoryRecord | null; text: string | null }>();

/** The message's record; null: it has none (an older version's); undefined: its content is not what it records. */
function readChecked(message: ReadMessage): MemoryRecord | null | undefined {
	const details = message.details;
	const cacheable = typeof details === "object" && details !== null;
	let entry = cacheable ? checkedRecords.get(details) : undefined;
	if (!entry) {
		entry = { record: readMemory(details), text: null };
		if (cacheable) checkedRecords.set(details, entry);
	}
	const record = entry.record;
	if (!record) return null;
	const text = contentText(message.content);
	if (text === entry.text) return record;
	if (record.textHash !== textHash(text)) return undefined;
	entry.text = text;
	return record;
}

/**
 * What a list of messages amounts to, read oldest first: the selections whose text it holds, its last record
 * (undefined: none yet; null: one of an older version) and whether that record stands (a full block or a notice,
 * or an update whose every link back to its full block is the message right before it).
 */
interface Fold {
	selections: ReadonlySet<string>;
	/** Where (message index) the text of each selection is, the last copy. */
	holders: ReadonlyMap<string, number>;
	last: MemoryRecord | null | undefined;
	stands: boolean;
	/** Index of the last message read, and of the first message of its chain (its full block or notice). */
	at: number;
	chainStart: number;
}

const EMPTY_FOLD: Fold = {
	selections: new Set(),
	holders: new Map(),
	last: undefined,
	stands: false,
	at: -1,
	chainStart: -1,
};

function step(fold: Fold, record: MemoryRecord | null, at: number): Fold {
	if (!record) return { ...fold, last: null, stands: false, at, chainStart: at };
	let { selections, holders } = fold;
	const extends_ = record.kind === "update" && fold.last?.id === record.prev && fold.stands;
	const stands = record.kind !== "update" || extends_;
	// An update whose chain is broken reads SUPERSEDED in a request (supersededIn): the text it carries is not a copy.
	if (record.selection && record.selectionSent && stands) {
		const key = selectionKey(record.selection);
		// Copied only when they change: a fold is shared by the cache and every list that extends it.
		if (!selections.has(key)) selections = new Set(selections).add(key);
		holders = new Map(holders).set(key, at);
	}
	return { selections, holders, last: record, stands, at, chainStart: extends_ ? fold.chainStart : at };
}

function foldRecords(read: readonly ReadRecord[]): Fold {
	return read.reduce((fold, r, i) => step(fold, r.record, i), EMPTY_FOLD);
}

/**
 * Messages read back from the newest: a chain is never longer than MAX_UPDATE_CHAIN and a selection further back
 * is sent again, so nothing a decision or the request check rests on is older. Reading only these keeps both
 * as fast in a session of 5,000 messages as in one of 50 (a longer chain, from elsewhere, reads as lost: the
 * whole block goes out again).
 */
const READ_BACK = 2 * MAX_UPDATE_CHAIN;

/** The fold of the last READ_BACK messages (each message's record is parsed and checked once, see readChecked). */
function foldOf(messages: readonly ReadMessage[]): Fold {
	let fold = EMPTY_FOLD;
	for (let i = Math.max(0, messages.length - READ_BACK); i < messages.length; i++) {
		const record = readChecked(messages[i] as ReadMessage);
		if (record !== undefined) fold = step(fold, record, i);
	}
	return fold;
}

function viewOfFold(fold: Fold): ModelView {
	const { selections: all, last } = fold;
	const selections: ReadonlySet<string> = all;
	const distance = (key: string) => {
		const at = fold.holders.get(key);
		return at === undefined ? undefined : fold.at - at;
	};
	if (last === undefined) return { latest: null, newest: null, why: NO_CONTEXT, selections };
	if (last === null)
		return {
			latest: null,
			newest: null,
			why: "the last editor context the model has predates this version",
			selections,
		};
	// An update is only as good as every message it builds on.
	if (!fold.stands) return { latest: null, newest: last, why: LOST_CONTEXT, selections, distance };
	return { latest: last, newest: last, why: "", selections, chain: fold.at - fold.chainStart + 1, distance };
}

function viewOf(read: readonly ReadRecord[]): ModelView {
	return viewOfFold(foldRecords(read));
}

/** Decide what this prompt sends for `block`, given what the model has. */
export function decide(block: ContextBlock, view: ModelView, options: DecideOptions): Decision {
	const parsed = parseBlock(block.text);
	const selection = selectionIdentity(block.details, parsed);
	const state = canonicalState(parsed, selection);
	// A copy far back is sent again: what the request check compares stays short (see MAX_UPDATE_CHAIN).
	const key = selection && selectionKey(selection);
	const known = key !== null && view.selections.has(key) && (view.distance?.(key) ?? 0) < MAX_UPDATE_CHAIN;
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
		details.sent = sentLine(kind, text, block.details);
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
	if (base.kind === "stale") return full("the editor context the model has is marked out of date");
	if ((view.chain ?? 0) >= MAX_UPDATE_CHAIN) return full(`${MAX_UPDATE_CHAIN} updates in a row`);
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
 * What a prompt sends when pi cannot describe the editor (`reason`): once, a notice that the editor context the
 * model has is out of date, and why in general terms; again only when the reason changes. Nothing when the model
 * has no editor context to be misled by.
 */
export function decideStale(reason: StaleReason, view: ModelView, options: Pick<DecideOptions, "id">): Decision {
	const header = staleHeader(reason);
	const newest = view.newest;
	if (!newest)
		return {
			kind: "none",
			text: "",
			details: undefined,
			why: "nothing (the model has no editor context)",
			selectionReferenced: false,
		};
	if (newest.kind === "stale" && newest.state.header === header)
		return {
			kind: "none",
			text: "",
			details: undefined,
			why: "nothing (the model was told already that its editor context is out of date)",
			selectionReferenced: false,
		};
	const text = `Editor context out of date: ${STALE_WORDING[reason]}. The editor context earlier in this conversation may no longer match what the user sees; do not rely on its file, cursor, selection or diagnostics.`;
	const details: MemoryDetails = {
		pid: 0,
		editor: "",
		file: null,
		language: null,
		sent: `editor context marked out of date: ${STALE_WORDING[reason]}`,
		memory: {
			v: MEMORY_VERSION,
			id: options.id,
			kind: "stale",
			prev: null,
			state: { header, sections: [] },
			selection: null,
			selectionSent: false,
			textHash: textHash(text),
		},
	};
	return {
		kind: "stale",
		text,
		details,
		why: `a notice that the model's editor context is out of date (${reason})`,
		selectionReferenced: false,
	};
}

function staleHeader(reason: StaleReason): string {
	return `out of date: ${reason}`;
}

/**
 * The session's editor context for the request check: the projection's ide-context messages, plus `run`, the
 * block this run started with, when the projection no longer has it (a compaction in the middle of the run
 * summarised it away: the run still works on that editor context).
 */
export function withRunContext(projected: readonly ReadMessage[], run: ReadMessage | undefined): ReadMessage[] {
	const id = run && readMemory(run.details)?.id;
	if (!run || id === undefined) return [...projected];
	// From the end: while the run's block is in view it is the projection's newest (the usual case, one look).
	for (let i = projected.length - 1; i >= 0; i--)
		if (readMemory(projected[i]?.details)?.id === id) return [...projected];
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
	/**
	 * Details for the message that carries `text`: the session's message's, with a record of its own (standing
	 * alone, its own text hash), so a later check of the same request trusts it and needs no second repair.
	 */
	details: unknown;
}

/**
 * The last resort, for the request itself (after every other extension changed it): the newest editor context of
 * the session (`session`: the ide-context messages of its projection, oldest first) is what the model should
 * read. When the request lacks it, or a message it builds on (pi compacted in the middle of a run, another
 * extension pruned), the request gets one self-contained block for it instead: in place of the last ide-context
 * message it still has, or before the last user prompt when it has none. Undefined when the request holds it
 * (or the session has no editor context of this version): the request is then left untouched. `branch` (default
 * `session`): every ide-context message of the session's branch, compacted or not, where a selection's text is
 * looked for when the request no longer holds it.
 */
export function repairRequest(
	request: readonly RequestMessage[],
	session: readonly ReadMessage[],
	branch: readonly ReadMessage[] = session,
): RequestRepair | undefined {
	const sessionFold = foldOf(session);
	const target = sessionFold.last;
	if (!target) return undefined;
	// Usually the request ends with the session's messages as they are (pi copies them for each request): then
	// it reads as the session does, without reading a record again (and without reading the rest of the request).
	const from = tailStart(session, sessionFold);
	if (sameTail(lastOurs(request, session.length - from), session, from)) {
		if (sessionFold.stands && (!target.selection || sessionFold.selections.has(selectionKey(target.selection))))
			return undefined;
	}
	const ours = request.flatMap((message, index) => (message.kind === "ide-context" ? [{ index, message }] : []));
	const fromSession = readRecords(session);
	const newest = fromSession.findLast((r) => r.record === target) as ReadRecord;
	const inRequest = readRecords(
		ours.map((o) => o.message),
		fromSession,
	);
	// A request whose newest editor context the session does not know (yet) is newer than what the session
	// says: it is never wound back to the session's.
	const requestNewest = inRequest.at(-1)?.record;
	if (requestNewest && !fromSession.some((r) => r.record?.id === requestNewest.id)) return undefined;
	// Read without the older messages that no longer resolve (supersededIn: they will read SUPERSEDED): a chain
	// through one of them is broken, and a selection only they carry is not in the request.
	const superseded = new Set<ReadMessage>(supersededIn(request, session).map((i) => request[i] as RequestMessage));
	const standing = inRequest.filter((r) => !superseded.has(r.message));
	const view = viewOf(standing);
	const selectionHeld = !target.selection || view.selections.has(selectionKey(target.selection));
	if (view.latest?.id === target.id && selectionHeld) return undefined;
	const replaced = ours.at(-1);
	// The selections the request still holds once the replaced message is gone: a reference stands only there.
	const kept = viewOf(standing.filter((r) => r.message !== replaced?.message)).selections;
	const holders = branch === session ? fromSession : readRecords(branch);
	const whole = selfContained({ record: target, content: newest.message.content }, kept, holders);
	const details = standAlone(newest.message.details, target, whole);
	if (replaced) return { index: replaced.index, replace: true, text: whole.text, details };
	// Before the prompt it came with; with no prompt left, first after the system head (which stays first).
	const lastUser = request.findLastIndex((m) => m.kind === "user");
	const afterSystem = request.findIndex((m) => m.kind !== "system");
	const index = lastUser >= 0 ? lastUser : afterSystem >= 0 ? afterSystem : request.length;
	return { index, replace: false, text: whole.text, details };
}

/** What an older editor context of a request reads as when what it refers to is no longer in the request. */
export const SUPERSEDED =
	"(An earlier editor context stood here; what it built on is no longer in this conversation, and a later editor context replaces it.)";

/**
 * Older editor contexts of a request (its last READ_BACK) that refer to something the request no longer holds:
 * an update whose block was pruned or compacted away ("the rest as before"), a selection "not repeated" with no
 * copy before it. Their indices, oldest first; the newest editor context is repairRequest's. Each is to read
 * SUPERSEDED: a reference must resolve within the request that carries it.
 */
export function supersededIn(request: readonly RequestMessage[], session: readonly ReadMessage[]): number[] {
	const known = new Map<string, { record: MemoryRecord | null | undefined; text: string }>();
	for (let i = Math.max(0, session.length - READ_BACK); i < session.length; i++) {
		const m = session[i] as ReadMessage;
		const id = memoryId(m.details);
		if (id !== undefined) known.set(id, { record: readChecked(m), text: contentText(m.content) });
	}
	const ours: number[] = [];
	let i = request.length - 1;
	for (; i >= 0 && ours.length < READ_BACK; i--)
		if ((request[i] as RequestMessage).kind === "ide-context") ours.unshift(i);
	// More editor contexts before the ones read: what the first of them build on lies there, and is not judged
	// (a chain or a selection copy cut by the window is not a broken one).
	let cut = false;
	for (; i >= 0 && !cut; i--) cut = (request[i] as RequestMessage).kind === "ide-context";
	ours.pop(); // the newest: repairRequest's
	const out: number[] = [];
	let fold = EMPTY_FOLD;
	for (const index of ours) {
		const message = request[index] as RequestMessage;
		const text = contentText(message.content);
		const id = memoryId(message.details);
		const same = id === undefined ? undefined : known.get(id);
		const record = same && same.text === text ? same.record : readChecked(message);
		if (!record) continue;
		const first = cut && fold.last === undefined;
		const brokenChain = record.kind === "update" && !first && !(fold.stands && fold.last?.id === record.prev);
		const brokenReference =
			!cut &&
			record.selection !== null &&
			!record.selectionSent &&
			!fold.selections.has(selectionKey(record.selection)) &&
			text.includes(REFERENCE_WORDS);
		if (brokenChain || brokenReference) out.push(index);
		else if (first && record.kind === "update" && record.prev !== null)
			fold = step({ ...fold, last: { ...record, id: record.prev }, stands: true }, record, index);
		else fold = step(fold, record, index);
	}
	return out;
}

/** What the payload check knows besides the payload: the session's editor context and the request's prompt. */
export interface PayloadFacts {
	/** The session's editor context (as for repairRequest). */
	session: readonly ReadMessage[];
	/** Every ide-context message of the branch (as for repairRequest). */
	branch: readonly ReadMessage[];
	/** The text of the branch's last user prompt: where a block goes when the request has none left. */
	prompt: string | undefined;
	/** Blocks the request check put into this request's messages (text and details), found by their text. */
	repaired: readonly ReadMessage[];
}

/** A string in a provider payload, and where it is. */
interface Leaf {
	path: Array<string | number>;
	text: string;
}

/**
 * The same check once more, on the provider's payload: a `context_with_system` handler of an extension loaded
 * after this one runs after this one's, so only the payload shows what the request finally holds. Provider
 * formats differ, so the payload is read generically: every string in its top-level arrays that is exactly the
 * text of an ide-context message (or the prompt) is that message; a repair replaces that string, or puts a message
 * of its own holding the block before the prompt's (withCopyBefore). Undefined: the payload is fine, or
 * there is nothing safe to change (no ide-context text and no prompt left in it: the model then has no editor
 * context at all, which is not a stale one).
 */
export function repairPayload(payload: unknown, facts: PayloadFacts): unknown {
	if (!isRecord(payload)) return undefined;
	const session = textsOf(facts.session);
	const repaired = new Map(facts.repaired.map((m) => [contentText(m.content), m]));
	if (session.size === 0 && repaired.size === 0) return undefined;
	const known = (text: string) => repaired.get(text) ?? session.get(text);
	const wanted = (text: string) => known(text) !== undefined || text === facts.prompt;
	for (const [key, value] of Object.entries(payload)) {
		if (!Array.isArray(value)) continue;
		const leaves: Leaf[] = [];
		collectLeaves(value, [key], wanted, leaves, 0);
		const found: Array<{ leaf: Leaf; message: RequestMessage }> = [];
		for (const leaf of leaves) {
			const ours = known(leaf.text);
			if (ours) found.push({ leaf, message: { kind: "ide-context", details: ours.details, content: leaf.text } });
			else if (leaf.text === facts.prompt)
				found.push({ leaf, message: { kind: "user", details: undefined, content: leaf.text } });
		}
		if (found.length === 0) continue;
		const messages = found.map((f) => f.message);
		const repair = repairRequest(messages, facts.session, facts.branch);
		const at = repair && found[repair.index];
		let out: unknown = payload;
		if (repair && at) {
			const repaired: RequestMessage = { kind: "ide-context", details: repair.details, content: repair.text };
			if (repair.replace) {
				out = withLeaf(payload, at.leaf.path, repair.text);
				messages[repair.index] = repaired;
			} else if (at.message.kind === "user") {
				out = withCopyBefore(payload, at.leaf.path, repair.text);
				messages.splice(repair.index, 0, repaired);
			}
		}
		// Older references left dangling; they sit before any insertion, so their paths are unchanged.
		for (const index of supersededIn(messages, facts.session)) {
			const leaf = found[index]?.leaf;
			if (leaf && isRecord(out)) out = withLeaf(out, leaf.path, SUPERSEDED);
		}
		return out === payload ? undefined : out;
	}
	return undefined;
}

const MAX_PAYLOAD_DEPTH = 8;

/**
 * The strings in `value` that `wanted` picks, each with its path (`path` is the way down so far: grown and shrunk in
 * place, copied only for a string picked, as a request holds thousands of strings and only a few are ours).
 */
function collectLeaves(
	value: unknown,
	path: Array<string | number>,
	wanted: (text: string) => boolean,
	out: Leaf[],
	depth: number,
): void {
	if (typeof value === "string") {
		if (wanted(value)) out.push({ path: [...path], text: value });
		return;
	}
	if (depth >= MAX_PAYLOAD_DEPTH || typeof value !== "object" || value === null) return;
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) {
			path.push(i);
			collectLeaves(value[i], path, wanted, out, depth + 1);
			path.pop();
		}
	} else
		for (const k of Object.keys(value)) {
			path.push(k);
			collectLeaves((value as Record<string, unknown>)[k], path, wanted, out, depth + 1);
			path.pop();
		}
}

/**
 * The session's ide-context messages by their text, for the payload check: built once per facts (a session's
 * facts stay the same object while its leaf does), not with every model request.
 */
const sessionTexts = new WeakMap<readonly ReadMessage[], Map<string, ReadMessage>>();

function textsOf(messages: readonly ReadMessage[]): Map<string, ReadMessage> {
	let texts = sessionTexts.get(messages);
	if (!texts) {
		texts = new Map(messages.map((m) => [contentText(m.content), m]));
		sessionTexts.set(messages, texts);
	}
	return texts;
}

/** `root` with the string at `path` replaced (the containers on the way copied, the rest shared). */
function withLeaf(root: Record<string, unknown>, path: ReadonlyArray<string | number>, text: string): unknown {
	const set = (node: unknown, i: number): unknown => {
		if (i === path.length) return text;
		const step = path[i] as string | number;
		if (Array.isArray(node)) return node.map((item, j) => (j === step ? set(item, i + 1) : item));
		if (isRecord(node)) return { ...node, [step]: set(node[step], i + 1) };
		return node;
	};
	return set(root, 0);
}

/**
 * `root` with a message of its own holding `text` put before the message that holds the string at `path` (the
 * item of the outermost array on the way: a provider's messages). The copy keeps that message's shape (role and
 * the like) with, in every list on the way down, only the item holding that string (the prompt's text part: no
 * other part, no image, no cache marker), which holds `text`. So the block reads as in an unpruned request, a
 * message before the prompt, never glued to the prompt's text in the same message.
 */
function withCopyBefore(root: Record<string, unknown>, path: ReadonlyArray<string | number>, text: string): unknown {
	const at = path.findIndex((step) => typeof step === "number");
	if (at < 0) return undefined;
	let message: unknown = root;
	for (const step of path.slice(0, at + 1))
		message = isRecord(message) || Array.isArray(message) ? (message as never)[step] : undefined;
	const only = (node: unknown, i: number): unknown => {
		if (i === path.length) return text;
		const step = path[i] as string | number;
		if (Array.isArray(node)) return typeof step === "number" ? [only(node[step], i + 1)] : node;
		if (!isRecord(node)) return node;
		const { cache_control: _marker, ...rest } = node;
		return { ...rest, [step]: only(node[step], i + 1) };
	};
	const copy = only(message, at + 1);
	const index = path[at] as number;
	const insert = (node: unknown, i: number): unknown => {
		if (i === at) return Array.isArray(node) ? [...node.slice(0, index), copy, ...node.slice(index)] : node;
		const step = path[i] as string | number;
		if (Array.isArray(node)) return node.map((x, j) => (j === step ? insert(x, i + 1) : x));
		if (isRecord(node)) return { ...node, [step]: insert(node[step], i + 1) };
		return node;
	};
	return insert(root, 0);
}

/** `details` with a record for the self-contained text: a full block (or the same notice), its own hash. */
function standAlone(details: unknown, record: MemoryRecord, whole: { text: string; selectionSent: boolean }): unknown {
	const memory: MemoryRecord = {
		...record,
		kind: record.kind === "stale" ? "stale" : "full",
		prev: null,
		selectionSent: whole.selectionSent,
		textHash: textHash(whole.text),
	};
	return { ...(isRecord(details) ? details : {}), memory };
}

/**
 * The editor context `target` records, standing on its own: the state it records, its own lines where it has
 * them. Its selection: the text when it carries it; a reference when `requestSelections` (what the request
 * still holds) has the text; the text put back from the branch's message that carries it; only then "gone".
 */
function selfContained(
	target: { record: MemoryRecord; content: unknown },
	requestSelections: ReadonlySet<string>,
	holders: readonly ReadRecord[],
): { text: string; selectionSent: boolean } {
	const { record } = target;
	if (record.kind === "stale") return { text: contentText(target.content), selectionSent: false };
	const own = new Map(parseBlock(contentText(target.content)).sections.map((s) => [s.key, s]));
	const lines = [record.state.header];
	let selectionSent = false;
	for (const [key, value] of record.state.sections) {
		const mine = own.get(key);
		if (key === SELECTION_KEY && record.selection) {
			const part = selectionLines(record, record.selection, mine, requestSelections, holders);
			selectionSent = part.sent;
			lines.push(...part.lines);
		} else lines.push(...(mine?.lines ?? [value]));
	}
	return { text: lines.join("\n"), selectionSent };
}

function selectionLines(
	record: MemoryRecord,
	selection: SelectionIdentity,
	own: Section | undefined,
	requestSelections: ReadonlySet<string>,
	holders: readonly ReadRecord[],
): { lines: string[]; sent: boolean } {
	if (own && record.selectionSent) return { lines: own.lines, sent: true };
	const key = selectionKey(selection);
	const holder = holders.findLast(
		(r) => r.record?.selectionSent && r.record.selection && selectionKey(r.record.selection) === key,
	);
	const held = holder && parseBlock(contentText(holder.message.content)).sections.find((s) => s.key === SELECTION_KEY);
	if (requestSelections.has(key)) {
		// `own` is then already the reference line ("... the same selection as in an earlier editor context ...").
		return {
			lines: own ? own.lines : [selectionReference(held ?? { key: SELECTION_KEY, lines: ["Selection:"] })],
			sent: false,
		};
	}
	if (held) return { lines: held.lines, sent: true };
	return { lines: [selectionGone(own)], sent: false };
}

/** The selection's own head (its range) kept, its text said to be gone: nothing in the request holds it. */
function selectionGone(own: Section | undefined): string {
	const head = /^Selection \([^)]*\)/.exec(own?.lines[0] ?? "")?.[0] ?? SELECTION_KEY;
	return `${head}: made earlier in this conversation; its text is no longer in the model's context (select it again to send it).`;
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
const REFERENCE_WORDS = "the same selection as in an earlier editor context";
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
	return `${head}: ${REFERENCE_WORDS} of this conversation; not repeated.`;
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
	for (const key of removed) lines.push(REMOVED_WORDING[displayKey(key)] ?? `${displayKey(key)}: none now`);
	return lines.join("\n");
}

/**
 * A section the new block no longer has, in words that cannot be mistaken for another state: no Diagnostics
 * section means the editor sends none for the current content (unknown), never that the checker found none
 * (that is `Diagnostics: none`, a section of its own).
 */
const REMOVED_WORDING: Readonly<Record<string, string>> = {
	Diagnostics: "Diagnostics: unknown now; earlier ones may not apply",
};

/** Sections a full block's screen line leaves out: the file names itself, the rest is not news to the user. */
const UNSHOWN_KEYS = new Set(["File", "Language", "Buffer", "Table", SELECTION_KEY]);

/**
 * The line pi shows under the prompt for what it sent: the file (or table) and the first line of each section
 * worth a glance (cursor, diagnostics), or an update's changed sections. Every part came from the block, which
 * already made the editor's text inert.
 */
function sentLine(kind: MemoryRecord["kind"], text: string, details: ContextDetails): string {
	const { sections } = parseBlock(text);
	const firstLines = (keep: (key: string) => boolean) =>
		sections.filter((s) => keep(displayKey(s.key))).map((s) => (s.lines[0] ?? "").replace(/:$/, ""));
	if (kind === "update")
		return `editor update: ${firstLines((key) => key !== SELECTION_KEY).join(" · ") || "selection"}`;
	const name = details.table ?? (details.file ? basename(details.file) : details.editor);
	return [`editor context: ${name}`, ...firstLines((key) => !UNSHOWN_KEYS.has(key))].join(" · ");
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
	if (typeof id !== "string" || (kind !== "full" && kind !== "update" && kind !== "stale")) return null;
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
