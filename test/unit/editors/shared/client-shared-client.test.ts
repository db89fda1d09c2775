/**
 * editors/shared/client.ts against a real temp dir (the dir and write rules themselves are
 * test/unit/protocol/state-dir.test.ts's table): the client's debounce, skip-unchanged, forced focus writes, enable/disable and one-warning error policy.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { StateClient, type Timers } from "../../../../editors/shared/client.ts";
import { type HostSnapshot, linesOf } from "../../../../editors/shared/state.ts";
import { MAX_STATE_FILE_BYTES, parseEditorState } from "../../../../src/protocol/protocol.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-client-"));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const fresh = () => join(root, `case-${++counter}`);
const uid = process.getuid?.() ?? 0;

/** Manual timers: `tick()` runs whatever is due, so debounce tests never sleep. */
function manualTimers(): Timers & { pending: number; tick(): void; delays: number[] } {
	const queue = new Map<number, () => void>();
	let next = 0;
	const delays: number[] = [];
	return {
		delays,
		get pending() {
			return queue.size;
		},
		setTimeout(fn, ms) {
			delays.push(ms);
			queue.set(++next, fn);
			return next;
		},
		clearTimeout(handle) {
			queue.delete(handle as number);
		},
		tick() {
			const due = [...queue.values()];
			queue.clear();
			for (const fn of due) fn();
		},
	};
}

