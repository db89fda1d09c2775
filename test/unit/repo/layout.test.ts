/**
 * The source layout is the data path, top to bottom (docs/ARCHITECTURE.md): src/index.ts and src/controller.ts
 * -> src/ui and src/link -> src/context and src/discovery -> src/protocol. An import may stay in its own folder
 * or run down, never up or sideways, and no module graph (pi's, the shared client code, each client) has a circle.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, test } from "node:test";

const root = resolve(import.meta.dirname, "../../..");

/** Depth of each folder of src/ on the data path; a file may import only from its own folder or a deeper one. */
const SRC_LAYERS: Record<string, number> = {
	src: 0,
	"src/pi-api": 0.5,
	"src/install": 1,
	"src/ui": 1,
	"src/link": 1,
	"src/context": 2,
	"src/discovery": 2,
	"src/protocol": 3,
};

function tsFiles(dir: string): string[] {
	return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
		.filter((e) => e.isFile() && e.name.endsWith(".ts"))
		.map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Relative imports of one file (static, type-only and re-exports), as repository paths. */
function importsOf(file: string): string[] {
	const text = readFileSync(join(root, file), "utf8");
	const pattern = /^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)"|^import\s+"(\.{1,2}\/[^"]+)"/gms;
	const specs = [...text.matchAll(pattern)].map((m) => (m[1] ?? m[2]) as string);
	return specs.map((spec) => relative(root, resolve(dirname(join(root, file)), spec)));
}

/**
 * What a module loads when it runs: its relative imports and re-exports (as repository paths) and the packages it
 * imports, leaving out `import type` and `export type` (erased; `import { type A }` stays: verbatimModuleSyntax).
 */
function runtimeImportsIn(text: string, file: string): { files: string[]; packages: string[] } {
	const pattern = /^(import|export)\s(type\s)?[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gms;
	const specs = [...text.matchAll(pattern)].filter((m) => m[2] === undefined).map((m) => (m[3] ?? m[4]) as string);
	return {
		files: specs.filter((s) => s.startsWith(".")).map((s) => relative(root, resolve(dirname(join(root, file)), s))),
		packages: specs.filter((s) => !s.startsWith(".")),
	};
}

const runtimeImportsOf = (file: string) => runtimeImportsIn(readFileSync(join(root, file), "utf8"), file);

/** The first circle found in the graph of `files`, as a path of files, or undefined. */
function findCircle(files: string[]): string[] | undefined {
	const inSet = new Set(files);
	const state = new Map<string, "open" | "done">();
	const stack: string[] = [];
	const visit = (file: string): string[] | undefined => {
		if (state.get(file) === "done") return undefined;
		if (state.get(file) === "open") return [...stack.slice(stack.indexOf(file)), file];
		state.set(file, "open");
		stack.push(file);
		for (const next of importsOf(file).filter((f) => inSet.has(f))) {
			const circle = visit(next);
			if (circle) return circle;
		}
		stack.pop();
		state.set(file, "done");
		return undefined;
	};
	for (const file of files) {
		const circle = visit(file);
		if (circle) return circle;
	}
	return undefined;
}

describe("source layout", () => {
	test("test/unit mirrors the source: each folder is one of src/ or editors/ (or repo/, checks of the repository)", () => {
		const folders = readdirSync(join(root, "test/unit"), { withFileTypes: true, recursive: true })
			.filter((e) => e.isDirectory())
			.map((e) => relative(join(root, "test/unit"), join(e.parentPath, e.name)));
		const strays = folders.filter((f) => {
			if (f === "repo" || f === "editors") return false;
			const source = f.startsWith("editors/") ? f : `src/${f}`;
			try {
				return !readdirSync(join(root, source), { recursive: true }).some((name) => String(name).endsWith(".ts"));
			} catch {
				return true;
			}
		});
		assert.deepEqual(strays, [], "a test/unit folder without a source folder of that name");
		assert.ok(folders.length >= 8, `test/unit has its folders: ${folders.join(", ")}`);
	});

	test("every file of src/ sits in a folder of the data path", () => {
		for (const file of tsFiles("src")) assert.ok(dirname(file) in SRC_LAYERS, `${file}: not in a known folder`);
	});

	test("imports in src/ stay in their folder or run down the data path", () => {
		const upward: string[] = [];
		for (const file of tsFiles("src")) {
			const from = dirname(file);
			for (const target of importsOf(file).filter((f) => f.startsWith("src/"))) {
				const to = dirname(target);
				if (to !== from && (SRC_LAYERS[to] ?? -1) <= (SRC_LAYERS[from] ?? -1)) upward.push(`${file} -> ${target}`);
			}
		}
		assert.deepEqual(upward, []);
	});

	test("editors/shared takes from src/ only the protocol (src/protocol/: the wire, its limits, the state dir's rules)", () => {
		const reaching: string[] = [];
		for (const file of tsFiles("editors/shared")) {
			for (const target of importsOf(file).filter((f) => f.startsWith("src/"))) {
				if (!target.startsWith("src/protocol/")) reaching.push(`${file} -> ${target}`);
			}
		}
		assert.deepEqual(reaching, []);
	});

	test("the wire module is dependency-free: it imports only the protocol's own modules", () => {
		const outside = importsOf("src/protocol/wire.ts").filter((f) => !f.startsWith("src/protocol/"));
		const packages = [
			...readFileSync(join(root, "src/protocol/wire.ts"), "utf8").matchAll(/from\s+"([^".][^"]*)"/g),
		].map((m) => m[1]);
		assert.deepEqual([...outside, ...packages], []);
	});

	/**
	 * What editors/shared may load from src/protocol beside the wire: code both sides run that is no rule of the wire
	 * (no type, name or limit), and that loads a package, so it cannot live in the dependency-free wire.
	 */
	const SHARED_ALGORITHMS: Readonly<Record<string, string>> = {
		"src/protocol/line-diff.ts":
			"the line diff pi's change set and the editors' merge (issue 26) both take: jsdiff, bounded in work; one copy",
	};

	test("the wire is the one dependency-free home: what wire.ts loads at run time, all the way down, imports no package", () => {
		const seen = new Set<string>();
		const packages: string[] = [];
		const visit = (file: string): void => {
			if (seen.has(file)) return;
			seen.add(file);
			const loaded = runtimeImportsOf(file);
			packages.push(...loaded.packages.filter((p) => !p.startsWith("node:")).map((p) => `${file} -> ${p}`));
			for (const next of loaded.files) visit(next);
		};
		visit("src/protocol/wire.ts");
		assert.deepEqual(packages, []);
		// editors/shared loads from src/ only what wire.ts loads (types it may take from the schemas: erased), and the
		// shared algorithms that are no wire rule (SHARED_ALGORITHMS, each with why).
		const beyond = tsFiles("editors/shared").flatMap((file) =>
			runtimeImportsOf(file)
				.files.filter((f) => f.startsWith("src/") && !seen.has(f) && SHARED_ALGORITHMS[f] === undefined)
				.map((f) => `${file} -> ${f}`),
		);
		assert.deepEqual(beyond, []);
		assert.deepEqual(
			[...seen].filter((f) => !f.startsWith("src/protocol/")),
			[],
		);
	});

	test("runtimeImportsOf leaves out type-only imports and re-exports, and sees packages", () => {
		const table: [string, { files: number; packages: string[] }][] = [
			['import type { A } from "./a.ts";', { files: 0, packages: [] }],
			['export type { A } from "./a.ts";', { files: 0, packages: [] }],
			['import { type A } from "./a.ts";', { files: 1, packages: [] }],
			['export { a } from "./a.ts";', { files: 1, packages: [] }],
			['import { Type } from "typebox";', { files: 0, packages: ["typebox"] }],
			['import {\n\tx,\n} from "node:fs";', { files: 0, packages: ["node:fs"] }],
		];
		for (const [text, expected] of table) {
			const got = runtimeImportsIn(text, "src/protocol/x.ts");
			assert.deepEqual({ files: got.files.length, packages: got.packages }, expected, text);
		}
	});

	for (const dir of ["src", "editors/shared", "editors/vscode/src", "editors/obsidian/src"]) {
		test(`no import circle in ${dir}`, () => {
			assert.equal(findCircle(tsFiles(dir))?.join(" -> "), undefined);
		});
	}
});
