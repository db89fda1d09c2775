/**
 * The package's pi entry (package.json `pi.extensions`). pi names an extension after its entry's path, an
 * `index.ts` after its directory: this file makes the name the package's ("pi-ide-context" from npm, the
 * clone's directory from a local path), where `src/index.ts` made it "src". The extension is src/index.ts.
 */
export { default } from "./src/index.ts";
