/**
 * What the model already has: decide, for each prompt, whether the editor context
 * goes to the model in full, as a short update, or not at all. Pure: it reads the
 * details of the ide-context messages the model will actually see (the session's
 * projection, after compaction, /tree, /fork or /resume) and the block the
 * controller built now, and returns data.
 *
 * A block is compared in its canonical form (block-sections.ts): sections by key,
 * ages left out, the selection replaced by its identity. Every message records that
 * canonical state in its details, with an id and the id of the message it updates,
 * so a chain of updates is only trusted while every link of it is still in the
 * model's view, and a hash of the text it was sent with: a `context_edit` that
 * swaps a message's content keeps its details, and a record is only believed while
 * the content still matches it.
 *
 * A selection's text the model has in a user message (sent from the editor, formatted by pi: block-sections.ts
 * `sentSelectionsIn`) counts as a copy too, for as long as that message is in the model's view: the record then
 * names it (`userCopy`) and keeps the section, so the request check can put the text back when the message is gone.
 */
import { hash } from "node:crypto";
import {
	blockSentKey,
	type CanonicalState,
	canonicalState,
	displayKey,
	renderBlock,
	renderUpdate,
	SELECTION_KEY,
	type SelectionIdentity,
	selectionIdentity,
	selectionKey,
	sentLine,
	sentSelectionsIn,
	sentSlot,
} from "./block-sections.ts";
import { type ContextBlock, type ContextDetails, sectionLines } from "./blocks.ts";

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
	/**
	 * The selection's text is referenced where the model has it in a user message: its `sentSelectionKey`, and the
	 * section as the block would have carried it (what the request check puts back when that message is gone).
	 */
	userCopy?: UserCopy;
}

