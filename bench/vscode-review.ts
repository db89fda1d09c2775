/**
 * The VS Code client's share of review (v0.4), its pure core (editors/shared/review.ts) on a 10,000-line document
 * with 500 of pi's hunks (the change set's cap per file): marking them when the change set arrives, following one
 * keystroke above them all (VS Code has no extmarks: every mark is moved and checked), and working out the revert
 * of one hunk, and telling an undo or a redo of a revert of them all (the document's hash). Drawing the decorations
 * is VS Code's and is not timed. Targets: the for Neovim (marking 500
 * hunks <= 10 ms, a revert in a 10,000-line buffer <= 5 ms); a keystroke as cheap as a revert.
 */
import { planRevert, ReviewBook } from "../editors/shared/review.ts";
import type { TextLines } from "../editors/shared/state.ts";
import { computeHunks } from "../src/link/change-set.ts";
import { header, median, percentile, row } from "./report.ts";

const FILE = "/bench/big.ts";

function timed(rounds: number, fn: (round: number) => void): number[] {
	const samples: number[] = [];
	for (let round = 0; round < rounds; round++) {
		const started = performance.now();
		fn(round);
		samples.push(performance.now() - started);
	}
	return samples.slice(Math.floor(rounds / 5)); // the first rounds warm the JIT
}

export function runVscodeReviewBench(): void {
	const baseline = Array.from({ length: 10_000 }, (_, i) => `export const value${i} = ${i}; // line ${i}`);
	// pi changed every 20th line: 500 hunks.
	const pi = baseline.map((line, i) => (i % 20 === 10 ? `${line} // by pi` : line));
	const hunks = computeHunks(FILE, `${baseline.join("\n")}\n`, `${pi.join("\n")}\n`);
	const run = {
		run: 1,
		files: [{ file: FILE, baseline: `${baseline.join("\n")}\n`, note: null, hunks, hunks_total: hunks.length }],
	};
	let lines = [...pi, ""];
	const document: TextLines = { count: 0, text: (i) => lines[i] ?? "" };
	Object.defineProperty(document, "count", { get: () => lines.length });

	const mark = timed(50, () => {
		const book = new ReviewBook();
		book.setRuns(1, [run]);
		book.sync(FILE, document);
	});

	const book = new ReviewBook();
	book.setRuns(1, [run]);
	book.sync(FILE, document);
	const keystroke = timed(200, (round) => {
		// Enter at the top, then its undo: every mark moves down and back.
		const add = round % 2 === 0;
		lines = add ? ["", ...lines] : lines.slice(1);
		const change = add
			? { startLine: 0, endLine: 0, endCharacter: 0, text: "\n" }
			: { startLine: 0, endLine: 1, endCharacter: 0, text: "" };
		book.edited(FILE, [change], document);
	});

	const revert = timed(200, (round) => {
		planRevert(book.marks(FILE), document, "\n", { cursor: 10 + 20 * (round % 500) });
	});

	// Every hunk reverted (the edits applied as one), then the editor's undo and redo of the whole revert: each
	// hashes the document to tell whether it is the state before or after the revert.
	const planAll = planRevert(book.marks(FILE), document, "\n", "all");
	const piLines = lines;
	const revertedLines = [...baseline, ""];
	lines = revertedLines;
	book.markReverted(FILE, planAll, document);
	const whole = { startLine: 0, endLine: piLines.length - 1, endCharacter: 0, text: "" };
	const undoRedo = timed(100, (round) => {
		lines = round % 2 === 0 ? piLines : revertedLines;
		book.edited(FILE, [whole], document, true);
	});

	console.log(`\nReview in VS Code: the shared core (${hunks.length} hunks, 10,000 lines)`);
	header();
	const report = (name: string, samples: number[], target: number) => {
		const p50 = median(samples);
		row(name, `${p50.toFixed(3)} ms (p90 ${percentile(samples, 0.9).toFixed(3)})`, `<= ${target} ms`, p50 <= target);
	};
	report("mark 500 hunks when the change set arrives p50", mark, 10);
	report("follow one keystroke through 500 marks p50", keystroke, 5);
	report("work out the revert of the hunk under the cursor p50", revert, 5);
	report("an undo or redo of a revert of 500 hunks, told p50", undoRedo, 5);
}
