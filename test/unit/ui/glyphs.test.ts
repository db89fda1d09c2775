import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EXTENSION_LANGUAGES, FILENAME_LANGUAGES } from "../../../src/context/languages.ts";
import {
	APP_GLYPHS,
	DISCONNECTED_GLYPH,
	editorGlyph,
	formatPill,
	GENERIC_EDITOR_GLYPH,
	GENERIC_FILE_GLYPH,
	LANGUAGE_GLYPHS,
	languageOf,
	NERD_FONT_GLYPHS,
	type PillInput,
	PRODUCT_GLYPHS,
} from "../../../src/ui/glyphs.ts";

const NVIM = "\u{E6AE}";
const TS = "\u{E8CA}";

const pill = (app: string, language: string | null, file: string | null, product?: string): PillInput =>
	product === undefined ? { app, language, file } : { app, product, language, file };

describe("formatPill: spec states", () => {
	const cases: [string, PillInput | null, string][] = [
		["connected, file: nvim + typescript", pill("nvim", "typescript", "/p/main.ts"), `${NVIM} ${TS}`],
		["connected, unnamed buffer", pill("nvim", "typescript", null), NVIM],
		["dead or disconnected", null, DISCONNECTED_GLYPH],
		["language from the extension", pill("nvim", null, "/p/main.ts"), `${NVIM} ${TS}`],
		["empty filetype falls back to the extension", pill("nvim", "", "/p/main.ts"), `${NVIM} ${TS}`],
		[
			"unknown language and extension: generic file",
			pill("nvim", "foo", "/p/x.unknown"),
			`${NVIM} ${GENERIC_FILE_GLYPH}`,
		],
		["no language, no extension", pill("nvim", null, "/p/LICENSE"), `${NVIM} ${GENERIC_FILE_GLYPH}`],
		["unknown app: generic editor", pill("kakoune", "python", "/p/a.py"), `${GENERIC_EDITOR_GLYPH} \u{E73C}`],
		["vscode languageId", pill("vscode", "typescriptreact", "/p/a.tsx"), "\u{E8DA} \u{E7BA}"],
		["obsidian, vault-relative file", pill("obsidian", "markdown", "Notes/a.md"), "\u{F219} \u{E73E}"],
		["jetbrains product", pill("jetbrains", "python", "/p/a.py", "PyCharm"), "\u{E877} \u{E73C}"],
		["unknown product falls back to app", pill("jetbrains", "go", "/p/a.go", "NewIDE"), "\u{E808} \u{E724}"],
		["app is case-insensitive", pill("NVIM", "typescript", "/p/a.ts"), `${NVIM} ${TS}`],
	];
	for (const [description, input, expected] of cases) {
		it(description, () => assert.equal(formatPill(input), expected));
	}
	it("the spec's code points", () => {
		assert.equal(APP_GLYPHS["nvim"], "\u{E6AE}");
		assert.equal(LANGUAGE_GLYPHS["typescript"], "\u{E8CA}");
		assert.equal(DISCONNECTED_GLYPH, "\u{EAE3}");
		assert.equal(NERD_FONT_GLYPHS["nf-cod-editor_layout"], DISCONNECTED_GLYPH);
		assert.notEqual(GENERIC_EDITOR_GLYPH, DISCONNECTED_GLYPH);
	});
});

