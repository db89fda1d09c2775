/**
 * The Vim client's review of pi's change set (editors/vim/autoload/pi_ide/review.vim, its rules in review_rules.vim),
 * in one `vim -es` run: its pure rules as tables (which change sets are refused and why, which hunks are marked where,
 * the newest run per file, the `reverted` cap, the quickfix items); and, seeded and random, marking and reverting in a
 * real buffer: pi's own hunks (src/link/change-set.ts) of a random edit are all marked on pi's lines, and reverting
 * them one by one with `:PiIde revert`'s function, in random order (the signs move with each revert), must give back
 * exactly the baseline (the oracle); a hunk whose line the user changed after it was marked is refused and keeps the
 * user's line; a whole-buffer revert undone leaves `reverted` with every hunk marked again, and redone is listed again.
 * `PI_IDE_SEED=<n>` replays one seed.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { computeHunks, splitLines } from "../../src/link/change-set.ts";
import type { ReviewHunk } from "../../src/protocol/wire.ts";
import { seededInts } from "../helpers/seeded.ts";
import { runVimRules, vimString } from "../helpers/vim.ts";

const FILE = "/p/a.txt";

const hunk = (newStart: number, oldText: string[], newText: string[], id = "h0000000001"): ReviewHunk => ({
	id,
	old_start: newStart,
	old_lines: oldText.length,
	new_start: newStart,
	new_lines: newText.length,
	old_text: oldText,
	new_text: newText,
});

function changeSet(runs: unknown = [{ run: 4, files: [{ file: FILE, baseline: "a\n", note: null, hunks: [] }] }]) {
	return { protocol: "0.4", kind: "pi-review", pid: 4242, editor_pid: 777, timestamp: 1, runs };
}

/** Validate: the refusal's words, or how many runs / files / hunks are kept. */
const VALIDATE: { name: string; msg: unknown; why: string; kept?: [number, number, number] }[] = [
	{ name: "pi's shape", msg: changeSet(), why: "", kept: [1, 1, 0] },
	{ name: "not an object", msg: [1], why: "not a pi change set" },
	{ name: "a pi message", msg: { kind: "pi", pid: 4242 }, why: "not a pi change set" },
	{ name: "an approval request", msg: { kind: "pi-approval", pid: 4242 }, why: "not a pi change set" },
	{ name: "another pid inside", msg: { ...changeSet(), pid: 1 }, why: "its pid is not the one in its name" },
	{ name: "pid a string", msg: { ...changeSet(), pid: "4242" }, why: "its pid is not the one in its name" },
	{ name: "runs not a list", msg: changeSet({}), why: "runs: not a list" },
	{ name: "no runs", msg: changeSet([]), why: "", kept: [0, 0, 0] },
	// At most 3 runs in all (PROTOCOL.md "Limits"): the malformed ones in two change sets.
	{
		name: "malformed runs dropped",
		msg: changeSet([
			{ run: -1, files: [] },
			{ run: "2", files: [] },
			{ run: 5, files: [] },
		]),
		why: "",
		kept: [1, 0, 0],
	},
	{
		name: "malformed runs dropped (no files, not an object)",
		msg: changeSet([{ run: 3 }, 7, { run: 5, files: [] }]),
		why: "",
		kept: [1, 0, 0],
	},
	{
		name: "malformed files dropped (relative path, no hunks)",
		msg: changeSet([
			{
				run: 1,
				files: [{ file: "a.txt", hunks: [] }, { file: FILE }, { file: FILE, hunks: [hunk(1, ["a"], ["b"])] }],
			},
		]),
		why: "",
		kept: [1, 1, 1],
	},
	{
		name: "malformed hunks dropped, the rest kept",
		msg: changeSet([
			{
				run: 1,
				files: [
					{
						file: FILE,
						hunks: [
							{ ...hunk(1, ["a"], ["b"]), id: 5 },
							{ ...hunk(1, ["a"], ["b"]), new_text: [1] },
							{ ...hunk(1, ["a"], ["b"]), id: "x".repeat(65) },
							{ ...hunk(1, ["a"], ["b"]), new_start: -1 },
							hunk(3, [], ["c"]),
						],
					},
				],
			},
		]),
		why: "",
		kept: [1, 1, 1],
	},
];

