/**
 * The JetBrains client's cursor and selection rules (Text.java) against the TypeScript clients'
 * (editors/shared/state.ts, the independent oracle), on seeded random documents and positions: ASCII, 2-, 3- and
 * 4-byte characters, quotes, backslashes and control bytes, empty lines, \r\n, positions inside surrogate pairs
 * and past line ends. The same snapshot must give the same cursor, start, end, text, truncation and line
 * count in both. A failure prints its seed; PI_IDE_SEED=<n> replays one case.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { countLines, describeSelection, linesOf, toWirePosition } from "../../editors/shared/state.ts";
import { coreOps } from "../helpers/jetbrains.ts";
import { mulberry32 as random } from "../helpers/seeded.ts";

interface Reply {
	cursor: string;
	selection: { start: string; end: string; text: string; truncated: boolean } | null;
	lines_total: number;
}

const PIECES = ["a", "Z", " ", "é", "€", "😀", '"', "\\", "\t", "\u0001", "ß", "中", "\u2028", "x"];

function caseFor(seed: number) {
	const next = random(seed);
	const pick = (n: number) => Math.floor(next() * n);
	const lineCount = 1 + pick(6);
	const lines: string[] = [];
	for (let i = 0; i < lineCount; i++) {
		let line = "";
		const length = pick(12);
		for (let j = 0; j < length; j++) line += PIECES[pick(PIECES.length)];
		lines.push(line);
	}
	const text = lines.join(next() < 0.2 ? "\r\n" : "\n") + (next() < 0.5 ? "\n" : "");
	const position = () => {
		const line = pick(lineCount + 1) - (next() < 0.1 ? 1 : 0);
		return { line, character: pick(14) };
	};
	return { text, anchor: position(), head: position() };
}

const ask = coreOps<Reply>();

it("Text.java agrees with editors/shared/state.ts on 500 seeded documents and positions", async () => {
	const only = process.env["PI_IDE_SEED"];
	const seeds = only ? [Number(only)] : Array.from({ length: 500 }, (_, i) => 1000 + i);
	for (const seed of seeds) {
		const c = caseFor(seed);
		const java = await ask({ op: "describe", ...c });
		const lines = linesOf(c.text);
		const range = describeSelection(lines, c.anchor, c.head);
		const cursor = toWirePosition(lines, c.head);
		const oracle: Reply = {
			cursor: `${cursor.line}:${cursor.column}`,
			selection: range
				? {
						start: `${range.start.line}:${range.start.column}`,
						end: `${range.end.line}:${range.end.column}`,
						text: range.text,
						truncated: range.truncated === true,
					}
				: null,
			lines_total: countLines(lines),
		};
		assert.deepEqual(java, oracle, `seed ${seed} (replay: PI_IDE_SEED=${seed}): ${JSON.stringify(c)}`);
	}
});
