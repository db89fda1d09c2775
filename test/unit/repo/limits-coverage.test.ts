/**
 * Every limit of src/protocol/limits.ts is, for each client that keeps copies (Lua, Vim9, Emacs Lisp, Java), either
 * a row of that language's agreement test (test/<lang>/limits-agree.test.ts, run in the real editor or on the
 * built jar) or listed here as not kept by it, with why. A limit not kept because a feature is not built names the
 * kit capability: the client's adapters must still lack it, so a client that gains the feature (and copies of its
 * limits) fails here until its agreement test has the rows. The agreement tests themselves are not run here: this
 * reads their source, which is what they compare.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as limits from "../../../src/protocol/limits.ts";
import type { Capability, ClientAdapter } from "../../conformance/client.ts";
import { REPO } from "../../helpers/pi-env.ts";

type Limit = keyof typeof limits;

/** A limit pi alone keeps: no editor reads or writes by it. */
const PI_ONLY: Record<string, string> = {
	MAX_REVIEW_FILE_BYTES: "pi's: the largest file whose contents pi carries in a change set",
	MAX_BUFFERS_FILE_BYTES: "pi's reader's cap on `<pid>.buffers.json` (editors stay under it by the text cap)",
	MAX_SEND_FILE_BYTES: "pi's reader's cap on `<pid>.send.json` (editors stay under it by the text and prompt caps)",
	SEND_MAX_AGE_SECONDS: "pi's: how old a send may be when pi reads it",
	ASK_WAIT_MS: "pi's: how long pi waits for the editor's answer to a show or ask",
	MAX_PI_MERGE_BYTES: "pi's writer's cap on the `merge` fields of its message (editors: under MAX_PI_MESSAGE_BYTES)",
};

/** Why a client keeps no copy of a limit: pi's alone, or the feature (kit capability) it does not implement. */
type NotKept = { piOnly: true } | { capability: Capability };

interface Language {
	name: string;
	/** The agreement test, from the repository root. */
	test: string;
	/** The kit adapters of this client: their names start so. */
	adapterPrefix: string;
	notKept: Partial<Record<Limit, NotKept>>;
}

const piOnly = Object.fromEntries(Object.keys(PI_ONLY).map((k) => [k, { piOnly: true }])) as Record<Limit, NotKept>;

const LANGUAGES: Language[] = [
	{ name: "Lua (Neovim)", test: "test/nvim/limits-agree.test.ts", adapterPrefix: "nvim", notKept: piOnly },
	{
		name: "Vim9 (Vim)",
		test: "test/vim/limits-agree.test.ts",
		adapterPrefix: "vim 9",
		notKept: piOnly,
	},
	{
		name: "Emacs Lisp (Emacs)",
		test: "test/emacs/limits-agree.test.ts",
		adapterPrefix: "emacs",
		notKept: piOnly,
	},
	{
		name: "Java (JetBrains)",
		test: "test/jetbrains/limits-agree.test.ts",
		adapterPrefix: "jetbrains",
		notKept: {
			...piOnly,
			MAX_REVIEW_BYTES: { capability: "review" },
			MAX_REVIEW_RUNS: { capability: "review" },
			MAX_REVERTED_REPORTS: { capability: "review" },
		},
	},
];

const ALL = Object.keys(limits).sort() as Limit[];

/** The limits an agreement test compares against: every `limits.X` its source names. */
const rowsOf = (test: string): Set<string> =>
	new Set(
		[...readFileSync(join(REPO, test), "utf8").matchAll(/\blimits\.([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1] ?? ""),
	);

const adapters: ClientAdapter[] = (
	await Promise.all(
		["nvim", "vim", "emacs", "jetbrains"].map(
			async (f) => ((await import(`../../conformance/adapters/${f}.ts`)) as { adapters: ClientAdapter[] }).adapters,
		),
	)
).flat();

describe("every limit of src/protocol/limits.ts is checked in every language that keeps copies", () => {
	for (const lang of LANGUAGES) {
		it(`${lang.name}: each limit is a row of ${lang.test} or not kept, with why`, () => {
			const rows = rowsOf(lang.test);
			const unknown = [...rows].filter((r) => !(ALL as string[]).includes(r));
			assert.deepEqual(unknown, [], `${lang.test} names limits that src/protocol/limits.ts does not export`);
			const neither = ALL.filter((l) => !rows.has(l) && lang.notKept[l] === undefined);
			assert.deepEqual(neither, [], `add these to ${lang.test} (or say here why ${lang.name} keeps no copy)`);
			const both = ALL.filter((l) => rows.has(l) && lang.notKept[l] !== undefined);
			assert.deepEqual(both, [], `checked in ${lang.test}, yet listed here as not kept`);
		});

		it(`${lang.name}: a limit left out for a missing feature is one its kit adapters still lack`, () => {
			const mine = adapters.filter((a) => a.name.startsWith(lang.adapterPrefix));
			assert.ok(mine.length > 0, `no kit adapter named ${lang.adapterPrefix}...`);
			const gained = Object.entries(lang.notKept).flatMap(([limit, why]) =>
				why !== undefined && "capability" in why
					? mine
							.filter((a) => a.capabilities.has(why.capability))
							.map((a) => `${limit}: ${a.name} has ${why.capability}`)
					: [],
			);
			assert.deepEqual(gained, [], `the client implements the feature now: add its limits to ${lang.test}`);
		});
	}
});
