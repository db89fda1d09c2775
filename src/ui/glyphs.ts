/**
 * The status pill: two Nerd Font glyphs (editor + language), the editor glyph
 * alone for an unnamed buffer, a generic editor glyph when disconnected, or a
 * short ASCII fallback for terminals without a Nerd Font. Glyphs are chosen from
 * `app`, JetBrains `product` and the language id (nvim filetype or VS Code
 * languageId), with the file name as fallback. Every code point comes from the
 * Nerd Fonts v3.4.0 glyph names (checked against the cmap of a v3.4.0-patched
 * font, npm `@azurity/pure-nerd-font@3.0.5`); the table below is keyed by those
 * names so each one can be looked up. Pure: tables and string functions only.
 */
import { EXTENSION_LANGUAGES, languageOfFile } from "../context/languages.ts";

/** Nerd Fonts v3.4.0 names -> code points, the only place code points are written down. */
export const NERD_FONT_GLYPHS = {
	"nf-cod-editor_layout": "\u{EAE3}",
	"nf-cod-code": "\u{EAC4}",
	"nf-cod-file": "\u{EA7B}",
	"nf-custom-neovim": "\u{E6AE}",
	"nf-custom-vim": "\u{E62B}",
	"nf-dev-vim": "\u{E7C5}",
	"nf-dev-vscode": "\u{E8DA}",
	"nf-linux-vscodium": "\u{F372}",
	"nf-fa-gem": "\u{F219}",
	"nf-dev-jetbrains": "\u{E808}",
	"nf-md-alpha_z_box": "\u{F0B21}",
	"nf-custom-emacs": "\u{E632}",
	"nf-dev-sublime": "\u{E7AA}",
	"nf-md-dna": "\u{F0684}",
	"nf-dev-xcode": "\u{E8E8}",
	"nf-dev-eclipse": "\u{E79E}",
	"nf-dev-atom": "\u{E764}",
	"nf-dev-nano": "\u{E838}",
	"nf-dev-visualstudio": "\u{E70C}",
	"nf-dev-intellij": "\u{E7B5}",
	"nf-dev-webstorm": "\u{E8E4}",
	"nf-dev-pycharm": "\u{E877}",
	"nf-dev-goland": "\u{E7EF}",
	"nf-dev-clion": "\u{E78E}",
	"nf-dev-rider": "\u{E88F}",
	"nf-dev-rubymine": "\u{E896}",
	"nf-dev-phpstorm": "\u{E862}",
	"nf-dev-datagrip": "\u{E7BD}",
	"nf-dev-dataspell": "\u{E7BE}",
	"nf-dev-androidstudio": "\u{E71A}",
	"nf-dev-typescript": "\u{E8CA}",
	"nf-dev-react": "\u{E7BA}",
	"nf-dev-javascript_alt": "\u{E74E}",
	"nf-dev-python": "\u{E73C}",
	"nf-dev-lua": "\u{E826}",
	"nf-dev-rust": "\u{E7A8}",
	"nf-dev-go": "\u{E724}",
	"nf-dev-c_lang": "\u{E771}",
	"nf-dev-cplusplus": "\u{E7A3}",
	"nf-dev-csharp": "\u{E7B2}",
	"nf-dev-java": "\u{E738}",
	"nf-dev-kotlin": "\u{E81B}",
	"nf-dev-swift": "\u{E755}",
	"nf-dev-ruby": "\u{E739}",
	"nf-dev-php": "\u{E73D}",
	"nf-dev-html5": "\u{E736}",
	"nf-dev-css3": "\u{E749}",
	"nf-dev-sass": "\u{E74B}",
	"nf-dev-less": "\u{E758}",
	"nf-dev-stylus": "\u{E759}",
	"nf-dev-json": "\u{E80B}",
	"nf-dev-yaml": "\u{E8EB}",
	"nf-custom-toml": "\u{E6B2}",
	"nf-dev-markdown": "\u{E73E}",
	"nf-dev-bash": "\u{E760}",
	"nf-seti-shell": "\u{E691}",
	"nf-fa-fish": "\u{EE41}",
	"nf-dev-powershell": "\u{E86C}",
	"nf-custom-msdos": "\u{E629}",
	"nf-dev-database": "\u{E706}",
	"nf-dev-postgresql": "\u{E76E}",
	"nf-dev-mysql": "\u{E704}",
	"nf-dev-docker": "\u{E7B0}",
	"nf-seti-makefile": "\u{E673}",
	"nf-dev-cmake": "\u{E794}",
	"nf-dev-elixir": "\u{E7CD}",
	"nf-dev-erlang": "\u{E7B1}",
	"nf-dev-haskell": "\u{E777}",
	"nf-dev-ocaml": "\u{E84E}",
	"nf-dev-scala": "\u{E737}",
	"nf-dev-clojure": "\u{E768}",
	"nf-dev-dart": "\u{E798}",
	"nf-dev-zig": "\u{E8EF}",
	"nf-dev-nixos": "\u{E843}",
	"nf-dev-r": "\u{E881}",
	"nf-dev-julia": "\u{E80D}",
	"nf-dev-perl": "\u{E769}",
	"nf-dev-vuejs": "\u{E8DC}",
	"nf-dev-svelte": "\u{E8B7}",
	"nf-dev-astro": "\u{E735}",
	"nf-dev-tex": "\u{E8BE}",
	"nf-dev-latex": "\u{E81F}",
	"nf-dev-graphql": "\u{E7F4}",
	"nf-dev-grpc": "\u{E7F5}",
	"nf-dev-terraform": "\u{E8BD}",
	"nf-dev-xml": "\u{E8EA}",
	"nf-dev-git_commit": "\u{E729}",
	"nf-dev-git": "\u{E702}",
	"nf-cod-diff": "\u{EAE1}",
	"nf-seti-git_ignore": "\u{E65D}",
	"nf-dev-fsharp": "\u{E7A7}",
	"nf-dev-objectivec": "\u{E84D}",
	"nf-dev-dlang": "\u{E7AF}",
	"nf-dev-elm": "\u{E7CE}",
	"nf-dev-crystal": "\u{E7AC}",
	"nf-dev-nim": "\u{E841}",
	"nf-dev-fortran": "\u{E7DE}",
	"nf-dev-groovy": "\u{E775}",
	"nf-dev-gradle": "\u{E7F2}",
	"nf-dev-haxe": "\u{E7FA}",
	"nf-dev-coffeescript": "\u{E751}",
	"nf-dev-solidity": "\u{E8A6}",
	"nf-dev-prisma": "\u{E86E}",
	"nf-dev-matlab": "\u{E82A}",
	"nf-seti-csv": "\u{E64A}",
	"nf-seti-text": "\u{E64E}",
	"nf-custom-common_lisp": "\u{E6B0}",
	"nf-custom-scheme": "\u{E6B1}",
	"nf-custom-fennel": "\u{E6AF}",
	"nf-custom-asm": "\u{E6AB}",
	"nf-custom-v_lang": "\u{E6AC}",
	"nf-custom-ada": "\u{E6B5}",
	"nf-custom-orgmode": "\u{E633}",
	"nf-dev-norg": "\u{E847}",
	"nf-seti-svg": "\u{E698}",
	"nf-seti-config": "\u{E615}",
	"nf-seti-editorconfig": "\u{E652}",
	"nf-dev-jupyter": "\u{E80F}",
	"nf-dev-handlebars": "\u{E7F7}",
	"nf-seti-pug": "\u{E686}",
	"nf-seti-twig": "\u{E61C}",
	"nf-seti-liquid": "\u{E670}",
	"nf-dev-visualbasic": "\u{E8D5}",
	"nf-dev-purescript": "\u{E875}",
	"nf-dev-prolog": "\u{E7A1}",
	"nf-dev-wasm": "\u{E8E0}",
	"nf-dev-vala": "\u{E8D1}",
	"nf-seti-jinja": "\u{E66F}",
	"nf-dev-awk": "\u{E741}",
} as const;