export interface UserCopy {
	key: string;
	section: string[];
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
	/** The selections the model sees in user messages (sends from the editor): `UserSends`. */
	sent?: UserSends;
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

/**
 * Read the model's view from the ide-context messages it will see, oldest first, and `sent`: the selections its
 * user messages hold (`userSends`). Never throws on odd details.
 */
export function modelView(messages: readonly ReadMessage[], sent: UserSends = NO_SENDS): ModelView {
	const view = viewOfFold(foldOf(messages));
	return sent.size > 0 ? { ...view, sent } : view;
}

/**
 * The selections user messages hold as sends from the editor: per file and lines (`sentSlot`), the key
 * (`sentSelectionKey`) of the last send of them, read oldest first. A later send of the same lines with other text
 * (a draft the user edited) is what the model last read of them: the editor's text is then not the one it has.
 */
export type UserSends = ReadonlyMap<string, string>;

export const NO_SENDS: UserSends = new Map();

/** Per content object (pi keeps one per session entry): the selections that user message holds, scanned once. */
const scannedUsers = new WeakMap<object, readonly string[]>();

/**
 * The selections (`sentSelectionKey`) a user message holds as pi formatted a send from the editor. Its content is
 * scanned once per content object (a session is read at every prompt and every model request).
 */
export function userSends(content: unknown): readonly string[] {
	if (typeof content !== "object" || content === null) return sentSelectionsIn(contentText(content));
	let keys = scannedUsers.get(content);
	if (!keys) {
		keys = sentSelectionsIn(contentText(content));
		scannedUsers.set(content, keys);
	}
	return keys;
}

/** `known` with the sends of `contents` (user messages, oldest first) read after it; `known` itself when none. */
export function withUserSends(known: UserSends, contents: readonly unknown[]): UserSends {
	let out = known;
	for (const content of contents) {
		for (const key of userSends(content)) {
			const slot = sentSlot(key);
			if (out.get(slot) !== key) out = new Map(out).set(slot, key);
		}
	}
	return out;
}

/** Whether `sends` has the selection of `key` as the model last read it. */
export function holdsSend(sends: UserSends, key: string): boolean {
	return sends.get(sentSlot(key)) === key;
}

/** A message the model reads, with its record: null for one without a usable record (an older version's). */
export interface ReadRecord {
	message: ReadMessage;
	record: MemoryRecord | null;
}

/**
 * The records of `messages`, leaving out every message whose content no longer is the text its record was sent
 * with (a `context_edit` replaced it, another extension rewrote it): the model does not read what that record says.
 */
export function readRecords(messages: readonly ReadMessage[], checked?: readonly ReadRecord[]): ReadRecord[] {
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

export function memoryId(details: unknown): string | undefined {
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
export function readChecked(message: ReadMessage): MemoryRecord | null | undefined {
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
export interface Fold {
	selections: ReadonlySet<string>;
	/** Where (message index) the text of each selection is, the last copy. */
	holders: ReadonlyMap<string, number>;
	last: MemoryRecord | null | undefined;
	stands: boolean;
	/** Index of the last message read, and of the first message of its chain (its full block or notice). */
	at: number;
	chainStart: number;
}

export const EMPTY_FOLD: Fold = {
	selections: new Set(),
	holders: new Map(),
	last: undefined,
	stands: false,
	at: -1,
	chainStart: -1,
};

export function step(fold: Fold, record: MemoryRecord | null, at: number): Fold {
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
export const READ_BACK = 2 * MAX_UPDATE_CHAIN;

/** The fold of the last READ_BACK messages (each message's record is parsed and checked once, see readChecked). */
export function foldOf(messages: readonly ReadMessage[]): Fold {
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

export function viewOf(read: readonly ReadRecord[]): ModelView {
	return viewOfFold(foldRecords(read));
}

/** Decide what this prompt sends for `block`, given what the model has. */
export function decide(block: ContextBlock, view: ModelView, options: DecideOptions): Decision {
	const { sections } = block;
	const selection = selectionIdentity(block.details, sections);
	const state = canonicalState(sections, selection);
	// A copy far back is sent again: what the request check compares stays short (see MAX_UPDATE_CHAIN).
	const key = selection && selectionKey(selection);
	const inContext = key !== null && view.selections.has(key) && (view.distance?.(key) ?? 0) < MAX_UPDATE_CHAIN;
	// Else a user message the model sees may hold it (a send from the editor): referenced there, while it stays.
	const sentKey = selection && !inContext && view.sent ? blockSentKey(sections, block.details.file) : null;
	const userCopy: UserCopy | undefined =
		sentKey !== null && view.sent && holdsSend(view.sent, sentKey)
			? { key: sentKey, section: selectionSection(block) }
			: undefined;
	const known = inContext || userCopy !== undefined;
	const where = userCopy ? "user" : "earlier";
	const record = (
		kind: "full" | "update",
		prev: string | null,
		sent: boolean,
		text: string,
		update?: { changed: readonly string[]; removed: readonly string[] },
	): MemoryDetails => {
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
			...(userCopy && !sent ? { userCopy } : {}),
		};
		details.sent = sentLine(sections, block.details, update);
		return details;
	};
	const full = (reason: string): Decision => {
		const sent = selection !== null && (options.always || !known);
		const text = sent || selection === null ? block.text : renderBlock(sections, where);
		const why = `a new block (${reason})`;
		return {
			kind: "full",
			text,
			details: record("full", null, sent, text),
			why: sent || selection === null ? why : `${why}; ${referencedWhy(where)}`,
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
				? `nothing (unchanged since the editor context the model has; ${referencedWhy(where)})`
				: "nothing (unchanged since the editor context the model has)",
			selectionReferenced: selection !== null,
		};
	}
	const sent = selection !== null && !known && changed.includes(SELECTION_KEY);
	const update = renderUpdate(block.details.editor, sections, changed, removed, known && where);
	const fullSize = (selection !== null && !known ? block.text : renderBlock(sections, where)).length;
	if (update.length >= fullSize) return full("most of it changed");
	const keys = [...changed, ...removed].map(displayKey).join(", ");
	return {
		kind: "update",
		text: update,
		details: record("update", base.id, sent, update, { changed, removed }),
		why: `an update (${keys}) to the editor context the model has${known ? `; ${referencedWhy(where)}` : ""}`,
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

/** What the next message is to describe: a block, or why pi cannot describe the editor (the controller's Injection). */
export type Describable = { kind: "inject"; block: ContextBlock } | { kind: "skip"; stale: StaleReason };

/** What the decision of the next message reads besides the injection (the session's facts, session-facts.ts). */
export interface MessageFacts {
	/** The ide-context messages of the session's projection: what the model sees. */
	projected: readonly ReadMessage[];
	/**
	 * The selections the user messages the model sees hold (`userSends`): the projection's, and the message this
	 * editor context goes with (the prompt, or the message typed while pi works).
	 */
	sent?: UserSends;
	/** The same, plus the run's block when a compaction summarised it away: what a notice marks out of date. */
	session: readonly ReadMessage[];
	/** ideContext.sendUnchanged: a full block with every prompt. */
	always: boolean;
	/** Id for the new message's memory record. */
	id: string;
}

/**
 * The one decision of what goes to the model with the next message, for a prompt (before_agent_start), a message
 * typed while pi works and `/ide status` alike: the block, an update, a notice that the model's editor context is
 * out of date, or nothing.
 */
export function nextMessage(injection: Describable, facts: MessageFacts): Decision {
	return injection.kind === "inject"
		? decide(injection.block, modelView(facts.projected, facts.sent), { always: facts.always, id: facts.id })
		: decideStale(injection.stale, modelView(facts.session), { id: facts.id });
}

function staleHeader(reason: StaleReason): string {
	return `out of date: ${reason}`;
}

/** The short hash a record keeps of the text its message was sent with (one-shot `hash`: checked per message). */
export function textHash(text: string): string {
	return hash("sha256", text).slice(0, 16);
}

export function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part: unknown) =>
			isRecord(part) && part["type"] === "text" && typeof part["text"] === "string" ? part["text"] : "",
		)
		.join("");
}

const SELECTION_REFERENCED = "the selection was sent already, not repeated";

function referencedWhy(where: "earlier" | "user"): string {
	return where === "user" ? "the selection is in the user's message, not repeated" : SELECTION_REFERENCED;
}

/** The block's selection section as its lines (what a record keeps of a selection referenced in a user message). */
function selectionSection(block: ContextBlock): string[] {
	const section = block.sections.sections.find((s) => s.kind === "selection");
	return section ? sectionLines(section) : [];
}
/** A change in one of these means another file or table: the model gets the whole block again. */
const IDENTITY_KEYS = ["File", "Table"];

// ---------------------------------------------------------------------------
// Reading details back from the session (untrusted shape: written by any version)

export function readMemory(details: unknown): MemoryRecord | null {
	if (!isRecord(details)) return null;
	const memory = details["memory"];
	if (!isRecord(memory) || memory["v"] !== MEMORY_VERSION) return null;
	const { id, kind, prev, state, selection, selectionSent, textHash } = memory;
	if (typeof id !== "string" || (kind !== "full" && kind !== "update" && kind !== "stale")) return null;
	if (prev !== null && typeof prev !== "string") return null;
	if (!isState(state) || typeof selectionSent !== "boolean" || typeof textHash !== "string") return null;
	if (selection !== null && !isSelection(selection)) return null;
	const record: MemoryRecord = { v: MEMORY_VERSION, id, kind, prev, state, selection, selectionSent, textHash };
	const userCopy = memory["userCopy"];
	if (userCopy === undefined) return record;
	if (!isUserCopy(userCopy) || selection === null || selectionSent) return null;
	return { ...record, userCopy: { key: userCopy.key, section: [...userCopy.section] } };
}

function isUserCopy(value: unknown): value is UserCopy {
	return (
		isRecord(value) &&
		typeof value["key"] === "string" &&
		Array.isArray(value["section"]) &&
		value["section"].every((line: unknown) => typeof line === "string")
	);
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

export function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
