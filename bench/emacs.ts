/**
 * Benchmarks of the Emacs client, in a real `emacs --daemon` with a tty client frame (Debian 12's Emacs 28):
 * the client's own work per cursor event (`pi-ide--post-command`, the function `post-command-hook` runs after
 * every command, measured inside Emacs with `benchmark-run` over 10,000 calls with point really moving, less
 * the same loop moving point alone), the same with an active region, the cost of one write for a typical
 * state, and writes per second while the cursor keeps moving (one command per emacsclient request, as fast as
 * they come, for 3 s).
 * Run by `npm run bench` (bench/run.ts) or on its own: `node bench/emacs.ts`.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EMACS_BIN, elispString, startEmacs } from "../test/helpers/emacs.ts";
import { header, median, row, scope } from "./report.ts";

/**
 * Microseconds per call of BODY over 1,000 calls, 10 batches, each less the same loop with BASELINE; a list.
 * Each batch starts after a collection, so it pays for the garbage it makes itself (included: a hook that
 * allocates makes the collections of a large heap come sooner), not for what ran before it.
 */
const PER_CALL = (body: string, baseline: string) => `
(let ((n 1000) (out nil))
  (dotimes (b 10)
    (garbage-collect)
    (let ((with (car (benchmark-run n (progn (goto-char (1+ (random (1- (point-max))))) ${body})))))
      (garbage-collect)
      (let ((without (car (benchmark-run n (progn (goto-char (1+ (random (1- (point-max))))) ${baseline})))))
        (push (/ (* 1e6 (max 0 (- with without))) n) out))))
  (vconcat out))`;

export async function runEmacsBench(): Promise<void> {
	const version = execFileSync(EMACS_BIN, ["--version"], { encoding: "utf8" }).split("\n")[0];
	console.log(`\n-- Emacs client (${version})`);
	header();
	const s = scope();
	try {
		const e = await startEmacs(s);
		const lines = Array.from({ length: 500 }, (_, i) => `value_${i} = compute(${i}, "some text here")`);
		const file = join(e.dir, "typical.py");
		writeFileSync(file, `${lines.join("\n")}\n`);
		await e.act(`(find-file ${elispString(file)})`);
		await e.act("(pi-ide-test-select 3 1 4 10)");
		await e.until((x) => x?.active_buffer.selection ?? undefined, "typical state written");
		const inBuffer = (form: string) => `(with-current-buffer ${`(find-buffer-visiting ${elispString(file)})`} ${form})`;

		await e.act("(deactivate-mark)");
		const plain = median(await e.json<number[]>(inBuffer(PER_CALL("(pi-ide--post-command)", "nil"))));
		row("post-command-hook function, per cursor event", `${plain.toFixed(2)} µs`, "<= 20 µs", plain <= 20);
		const region = median(
			await e.json<number[]>(inBuffer(`(progn (push-mark 1 t t) ${PER_CALL("(pi-ide--post-command)", "nil")})`)),
		);
		row("  with an active region (moving its end)", `${region.toFixed(2)} µs`, "<= 20 µs", region <= 20);
		await e.act("(deactivate-mark)");

		const write = median(
			await e.json<number[]>(
				inBuffer("(vconcat (cl-loop repeat 200 collect (* 1000 (car (benchmark-run 1 (pi-ide-write-now t))))))"),
			),
		);
		row("write, typical state (median of 200)", `${write.toFixed(3)} ms`, "(info)", true);

		// Writes per second while the cursor keeps moving: each request one command, as fast as they come.
		const before = Number(await e.eval("(plist-get pi-ide--stats :writes)"));
		const started = performance.now();
		let moves = 0;
		while (performance.now() - started < 3000) {
			moves++;
			await e.act(`(goto-char (1+ (* ${moves % 400} 40)))`);
		}
		const seconds = (performance.now() - started) / 1000;
		const rate = (Number(await e.eval("(plist-get pi-ide--stats :writes)")) - before) / seconds;
		row(`writes/s, continuous movement (${Math.round(moves / seconds)} moves/s)`, rate.toFixed(2), "<= 5", rate <= 5);

		// The same with real keys through the command loop, as a held-down key sends them: C-n/C-p in bursts for
		// 3 s. Emacs works through the keys after they were sent (each one redraws the tty frame), so the window
		// is Emacs's own clock: from before the first key to a request that queues behind the last one.
		await e.act("(goto-char (point-min))");
		const beforeKeys = Number(await e.eval("(plist-get pi-ide--stats :writes)"));
		const t0 = Number(await e.eval("(float-time)"));
		const startedKeys = performance.now();
		let keys = 0;
		while (performance.now() - startedKeys < 3000) {
			const key = Math.floor(keys / 200) % 2 === 0 ? "C-n" : "C-p";
			await e.keys(...Array.from({ length: 10 }, () => key));
			keys += 10;
		}
		const [t1, afterKeys] = await e.json<[number, number]>("(vector (float-time) (plist-get pi-ide--stats :writes))");
		const keySeconds = t1 - t0;
		const keyRate = (afterKeys - beforeKeys) / keySeconds;
		row(
			`writes/s, held-down C-n/C-p (${Math.round(keys / keySeconds)} keys/s handled)`,
			keyRate.toFixed(2),
			"<= 5",
			keyRate <= 5,
		);
	} finally {
		await s.close();
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runEmacsBench();
