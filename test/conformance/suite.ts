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
 * One adapter's suite: every case of `cases` it can run, one at a time (cases share the adapter's editor); a
 * case it cannot run adds a line to `notRun` instead, naming the adapter's reason.
 */
export function describeAdapter(adapter: ClientAdapter, cases: readonly KitCase[], notRun: string[]): void {
	describe(`conformance: ${adapter.name}`, { concurrency: 1 }, () => {
		let shared: Promise<{ editor: Editor; dispose: () => Promise<void> }> | undefined;
		after(async () => {
			try {
				if (shared) await (await shared).dispose();
			} finally {
				await adapter.close?.();
			}
		});
		for (const c of cases) {
			const why = reasonNotRun(c, adapter);
			if (why !== undefined) {
				notRun.push(`${c.name} — ${adapter.name}: not run, ${why}`);
				continue;
			}
			it(c.name, async () => {
				const cleanups: (() => Promise<void> | void)[] = [];
				const kit: Kit = {
					adapter,
					shared: async () => {
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
		}
	});
}
