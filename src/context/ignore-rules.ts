/**
 * Which editor files must never reach the model: the spec's ignore rules
 * (global `<agent-dir>/ide-context.ignore`, then project
 * `<pi-cwd>/.pi/ide-context.local.ignore`, gitignore syntax, via `ignore`).
 * Inside pi's cwd both files apply in that order, relative to pi's cwd, so the
 * project can add exclusions or negate global ones. Outside pi's cwd only the
 * global rules apply, relative to the editor's cwd, or to the filesystem root
 * when the file is outside that too. The verdict names the rules file, line and
 * pattern that decided it, for `/ide status`. Pure: the caller reads the files.
 * Matching is case-insensitive (node-ignore's default, and git's on macOS): for
 * a privacy filter, excluding `.ENV` along with `.env` is the safe side.
 */
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { isInside } from "../protocol/paths.ts";

export interface RulesFile {
	/** For diagnostics only. */
	path: string;
	text: string;
}

type RulesKind = "global" | "project";

interface RuleOrigin {
	rulesFile: string;
	line: number;
	pattern: string;
}

const compiled: unique symbol = Symbol("compiled ignore rules");

/** Compiled rules: opaque apart from a summary of the files they came from. */
export interface IgnoreRules {
	/** The rules files that were given, in evaluation order, with their rule-line counts (for `/ide status`). */
	readonly files: readonly { path: string; kind: RulesKind; rules: number }[];
	readonly [compiled]: { all: Ignore; globalOnly: Ignore; origins: readonly RuleOrigin[] };
}

export type IgnoreVerdict =
	| { ignored: false }
	| {
			ignored: true;
			/** The rules file whose pattern decided it, as given in `RulesFile.path`. */
			rulesFile: string;
			/** The deciding pattern as written (line ending and trailing spaces dropped). */
			pattern: string;
			/** 1-based line of the pattern in its rules file. */
			line: number;
	  };

const NOT_IGNORED: IgnoreVerdict = { ignored: false };

export interface CompileOptions {
	/**
	 * Whether pi trusts the project. An untrusted checkout's rules file may add
	 * exclusions but never negate (`!pattern`): a committed `!.env` must not
	 * re-include what the user excluded globally. Default: trusted.
	 */
	projectTrusted?: boolean;
}

/** Compile the global and project rules files (null = missing = no rules), global first. */
export function compileIgnoreRules(
	global: RulesFile | null,
	project: RulesFile | null,
	options: CompileOptions = {},
): IgnoreRules {
	const origins: RuleOrigin[] = [];
	const files: { path: string; kind: RulesKind; rules: number }[] = [];
	const globalPatterns = global === null ? undefined : toPatterns(global, origins, { negations: true });
	const projectPatterns =
		project === null ? undefined : toPatterns(project, origins, { negations: options.projectTrusted !== false });
	if (global !== null) files.push({ path: global.path, kind: "global", rules: globalPatterns?.rules ?? 0 });
	if (project !== null) files.push({ path: project.path, kind: "project", rules: projectPatterns?.rules ?? 0 });
	// One add() per file: node-ignore strips a byte-order mark only from the first entry of each, which
	// toPatterns makes the file's first line, as git does.
	const all = createMatcher()
		.add(globalPatterns?.patterns ?? [])
		.add(projectPatterns?.patterns ?? []);
	const globalOnly = createMatcher().add(globalPatterns?.patterns ?? []);
	return { files, [compiled]: { all, globalOnly, origins } };
}

/**
 * Decide whether an editor file is excluded. `file` is absolute, or relative to
 * `editorCwd`; `piCwd` is absolute. Paths are compared as given: pass real paths
 * when the two cwds may differ only by symlinks.
 */
export function checkIgnored(
	rules: IgnoreRules,
	file: string,
	where: { piCwd: string; editorCwd: string },
): IgnoreVerdict {
	const { all, globalOnly, origins } = rules[compiled];
	let absolute: string;
	if (path.isAbsolute(file)) absolute = path.resolve(file);
	else if (path.isAbsolute(where.editorCwd)) absolute = path.resolve(where.editorCwd, file);
	else return decide(globalOnly, toRelativeAsIs(file), origins);

	const piCwd = path.isAbsolute(where.piCwd) ? path.resolve(where.piCwd) : null;
	if (piCwd !== null && isInside(absolute, piCwd)) {
		return decide(all, path.relative(piCwd, absolute), origins);
	}
	const editorCwd = path.isAbsolute(where.editorCwd) ? path.resolve(where.editorCwd) : null;
	const base = editorCwd !== null && isInside(absolute, editorCwd) ? editorCwd : path.parse(absolute).root;
	return decide(globalOnly, path.relative(base, absolute), origins);
}

function createMatcher(): Ignore {
	// allowRelativePaths: an unresolvable reported path such as `../x` is matched as is instead of throwing.
	return ignore({ ignoreCase: true, allowRelativePaths: true });
}

const BOM = "\uFEFF";

/**
 * One pattern object per line, tagged with its origin. Split on LF only: node-ignore
 * then drops at most one CR per line and trailing unescaped spaces, as git does.
 * A byte-order mark counts only at byte 0 of the file (git's rule): the first line
 * is always entry 0, so node-ignore strips it there and nowhere else; a BOM before
 * a later line stays part of that pattern and cannot turn it into a negation.
 * Without `negations`, lines that are negations once the BOM is gone are dropped.
 * Blank lines and comments are not rules; apart from line 1 they are left out.
 */
function toPatterns(
	file: RulesFile,
	origins: RuleOrigin[],
	options: { negations: boolean },
): { patterns: { pattern: string; mark: string }[]; rules: number } {
	const patterns: { pattern: string; mark: string }[] = [];
	let rules = 0;
	file.text.split("\n").forEach((raw, index) => {
		const line = raw.replace(/\r$/, "");
		const pattern = index === 0 && line.startsWith(BOM) ? line.slice(1) : line;
		const isRule = pattern.trim() !== "" && !pattern.startsWith("#");
		const dropped = isRule && !options.negations && pattern.startsWith("!");
		if (index > 0 && (dropped || !isRule)) return;
		// Line 1 always holds entry 0 (a dropped one as a comment), so no later line's BOM is stripped.
		patterns.push({ pattern: dropped ? "#" : raw, mark: String(origins.length) });
		if (dropped) return;
		origins.push({ rulesFile: file.path, line: index + 1, pattern: pattern.replace(/(?<!\\) +$/, "") });
		if (isRule) rules++;
	});
	return { patterns, rules };
}

function decide(matcher: Ignore, relative: string, origins: readonly RuleOrigin[]): IgnoreVerdict {
	if (relative === "" || relative === ".") return NOT_IGNORED;
	const result = matcher.checkIgnore(relative);
	if (!result.ignored) return NOT_IGNORED;
	const origin = origins[Number(result.rule?.mark)];
	// Every rule carries a mark from toPatterns; the fallback only keeps the verdict honest if that ever breaks.
	return origin === undefined
		? { ignored: true, rulesFile: "(unknown)", pattern: result.rule?.pattern ?? "", line: 0 }
		: { ignored: true, ...origin };
}

function toRelativeAsIs(file: string): string {
	return path.normalize(file).replace(/^(\.\/)+/, "");
}
