/**
 * Imported for its effect: maps the `vscode` module onto the fake of VS Code's API (test/helpers/fake-vscode.ts), so
 * the extension's sources (editors/vscode/src) load in Node. Import it before importing them (dynamically, after the
 * static imports have run): `const { X } = await import(".../editors/vscode/src/x.ts")`.
 */
import { registerHooks } from "node:module";

const FAKE = new URL("./fake-vscode.ts", import.meta.url).href;
registerHooks({
	resolve: (specifier, context, nextResolve) =>
		specifier === "vscode" ? { url: FAKE, shortCircuit: true } : nextResolve(specifier, context),
});
