/**
 * Issue 26 item 1 end to end in Emacs 28: a real Emacs (a daemon with a tty frame in tmux), the user's change
 * typed as keys and not saved, and a real pi whose fake model calls pi's own `read`. The read's result is Emacs's
 * unsaved buffer (the lines asked for, said to be unsaved), not the disk; after the user's C-x C-s it is the
 * plain disk read again.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { elispString, startEmacs } from "../helpers/emacs.ts";
import { pollFor } from "../helpers/poll.ts";
import { envFor, readThroughPi, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `export const v${i + 1} = ${i + 1}; // line ${i + 1}`);
/** Typed through tmux: no `;` (tmux's command separator at the end of an argument) and no quotes. */
const TYPED = "export const typed = 42 // UNSAVED IN EMACS";

it("emacs + pi: a read of lines 2-4 holds the typed, unsaved line 3 and says so; after C-x C-s the disk text", async (t) => {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.ts", `${ORIGINAL.join("\n")}\n`);
	const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "Emacs reports src/app.ts");
	// Line 3 replaced, as a user does it: to the start of the buffer, two lines down, kill the line's text, type.
	await e.keys("M-<", "C-n", "C-n", "C-a", "C-k");
	await e.keys(TYPED);
	const line3 = `(with-current-buffer (find-buffer-visiting ${elispString(file)}) (save-excursion (goto-char (point-min)) (forward-line 2) (buffer-substring-no-properties (line-beginning-position) (line-end-position))))`;
	await pollFor(async () => (await e.json<string>(line3)) === TYPED, "the typed line in Emacs's buffer");
	// The state written for the buffer as typed (a debounced write while typing named an earlier copy).
	const tick = await e.json<number>(`(buffer-chars-modified-tick (find-buffer-visiting ${elispString(file)}))`);
	await e.until(
		// No copy while no pi is connected: pi's read waits until Emacs has seen it and written one.
		(s) => (s?.active_buffer.version === tick && s.buffers_serial === undefined ? true : undefined),
		"Emacs's state with the buffer as typed, and no copy while no pi is connected",
	);

	const unsaved = await readThroughPi(env, { path: "src/app.ts", offset: 2, limit: 3 });
	assert.match(unsaved, /is open in Emacs with unsaved changes/);
	assert.match(unsaved, /unsaved buffer/);
	assert.ok(unsaved.includes(TYPED), `the typed line is in the result:\n${unsaved}`);
	assert.ok(unsaved.includes(ORIGINAL[1] as string) && unsaved.includes(ORIGINAL[3] as string), "lines 2 and 4");
	assert.ok(!unsaved.includes(ORIGINAL[2] as string), "not the disk's line 3");

	await e.keys("C-x", "C-s");
	await e.until(
		(s) => (s !== null && !s.active_buffer.modified && s.buffers_serial === undefined ? true : undefined),
		"saved: no unsaved buffers named",
	);
	const saved = await readThroughPi(env, { path: "src/app.ts", offset: 2, limit: 3 });
	assert.doesNotMatch(saved, /unsaved/);
	// pi counts the empty line after the final newline: 21 lines on disk.
	assert.equal(
		saved,
		`${[ORIGINAL[1], TYPED, ORIGINAL[3]].join("\n")}\n\n[17 more lines in file. Use offset=5 to continue.]`,
	);
});
