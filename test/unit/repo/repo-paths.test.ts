/**
 * No tracked file names a path of the machine it was written on: the checkout's own absolute path, the
 * team's notes beside it, or the developer's home. Files are named by their path in the repository or in the
 * team's notes beside it (`../shared/notes/...`).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { it } from "node:test";
import { REPO } from "../../helpers/pi-env.ts";

/** Absolute prefixes that only make sense on this machine (the root "/" never counts). */
const machinePaths = [REPO, resolve(REPO, "../shared"), homedir()].filter((p) => p.length > 1).map((p) => `${p}/`);

it(`no tracked file mentions ${machinePaths.join(", ")}`, () => {
	const files = execFileSync("git", ["ls-files", "-z"], { cwd: REPO, encoding: "utf8" }).split("\0").filter(Boolean);
	assert.ok(files.length > 50, "git ls-files listed the repository");
	const hits: string[] = [];
	for (const file of files) {
		let text: string;
		try {
			text = readFileSync(join(REPO, file), "utf8");
		} catch {
			continue; // a file deleted in the working tree
		}
		text.split("\n").forEach((line, i) => {
			for (const prefix of machinePaths) if (line.includes(prefix)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
		});
	}
	assert.deepEqual(hits, []);
});
