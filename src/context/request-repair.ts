/**
 * The request and payload repair: the last resort, on the request itself (after every other extension changed
 * it) and on the provider's payload. The newest editor context of the session is what the model should read;
 * when a request lacks it, or a message it builds on, it gets one self-contained block instead, and older editor
 * contexts whose basis is gone read SUPERSEDED. Pure: reads the records model-view.ts keeps, returns data.
 */
import {
	keyedSections,
	parseBlock,
	REFERENCE_WORDS,
	SELECTION_KEY,
	type SelectionIdentity,
	selectionHead,
	selectionKey,
	selectionReference,
	sentSelectionsIn,
	sentSlot,
} from "./block-sections.ts";
import { type BlockSection, sectionLines } from "./blocks.ts";
import {
	contentText,
	EMPTY_FOLD,
	type Fold,
	foldOf,
	isRecord,
	type MemoryRecord,
	memoryId,
	READ_BACK,
	type ReadMessage,
	type ReadRecord,
	readChecked,
	readMemory,
	readRecords,
	step,
	textHash,
	userSends,
	viewOf,
} from "./model-view.ts";

/**
 * Whether a user message of the request still holds the selection `record` references there (a send from the
 * editor); true for a record that references none. Any of them: the reference was true of the request when made (a
 * later send of the same lines made the next editor context carry the text). `sends` is computed on first need.
 */
function userCopyHeld(record: MemoryRecord, sends: () => ReadonlySet<string>): boolean {
	return record.userCopy === undefined || sends().has(record.userCopy.key);
}