describe("formatPill: plain mode", () => {
	const cases: [string, PillInput | null, string][] = [
		["file", pill("nvim", "typescript", "/p/main.ts"), "nvim ts"],
		["unnamed", pill("nvim", "typescript", null), "nvim"],
		["disconnected", null, "ide -"],
		["python", pill("vscode", "python", "/p/a.py"), "vscode py"],
		["extension fallback", pill("nvim", null, "/p/a.rs"), "nvim rs"],
		["language without an extension", pill("nvim", "gitcommit", "/p/.git/COMMIT_EDITMSG"), "nvim gitcommit"],
		["unknown language", pill("nvim", null, "/p/LICENSE"), "nvim ?"],
		["reported id without glyph", pill("nvim", "brainfuck", "/p/x.bf"), "nvim brainfuck"],
		["product", pill("jetbrains", "java", "/p/A.java", "IntelliJ IDEA"), "idea java"],
		["product one word", pill("jetbrains", "go", "/p/a.go", "GoLand"), "goland go"],
		["unknown product: app", pill("jetbrains", "go", "/p/a.go", "NewIDE"), "jetbrains go"],
		["hostile app name", pill("\u001b[31mvi m\u0007", null, null), "[31mvim"],
		["empty app name", pill("", null, null), "ide"],
	];
	for (const [description, input, expected] of cases) {
		it(description, () => assert.equal(formatPill(input, { plain: true }), expected));
	}
});

describe("editorGlyph: JetBrains products", () => {
	const cases: [string, string][] = [
		["IntelliJ IDEA", "\u{E7B5}"],
		["WebStorm", "\u{E8E4}"],
		["PyCharm", "\u{E877}"],
		["GoLand", "\u{E7EF}"],
		["CLion", "\u{E78E}"],
		["Rider", "\u{E88F}"],
		["RubyMine", "\u{E896}"],
		["PhpStorm", "\u{E862}"],
		["DataGrip", "\u{E7BD}"],
		["DataSpell", "\u{E7BE}"],
		["Android Studio", "\u{E71A}"],
		["RustRover", "\u{E808}"],
		["Fleet", "\u{E808}"],
		["Aqua", "\u{E808}"],
		["AppCode", "\u{E808}"],
		["Writerside", "\u{E808}"],
		// Variants a client may report: editions and odd casing resolve by name prefix.
		["PyCharm Community Edition", "\u{E877}"],
		["IntelliJ IDEA Ultimate", "\u{E7B5}"],
		["intellij idea", "\u{E7B5}"],
		["webstorm", "\u{E8E4}"],
	];
	for (const [product, expected] of cases) {
		it(product, () => assert.equal(editorGlyph("jetbrains", product), expected));
	}
	it("every product in the table resolves to its own glyph", () => {
		for (const [product, glyph] of Object.entries(PRODUCT_GLYPHS)) assert.equal(editorGlyph("x", product), glyph);
	});
	const fallbacks: [string, string, string | undefined, string][] = [
		["unknown product, jetbrains app", "jetbrains", "Brand New IDE", "\u{E808}"],
		["empty product", "jetbrains", "", "\u{E808}"],
		["no product", "vscode", undefined, "\u{E8DA}"],
		["unknown app and product", "acme", "Acme", GENERIC_EDITOR_GLYPH],
	];
	for (const [description, app, product, expected] of fallbacks) {
		it(description, () => assert.equal(editorGlyph(app, product), expected));
	}
});

