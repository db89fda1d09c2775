/**
 * The version every artifact of a release reports, read where each client declares it. package.json's version is
 * the release's; each other place must say the same, and CHANGELOG.md must have an entry for it.
 *
 *   node scripts/release-versions.ts           lists each place and the version it says
 *   node scripts/release-versions.ts --check   prints the places that disagree and exits 1 (scripts/release.sh)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One place a version is declared: the file, and how to find the version in its text. */
export interface VersionPlace {
	readonly file: string;
	readonly read: (text: string) => string | undefined;
}

const jsonVersion = (text: string): string | undefined => {
	const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
	return typeof version === "string" ? version : undefined;
};
const firstMatch =
	(pattern: RegExp) =>
	(text: string): string | undefined =>
		pattern.exec(text)?.[1];

export const VERSION_PLACES: readonly VersionPlace[] = [
	{ file: "package.json", read: jsonVersion },
	{ file: "editors/vscode/package.json", read: jsonVersion },
	{ file: "editors/obsidian/package.json", read: jsonVersion },
	{ file: "editors/obsidian/manifest.json", read: jsonVersion },
	{ file: "editors/jetbrains/resources/META-INF/plugin.xml", read: firstMatch(/<version>([^<]+)<\/version>/) },
	{ file: "editors/emacs/pi-ide-pkg.el", read: firstMatch(/\(define-package\s+"pi-ide"\s+"([^"]+)"/) },
	{ file: "editors/emacs/pi-ide.el", read: firstMatch(/^;; Version: (\S+)$/m) },
	// The changelog's newest entry: the first `## <version>` heading.
	{ file: "CHANGELOG.md", read: firstMatch(/^## (\d+\.\d+\.\d+\S*)/m) },
];

/** Each place with the version it says (undefined where none is found). */
export function readVersions(repo: string): { file: string; version: string | undefined }[] {
	return VERSION_PLACES.map(({ file, read }) => ({ file, version: read(readFileSync(join(repo, file), "utf8")) }));
}

/** The places that do not say `expected`, as `file says X` phrases. */
export function versionMismatches(found: readonly { file: string; version: string | undefined }[], expected: string) {
	return found
		.filter(({ version }) => version !== expected)
		.map(({ file, version }) => `${file} says ${version ?? "no version"}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const repo = join(fileURLToPath(import.meta.url), "../..");
	const found = readVersions(repo);
	const expected = found[0]?.version ?? "";
	if (process.argv.includes("--check")) {
		const wrong = versionMismatches(found, expected);
		if (wrong.length > 0) {
			process.stdout.write(`${wrong.join("; ")} (package.json says ${expected})\n`);
			process.exit(1);
		}
	} else {
		for (const { file, version } of found) process.stdout.write(`${version ?? "-"}\t${file}\n`);
	}
}
