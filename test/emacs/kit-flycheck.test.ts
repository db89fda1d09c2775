/**
 * The conformance kit's diagnostics cases (every case of test/conformance/cases/ that needs "diagnostics")
 * against the Emacs client with the diagnostics published through Flycheck (Debian's elpa-flycheck) instead of
 * Flymake: `flycheckAdapter` of test/conformance/adapters/emacs.ts. The rest of the kit does not depend on the
 * checker and runs once, through the Flymake adapter, in test/conformance/kit.test.ts.
 */
import { rmSync } from "node:fs";
import { after, describe, it } from "node:test";
import { flycheckAdapter } from "../conformance/adapters/emacs.ts";
import { cases as diagnosticsCases } from "../conformance/cases/diagnostics.ts";
import { cases as reloadCases } from "../conformance/cases/reload.ts";
import { type Editor, type Kit, makeTempDir, startEditor } from "../conformance/kit.ts";

const cases = [...diagnosticsCases, ...reloadCases].filter((c) => c.needs?.includes("diagnostics"));

describe(`conformance (diagnostics cases): ${flycheckAdapter.name}`, { concurrency: 1 }, () => {
	let shared: Promise<{ editor: Editor; dispose: () => Promise<void> }> | undefined;
	after(async () => {
		if (shared) await (await shared).dispose();
	});
	it("has diagnostics cases to run", () => {
		if (cases.length < 3) throw new Error(`only ${cases.length} diagnostics cases found`);
	});
	for (const c of cases) {
		it(c.name, async () => {
			const cleanups: (() => Promise<void> | void)[] = [];
			const kit: Kit = {
				adapter: flycheckAdapter,
				shared: async () => {
					shared ??= startEditor(flycheckAdapter);
					return (await shared).editor;
				},
				start: async (options) => {
					const started = await startEditor(flycheckAdapter, options);
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