describe("languageOf", () => {
	// Over 40 language ids, nvim filetypes and VS Code languageIds, each resolved to itself with a glyph.
	const ids = [
		"typescript",
		"typescriptreact",
		"javascript",
		"javascriptreact",
		"python",
		"lua",
		"rust",
		"go",
		"c",
		"cpp",
		"cs",
		"csharp",
		"java",
		"kotlin",
		"swift",
		"ruby",
		"php",
		"html",
		"css",
		"scss",
		"json",
		"jsonc",
		"yaml",
		"toml",
		"markdown",
		"sh",
		"bash",
		"zsh",
		"shellscript",
		"fish",
		"vim",
		"sql",
		"dockerfile",
		"make",
		"makefile",
		"cmake",
		"elixir",
		"erlang",
		"haskell",
		"ocaml",
		"scala",
		"clojure",
		"dart",
		"zig",
		"nix",
		"r",
		"julia",
		"perl",
		"vue",
		"svelte",
		"astro",
		"tex",
		"latex",
		"graphql",
		"proto",
		"terraform",
		"xml",
		"gitcommit",
		"git-commit",
		"diff",
		"powershell",
		"fsharp",
	];
	for (const id of ids) {
		it(`${id} has a glyph`, () => {
			assert.equal(languageOf(id, null), id);
			assert.ok(LANGUAGE_GLYPHS[id], `no glyph for ${id}`);
		});
	}

	const cases: [string, string | null, string | null, string | null][] = [
		["reported language wins over the extension", "javascript", "/p/a.ts", "javascript"],
		["case-insensitive id", "TypeScript", null, "typescript"],
		["null language, extension", null, "/p/a.py", "python"],
		["empty language, extension", "", "/p/a.py", "python"],
		["unknown language, known extension", "foo", "/p/a.go", "go"],
		["unknown language, unknown extension", "foo", "/p/a.zzz", "foo"],
		["upper-case extension", null, "/p/A.TS", "typescript"],
		["last extension counts", null, "/p/a.test.ts", "typescript"],
		["file name: Dockerfile", null, "/p/Dockerfile", "dockerfile"],
		["file name: Makefile", null, "/p/Makefile", "make"],
		["file name: CMakeLists.txt", null, "/p/CMakeLists.txt", "cmake"],
		["file name: COMMIT_EDITMSG", null, "/p/.git/COMMIT_EDITMSG", "gitcommit"],
		["dotfile without extension", null, "/p/.env", null],
		["no extension", null, "/p/LICENSE", null],
		["relative path", null, "Notes/a.md", "markdown"],
		["windows separators", null, "C:\\p\\main.rs", "rust"],
		["nothing at all", null, null, null],
	];
	for (const [description, language, file, expected] of cases) {
		it(description, () => assert.equal(languageOf(language, file), expected));
	}

	it("every extension and file name maps to a language with a glyph", () => {
		for (const [key, id] of [...Object.entries(EXTENSION_LANGUAGES), ...Object.entries(FILENAME_LANGUAGES)]) {
			assert.ok(LANGUAGE_GLYPHS[id], `${key} -> ${id} has no glyph`);
			assert.equal(key, key.toLowerCase());
		}
	});
});

describe("glyph tables", () => {
	const isPrivateUse = (codePoint: number): boolean =>
		(codePoint >= 0xe000 && codePoint <= 0xf8ff) ||
		(codePoint >= 0xf0000 && codePoint <= 0xffffd) ||
		(codePoint >= 0x100000 && codePoint <= 0x10fffd);
	const tables: [string, Readonly<Record<string, string>>][] = [
		["NERD_FONT_GLYPHS", NERD_FONT_GLYPHS],
		["APP_GLYPHS", APP_GLYPHS],
		["PRODUCT_GLYPHS", PRODUCT_GLYPHS],
		["LANGUAGE_GLYPHS", LANGUAGE_GLYPHS],
		["singles", { DISCONNECTED_GLYPH, GENERIC_EDITOR_GLYPH, GENERIC_FILE_GLYPH }],
	];
	for (const [name, table] of tables) {
		it(`${name}: every glyph is one Private Use Area code point from the Nerd Fonts table`, () => {
			const known = new Set<string>(Object.values(NERD_FONT_GLYPHS));
			for (const [key, glyph] of Object.entries(table)) {
				const codePoints = [...glyph];
				assert.equal(codePoints.length, 1, `${name}.${key}`);
				assert.ok(isPrivateUse(glyph.codePointAt(0) ?? 0), `${name}.${key} is not private use`);
				assert.ok(known.has(glyph), `${name}.${key} is not in NERD_FONT_GLYPHS`);
			}
		});
	}
	it("table keys are lower case where lookups lower-case them", () => {
		for (const key of [...Object.keys(APP_GLYPHS), ...Object.keys(LANGUAGE_GLYPHS)])
			assert.equal(key, key.toLowerCase());
	});
	it("the Nerd Fonts table has no duplicate code points", () => {
		const values = Object.values(NERD_FONT_GLYPHS);
		assert.equal(new Set(values).size, values.length);
	});
});