type GlyphName = keyof typeof NERD_FONT_GLYPHS;

const nf = (name: GlyphName): string => NERD_FONT_GLYPHS[name];

/** Editor dead or disconnected (spec: U+EAE3, nf-cod-editor_layout). */
export const DISCONNECTED_GLYPH = "\u{EAE3}";

/** An editor app with no glyph of its own; distinct from DISCONNECTED_GLYPH so a live pill never reads as dead. */
export const GENERIC_EDITOR_GLYPH: string = nf("nf-cod-code");

/** A file whose language has no glyph: keeps the pill at two glyphs for every named buffer. */
export const GENERIC_FILE_GLYPH: string = nf("nf-cod-file");

/** Between the two glyphs: Nerd Font icons are often wider than one cell and would overlap without it. */
export const PILL_SEPARATOR = " ";

/** Editor glyphs by `app` (lower case). */
export const APP_GLYPHS: Readonly<Record<string, string>> = {
	nvim: nf("nf-custom-neovim"),
	neovim: nf("nf-custom-neovim"),
	vim: nf("nf-custom-vim"),
	gvim: nf("nf-custom-vim"),
	vscode: nf("nf-dev-vscode"),
	code: nf("nf-dev-vscode"),
	vscodium: nf("nf-linux-vscodium"),
	obsidian: nf("nf-fa-gem"), // Obsidian's logo is a gem; Nerd Fonts has no Obsidian mark
	jetbrains: nf("nf-dev-jetbrains"),
	zed: nf("nf-md-alpha_z_box"), // Zed's logo is a boxed Z; no Zed mark in Nerd Fonts
	emacs: nf("nf-custom-emacs"),
	sublime: nf("nf-dev-sublime"),
	helix: nf("nf-md-dna"), // a double helix; no Helix mark in Nerd Fonts
	xcode: nf("nf-dev-xcode"),
	eclipse: nf("nf-dev-eclipse"),
	atom: nf("nf-dev-atom"),
	nano: nf("nf-dev-nano"),
	visualstudio: nf("nf-dev-visualstudio"),
};