/** Placement: which hunks are marked on which lines of a buffer. */
const PLACEMENT: {
	name: string;
	lines: string[];
	/** The baseline's lines (a deletion's neighbours are checked against them). */
	base?: string[];
	hunk: ReviewHunk;
	want: { first: number; last: number; kind: string; at_end: boolean } | null;
}[] = [
	{
		name: "a changed line",
		lines: ["a", "B", "c"],
		hunk: hunk(2, ["b"], ["B"]),
		want: { first: 2, last: 2, kind: "change", at_end: false },
	},
	{
		name: "added lines",
		lines: ["a", "x", "y", "b"],
		hunk: hunk(2, [], ["x", "y"]),
		want: { first: 2, last: 3, kind: "add", at_end: false },
	},
	{
		name: "a deletion: on the line after",
		lines: ["a", "c"],
		base: ["a", "b", "c"],
		hunk: hunk(2, ["b"], []),
		want: { first: 2, last: 2, kind: "delete", at_end: false },
	},
	{
		name: "a deletion at the end: on the last line",
		lines: ["a", "b"],
		base: ["a", "b", "c"],
		hunk: hunk(3, ["c"], []),
		want: { first: 2, last: 2, kind: "delete", at_end: true },
	},
	{
		name: "a deletion at the top: on the first line",
		lines: ["b"],
		base: ["a", "b"],
		hunk: hunk(1, ["a"], []),
		want: { first: 1, last: 1, kind: "delete", at_end: false },
	},
	{
		name: "a deletion whose line before the user changed: not marked",
		lines: ["a!", "c"],
		base: ["a", "b", "c"],
		hunk: hunk(2, ["b"], []),
		want: null,
	},
	{
		name: "a deletion whose line after the user changed: not marked",
		lines: ["a", "c!"],
		base: ["a", "b", "c"],
		hunk: hunk(2, ["b"], []),
		want: null,
	},
	{
		name: "a deletion at the end, a line added after it since: not marked",
		lines: ["a", "b", "new"],
		base: ["a", "b", "c"],
		hunk: hunk(3, ["c"], []),
		want: null,
	},
	{
		name: "a deletion without the baseline: not marked",
		lines: ["a", "c"],
		hunk: hunk(2, ["b"], []),
		want: null,
	},
	{ name: "the user changed pi's line: not marked", lines: ["a", "B!", "c"], hunk: hunk(2, ["b"], ["B"]), want: null },
	{
		name: "lines added above: pi's lines moved, not marked",
		lines: ["new", "a", "B", "c"],
		hunk: hunk(2, ["b"], ["B"]),
		want: null,
	},
	{ name: "past the end: not marked", lines: ["a"], hunk: hunk(2, ["b"], ["B", "C"]), want: null },
	{ name: "new_start 0: not marked", lines: ["a"], hunk: hunk(0, [], ["a"]), want: null },
	{ name: "case matters", lines: ["b"], hunk: hunk(1, ["x"], ["B"]), want: null },
];

/** AddReverted: the entries kept, in order ("id line"), after adding `add` one by one. */
const ADD_REVERTED: {
	name: string;
	add: { pi_pid: number; run: number; id: string; line: number }[];
	want: string[];
}[] = [
	{
		name: "two hunks",
		add: [
			{ pi_pid: 1, run: 2, id: "a", line: 1 },
			{ pi_pid: 1, run: 2, id: "b", line: 5 },
		],
		want: ["a 1", "b 5"],
	},
	{
		name: "the same hunk reverted again (after an undo): once, the newest, last",
		add: [
			{ pi_pid: 1, run: 2, id: "a", line: 1 },
			{ pi_pid: 1, run: 2, id: "b", line: 5 },
			{ pi_pid: 1, run: 2, id: "a", line: 3 },
		],
		want: ["b 5", "a 3"],
	},
	{
		name: "the same id in another run, or of another pi: both kept",
		add: [
			{ pi_pid: 1, run: 2, id: "a", line: 1 },
			{ pi_pid: 1, run: 3, id: "a", line: 2 },
			{ pi_pid: 9, run: 2, id: "a", line: 3 },
		],
		want: ["a 1", "a 2", "a 3"],
	},
];

