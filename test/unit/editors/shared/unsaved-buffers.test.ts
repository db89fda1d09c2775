/**
 * editors/shared/unsaved-buffers.ts (protocol v0.5, `<pid>.buffers.json` for the TypeScript clients): the file's
 * text read back with pi's own parser (src/context/unsaved-read.ts), the 2 MiB cap on the encoded texts (escapes
 * counted), the 32-buffer cap and the line rule; then `UnsavedBuffers` against a real temp dir: written when the
 * documents changed or the file went, named again as it is otherwise, removed once no state names it.
 */
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { linesOf } from "../../../../editors/shared/state.ts";
import { type DirtyDocument, encodeEditorBuffers, UnsavedBuffers } from "../../../../editors/shared/unsaved-buffers.ts";
import { parseEditorBuffers } from "../../../../src/context/unsaved-read.ts";
import { MAX_UNSAVED_BUFFERS, MAX_UNSAVED_TEXT_BYTES } from "../../../../src/protocol/limits.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-unsaved-"));
after(() => rmSync(root, { recursive: true, force: true }));

const doc = (file: string, text: string, version = 1): DirtyDocument => ({ file, version, lines: linesOf(text) });

/** What pi reads from the encoded file. */
function read(documents: DirtyDocument[]) {
	const parsed = parseEditorBuffers(encodeEditorBuffers(42, 7, documents, 1_700_000_000), 42, 7);
	assert.ok(parsed.ok, parsed.ok ? "" : parsed.problem);
	assert.equal(parsed.dropped, 0);
	return parsed.buffers;
}

describe("encodeEditorBuffers", () => {
	const cases: { name: string; text: string; lines: number; expected: string }[] = [
		{ name: "a final newline ends the last line", text: "one\ntwo\n", lines: 2, expected: "one\ntwo" },
		{ name: "no final newline", text: "one\ntwo", lines: 2, expected: "one\ntwo" },
		{ name: "an empty last line before the final newline", text: "one\n\n", lines: 2, expected: "one\n" },
		{ name: "CRLF line ends", text: "one\r\ntwo\r\n", lines: 2, expected: "one\ntwo" },
		{ name: "an empty document", text: "", lines: 1, expected: "" },
		{
			name: "JSON escapes and UTF-8",
			text: 'a "q" \\ \t é 日本 \u0001\n',
			lines: 1,
			expected: 'a "q" \\ \t é 日本 \u0001',
		},
	];
	for (const c of cases) {
		test(c.name, () => {
			const [entry] = read([doc("/w/a.txt", c.text, 9)]);
			assert.deepEqual(entry, { file: "/w/a.txt", version: 9, lines_total: c.lines, text: c.expected });
		});
	}

	test("the texts take at most 2 MiB once encoded: the one that would pass is listed too_large, later ones still fit", () => {
		// Quotes encode to two bytes: this text is under the cap raw and over it encoded.
		const quoted = '"'.repeat(MAX_UNSAVED_TEXT_BYTES / 2 + 1);
		const half = "x".repeat(MAX_UNSAVED_TEXT_BYTES / 2);
		const buffers = read([doc("/w/half.txt", half), doc("/w/quoted.txt", quoted), doc("/w/small.txt", "small")]);
		assert.deepEqual(
			buffers.map((b) => [b.file, b.note ?? "text", b.text?.length]),
			[
				["/w/half.txt", "text", half.length],
				["/w/quoted.txt", "too_large", undefined],
				["/w/small.txt", "text", 5],
			],
		);
	});

	test(`at most ${MAX_UNSAVED_BUFFERS} buffers, the first ones`, () => {
		const many = Array.from({ length: MAX_UNSAVED_BUFFERS + 3 }, (_, i) => doc(`/w/${i}.txt`, `${i}\n`));
		const buffers = read(many);
		assert.equal(buffers.length, MAX_UNSAVED_BUFFERS);
		assert.equal(buffers[0]?.file, "/w/0.txt");
	});
});

describe("UnsavedBuffers", () => {
	test("written when due, named again as it is, rewritten once gone, removed", () => {
		const dir = join(root, "dir");
		const path = join(dir, "42.buffers.json");
		const buffers = new UnsavedBuffers(dir, 42, process.getuid?.());
		assert.deepEqual(buffers.prepare(undefined, 1), { ok: true, serial: undefined }, "no pi: nothing");
		assert.equal(existsSync(path), false);
		assert.deepEqual(buffers.prepare([doc("/w/a.txt", "a\n", 3)], 1), { ok: true, serial: 1 });
		assert.equal(lstatSync(path).mode & 0o777, 0o600);
		assert.equal(existsSync(`${path}.tmp`), false, "no temp file left");
		const first = readFileSync(path, "utf8");
		assert.deepEqual(buffers.prepare([doc("/w/a.txt", "a\n", 3)], 2), { ok: true, serial: 1 }, "unchanged");
		assert.equal(readFileSync(path, "utf8"), first, "not written again");
		assert.deepEqual(buffers.prepare([doc("/w/a.txt", "ab\n", 4)], 3), { ok: true, serial: 2 }, "a new version");
		rmSync(path);
		assert.deepEqual(buffers.prepare([doc("/w/a.txt", "ab\n", 4)], 4), { ok: true, serial: 3 }, "gone: again");
		assert.equal(parseEditorBuffers(readFileSync(path, "utf8"), 42, 3).ok, true);
		assert.deepEqual(buffers.remove(), { ok: true });
		assert.equal(existsSync(path), false);
	});
});
