/**
 * The one polling helper of the test suite: ask `probe` again and again until it returns a value, or give
 * up at the deadline with a message that says what was awaited and what was last seen. Waits never sleep
 * a fixed time; each one polls for something new the action under test must cause (docs/TEAM-NOTES.md).
 * The Neovim harness (`Nvim.until`), the tmux pane (`Tui.waitFor`), code-server's `waitFor` and the unit
 * tests' file polls are all built on it.
 */

export interface PollOptions {
	/** Give up after this long; default 5000 ms. */
	timeoutMs?: number;
	/** Pause between probes; default 10 ms. */
	intervalMs?: number;
}

/**
 * Poll `probe` until it returns something other than `undefined`, and return that. A probe that throws
 * fails the wait at once. At the deadline, throws `timed out after <ms> ms: <describe()>`.
 */
export async function pollUntil<T>(
	probe: () => T | undefined | Promise<T | undefined>,
	describe: string | (() => string),
	options: PollOptions | number = {},
): Promise<T> {
	const { timeoutMs = 5000, intervalMs = 10 } = typeof options === "number" ? { timeoutMs: options } : options;
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) {
			throw new Error(`timed out after ${timeoutMs} ms: ${typeof describe === "string" ? describe : describe()}`);
		}
		await new Promise((resolve) => setTimeout(resolve, intervalMs));
	}
}

/** `pollUntil` for a condition: resolves once `check()` is true. */
export async function pollFor(
	check: () => boolean | Promise<boolean>,
	describe: string | (() => string),
	options: PollOptions | number = {},
): Promise<void> {
	await pollUntil(async () => ((await check()) ? true : undefined), describe, options);
}