/**
 * Product glyphs by `product` as JetBrains clients report it. Products without a
 * mark of their own in Nerd Fonts v3.4.0 (RustRover, Fleet, Aqua, ...) use the
 * JetBrains mark.
 */
export const PRODUCT_GLYPHS: Readonly<Record<string, string>> = {
	"IntelliJ IDEA": nf("nf-dev-intellij"),
	WebStorm: nf("nf-dev-webstorm"),
	PyCharm: nf("nf-dev-pycharm"),
	GoLand: nf("nf-dev-goland"),
	CLion: nf("nf-dev-clion"),
	Rider: nf("nf-dev-rider"),
	RubyMine: nf("nf-dev-rubymine"),
	PhpStorm: nf("nf-dev-phpstorm"),
	DataGrip: nf("nf-dev-datagrip"),
	DataSpell: nf("nf-dev-dataspell"),
	"Android Studio": nf("nf-dev-androidstudio"),
	RustRover: nf("nf-dev-jetbrains"),
	Fleet: nf("nf-dev-jetbrains"),
	Aqua: nf("nf-dev-jetbrains"),
	AppCode: nf("nf-dev-jetbrains"),
	Writerside: nf("nf-dev-jetbrains"),
	MPS: nf("nf-dev-jetbrains"),
	"JetBrains Gateway": nf("nf-dev-jetbrains"),
	"JetBrains Client": nf("nf-dev-jetbrains"),
};

/** Short ASCII names for the plain pill, by product. */
const PRODUCT_LABELS: Readonly<Record<string, string>> = {
	"IntelliJ IDEA": "idea",
	"Android Studio": "studio",
	"JetBrains Gateway": "gateway",
	"JetBrains Client": "jbclient",
};

