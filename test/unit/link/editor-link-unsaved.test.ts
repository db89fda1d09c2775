/**
 * EditorLink.unsavedRead against a real state dir (v0.5, no editor process: the test writes the editor's state file
 * and `<pid>.buffers.json`): which copy pi takes, and which it refuses, sending nothing of the buffer.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { EditorRecord } from "../../../src/discovery/scan.ts";
import { EditorLink } from "../../../src/link/editor-link.ts";
import type { PathMapping } from "../../../src/protocol/path-map.ts";
import { editorBuffersFileName } from "../../../src/protocol/wire.ts";
import { writeRawStateFile } from "../../helpers/editors.ts";
import { makeState, writeStateFile } from "../../helpers/state-files.ts";

const UID = process.getuid?.() ?? 0;
const EDITOR = 4_000_011;
const CAPS = { maxLines: 2000, maxBytes: 50 * 1024 };
const roots: string[] = [];
after(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const bufferFile = (serial: number, text = "one\nUSER\nthree", over: Record<string, unknown> = {}) =>
	JSON.stringify({
		protocol: "0.5",
		kind: "editor-buffers",
		pid: EDITOR,
		serial,
		timestamp: 1,
		buffers: [{ file: "/w/a.ts", version: 5, lines_total: 3, text }],
		...over,
	});

interface Row {
	name: string;
	/** The state file's `buffers_serial` (undefined: not written). */
	serial?: number | null;
	/** Lay out `<pid>.buffers.json` in `dir` (nothing: none). */
	sidecar?: (dir: string) => void;
	/** The read's path. */
	path?: string;
	excluded?: boolean;
	connected?: boolean;
	/** A sandboxed pi's path mapping (EditorLinkOptions.paths): the editor's paths are not pi's. */
	paths?: PathMapping[];
	/** The buffer's text reaches the model. */
	sent: boolean;
	warns?: RegExp;
}

const put =
	(text: string, mode = 0o600) =>
	(dir: string) =>
		writeRawStateFile(dir, editorBuffersFileName(EDITOR), text, mode);

const ROWS: Row[] = [
	{ name: "the named copy: the buffer is read", serial: 3, sidecar: put(bufferFile(3)), sent: true },
	{
		name: "a relative path resolved against pi's cwd",
		serial: 3,
		sidecar: put(bufferFile(3)),
		path: "a.ts",
		sent: true,
	},
	{
		name: "another file of the editor: the disk read stands",
		serial: 3,
		sidecar: put(bufferFile(3)),
		path: "/w/b.ts",
		sent: false,
	},
	{ name: "no buffers_serial: nothing read", sidecar: put(bufferFile(3)), sent: false },
	{ name: "buffers_serial null: nothing read", serial: null, sidecar: put(bufferFile(3)), sent: false },
	{ name: "an older copy than the state names", serial: 4, sidecar: put(bufferFile(3)), sent: false },
	{ name: "named but gone", serial: 3, sent: false },
	{
		name: "another editor's pid inside",
		serial: 3,
		sidecar: put(bufferFile(3, "x", { pid: 7 })),
		sent: false,
		warns: /pid field 7/,
	},
	{ name: "readable by others (0644)", serial: 3, sidecar: put(bufferFile(3), 0o644), sent: false, warns: /mode 0644/ },
	{
		name: "a symlink to a good copy",
		serial: 3,
		sidecar: (dir) => {
			const elsewhere = join(dir, "..", "elsewhere.json");
			writeFileSync(elsewhere, bufferFile(3), { mode: 0o600 });
			symlinkSync(elsewhere, join(dir, editorBuffersFileName(EDITOR)));
		},
		sent: false,
		warns: /symbolic link/,
	},
	{
		name: "a directory in its place",
		serial: 3,
		sidecar: (dir) => mkdirSync(join(dir, editorBuffersFileName(EDITOR))),
		sent: false,
		warns: /not a regular file/,
	},
	{
		name: "over the 3 MiB limit",
		serial: 3,
		sidecar: put(bufferFile(3, "USER".repeat(800_000))),
		sent: false,
		warns: /over the 3145728-byte limit/,
	},
	{ name: "not JSON", serial: 3, sidecar: put("{"), sent: false, warns: /invalid JSON/ },
	{
		name: "an ignored file: nothing of its buffer",
		serial: 3,
		sidecar: put(bufferFile(3)),
		excluded: true,
		sent: false,
	},
	{ name: "no editor connected", serial: 3, sidecar: put(bufferFile(3)), connected: false, sent: false },
	{
		name: "a sandboxed pi: the copy names the editor's path, the read pi's, mapped: the buffer is read",
		serial: 3,
		sidecar: put(bufferFile(3)),
		paths: [{ editor: "/w", pi: "/sandbox/w", from: "setting" }],
		path: "/sandbox/w/a.ts",
		sent: true,
	},
	{
		name: "the same file through a symlink: the buffer is read",
		serial: 3,
		sidecar: (dir) => {
			const real = join(dir, "..", "real.ts");
			writeFileSync(real, "disk\n");
			symlinkSync(real, join(dir, "..", "link.ts"));
			put(
				bufferFile(3, "one\nUSER\nthree", {
					buffers: [{ file: real, version: 5, lines_total: 3, text: "one\nUSER\nthree" }],
				}),
			)(dir);
		},
		path: "@link",
		sent: true,
	},
	{
		name: "another existing file: the disk read stands",
		serial: 3,
		sidecar: (dir) => {
			const real = join(dir, "..", "real.ts");
			writeFileSync(real, "disk\n");
			writeFileSync(join(dir, "..", "other.ts"), "disk\n");
			put(
				bufferFile(3, "one\nUSER\nthree", {
					buffers: [{ file: real, version: 5, lines_total: 3, text: "one\nUSER\nthree" }],
				}),
			)(dir);
		},
		path: "@other",
		sent: false,
	},
];
if (UID === 0) {
	ROWS.push({
		name: "another user's file",
		serial: 3,
		sidecar: (dir) => chownSync(put(bufferFile(3))(dir), 12345, 12345),
		sent: false,
		warns: /owned by uid 12345/,
	});
}

