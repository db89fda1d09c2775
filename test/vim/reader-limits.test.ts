/**
 * The reader rules of PROTOCOL.md "Limits" (test/fixtures/reader-limits.ts: nesting, caps, line numbers) in the Vim
 * client's one decoder of pi's files (pi_ide#inbox#Decode) and its validators of a message, a change set and a
 * request, in one real Vim (`vim -es`): Vim 9.0's json_decode() crashed (SIGSEGV) on 100,000 levels, and the change
 * set's loop took 32 s on 30,000 hunks. (In a running Vim, with one notice each: test/vim/review.test.ts.)
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { MAX_PI_FILE_DEPTH } from "../../src/protocol/limits.ts";
import { PI_PID, READER_CASES, randomNestedTexts, verdictHolds } from "../fixtures/reader-limits.ts";
import { runVimRules } from "../helpers/vim.ts";

it("vim: pi's files too deep are refused before json_decode, lists over a cap by their count, bad lines dropped", (t) => {
	const out = runVimRules<{ verdicts: [string, number][] }>(
		t,
		READER_CASES.map((c) => [c.kind, c.text]),
		`var verdicts = []
for [kind, text] in c
  var [msg, why] = pi_ide#inbox#Decode(text)
  var kept = 0
  if why == '' && kind == 'message'
    why = pi_ide#inbox#Validate(msg, ${PI_PID})
  elseif why == '' && kind == 'review'
    var [runs, bad] = pi_ide#review_rules#Validate(msg, ${PI_PID})
    why = bad
    for run in runs
      for f in run.files
        kept += len(f.hunks)
      endfor
    endfor
  elseif why == ''
    var [request, bad] = pi_ide#approval_rules#Validate(msg, ${PI_PID})
    why = bad
    kept = why == '' ? len(request.hunks) : 0
  endif
  verdicts->add([why, kept])
endfor
var out = {verdicts: verdicts}
`,
	);
	// Every row's verdict, so one run names every row that fails.
	const wrong = READER_CASES.flatMap((c, i) => {
		const [why, kept] = out.verdicts[i] ?? ["missing", -1];
		return verdictHolds(c, why, kept) ? [] : [`${c.name}: ${why || `kept ${kept}`}`];
	});
	assert.deepEqual(wrong, []);
});

it("vim: Decode refuses exactly the seeded random texts nested deeper than the limit (PI_IDE_SEED replays one)", (t) => {
	const seed = Number(process.env["PI_IDE_SEED"] ?? 2026);
	const texts = randomNestedTexts(seed, 300);
	const out = runVimRules<{ whys: string[] }>(
		t,
		texts.map((x) => x.text),
		"var out = {whys: mapnew(c, (_, text) => pi_ide#inbox#Decode(text)[1])}",
	);
	const wrong = texts.flatMap(({ text, depth }, i) => {
		const why = out.whys[i] ?? "missing";
		const right = depth > MAX_PI_FILE_DEPTH ? /nested deeper than/.test(why) : why === "";
		return right ? [] : [`seed ${seed} #${i} (depth ${depth}): ${why || "taken"}: ${text.slice(0, 200)}`];
	});
	assert.deepEqual(wrong, []);
});
