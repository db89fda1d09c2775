/**
 * The scanner keeps an editor whose state file has malformed v0.3 fields, drops only those fields, and
 * carries what it dropped on the record, for `/ide status` (PROTOCOL.md, v0.3). A real private state dir.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateDirScanner } from "../../../src/discovery/scan.ts";
import { makeState, privateStateDirs, writeStateFile } from "../../helpers/state-files.ts";

const UID = process.getuid?.() ?? 0;
const PID = 4_000_011;
const stateDir = privateStateDirs("pi-ide-scan-v03-");

describe("StateDirScanner: malformed v0.3 fields", () => {
	interface Case {
		name: string;
		/** Extra top-level fields of the state file (written as JSON, so anything goes). */
		fields: Record<string, unknown>;
		warnings: string[] | undefined;
	}
	const CASES: Case[] = [
		{ name: "a v0.2 file: no warnings", fields: {}, warnings: undefined },
		{
			name: "well-formed v0.3 fields: no warnings",
			fields: { protocol: "0.3", files: [], pi: null },
			warnings: undefined,
		},
		{
			name: "files is not a list",
			fields: { protocol: "0.3", files: "nope" },
			warnings: ["/files: not an array, ignored"],
		},
		{
			name: "one bad report among good ones, and a bad pi",
			fields: {
				protocol: "0.3",
				files: [
					{
						file: "/p/a.ts",
						seq: 1,
						status: "reloaded",
						version: 2,
						modified: false,
						diagnostics_expected: false,
						diagnostics: null,
					},
					{ file: "/p/b.ts", seq: "two" },
				],
				pi: { pid: "x" },
			},
			warnings: ["/files: 1 malformed entries ignored", "/pi: malformed, ignored"],
		},
	];
	for (const { name, fields, warnings } of CASES) {
		it(name, () => {
			const dir = stateDir();
			writeStateFile(dir, { ...makeState({ pid: PID }), ...fields });
			const scanner = new StateDirScanner(dir, UID);
			const scan = scanner.scan();
			assert.deepEqual(scan.diagnostics, [], "the editor is not skipped");
			assert.equal(scan.editors.length, 1);
			assert.deepEqual(scan.editors[0]?.warnings, warnings);
			const one = scanner.readOne(PID);
			assert.equal(one.kind, "editor");
			if (one.kind === "editor") assert.deepEqual(one.record.warnings, warnings, "the re-read before a prompt too");
		});
	}
});
