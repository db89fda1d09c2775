/**
 * Wait, in two stages, for the editor's answer to one of pi's changes: its `files` report for the file
 * (at most `answerMs`: an editor that does not answer, suspended or busy, costs no more), and, only when it
 * reloaded the buffer with a language server or linter attached, diagnostics for the new version (until
 * `diagnosticsMs` from the same start).
 * Pure control flow: reading the editor's state, hearing about changes and the clock are all injected, so the
 * unit tests drive it with a fake clock and the shell with a directory watcher.
 */

import type { EditorState, FileReport } from "../protocol/protocol.ts";
import { findReport, isSettled, newestAnswered, type WaitCaps, type WaitEnd } from "./pi-message.ts";

export interface WaitPorts {
	/** The editor's state now (null when it is gone or unreadable). */
	read(): EditorState | null;
	/** Call `listener` whenever the editor's state may have changed; returns the unsubscribe. */
	subscribe(listener: () => void): () => void;
	/** Milliseconds, monotonic. */
	now(): number;
	/** Run `fn` after `ms`; returns the cancel. */
	setTimer(fn: () => void, ms: number): () => void;
	/** How many of pi's changes the editor has to answer now, this one included (parallel tool calls); 1 when left out. */
	outstanding?(): number;
}

export interface WaitOutcome {
	/** The newest report answering the change (undefined: the editor never answered). */
	report: FileReport | undefined;
	/** "settled": the report is final (no more diagnostics to wait for); else which cap ended it, or the abort. */
	ended: WaitEnd;
	waitedMs: number;
}

/**
 * Run every cleanup of a wait that ended, each even when an earlier one throws (a watcher or dialog that
 * already failed has nothing left to release).
 */
export function releaseAll(cleanups: readonly (() => void)[]): void {
	for (const cleanup of cleanups) {
		try {
			cleanup();
		} catch {
			// Nothing left to release.
		}
	}
}

/**
 * Resolve once the report for (`file`, `seq` or later) is settled, `caps.answerMs` passes with no report,
 * `caps.diagnosticsMs` passes with one that still waits for diagnostics, or `signal` aborts. At the answer cap
 * with no report, the editor gets longer, up to `caps.answerMaxMs` in all: `caps.answerPerChangeMs` for each other
 * change of pi's it has to answer (`ports.outstanding`: parallel tool calls, all reloaded before it answers), and
 * another `answerMs` whenever it answered another of this pi's changes since the last look (at work, not suspended).
 * Never rejects: a read that throws counts as "no answer yet".
 */
export function awaitFileReport(
	ports: WaitPorts,
	file: string,
	seq: number,
	caps: WaitCaps,
	signal?: AbortSignal,
	piPid?: number,
	piNs?: string | null,
): Promise<WaitOutcome> {
	const started = ports.now();
	return new Promise((resolve) => {
		let last: FileReport | undefined;
		let done = false;
		const cleanups: (() => void)[] = [];
		const finish = (ended: WaitEnd) => {
			if (done) return;
			done = true;
			releaseAll(cleanups);
			resolve({ report: last, ended, waitedMs: ports.now() - started });
		};
		let answered = 0;
		let diagnosticsCapPassed = false;
		const check = () => {
			if (done) return;
			try {
				const state = ports.read();
				const report = state ? findReport(state, file, seq, piPid, piNs) : undefined;
				if (report) last = report;
				if (isSettled(last)) finish("settled");
				else if (last !== undefined && diagnosticsCapPassed) finish("no diagnostics");
			} catch {
				// Unreadable now (mid-rename, vanished): the next change or the cap decides.
			}
		};
		/** This pi's newest answered change now (0: none, or unreadable). */
		const answeredNow = () => {
			try {
				const state = ports.read();
				return state ? newestAnswered(state, piPid, piNs) : 0;
			} catch {
				return 0;
			}
		};
		answered = answeredNow();
		if (signal?.aborted) return finish("aborted");
		const onAbort = () => finish("aborted");
		signal?.addEventListener("abort", onAbort, { once: true });
		cleanups.push(() => signal?.removeEventListener("abort", onAbort));
		// At each cap, one last look first: an answer whose directory event is still queued counts.
		const giveUp = () => finish(last === undefined ? "no answer" : "no diagnostics");
		let extended = false;
		const answerCap = () => {
			check();
			// Any report by now is a reload still waiting for diagnostics (the others settle at once).
			if (done || last !== undefined) return;
			const elapsed = ports.now() - started;
			const max = caps.answerMaxMs ?? caps.answerMs;
			// Many changes at once (pi's parallel tool calls): the editor reloads them all before it answers.
			const outstanding = Math.max(1, ports.outstanding?.() ?? 1);
			const busy = Math.min(max, caps.answerMs + (caps.answerPerChangeMs ?? 0) * (outstanding - 1));
			const now = answeredNow();
			let next = 0;
			if (elapsed < busy) next = busy - elapsed;
			else if (now > answered && elapsed < max) next = Math.min(caps.answerMs, max - elapsed);
			answered = Math.max(answered, now);
			if (next > 0) {
				extended = true;
				cleanups.push(ports.setTimer(answerCap, next));
				return;
			}
			giveUp();
		};
		cleanups.push(ports.setTimer(answerCap, caps.answerMs));
		cleanups.push(
			ports.setTimer(
				() => {
					check();
					diagnosticsCapPassed = true;
					// An answer wait still extended decides for itself (answerCap); a report waiting for diagnostics ends here.
					if (last !== undefined || !extended) giveUp();
				},
				Math.max(caps.answerMs, caps.diagnosticsMs),
			),
		);
		cleanups.push(ports.subscribe(check));
		check();
	});
}