/** Every send the request's user messages hold (model-view.ts `userSends`, each scanned once), made on first call. */
function requestSends(request: readonly RequestMessage[]): () => ReadonlySet<string> {
	let sends: Set<string> | undefined;
	return () => {
		if (!sends) {
			sends = new Set();
			for (const m of request) if (m.kind === "user") for (const key of userSends(m.content)) sends.add(key);
		}
		return sends;
	};
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
function tailStart(session: readonly ReadMessage[], fold: Fold, held: (record: MemoryRecord) => boolean): number {
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
		// A selection referenced in a user message rests on that message: a request without it is judged whole.
		if (record.userCopy && !held(record)) first = -1;
		else if (record.selection && !record.userCopy) {
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
	const sends = requestSends(request);
	const from = tailStart(session, sessionFold, (record) => userCopyHeld(record, sends));
	if (sameTail(lastOurs(request, session.length - from), session, from)) {
		const held =
			!target.selection ||
			sessionFold.selections.has(selectionKey(target.selection)) ||
			(target.userCopy !== undefined && userCopyHeld(target, sends));
		if (sessionFold.stands && held) return undefined;
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
	// Held: in an editor context the request keeps (one the check put back), or in the user's message it names.
	const selectionHeld =
		!target.selection ||
		view.selections.has(selectionKey(target.selection)) ||
		(target.userCopy !== undefined && userCopyHeld(target, sends));
	if (view.latest?.id === target.id && selectionHeld) return undefined;
	const replaced = ours.at(-1);
	// The selections the request still holds once the replaced message is gone: a reference stands only there.
	const kept = viewOf(standing.filter((r) => r.message !== replaced?.message)).selections;
	const holders = branch === session ? fromSession : readRecords(branch);
	const whole = selfContained({ record: target, content: newest.message.content }, kept, holders, sends);
	const details = standAlone(newest.message.details, target, whole);
	if (replaced) return { index: replaced.index, replace: true, text: whole.text, details };
	// Before the prompt it came with; with no prompt left, first after the system head (which stays first).
	const lastUser = request.findLastIndex((m) => m.kind === "user");
	const afterSystem = request.findIndex((m) => m.kind !== "system");
	const index = lastUser >= 0 ? lastUser : afterSystem >= 0 ? afterSystem : request.length;
	return { index, replace: false, text: whole.text, details };
}

/**
 * The request check applied to pi's own message list (a `context_with_system` event's): the repair spliced in (a
 * new block from `newBlock`, or the last ide-context message replaced) and older editor contexts whose basis is
 * gone set to SUPERSEDED. Only pi's custom messages are ever changed; the system head stays first. Returns the new
 * list and the block put in (for the payload check, which finds it by its text), or undefined: nothing to change.
 */
export function repairMessages<M extends { role: string }>(
	messages: readonly M[],
	read: (message: M) => RequestMessage,
	facts: { session: readonly ReadMessage[]; branch: readonly ReadMessage[] },
	newBlock: (text: string, details: unknown) => M,
): { messages: M[]; repaired: ReadMessage[] } | undefined {
	const repair = repairRequest(messages.map(read), facts.session, facts.branch);
	const out = [...messages];
	let repaired: ReadMessage[] = [];
	const at = repair && out[repair.index];
	if (repair && !repair.replace) {
		out.splice(repair.index, 0, newBlock(repair.text, repair.details));
		repaired = [{ details: repair.details, content: repair.text }];
	} else if (repair && at?.role === "custom") {
		// repairRequest only points at ours; anything else is left be.
		out[repair.index] = { ...at, content: repair.text, details: repair.details };
		repaired = [{ details: repair.details, content: repair.text }];
	}
	// An older editor context whose basis is gone no longer says anything true: it reads as superseded.
	const superseded = supersededIn(out.map(read), facts.session);
	for (const index of superseded) {
		const message = out[index];
		if (message?.role === "custom") out[index] = { ...message, content: SUPERSEDED, details: {} };
	}
	if (!repair && superseded.length === 0) return undefined;
	return { messages: out, repaired };
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
	const sends = requestSends(request);
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
			(!cut &&
				record.selection !== null &&
				!record.selectionSent &&
				!record.userCopy &&
				!fold.selections.has(selectionKey(record.selection)) &&
				text.includes(REFERENCE_WORDS)) ||
			!userCopyHeld(record, sends);
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
	// A user message holding a send of the lines whose selection the session's editor context references there.
	const copies = userCopySlots(facts.session);
	const holdsCopy = (text: string) =>
		copies.size > 0 &&
		text.includes("Selection from ") &&
		sentSelectionsIn(text).some((key) => copies.has(sentSlot(key)));
	const wanted = (text: string) => known(text) !== undefined || text === facts.prompt || holdsCopy(text);
	for (const [key, value] of Object.entries(payload)) {
		if (!Array.isArray(value)) continue;
		const leaves: Leaf[] = [];
		collectLeaves(value, [key], wanted, leaves, 0);
		const found: Array<{ leaf: Leaf; message: RequestMessage }> = [];
		for (const leaf of leaves) {
			const ours = known(leaf.text);
			if (ours) found.push({ leaf, message: { kind: "ide-context", details: ours.details, content: leaf.text } });
			else if (leaf.text === facts.prompt || holdsCopy(leaf.text))
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

/** The lines (`sentSlot`) of the `userCopy` of the session's last READ_BACK editor contexts (usually none). */
function userCopySlots(session: readonly ReadMessage[]): Set<string> {
	const slots = new Set<string>();
	for (let i = Math.max(0, session.length - READ_BACK); i < session.length; i++) {
		const copy = readChecked(session[i] as ReadMessage)?.userCopy;
		if (copy) slots.add(sentSlot(copy.key));
	}
	return slots;
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
 * The session's ide-context messages by their text, for the payload check. Built with every check: the session's
 * list is the caller's and may change in place, so a map kept by its identity could answer for an older state.
 */
function textsOf(messages: readonly ReadMessage[]): Map<string, ReadMessage> {
	return new Map(messages.map((m) => [contentText(m.content), m]));
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
	// The text put back from the record's user copy: the message carries it now, it references nothing.
	const { userCopy, ...rest } = record;
	const memory: MemoryRecord = {
		...rest,
		...(userCopy && !whole.selectionSent ? { userCopy } : {}),
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
	sends: () => ReadonlySet<string>,
): { text: string; selectionSent: boolean } {
	const { record } = target;
	if (record.kind === "stale") return { text: contentText(target.content), selectionSent: false };
	// Text from the session (this version's, an older one's, cut by a pruner): read with the one parser.
	const own = new Map(keyedSections(parseBlock(contentText(target.content))));
	const lines = [record.state.header];
	let selectionSent = false;
	for (const [key, value] of record.state.sections) {
		const mine = own.get(key);
		if (key === SELECTION_KEY && record.selection) {
			const part = record.userCopy
				? userCopyLines(record.userCopy, mine, userCopyHeld(record, sends))
				: selectionLines(record, record.selection, mine, requestSelections, holders);
			selectionSent = part.sent;
			lines.push(...part.lines);
		} else lines.push(...(mine ? sectionLines(mine) : [value]));
	}
	return { text: lines.join("\n"), selectionSent };
}

function selectionLines(
	record: MemoryRecord,
	selection: SelectionIdentity,
	own: BlockSection | undefined,
	requestSelections: ReadonlySet<string>,
	holders: readonly ReadRecord[],
): { lines: string[]; sent: boolean } {
	if (own && record.selectionSent) return { lines: sectionLines(own), sent: true };
	const key = selectionKey(selection);
	const holder = holders.findLast(
		(r) => r.record?.selectionSent && r.record.selection && selectionKey(r.record.selection) === key,
	);
	const held =
		holder &&
		keyedSections(parseBlock(contentText(holder.message.content))).find(([key]) => key === SELECTION_KEY)?.[1];
	if (requestSelections.has(key)) {
		// `own` is then already the reference line ("... the same selection as in an earlier editor context ...").
		return {
			lines: own ? sectionLines(own) : [selectionReference(held)],
			sent: false,
		};
	}
	if (held) return { lines: sectionLines(held), sent: true };
	return { lines: [selectionGone(own)], sent: false };
}

/**
 * A selection the record references in a user message: the reference while the request holds that message (its own
 * line, or made from the kept section when the record is an update that did not repeat it), else the kept section.
 */
function userCopyLines(
	copy: { section: string[] },
	own: BlockSection | undefined,
	held: boolean,
): { lines: string[]; sent: boolean } {
	if (!held) return { lines: copy.section, sent: true };
	const kept: BlockSection = { kind: "text", key: SELECTION_KEY, lines: copy.section };
	return { lines: own ? sectionLines(own) : [selectionReference(kept, "user")], sent: false };
}

/** The selection's own head (its range) kept, its text said to be gone: nothing in the request holds it. */
function selectionGone(own: BlockSection | undefined): string {
	return `${selectionHead(own)}: made earlier in this conversation; its text is no longer in the model's context (select it again to send it).`;
}