describe("StateClient", () => {
	const setup = (dir = fresh()) => {
		let text = "hello world";
		let anchor = 0;
		let clock = 1_000_000;
		const warnings: string[] = [];
		const timers = manualTimers();
		const snapshot = (): HostSnapshot => ({
			cwd: "/w",
			argv: ["/w"],
			document: {
				key: "k",
				file: "/w/a.txt",
				name: "a.txt",
				language: "plaintext",
				lines: linesOf(text),
				cursor: { line: 0, character: 5 },
				selection: { anchor: { line: 0, character: anchor }, head: { line: 0, character: 5 } },
				modified: false,
			},
		});
		const client = new StateClient({
			app: "vscode",
			pid: 31337,
			dir,
			snapshot,
			warn: (m) => warnings.push(m),
			now: () => clock,
			timers,
			uid,
		});
		const read = () => {
			const parsed = parseEditorState(readFileSync(client.path, "utf8"));
			assert.ok(parsed.ok, JSON.stringify(parsed));
			return parsed.state;
		};
		return {
			client,
			timers,
			warnings,
			read,
			dir,
			setText: (t: string) => {
				text = t;
			},
			setAnchor: (a: number) => {
				anchor = a;
			},
			advance: (ms: number) => {
				clock += ms;
			},
		};
	};

	test("schedule debounces (one 200 ms timer), flush writes a valid state", () => {
		const s = setup();
		s.client.schedule();
		s.client.schedule();
		s.client.schedule();
		assert.equal(s.timers.pending, 1);
		assert.deepEqual(s.timers.delays, [200, 200, 200]);
		assert.equal(existsSync(s.client.path), false);
		s.timers.tick();
		const state = s.read();
		assert.equal(state.pid, 31337);
		assert.equal(state.timestamp, 1000);
		assert.equal(state.active_buffer.selection?.text, "hello");
		assert.equal(state.active_buffer.selection?.selected_at, 1000);
	});

	test("unchanged state is not rewritten; a forced flush (focus) is", () => {
		const s = setup();
		assert.equal(s.client.flush(), "written");
		s.advance(5000);
		assert.equal(s.client.flush(), "unchanged");
		assert.equal(s.read().timestamp, 1000);
		assert.equal(s.client.flush({ force: true }), "written");
		assert.equal(s.read().timestamp, 1005);
		assert.equal(s.read().active_buffer.selection?.selected_at, 1000, "selection kept: its time too");
		s.setAnchor(1);
		s.advance(1000);
		assert.equal(s.client.flush(), "written");
		assert.equal(s.read().active_buffer.selection?.selected_at, 1006, "a new selection is stamped anew");
	});

	test("disable deletes the file and stops writing; enable writes again; dispose deletes", () => {
		const s = setup();
		s.client.flush();
		s.client.schedule();
		s.client.setEnabled(false);
		assert.equal(existsSync(s.client.path), false);
		assert.equal(s.timers.pending, 0, "pending write cancelled");
		assert.equal(s.client.flush(), "disabled");
		s.client.schedule();
		assert.equal(s.timers.pending, 0);
		s.client.setEnabled(true);
		assert.equal(existsSync(s.client.path), true);
		s.client.dispose();
		assert.equal(existsSync(s.client.path), false);
		assert.equal(s.client.flush(), "disabled");
	});

	test("failures become one warning per failure streak, never a throw", () => {
		const dir = fresh();
		mkdirSync(dir);
		chmodSync(dir, 0o755);
		const s = setup(dir);
		assert.equal(s.client.flush(), "failed");
		s.setText("changed");
		assert.equal(s.client.flush(), "failed");
		assert.equal(s.warnings.length, 1);
		assert.match(s.warnings[0] ?? "", /permissions \(0755\)/);
		assert.match(s.client.lastError ?? "", /permissions \(0755\)/);
		chmodSync(dir, 0o700);
		assert.equal(s.client.flush(), "written");
		assert.equal(s.client.lastError, undefined);
		chmodSync(dir, 0o777);
		s.setText("again");
		assert.equal(s.client.flush(), "failed");
		assert.equal(s.warnings.length, 2, "a new streak warns again");
	});

	test("a state over pi's 1 MiB limit is not written (the last file stays) and says why", () => {
		const dir = fresh();
		let cwd = "/w";
		const warnings: string[] = [];
		const client = new StateClient({
			app: "vscode",
			pid: 77,
			dir,
			snapshot: () => ({ cwd, argv: [cwd], document: null }),
			warn: (m) => warnings.push(m),
			uid,
		});
		assert.equal(client.flush(), "written");
		cwd = `/${"d".repeat(600 * 1024)}`; // twice in the state (cwd and argv): 1.2 MB
		assert.equal(client.flush(), "failed");
		assert.match(warnings[0] ?? "", /^pi-ide-context: the state would be \d+ bytes, over pi's 1048576-byte limit/);
		assert.equal(JSON.parse(readFileSync(client.path, "utf8")).cwd, "/w");
	});

	test("a selection that would push the file over pi's limit is cut further: written, truncated", () => {
		const dir = fresh();
		const folders = Array.from({ length: 225 }, (_, i) => `/w/${String(i).padStart(3, "0")}${"d".repeat(3995)}`);
		const text = Array.from({ length: 30_000 }, (_, i) => `line ${i}`).join("\n"); // 300 KB, capped at 256 KiB
		const lines = linesOf(text);
		const last = lines.count - 1;
		const warnings: string[] = [];
		const client = new StateClient({
			app: "vscode",
			pid: 78,
			dir,
			snapshot: () => ({
				cwd: "/w",
				argv: folders, // 900 KB of workspace folders, each a legal path
				document: {
					key: "k",
					file: "/w/a.txt",
					name: "a.txt",
					language: "plaintext",
					lines,
					cursor: { line: 0, character: 0 },
					selection: { anchor: { line: 0, character: 0 }, head: { line: last, character: lines.text(last).length } },
					modified: false,
				},
			}),
			warn: (m) => warnings.push(m),
			uid,
		});
		assert.equal(client.flush(), "written");
		assert.deepEqual(warnings, []);
		const written = readFileSync(client.path);
		assert.ok(written.length <= MAX_STATE_FILE_BYTES, `${written.length} bytes`);
		const parsed = parseEditorState(written.toString("utf8"));
		assert.ok(parsed.ok, JSON.stringify(parsed).slice(0, 300));
		const selection = parsed.state.active_buffer.selection;
		assert.equal(selection?.truncated, true);
		assert.ok(selection !== null && text.startsWith(selection.text) && selection.text.length > 100_000);
		assert.deepEqual(selection?.end, { line: 30_000, column: lines.text(last).length });
	});

	test("a throwing snapshot is caught", () => {
		const warnings: string[] = [];
		const client = new StateClient({
			app: "obsidian",
			pid: 5,
			dir: fresh(),
			snapshot: () => {
				throw new Error("boom");
			},
			warn: (m) => warnings.push(m),
			uid,
		});
		assert.equal(client.flush(), "failed");
		assert.deepEqual(warnings, ["pi-ide-context: boom"]);
	});

	test("an undefined snapshot keeps the last file", () => {
		const dir = fresh();
		let report = true;
		const client = new StateClient({
			app: "vscode",
			pid: 6,
			dir,
			snapshot: () => (report ? { cwd: "/w", argv: [], document: null } : undefined),
			warn: () => {},
			uid,
		});
		assert.equal(client.flush(), "written");
		report = false;
		assert.equal(client.flush({ force: true }), "skipped");
		assert.equal(existsSync(client.path), true);
		client.dispose();
	});

	test("dispose never deletes a file this client did not write", () => {
		const dir = fresh();
		mkdirSync(dir, { mode: 0o700 });
		writeFileSync(join(dir, "8.json"), "{}");
		const client = new StateClient({ app: "vscode", pid: 8, dir, snapshot: () => undefined, warn: () => {}, uid });
		client.dispose();
		assert.equal(existsSync(join(dir, "8.json")), true);
	});
});
