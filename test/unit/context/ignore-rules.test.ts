import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkIgnored, compileIgnoreRules, type IgnoreVerdict } from "../../../src/context/ignore-rules.ts";

const G = "~/.pi/agent/ide-context.ignore";
const P = "/p/.pi/ide-context.local.ignore";

/** [rules file, line, pattern] of the deciding rule, or false for "not ignored". */
type Expected = false | [string, number, string];

interface IgnoreCase {
	name: string;
	/** Text of the global rules file (G), absent for none. */
	global?: string;
	/** Text of the project rules file (P), absent for none. */
	project?: string;
	file: string;
	/** Default "/p". */
	piCwd?: string;
	/** Default "/p". */
	editorCwd?: string;
	expected: Expected;
}

const cases: IgnoreCase[] = [
	{ name: "no rules files", file: "/p/.env", expected: false },
	{ name: "empty rules files", global: "", project: "\n\n", file: "/p/.env", expected: false },
	{ name: "global basename rule", global: "*.env\n", file: "/p/.env", expected: [G, 1, "*.env"] },
	{ name: "global rule, nested file", global: "*.env", file: "/p/a/b/prod.env", expected: [G, 1, "*.env"] },
	{ name: "project rule", project: "secret/", file: "/p/secret/key.pem", expected: [P, 1, "secret/"] },
	{ name: "project adds to global", global: "*.env", project: "*.pem", file: "/p/k.pem", expected: [P, 1, "*.pem"] },
	{ name: "project negates global", global: "*.env", project: "!example.env", file: "/p/example.env", expected: false },
	{
		name: "project negation leaves others",
		global: "*.env",
		project: "!example.env",
		file: "/p/prod.env",
		expected: [G, 1, "*.env"],
	},
	{
		name: "global cannot negate project (order)",
		global: "!*.env",
		project: "*.env",
		file: "/p/a.env",
		expected: [P, 1, "*.env"],
	},
	{
		name: "last matching rule wins within a file",
		global: "*.env\n!a.env\na.env",
		file: "/p/a.env",
		expected: [G, 3, "a.env"],
	},
	{
		name: "negation cannot re-include below an excluded dir",
		global: "secret/",
		project: "!secret/ok.txt",
		file: "/p/secret/ok.txt",
		expected: [G, 1, "secret/"],
	},
	{
		name: "negated dir then file inside it",
		global: "build/",
		project: "!build/",
		file: "/p/build/out.js",
		expected: false,
	},
	{ name: "anchored rule relative to pi cwd", global: "/top.txt", file: "/p/top.txt", expected: [G, 1, "/top.txt"] },
	{ name: "anchored rule does not match deeper", global: "/top.txt", file: "/p/sub/top.txt", expected: false },
	{ name: "middle slash anchors", global: "docs/*.md", file: "/p/docs/a.md", expected: [G, 1, "docs/*.md"] },
	{ name: "middle slash anchors, deeper no", global: "docs/*.md", file: "/p/x/docs/a.md", expected: false },
	{ name: "double star", global: "**/private/**", file: "/p/a/private/b/c.txt", expected: [G, 1, "**/private/**"] },
	{ name: "comments and blank lines", global: "# a comment\n\n*.key\n", file: "/p/id.key", expected: [G, 3, "*.key"] },
	{ name: "comment does not match", global: "#id.key", file: "/p/#id.key", expected: false },
	{ name: "escaped hash matches", global: "\\#id.key", file: "/p/#id.key", expected: [G, 1, "\\#id.key"] },
	{ name: "escaped bang matches literally", global: "\\!x", file: "/p/!x", expected: [G, 1, "\\!x"] },
	{ name: "CRLF line endings", global: "a.txt\r\nb.txt\r\n", file: "/p/b.txt", expected: [G, 2, "b.txt"] },
	{ name: "trailing spaces trimmed", global: "a.txt   \n", file: "/p/a.txt", expected: [G, 1, "a.txt"] },
	{ name: "escaped trailing space kept", global: "a\\ \n", file: "/p/a ", expected: [G, 1, "a\\ "] },
	{ name: "byte-order mark at the start", global: "\uFEFF*.env", file: "/p/.env", expected: [G, 1, "*.env"] },
	{ name: "case-insensitive", global: "*.env", file: "/p/PROD.ENV", expected: [G, 1, "*.env"] },
	{ name: "trailing slash on pi cwd", global: "*.env", file: "/p/.env", piCwd: "/p/", expected: [G, 1, "*.env"] },
	{ name: "pi cwd itself is never ignored", global: "*", file: "/p", expected: false },
	{
		name: "relative file resolves against editor cwd",
		project: "notes/",
		file: "notes/a.md",
		expected: [P, 1, "notes/"],
	},
	{
		name: "relative file with dot segments",
		project: "/notes/a.md",
		file: "./x/../notes/a.md",
		expected: [P, 1, "/notes/a.md"],
	},
	// Outside pi's cwd: global rules only, relative to the editor cwd, else to the filesystem root.
	{
		name: "outside: project rules do not apply",
		project: "*.md",
		file: "/vault/n.md",
		editorCwd: "/vault",
		expected: false,
	},
	{
		name: "outside: global relative to editor cwd",
		global: "/Notes/",
		file: "/vault/Notes/n.md",
		editorCwd: "/vault",
		expected: [G, 1, "/Notes/"],
	},
	{
		name: "outside: anchored global vs editor cwd",
		global: "/n.md",
		file: "/vault/Notes/n.md",
		editorCwd: "/vault",
		expected: false,
	},
	{
		name: "outside: relative file resolves in vault",
		global: "/Notes/",
		file: "Notes/n.md",
		editorCwd: "/vault",
		expected: [G, 1, "/Notes/"],
	},
	{
		name: "outside both: relative to root",
		global: "/etc/",
		file: "/etc/passwd",
		editorCwd: "/vault",
		expected: [G, 1, "/etc/"],
	},
	{
		name: "outside both: basename rule",
		global: "*.env",
		project: "!*.env",
		file: "/srv/.env",
		editorCwd: "/vault",
		expected: [G, 1, "*.env"],
	},
	{
		name: "outside: project negation cannot re-include",
		global: "*.env",
		project: "!*.env",
		file: "/vault/.env",
		editorCwd: "/vault",
		expected: [G, 1, "*.env"],
	},
	{
		name: "sibling with common prefix is outside",
		global: "/x.md",
		project: "*.md",
		file: "/pp/x.md",
		editorCwd: "/pp",
		expected: [G, 1, "/x.md"],
	},
	{ name: "editor cwd equal to the file", global: "*", file: "/vault", editorCwd: "/vault", expected: false },
	// Unresolvable: a relative path and an editor cwd that is not absolute.
	{
		name: "unresolved: global against the path as is",
		global: "/Notes/",
		project: "*.md",
		file: "Notes/n.md",
		editorCwd: "vault",
		expected: [G, 1, "/Notes/"],
	},
	{
		name: "unresolved: project rules do not apply",
		project: "*.md",
		file: "Notes/n.md",
		editorCwd: "",
		expected: false,
	},
	{
		name: "unresolved: leading ./ dropped",
		global: "/Notes/n.md",
		file: "./Notes/n.md",
		editorCwd: "",
		expected: [G, 1, "/Notes/n.md"],
	},
	{
		name: "unresolved: escaping path does not throw",
		global: "*.env",
		file: "../x.env",
		editorCwd: "",
		expected: [G, 1, "*.env"],
	},
];