/**
 * StepApplied: whether a revert's undo step is in the text, from trees as undotree() gives them (`alt` holds a
 * branch that left its list just before its entry). The rows of the Neovim client's table
 * (test/nvim/review.test.ts "whether a revert's undo step is in the text").
 */
const e = (seq: number, alt?: unknown[]) => (alt ? { seq, alt } : { seq });
const STEP_APPLIED: [string, unknown, number, boolean][] = [
	["on the path", { seq_cur: 3, entries: [e(1), e(2), e(3)] }, 2, true],
	["undone (past the current step)", { seq_cur: 1, entries: [e(1), e(2), e(3)] }, 2, false],
	["everything undone", { seq_cur: 0, entries: [e(1), e(2)] }, 1, false],
	["on a branch left behind", { seq_cur: 3, entries: [e(1), e(3, [e(2)])] }, 2, false],
	["the current step on a branch: its list's steps before it", { seq_cur: 2, entries: [e(1), e(3, [e(2)])] }, 1, true],
	[
		"the current step on a branch, the step on the main list after it",
		{ seq_cur: 2, entries: [e(1), e(3, [e(2)])] },
		3,
		false,
	],
	["cut from the history ('undolevels'): nothing can take it back", { seq_cur: 9, entries: [e(8), e(9)] }, 2, true],
];

/** A random file and a random edit of it by pi (lines replaced, deleted, inserted); pi's version never empty. */
function randomEdit(r: (n: number) => number): { before: string[]; after: string[] } {
	const words = ["alpha", "beta", "", "gamma", "  indented", "delta", "x"];
	const before = Array.from({ length: 1 + r(14) }, () => words[r(words.length)] as string);
	const after = [...before];
	for (let n = 1 + r(5); n > 0; n--) {
		const at = r(after.length + 1);
		const op = r(3);
		if (op === 0 && at < after.length) after.splice(at, 1 + r(2));
		else if (op === 1) after.splice(at, 0, ...Array.from({ length: 1 + r(3) }, (_, i) => `new ${n}.${i}`));
		else if (at < after.length) after[at] = `changed ${n}`;
	}
	if (after.length === 0) after.push("last");
	return { before, after };
}

/** TextLines: a baseline's text as lines, as pi splits them (src/link/change-set.ts splitLines is the oracle). */
const TEXTS = ["", "a", "a\n", "a\nb\n", "a\n\n", "\n", "a\nb", "\n\nx"];

const text = (lines: string[]) => (lines.length ? `${lines.join("\n")}\n` : "");

