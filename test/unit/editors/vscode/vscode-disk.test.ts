/**
 * editors/vscode/src/disk.ts on real files: what a file pi said it changed looks like on disk (text, gone,
 * refused for a symlink, a directory or a FIFO, never read through; too large to compare); and a document
 * opened through a symlink, read while the link resolves to the file it was opened from, refused after.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	linkSync,
	mkdirSync,
	mkdtempSync,
	realpathSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	truncateSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { isRecordedFile, MAX_COMPARE_BYTES, openedAs, readDisk } from "../../../../editors/vscode/src/disk.ts";
import type { DiskState, OpenedAs } from "../../../../editors/vscode/src/pi-sync.ts";

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

/** `ln -sfn target link`: a new link renamed over the old one. */
function repoint(link: string, target: string): void {
	symlinkSync(target, `${link}.new`);
	renameSync(`${link}.new`, link);
}

/**
 * A document opened from `path` (in its own dir under root), what that path was recorded as then, a change
 * after (pi's write included), and what readDisk says of the path with that record.
 */
const OPENED_CASES: {
	name: string;
	/** Lays out the files in `dir` and returns the document's path. */
	open: (dir: string) => string;
	/** Take the record when the document opens (false: opened before the extension started). */
	record: boolean;
	change: (dir: string, path: string) => void;
	expected: DiskState;
}[] = [
	{
		name: "a regular file, pi writes in place: its new text",
		open: (dir) => plain(dir),
		record: true,
		change: (_dir, path) => writeFileSync(path, "pi's version\n"),
		expected: { kind: "file", text: "pi's version\n" },
	},
	{
		name: "a regular file replaced by a new one (deleted, written anew): its text",
		open: (dir) => plain(dir),
		record: true,
		change: (_dir, path) => {
			unlinkSync(path);
			writeFileSync(path, "pi's version\n");
		},
		expected: { kind: "file", text: "pi's version\n" },
	},
	{
		name: "a regular file replaced by a hard link to another file of yours: refused",
		open: (dir) => plain(dir),
		record: true,
		change: (dir, path) => {
			writeFileSync(join(dir, "secret.txt"), "SECRET\n");
			unlinkSync(path);
			linkSync(join(dir, "secret.txt"), path);
		},
		expected: { kind: "refused" },
	},
	{
		name: "a symlink whose target is replaced by a hard link to another file: refused",
		open: (dir) => link(dir),
		record: true,
		change: (dir) => {
			writeFileSync(join(dir, "secret.txt"), "SECRET\n");
			unlinkSync(join(dir, "target.txt"));
			linkSync(join(dir, "secret.txt"), join(dir, "target.txt"));
		},
		expected: { kind: "refused" },
	},
	{
		name: "opened through a symlink, pi writes through it: the file's new text",
		open: (dir) => link(dir),
		record: true,
		change: (_dir, path) => writeFileSync(path, "pi's version\n"),
		expected: { kind: "file", text: "pi's version\n" },
	},
	{
		name: "opened through a relative symlink, the file rewritten: its new text",
		open: (dir) => {
			writeFileSync(join(dir, "target.txt"), "original\n");
			symlinkSync("target.txt", join(dir, "link.txt"));
			return join(dir, "link.txt");
		},
		record: true,
		change: (dir) => writeFileSync(join(dir, "target.txt"), "pi's version\n"),
		expected: { kind: "file", text: "pi's version\n" },
	},
	{
		name: "opened through a symlink, re-pointed to another file: refused",
		open: (dir) => link(dir),
		record: true,
		change: (dir, path) => {
			writeFileSync(join(dir, "other.txt"), "ANOTHER FILE\n");
			repoint(path, join(dir, "other.txt"));
		},
		expected: { kind: "refused" },
	},
	{
		name: "opened through a symlink, replaced by a regular file: refused",
		open: (dir) => link(dir),
		record: true,
		change: (dir, path) => {
			writeFileSync(join(dir, "planted.txt"), "ANOTHER FILE\n");
			renameSync(join(dir, "planted.txt"), path);
		},
		expected: { kind: "refused" },
	},
	{
		name: "opened through a symlink whose file is then deleted: refused",
		open: (dir) => link(dir),
		record: true,
		change: (dir) => unlinkSync(join(dir, "target.txt")),
		expected: { kind: "refused" },
	},
	{
		name: "opened as a regular file, replaced by a symlink: refused",
		open: (dir) => {
			writeFileSync(join(dir, "a.txt"), "original\n");
			return join(dir, "a.txt");
		},
		record: true,
		change: (dir, path) => {
			writeFileSync(join(dir, "secret.txt"), "SECRET\n");
			unlinkSync(path);
			symlinkSync(join(dir, "secret.txt"), path);
		},
		expected: { kind: "refused" },
	},
	{
		name: "opened as a regular file, rewritten: its new text",
		open: (dir) => {
			writeFileSync(join(dir, "a.txt"), "original\n");
			return join(dir, "a.txt");
		},
		record: true,
		change: (_dir, path) => writeFileSync(path, "pi's version\n"),
		expected: { kind: "file", text: "pi's version\n" },
	},
	{
		name: "a symlink to a directory, even with a record: refused",
		open: (dir) => {
			mkdirSync(join(dir, "d"));
			symlinkSync(join(dir, "d"), join(dir, "link"));
			return join(dir, "link");
		},
		record: true,
		change: () => {},
		expected: { kind: "refused" },
	},
	{
		name: "opened through a symlink before the extension started (no record): refused",
		open: (dir) => link(dir),
		record: false,
		change: (_dir, path) => writeFileSync(path, "pi's version\n"),
		expected: { kind: "refused" },
	},
];

