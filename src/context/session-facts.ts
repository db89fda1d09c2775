/**
 * What the session says the model has of the editor context: the ide-context messages of pi's projection (the
 * current branch with compaction and context edits applied), those of the branch, and the last prompt. Asked
 * with every prompt and twice per model request, so it must not cost the session's length each time: pi's
 * projection of a 5,000-entry session takes milliseconds.
 *
 * The facts are a function of the session's leaf (entries are append-only and never change), so they are kept
 * per leaf and carried forward: when the new leaf descends from the last one through plain entries (messages,
 * custom messages and entries, model or label changes), the facts grow by the ide-context messages among them.
 * A compaction, a branch summary, a context edit, another branch, a leaf further than MAX_STEPS_FORWARD
 * entries on, or another session: computed whole, from pi's projection. `test/unit/context/session-facts.test.ts`
 * checks the carried facts against the whole computation over seeded random sessions.
 */
import { NO_SENDS, type ReadMessage, type UserSends, withUserSends } from "./model-view.ts";
import { withRunContext } from "./request-repair.ts";

/** A session entry, as far as these facts read it (pi's SessionEntry, structurally). */
export interface FactsEntry {
	type: string;
	id: string;
	parentId: string | null;
	message?: { role: string; content?: unknown };
	customType?: string;
	content?: unknown;
	details?: unknown;
	targetId?: string;
}

/** What it asks of pi's session manager (ReadonlySessionManager, structurally). */
export interface FactsSession {
	getSessionId(): string;
	getLeafId(): string | null;
	getEntry(id: string): FactsEntry | undefined;
	getBranch(): FactsEntry[];
	buildSessionProjection(): {
		messages: ReadonlyArray<{ role: string; customType?: string; details?: unknown; content?: unknown }>;
	};
}

export interface SessionFacts {
	/** The ide-context messages of the projection: what the model has (a prompt decides on these). */
	readonly projected: readonly ReadMessage[];
	/** What the model should have: the projection's, plus the branch's newest when a compaction summarised it away. */
	readonly session: readonly ReadMessage[];
	/** Every ide-context message of the branch not removed by a context edit: where a selection's text is found. */
	readonly branch: readonly ReadMessage[];
	/** The branch's last user prompt, as text. */
	readonly prompt: string | undefined;
	/** The selections the projection's user messages hold as sends from the editor (model-view.ts `userSends`). */
	readonly sent: UserSends;
}

/** How far a leaf may have moved on for the facts to be carried forward rather than computed whole. */
export const MAX_STEPS_FORWARD = 512;

/** Entries that change what came before them in the projection: the facts are computed whole after one. */
const RESHAPING = new Set(["compaction", "branch_summary", "context_edit"]);

const EMPTY: SessionFacts = { projected: [], session: [], branch: [], prompt: undefined, sent: NO_SENDS };

interface Known {
	sessionId: string;
	leafId: string | null;
	projected: ReadMessage[];
	branch: ReadMessage[];
	/** The newest ide-context entry of the branch, unless a context edit changed it. */
	newest: ReadMessage | undefined;
	prompt: string | undefined;
	sent: UserSends;
	facts: SessionFacts;
}

export class SessionFactsCache {
	readonly #messageType: string;
	#known: Known | undefined;

	constructor(messageType: string) {
		this.#messageType = messageType;
	}

	/** The facts of `session` now. Unreadable: as if none. */
	facts(session: FactsSession): SessionFacts {
		try {
			const sessionId = session.getSessionId();
			const leafId = session.getLeafId();
			const known = this.#known;
			if (known && known.sessionId === sessionId) {
				if (known.leafId === leafId) return known.facts;
				const added = this.#entriesSince(session, known.leafId, leafId);
				if (added) return this.#carry(known, leafId, added);
			}
			return this.#whole(session, sessionId, leafId);
		} catch {
			this.#known = undefined;
			return EMPTY;
		}
	}

	/** The entries from just after `from` to `to`, oldest first; undefined when `to` does not plainly descend from it. */
	#entriesSince(session: FactsSession, from: string | null, to: string | null): FactsEntry[] | undefined {
		const added: FactsEntry[] = [];
		let id = to;
		while (id !== from) {
			if (id === null || added.length >= MAX_STEPS_FORWARD) return undefined;
			const entry = session.getEntry(id);
			if (!entry || RESHAPING.has(entry.type)) return undefined;
			added.push(entry);
			id = entry.parentId;
		}
		return added.reverse();
	}

	#carry(known: Known, leafId: string | null, added: FactsEntry[]): SessionFacts {
		let { projected, branch, newest, prompt, sent } = known;
		for (const entry of added) {
			if (entry.type === "message" && entry.message?.role === "user") {
				prompt = userText(entry.message.content);
				sent = withUserSends(sent, [entry.message.content]);
			}
			if (entry.type === "custom_message" && entry.customType === this.#messageType) {
				const message = { details: entry.details, content: entry.content };
				projected = [...projected, message];
				branch = [...branch, message];
				newest = message;
			}
		}
		return this.#remember({ ...known, leafId, projected, branch, newest, prompt, sent });
	}

	#whole(session: FactsSession, sessionId: string, leafId: string | null): SessionFacts {
		const messages = session.buildSessionProjection().messages;
		const projected = messages.flatMap((m) =>
			m.role === "custom" && m.customType === this.#messageType ? [{ details: m.details, content: m.content }] : [],
		);
		const sent = withUserSends(
			NO_SENDS,
			messages.flatMap((m) => (m.role === "user" ? [m.content] : [])),
		);
		const entries = session.getBranch();
		const edited = new Set<string>();
		for (const entry of entries) if (entry.type === "context_edit" && entry.targetId) edited.add(entry.targetId);
		const branch: ReadMessage[] = [];
		let newestEdited = false;
		let prompt: string | undefined;
		for (const entry of entries) {
			if (entry.type === "message" && entry.message?.role === "user") prompt = userText(entry.message.content);
			if (entry.type === "custom_message" && entry.customType === this.#messageType) {
				newestEdited = edited.has(entry.id);
				if (!newestEdited) branch.push({ details: entry.details, content: entry.content });
			}
		}
		// A context_edit that changed the newest block says what the model has: the projection, as it is.
		const newest = newestEdited ? undefined : branch.at(-1);
		return this.#remember({ sessionId, leafId, projected, branch, newest, prompt, sent, facts: EMPTY });
	}

	#remember(known: Known): SessionFacts {
		const { projected, branch, newest, prompt, sent } = known;
		const facts = { projected, session: withRunContext(projected, newest), branch, prompt, sent };
		this.#known = { ...known, facts };
		return facts;
	}
}

function userText(content: unknown): string | undefined {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return undefined;
	const texts = content.flatMap((part: unknown) =>
		typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text"
			? [String((part as { text?: unknown }).text)]
			: [],
	);
	return texts.length === 1 ? texts[0] : undefined;
}
