import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkIgnored, compileIgnoreRules, type IgnoreVerdict } from "../../src/ignore-rules.ts";

const G = "~/.pi/agent/ide-context.ignore";
const P = "/p/.pi/ide-context.local.ignore";

/** [rules file, line, pattern] of the deciding rule, or false for "not ignored". */
type Expected = false | [string, number, string];

const cases: [string, string | null, string | null, string, string, string, Expected][] = [
	// description, global rules, project rules, file, pi cwd, editor cwd, expected
	["no rules files", null, null, "/p/.env", "/p", "/p", false],
	["empty rules files", "", "\n\n", "/p/.env", "/p", "/p", false],
	["global basename rule", "*.env\n", null, "/p/.env", "/p", "/p", [G, 1, "*.env"]],
	["global rule, nested file", "*.env", null, "/p/a/b/prod.env", "/p", "/p", [G, 1, "*.env"]],
	["project rule", null, "secret/", "/p/secret/key.pem", "/p", "/p", [P, 1, "secret/"]],
	["project adds to global", "*.env", "*.pem", "/p/k.pem", "/p", "/p", [P, 1, "*.pem"]],
	["project negates global", "*.env", "!example.env", "/p/example.env", "/p", "/p", false],
	["project negation leaves others", "*.env", "!example.env", "/p/prod.env", "/p", "/p", [G, 1, "*.env"]],
	["global cannot negate project (order)", "!*.env", "*.env", "/p/a.env", "/p", "/p", [P, 1, "*.env"]],
	["last matching rule wins within a file", "*.env\n!a.env\na.env", null, "/p/a.env", "/p", "/p", [G, 3, "a.env"]],
	[
		"negation cannot re-include below an excluded dir",
		"secret/",
		"!secret/ok.txt",
		"/p/secret/ok.txt",
		"/p",
		"/p",
		[G, 1, "secret/"],
	],
	["negated dir then file inside it", "build/", "!build/", "/p/build/out.js", "/p", "/p", false],
	["anchored rule relative to pi cwd", "/top.txt", null, "/p/top.txt", "/p", "/p", [G, 1, "/top.txt"]],
	["anchored rule does not match deeper", "/top.txt", null, "/p/sub/top.txt", "/p", "/p", false],
	["middle slash anchors", "docs/*.md", null, "/p/docs/a.md", "/p", "/p", [G, 1, "docs/*.md"]],
	["middle slash anchors, deeper no", "docs/*.md", null, "/p/x/docs/a.md", "/p", "/p", false],
	["double star", "**/private/**", null, "/p/a/private/b/c.txt", "/p", "/p", [G, 1, "**/private/**"]],
	["comments and blank lines", "# a comment\n\n*.key\n", null, "/p/id.key", "/p", "/p", [G, 3, "*.key"]],
	["comment does not match", "#id.key", null, "/p/#id.key", "/p", "/p", false],
	["escaped hash matches", "\\#id.key", null, "/p/#id.key", "/p", "/p", [G, 1, "\\#id.key"]],
	["escaped bang matches literally", "\\!x", null, "/p/!x", "/p", "/p", [G, 1, "\\!x"]],
	["CRLF line endings", "a.txt\r\nb.txt\r\n", null, "/p/b.txt", "/p", "/p", [G, 2, "b.txt"]],
	["trailing spaces trimmed", "a.txt   \n", null, "/p/a.txt", "/p", "/p", [G, 1, "a.txt"]],
	["escaped trailing space kept", "a\\ \n", null, "/p/a ", "/p", "/p", [G, 1, "a\\ "]],
	["byte-order mark at the start", "\uFEFF*.env", null, "/p/.env", "/p", "/p", [G, 1, "*.env"]],
	["case-insensitive", "*.env", null, "/p/PROD.ENV", "/p", "/p", [G, 1, "*.env"]],
	["trailing slash on pi cwd", "*.env", null, "/p/.env", "/p/", "/p", [G, 1, "*.env"]],
	["pi cwd itself is never ignored", "*", null, "/p", "/p", "/p", false],
	["relative file resolves against editor cwd", null, "notes/", "notes/a.md", "/p", "/p", [P, 1, "notes/"]],
	["relative file with dot segments", null, "/notes/a.md", "./x/../notes/a.md", "/p", "/p", [P, 1, "/notes/a.md"]],
	// Outside pi's cwd: global rules only, relative to the editor cwd, else to the filesystem root.
	["outside: project rules do not apply", null, "*.md", "/vault/n.md", "/p", "/vault", false],
	["outside: global relative to editor cwd", "/Notes/", null, "/vault/Notes/n.md", "/p", "/vault", [G, 1, "/Notes/"]],
	["outside: anchored global vs editor cwd", "/n.md", null, "/vault/Notes/n.md", "/p", "/vault", false],
	["outside: relative file resolves in vault", "/Notes/", null, "Notes/n.md", "/p", "/vault", [G, 1, "/Notes/"]],
	["outside both: relative to root", "/etc/", null, "/etc/passwd", "/p", "/vault", [G, 1, "/etc/"]],
	["outside both: basename rule", "*.env", "!*.env", "/srv/.env", "/p", "/vault", [G, 1, "*.env"]],
	["outside: project negation cannot re-include", "*.env", "!*.env", "/vault/.env", "/p", "/vault", [G, 1, "*.env"]],
	["sibling with common prefix is outside", "/x.md", "*.md", "/pp/x.md", "/p", "/pp", [G, 1, "/x.md"]],
	["editor cwd equal to the file", "*", null, "/vault", "/p", "/vault", false],
	// Unresolvable: a relative path and an editor cwd that is not absolute.
	["unresolved: global against the path as is", "/Notes/", "*.md", "Notes/n.md", "/p", "vault", [G, 1, "/Notes/"]],
	["unresolved: project rules do not apply", null, "*.md", "Notes/n.md", "/p", "", false],
	["unresolved: leading ./ dropped", "/Notes/n.md", null, "./Notes/n.md", "/p", "", [G, 1, "/Notes/n.md"]],
	["unresolved: escaping path does not throw", "*.env", null, "../x.env", "/p", "", [G, 1, "*.env"]],
];

