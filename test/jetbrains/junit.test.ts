/**
 * The JetBrains client's JUnit tests (editors/jetbrains/src/test/java): the pure core's tables and the platform
 * glue against real IntelliJ platform 183 classes, run by JUnit's console launcher (Debian's junit5) so
 * `npm test` counts them: every JUnit test is one node:test case here, and a failing one fails the run.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { buildJetBrains, JUNIT_CONSOLE } from "../helpers/jetbrains.ts";

interface Outcome {
	suite: string;
	name: string;
	failure: string | undefined;
}

/** The cases of JUnit's legacy XML reports (one file per engine). */
function parseReports(dir: string): Outcome[] {
	const outcomes: Outcome[] = [];
	for (const file of readdirSync(dir).filter((f) => f.endsWith(".xml"))) {
		const xml = readFileSync(join(dir, file), "utf8");
		for (const match of xml.matchAll(
			/<testcase name="([^"]*)" classname="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g,
		)) {
			const body = match[4] ?? "";
			const failed = /<(failure|error)[^>]*?(message="([^"]*)")?/.exec(body);
			outcomes.push({
				suite: match[2] ?? "",
				name: match[1] ?? "",
				failure: failed ? (failed[3] ?? "failed") : undefined,
			});
		}
	}
	return outcomes;
}

const build = await buildJetBrains();
const reports = mkdtempSync(join(tmpdir(), "pi-ide-junit-"));
let outcomes: Outcome[];
let output = "";
try {
	try {
		const run = await promisify(execFile)(
			"java",
			[
				"-jar",
				JUNIT_CONSOLE,
				"--disable-banner",
				"--details=none",
				"--class-path",
				build.testClassPath,
				"--scan-class-path",
				"--reports-dir",
				reports,
			],
			{ maxBuffer: 16 * 1024 * 1024 },
		);
		output = run.stdout + run.stderr;
	} catch (error) {
		// a failing test exits 1: the report says which
		output = String((error as { stdout?: string }).stdout ?? error);
	}
	outcomes = parseReports(reports);
} finally {
	rmSync(reports, { recursive: true, force: true });
}

describe("JetBrains client: JUnit", () => {
	it("found the tests", () => {
		assert.ok(outcomes.length >= 100, `only ${outcomes.length} JUnit tests reported:\n${output}`);
	});
	for (const outcome of outcomes) {
		it(`${outcome.suite.replace(/^pi\.ide\./, "")}: ${outcome.name}`, () => {
			assert.equal(outcome.failure, undefined, outcome.failure);
		});
	}
});
