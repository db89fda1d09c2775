/**
 * editors/vscode/src/disk.ts on real files: what a file pi said it changed looks like on disk (text, gone,
 * refused for a symlink, a directory or a FIFO, never read through; too large to compare).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { MAX_COMPARE_BYTES, readDisk } from "../../editors/vscode/src/disk.ts";
import type { DiskState } from "../../editors/vscode/src/pi-sync.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-disk-"));
after(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, "file.json"), '{"a": "é"}\n');
symlinkSync(join(root, "file.json"), join(root, "link.json"));
mkdirSync(join(root, "dir"));
execFileSync("mkfifo", [join(root, "fifo")]);
writeFileSync(join(root, "big.log"), "");
truncateSync(join(root, "big.log"), MAX_COMPARE_BYTES + 1);

// [description, path, expected]
const cases: [string, string, DiskState][] = [
	["a regular file: its text", "file.json", { kind: "file", text: '{"a": "é"}\n' }],
	["missing: gone", "missing.json", { kind: "gone" }],
	["below a file (ENOTDIR): gone", "file.json/x", { kind: "gone" }],
	["a symlink: refused, not followed", "link.json", { kind: "refused" }],
	["a directory: refused", "dir", { kind: "refused" }],
	["a FIFO: refused without blocking", "fifo", { kind: "refused" }],
	["too large to compare: no text", "big.log", { kind: "file", text: undefined }],
];
for (const [name, path, expected] of cases) test(name, () => assert.deepEqual(readDisk(join(root, path)), expected));
