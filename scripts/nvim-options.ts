/**
 * The Neovim client's options are described once, in editors/nvim/lua/pi-ide/config.lua (`M.options`). This
 * script writes the generated parts of the docs from it: in editors/nvim/doc/pi-ide.txt the lines between the
 * `*pi-ide-options*` heading and the `*pi-ide-setup()*` tag, in editors/nvim/README.md the lines between the
 * two `options:` HTML comments. It asks a real Neovim for the table (config.lua is Lua), so `nvim` must be on
 * PATH (`NVIM_BIN` overrides).
 *
 *   node scripts/nvim-options.ts          rewrite both docs
 *   node scripts/nvim-options.ts --check  exit 1 when either doc differs from config.lua (npm run check)
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PLUGIN = join(REPO, "editors/nvim");
const HELP = join(PLUGIN, "doc/pi-ide.txt");
const README = join(PLUGIN, "README.md");

export interface OptionDoc {
	name: string;
	default: unknown;
	summary: string;
	doc: string;
}

/** The options table from config.lua, through a headless Neovim. */
export function readOptions(nvim = process.env["NVIM_BIN"] || "nvim"): OptionDoc[] {
	const out = execFileSync(
		nvim,
		[
			"--headless",
			"--clean",
			"--cmd",
			// Load config.lua only: the client itself must not start and write a state file.
			"let g:pi_ide_disable = 1",
			"--cmd",
			`set rtp^=${PLUGIN}`,
			"-c",
			"lua io.stdout:write(vim.json.encode(require('pi-ide.config').doc()))",
			"-c",
			"qa!",
		],
		{ encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
	);
	return JSON.parse(out) as OptionDoc[];
}

/** A Lua literal for a default value. */
function lua(value: unknown): string {
	return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** Greedy word wrap to `width` columns. */
export function wrap(text: string, width: number, indent = ""): string[] {
	const lines: string[] = [];
	let line = "";
	for (const word of text.split(/\s+/).filter(Boolean)) {
		if (line !== "" && indent.length + line.length + 1 + word.length > width) {
			lines.push(indent + line);
			line = word;
		} else {
			line = line === "" ? word : `${line} ${word}`;
		}
	}
	if (line !== "") lines.push(indent + line);
	return lines;
}

/** The `setup({...})` example, one line per option with its summary as a comment, aligned. */
function example(options: OptionDoc[], indent: string): string[] {
	const assigns = options.map((o) => `${o.name} = ${lua(o.default)},`);
	const width = Math.max(...assigns.map((a) => a.length)) + 1;
	return [
		`${indent}require("pi-ide").setup({`,
		...options.map((o, i) => `${indent}  ${(assigns[i] ?? "").padEnd(width)}-- ${o.summary}`),
		`${indent}})`,
	];
}

/** Vimdoc lines from the heading to (not including) the `*pi-ide-setup()*` tag. */
export function renderHelp(options: OptionDoc[]): string[] {
	const lines = ["", "setup() is optional; call it only to change a default: >lua", ...example(options, "    "), "<"];
	for (const o of options) {
		const tag = `*pi-ide-${o.name}*`;
		lines.push("", tag.padStart(78), ...wrap(`\`${o.name}\` (default ${lua(o.default)}): ${o.doc}`, 78));
	}
	lines.push("");
	return lines;
}

/** README lines between the markers. */
export function renderReadme(options: OptionDoc[]): string[] {
	return [
		"",
		"```lua",
		...example(options, ""),
		"```",
		"",
		...options.flatMap((o) =>
			wrap(`- \`${o.name}\` (default \`${lua(o.default)}\`): ${o.doc}`, 108, "").map((l, i) =>
				i === 0 ? l : `  ${l}`,
			),
		),
		"",
	];
}

/** Replace the lines strictly between the first line matching `begin` and the next matching `end`. */
export function splice(text: string, begin: RegExp, end: RegExp, body: string[], what: string): string {
	const lines = text.split("\n");
	const from = lines.findIndex((l) => begin.test(l));
	const to = from < 0 ? -1 : lines.findIndex((l, i) => i > from && end.test(l));
	if (from < 0 || to < 0) throw new Error(`${what}: markers ${begin} ... ${end} not found`);
	return [...lines.slice(0, from + 1), ...body, ...lines.slice(to)].join("\n");
}

const HELP_BEGIN = /\*pi-ide-options\*$/;
const HELP_END = /\*pi-ide-setup\(\)\*$/;
const README_BEGIN = /^<!-- options: generated from lua\/pi-ide\/config\.lua/;
const README_END = /^<!-- options: end -->$/;

function main(): void {
	const check = process.argv.includes("--check");
	const options = readOptions();
	const targets: [string, string][] = [
		[HELP, splice(readFileSync(HELP, "utf8"), HELP_BEGIN, HELP_END, renderHelp(options), HELP)],
		[README, splice(readFileSync(README, "utf8"), README_BEGIN, README_END, renderReadme(options), README)],
	];
	let stale = 0;
	for (const [path, wanted] of targets) {
		if (readFileSync(path, "utf8") === wanted) continue;
		if (check) {
			console.error(
				`${path}: its options section differs from lua/pi-ide/config.lua; run: node scripts/nvim-options.ts`,
			);
			stale++;
		} else {
			writeFileSync(path, wanted);
			console.log(`wrote ${path}`);
		}
	}
	if (stale > 0) process.exit(1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