describe("EditorLink.unsavedRead: the copy the state names, under the state file's rules", () => {
	for (const row of ROWS) {
		it(row.name, async () => {
			const root = mkdtempSync(join(tmpdir(), "pi-ide-unsaved-"));
			roots.push(root);
			const dir = join(root, "pi-ide");
			mkdirSync(dir);
			chmodSync(dir, 0o700);
			const state = makeState({
				pid: EDITOR,
				cwd: "/w",
				protocol: "0.3",
				...(row.serial !== undefined ? { buffers_serial: row.serial } : {}),
				active_buffer: { file: "/w/a.ts", modified: true, lines_total: 3, version: 5 },
			});
			writeStateFile(dir, state);
			row.sidecar?.(dir);
			const record: EditorRecord = { path: join(dir, `${EDITOR}.json`), pid: EDITOR, state, writtenAt: 0, ino: 0 };
			const warnings: string[] = [];
			const link = new EditorLink({
				stateDir: dir,
				uid: UID,
				pid: process.pid,
				cwd: "/w",
				home: "/home/u",
				connected: () => (row.connected === false ? undefined : record),
				excluded: () => row.excluded === true,
				warn: (m) => warnings.push(m),
				// A state that names no copy and echoes no pi of ours waits for the editor this long (below).
				waitCaps: { answerMs: 20, diagnosticsMs: 20 },
				...(row.paths ? { paths: row.paths } : {}),
			});
			const path = row.path?.startsWith("@") ? join(root, `${row.path.slice(1)}.ts`) : (row.path ?? "/w/a.ts");
			const out = await link.unsavedRead({ path }, CAPS);
			await link.close();
			if (row.sent) {
				assert.equal(out?.kind, "replace");
				assert.match(out?.text ?? "", /unsaved buffer/);
				assert.match(out?.text ?? "", /^USER$/m);
			} else assert.equal(out, null, `nothing of the buffer: ${out?.text}`);
			if (row.warns) assert.match(warnings.join("\n"), row.warns);
			else assert.deepEqual(warnings, []);
		});
	}
});

describe("EditorLink.unsavedRead right after pi connected: the editor has not seen pi's message yet", () => {
	// The editor writes its copy only once a pi's message names it (issue 26): a read that comes first waits for the
	// state echoing this pi (or naming a copy), at most the report wait's answerMs; then the disk read stands.
	const ROWS: { name: string; later?: Record<string, unknown>; sent: boolean }[] = [
		{ name: "the editor sees pi and names its copy: the buffer is read", later: { buffers_serial: 3 }, sent: true },
		{ name: "the editor sees pi, nothing unsaved: the disk read", later: {}, sent: false },
		{ name: "the editor never answers: the disk read, after the cap", sent: false },
	];
	for (const row of ROWS) {
		it(row.name, async () => {
			const root = mkdtempSync(join(tmpdir(), "pi-ide-unsaved-"));
			roots.push(root);
			const dir = join(root, "pi-ide");
			mkdirSync(dir);
			chmodSync(dir, 0o700);
			const base = {
				pid: EDITOR,
				cwd: "/w",
				protocol: "0.3",
				active_buffer: { file: "/w/a.ts", modified: true, lines_total: 3, version: 5 },
			};
			const state = makeState(base);
			writeStateFile(dir, state);
			const record: EditorRecord = { path: join(dir, `${EDITOR}.json`), pid: EDITOR, state, writtenAt: 0, ino: 0 };
			const link = new EditorLink({
				stateDir: dir,
				uid: UID,
				pid: process.pid,
				cwd: "/w",
				home: "/home/u",
				connected: () => record,
				excluded: () => false,
				warn: () => {},
				waitCaps: { answerMs: 2000, diagnosticsMs: 2000 },
			});
			const reading = link.unsavedRead({ path: "/w/a.ts" }, CAPS);
			const later = row.later;
			if (later) {
				// The editor's poll: its copy first, then the state that echoes pi and names it.
				setTimeout(() => {
					if (later["buffers_serial"] !== undefined) put(bufferFile(3))(dir);
					writeStateFile(dir, makeState({ ...base, ...later, pi: { pid: process.pid, seq: 0 } }));
				}, 50);
			}
			const out = await reading;
			await link.close();
			if (row.sent) assert.match(out?.text ?? "", /^USER$/m);
			else assert.equal(out, null, `the disk read: ${out?.text}`);
		});
	}
});