/** Language glyphs by language id: nvim filetypes and VS Code languageIds (lower case). */
export const LANGUAGE_GLYPHS: Readonly<Record<string, string>> = {
	typescript: nf("nf-dev-typescript"),
	typescriptreact: nf("nf-dev-react"),
	javascript: nf("nf-dev-javascript_alt"),
	javascriptreact: nf("nf-dev-react"),
	python: nf("nf-dev-python"),
	lua: nf("nf-dev-lua"),
	rust: nf("nf-dev-rust"),
	go: nf("nf-dev-go"),
	gomod: nf("nf-dev-go"),
	"go.mod": nf("nf-dev-go"),
	c: nf("nf-dev-c_lang"),
	cpp: nf("nf-dev-cplusplus"),
	"cuda-cpp": nf("nf-dev-cplusplus"),
	cs: nf("nf-dev-csharp"),
	csharp: nf("nf-dev-csharp"),
	java: nf("nf-dev-java"),
	kotlin: nf("nf-dev-kotlin"),
	swift: nf("nf-dev-swift"),
	ruby: nf("nf-dev-ruby"),
	eruby: nf("nf-dev-ruby"),
	php: nf("nf-dev-php"),
	html: nf("nf-dev-html5"),
	css: nf("nf-dev-css3"),
	scss: nf("nf-dev-sass"),
	sass: nf("nf-dev-sass"),
	less: nf("nf-dev-less"),
	stylus: nf("nf-dev-stylus"),
	json: nf("nf-dev-json"),
	jsonc: nf("nf-dev-json"),
	json5: nf("nf-dev-json"),
	yaml: nf("nf-dev-yaml"),
	toml: nf("nf-custom-toml"),
	markdown: nf("nf-dev-markdown"),
	mdx: nf("nf-dev-markdown"),
	sh: nf("nf-seti-shell"),
	bash: nf("nf-dev-bash"),
	zsh: nf("nf-seti-shell"),
	ksh: nf("nf-seti-shell"),
	shellscript: nf("nf-dev-bash"),
	fish: nf("nf-fa-fish"),
	ps1: nf("nf-dev-powershell"),
	powershell: nf("nf-dev-powershell"),
	bat: nf("nf-custom-msdos"),
	dosbatch: nf("nf-custom-msdos"),
	vim: nf("nf-dev-vim"),
	sql: nf("nf-dev-database"),
	mysql: nf("nf-dev-mysql"),
	plsql: nf("nf-dev-database"),
	pgsql: nf("nf-dev-postgresql"),
	dockerfile: nf("nf-dev-docker"),
	dockercompose: nf("nf-dev-docker"),
	make: nf("nf-seti-makefile"),
	makefile: nf("nf-seti-makefile"),
	cmake: nf("nf-dev-cmake"),
	elixir: nf("nf-dev-elixir"),
	heex: nf("nf-dev-elixir"),
	erlang: nf("nf-dev-erlang"),
	haskell: nf("nf-dev-haskell"),
	ocaml: nf("nf-dev-ocaml"),
	scala: nf("nf-dev-scala"),
	clojure: nf("nf-dev-clojure"),
	dart: nf("nf-dev-dart"),
	zig: nf("nf-dev-zig"),
	nix: nf("nf-dev-nixos"),
	r: nf("nf-dev-r"),
	rmd: nf("nf-dev-r"),
	julia: nf("nf-dev-julia"),
	perl: nf("nf-dev-perl"),
	vue: nf("nf-dev-vuejs"),
	svelte: nf("nf-dev-svelte"),
	astro: nf("nf-dev-astro"),
	tex: nf("nf-dev-tex"),
	plaintex: nf("nf-dev-tex"),
	latex: nf("nf-dev-latex"),
	bibtex: nf("nf-dev-tex"),
	graphql: nf("nf-dev-graphql"),
	proto: nf("nf-dev-grpc"), // protobuf: gRPC's interface language
	proto3: nf("nf-dev-grpc"),
	terraform: nf("nf-dev-terraform"),
	hcl: nf("nf-dev-terraform"),
	xml: nf("nf-dev-xml"),
	xsd: nf("nf-dev-xml"),
	svg: nf("nf-seti-svg"),
	gitcommit: nf("nf-dev-git_commit"),
	"git-commit": nf("nf-dev-git_commit"),
	gitrebase: nf("nf-dev-git"),
	"git-rebase": nf("nf-dev-git"),
	gitconfig: nf("nf-dev-git"),
	gitignore: nf("nf-seti-git_ignore"),
	ignore: nf("nf-seti-git_ignore"),
	diff: nf("nf-cod-diff"),
	fsharp: nf("nf-dev-fsharp"),
	objc: nf("nf-dev-objectivec"),
	"objective-c": nf("nf-dev-objectivec"),
	d: nf("nf-dev-dlang"),
	elm: nf("nf-dev-elm"),
	crystal: nf("nf-dev-crystal"),
	nim: nf("nf-dev-nim"),
	fortran: nf("nf-dev-fortran"),
	groovy: nf("nf-dev-groovy"),
	gradle: nf("nf-dev-gradle"),
	haxe: nf("nf-dev-haxe"),
	coffee: nf("nf-dev-coffeescript"),
	coffeescript: nf("nf-dev-coffeescript"),
	solidity: nf("nf-dev-solidity"),
	prisma: nf("nf-dev-prisma"),
	matlab: nf("nf-dev-matlab"),
	csv: nf("nf-seti-csv"),
	text: nf("nf-seti-text"),
	plaintext: nf("nf-seti-text"),
	lisp: nf("nf-custom-common_lisp"),
	scheme: nf("nf-custom-scheme"),
	fennel: nf("nf-custom-fennel"),
	asm: nf("nf-custom-asm"),
	v: nf("nf-custom-v_lang"),
	ada: nf("nf-custom-ada"),
	org: nf("nf-custom-orgmode"),
	norg: nf("nf-dev-norg"),
	ini: nf("nf-seti-config"),
	dosini: nf("nf-seti-config"),
	properties: nf("nf-seti-config"),
	conf: nf("nf-seti-config"),
	editorconfig: nf("nf-seti-editorconfig"),
	ipynb: nf("nf-dev-jupyter"),
	handlebars: nf("nf-dev-handlebars"),
	pug: nf("nf-seti-pug"),
	jade: nf("nf-seti-pug"),
	twig: nf("nf-seti-twig"),
	liquid: nf("nf-seti-liquid"),
	jinja: nf("nf-seti-jinja"),
	vb: nf("nf-dev-visualbasic"),
	purescript: nf("nf-dev-purescript"),
	prolog: nf("nf-dev-prolog"),
	wat: nf("nf-dev-wasm"),
	vala: nf("nf-dev-vala"),
	awk: nf("nf-dev-awk"),
};

