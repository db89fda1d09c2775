/**
 * The conformance kit: every case in test/conformance/cases/*.ts against every client adapter in
 * test/conformance/adapters/*.ts, both found at run time (an adapter file dropped in joins the kit). A case
 * needing a capability an adapter lacks is not run for it, and the kit prints one line naming the case, the
 * adapter and the adapter's reason: never a silent pass. Cases that allow it share one editor per adapter.
 *
 * `KIT_ONLY=<text>` runs only the adapters whose name contains it (`KIT_ONLY="nvim 0.10"`).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, describe } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ClientAdapter } from "./client.ts";
import type { KitCase } from "./kit.ts";
import { describeAdapter } from "./suite.ts";

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

// Editors in processes of their own run three at a time (the machine's two cores wait on them, not on the
// kit); in-process clients share the kit's pid and environment, so they take turns in one lane.
describe("conformance kit", { concurrency: 3 }, () => {
	const longestFirst = adapters
		.filter((a) => a.inProcess !== true)
		.sort((a, b) => (b.expectedSeconds ?? 0) - (a.expectedSeconds ?? 0));
	for (const adapter of longestFirst) describeAdapter(adapter, cases, notRun);
	const inProcess = adapters.filter((a) => a.inProcess === true);
	if (inProcess.length > 0) {
		describe("in-process clients, one at a time", { concurrency: 1 }, () => {
			for (const adapter of inProcess) describeAdapter(adapter, cases, notRun);
		});
	}
});
