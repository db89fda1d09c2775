import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { describe, it } from "node:test";
import { canonicalState, keyedSections, parseBlock, selectionIdentity } from "../../../src/context/block-sections.ts";
import {
	type ContextBlock,
	contextBlock,
	formatContextBlock,
	headerLine,
	sectionLines,
} from "../../../src/context/blocks.ts";
import { appendPromptDiagnostics } from "../../../src/context/diagnostics.ts";
import {
	type Decision,
	decide,
	decideStale,
	type MemoryDetails,
	modelView,
	nextMessage,
	type ReadMessage,
	STALE_WORDING,
	type StaleReason,
	withUserSends,
} from "../../../src/context/model-view.ts";
import {
	type RequestMessage,
	repairMessages,
	repairPayload,
	repairRequest,
	SUPERSEDED,
	supersededIn,
	withRunContext,
} from "../../../src/context/request-repair.ts";
import { formatSend } from "../../../src/link/send-deliver.ts";
import type { DiagnosticItem, EditorState, Selection } from "../../../src/protocol/protocol.ts";
import { specDatabaseView } from "../../fixtures/database-view.ts";
import { mulberry32 } from "../../helpers/seeded.ts";
import { makeState } from "../../helpers/state-files.ts";

const NOW = 1_800_000_000;
const FILE = "/home/u/proj/src/main.ts";
const SELECTED = "export function main(argv: string[]) {\n  return run(argv);\n}";

/** The editor these cases look at: pid 4242 in /home/u/proj with main.ts open; `buffer` and `overrides` replace fields. */
function state(buffer: Partial<EditorState["active_buffer"]> = {}, overrides: Partial<EditorState> = {}): EditorState {
	return makeState({
		pid: 4242,
		cwd: "/home/u/proj",
		timestamp: NOW - 1,
		...overrides,
		active_buffer: { file: FILE, ...buffer },
	});
}

function selection(text = SELECTED, selectedAt = NOW, start = 40): Selection {
	return {
		start: { line: start, column: 1 },
		end: { line: start + text.split("\n").length - 1, column: 1 },
		text,
		selected_at: selectedAt,
	};
}

function blockOf(s: EditorState, now: number, extraLines: string[] = []): ContextBlock {
	const file = s.database ? null : s.active_buffer.file;
	const block = formatContextBlock(s, file, { now });
	assert.ok(block, "the fixture makes a block");
	// The block as it reads with the lines appended: sections of their own after the block's.
	return extraLines.length > 0
		? contextBlock(parseBlock([block.text, ...extraLines].join("\n")), block.details)
		: block;
}

/** The block the controller injects: the context block with the active buffer's diagnostics (the real format). */
function promptBlockOf(s: EditorState, now: number): ContextBlock {
	return appendPromptDiagnostics(blockOf(s, now), s);
}

/**
 * A conversation as the model sees it: the details of every ide-context message sent so far, in order. `view`
 * can be narrowed to simulate compaction, /tree or /fork removing messages from the model's view.
 */
class Conversation {
	messages: ReadMessage[] = [];
	/** The request the model would get: pi's system head, then each prompt with the editor context it brought. */
	request: RequestMessage[] = [{ kind: "system", details: undefined, content: "system prompt" }];
	#ids = 0;
	always = false;

	/** A prompt (`prompt`, or words of its own) with the editor context `block` decided for it. */
	send(block: ContextBlock, prompt?: string): Decision {
		this.#ids += 1;
		const content = prompt ?? `prompt ${this.#ids}`;
		// The selections sent from the editor in the user messages the model sees, this prompt's included.
		const users = [...this.request.filter((m) => m.kind === "user").map((m) => m.content), content];
		const view = modelView(this.messages, withUserSends(new Map(), users));
		const decision = decide(block, view, { always: this.always, id: `m${this.#ids}` });
		this.request.push({ kind: "user", details: undefined, content });
		if (decision.kind !== "none") {
			const message = { details: decision.details, content: decision.text };
			this.messages.push(message);
			this.request.push({ kind: "ide-context", ...message });
		}
		return decision;
	}
}

const selectionTextSent = (d: Decision) => d.text.includes("return run(argv);");

/** The user's message of a send from the editor at once, as pi formats it (formatSend), for `sel` of FILE. */
function sentMessage(sel: Selection, words = "why does this fail?", file = FILE): string {
	return formatSend(
		{
			pid: 4242,
			pi_pid: 7,
			id: "s1",
			timestamp: NOW,
			mode: "now",
			prompt: words,
			item: {
				kind: "selection",
				file,
				start_line: sel.start.line,
				end_line: sel.end.line,
				text: sel.text,
				truncated: false,
				message: null,
			},
		},
		"/home/u/proj",
		{ maxLines: 1000, maxBytes: 64 * 1024 },
	);
}

