/**
 * The rulebook's two tables stay true (issue 24):
 * - test/conformance/README.md "The rulebook": every kit case its second column names (a code span; one ending in
 *   `…` a prefix, for a table of rows) is a case of test/conformance/cases/, so a renamed or removed case cannot
 *   leave a rule looking held, and every file it names (a code span ending in `.ts`) exists;
 * - PROTOCOL.md "Which client implements what": each feature's cell says "yes" for a client exactly when that
 *   client's kit adapters have the feature's capability (and "-" when none has it).
 * Both load the kit's modules (cases and adapters only declare; nothing starts).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import type { Capability, ClientAdapter } from "../../conformance/client.ts";
import type { KitCase } from "../../conformance/kit.ts";
import { REPO } from "../../helpers/pi-env.ts";

const KIT = join(REPO, "test/conformance");

async function loadAll<T>(dir: string, name: string): Promise<T[]> {
	const files = readdirSync(join(KIT, dir))
		.filter((f) => f.endsWith(".ts"))
		.sort();
	const modules = await Promise.all(
		files.map(async (f) => (await import(pathToFileURL(join(KIT, dir, f)).href)) as Record<string, unknown>),
	);
	return modules.flatMap((m) => m[name] as T[]);
}

const caseNames = (await loadAll<KitCase>("cases", "cases")).map((c) => c.name);
const adapters = await loadAll<ClientAdapter>("adapters", "adapters");

/** The markdown section under `heading` (to the next heading of its level or above). */
function section(text: string, heading: string): string {
	const start = text.indexOf(`\n${heading}\n`);
	assert.ok(start >= 0, `no section "${heading}"`);
	const rest = text.slice(start + heading.length + 2);
	const end = rest.search(/\n#{1,2} /);
	return end < 0 ? rest : rest.slice(0, end);
}

/** A table's body rows as cells (the header and the separator left out). */
const tableRows = (text: string): string[][] =>
	text
		.split("\n")
		.filter((l) => l.startsWith("|"))
		.slice(2)
		.map((l) =>
			l
				.slice(1, -1)
				.split("|")
				.map((c) => c.trim()),
		);

/** The code spans of a markdown text (CommonMark: a run of backticks to the same run; one space each side dropped). */
const codeSpans = (text: string): string[] =>
	[...text.matchAll(/(`+)(.+?)(?<!`)\1(?!`)/g)].map((m) => {
		const body = m[2] ?? "";
		return body.startsWith(" ") && body.endsWith(" ") && body.trim() !== "" ? body.slice(1, -1) : body;
	});

/** The cases a reference names: the one of that name, or, ending in `…`, every one starting so. */
const casesNamed = (ref: string, names: readonly string[]): string[] =>
	ref.endsWith("…") ? names.filter((n) => n.startsWith(ref.slice(0, -1))) : names.filter((n) => n === ref);

describe("the rulebook (test/conformance/README.md) names only kit cases that exist", () => {
	const readme = section(
		readFileSync(join(KIT, "README.md"), "utf8"),
		"## The rulebook: each rule a client must keep, and the cases that hold it",
	);
	const rows = tableRows(readme);

	it("has rules", () => assert.ok(rows.length >= 20, `only ${rows.length} rows`));

	it("every case a rule names is a case of test/conformance/cases/", () => {
		const spans = rows.flatMap(([rule, cell]) => codeSpans(cell ?? "").map((ref) => ({ rule, ref })));
		const files = spans.filter(({ ref }) => ref.endsWith(".ts"));
		const refs = spans.filter(({ ref }) => !ref.endsWith(".ts"));
		const noFile = files.filter(({ ref }) => !ref.includes("{") && !existsSync(join(REPO, ref)));
		assert.deepEqual(noFile, [], "a rule names a file that does not exist");
		assert.ok(refs.length >= rows.length, `only ${refs.length} case names in ${rows.length} rows`);
		const missing = refs
			.filter(({ ref }) => casesNamed(ref, caseNames).length === 0)
			.map(({ rule, ref }) => `${rule}: ${ref}`);
		assert.deepEqual(missing, []);
	});

	it("the reference rule matches names exactly, or by prefix with …", () => {
		const names = ["review / a", "review / ab", "approval: x"];
		const table: [string, string[]][] = [
			["review / a", ["review / a"]],
			["review / …", ["review / a", "review / ab"]],
			["review / b", []],
			["review", []],
			["approval: x…", ["approval: x"]],
		];
		for (const [ref, expected] of table) assert.deepEqual(casesNamed(ref, names), expected, ref);
		const spans: [string, string[]][] = [
			["`a` and `b / c…`", ["a", "b / c…"]],
			["``x `y` z`` then `w`", ["x `y` z", "w"]],
			["`` `y` ``", ["`y`"]],
			["no code", []],
		];
		for (const [text, expected] of spans) assert.deepEqual(codeSpans(text), expected, text);
	});
});

/** Each feature row of PROTOCOL.md's table, by the start of its first cell: the kit capability that is it. */
const FEATURES: [string, Capability | "not a capability"][] = [
	["State file", "selection"],
	["Several project windows", "not a capability"],
	["pi's message", "reload"],
	["Diagnostics", "diagnostics"],
	["Review", "review"],
	["Approval", "approval"],
	["Unsaved buffers", "unsaved-buffers"],
	["pi's identity", "pi-identity"],
	["Send to pi", "send"],
	["pi's change merged into an unsaved buffer", "merge"],
	// One row for both: every client that shows also answers asks (the kit's cases/show-ask.ts).
	["The model shows a place and asks what is open", "show"],
];

/** Each client column, by its heading: its adapters' names start so. */
const CLIENTS: Record<string, string> = {
	Neovim: "nvim",
	"Vim 9": "vim 9",
	Emacs: "emacs",
	"VS Code": "vscode",
	Obsidian: "obsidian",
	JetBrains: "jetbrains",
};

describe("PROTOCOL.md's table of which client implements what agrees with the kit adapters' capabilities", () => {
	const table = section(readFileSync(join(REPO, "PROTOCOL.md"), "utf8"), "## Which client implements what");
	const header = (table.split("\n").find((l) => l.startsWith("|")) ?? "")
		.slice(1, -1)
		.split("|")
		.map((c) => c.trim());
	const clients = header.slice(1);

	it("its columns are the clients with adapters", () => {
		assert.deepEqual(clients, Object.keys(CLIENTS));
		for (const prefix of Object.values(CLIENTS))
			assert.ok(
				adapters.some((a) => a.name.startsWith(prefix)),
				`no adapter named ${prefix}...`,
			);
	});

	it("every row is a known feature, and each cell says yes exactly when the client's adapters have it", () => {
		const wrong: string[] = [];
		for (const [feature, ...cells] of tableRows(table)) {
			const known = FEATURES.find(([start]) => feature?.startsWith(start));
			if (!known) {
				wrong.push(`${feature}: a row this test does not know (add it to FEATURES with its capability)`);
				continue;
			}
			const capability = known[1];
			if (capability === "not a capability") continue;
			clients.forEach((client, i) => {
				const cell = cells[i] ?? "";
				const says = cell.startsWith("yes") ? true : cell.startsWith("-") ? false : undefined;
				const mine = adapters.filter((a) => a.name.startsWith(CLIENTS[client] ?? "?"));
				// An adapter that cannot run a feature's cases though the client has it says so: its reason starts "built".
				const have = mine
					.filter((a) => a.capabilities.has(capability) || a.missing[capability]?.startsWith("built"))
					.map((a) => a.name);
				if (says === undefined) wrong.push(`${feature} / ${client}: "${cell}" is neither yes nor -`);
				else if (says && have.length !== mine.length)
					wrong.push(
						`${feature} / ${client}: the table says yes, these adapters lack ${capability}: ${mine.filter((a) => !have.includes(a.name)).map((a) => a.name)}`,
					);
				else if (!says && have.length > 0)
					wrong.push(`${feature} / ${client}: the table says -, these adapters have ${capability}: ${have}`);
			});
		}
		assert.deepEqual(wrong, []);
	});
});
