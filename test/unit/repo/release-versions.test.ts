/**
 * One version for every artifact (DEVELOPING.md, "Releasing"): each place a client declares its version says
 * package.json's, and CHANGELOG.md's newest entry is for it. The reader of each place is checked on planted text.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readVersions, VERSION_PLACES, versionMismatches } from "../../../scripts/release-versions.ts";
import { REPO } from "../../helpers/pi-env.ts";

describe("release versions", () => {
	test("every place says package.json's version", () => {
		const found = readVersions(REPO);
		const expected = found[0]?.version;
		assert.match(expected ?? "", /^\d+\.\d+\.\d+/);
		assert.deepEqual(versionMismatches(found, expected ?? ""), []);
	});

	const planted: { file: string; text: string; version: string | undefined }[] = [
		{ file: "package.json", text: '{"name":"x","version":"9.8.7"}', version: "9.8.7" },
		{ file: "package.json", text: '{"name":"x"}', version: undefined },
		{ file: "editors/obsidian/manifest.json", text: '{"version":"1.2.3","minAppVersion":"1.5.0"}', version: "1.2.3" },
		{
			file: "editors/jetbrains/resources/META-INF/plugin.xml",
			text: '<idea-plugin><id>x</id><version>0.3.0</version><idea-version since-build="183"/></idea-plugin>',
			version: "0.3.0",
		},
		{ file: "editors/emacs/pi-ide-pkg.el", text: '(define-package "pi-ide" "0.3.0"\n  "doc")', version: "0.3.0" },
		{ file: "editors/emacs/pi-ide.el", text: ";;; pi-ide.el --- x\n;; Version: 0.4.1\n", version: "0.4.1" },
		{ file: "CHANGELOG.md", text: "# Changelog\n\n## 0.5.0\n\n- x\n\n## 0.4.0\n", version: "0.5.0" },
		{ file: "CHANGELOG.md", text: "# Changelog\n\nNothing yet.\n", version: undefined },
	];
	for (const { file, text, version } of planted) {
		test(`${file} read from ${JSON.stringify(text.slice(0, 40))}: ${version ?? "no version"}`, () => {
			const place = VERSION_PLACES.find((p) => p.file === file);
			assert.ok(place, file);
			assert.equal(place.read(text), version);
		});
	}

	test("a place that disagrees is named with what it says", () => {
		assert.deepEqual(
			versionMismatches(
				[
					{ file: "package.json", version: "0.2.0" },
					{ file: "editors/emacs/pi-ide-pkg.el", version: "0.3.0" },
					{ file: "CHANGELOG.md", version: undefined },
				],
				"0.2.0",
			),
			["editors/emacs/pi-ide-pkg.el says 0.3.0", "CHANGELOG.md says no version"],
		);
	});
});