describe("decide: what each prompt of a conversation sends", () => {
	it("first prompt: the full block, exactly as formatted", () => {
		const c = new Conversation();
		const block = blockOf(state(), NOW);
		const d = c.send(block);
		assert.equal(d.kind, "full");
		assert.equal(d.text, block.text);
		assert.match(d.why, /no editor context/);
	});

	it("an untouched editor sends nothing after the first block, over many prompts and minutes", () => {
		const c = new Conversation();
		const kinds = Array.from({ length: 20 }, (_, i) => c.send(blockOf(state(), NOW + 30 * i)).kind);
		assert.deepEqual(kinds, ["full", ...Array(19).fill("none")]);
	});

	it("a cursor move is an update naming the new cursor line, and only that", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		const moved = c.send(blockOf(state({ cursor: { line: 50, column: 3 } }), NOW + 5));
		assert.equal(moved.kind, "update");
		assert.deepEqual(moved.text.split("\n").slice(1), ["Cursor: line 50, column 3"]);
		assert.match(moved.text, /^Editor update \(Neovim\), the rest as before:\n/);
		// Back to where the full block had it: the model's latest word was line 50, so this is news too.
		const back = c.send(blockOf(state(), NOW + 10));
		assert.equal(back.kind, "update");
		assert.match(back.text, /Cursor: line 42, column 10/);
		assert.equal(c.send(blockOf(state(), NOW + 15)).kind, "none");
	});

	it("a selection is sent once; follow-ups refer to it; a stale one is reported gone", () => {
		const c = new Conversation();
		const withSelection = (now: number, cursor = 42) =>
			blockOf(state({ selection: selection(), cursor: { line: cursor, column: 1 } }), now);
		const first = c.send(withSelection(NOW + 1));
		assert.equal(first.kind, "full");
		assert.ok(selectionTextSent(first));
		assert.ok(first.details?.selection, "the quote comes from details.selection");
		const again = c.send(withSelection(NOW + 20));
		assert.equal(again.kind, "none");
		assert.equal(again.selectionReferenced, true);
		assert.match(again.why, /selection was sent already/);
		const moved = c.send(withSelection(NOW + 30, 41));
		assert.equal(moved.kind, "update");
		assert.ok(!selectionTextSent(moved), moved.text);
		assert.equal(moved.details?.selection, undefined, "no quote for a selection not sent again");
		const stale = c.send(blockOf(state({ selection: selection(), cursor: { line: 41, column: 1 } }), NOW + 90));
		assert.equal(stale.kind, "update");
		assert.match(stale.text, /^Selection: none now$/m);
	});

	it("a selection whose only copy is an update whose block is gone is sent again, not referred to", () => {
		// The request check reads such an update as superseded (its "rest as before" resolves to nothing), so the
		// text it carries is not a copy the model keeps.
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(blockOf(state({ selection: selection(SELECTED, NOW + 4) }), NOW + 5));
		c.messages = c.messages.slice(1); // a compaction kept only the update
		const next = c.send(
			blockOf(state({ selection: selection(SELECTED, NOW + 4), cursor: { line: 7, column: 1 } }), NOW + 9),
		);
		assert.equal(next.kind, "full");
		assert.ok(selectionTextSent(next), next.text);
	});

	it("a new selection (other text, range or time) is sent in full in an update", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		const other = c.send(blockOf(state({ selection: selection("const y = 2;", NOW + 5, 60) }), NOW + 6));
		assert.equal(other.kind, "update");
		assert.match(other.text, /const y = 2;/);
		assert.ok(other.details?.selection);
		const reselected = c.send(blockOf(state({ selection: selection(SELECTED, NOW + 10) }), NOW + 11));
		assert.ok(selectionTextSent(reselected), "same text selected again later is a new selection");
	});

	it("another file is a full block; back to the first file, its known selection is referenced", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		const other = c.send(blockOf(state({ file: "/home/u/proj/src/other.ts", name: "other.ts" }), NOW + 5));
		assert.equal(other.kind, "full");
		assert.match(other.why, /file changed/);
		const back = c.send(blockOf(state({ selection: selection() }), NOW + 10));
		assert.equal(back.kind, "full");
		assert.ok(!selectionTextSent(back), back.text);
		assert.match(back.text, /^Selection \(lines 40-42, made 10 s ago\): the same selection as in an earlier/m);
		assert.equal(back.selectionReferenced, true);
	});

	it("after compaction (nothing visible), the full block comes back with the selection text", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ selection: selection(), cursor: { line: 41, column: 1 } }), NOW + 5));
		c.messages = [];
		const d = c.send(blockOf(state({ selection: selection(), cursor: { line: 41, column: 1 } }), NOW + 10));
		assert.equal(d.kind, "full");
		assert.ok(selectionTextSent(d));
	});

	it("an update whose full block left the model's view is not trusted: full block again", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ selection: selection(), cursor: { line: 41, column: 1 } }), NOW + 5));
		c.messages = c.messages.slice(1); // the full block was compacted, its update kept
		const d = c.send(blockOf(state({ selection: selection(), cursor: { line: 41, column: 1 } }), NOW + 10));
		assert.equal(d.kind, "full");
		assert.match(d.why, /no longer in the model's view/);
		assert.ok(selectionTextSent(d));
	});

	it("a reference whose selection text left the model's view sends the text again", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ file: "/p/other.ts", name: "other.ts" }), NOW + 1));
		const back = c.send(blockOf(state({ selection: selection() }), NOW + 2));
		assert.ok(!selectionTextSent(back));
		c.messages = c.messages.slice(2); // only the referencing full block is still visible
		const d = c.send(blockOf(state({ selection: selection() }), NOW + 3));
		assert.equal(d.kind, "update");
		assert.ok(selectionTextSent(d), d.text);
	});

	it("sendUnchanged: the full block, selection text included, with every prompt", () => {
		const c = new Conversation();
		c.always = true;
		const block = blockOf(state({ selection: selection() }), NOW);
		for (let i = 0; i < 3; i++) {
			const d = c.send(block);
			assert.equal(d.kind, "full");
			assert.equal(d.text, block.text);
			assert.match(d.why, /sendUnchanged/);
		}
	});

	it("the setting turned off mid-conversation: the next prompt relies on what was sent", () => {
		const c = new Conversation();
		c.always = true;
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.always = false;
		assert.equal(c.send(blockOf(state({ selection: selection() }), NOW + 5)).kind, "none");
	});

	it("lines added by other parts of the block (diagnostics) are compared and updated like the rest", () => {
		const c = new Conversation();
		const diagnostics = (n: number) => [`Diagnostics (${n}, errors first):`, "  - error 12:3 x is not defined"];
		c.send(blockOf(state(), NOW, diagnostics(1)));
		assert.equal(c.send(blockOf(state(), NOW + 4, diagnostics(1))).kind, "none");
		const changed = c.send(blockOf(state(), NOW + 8, diagnostics(2)));
		assert.equal(changed.kind, "update");
		assert.deepEqual(changed.text.split("\n").slice(1), diagnostics(2));
		const cleared = c.send(blockOf(state(), NOW + 12));
		// No Diagnostics section: the editor reports none now (unknown), which must not read like "Diagnostics: none".
		assert.deepEqual(cleared.text.split("\n").slice(1), ["Diagnostics: unknown now; earlier ones may not apply"]);
	});

	it("an age is not news: the canonical form leaves the selection's age (a number) out, not a pattern in the text", () => {
		const at = (now: number) => blockOf(state({ selection: selection() }), now);
		// Without the selection's identity the section itself is compared: 1 s and 59 s ago read the same.
		assert.deepEqual(canonicalState(at(NOW + 1).sections, null), canonicalState(at(NOW + 59).sections, null));
		assert.notEqual(at(NOW + 1).text, at(NOW + 59).text);
		// Text of the editor's that merely reads like an age ("updated 3 s ago") is the editor's: it is news.
		const c = new Conversation();
		c.send(blockOf(state(), NOW, ["Diagnostics (updated 3 s ago): none"]));
		assert.equal(c.send(blockOf(state(), NOW + 60, ["Diagnostics (updated 2 min ago): none"])).kind, "update");
	});

	it("a saved buffer becoming modified is an update", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		const d = c.send(blockOf(state({ modified: true, lines_total: 201 }), NOW + 1));
		assert.equal(d.kind, "update");
		assert.deepEqual(d.text.split("\n").slice(1), ["Buffer: 201 lines, unsaved changes"]);
	});

	it("database views: a new cell is an update, another table a full block", () => {
		const c = new Conversation();
		const view = (cell: string, table = "rooms") =>
			blockOf(state({}, { app: "jetbrains", database: { ...specDatabaseView(cell), table } }), NOW);
		assert.equal(c.send(view("a")).kind, "full");
		assert.equal(c.send(view("a")).kind, "none");
		const cell = c.send(view("b"));
		assert.equal(cell.kind, "update");
		assert.match(cell.text, /^Selected cell: .* = b$/m);
		assert.equal(c.send(view("b", "other_table")).kind, "full");
	});

	it("another editor (or app) is a full block", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		assert.equal(c.send(blockOf(state({}, { app: "vscode" }), NOW)).kind, "full");
	});

	it("an update that would be as long as the block is sent as the block", () => {
		const c = new Conversation();
		const tiny = (a: number): ContextBlock =>
			contextBlock(parseBlock(`Editor:\nFile: /a\nA: ${a}\nB: ${a}`), {
				pid: 1,
				editor: "Neovim",
				file: "/a",
				language: null,
			});
		c.send(tiny(1));
		const d = c.send(tiny(2));
		assert.equal(d.kind, "full");
		assert.equal(d.text, tiny(2).text);
		assert.match(d.why, /most of it changed/);
	});
});

