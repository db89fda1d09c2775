/**
 * The Obsidian plugin (editors/obsidian/src/main.ts) loaded against the fake of Obsidian's API
 * (editors/obsidian/test/fake-obsidian.ts, mapped onto the `obsidian` import with a module hook) with the real
 * CodeMirror packages, and the browser globals it uses (`document` for selectionchange, window focus,
 * `getSelection`). Obsidian itself cannot run here. Used by test/unit/editors/obsidian/obsidian-plugin.test.ts and the
 * conformance kit's adapter (test/conformance/adapters/obsidian.ts).
 */
import { registerHooks } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const FAKE = pathToFileURL(resolve(HERE, "../../editors/obsidian/test/fake-obsidian.ts")).href;
// `obsidian` is the fake. CodeMirror is provided by the host in Obsidian, one instance for everyone: the
// bundle's require() of it gets the same ESM instance the fake and the sources use.
registerHooks({
	resolve: (specifier, context, nextResolve) => {
		if (specifier === "obsidian") return { url: FAKE, shortCircuit: true };
		if (specifier.startsWith("@codemirror/"))
			return nextResolve(specifier, { ...context, conditions: ["node", "import"] });
		return nextResolve(specifier, context);
	},
});

// Before the globals below: CodeMirror reads `document` when it loads and wants a real one or none.
export const fake = await import("../../editors/obsidian/test/fake-obsidian.ts");
export const { default: PiIdeContextPlugin } = await import("../../editors/obsidian/src/main.ts");

export interface FakeSelection {
	anchorNode: unknown;
	toString(): string;
}

/** The browser globals the plugin uses: `document` (selectionchange), `window` focus, `getSelection`. */
export const dom = { document: new EventTarget(), window: new EventTarget(), selection: null as FakeSelection | null };
Object.assign(globalThis, {
	document: dom.document,
	addEventListener: dom.window.addEventListener.bind(dom.window),
	removeEventListener: dom.window.removeEventListener.bind(dom.window),
	getSelection: () => dom.selection,
});

/**
 * The plugin loaded on `vault` with the state dir under `runtimeDir` (read from the environment when it loads, as in
 * Obsidian; the process's own XDG_RUNTIME_DIR is put back after), unloaded when `t` ends.
 */
export async function loadPlugin(
	t: { after(fn: () => void): void },
	vault: string,
	runtimeDir: string,
): Promise<{ app: InstanceType<typeof fake.App>; host: InstanceType<typeof fake.Plugin> }> {
	const saved = process.env["XDG_RUNTIME_DIR"];
	process.env["XDG_RUNTIME_DIR"] = runtimeDir;
	const app = new fake.App(new fake.FileSystemAdapter(vault));
	const plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
	const host = plugin as unknown as InstanceType<typeof fake.Plugin>;
	try {
		await plugin.onload();
	} finally {
		if (saved === undefined) delete process.env["XDG_RUNTIME_DIR"];
		else process.env["XDG_RUNTIME_DIR"] = saved;
	}
	t.after(() => host.unload());
	return { app, host };
}
