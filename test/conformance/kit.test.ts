/**
 * The conformance kit: every case in test/conformance/cases/*.ts against every client adapter in
 * test/conformance/adapters/*.ts, both found at run time (an adapter file dropped in joins the kit). A case
 * needing a capability an adapter lacks is not run for it, and the kit prints one line naming the case, the
 * adapter and the adapter's reason: never a silent pass. Cases that allow it share one editor per adapter.
 *
 * `KIT_ONLY=<text>` runs only the adapters whose name contains it (`KIT_ONLY="nvim 0.10"`).
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ClientAdapter } from "./client.ts";
import { type Editor, type Kit, type KitCase, makeTempDir, type StartEditor, startEditor } from "./kit.ts";

const HERE = fileURLToPath(new URL(".", import.meta.url));

/** Every `export const <name>` array of the modules in `dir`, in file-name order. */
async function loadAll<T>(dir: string, name: string): Promise<T[]> {
	const found: T[] = [];
	for (const file of readdirSync(dir)
		.filter((f) => f.endsWith(".ts"))
		.sort()) {
		const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
		const list = module[name];
		if (!Array.isArray(list)) throw new Error(`${join(dir, file)} does not export \`${name}\` as an array`);
		found.push(...(list as T[]));
	}
	return found;
}

const only = process.env["KIT_ONLY"];
const adapters = (await loadAll<ClientAdapter>(join(HERE, "adapters"), "adapters")).filter(
	(a) => only === undefined || a.name.includes(only),
);
const cases = await loadAll<KitCase>(join(HERE, "cases"), "cases");
if (adapters.length === 0) throw new Error(`no adapter in test/conformance/adapters matches KIT_ONLY=${only}`);

/** "<case> — <adapter>: not run, <why>" lines, printed when the kit ends. */
const notRun: string[] = [];
after(() => {
	if (notRun.length > 0) console.log(`conformance kit: ${notRun.length} case(s) not run\n${notRun.join("\n")}`);
});

/** Why `c` is not run for `adapter`, or undefined when it is. */
function reasonNotRun(c: KitCase, adapter: ClientAdapter): string | undefined {
	const lacking = (c.needs ?? []).filter((capability) => !adapter.capabilities.has(capability));
	if (lacking.length > 0) {
		return lacking
			.map((capability) => `no "${capability}": ${adapter.missing[capability] ?? "(the adapter gives no reason)"}`)
			.join("; ");
	}
	return c.unavailable?.();
}

function suiteFor(adapter: ClientAdapter): void {
	// One case at a time: cases share the adapter's editor.
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
						shared ??= startEditor(adapter);
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

// Editors in processes of their own run three at a time (the machine's two cores wait on them, not on the
// kit); in-process clients share the kit's pid and environment, so they take turns in one lane.
describe("conformance kit", { concurrency: 3 }, () => {
	const longestFirst = adapters
		.filter((a) => a.inProcess !== true)
		.sort((a, b) => (b.expectedSeconds ?? 0) - (a.expectedSeconds ?? 0));
	for (const adapter of longestFirst) suiteFor(adapter);
	const inProcess = adapters.filter((a) => a.inProcess === true);
	if (inProcess.length > 0) {
		describe("in-process clients, one at a time", { concurrency: 1 }, () => {
			for (const adapter of inProcess) suiteFor(adapter);
		});
	}
});