describe("a selection sent from the editor counts as the selection the model has (issue 25)", () => {
	const withSelection = (now: number, cursor = 42) =>
		blockOf(state({ selection: selection(), cursor: { line: cursor, column: 1 } }), now);
	const USER_REFERENCE = "the selection the user sent in their message; not repeated.";
	const cases: Array<{
		name: string;
		/** The user's message of the prompt whose block is decided. */
		message: string;
		kind: Decision["kind"];
		/** The block repeats the selection's text. */
		text: boolean;
	}> = [
		{
			name: "sent at once: the block refers to the user's message",
			message: sentMessage(selection()),
			kind: "full",
			text: false,
		},
		{
			name: "the draft sent as the user left it (words added)",
			message: `${sentMessage(selection())}\nthanks`,
			kind: "full",
			text: false,
		},
		{
			name: "the draft's text edited: the block sends it",
			message: sentMessage(selection()).replace("run(argv)", "run([])"),
			kind: "full",
			text: true,
		},
		{
			name: "the draft's fence cut: the block sends it",
			message: sentMessage(selection()).replace(/\n`+$/, ""),
			kind: "full",
			text: true,
		},
		{
			name: "another selection sent: the block sends this one",
			message: sentMessage(selection("other();", NOW, 7)),
			kind: "full",
			text: true,
		},
		{ name: "a prompt without a send", message: "why does this fail?", kind: "full", text: true },
	];
	for (const c of cases)
		it(c.name, () => {
			const d = new Conversation().send(withSelection(NOW + 1), c.message);
			assert.equal(d.kind, c.kind);
			assert.equal(selectionTextSent(d), c.text, d.text);
			assert.equal(d.text.includes(USER_REFERENCE), !c.text, d.text);
			assert.equal(d.details?.memory?.userCopy !== undefined, !c.text);
			if (!c.text) assert.match(d.why, /the selection is in the user's message, not repeated/);
		});

	it("later prompts keep referring to it while the user's message is in view; once it is gone, the text is sent", () => {
		const c = new Conversation();
		c.send(withSelection(NOW + 1), sentMessage(selection()));
		assert.equal(c.send(withSelection(NOW + 5)).kind, "none");
		const moved = c.send(withSelection(NOW + 10, 50));
		assert.equal(moved.kind, "update");
		assert.ok(!selectionTextSent(moved), moved.text);
		assert.ok(moved.details?.memory?.userCopy, "an update resting on the user's copy says so");
		// A compaction (or /new, /tree, /fork) took the user's message and the editor contexts out of the model's view.
		c.messages = [];
		c.request = c.request.slice(0, 1);
		const after = c.send(withSelection(NOW + 15, 50));
		assert.equal(after.kind, "full");
		assert.ok(selectionTextSent(after), after.text);
		assert.equal(after.details?.memory?.userCopy, undefined);
	});

	it("a selection the model has in an earlier editor context is referred to there, sent or not", () => {
		const c = new Conversation();
		c.send(withSelection(NOW + 1));
		const d = c.send(withSelection(NOW + 5, 50), sentMessage(selection()));
		assert.equal(d.kind, "update");
		assert.ok(!d.details?.memory?.userCopy);
	});

	describe("the request check: a request whose user message no longer holds it gets the text", () => {
		const c = new Conversation();
		c.send(withSelection(NOW + 1), sentMessage(selection())); // m1: refers to the user's message
		c.send(withSelection(NOW + 5, 50)); // m2: an update on it
		const copies = (r: RequestMessage[]) =>
			r
				.map((m) => String(m.content))
				.join("\n")
				.split("return run(argv);").length - 1;
		const sentOnly = (r: RequestMessage[]) =>
			r.filter((m) => !(m.kind === "user" && String(m.content).includes("Selection from")));
		const requests: Array<{ name: string; request: () => RequestMessage[]; copies: number; changed: boolean }> = [
			{
				name: "intact: left alone, the text once (in the user's message)",
				request: () => c.request,
				copies: 1,
				changed: false,
			},
			{
				name: "the user's message pruned: the text put back once",
				request: () => sentOnly(c.request),
				copies: 1,
				changed: true,
			},
			{
				name: "the block pruned too: a self-contained block with the reference",
				request: () => without(c.request, "m1"),
				copies: 1,
				changed: true,
			},
		];
		for (const r of requests)
			it(r.name, () => {
				const request = r.request();
				const out = checked(request, c.messages);
				assert.equal(copies(out), r.copies, out.map((m) => m.content).join("\n---\n"));
				assert.equal(out !== request && JSON.stringify(out) !== JSON.stringify(request), r.changed);
				// The request as checked is checked: nothing more to do.
				assert.equal(repairRequest(out, c.messages), undefined);
				assert.deepEqual(supersededIn(out, c.messages), []);
			});

		it("the payload check finds the user's message among a provider's messages, and puts the text back without it", () => {
			const payload = (r: RequestMessage[]) => ({
				messages: r.map((m) => ({
					role: m.kind === "system" ? "system" : "user",
					content: [{ type: "text", text: String(m.content) }],
				})),
			});
			const facts = { session: c.messages, branch: c.messages, prompt: "prompt 2", repaired: [] };
			assert.equal(repairPayload(payload(c.request), facts), undefined);
			const fixed = repairPayload(payload(sentOnly(c.request)), facts);
			assert.ok(fixed, "repaired");
			assert.equal(JSON.stringify(fixed).split("return run(argv);").length - 1, 1);
		});
	});
});

describe("modelView: what the model has, from the messages it sees", () => {
	const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);
	const full = (id: string, extra: Partial<NonNullable<MemoryDetails["memory"]>> = {}): ReadMessage => ({
		content: `block ${id}`,
		details: {
			pid: 1,
			editor: "Neovim",
			file: FILE,
			language: "typescript",
			memory: {
				v: 2,
				id,
				kind: "full",
				prev: null,
				state: { header: "h", sections: [["File", "File: x"]] },
				selection: null,
				selectionSent: false,
				textHash: hash(`block ${id}`),
				...extra,
			},
		},
	});
	const cases: Array<{ name: string; messages: ReadMessage[]; latest: string | null; why: RegExp | null }> = [
		{ name: "no messages", messages: [], latest: null, why: /no editor context/ },
		{ name: "one full block", messages: [full("a")], latest: "a", why: null },
		{
			name: "an update on a visible block",
			messages: [full("a"), full("b", { kind: "update", prev: "a" })],
			latest: "b",
			why: null,
		},
		{
			name: "an update on a missing block",
			messages: [full("b", { kind: "update", prev: "a" })],
			latest: null,
			why: /no longer in the model's view/,
		},
		{
			name: "an update on another block than the one before it",
			messages: [full("a"), full("c"), full("b", { kind: "update", prev: "a" })],
			latest: null,
			why: /no longer/,
		},
		{
			name: "a block from an older version (no memory)",
			messages: [full("a"), { details: { pid: 1, editor: "Neovim" }, content: "x" }],
			latest: null,
			why: /predates/,
		},
		{ name: "garbage details", messages: [{ details: "x", content: "x" }], latest: null, why: /predates/ },
		{ name: "a newer memory version", messages: [full("a", { v: 3 } as never)], latest: null, why: /predates/ },
		{
			name: "a version 1 record (no hash of its text)",
			messages: [full("a", { v: 1, textHash: undefined } as never)],
			latest: null,
			why: /predates/,
		},
		{ name: "details without details", messages: [{ details: undefined, content: "" }], latest: null, why: /predates/ },
		{
			name: "a malformed state",
			messages: [full("a", { state: { header: 1 } } as never)],
			latest: null,
			why: /predates/,
		},
		{
			name: "a context_edit replaced the only block's content: as if it were not there",
			messages: [{ ...full("a"), content: "an extension's summary" }],
			latest: null,
			why: /no editor context/,
		},
		{
			name: "a context_edit replaced the newest block's content: the one before it is what the model has",
			messages: [full("a"), { ...full("b"), content: [{ type: "text", text: "replaced" }] }],
			latest: "a",
			why: null,
		},
		{
			name: "a context_edit replaced the block an update builds on",
			messages: [{ ...full("a"), content: "replaced" }, full("b", { kind: "update", prev: "a" })],
			latest: null,
			why: /no longer in the model's view/,
		},
		{
			name: "content given as text parts, unchanged",
			messages: [{ ...full("a"), content: [{ type: "text", text: "block a" }] }],
			latest: "a",
			why: null,
		},
	];
	for (const { name, messages, latest, why } of cases) {
		it(name, () => {
			const view = modelView(messages);
			assert.equal(view.latest?.id ?? null, latest);
			if (why) assert.match(view.why, why);
		});
	}

	it("collects the selections whose text the model sees, not the references", () => {
		const sel = { pid: 1, file: FILE, range: "1:1-2:1", selectedAt: NOW, hash: "abc" };
		const view = modelView([
			full("a", { selection: sel, selectionSent: true }),
			full("b", { selection: { ...sel, hash: "def" }, selectionSent: false }),
		]);
		assert.equal(view.selections.size, 1);
	});

	it("a context_edit that replaced a block's content: the next prompt sends the block again", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		const [sent] = c.messages;
		assert.ok(sent);
		sent.content = "[editor context removed by the user]";
		const d = c.send(blockOf(state({ selection: selection() }), NOW + 5));
		assert.equal(d.kind, "full");
		assert.ok(selectionTextSent(d), "the selection text too: the model no longer reads it");
	});
});

describe("selectionIdentity: the digest of the selection a block shows", () => {
	it("each block's own, whatever was hashed before it (the last digest is remembered)", () => {
		const texts = ["const a = 1;", "const b = 2;", "const a = 1;", "const a = 1;", "const b = 2;", "x\ny"];
		for (const [i, text] of texts.entries()) {
			const block = blockOf(state({ selection: selection(text) }), NOW + i);
			const identity = selectionIdentity(block.details, parseBlock(block.text));
			const shown = block.details.selection;
			assert.ok(identity && shown);
			// The oracle: the fenced text as the block shows it, read back from the block's lines, and its sha256.
			const lines = block.text.split("\n");
			const open = lines.findIndex((line) => line.startsWith("Selection"));
			const body = lines.slice(open + 2, open + 2 + text.split("\n").length).join("\n");
			const expected = createHash("sha256")
				.update(`${shown.lines}:${shown.bytes}:${shown.truncated}\n${body}`)
				.digest("hex")
				.slice(0, 16);
			assert.equal(body, text, `block ${i}: the oracle reads the selection's text`);
			assert.equal(identity.hash, expected, `block ${i}: ${JSON.stringify(text)}`);
		}
	});
});

