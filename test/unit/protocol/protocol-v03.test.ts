import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { piMessagePid } from "../../../editors/shared/pi-message.ts";
import { MAX_FILE_REPORTS } from "../../../src/protocol/limits.ts";
import {
	type Diagnostics,
	type EditorState,
	type FileReport,
	parseEditorState,
} from "../../../src/protocol/protocol.ts";
import { parseStateFileName } from "../../../src/protocol/state-dir.ts";
import { piMessageFileName } from "../../../src/protocol/wire.ts";
import { makeState } from "../../helpers/state-files.ts";

/** A v0.2 state, from the one factory; the v0.3 cases add to it. */
const V02 = makeState({
	pid: 7,
	timestamp: 1,
	active_buffer: { file: "/p/a.ts", cursor: { line: 1, column: 1 }, lines_total: 3 },
});

const DIAG: Diagnostics = {
	version: 4,
	total: 1,
	items: [{ severity: "error", line: 2, column: 3, message: "x", source: "ts", code: "2304" }],
};
const REPORT: FileReport = {
	file: "/p/a.ts",
	seq: 3,
	status: "reloaded",
	version: 4,
	modified: false,
	diagnostics_expected: true,
	diagnostics: DIAG,
};

/** Parse V02 with `extra` top-level and `buffer` active_buffer fields, which may be malformed on purpose. */
function parse(extra: Record<string, unknown>, buffer: Record<string, unknown> = {}) {
	const result = parseEditorState(
		JSON.stringify({ ...V02, ...extra, active_buffer: { ...V02.active_buffer, ...buffer } }),
	);
	assert.ok(result.ok, JSON.stringify(result));
	return result;
}

describe("protocol v0.3 editor state", () => {
	it("a v0.2 file parses unchanged, with no warnings and no v0.3 fields", () => {
		const r = parse({});
		assert.deepEqual(r.state, V02);
		assert.equal(r.warnings, undefined);
	});

	it("well-formed v0.3 fields are kept", () => {
		const state = makeState({
			...V02,
			protocol: "0.3",
			files: [REPORT],
			pi: { pid: 9, seq: 3 },
			active_buffer: { ...V02.active_buffer, version: 4, diagnostics: DIAG },
		});
		const r = parseEditorState(JSON.stringify(state));
		assert.ok(r.ok, JSON.stringify(r));
		assert.equal(r.warnings, undefined);
		assert.equal(r.state.protocol, "0.3");
		assert.equal(r.state.active_buffer.version, 4);
		assert.deepEqual(r.state.active_buffer.diagnostics, DIAG);
		assert.deepEqual(r.state.files, [REPORT]);
		assert.deepEqual(r.state.pi, { pid: 9, seq: 3 });
	});

	const MALFORMED: [string, Record<string, unknown>, Record<string, unknown>, (s: EditorState) => unknown][] = [
		["protocol not a string", { protocol: 3 }, {}, (s) => s.protocol],
		["negative version", {}, { version: -1 }, (s) => s.active_buffer.version],
		["diagnostics without items", {}, { diagnostics: { version: 1, total: 0 } }, (s) => s.active_buffer.diagnostics],
		[
			"unknown severity",
			{},
			{ diagnostics: { ...DIAG, items: [{ ...DIAG.items[0], severity: "fatal" }] } },
			(s) => s.active_buffer.diagnostics,
		],
		["files not a list", { files: {} }, {}, (s) => s.files],
		["pi without seq", { pi: { pid: 3 } }, {}, (s) => s.pi],
	];
	for (const [name, extra, buffer, field] of MALFORMED) {
		it(`${name}: the field is dropped with a warning, the editor stays`, () => {
			const r = parse(extra, buffer);
			assert.equal(field(r.state), undefined);
			assert.equal(r.warnings?.length, 1);
			assert.equal(r.state.active_buffer.file, "/p/a.ts");
		});
	}

	it("malformed file reports are dropped one by one", () => {
		const r = parse({ files: [REPORT, { ...REPORT, status: "exploded" }, { file: "/x" }] });
		assert.deepEqual(r.state.files, [REPORT]);
		assert.match(r.warnings?.[0] ?? "", /2 malformed/);
	});

	it("caps: at most 100 items of at most 500 characters, the newest MAX_FILE_REPORTS file reports", () => {
		const items = Array.from({ length: 150 }, (_, i) => ({ ...DIAG.items[0], line: i + 1, message: "m".repeat(900) }));
		const files = Array.from({ length: MAX_FILE_REPORTS + 10 }, (_, i) => ({ ...REPORT, seq: i + 1 }));
		const r = parse({ files }, { diagnostics: { version: 1, total: 150, items } });
		assert.equal(r.state.active_buffer.diagnostics?.items.length, 100);
		assert.equal(r.state.active_buffer.diagnostics?.items[0]?.message.length, 500);
		assert.equal(r.state.active_buffer.diagnostics?.total, 150);
		assert.deepEqual(
			r.state.files?.map((f) => f.seq),
			Array.from({ length: MAX_FILE_REPORTS }, (_, i) => i + 11),
		);
	});
});

// The message's parser is the editors' (editors/shared/pi-message.ts, tested in vscode-pi-message.test.ts).
describe("pi's message file", () => {
	it("names never look like an editor's <pid>.json", () => {
		assert.equal(piMessageFileName(42), "pi-42.json");
		assert.equal(piMessagePid(piMessageFileName(42)), 42);
		assert.equal(parseStateFileName(piMessageFileName(42)), undefined);
		assert.equal(piMessagePid("42.json"), undefined);
		assert.equal(piMessagePid("pi-42.json.tmp"), undefined);
	});
});
