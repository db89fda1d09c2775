/**
 * Diagnostics dated honestly under random edits, lints, slow linters and saves, against an independent oracle
 * (the rule: PROTOCOL.md v0.3 `diagnostics.version`, "the buffer version these diagnostics were computed
 * for, never a later one"). Real Vim, real ALE; the linter (test/helpers/vim-ale.ts, echo mode) reports the
 * content it read as its message, so a result says by itself which content it is for. The test records the
 * buffer's content at every changedtick it makes; every state file seen during the walk must say, for its
 * diagnostics' version V, exactly the content the buffer had at V, and V is never past the buffer's version.
 * At the end, with the linter quick again, the diagnostics become current. A failure prints the seed
 * (replay: PI_IDE_SEED=<seed>) and the steps.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pollUntil } from "../helpers/poll.ts";
import { seededInts as random } from "../helpers/seeded.ts";
import { makeVimDirs, readState, startVim, type Vim } from "../helpers/vim.ts";
import { aleLint, aleVimrc, setAleEcho, setAleSlow } from "../helpers/vim-ale.ts";

interface Seen {
	version: number;
	diagnostics: { version: number; total: number; items: { message: string }[] } | null;
}

const WORDS = ["alpha", "beta", "gamma", "delta", "eps"];
const fixed = process.env["PI_IDE_SEED"];
const SEEDS = fixed ? [Number(fixed)] : [11, 12, 13];
const STEPS = 24;

/** The content the buffer had at `version`: the newest record at or before it. */
function contentAt(records: [number, string[]][], version: number): string[] | undefined {
	let found: string[] | undefined;
	for (const [tick, lines] of records) if (tick <= version) found = lines;
	return found;
}

async function record(vim: Vim, records: [number, string[]][]): Promise<void> {
	records.push(await vim.expr<[number, string[]]>("[b:changedtick, getline(1, '$')]"));
}

describe("vim + ALE: diagnostics under random edits and lints, against the content each result is for", {
	concurrency: 2,
}, () => {
	for (const seed of SEEDS) {
		it(`seed ${seed}: ${STEPS} steps`, async (t) => {
			const dirs = makeVimDirs(t);
			const checker = join(dirs.root, "checker");
			const vim = await startVim(t, { dirs, vimrc: aleVimrc(checker, ["pikit"], false) });
			setAleEcho(checker);
			const file = join(dirs.work, "r.pk");
			writeFileSync(file, "alpha\nbeta\n");
			await vim.ex("edit r.pk");
			const records: [number, string[]][] = [];
			await record(vim, records);
			const seen: Seen[] = [];
			let watching = true;
			const watcher = (async () => {
				while (watching) {
					const s = readState(vim.stateFile);
					if (s) seen.push(s["active_buffer"] as Seen);
					await new Promise((r) => setTimeout(r, 15));
				}
			})();
			const r = random(seed);
			const history: string[] = [];
			try {
				for (let step = 0; step < STEPS; step++) {
					const n = await vim.expr<number>("line('$')");
					const word = `${WORDS[r(WORDS.length)]}${r(10)}`;
					switch (r(6)) {
						case 0:
						case 1: {
							const line = 1 + r(n);
							history.push(`set ${line} ${word}`);
							await vim.ex(`call setline(${line}, '${word}')`);
							await vim.keys("C-l");
							await record(vim, records);
							break;
						}
						case 2: {
							const op = n > 1 && r(2) === 0 ? `deletebufline('', ${1 + r(n)})` : `append(${r(n + 1)}, '${word}')`;
							history.push(op);
							await vim.ex(`call ${op}`);
							await vim.keys("C-l");
							await record(vim, records);
							break;
						}
						case 3: {
							const slow = [0, 0.3, 0.7][r(3)] ?? 0;
							history.push(`slow ${slow}`);
							setAleSlow(checker, slow);
							await vim.ex("call ale#Queue(0, '', bufnr('r.pk'))");
							break;
						}
						case 4: {
							history.push("save");
							await vim.ex("silent write");
							await record(vim, records);
							break;
						}
						default: {
							const ms = 50 * r(8);
							history.push(`wait ${ms}`);
							await new Promise((ok) => setTimeout(ok, ms));
						}
					}
				}
				setAleSlow(checker, 0);
				history.push("lint, quick");
				await aleLint(vim, file);
				const [now, lines] = await vim.expr<[number, string[]]>("[b:changedtick, getline(1, '$')]");
				await pollUntil(
					() => {
						const s = readState(vim.stateFile);
						const d = (s?.["active_buffer"] as Seen | undefined)?.diagnostics;
						return d?.version === now && d.items[0]?.message === lines.join("|") ? true : undefined;
					},
					() =>
						`seed ${seed} (replay: PI_IDE_SEED=${seed}): the diagnostics never became current; ${history.join("; ")}`,
					{ timeoutMs: 5000 },
				);
			} finally {
				watching = false;
				await watcher;
			}
			for (const b of seen) {
				const d = b.diagnostics;
				if (!d) continue;
				const where = `seed ${seed} (replay: PI_IDE_SEED=${seed}) after: ${history.join("; ")}\nseen ${JSON.stringify(b)}`;
				assert.ok(d.version <= b.version, `dated past the buffer: ${where}`);
				if (d.version === 0) continue;
				const want = contentAt(records, d.version);
				assert.ok(want, `no content recorded at ${d.version}: ${where}`);
				assert.equal(d.items[0]?.message, want.join("|"), `dated with content it was not computed for: ${where}`);
			}
		});
	}
});