function summarise(verdict: IgnoreVerdict): Expected {
	return verdict.ignored ? [verdict.rulesFile, verdict.line, verdict.pattern] : false;
}

describe("checkIgnored", () => {
	for (const [description, global, project, file, piCwd, editorCwd, expected] of cases) {
		it(description, () => {
			const rules = compileIgnoreRules(
				global === null ? null : { path: G, text: global },
				project === null ? null : { path: P, text: project },
			);
			assert.deepEqual(summarise(checkIgnored(rules, file, { piCwd, editorCwd })), expected);
		});
	}
});

describe("compileIgnoreRules summary", () => {
	const summaries: [string, string | null, string | null, { path: string; kind: string; rules: number }[]][] = [
		["none", null, null, []],
		["comments and blanks are not rules", "# c\n\n*.env\r\n  \n", null, [{ path: G, kind: "global", rules: 1 }]],
		[
			"both, in order",
			"a\nb",
			"!a",
			[
				{ path: G, kind: "global", rules: 2 },
				{ path: P, kind: "project", rules: 1 },
			],
		],
	];
	for (const [description, global, project, expected] of summaries) {
		it(description, () => {
			const rules = compileIgnoreRules(
				global === null ? null : { path: G, text: global },
				project === null ? null : { path: P, text: project },
			);
			assert.deepEqual(rules.files, expected);
		});
	}
});

describe("an untrusted project cannot re-include a globally ignored file", () => {
	const BOM = "\uFEFF";
	const where = { piCwd: "/p", editorCwd: "/p" };
	// [description, project rules text, trusted, file, ignored?]
	const cases: [string, string, boolean, string, boolean][] = [
		["plain negation, trusted: re-included", "!.env", true, "/p/.env", false],
		["plain negation, untrusted: still ignored", "!.env", false, "/p/.env", true],
		["BOM then negation on line 1, untrusted: still ignored", `${BOM}!.env`, false, "/p/.env", true],
		["BOM then negation on line 1, trusted: re-included", `${BOM}!.env`, true, "/p/.env", false],
		["CRLF negation, untrusted: still ignored", "!.env\r\n", false, "/p/.env", true],
		["negation after a comment, untrusted: still ignored", "# local\n!.env", false, "/p/.env", true],
		["BOM before a later line is no negation, trusted", `# x\n${BOM}!.env`, true, "/p/.env", true],
		["BOM before a later line is no negation, untrusted", `${BOM}!a\n${BOM}!.env`, false, "/p/.env", true],
		["untrusted project may still add exclusions", "*.log", false, "/p/x.log", true],
		["escaped \\! is a pattern, not a negation", "\\!important", false, "/p/!important", true],
	];
	for (const [description, project, trusted, file, expected] of cases) {
		it(description, () => {
			const rules = compileIgnoreRules(
				{ path: G, text: ".env\n" },
				{ path: P, text: project },
				{ projectTrusted: trusted },
			);
			assert.equal(checkIgnored(rules, file, where).ignored, expected);
		});
	}
});
