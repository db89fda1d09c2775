/**
 * The docs match the tree: every relative link and every repository path in backticks (`src/...`, `editors/...`,
 * `test/...`, `scripts/...`, `bench/...`, `docs/...`) in the user's and the developer's documents names a file or
 * folder that exists. Placeholders (`<v>`) and globs are not paths.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { REPO } from "../../helpers/pi-env.ts";

const DOCS = [
	"README.md",
	"DEVELOPING.md",
	"CHANGELOG.md",
	"PROTOCOL.md",
	"docs/ARCHITECTURE.md",
	"docs/TEAM-NOTES.md",
];

/** The paths a document names: its relative link targets (from its folder) and backticked repository paths. */
function namedPaths(doc: string, text: string): string[] {
	const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
		.map((m) => m[1] ?? "")
		.filter((target) => !/^[a-z]+:/.test(target))
		.map((target) => join(dirname(doc), target));
	const backticked = [...text.matchAll(/`((?:src|editors|test|scripts|bench|docs)\/[^`\s]*)`/g)]
		.map((m) => m[1] ?? "")
		.filter((path) => !/[<*{]/.test(path));
	return [...links, ...backticked];
}

for (const doc of DOCS) {
	test(`every path ${doc} names exists`, () => {
		const missing = namedPaths(doc, readFileSync(join(REPO, doc), "utf8")).filter((p) => !existsSync(join(REPO, p)));
		assert.deepEqual(missing, []);
	});
}

test("the path finder sees links and backticked paths, not URLs or placeholders", () => {
	assert.deepEqual(
		namedPaths(
			"docs/X.md",
			"[a](../PROTOCOL.md#v04) [b](https://x.org/y) `src/index.ts` `editors/nvim/` `dist/pi-<v>.tgz` `src/*.ts`",
		),
		["PROTOCOL.md", "src/index.ts", "editors/nvim/"],
	);
});