export interface PillInput {
	app: string;
	product?: string;
	language: string | null;
	file: string | null;
}

/**
 * The language id for a buffer: `language` when it has a glyph, else the one its
 * file name or extension implies, else `language` as reported (an id without a
 * glyph), else null. Empty strings count as null (nvim's filetype for unknown).
 */
export function languageOf(language: string | null, file: string | null): string | null {
	const reported = language === null || language.trim() === "" ? null : language;
	if (reported !== null && LANGUAGE_GLYPHS[reported.toLowerCase()] !== undefined) return reported.toLowerCase();
	return (file === null ? null : languageOfFile(file)) ?? reported;
}

/** The editor glyph: product first (exact, then by name prefix, e.g. "PyCharm Community Edition"), then app, then generic. */
export function editorGlyph(app: string, product?: string): string {
	const byProduct = product === undefined ? undefined : lookUpProduct(product);
	if (byProduct !== undefined) return PRODUCT_GLYPHS[byProduct] ?? GENERIC_EDITOR_GLYPH;
	return APP_GLYPHS[app.toLowerCase()] ?? GENERIC_EDITOR_GLYPH;
}

/**
 * Two glyphs (editor + language), editor glyph only for an unnamed buffer,
 * DISCONNECTED_GLYPH for null (dead or disconnected). plain=true gives an
 * ASCII/text fallback for terminals without a Nerd Font, e.g. "nvim ts",
 * "nvim", "ide -".
 */
export function formatPill(input: PillInput | null, opts?: { plain?: boolean }): string {
	const plain = opts?.plain === true;
	if (input === null) return plain ? "ide -" : DISCONNECTED_GLYPH;
	const editor = plain ? plainEditorLabel(input.app, input.product) : editorGlyph(input.app, input.product);
	if (input.file === null) return editor;
	const language = languageOf(input.language, input.file);
	if (plain) return language === null ? `${editor} ?` : `${editor}${PILL_SEPARATOR}${plainLanguageLabel(language)}`;
	const languageGlyph = language === null ? undefined : LANGUAGE_GLYPHS[language.toLowerCase()];
	return `${editor}${PILL_SEPARATOR}${languageGlyph ?? GENERIC_FILE_GLYPH}`;
}

function lookUpProduct(product: string): string | undefined {
	if (PRODUCT_GLYPHS[product] !== undefined) return product;
	const wanted = normaliseName(product);
	if (wanted === "") return undefined;
	let best: string | undefined;
	for (const known of Object.keys(PRODUCT_GLYPHS)) {
		const key = normaliseName(known);
		if (wanted.startsWith(key) && (best === undefined || key.length > normaliseName(best).length)) best = known;
	}
	return best;
}

function normaliseName(name: string): string {
	return name.toLowerCase().replace(/[^a-z0-9]/g, "");
}

function plainEditorLabel(app: string, product?: string): string {
	const known = product === undefined ? undefined : lookUpProduct(product);
	if (known !== undefined) return PRODUCT_LABELS[known] ?? normaliseName(known);
	return toAsciiLabel(app) || "ide";
}

/** The first extension listed for the language ("ts", "py", "tsx"), else the id itself. */
function plainLanguageLabel(language: string): string {
	const id = language.toLowerCase();
	const extension = Object.keys(EXTENSION_LANGUAGES).find((key) => EXTENSION_LANGUAGES[key] === id);
	return extension === undefined ? toAsciiLabel(id) || "?" : extension.slice(1);
}

/**
 * Editor-supplied text in the footer: printable ASCII only, no spaces, short. Not inert.ts's rule on
 * purpose: inert escapes the unsafe characters so a text still says what it said (`\u202e`), which in a
 * 16-cell label would be noise; the plain pill is for terminals without a Nerd Font, where only printable
 * ASCII is sure to take one cell each. This allow-list is stricter than inert's set (every character inert
 * escapes lies outside U+0021-007E) and drops what it does not allow.
 */
function toAsciiLabel(text: string): string {
	return text
		.toLowerCase()
		.replace(/[^\x21-\x7e]/g, "")
		.slice(0, 16);
}