describe("parseBlock: sections by leading key", () => {
	it("groups indented items and fenced text with their section; repeated keys are numbered", () => {
		const parsed = parseBlock(
			[
				"Header line:",
				"File: /a",
				"Selection (lines 1-3, made 1 s ago):",
				"````ts",
				"Cursor: not a key inside a fence",
				"```",
				"````",
				"Foreign key: a",
				"Foreign key: b",
				"  - item",
			].join("\n"),
		);
		assert.equal(headerLine(parsed.header), "Header line:");
		assert.deepEqual(
			keyedSections(parsed).map(([key, s]) => [key, sectionLines(s).length]),
			[
				["File", 1],
				["Selection", 5],
				["Foreign key", 1],
				["Foreign key#2", 2],
			],
		);
	});
});

/** The request after `repairRequest` did its work (or as it was, when it left it alone). */
function repaired(
	request: RequestMessage[],
	session: readonly ReadMessage[],
	branch: readonly ReadMessage[] = session,
): RequestMessage[] {
	const repair = repairRequest(request, session, branch);
	if (!repair) return request;
	const out = [...request];
	const message: RequestMessage = { kind: "ide-context", details: repair.details, content: repair.text };
	out.splice(repair.index, repair.replace ? 1 : 0, message);
	return out;
}

/** As the request check leaves it: repaired, then every older editor context that no longer resolves superseded. */
function checked(request: RequestMessage[], session: readonly ReadMessage[]): RequestMessage[] {
	return checkedWith(request, session, session);
}

/** `checked`, with the branch's editor contexts (where a selection's text is looked for) given apart. */
function checkedWith(
	request: RequestMessage[],
	session: readonly ReadMessage[],
	branch: readonly ReadMessage[],
): RequestMessage[] {
	const out = [...repaired(request, session, branch)];
	for (const index of supersededIn(out, session))
		out[index] = { ...(out[index] as RequestMessage), content: SUPERSEDED, details: {} };
	return out;
}

const ideTexts = (request: readonly RequestMessage[]) =>
	request.filter((m) => m.kind === "ide-context").map((m) => String(m.content));
const kinds = (request: readonly RequestMessage[]) => request.map((m) => m.kind).join(" ");
/** The request without the ide-context messages of the given ids (as a pruner or a compaction would leave it). */
const without = (request: readonly RequestMessage[], ...ids: string[]) =>
	request.filter((m) => !ids.includes((m.details as MemoryDetails | undefined)?.memory?.id ?? ""));

describe("repairRequest: the request carries the editor context the session says the model has", () => {
	const moved = (line: number, sel: Selection | null = null) =>
		blockOf(state({ cursor: { line, column: 2 }, selection: sel }), NOW + 5);
	const WHOLE_AT_50 = [
		"The user's editor (Neovim) shows this file:",
		`File: ${FILE}`,
		"Language: typescript",
		"Cursor: line 50, column 2",
		"Buffer: 200 lines, saved",
	];

	it("leaves an intact conversation alone, message by message", () => {
		const c = new Conversation();
		for (const block of [blockOf(state({ selection: selection() }), NOW), moved(50, selection()), moved(51)]) {
			c.send(block);
			assert.equal(repairRequest(c.request, c.messages), undefined);
		}
	});

	/** Three prompts: a full block (m1), a cursor update (m2), an unchanged editor (nothing). */
	const blockThenUpdate = () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50));
		c.send(moved(50));
		return c;
	};
	const cases: Array<{
		name: string;
		conversation: () => Conversation;
		prune: (request: RequestMessage[]) => RequestMessage[];
		/** The request's kinds after the repair. */
		shape: string;
		/** The ide-context texts the request then holds, oldest first, as lines. */
		texts: string[][];
	}> = [
		{
			name: "the block an update builds on was pruned: the update becomes the whole state, in its place",
			conversation: blockThenUpdate,
			prune: (r) => without(r, "m1"),
			shape: "system user user ide-context user",
			texts: [WHOLE_AT_50],
		},
		{
			name: "every ide-context message was pruned: the whole state goes in before the last prompt",
			conversation: blockThenUpdate,
			prune: (r) => without(r, "m1", "m2"),
			shape: "system user user ide-context user",
			texts: [WHOLE_AT_50],
		},
		{
			name: "the newest was pruned, an older full block kept: that one is replaced by the newest state",
			conversation: blockThenUpdate,
			prune: (r) => without(r, "m2"),
			shape: "system user ide-context user user",
			texts: [WHOLE_AT_50],
		},
		{
			name: "no prompt and no editor context left: right after the system head",
			conversation: blockThenUpdate,
			prune: (r) => r.filter((m) => m.kind === "system"),
			shape: "system ide-context",
			texts: [WHOLE_AT_50],
		},
		{
			name: "no system head either: first",
			conversation: blockThenUpdate,
			prune: () => [],
			shape: "ide-context",
			texts: [WHOLE_AT_50],
		},
		{
			name: "another extension rewrote the newest message: it no longer counts and is replaced",
			conversation: blockThenUpdate,
			prune: (r) => r.map((m) => (m.kind === "ide-context" ? { ...m, content: "(pruned)" } : m)),
			shape: "system user ide-context user ide-context user",
			texts: [["(pruned)"], WHOLE_AT_50],
		},
	];
	for (const { name, conversation, prune, shape, texts } of cases) {
		it(name, () => {
			const c = conversation();
			const request = repaired(prune(c.request), c.messages);
			assert.equal(kinds(request), shape);
			assert.deepEqual(
				ideTexts(request).map((t) => t.split("\n")),
				texts,
			);
		});
	}

	it("a request with an editor context the session does not know is newer: left alone", () => {
		const c = blockThenUpdate();
		assert.equal(repairRequest(c.request, c.messages.slice(0, 1)), undefined);
	});

	it("messages of older versions, or no editor context in the session: left alone", () => {
		const request: RequestMessage[] = [{ kind: "user", details: undefined, content: "hi" }];
		assert.equal(repairRequest(request, [{ details: { pid: 1 }, content: "x" }]), undefined);
		assert.equal(repairRequest(request, []), undefined);
	});

	it("an update carrying a new selection keeps that selection's text", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50, selection("const fresh = 1;", NOW + 4, 50)));
		const [text = ""] = ideTexts(repaired(without(c.request, "m1"), c.messages));
		assert.match(text, /^File: /m);
		assert.match(text, /^const fresh = 1;$/m);
	});

	it("reads content given as text parts too", () => {
		const c = blockThenUpdate();
		const asParts = (m: RequestMessage) => ({ ...m, content: [{ type: "text", text: String(m.content) }] });
		const request = without(c.request, "m1").map((m) => (m.kind === "ide-context" ? asParts(m) : m));
		const session = c.messages.map((m) => ({ ...m, content: [{ type: "text", text: String(m.content) }] }));
		assert.match(ideTexts(repaired(request, session)).join(""), /^Cursor: line 50, column 2$/m);
	});

	/**
	 * The selection of the newest message is one the model has as a reference: m1 carries its text, m2 is
	 * another file, m3 is back on the first file with the selection referred to.
	 */
	const referencedSelection = () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ file: "/p/b.ts", name: "b.ts" }), NOW + 1));
		c.send(blockOf(state({ selection: selection() }), NOW + 2));
		return c;
	};
	const selectionCases: Array<{
		name: string;
		conversation: () => Conversation;
		request: (c: Conversation) => RequestMessage[];
		session: (c: Conversation) => ReadMessage[];
		/** The Selection lines of the repaired newest state. */
		selection: RegExp;
		/** Copies of the selection text in the repaired request. */
		copies: number;
	}> = [
		{
			name: "the request still holds the text in another message: the reference stays",
			conversation: referencedSelection,
			request: (c) => without(c.request, "m3"),
			session: (c) => c.messages,
			selection: /^Selection \(lines 40-42, made 2 s ago\): the same selection as in an earlier editor context/m,
			copies: 1,
		},
		{
			name: "the request lost the text, the session has it: the text is put back",
			conversation: referencedSelection,
			request: (c) => without(c.request, "m1", "m3"),
			session: (c) => c.messages,
			selection: /^Selection \(lines 40-42, made 0 s ago\):\n```typescript\nexport function main/m,
			copies: 1,
		},
		{
			name: "neither the request nor the session has the text: said to be gone",
			conversation: referencedSelection,
			request: (c) => without(c.request, "m1", "m3"),
			session: (c) => c.messages.slice(1),
			// The range stays: the model still learns where the selection is, only not its text.
			selection:
				/^Selection \(lines 40-42, made \d+ s ago\): made earlier in this conversation; its text is no longer in the model's context/m,
			copies: 0,
		},
		{
			name: "an update on a pruned block, the selection sent with that block: the text is put back",
			conversation: () => {
				const c = new Conversation();
				c.send(blockOf(state({ selection: selection() }), NOW));
				c.send(moved(50, selection()));
				return c;
			},
			request: (c) => without(c.request, "m1"),
			session: (c) => c.messages,
			selection: /^Selection \(lines 40-42, made 0 s ago\):\n```typescript\nexport function main/m,
			copies: 1,
		},
	];
	it("a reference stays only where the request keeps the text: not when its holder is superseded", () => {
		// m1 a block, m2 an update carrying a new selection, m3 a cursor update on m2; a pruner dropped m1, so m2
		// no longer resolves (superseded) and takes the selection's text with it: m3 puts the text back.
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50, selection(SELECTED, NOW + 4)));
		c.send(moved(51, selection(SELECTED, NOW + 4)));
		const texts = ideTexts(checked(without(c.request, "m1"), c.messages));
		assert.equal(texts[0], SUPERSEDED);
		const newest = texts.at(-1) ?? "";
		assert.match(newest, /^Cursor: line 51, column 2$/m);
		assert.doesNotMatch(newest, /the same selection as in an earlier editor context/);
		assert.equal(texts.join("\n").split("return run(argv);").length - 1, 1, texts.join("\n---\n"));
	});

	for (const { name, conversation, request, session, selection: expected, copies } of selectionCases) {
		it(name, () => {
			const c = conversation();
			const texts = ideTexts(repaired(request(c), session(c)));
			const newest = texts.at(-1) ?? "";
			assert.match(newest, expected);
			assert.match(newest, /^File: \/home\/u\/proj\/src\/main.ts$/m, "the newest state: back on main.ts");
			assert.equal(texts.join("\n").split("return run(argv);").length - 1, copies, texts.join("\n---\n"));
		});
	}
});

