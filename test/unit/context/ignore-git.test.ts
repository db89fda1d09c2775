/**
 * Differential test: checkIgnored against real `git check-ignore` on a seeded,
 * generated set of rule lists and paths inside pi's cwd. Each rule set becomes
 * the .gitignore (global lines, then project lines) of its own subdirectory
 * `set-N/` of one throwaway repository; a .gitignore applies relative to its own
 * directory exactly as a top-level one does, so a single batched `git
 * check-ignore --no-index --stdin -z -v --non-matching` call checks every set
 * (one spawn costs ~30-50 ms here; one per set took 6 s). git runs with
 * core.ignorecase=true because checkIgnored matches case-insensitively.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { checkIgnored, compileIgnoreRules } from "../../../src/context/ignore-rules.ts";
import { mulberry32 as createRandom } from "../../helpers/seeded.ts";

const RULE_SETS = 300;
const PATHS_PER_SET = 60;
const SEED = 0x1de_c0de;

const DIRS = ["a", "b", "src", "build", "node_modules", ".git-like", ".hidden", "Docs", "ab", "a b", "x.d"];
const FILES = [
	"x.env",
	".env",
	".env.local",
	"a",
	"b",
	"abc",
	"main.ts",
	"Main.TS",
	"#notes",
	"!bang",
	"key.pem",
	"readme.md",
	"a b.txt",
	"c?d",
];
const SEGMENTS = [
	"a",
	"b",
	"src",
	"build",
	".hidden",
	"docs",
	"*",
	"**",
	"*.env",
	".env*",
	"?",
	"a?c",
	"[abc]",
	"[a-c]*",
	"[!a]*",
	"*.[mt]s",
	"main.*",
	"x.d",
	"key.pem",
	"a b*",
	"c\\?d",
];

function generateRule(random: () => number): string {
	const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
	const roll = random();
	if (roll < 0.04) return "# comment";
	if (roll < 0.07) return "";
	if (roll < 0.1) return pick(["\\#notes", "\\!bang", "\\#*", "\\!*"]);
	const depth = 1 + Math.floor(random() * random() * 3);
	const parts = Array.from({ length: depth }, () => pick(SEGMENTS));
	let rule = parts.join("/");
	if (random() < 0.15) rule = `/${rule}`;
	if (random() < 0.15) rule = `${rule}/`;
	if (random() < 0.1) rule = `**/${rule.replace(/^\//, "")}`;
	if (random() < 0.2) rule = `!${rule}`;
	if (random() < 0.05) rule = `${rule}  `;
	return rule;
}

function generatePath(random: () => number): string {
	const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
	const depth = Math.floor(random() * 4);
	return [...Array.from({ length: depth }, () => pick(DIRS)), pick(FILES)].join("/");
}

interface RuleSet {
	global: string[];
	project: string[];
	paths: string[];
}

function generateRuleSets(): RuleSet[] {
	const random = createRandom(SEED);
	return Array.from({ length: RULE_SETS }, () => {
		const global = Array.from({ length: 1 + Math.floor(random() * 5) }, () => generateRule(random));
		const project = Array.from({ length: Math.floor(random() * 5) }, () => generateRule(random));
		const paths = [...new Set(Array.from({ length: PATHS_PER_SET }, () => generatePath(random)))];
		return { global, project, paths };
	});
}

/**
 * git's verdict for every path of every set, keyed `set-N/<path>`: null when not
 * ignored, else the 1-based line of the deciding rule in that set's .gitignore.
 */
function runGitCheckIgnore(repo: string, env: NodeJS.ProcessEnv, sets: readonly RuleSet[]): Map<string, number | null> {
	const queries: string[] = [];
	for (const [index, set] of sets.entries()) {
		mkdirSync(path.join(repo, `set-${index}`));
		writeFileSync(path.join(repo, `set-${index}`, ".gitignore"), `${[...set.global, ...set.project].join("\n")}\n`);
		for (const file of set.paths) queries.push(`set-${index}/${file}`);
	}
	const result = spawnSync(
		"git",
		["-c", "core.ignorecase=true", "check-ignore", "--no-index", "--stdin", "-z", "-v", "--non-matching"],
		{ cwd: repo, env, input: `${queries.join("\0")}\0`, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
	);
	if (result.status !== 0 && result.status !== 1) throw new Error(`git check-ignore failed: ${result.stderr}`);
	const fields = result.stdout.split("\0");
	const verdicts = new Map<string, number | null>();
	for (let i = 0; i + 3 < fields.length; i += 4) {
		const [, line = "", pattern = "", file = ""] = fields.slice(i, i + 4);
		// -v also reports paths that matched a negated pattern: those are not ignored.
		verdicts.set(file, pattern === "" || pattern.startsWith("!") ? null : Number(line));
	}
	return verdicts;
}

describe("checkIgnored agrees with git check-ignore", () => {
	let root = "";
	let repo = "";
	let git = new Map<string, number | null>();
	const ruleSets = generateRuleSets();
	before(() => {
		root = mkdtempSync(path.join(tmpdir(), "pi-ide-ignore-git-"));
		repo = path.join(root, "repo");
		mkdirSync(repo);
		// Keep the user's and the system's git configuration (and global excludes file) out of it.
		const env = {
			PATH: process.env["PATH"],
			HOME: root,
			XDG_CONFIG_HOME: root,
			GIT_CONFIG_NOSYSTEM: "1",
			GIT_CONFIG_GLOBAL: path.join(root, "gitconfig"),
		};
		writeFileSync(path.join(root, "gitconfig"), "");
		const init = spawnSync("git", ["init", "-q", repo], { env, encoding: "utf8" });
		assert.equal(init.status, 0, init.stderr);
		// An empty info/exclude, so the generated .gitignore is the only source of rules.
		writeFileSync(path.join(repo, ".git", "info", "exclude"), "");
		git = runGitCheckIgnore(repo, env, ruleSets);
	});
	after(() => rmSync(root, { recursive: true, force: true }));

	for (const [index, set] of ruleSets.entries()) {
		it(`rule set ${index}: ${JSON.stringify([...set.global, "|", ...set.project])}`, () => {
			const rules = compileIgnoreRules(
				{ path: "global", text: set.global.join("\n") },
				{ path: "project", text: set.project.join("\n") },
			);
			const mismatches: string[] = [];
			for (const file of set.paths) {
				const expected = git.get(`set-${index}/${file}`);
				assert.notEqual(expected, undefined, `git said nothing about ${file}`);
				const verdict = checkIgnored(rules, `/p/${file}`, { piCwd: "/p", editorCwd: "/p" });
				const line = verdict.ignored ? verdict.line + (verdict.rulesFile === "project" ? set.global.length : 0) : null;
				if (line !== expected) mismatches.push(`${file}: git line ${expected}, ours ${line}`);
			}
			assert.deepEqual(mismatches, []);
		});
	}
});
