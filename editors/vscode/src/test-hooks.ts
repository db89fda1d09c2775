/**
 * The extension's test hooks, for test harnesses only (the conformance kit's code-server adapter, through the
 * test driver extension in the same extension host): with `TEST_HOOKS_ENV` set to "1" in the extension host's
 * environment at its start, `activate` returns `TestHooks`, which stop the extension and start it again in the
 * same extension host, as a new window would, with the state dir read afresh from `process.env`. Nothing else
 * reaches them: they are no command, setting or file, only the value `activate` returns to code in this host.
 * No `vscode` import here: the harness reads the name in plain Node.
 */

export const TEST_HOOKS_ENV = "PI_IDE_CONTEXT_TEST_HOOKS";

/** What `activate` returns when `TEST_HOOKS_ENV` was "1" at the extension host's start. */
export interface TestHooks {
	/** What deactivating does: everything disposed, the state file removed. Idempotent. */
	stop(): void;
	/** Stop, then run activation's setup again: the state dir from `process.env`, no memory of pi's messages. */
	start(): void;
	/**
	 * The places the "pi's places" view holds, oldest first (each row's accessible name: "<file>:<lines> <text>"),
	 * what VS Code draws once it has refreshed the view: a harness reading the drawn rows waits for these.
	 */
	places(): string[];
}