describe("withRunContext: the run's own block, when a compaction in the middle of the run summarised it", () => {
	const c = new Conversation();
	c.send(blockOf(state(), NOW));
	c.send(blockOf(state({ cursor: { line: 50, column: 2 } }), NOW + 5));
	const [m1, m2] = c.messages as [ReadMessage, ReadMessage];
	const cases: Array<{ name: string; projected: ReadMessage[]; run: ReadMessage | undefined; after: ReadMessage[] }> = [
		{ name: "the projection has it: unchanged", projected: [m1, m2], run: m2, after: [m1, m2] },
		{ name: "the projection lost it: added last", projected: [], run: m2, after: [m2] },
		{ name: "the run brought none: unchanged", projected: [m1], run: undefined, after: [m1] },
		{
			name: "not one of ours (no record): unchanged",
			projected: [m1],
			run: { details: {}, content: "x" },
			after: [m1],
		},
	];
	for (const { name, projected, run, after } of cases) {
		it(name, () => assert.deepEqual(withRunContext(projected, run), after));
	}

	it("the run's block added back is repaired into the request, self-contained", () => {
		const request: RequestMessage[] = [{ kind: "system", details: undefined, content: "" }];
		const [text = ""] = ideTexts(repaired(request, withRunContext([], m2)));
		assert.match(text, /^File: /m);
		assert.match(text, /^Cursor: line 50, column 2$/m);
	});
});

describe("diagnostics between prompts, in the format the controller injects", () => {
	const error = (line: number, message: string): DiagnosticItem => ({
		severity: "error",
		line,
		column: 3,
		message,
		source: "typescript",
		code: "2304",
	});
	/** A v0.3 editor at buffer version `version` whose diagnostics are current for it. */
	const checked = (version: number, items: DiagnosticItem[]) =>
		state({ version, diagnostics: { version, total: items.length, items } }, { protocol: "0.3" });

	it("a new diagnostic is an update with the new Diagnostics lines; none left is said so", () => {
		const c = new Conversation();
		const first = c.send(promptBlockOf(checked(3, [error(12, "Cannot find name 'x'.")]), NOW));
		assert.match(first.text, /^- error 12:3 Cannot find name 'x'\. \[typescript 2304\]$/m, "the real format");
		assert.equal(c.send(promptBlockOf(checked(3, [error(12, "Cannot find name 'x'.")]), NOW + 5)).kind, "none");
		const added = c.send(
			promptBlockOf(checked(4, [error(12, "Cannot find name 'x'."), error(30, "Cannot find name 'y'.")]), NOW + 10),
		);
		assert.equal(added.kind, "update");
		assert.deepEqual(added.text.split("\n").slice(1), [
			"Diagnostics (2 errors):",
			"- error 30:3 Cannot find name 'y'. [typescript 2304]",
			"- error 12:3 Cannot find name 'x'. [typescript 2304]",
		]);
		const fixed = c.send(promptBlockOf(checked(5, []), NOW + 15));
		assert.deepEqual(fixed.text.split("\n").slice(1), ["Diagnostics: none"]);
	});

	it("diagnostics for an older version than the buffer's are news too (they are no longer listed)", () => {
		const c = new Conversation();
		c.send(promptBlockOf(checked(3, [error(12, "Cannot find name 'x'.")]), NOW));
		const stale = state(
			{ version: 4, diagnostics: { version: 3, total: 1, items: [error(12, "Cannot find name 'x'.")] } },
			{ protocol: "0.3" },
		);
		const d = c.send(promptBlockOf(stale, NOW + 5));
		assert.equal(d.kind, "update");
		assert.match(d.text, /^Diagnostics: 1 reported for an earlier version of the buffer \(3, now 4\)/m);
	});
});

describe("decideStale: silence is not 'unchanged'", () => {
	const reasons: StaleReason[] = ["ignored", "no-file", "off", "gone", "choose", "unreadable"];
	/** A conversation with one block, then prompts pi cannot describe the editor for. */
	const stale = (c: Conversation, reason: StaleReason) => {
		const d = decideStale(reason, modelView(c.messages), { id: `s${c.messages.length + 1}` });
		c.request.push({ kind: "user", details: undefined, content: `prompt s${c.messages.length + 1}` });
		if (d.kind !== "none") {
			c.messages.push({ details: d.details, content: d.text });
			c.request.push({ kind: "ide-context", details: d.details, content: d.text });
		}
		return d;
	};
	for (const reason of reasons) {
		it(`${reason}: told once, in general terms; nothing more while the reason stays`, () => {
			const c = new Conversation();
			c.send(blockOf(state({ selection: selection() }), NOW));
			const first = stale(c, reason);
			assert.equal(first.kind, "stale");
			assert.match(first.text, /^Editor context out of date: /);
			assert.ok(first.text.includes(STALE_WORDING[reason]));
			assert.doesNotMatch(first.text, /main\.ts|\/home\/u/, "never names the file");
			assert.equal(stale(c, reason).kind, "none");
			assert.equal(stale(c, reason).kind, "none");
		});
	}

	it("told again when the reason changes; back on a file: the whole block, not an update", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		assert.equal(stale(c, "ignored").kind, "stale");
		assert.equal(stale(c, "off").kind, "stale");
		assert.equal(stale(c, "off").kind, "none");
		const back = c.send(blockOf(state(), NOW + 5));
		assert.equal(back.kind, "full");
		assert.match(back.why, /marked out of date/);
		assert.equal(c.send(blockOf(state(), NOW + 10)).kind, "none");
	});

	it("nothing when the model has no editor context to be misled by", () => {
		assert.equal(decideStale("gone", modelView([]), { id: "s1" }).kind, "none");
	});

	it("a notice the request lost (a pruner) is put back into the request, as it was", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		const notice = stale(c, "gone");
		const request = [...c.request, { kind: "user" as const, details: undefined, content: "next" }];
		const texts = ideTexts(repaired(without(request, "s2"), c.messages));
		assert.equal(texts.length, 1, "the notice replaces the block it marks out of date");
		assert.equal(texts.at(-1), notice.text);
		assert.equal(repairRequest(request, c.messages), undefined, "the intact request is left alone");
	});
});

