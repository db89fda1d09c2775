/**
 * Diagnostics dated with the buffer version (PROTOCOL.md, v0.3 "New fields in the editor's state file"): the
 * active buffer's diagnostics carry the buffer version they were computed for, so a reader can tell current
 * ones from ones an edit has outdated; at most 100 items, errors first, messages at most 500 characters, and
 * `total` counting them all.
 */
import assert from "node:assert/strict";
import { MAX_DIAGNOSTIC_ITEMS, MAX_DIAGNOSTIC_MESSAGE_CHARS } from "../../../src/protocol/limits.ts";
import type { KitDiagnostic } from "../client.ts";
import { activeFile, type KitCase } from "../kit.ts";

const TEXT = "const a = 1,\nconst b = 2;\nconst c = 3;\n";

const RANKS = { error: 0, warning: 1, info: 2, hint: 3 } as const;

export const cases: KitCase[] = [
	{
		name: "diagnostics: dated with the buffer version they are for; after an edit never dated ahead of the buffer",
		needs: ["diagnostics", "edit"],
		run: async (kit) => {
			const editor = await kit.shared();
			const file = editor.file("dated.ts", TEXT);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "dated.ts open");
			const items: KitDiagnostic[] = [
				{ severity: "warning", line: 2, column: 7, message: "unused b", source: "kit" },
				{ severity: "error", line: 1, column: 12, message: "Trailing comma", source: "kit" },
			];
			await editor.session.setDiagnostics(file, items);
			const state = await editor.until((s) => s.active_buffer.diagnostics?.total === 2, "the two diagnostics");
			const { version, diagnostics } = state.active_buffer;
			assert.ok(version !== undefined && diagnostics, "protocol 0.3 fields");
			assert.equal(state.protocol, "0.3");
			assert.equal(diagnostics.version, version, "computed for the current version");
			assert.deepEqual(
				diagnostics.items.map((d) => [d.severity, d.line, d.column, d.message]),
				[
					["error", 1, 12, "Trailing comma"],
					["warning", 2, 7, "unused b"],
				],
				"errors first, positions 1-based",
			);
			await editor.session.setLines(file, ["const a = 1;", "const b = 2;", "const c = 3;", "// edited"]);
			const edited = await editor.until((s) => s.active_buffer.lines_total === 4, "the edit");
			const after = edited.active_buffer;
			assert.ok(after.version !== undefined && after.version > version, "the edit moves the version");
			// Either the old ones, dated before the edit, or (a checker that runs on every change, Flymake) the
			// checker's new publish, dated with the new version: never a date ahead of the buffer.
			assert.ok(
				after.diagnostics === null || after.diagnostics === undefined || after.diagnostics.version <= after.version,
				`diagnostics are never dated ahead of the buffer: ${JSON.stringify(after.diagnostics)}`,
			);
			if (after.diagnostics && after.diagnostics.version === version) {
				assert.ok(after.diagnostics.version < after.version, "the old ones are dated before the edit");
			}
		},
	},
	{
		name: `diagnostics: at most ${MAX_DIAGNOSTIC_ITEMS} items, errors first, messages cut to ${MAX_DIAGNOSTIC_MESSAGE_CHARS}, total counts all`,
		needs: ["diagnostics"],
		run: async (kit) => {
			const editor = await kit.shared();
			const file = editor.file("many.ts", TEXT);
			await editor.session.open(file);
			await editor.until((s) => activeFile(s) === file, "many.ts open");
			const severities = ["hint", "warning", "error", "info"] as const;
			const items: KitDiagnostic[] = Array.from({ length: 150 }, (_, i) => ({
				severity: severities[i % 4] ?? "error",
				line: 1 + (i % 3),
				column: 1,
				message: `${i} ${"x".repeat(600)}`,
			}));
			await editor.session.setDiagnostics(file, items);
			const state = await editor.until((s) => s.active_buffer.diagnostics?.total === 150, "150 diagnostics");
			const listed = state.active_buffer.diagnostics?.items ?? [];
			assert.equal(listed.length, MAX_DIAGNOSTIC_ITEMS);
			const ranks = listed.map((d) => RANKS[d.severity]);
			assert.deepEqual(
				ranks,
				[...ranks].sort((a, b) => a - b),
				"errors first, then by severity",
			);
			assert.equal(ranks.filter((r) => r === 0).length, items.filter((d) => d.severity === "error").length);
			for (const d of listed) assert.ok(d.message.length <= MAX_DIAGNOSTIC_MESSAGE_CHARS, "message cut");
		},
	},
];
