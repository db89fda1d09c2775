/**
 * The pure parts of the Vim client's approval (editors/vim/autoload/pi_ide/approval_rules.vim) as tables, in one
 * `vim -es` run: which requests are refused and why, the file name's pid, where the marks go, the notice that
 * fits the message line, the decisions kept; and, seeded and random, the proposal shown beside the buffer:
 * pi's own hunks (src/link/change-set.ts) applied to the file's lines must give exactly the text pi proposes
 * (the oracle), and they no longer match once a line they replace is changed. `PI_IDE_SEED=<n>` replays one seed.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { buildRequest } from "../../src/link/approval.ts";
import type { ApprovalMessage } from "../../src/protocol/wire.ts";
import { seededInts } from "../helpers/seeded.ts";
import { runVimRules, vimString } from "../helpers/vim.ts";

const FILE = "/p/a.txt";

function message(overrides: Record<string, unknown> = {}, request: Record<string, unknown> = {}): unknown {
	const base: ApprovalMessage = {
		protocol: "0.4",
		kind: "pi-approval",
		pid: 4242,
		editor_pid: 777,
		timestamp: 1700000000.5,
		request: buildRequest({
			id: "req-1",
			tool: "edit",
			file: FILE,
			before: { kind: "text", text: "one\ntwo\nthree\n" },
			after: "one\nTWO\nthree\nfour\n",
			timeoutS: 120,
			now: 1700000000.5,
		}),
	};
	return { ...base, ...overrides, request: { ...base.request, ...request } };
}

/** Validate: a refusal's words, or the request's fields that matter. */
const VALIDATE: { name: string; msg: unknown; pid?: number; why: string; request?: Record<string, unknown> }[] = [
	{
		name: "a request of pi's own making",
		msg: message(),
		why: "",
		request: { id: "req-1", tool: "edit", file: FILE, created: false, note: "", hunks_total: 2, editor_pid: 777 },
	},
	{ name: "not an object", msg: [1, 2], why: "not a pi approval request" },
	{ name: "a pi message, not a request", msg: { kind: "pi", pid: 4242 }, why: "not a pi approval request" },
	{ name: "another pid inside than in its name", msg: message({ pid: 1 }), why: "its pid is not the one in its name" },
	{ name: "editor_pid missing", msg: message({ editor_pid: null }), why: "editor_pid is not a pid" },
	{ name: "editor_pid 0", msg: message({ editor_pid: 0 }), why: "editor_pid is not a pid" },
	{ name: "request a list", msg: { ...(message() as object), request: [] }, why: "request: not an object" },
	{ name: "empty id", msg: message({}, { id: "" }), why: "request.id: not a string of 1 to 64 bytes" },
	{ name: "id of 65", msg: message({}, { id: "x".repeat(65) }), why: "request.id: not a string of 1 to 64 bytes" },
	{ name: "relative file", msg: message({}, { file: "a.txt" }), why: "request.file: not an absolute path" },
	{ name: "no expires", msg: message({}, { expires: null }), why: "request: tool, timeout_s or expires missing" },
	{ name: "timeout 0", msg: message({}, { timeout_s: 0 }), why: "request: tool, timeout_s or expires missing" },
	{ name: "hunks not a list", msg: message({}, { hunks: {} }), why: "request.hunks: not a list" },
	{
		name: "malformed hunks dropped, the rest kept",
		msg: message({}, { hunks: [{ id: 1 }, { id: "h", old_start: 1, new_start: 1, old_text: ["a"], new_text: [2] }] }),
		why: "",
		request: { hunks: [], hunks_total: 2 },
	},
	{
		name: "a note (too large), no hunks",
		msg: message({}, { note: "too large", hunks: [], hunks_total: 3, created: true }),
		why: "",
		request: { note: "too large", hunks: [], hunks_total: 3, created: true },
	},
];

const PID_OF_NAME: [string, number][] = [
	["pi-4242.approval.json", 4242],
	["pi-04242.approval.json", 0],
	["pi-4242.json", 0],
	["pi-4242.review.json", 0],
	["pi-4242.approval.json.tmp", 0],
	["pi-99999999999.approval.json", 0],
	["4242.approval.json", 0],
];

const hunk = (old_start: number, old_text: string[], new_text: string[]) => ({
	id: "h",
	old_start,
	old_lines: old_text.length,
	new_start: old_start,
	new_lines: new_text.length,
	old_text,
	new_text,
});