describe("repairRequest: what it puts in stands on its own", () => {
	it("a repaired request needs no second repair (its block carries a record of its own)", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ selection: selection(), cursor: { line: 50, column: 2 } }), NOW + 5));
		const once = repaired(without(c.request, "m1"), c.messages);
		assert.notDeepEqual(once, without(c.request, "m1"), "the pruned request was repaired");
		assert.equal(repairRequest(once, c.messages), undefined);
	});

	it("a selection's text compacted out of the projection is put back from the branch", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ selection: selection(), cursor: { line: 50, column: 2 } }), NOW + 5));
		const [m1, m2] = c.messages as [ReadMessage, ReadMessage];
		// After a compaction: the projection lost both; the run's own (newest) message came back by withRunContext.
		const request: RequestMessage[] = [
			{ kind: "system", details: undefined, content: "" },
			{ kind: "user", details: undefined, content: "go on" },
		];
		const withoutBranch = ideTexts(repaired(request, [m2])).join("\n");
		assert.match(withoutBranch, /no longer in the model's context/, "the projection alone cannot put it back");
		const repair = repairRequest(request, [m2], [m1, m2]);
		assert.ok(repair);
		assert.equal(repair.text.split("return run(argv);").length - 1, 1, repair.text);
		assert.match(repair.text, /^Cursor: line 50, column 2$/m);
	});
});

describe("repairPayload: the check once more, on the provider's payload", () => {
	const c = new Conversation();
	c.send(blockOf(state(), NOW));
	c.send(blockOf(state({ cursor: { line: 50, column: 2 } }), NOW + 5));
	const [full, update] = c.messages.map((m) => String(m.content)) as [string, string];
	const facts = { session: c.messages, branch: c.messages, prompt: "two", repaired: [] };
	const parts = (text: string) => [{ type: "text", text }];
	const cases: Array<{ name: string; messages: object[]; after: object[] | undefined }> = [
		{
			name: "intact: untouched",
			messages: [
				{ role: "system", content: "sys" },
				{ role: "user", content: parts("one") },
				{ role: "user", content: parts(full) },
				{ role: "user", content: parts("two") },
				{ role: "user", content: parts(update) },
			],
			after: undefined,
		},
		{
			name: "a later pruner left the update alone: it becomes the whole state",
			messages: [
				{ role: "system", content: "sys" },
				{ role: "user", content: parts("two") },
				{ role: "user", content: parts(update) },
			],
			after: [
				{ role: "system", content: "sys" },
				{ role: "user", content: parts("two") },
				{ role: "user", content: parts("WHOLE") },
			],
		},
		{
			// Not a part glued before the prompt's in its message (the model read "...Diagnostics: nonetwo").
			name: "no editor context left, the prompt in text parts: a message of its own before the prompt's",
			messages: [
				{ role: "system", content: "sys" },
				{ role: "user", content: [...parts("two"), { type: "image_url", image_url: { url: "x" } }] },
			],
			after: [
				{ role: "system", content: "sys" },
				{ role: "user", content: parts("WHOLE") },
				{ role: "user", content: [...parts("two"), { type: "image_url", image_url: { url: "x" } }] },
			],
		},
		{
			name: "the prompt's part among others, with a cache marker: the copy has only its own part, no marker",
			messages: [
				{ role: "user", content: [...parts("look:"), { type: "text", text: "two", cache_control: { type: "e" } }] },
			],
			after: [
				{ role: "user", content: parts("WHOLE") },
				{ role: "user", content: [...parts("look:"), { type: "text", text: "two", cache_control: { type: "e" } }] },
			],
		},
		{
			name: "no editor context left, the prompt one string: a copy of the prompt's message before it",
			messages: [
				{ role: "system", content: "sys" },
				{ role: "user", content: "two" },
			],
			after: [
				{ role: "system", content: "sys" },
				{ role: "user", content: "WHOLE" },
				{ role: "user", content: "two" },
			],
		},
		{
			name: "neither the prompt nor any editor context left: nothing safe to change",
			messages: [
				{ role: "system", content: "sys" },
				{ role: "assistant", content: "thinking" },
			],
			after: undefined,
		},
	];
	for (const { name, messages, after } of cases) {
		it(name, () => {
			const out = repairPayload({ model: "m", messages, tools: [{ name: "read" }] }, facts) as
				| { messages: object[] }
				| undefined;
			if (after === undefined) return assert.equal(out, undefined);
			assert.ok(out);
			const whole = JSON.stringify(out.messages).match(/"(The user's editor[^"]*)"/)?.[1] ?? "";
			assert.match(JSON.parse(`"${whole}"`), /^Cursor: line 50, column 2$/m);
			assert.deepEqual(JSON.parse(JSON.stringify(out.messages).replace(`"${whole}"`, '"WHOLE"')), after);
		});
	}
	it("what the request check put in is trusted when the payload still has it", () => {
		const repair = repairRequest(
			[
				{ kind: "system", details: undefined, content: "" },
				{ kind: "user", details: undefined, content: "two" },
			],
			c.messages,
		);
		assert.ok(repair);
		const payload = {
			messages: [
				{ role: "user", content: repair.text },
				{ role: "user", content: "two" },
			],
		};
		const withRepair = { ...facts, repaired: [{ details: repair.details, content: repair.text }] };
		assert.equal(repairPayload(payload, withRepair), undefined);
	});
});

describe("the line pi shows for what it sent", () => {
	const sent = (d: Decision) => (d.details as MemoryDetails).sent;
	it("a full block, an update, diagnostics and a notice each leave one line", () => {
		const c = new Conversation();
		const first = c.send(blockOf(state(), NOW, ["Diagnostics (2 errors):", "- error 3:1 x"]));
		assert.equal(sent(first), "editor context: main.ts · Cursor: line 42, column 10 · Diagnostics (2 errors)");
		const moved = c.send(blockOf(state({ cursor: { line: 50, column: 2 } }), NOW + 5, ["Diagnostics: none"]));
		assert.equal(sent(moved), "editor update: Cursor: line 50, column 2 · Diagnostics: none");
		const notice = decideStale("ignored", modelView(c.messages), { id: "s" });
		assert.match(sent(notice) ?? "", /^editor context marked out of date: the file now active/);
	});
});

