/**
 * How the conformance kit runs its cases against one client adapter: the suite test/conformance/kit.test.ts
 * makes for every adapter, and a variant file (test/emacs/kit-flycheck.test.ts) for one adapter and a subset.
 */
import { rmSync } from "node:fs";
import { after, describe, it } from "node:test";
import type { ClientAdapter } from "./client.ts";
import { type Editor, type Kit, type KitCase, makeTempDir, type StartEditor, startEditor } from "./kit.ts";

/** Why `c` is not run for `adapter`, or undefined when it is. */
export function reasonNotRun(c: KitCase, adapter: ClientAdapter): string | undefined {
	const lacking = (c.needs ?? []).filter((capability) => !adapter.capabilities.has(capability));
	if (lacking.length > 0) {
		return lacking
			.map((capability) => `no "${capability}": ${adapter.missing[capability] ?? "(the adapter gives no reason)"}`)
			.join("; ");
	}
	return c.unavailable?.();
}

/**
 * Whether `c` drives only editors of its own, never the shared one: it says so (`ownEditors`), or it is a row of a
 * table that starts an editor per row.
 */
export const usesOwnEditors = (c: KitCase): boolean =>
	c.ownEditors === true || c.needs?.includes("editor-per-row") === true;

/**
 * One adapter's suite: every case of `cases` it can run (the cases that share the adapter's editor one at a
 * time, in order); a case it cannot run adds a line to `notRun` instead, naming the adapter's reason. With
 * `rowLanes` (ClientAdapter) above 1, the cases that start editors of their own (`usesOwnEditors`) run that
 * many at a time, beside the shared editor's cases (and start first); once those end, the shared editor closes
 * and one more lane runs them.
 */
export function describeAdapter(adapter: ClientAdapter, cases: readonly KitCase[], notRun: string[]): void {
	const lanes = adapter.inProcess === true ? 1 : Math.max(1, Math.floor(adapter.rowLanes ?? 1));
	describe(`conformance: ${adapter.name}`, { concurrency: lanes > 1 ? 2 : 1 }, () => {
		let shared: Promise<{ editor: Editor; dispose: () => Promise<void> }> | undefined;
		/** Close the shared editor, if one started (a start that failed has nothing to close). */
		const closeShared = async () => {
			const ending = shared;
			shared = undefined;
			const started = await ending?.catch(() => undefined);
			await started?.dispose();
		};
		after(async () => {
			try {
				await closeShared();
			} finally {
				await adapter.close?.();
			}
		});
		const caseTest = (c: KitCase): void => {
			const own = usesOwnEditors(c);
			it(c.name, async () => {
				const cleanups: (() => Promise<void> | void)[] = [];
				const kit: Kit = {
					adapter,
					shared: async () => {
						// Such a case may run beside the shared editor's cases: it must not drive that editor.
						if (own) throw new Error(`${c.name}: a case in editors of its own asked for the shared one`);
						// A start that failed fails its case; the next case starts the editor again rather than
						// failing on the same error.
						if (!shared) {
							const starting = startEditor(adapter);
							shared = starting;
							starting.catch(() => {
								if (shared === starting) shared = undefined;
							});
						}
						return (await shared).editor;
					},
					start: async (options?: StartEditor) => {
						// An in-process client has one session at a time (one pid, one module state): the shared
						// editor ends here and starts again when a later case asks for it.
						if (adapter.inProcess === true && shared) {
							const ending = shared;
							shared = undefined;
							await (await ending).dispose();
						}
						const started = await startEditor(adapter, options);
						cleanups.push(started.dispose);
						return started.editor;
					},
					tmp: () => {
						const dir = makeTempDir();
						cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
						return dir;
					},
				};
				try {
					await c.run(kit);
				} finally {
					for (const cleanup of cleanups.reverse()) await cleanup();
				}
			});
		};
		const runnable = cases.filter((c) => {
			const why = reasonNotRun(c, adapter);
			if (why !== undefined) notRun.push(`${c.name} — ${adapter.name}: not run, ${why}`);
			return why === undefined;
		});
		if (lanes === 1) {
			for (const c of runnable) caseTest(c);
			return;
		}
		const own = runnable.filter(usesOwnEditors);
		const sharing = runnable.filter((c) => !usesOwnEditors(c));
		let sharedCasesEnded = () => {};
		const sharedCasesEnd = new Promise<void>((resolve) => {
			sharedCasesEnded = resolve;
		});
		// The lanes of editors of their own are declared, and so start their editors, first: they hold most of the
		// cases, and an adapter that starts its editors one at a time (code-server's windows) serves them first.
		// Once the shared editor's cases end, that editor closes and its lane takes cases in editors of their own
		// (code-server's window goes back to the adapter's pool): one more lane, the number of editors unchanged.
		const widens = sharing.length > 0 && own.length > 0;
		describe(`cases in editors of their own, ${lanes} at a time`, { concurrency: widens ? lanes + 1 : lanes }, () => {
			if (widens) {
				it(`the shared editor's cases ended: it closed, and its lane took cases in editors of their own`, async () => {
					await sharedCasesEnd;
					await closeShared();
				});
			}
			const rank = (c: KitCase) => (c.long ? 0 : c.quits ? 2 : 1);
			for (const c of own.sort((a, b) => rank(a) - rank(b))) caseTest(c);
		});
		describe("cases sharing its editor", { concurrency: 1 }, () => {
			after(() => sharedCasesEnded());
			for (const c of sharing) caseTest(c);
		});
	});
}