/** Placement in a buffer of `count` lines: the sign lines, and the virtual text's line, side and lines. */
const PLACEMENT: { name: string; count: number; hunk: ReturnType<typeof hunk>; want: unknown }[] = [
	{
		name: "a replaced line: its sign, the proposal below it",
		count: 3,
		hunk: hunk(2, ["two"], ["TWO"]),
		want: { touches: false, signs: [2], at: 2, align: "below", text: ["+ TWO"] },
	},
	{
		name: "three lines replaced by one",
		count: 5,
		hunk: hunk(2, ["b", "c", "d"], ["x"]),
		want: { touches: false, signs: [2, 3, 4], at: 4, align: "below", text: ["+ x"] },
	},
	{
		name: "a deletion: signs, no text",
		count: 5,
		hunk: hunk(3, ["c"], []),
		want: { touches: false, signs: [3], at: 3, align: "below", text: [] },
	},
	{
		name: "an insertion before line 2: above it",
		count: 3,
		hunk: hunk(2, [], ["new"]),
		want: { touches: false, signs: [2], at: 2, align: "above", text: ["+ new"] },
	},
	{
		name: "an insertion at the end: below the last line",
		count: 3,
		hunk: hunk(4, [], ["four"]),
		want: { touches: false, signs: [3], at: 3, align: "below", text: ["+ four"] },
	},
	{
		name: "an insertion at the top of an empty file",
		count: 1,
		hunk: hunk(1, [], ["a", "b"]),
		want: { touches: false, signs: [1], at: 1, align: "above", text: ["+ a", "+ b"] },
	},
	{
		name: "25 proposed lines: 20 shown, the rest counted",
		count: 3,
		hunk: hunk(
			1,
			["one"],
			Array.from({ length: 25 }, (_, i) => `l${i}`),
		),
		want: {
			touches: false,
			signs: [1],
			at: 1,
			align: "below",
			text: [...Array.from({ length: 20 }, (_, i) => `+ l${i}`), "+ … 5 more lines"],
		},
	},
];

const REQUEST_FOR_NOTICE = { id: "r", file: FILE, note: "", hunks_total: 2, timeout_s: 120 };
const NOTICE: { name: string; room: number; note?: string; total?: number; want: string }[] = [
	{
		name: "room for the long form",
		room: 100,
		want: "(pi-ide) pi waits for your approval (2 hunks, 120 s) of a.txt: :PiIde approve / reject / proposal",
	},
	{
		name: "one hunk",
		room: 100,
		total: 1,
		want: "(pi-ide) pi waits for your approval (1 hunk, 120 s) of a.txt: :PiIde approve / reject / proposal",
	},
	{
		name: "a note instead of hunks",
		room: 100,
		note: "binary",
		want: "(pi-ide) pi waits for your approval ((binary), 120 s) of a.txt: :PiIde approve / reject / proposal",
	},
	{
		name: "80 columns: the middle form",
		room: 79,
		want: "(pi-ide) approve pi's change to a.txt? :PiIde approve / reject",
	},
	{ name: "40 columns: the short form", room: 39, want: "(pi-ide) pi waits: a.txt (:PiIde)" },
	{ name: "too narrow for any: the short form", room: 10, want: "(pi-ide) pi waits: a.txt (:PiIde)" },
];

/** A random file and a random edit of it by pi (lines replaced, deleted, inserted), as text ending in "\n". */
function randomEdit(r: (n: number) => number): { before: string[]; after: string[] } {
	const words = ["alpha", "beta", "", "gamma", "  indented", "delta", "x"];
	const before = Array.from({ length: 1 + r(12) }, () => words[r(words.length)] as string);
	const after = [...before];
	for (let n = 1 + r(4); n > 0; n--) {
		const at = r(after.length + 1);
		const op = r(3);
		if (op === 0 && at < after.length) after.splice(at, 1 + r(2));
		else if (op === 1) after.splice(at, 0, ...Array.from({ length: 1 + r(3) }, (_, i) => `new ${n}.${i}`));
		else if (at < after.length) after[at] = `changed ${n}`;
	}
	return { before, after };
}