describe("supersededIn: older references that no longer resolve within the request", () => {
	const c = new Conversation();
	c.send(blockOf(state({ selection: selection() }), NOW)); // m1: block + selection text
	c.send(blockOf(state({ selection: selection(), cursor: { line: 50, column: 2 } }), NOW + 5)); // m2: update
	c.send(blockOf(state({ selection: selection(), cursor: { line: 60, column: 2 } }), NOW + 10)); // m3: update
	c.send(blockOf(state({ selection: selection(), cursor: { line: 70, column: 2 } }), NOW + 15)); // m4: update
	const idsOf = (request: RequestMessage[], indices: number[]) =>
		indices.map((i) => (request[i]?.details as MemoryDetails | undefined)?.memory?.id);
	const cases: Array<{ name: string; request: () => RequestMessage[]; superseded: string[] }> = [
		{ name: "intact: none", request: () => c.request, superseded: [] },
		{
			name: "the block pruned: every older update on it",
			request: () => without(c.request, "m1"),
			superseded: ["m2", "m3"],
		},
		{ name: "a middle update pruned: the ones after it", request: () => without(c.request, "m2"), superseded: ["m3"] },
		{ name: "only the newest pruned: none (repairRequest's)", request: () => without(c.request, "m4"), superseded: [] },
	];
	for (const { name, request, superseded } of cases) {
		it(name, () => {
			const r = request();
			assert.deepEqual(idsOf(r, supersededIn(r, c.messages)), superseded);
		});
	}

	it("a long intact conversation: none, though the messages read start in the middle of a chain", () => {
		const long = new Conversation();
		for (let i = 0; i < 100; i++) long.send(blockOf(state({ cursor: { line: 1 + (i % 150), column: 1 } }), NOW + i));
		assert.ok(long.messages.length > 64, "more editor contexts than the check reads");
		assert.deepEqual(supersededIn(long.request, long.messages), []);
		assert.equal(repairRequest(long.request, long.messages), undefined);
	});
});

describe("repairMessages: the request check on pi's own message list", () => {
	const c = new Conversation();
	c.send(blockOf(state({ selection: selection() }), NOW)); // m1: block + selection text
	c.send(blockOf(state({ selection: selection(), cursor: { line: 50, column: 2 } }), NOW + 5)); // m2: update
	c.send(blockOf(state({ selection: selection(), cursor: { line: 60, column: 2 } }), NOW + 10)); // m3: update
	/** pi's shape of a request message: a role, and for ours a custom type, content and details. */
	type PiMessage = { role: string; customType?: string; content: unknown; details?: unknown; made?: true };
	const toPi = (m: RequestMessage): PiMessage =>
		m.kind === "ide-context"
			? { role: "custom", customType: "ide-context", content: m.content, details: m.details }
			: { role: m.kind, content: m.content };
	const read = (m: PiMessage): RequestMessage =>
		m.role === "custom"
			? { kind: "ide-context", details: m.details, content: m.content }
			: { kind: m.role as RequestMessage["kind"], details: undefined, content: m.content };
	const newBlock = (content: string, details: unknown): PiMessage => ({ role: "custom", content, details, made: true });
	const cases: Array<{ name: string; request: () => RequestMessage[]; changed: boolean }> = [
		{ name: "intact: left alone", request: () => c.request, changed: false },
		{ name: "the newest pruned: the last one left replaced", request: () => without(c.request, "m3"), changed: true },
		{ name: "the block pruned: older updates superseded", request: () => without(c.request, "m1"), changed: true },
		{
			name: "every editor context pruned: a block put before the last prompt",
			request: () => without(c.request, "m1", "m2", "m3"),
			changed: true,
		},
	];
	for (const { name, request, changed } of cases) {
		it(name, () => {
			const r = request();
			const facts = { session: c.messages, branch: c.messages };
			const result = repairMessages(r.map(toPi), read, facts, newBlock);
			assert.equal(result !== undefined, changed);
			const after = result ? result.messages : r.map(toPi);
			// The same request as the RequestMessage check makes of it (an oracle composed of repairRequest and supersededIn).
			const expected = checked(r, c.messages);
			assert.deepEqual(
				after.map((m) => [read(m).kind, read(m).content]),
				expected.map((m) => [m.kind, m.content]),
			);
			// Only custom messages change; a block put in is newBlock's, and the payload check gets it back.
			const users = (list: PiMessage[]) => list.filter((m) => m.role !== "custom");
			assert.deepEqual(users(after), users(r.map(toPi)));
			const made = after.filter((m) => m.made);
			assert.equal(made.length, r.every((m) => m.kind !== "ide-context") ? 1 : 0);
			if (result && result.repaired.length > 0)
				assert.ok(ideTexts(expected).includes(String(result.repaired[0]?.content)));
		});
	}
});

describe("nextMessage: one decision for a prompt, a message typed while pi works and /ide status", () => {
	const c = new Conversation();
	c.send(blockOf(state(), NOW));
	const moved = blockOf(state({ cursor: { line: 50, column: 2 } }), NOW + 5);
	// The projection lost the block (a compaction in the middle of the run); the session still has the run's block.
	const facts = (always: boolean) => ({ projected: [] as ReadMessage[], session: c.messages, always, id: "x" });
	const cases: Array<{
		name: string;
		injection: Parameters<typeof nextMessage>[0];
		always: boolean;
		expected: Decision;
	}> = [
		{
			name: "a block: decided on the projection (what the model sees)",
			injection: { kind: "inject", block: moved },
			always: false,
			expected: decide(moved, modelView([]), { always: false, id: "x" }),
		},
		{
			name: "a block with sendUnchanged: the whole block",
			injection: { kind: "inject", block: moved },
			always: true,
			expected: decide(moved, modelView([]), { always: true, id: "x" }),
		},
		{
			name: "a skip: a notice decided on the session (the run's block is marked out of date)",
			injection: { kind: "skip", stale: "gone" },
			always: false,
			expected: decideStale("gone", modelView(c.messages), { id: "x" }),
		},
	];
	for (const { name, injection, always, expected } of cases) {
		it(name, () => {
			const d = nextMessage(injection, facts(always));
			assert.deepEqual(d, expected);
			assert.notEqual(d.kind, "none");
		});
	}
});

/**
 * The request check against pruners, seeded and randomised: random editor changes (cursor moves, new selections,
 * cleared ones, another file and back), notices, compactions (the session keeps the last 0 to 2 editor contexts
 * and the run's newest message; the branch keeps all), and after every prompt the request as each kind of pruner leaves it (every editor context
 * dropped, the first one dropped, a random few, a window of the last two messages), then that request cut again by
 * a window loaded after this extension and put through the payload check. Each repaired request is read by
 * a small reader of its own (below), not by this module: it must say what the editor shows now, every update and
 * selection reference must resolve within the request, and a selection's text is always there (the branch holds
 * every copy, so "no longer in the model's context" is never right). Some prompts send the new selection from the
 * editor (issue 25), some of them a draft the user edited: a block that refers to "the selection the user sent in
 * their message" must find that selection's text intact in a user message of the same request. PI_IDE_REPAIR_SEED
 * replays one seed, PI_IDE_REPAIR_SEQUENCES runs more.
 */
