import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ContextBlock, formatContextBlock } from "../../src/blocks.ts";
import {
	type Decision,
	decide,
	type MemoryDetails,
	modelView,
	parseBlock,
	type ReadMessage,
	selfContainedText,
	type VisibleMessage,
} from "../../src/context-memory.ts";
import type { EditorState, Selection } from "../../src/protocol.ts";
import { specDatabaseView } from "../fixtures/database-view.ts";
import { makeState } from "../helpers/state-files.ts";

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
	return extraLines.length > 0 ? { ...block, text: [block.text, ...extraLines].join("\n") } : block;
}

/**
 * A conversation as the model sees it: the details of every ide-context message sent so far, in order. `view`
 * can be narrowed to simulate compaction, /tree or /fork removing messages from the model's view.
 */
class Conversation {
	messages: ReadMessage[] = [];
	#ids = 0;
	always = false;

	send(block: ContextBlock): Decision {
		this.#ids += 1;
		const decision = decide(block, modelView(this.messages), { always: this.always, id: `m${this.#ids}` });
		if (decision.kind !== "none") this.messages.push({ details: decision.details, content: decision.text });
		return decision;
	}
}

const selectionTextSent = (d: Decision) => d.text.includes("return run(argv);");

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
		assert.deepEqual(cleared.text.split("\n").slice(1), ["Diagnostics: none now"]);
	});

	it("ages elsewhere in the block ('updated 3 s ago') are not news", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW, ["Diagnostics (updated 3 s ago): none"]));
		assert.equal(c.send(blockOf(state(), NOW + 60, ["Diagnostics (updated 2 min ago): none"])).kind, "none");
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
		const tiny = (a: number): ContextBlock => ({
			text: `Editor:\nFile: /a\nA: ${a}\nB: ${a}`,
			details: { pid: 1, editor: "Neovim", file: "/a", language: null },
		});
		c.send(tiny(1));
		const d = c.send(tiny(2));
		assert.equal(d.kind, "full");
		assert.equal(d.text, tiny(2).text);
		assert.match(d.why, /most of it changed/);
	});
});

describe("modelView: what the model has, from the messages it sees", () => {
	const full = (id: string, extra: Partial<NonNullable<MemoryDetails["memory"]>> = {}) => ({
		details: {
			pid: 1,
			editor: "Neovim",
			file: FILE,
			language: "typescript",
			memory: {
				v: 1,
				id,
				kind: "full",
				prev: null,
				state: { header: "h", sections: [["File", "File: x"]] },
				selection: null,
				selectionSent: false,
				...extra,
			},
		},
	});
	const cases: Array<[string, VisibleMessage[], string | null, RegExp | null]> = [
		["no messages", [], null, /no editor context/],
		["one full block", [full("a")], "a", null],
		["an update on a visible block", [full("a"), full("b", { kind: "update", prev: "a" })], "b", null],
		["an update on a missing block", [full("b", { kind: "update", prev: "a" })], null, /no longer in the model's view/],
		[
			"an update on another block than the one before it",
			[full("a"), full("c"), full("b", { kind: "update", prev: "a" })],
			null,
			/no longer/,
		],
		[
			"a block from an older version (no memory)",
			[full("a"), { details: { pid: 1, editor: "Neovim" } }],
			null,
			/predates/,
		],
		["garbage details", [{ details: "x" }], null, /predates/],
		["a newer memory version", [full("a", { v: 2 } as never)], null, /predates/],
		["details without details", [{ details: undefined }], null, /predates/],
		["a malformed state", [full("a", { state: { header: 1 } } as never)], null, /predates/],
	];
	for (const [name, messages, latest, why] of cases) {
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
		assert.equal(parsed.header, "Header line:");
		assert.deepEqual(
			parsed.sections.map((s) => [s.key, s.lines.length]),
			[
				["File", 1],
				["Selection", 5],
				["Foreign key", 1],
				["Foreign key#2", 2],
			],
		);
	});
});

describe("selfContainedText: the last editor context, when the request lost what it builds on", () => {
	const moved = (line: number, sel: Selection | null = null) =>
		blockOf(state({ cursor: { line, column: 2 }, selection: sel }), NOW + 5);

	it("leaves an intact conversation alone, message by message", () => {
		const c = new Conversation();
		for (const block of [blockOf(state({ selection: selection() }), NOW), moved(50, selection()), moved(51)]) {
			c.send(block);
			assert.equal(selfContainedText(c.messages), undefined);
		}
	});

	it("an update whose block was pruned becomes the whole state, with its own current lines", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50));
		const text = selfContainedText(c.messages.slice(1));
		assert.deepEqual(text?.split("\n"), [
			"The user's editor (Neovim) shows this file:",
			`File: ${FILE}`,
			"Language: typescript",
			"Cursor: line 50, column 2",
			"Buffer: 200 lines, saved",
		]);
	});

	it("a selection whose text was pruned is said to be gone, not silently dropped", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(moved(50, selection()));
		const text = selfContainedText(c.messages.slice(1)) ?? "";
		assert.match(text, /^Selection: made earlier in this conversation; its text is no longer in the model's context/m);
		assert.match(text, /^Cursor: line 50, column 2$/m);
	});

	it("an update carrying a new selection keeps that selection's text", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50, selection("const fresh = 1;", NOW + 4, 50)));
		const text = selfContainedText(c.messages.slice(1)) ?? "";
		assert.match(text, /^File: /m);
		assert.match(text, /^const fresh = 1;$/m);
	});

	it("a full block referring to a selection whose text was pruned", () => {
		const c = new Conversation();
		c.send(blockOf(state({ selection: selection() }), NOW));
		c.send(blockOf(state({ file: "/p/b.ts", name: "b.ts" }), NOW + 1));
		c.send(blockOf(state({ selection: selection() }), NOW + 2));
		assert.equal(selfContainedText(c.messages), undefined, "the text is still in view");
		const text = selfContainedText(c.messages.slice(2)) ?? "";
		assert.match(text, /^Selection: made earlier/m);
		assert.match(text, /^File: /m);
	});

	it("messages of older versions, or not ours, are left alone", () => {
		assert.equal(selfContainedText([{ details: { pid: 1 }, content: "x" }]), undefined);
		assert.equal(selfContainedText([]), undefined);
	});

	it("reads content given as text parts too", () => {
		const c = new Conversation();
		c.send(blockOf(state(), NOW));
		c.send(moved(50));
		const [update] = c.messages.slice(1);
		const parts = [{ details: update?.details, content: [{ type: "text", text: String(update?.content) }] }];
		assert.match(selfContainedText(parts) ?? "", /^Cursor: line 50, column 2$/m);
	});
});