const identity = (path: string) => {
	const { dev, ino } = statSync(path);
	return { dev, ino };
};

/** `dir/plain.txt`, a regular file; returns it. */
function plain(dir: string): string {
	writeFileSync(join(dir, "plain.txt"), "original\n");
	return join(dir, "plain.txt");
}

/** `dir/link.txt` -> `dir/target.txt` (absolute); returns the link. */
function link(dir: string): string {
	writeFileSync(join(dir, "target.txt"), "original\n");
	symlinkSync(join(dir, "target.txt"), join(dir, "link.txt"));
	return join(dir, "link.txt");
}

OPENED_CASES.forEach((c, i) => {
	test(c.name, () => {
		const dir = join(root, `opened-${i}`);
		mkdirSync(dir);
		const path = c.open(dir);
		const opened: OpenedAs | undefined = c.record ? openedAs(path) : undefined;
		c.change(dir, path);
		assert.deepEqual(readDisk(path, opened), c.expected);
	});
});

test("isRecordedFile: the recorded file, or a replacement with one link; never a file with more links", () => {
	const file = (ino: number, nlink = 1) => ({ dev: 1, ino, nlink });
	const cases: [string, OpenedAs | undefined, ReturnType<typeof file>, boolean][] = [
		["no record", undefined, file(5, 3), true],
		["a record without identity", { kind: "file" }, file(5, 3), true],
		["the recorded file", { kind: "file", dev: 1, ino: 5 }, file(5, 3), true],
		["replaced, one link", { kind: "file", dev: 1, ino: 5 }, file(6), true],
		["replaced, two links", { kind: "file", dev: 1, ino: 5 }, file(6, 2), false],
		["a link's target replaced, two links", { kind: "link", real: "/r", dev: 1, ino: 5 }, file(6, 2), false],
	];
	for (const [name, recorded, opened, expected] of cases)
		assert.equal(isRecordedFile(recorded, opened), expected, name);
});

test("openedAs records a regular file, a symlink with its real path, nothing for what is neither", () => {
	assert.deepEqual(
		{
			file: openedAs(join(root, "file.json")),
			link: openedAs(join(root, "link.json")),
			dir: openedAs(join(root, "dir")),
			missing: openedAs(join(root, "missing.json")),
			belowAFile: openedAs(join(root, "file.json/x")),
		},
		{
			file: { kind: "file", ...identity(join(root, "file.json")) },
			link: { kind: "link", real: realpathSync(join(root, "file.json")), ...identity(join(root, "file.json")) },
			dir: undefined,
			missing: undefined,
			belowAFile: undefined,
		},
	);
});
