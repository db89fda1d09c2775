/**
 * Seeded: which of pi's hunks the state file lists as reverted (ReviewBook, editors/shared/review.ts), over
 * random sequences of reverts, undos, redos and the user's own edits, against the stack oracle of
 * test/fixtures/revert-oracle.ts, which knows nothing of text. The user's edits never write pi's or the
 * baseline's text back (they append to a line, or insert a line of their own), so the text alone can tell, and
 * must. The undo here is the inverse edit, as VS Code's undo reports it.
 *
 * `PI_IDE_SEEDS=<n>` runs more sequences (default 200).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	type Mark,
	markStatus,
	planRevert,
	REVERT_RULES,
	type RevertRules,
	ReviewBook,
	revertUndone,
	type TextEdit,
} from "../../../../editors/shared/review.ts";
import { computeHunks } from "../../../../src/link/change-set.ts";
import { RevertOracle, revertVersions } from "../../../fixtures/revert-oracle.ts";
import { seededInts } from "../../../helpers/seeded.ts";
import { applyEdit, changeOf, docOf, inverseOf } from "../../../helpers/text-edits.ts";

const FILE = "/p/notes.txt";
const SEEDS = Number(process.env["PI_IDE_SEEDS"] ?? 200);
const STEPS = 30;

/** An editor's step: the edit made, and the one that takes it back. */
interface Step {
	edit: TextEdit;
	back: TextEdit;
}

/** One random sequence; returns what went wrong, or undefined. */
function runSequence(seed: number, rules: RevertRules): string | undefined {
	const int = seededInts(seed);
	const { base, pi } = revertVersions(int);
	const hunks = computeHunks(FILE, base, pi);
	if (hunks.length === 0) return undefined;
	const book = new ReviewBook(rules);
	book.setRuns(7, [{ run: 3, files: [{ file: FILE, baseline: base, note: null, hunks, hunks_total: hunks.length }] }]);
	let text = pi;
	book.sync(FILE, docOf(text));
	const oracle = new RevertOracle<Step>();
	const trail: string[] = [];
	/** Apply `edit` as the user's edit, or (`byUndo`) as the editor's undo or redo; returns the edit undoing it. */
	const apply = (edit: TextEdit, byUndo = false): TextEdit => {
		const back = inverseOf(text, edit);
		text = applyEdit(text, edit);
		book.edited(FILE, [changeOf(edit)], docOf(text), byUndo);
		return back;
	};
	for (let i = 0; i < STEPS; i++) {
		const action = int(10);
		const lines = text.split("\n").length;
		if (action < 3) {
			const marks = book.marks(FILE).filter((m: Mark) => markStatus(m, docOf(text)) === "pi");
			const mark = marks[int(Math.max(marks.length, 1))];
			if (mark?.line === undefined) continue;
			const cursor = mark.hunk.new_text.length === 0 ? Math.min(mark.line, lines - 1) : mark.line;
			const plan = planRevert(book.marks(FILE), docOf(text), "\n", { cursor });
			if (plan.edits.length !== 1) continue;
			const edit = plan.edits[0] as TextEdit;
			const back = apply(edit);
			book.markReverted(FILE, plan, docOf(text));
			const id = plan.marks[0]?.hunk.id ?? "";
			oracle.step({ edit, back }, [id]);
			trail.push(`revert ${id} at ${cursor}`);
		} else if (action < 5) {
			const step = oracle.undo();
			if (!step) continue;
			step.data = { edit: apply(step.data.back, true), back: step.data.back };
			trail.push("undo");
		} else if (action < 7) {
			const step = oracle.redo();
			if (!step) continue;
			step.data = { edit: step.data.edit, back: apply(step.data.edit, true) };
			trail.push("redo");
		} else {
			const line = int(lines);
			const end = { line, character: text.split("\n")[line]?.length ?? 0 };
			const edit: TextEdit =
				action < 9
					? { start: end, end, text: `!${i}` }
					: { start: { line, character: 0 }, end: { line, character: 0 }, text: `u${i}\n` };
			oracle.step({ edit, back: apply(edit) });
			trail.push(`${action < 9 ? "append to" : "insert above"} line ${line}`);
		}
		const want = oracle.listed();
		const got = book.reverted.map((r) => r.id);
		if (JSON.stringify(got) !== JSON.stringify(want)) {
			return `seed ${seed}, step ${i}: listed ${JSON.stringify(got)}, the oracle ${JSON.stringify(want)}\n  ${trail.join("\n  ")}`;
		}
	}
	return undefined;
}

describe("seeded: reverts listed while they hold, over undo, redo and the user's edits", () => {
	test(`${SEEDS} sequences of ${STEPS} steps`, () => {
		for (let seed = 1; seed <= SEEDS; seed++) assert.equal(runSequence(seed, REVERT_RULES), undefined);
	});

	const PLANTED: { name: string; rules: RevertRules }[] = [
		{
			// The first versions' rule: read from the text at the mark's place.
			name: "an undo seen where pi's lines look back (an added line like the one after it, a deletion edited)",
			rules: {
				...REVERT_RULES,
				undone: (m, _now, d) => markStatus({ ...m, reverted: false, revertStates: undefined }, d) === "pi",
			},
		},
		{
			name: "undone recomputed at each undo (an undo of the user's own edit afterwards looks like a redo)",
			rules: { ...REVERT_RULES, redone: (m, now, d) => !revertUndone(m, now, d) },
		},
		{
			name: "a redo never seen",
			rules: { ...REVERT_RULES, redone: () => false },
		},
		{
			name: "an undo never seen",
			rules: { ...REVERT_RULES, undone: () => false },
		},
	];
	for (const planted of PLANTED) {
		test(`a planted defect is caught: ${planted.name}`, () => {
			const failures = Array.from({ length: SEEDS }, (_, i) => runSequence(i + 1, planted.rules)).filter(Boolean);
			assert.ok(failures.length > 0, "no sequence caught it");
		});
	}
});