it("vim: review's pure rules as tables, and seeded random reverts in a real buffer against the baseline", (t) => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 20261202);
	const r = seededInts(seed);
	const random = Array.from({ length: 120 }, () => {
		const { before, after } = randomEdit(r);
		const hunks = computeHunks(FILE, text(before), text(after));
		// The order the user reverts them in, and one hunk with new lines whose first line the user changes.
		const order = hunks.map((_, i) => i);
		for (let i = order.length - 1; i > 0; i--) {
			const j = r(i + 1);
			[order[i], order[j]] = [order[j] as number, order[i] as number];
		}
		const withLines = hunks.map((h, i) => (h.new_text.length > 0 ? i : -1)).filter((i) => i >= 0);
		const edited = withLines.length > 0 ? (withLines[r(withLines.length)] as number) : -1;
		// Every other case reverts the whole buffer at once (`:PiIde revert file`), then undoes that once.
		return { before, after, hunks, order, edited, whole: r(2) === 0 };
	});
	const input = {
		validate: VALIDATE.map((c) => c.msg),
		placement: PLACEMENT.map((c) => [c.lines, [c.hunk], c.base ?? []]),
		texts: TEXTS,
		addReverted: ADD_REVERTED.map((c) => c.add),
		stepApplied: STEP_APPLIED.map(([, tree, seq]) => [tree, seq]),
		random: random.map((c, i) => [
			c.after,
			// A run of its own per case: the reverts of the cases before are not this case's.
			changeSet([{ run: 100 + i, files: [{ file: FILE, baseline: text(c.before), hunks: c.hunks }] }]),
			c.order,
			c.edited,
			c.whole,
		]),
	};
	const out = runVimRules<{
		validate: [{ run: number; files: { hunks: unknown[] }[] }[], string][];
		placement: { first: number; last: number; kind: string; at_end: boolean }[][];
		reverted: string[];
		step_applied: boolean[];
		texts: string[][];
		add_reverted: string[][];
		newest: Record<string, [number, number]>;
		quickfix: [string, number, string][];
		random: { marked: number; said: string[]; lines: string[]; undone: string[]; undo_redo: number[] }[];
		deletion: [number, string, string[]];
		untracked: Record<string, [string[], string[]]>;
	}>(
		t,
		input,
		`var reverted: list<dict<any>> = []
for i in range(60)
  reverted = pi_ide#review_rules#AddReverted(reverted, {id: string(i)})
endfor
var newest = pi_ide#review_rules#Newest({
  '1': [{run: 3, files: [{file: '/p/a', hunks: []}, {file: '/p/b', hunks: []}]}],
  '2': [{run: 7, files: [{file: '/p/b', hunks: [{id: 'h1', old_start: 2, new_start: 2, old_text: ['x'], new_text: ['y', 'z']}]}]}],
})
var out = {
  validate: mapnew(c.validate, (_, m) => pi_ide#review_rules#Validate(m, 4242)),
  placement: mapnew(c.placement, (_, v) => pi_ide#review_rules#Placement(v[1], v[0], v[2])),
  texts: mapnew(c.texts, (_, v) => pi_ide#review_rules#TextLines(v)),
  add_reverted: mapnew(c.addReverted, (_, adds) => mapnew(reduce(adds, (l, e) => pi_ide#review_rules#AddReverted(l, e), []),
    (_, e) => e.id .. ' ' .. e.line)),
  reverted: mapnew(reverted, (_, e) => e.id),
  step_applied: mapnew(c.stepApplied, (_, v) => pi_ide#review_rules#StepApplied(v[0], v[1])),
  newest: mapnew(newest, (_, f) => [f.pid, f.run]),
  quickfix: mapnew(pi_ide#review_rules#QuickfixItems(newest), (_, i) => [i.filename, i.lnum, i.text]),
  random: [],
}
# How many reverts of run "run" are listed for pi; how many hunks are marked in the buffer.
def ListedOf(run: number): number
  var all = pi_ide#review#Reverted()
  return len(filter(type(all) == v:t_list ? all : [], (_, e) => e.run == run))
enddef
def MarkedNow(): number
  return len(uniq(sort(mapnew(values(pi_ide#review#Debug().marks[string(bufnr())].hunks), (_, h) => h.hunk.id))))
enddef
# The real buffer: marks placed by Receive, reverts by Revert with the cursor on a hunk's line.
enew
pi_ide#review#Start((f) => f == ${vimString(FILE)} ? bufnr() : 0, () => 0)
for [lines, msg, order, edited, whole] in c.random
  silent :%delete _
  setline(1, lines)
  pi_ide#review#Receive(msg, 4242)
  var hunks = pi_ide#review#Debug().marks[string(bufnr())].hunks
  var marked = len(uniq(sort(mapnew(values(hunks), (_, h) => h.hunk.id))))
  var said: list<string> = []
  var signs = sign_getplaced(bufnr(), {group: 'pi_ide_review'})[0].signs
  var firsts: dict<number> = {}
  for h in values(hunks)
    firsts[h.hunk.id] = h.ids[0]
  endfor
  if edited >= 0
    var id = msg.runs[0].files[0].hunks[edited].id
    var at = sign_getplaced(bufnr(), {group: 'pi_ide_review', id: firsts[id]})[0].signs[0].lnum
    setline(at, getline(at) .. ' (edited)')
  endif
  if whole
    said->add(pi_ide#review#Revert('file'))
  endif
  for i in whole ? [] : order
    var id = msg.runs[0].files[0].hunks[i].id
    var placed = sign_getplaced(bufnr(), {group: 'pi_ide_review', id: firsts[id]})[0].signs
    if empty(placed)
      said->add('its mark is gone')
      continue
    endif
    cursor(placed[0].lnum, 1)
    said->add(pi_ide#review#Revert())
  endfor
  var reverted_lines = getline(1, '$')
  # The whole revert undone: none of this run listed, every hunk marked again; redone: listed again, those marks
  # gone; undone again (pi's version, as the checks below want it).
  var run = msg.runs[0].run
  var undo_redo: list<number> = []
  if whole
    undo_redo += [ListedOf(run)]
    silent undo
    undo_redo += [ListedOf(run), MarkedNow()]
    silent redo
    undo_redo += [ListedOf(run), MarkedNow()]
    silent undo
  endif
  out.random->add({marked: marked, said: said, lines: reverted_lines, undone: getline(1, '$'), undo_redo: undo_redo})
endfor
# A deletion whose neighbour the user changed after it was marked: refused, the buffer as the user left it.
silent :%delete _
setline(1, ['a', 'c'])
pi_ide#review#Receive({kind: 'pi-review', pid: 4242, runs: [{run: 9, files: [{file: ${vimString(FILE)}, baseline: "a\\nb\\nc\\n",
  hunks: [{id: 'hdel', old_start: 2, new_start: 2, old_text: ['b'], new_text: []}]}]}]}, 4242)
var marked_deletion = sign_getplaced(bufnr(), {group: 'pi_ide_review'})[0].signs->len()
setline(1, 'a!')
cursor(2, 1)
out.deletion = [marked_deletion, pi_ide#review#Revert(), getline(1, '$')]
# Two reverts, the second undone; then what follows them goes (the buffer wiped, or the signs Vim drops when it
# unloads a buffer): each stays as last seen, the undone one out of \`reverted\`, the other listed.
def Ids(run: number): list<string>
  var all = pi_ide#review#Reverted()
  return mapnew(filter(type(all) == v:t_list ? all : [], (_, e) => e.run == run), (_, e) => e.id)
enddef
out.untracked = {}
set hidden
for [way, run] in [['wiped', 11], ['signs gone', 12]]
  enew
  setline(1, ['a', 'X', 'c', 'Y'])
  pi_ide#review#Receive({kind: 'pi-review', pid: 4242, runs: [{run: run, files: [{file: ${vimString(FILE)}, baseline: "a\\nb\\nc\\nd\\n",
    hunks: [{id: 'hx', old_start: 2, new_start: 2, old_text: ['b'], new_text: ['X']},
            {id: 'hy', old_start: 4, new_start: 4, old_text: ['d'], new_text: ['Y']}]}]}]}, 4242)
  cursor(2, 1)
  pi_ide#review#Revert()
  cursor(4, 1)
  pi_ide#review#Revert()
  silent undo
  var seen = Ids(run)
  var buf = bufnr()
  if way == 'wiped'
    enew
    pi_ide#review#Wiped(buf)
    execute 'bwipeout!' buf
  else
    sign_unplace('pi_ide_reverted', {buffer: buf})
    setline(1, 'a, edited')
  endif
  out.untracked[way] = [seen, Ids(run)]
endfor
`,
	);

	VALIDATE.forEach((c, i) => {
		const [runs, why] = out.validate[i] ?? [[], "missing"];
		assert.equal(why, c.why, c.name);
		if (c.kept) {
			const files = runs.flatMap((run) => run.files);
			assert.deepEqual([runs.length, files.length, files.flatMap((f) => f.hunks).length], c.kept, c.name);
		}
	});
	PLACEMENT.forEach((c, i) => {
		const got = out.placement[i] ?? [];
		if (c.want === null) assert.deepEqual(got, [], c.name);
		else {
			assert.equal(got.length, 1, c.name);
			const { first, last, kind, at_end } = got[0] as (typeof got)[0];
			assert.deepEqual({ first, last, kind, at_end }, c.want, c.name);
		}
	});
	assert.deepEqual(out.texts, TEXTS.map(splitLines), "a baseline's lines, as pi splits them");
	assert.deepEqual(
		out.reverted,
		Array.from({ length: 50 }, (_, i) => String(i + 10)),
		"the newest 50 reverts, newest last",
	);
	ADD_REVERTED.forEach((c, i) => {
		assert.deepEqual(out.add_reverted[i], c.want, c.name);
	});
	STEP_APPLIED.forEach(([name, , , want], i) => {
		assert.equal(out.step_applied[i], want, `whether a revert's undo step is in the text: ${name}`);
	});
	assert.deepEqual(out.newest, { "/p/a": [1, 3], "/p/b": [2, 7] }, "per file, the newest run of any pi");
	assert.deepEqual(out.quickfix, [["/p/b", 2, "pi (run 7): +2 -1 y"]]);

	assert.deepEqual(out.deletion, [
		1,
		"(pi-ide) a.txt line 2: the lines around pi's deletion changed since; not reverted",
		["a!", "c"],
	]);

	assert.deepEqual(
		out.untracked,
		{ wiped: [["hx"], ["hx"]], "signs gone": [["hx"], ["hx"]] },
		"a revert no longer followed stays as last seen: the undone one out of `reverted`, the other listed",
	);

	random.forEach((c, i) => {
		const got = out.random[i] ?? { marked: -1, said: [], lines: [], undone: [], undo_redo: [] };
		const where = `seed ${seed}, case ${i}: ${JSON.stringify(c.before)} -> ${JSON.stringify(c.after)}`;
		assert.equal(got.marked, c.hunks.length, `${where}: every hunk of pi's is marked`);
		// A deletion marked on the line of another hunk is reverted with it: its own turn finds its mark gone.
		const done = got.said.reduce((n, said) => n + Number(/reverted (\d+) of pi's hunks/.exec(said)?.[1] ?? 0), 0);
		assert.equal(done, c.hunks.length - (c.edited < 0 ? 0 : 1), `${where}: every hunk but the edited one reverted`);
		assert.equal(
			got.said.some((said) => /you changed these lines after pi's edit; not reverted/.test(said)),
			c.edited >= 0,
			`${where}: the edited hunk refused`,
		);
		if (c.edited < 0) assert.deepEqual(got.lines, c.before, `${where}: reverting every hunk gives the baseline`);
		else {
			// The baseline, except where the refused hunk stands: pi's lines there, the first one the user's.
			const h = c.hunks[c.edited] as ReviewHunk;
			const kept = [`${h.new_text[0]} (edited)`, ...h.new_text.slice(1)];
			const expected = [
				...c.before.slice(0, h.old_start - 1),
				...kept,
				...c.before.slice(h.old_start - 1 + h.old_text.length),
			];
			assert.deepEqual(got.lines, expected, `${where}: all but the edited hunk reverted`);
		}
		if (c.whole && done > 0) {
			// One undo takes back the whole revert, and only it: pi's lines, with the user's edit.
			const undone = [...c.after];
			const h = c.hunks[c.edited];
			if (h) undone[h.new_start - 1] = `${undone[h.new_start - 1]} (edited)`;
			assert.deepEqual(got.undone, undone, `${where}: one undo brings pi's version back`);
			// [listed after the revert; after the undo: listed, hunks marked; after the redo: listed, hunks marked]:
			// undone, none listed and all marked again; redone, the reverted listed and only the refused one marked.
			const refused = c.edited < 0 ? 0 : 1;
			assert.deepEqual(
				got.undo_redo,
				[done, 0, c.hunks.length, done, refused],
				`${where}: an undo takes the reverts back out of \`reverted\` and marks their hunks; a redo, the reverse`,
			);
		}
	});
});
