/**
 * Selections under edits, as a seeded random walk against an independent oracle. The rule (PROTOCOL.md,
 * "The selection and its clock"): the last selection the user made is reported, moved along with edits above
 * it, until its text is deleted or replaced; then there is none. Too many interacting cases for a table
 * (select, yank, delete it, delete or add lines above and below it, edit other lines, in any order), so each
 * walk types random steps into real Vim and, after each, compares the state file's selection and Vim's lines
 * with a plain model of lines and one selected range. A failure prints the seed and the steps so far;
 * `PI_IDE_SEED=<n>` replays one walk.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { pollUntil } from "../helpers/poll.ts";
import { seededInts as random } from "../helpers/seeded.ts";
import { startVim, type Vim } from "../helpers/vim.ts";

interface Model {
	lines: string[];
	/** The selection as the state file must report it (1-based line, byte columns), or null. */
	sel: { line: number; sc: number; ec: number; text: string } | null;
}

interface Step {
	name: string;
	keys: string[];
	apply: (m: Model) => void;
}

let fresh = 0;
const newLine = () => `new line ${++fresh} here`;

/** A random step that is possible in `m` (ASCII lines, so characters are bytes). */
function pick(m: Model, r: (n: number) => number): Step {
	const kinds = m.sel ? ["select", "yank", "deleteSel", "above", "deleteLine", "editOther"] : ["select", "above"];
	const kind = kinds[r(kinds.length)];
	const sel = m.sel;
	if (kind === "select" || !sel) {
		const line = 1 + r(m.lines.length);
		const len = (m.lines[line - 1] ?? "").length;
		const sc = 1 + r(len);
		const ec = sc + r(len - sc + 1);
		return {
			name: `select ${line}:${sc}-${ec}`,
			keys: [`${line}G`, "0", ...(sc > 1 ? [`${sc - 1}l`] : []), "v", ...(ec > sc ? [`${ec - sc}l`] : []), "Escape"],
			apply: (x) => {
				x.sel = { line, sc, ec, text: (x.lines[line - 1] ?? "").slice(sc - 1, ec) };
			},
		};
	}
	if (kind === "yank") return { name: "yank it (gvy)", keys: ["g", "v", "y"], apply: () => undefined };
	if (kind === "deleteSel") {
		return {
			name: "delete it (gvd)",
			keys: ["g", "v", "d"],
			apply: (x) => {
				const s = x.sel;
				if (!s) return;
				const l = x.lines[s.line - 1] ?? "";
				x.lines[s.line - 1] = l.slice(0, s.sc - 1) + l.slice(s.ec);
				x.sel = null;
			},
		};
	}
	if (kind === "above") {
		const at = 1 + r(m.lines.length);
		const text = newLine();
		return {
			name: `add a line above ${at}`,
			keys: [`${at}G`, "O", text, "Escape"],
			apply: (x) => {
				x.lines.splice(at - 1, 0, text);
				if (x.sel && at <= x.sel.line) x.sel.line++;
			},
		};
	}
	const others = m.lines.map((_, i) => i + 1).filter((l) => l !== sel.line);
	if (others.length === 0 || m.lines.length < 3) return pick({ ...m, sel: null }, r);
	const line = others[r(others.length)] as number;
	if (kind === "deleteLine") {
		return {
			name: `delete line ${line}`,
			keys: [`${line}G`, "d", "d"],
			apply: (x) => {
				x.lines.splice(line - 1, 1);
				if (x.sel && line < x.sel.line) x.sel.line--;
			},
		};
	}
	return {
		name: `edit line ${line}`,
		keys: [`${line}G`, "A", "!", "Escape"],
		apply: (x) => {
			x.lines[line - 1] += "!";
		},
	};
}

interface Reported {
	start: { line: number; column: number };
	end: { line: number; column: number };
	text: string;
}

async function check(vim: Vim, m: Model, history: string[], seed: number): Promise<void> {
	const want = m.sel
		? { start: { line: m.sel.line, column: m.sel.sc }, end: { line: m.sel.line, column: m.sel.ec }, text: m.sel.text }
		: null;
	let seen: unknown;
	await pollUntil(
		async () => {
			const lines = await vim.expr<string[]>("mode() ==# 'n' ? getline(1, '$') : []");
			const s = vim.state();
			const sel = (s?.["active_buffer"] as { selection: (Reported & object) | null } | undefined)?.selection;
			const got = sel ? { start: sel.start, end: sel.end, text: sel.text } : null;
			seen = { lines, selection: got };
			return isDeepStrictEqual(lines, m.lines) && isDeepStrictEqual(got, want) ? true : undefined;
		},
		() =>
			`seed ${seed} (replay: PI_IDE_SEED=${seed}) after: ${history.join("; ")}\nwant ${JSON.stringify({ lines: m.lines, selection: want })}\nseen ${JSON.stringify(seen)}`,
		{ timeoutMs: 5000, intervalMs: 25 },
	);
}

const fixed = process.env["PI_IDE_SEED"];
const SEEDS = fixed ? [Number(fixed)] : [1, 2, 3, 4];
const STEPS = 14;

describe("vim: selections under random edits, against a model", { concurrency: 2 }, () => {
	for (const seed of SEEDS) {
		it(`seed ${seed}: ${STEPS} steps`, async (t) => {
			const vim = await startVim(t);
			const m: Model = {
				lines: ["alpha beta gamma", "delta epsilon", "zeta eta theta iota", "kappa lambda mu"],
				sel: null,
			};
			writeFileSync(join(vim.dirs.work, "w.txt"), `${m.lines.join("\n")}\n`);
			await vim.ex("edit w.txt");
			const r = random(seed);
			const history: string[] = [];
			for (let i = 0; i < STEPS; i++) {
				const step = pick(m, r);
				history.push(step.name);
				await vim.keys(...step.keys);
				step.apply(m);
				await check(vim, m, history, seed);
			}
		});
	}
});