describe("the request check against pruners: seeded random sequences, read back by an independent reader", () => {
	type Picture =
		| { kind: "none" }
		| { kind: "notice" }
		| { kind: "block"; file: string; cursor: number | null; selection: { range: string; text: string | null } | null };

	/**
	 * A selection's text as the last user message of the request that holds its file's lines in a send's shape (a
	 * head naming the file and lines, the text fenced); null when none does. Read here with a pattern of its own.
	 */
	const userCopy = (users: readonly string[], file: string, range: string): string | null => {
		const name = basename(file).replace(".", "\\.");
		for (const text of [...users].reverse()) {
			const m = new RegExp(
				`^Selection from (?:[^\\n]*/)?${name}, ${range}:\\n(\`{3,})[^\\n]*\\n([\\s\\S]*?)\\n\\1$`,
				"m",
			).exec(text);
			if (m) return m[2] ?? null;
		}
		return null;
	};

	/**
	 * Read the editor context texts of a request as the model would (`users`: the request's user messages, where a
	 * sent selection is); every reference that does not resolve is a problem.
	 */
	const read = (texts: readonly string[], users: readonly string[]): { picture: Picture; problems: string[] } => {
		const problems: string[] = [];
		const copies = new Map<string, string>();
		let picture: Picture = { kind: "none" };
		for (const text of texts) {
			if (text.startsWith("Editor context out of date: ")) picture = { kind: "notice" };
			else if (text.startsWith("The user's editor (")) {
				picture = { kind: "block", file: /^File: (.*)$/m.exec(text)?.[1] ?? "", cursor: null, selection: null };
			} else if (text.startsWith("Editor update (")) {
				if (picture.kind !== "block") problems.push(`an update with nothing before it: ${text}`);
			} else continue;
			if (picture.kind !== "block") continue;
			const cursor = /^Cursor: line (\d+)/m.exec(text);
			if (cursor) picture.cursor = Number(cursor[1]);
			if (/^Selection: none now$/m.test(text)) picture.selection = null;
			const head = /^Selection \((lines \d+-\d+)[^)]*\):(.*)$/m.exec(text);
			if (!head) continue;
			const [, range = "", rest = ""] = head;
			if (rest === "") {
				const fenced = /^Selection \([^)]*\):\n(`{3,})[^\n]*\n([\s\S]*?)\n\1$/m.exec(text);
				picture.selection = { range, text: fenced?.[2] ?? null };
				if (fenced?.[2]) copies.set(range, fenced[2]);
			} else if (rest.includes("the same selection as in an earlier editor context")) {
				const copy = copies.get(range);
				if (copy === undefined) problems.push(`a reference with no copy before it in the request: ${head[0]}`);
				picture.selection = { range, text: copy ?? null };
			} else if (rest.includes("the selection the user sent in their message")) {
				const copy = userCopy(users, picture.file, range);
				if (copy === null) problems.push(`a reference to a user message the request does not have: ${head[0]}`);
				picture.selection = { range, text: copy };
			} else picture.selection = { range, text: null };
		}
		return { picture, problems };
	};

	const pruners: Record<string, (request: RequestMessage[], random: () => number) => RequestMessage[]> = {
		"every editor context dropped": (r) => r.filter((m) => m.kind !== "ide-context"),
		"the first editor context dropped": (r) => {
			const ours = r.filter((m) => m.kind === "ide-context");
			return ours.length < 2 ? r : r.filter((m) => m !== ours[0]);
		},
		"a random few dropped": (r, random) => r.filter((m) => m.kind !== "ide-context" || random() < 0.6),
		"a window of the last two messages": (r) => [...r.filter((m) => m.kind === "system"), ...r.slice(1).slice(-2)],
	};

	/** The last two messages after the system head, as a window extension loaded after this one leaves a request. */
	const windowAfter = (request: RequestMessage[]) => [
		...request.filter((m) => m.kind === "system"),
		...request.filter((m) => m.kind !== "system").slice(-2),
	];
	/** The request as a provider payload (text parts), after the payload check: its user texts, in order. */
	const payloadTexts = (
		request: RequestMessage[],
		session: readonly ReadMessage[],
		branch: readonly ReadMessage[],
		prompt: string | undefined,
	): string[] => {
		const known = new Set(session.map((m) => m.content));
		const repairedNow = request.filter((m) => m.kind === "ide-context" && !known.has(m.content));
		const messages = request.map((m) =>
			m.kind === "system"
				? { role: "system", content: String(m.content) }
				: { role: "user", content: [{ type: "text", text: String(m.content) }] },
		);
		const facts = { session, branch, prompt, repaired: repairedNow };
		const out = (repairPayload({ messages }, facts) ?? { messages }) as { messages: typeof messages };
		return out.messages
			.filter((m) => m.role === "user")
			.map((m) => (Array.isArray(m.content) ? m.content.map((part) => part.text).join("") : m.content));
	};

	const SEEDS = process.env["PI_IDE_REPAIR_SEED"]
		? [Number(process.env["PI_IDE_REPAIR_SEED"])]
		: Array.from({ length: Number(process.env["PI_IDE_REPAIR_SEQUENCES"] ?? 40) }, (_, i) => 9001 + i);
	for (const seed of SEEDS) {
		it(`seed ${seed}`, () => {
			const random = mulberry32(seed);
			const c = new Conversation();
			const branch: ReadMessage[] = [];
			let cursor = 42;
			let file = FILE;
			let picked: { text: string; start: number; at: number } | null = null;
			let expected: Picture = { kind: "none" };
			const log: string[] = [];
			for (let step = 1; step <= 24; step++) {
				const now = NOW + step;
				const r = random();
				const before = c.messages.length;
				if (r < 0.1 && expected.kind !== "none") {
					log.push("notice");
					const d = decideStale("off", modelView(c.messages), { id: `s${step}` });
					c.request.push({ kind: "user", details: undefined, content: `prompt s${step}` });
					if (d.kind !== "none") {
						c.messages.push({ details: d.details, content: d.text });
						c.request.push({ kind: "ide-context", details: d.details, content: d.text });
					}
					expected = { kind: "notice" };
				} else if (r < 0.18 && c.messages.length > 0) {
					// A compaction summarised the conversation but its last 0 to 2 editor contexts (and their prompts);
					// the session still has the run's newest message.
					const kept = c.messages.slice(c.messages.length - Math.floor(random() * 3));
					log.push(`compaction keeping ${kept.length}`);
					const at = c.request.findIndex((m) => kept[0] !== undefined && m.details === kept[0].details);
					const from = at > 0 ? at - 1 : c.request.length;
					c.messages = withRunContext(kept, c.messages.at(-1));
					c.request = [{ kind: "system", details: undefined, content: "system prompt" }, ...c.request.slice(from)];
					continue;
				} else {
					if (r < 0.45) cursor = 1 + Math.floor(random() * 150);
					else if (r < 0.65) {
						const start = 1 + Math.floor(random() * 100);
						picked = { text: `const s${start} = ${Math.floor(random() * 1e6)};\nreturn s${start};`, start, at: now };
					} else if (r < 0.75) picked = null;
					else if (r < 0.85) file = file === FILE ? "/home/u/proj/src/b.ts" : FILE;
					log.push(`cursor ${cursor}, ${file === FILE ? "main" : "b"}, selection ${picked ? picked.start : "none"}`);
					const sel = picked && selection(picked.text, picked.at, picked.start);
					// The prompt sends the selection from the editor (issue 25), at times a draft the user edited.
					const sending = sel !== null && random() < 0.35;
					const edited = sending && random() < 0.3;
					if (sending) log.push(edited ? "sent, the draft edited" : "sent");
					const words = sel && sending ? sentMessage(sel, `prompt ${step}`, file) : undefined;
					c.send(
						blockOf(state({ file, name: basename(file), cursor: { line: cursor, column: 1 }, selection: sel }), now),
						edited ? words?.replace(";\nreturn", ";\n  return") : words,
					);
					expected = {
						kind: "block",
						file,
						cursor,
						selection: picked && { range: `lines ${picked.start}-${picked.start + 1}`, text: picked.text },
					};
				}
				branch.push(...c.messages.slice(before));
				const prompt = [...c.request].reverse().find((m) => m.kind === "user")?.content as string | undefined;
				const verify = (texts: string[], users: string[], what: string) => {
					const { picture, problems } = read(texts, users);
					for (const text of texts)
						if (/.(The user's editor \(|Editor update \(|Editor context out of date: )/s.test(text))
							problems.push(`an editor context glued to other text: ${JSON.stringify(text)}`);
					if (expected.kind === "block" && picture.kind === "block") {
						if (picture.file !== expected.file)
							problems.push(`file ${picture.file}, the editor shows ${expected.file}`);
						if (picture.cursor !== expected.cursor)
							problems.push(`cursor ${picture.cursor}, the editor has ${expected.cursor}`);
						if (JSON.stringify(picture.selection) !== JSON.stringify(expected.selection))
							problems.push(
								`selection ${JSON.stringify(picture.selection)}, the editor has ${JSON.stringify(expected.selection)}`,
							);
					} else if (picture.kind !== expected.kind)
						problems.push(`the request says ${picture.kind}, expected ${expected.kind}`);
					assert.deepEqual(
						problems,
						[],
						`seed ${seed}, ${what}, after: ${log.join("; ")}\n---\n${texts.join("\n---\n")}`,
					);
				};
				for (const [name, prune] of Object.entries(pruners)) {
					const checkedRequest = checkedWith(prune(c.request, random), c.messages, branch);
					const users = checkedRequest.filter((m) => m.kind === "user").map((m) => String(m.content));
					verify(ideTexts(checkedRequest), users, name);
					// A context_with_system window loaded later cuts it to its last two messages: the payload check.
					const payload = payloadTexts(windowAfter(checkedRequest), c.messages, branch, prompt);
					verify(payload, payload, `${name}, then a window after the request check`);
				}
			}
		});
	}
});