it("vim: approval's pure rules, as tables and seeded random proposals against pi's own hunks", (t) => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 20261202);
	const r = seededInts(seed);
	const random = Array.from({ length: 150 }, () => {
		const { before, after } = randomEdit(r);
		const text = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");
		const request = buildRequest({
			id: "x",
			tool: "edit",
			file: FILE,
			before: { kind: "text", text: text(before) },
			after: text(after),
			timeoutS: 1,
			now: 0,
		});
		// A line pi would replace, changed by the user: the buffer no longer holds what pi read.
		const replaced = request.hunks.find((h) => h.old_text.length > 0);
		const edited = [...before];
		if (replaced) edited[replaced.old_start - 1] = `${edited[replaced.old_start - 1]} (edited)`;
		return { before, after, hunks: request.hunks, edited: replaced ? edited : null };
	});
	const input = {
		validate: VALIDATE.map((c) => [c.msg, c.pid ?? 4242]),
		names: PID_OF_NAME.map(([name]) => name),
		placement: PLACEMENT.map((c) => [[c.hunk], c.count]),
		notice: NOTICE.map((c) => [
			{ ...REQUEST_FOR_NOTICE, note: c.note ?? "", hunks_total: c.total ?? 2 },
			"a.txt",
			c.room,
		]),
		random: random.map((c) => [c.before, c.hunks, c.edited ?? []]),
	};
	const out = runVimRules<{
		validate: [Record<string, unknown>, string][];
		names: number[];
		placement: unknown[];
		notice: string[];
		decisions: string[];
		diff: string[];
		random: [boolean, string[], boolean][];
	}>(
		t,
		input,
		`var decisions: list<dict<any>> = []
for i in range(25)
  decisions = pi_ide#approval_rules#AddDecision(decisions, {pi_pid: 1, id: string(i), decision: 'accept'})
endfor
var out = {
  validate: mapnew(c.validate, (_, v) => pi_ide#approval_rules#Validate(v[0], v[1])),
  names: mapnew(c.names, (_, n) => pi_ide#approval_rules#PidOfName(n)),
  placement: mapnew(c.placement, (_, v) => pi_ide#approval_rules#Placement(v[0], v[1])[0]),
  notice: mapnew(c.notice, (_, v) => pi_ide#approval_rules#NoticeText(v[0], v[1], v[2])),
  decisions: mapnew(decisions, (_, d) => d.id),
  diff: pi_ide#approval_rules#DiffLines(pi_ide#approval_rules#Validate(json_decode(${vimString(JSON.stringify(message()))}), 4242)[0]),
  random: mapnew(c.random, (_, v) => [pi_ide#approval_rules#Matches(v[0], v[1]), pi_ide#approval_rules#Apply(v[0], v[1]),
    empty(v[2]) ? v:false : pi_ide#approval_rules#Matches(v[2], v[1])]),
}
`,
	);

	VALIDATE.forEach((c, i) => {
		const [request, why] = out.validate[i] ?? [{}, "missing"];
		assert.equal(why, c.why, c.name);
		for (const [key, value] of Object.entries(c.request ?? {}))
			assert.deepEqual(request[key], value, `${c.name}: ${key}`);
	});
	assert.deepEqual(
		out.names,
		PID_OF_NAME.map(([, pid]) => pid),
	);
	for (const [i, c] of PLACEMENT.entries()) assert.deepEqual(out.placement[i], c.want, c.name);
	for (const [i, c] of NOTICE.entries()) assert.equal(out.notice[i], c.want, c.name);
	assert.deepEqual(
		out.decisions,
		Array.from({ length: 20 }, (_, i) => String(i + 5)),
		"the newest 20 decisions, newest last",
	);
	assert.deepEqual(out.diff, [
		"--- /p/a.txt",
		"+++ /p/a.txt (pi's proposal)",
		"@@ -2,1 +2,1 @@",
		"-two",
		"+TWO",
		"@@ -4,0 +4,1 @@",
		"+four",
	]);
	random.forEach((c, i) => {
		const [matches, applied, editedMatches] = out.random[i] ?? [false, [], true];
		const where = `seed ${seed}, case ${i}: ${JSON.stringify(c.before)} -> ${JSON.stringify(c.after)}`;
		assert.equal(matches, true, `${where}: the hunks match the file pi read`);
		assert.deepEqual(applied, c.after, `${where}: the proposal shown is pi's`);
		assert.equal(editedMatches, false, `${where}: a line pi replaces, edited, no longer matches`);
	});
});