function summarise(verdict: IgnoreVerdict): Expected {
	return verdict.ignored ? [verdict.rulesFile, verdict.line, verdict.pattern] : false;
}

describe("checkIgnored", () => {
	for (const { name, global, project, file, piCwd = "/p", editorCwd = "/p", expected } of cases) {
		it(name, () => {
			const rules = compileIgnoreRules(
				global === undefined ? null : { path: G, text: global },
				project === undefined ? null : { path: P, text: project },
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
	// project: the project rules text; ignored: whether `file` is still ignored
	const cases: { description: string; project: string; trusted: boolean; file: string; ignored: boolean }[] = [
		{
			description: "plain negation, trusted: re-included",
			project: "!.env",
			trusted: true,
			file: "/p/.env",
			ignored: false,
		},
		{
			description: "plain negation, untrusted: still ignored",
			project: "!.env",
			trusted: false,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "BOM then negation on line 1, untrusted: still ignored",
			project: `${BOM}!.env`,
			trusted: false,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "BOM then negation on line 1, trusted: re-included",
			project: `${BOM}!.env`,
			trusted: true,
			file: "/p/.env",
			ignored: false,
		},
		{
			description: "CRLF negation, untrusted: still ignored",
			project: "!.env\r\n",
			trusted: false,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "negation after a comment, untrusted: still ignored",
			project: "# local\n!.env",
			trusted: false,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "BOM before a later line is no negation, trusted",
			project: `# x\n${BOM}!.env`,
			trusted: true,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "BOM before a later line is no negation, untrusted",
			project: `${BOM}!a\n${BOM}!.env`,
			trusted: false,
			file: "/p/.env",
			ignored: true,
		},
		{
			description: "untrusted project may still add exclusions",
			project: "*.log",
			trusted: false,
			file: "/p/x.log",
			ignored: true,
		},
		{
			description: "escaped \\! is a pattern, not a negation",
			project: "\\!important",
			trusted: false,
			file: "/p/!important",
			ignored: true,
		},
	];
	for (const { description, project, trusted, file, ignored } of cases) {
		it(description, () => {
			const rules = compileIgnoreRules(
				{ path: G, text: ".env\n" },
				{ path: P, text: project },
				{ projectTrusted: trusted },
			);
			assert.equal(checkIgnored(rules, file, where).ignored, ignored);
		});
	}
});
