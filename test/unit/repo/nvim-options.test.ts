/**
 * scripts/nvim-options.ts, the generator of the Neovim client's Options docs: word wrap, the splice between
 * markers (and its refusal when a marker is missing), and the rendered vimdoc staying within 78 columns with
 * one tag per option. The check against config.lua itself runs in `npm run check`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type OptionDoc, renderHelp, renderReadme, splice, wrap } from "../../../scripts/nvim-options.ts";

const OPTIONS: OptionDoc[] = [
	{ name: "enabled", default: true, summary: "start", doc: "Start writing. ".repeat(20) },
	{ name: "debounce_ms", default: 200, summary: "coalesce", doc: "Coalesce `events` here." },
];

describe("nvim-options", () => {
	const wraps: { text: string; width: number; indent?: string; expect: string[] }[] = [
		{ text: "a b c", width: 80, expect: ["a b c"] },
		{ text: "aaa bbb ccc", width: 7, expect: ["aaa bbb", "ccc"] },
		{ text: "  spaced   out  ", width: 80, expect: ["spaced out"] },
		{ text: "aaa bbb", width: 5, indent: "  ", expect: ["  aaa", "  bbb"] },
		{ text: "averyveryverylongword x", width: 5, expect: ["averyveryverylongword", "x"] },
		{ text: "", width: 5, expect: [] },
	];
	for (const w of wraps) {
		it(`wrap ${JSON.stringify(w.text)} at ${w.width}`, () => {
			assert.deepEqual(wrap(w.text, w.width, w.indent), w.expect);
		});
	}

	it("splice replaces the lines between the markers and keeps the markers", () => {
		const text = ["head", "<!-- b -->", "old 1", "old 2", "<!-- e -->", "tail"].join("\n");
		assert.equal(
			splice(text, /^<!-- b -->$/, /^<!-- e -->$/, ["new"], "doc"),
			["head", "<!-- b -->", "new", "<!-- e -->", "tail"].join("\n"),
		);
	});

	it("splice refuses a document without its markers", () => {
		assert.throws(() => splice("no markers", /^b$/, /^e$/, ["x"], "doc.txt"), /doc\.txt: markers/);
		assert.throws(() => splice("b\nno end", /^b$/, /^e$/, ["x"], "doc.txt"), /doc\.txt: markers/);
	});

	it("the vimdoc part fits 78 columns and tags every option", () => {
		const help = renderHelp(OPTIONS);
		for (const line of help) assert.ok(line.length <= 78, `too wide: ${line}`);
		for (const o of OPTIONS) assert.ok(help.includes(`*pi-ide-${o.name}*`.padStart(78)), o.name);
		assert.ok(help.some((l) => l.includes("enabled = true,") && l.includes("-- start")));
	});

	it("the README part has the setup() example and one bullet per option", () => {
		const readme = renderReadme(OPTIONS);
		assert.ok(readme.includes("```lua"));
		assert.ok(readme.some((l) => l.startsWith("  debounce_ms = 200,") && l.endsWith("-- coalesce")));
		assert.deepEqual(
			readme.filter((l) => l.startsWith("- ")).map((l) => l.slice(0, l.indexOf(" (default"))),
			["- `enabled`", "- `debounce_ms`"],
		);
	});
});
