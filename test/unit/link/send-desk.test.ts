/**
 * v0.5 send to pi, the reader (src/link/send-desk.ts) on a real state dir: what it takes and what it refuses
 * before reading (a symlink, a file others can read, another user's file, an oversized file, a malformed one), each
 * id once, a send for another pi left alone, and the fate it reports. pi's input is a recording fake.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { SendOutcome } from "../../../src/link/send-deliver.ts";
import { SendDesk } from "../../../src/link/send-desk.ts";
import { MAX_SEND_FILE_BYTES } from "../../../src/protocol/limits.ts";
import { editorSendFileName } from "../../../src/protocol/wire.ts";
import { sendRequest } from "../../helpers/send.ts";

const EDITOR = 4242;
const PI = 5151;
const UID = process.getuid?.() ?? -1;

function setup(t: { after(fn: () => void): void }) {
	const dir = mkdtempSync(join(tmpdir(), "pi-ide-send-desk-"));
	t.after(() => rmSync(dir, { recursive: true, force: true }));
	chmodSync(dir, 0o700);
	const delivered: { text: string; mode: string }[] = [];
	const outcomes: SendOutcome[] = [];
	const warnings: string[] = [];
	const desk = new SendDesk({
		stateDir: dir,
		uid: UID,
		piPid: PI,
		cwd: "/p",
		connectedPid: () => EDITOR,
		excluded: (file) => file.endsWith(".env"),
		caps: () => ({ maxLines: 100, maxBytes: 10_000 }),
		deliver: (text, mode) => {
			delivered.push({ text, mode });
			return mode === "draft" ? "draft" : "prompt";
		},
		published: (o) => outcomes.push(o),
		warn: (m) => warnings.push(m),
		seen: new Map(),
	});
	const name = editorSendFileName(EDITOR);
	const path = join(dir, name);
	const write = (over: Record<string, unknown> = {}, mode = 0o600) => {
		rmSync(path, { force: true });
		const request = {
			...sendRequest({ editorPid: EDITOR, piPid: PI, id: "a", item: { file: "/p/a.ts", text: "x" } }),
			...over,
		};
		writeFileSync(path, JSON.stringify(request), { mode });
		chmodSync(path, mode);
	};
	return { dir, desk, delivered, outcomes, warnings, name, path, write };
}

describe("SendDesk", () => {
	it("takes a send once per id, and a new id again", (t) => {
		const s = setup(t);
		s.write();
		s.desk.changed(s.name);
		s.desk.changed(s.name);
		s.desk.verify();
		s.write({ id: "b", mode: "now" });
		s.desk.changed(s.name);
		assert.deepEqual(
			s.delivered.map((d) => d.mode),
			["draft", "now"],
		);
		assert.deepEqual(
			s.outcomes.map((o) => [o.id, o.fate]),
			[
				["a", "draft"],
				["b", "prompt"],
			],
		);
		assert.deepEqual(s.desk.last(), { editor_pid: EDITOR, id: "b", fate: "prompt" });
	});

	const refused: { name: string; arrange: (s: ReturnType<typeof setup>) => void; warning: RegExp | null }[] = [
		{
			name: "a file others can read (0644)",
			arrange: (s) => s.write({}, 0o644),
			warning: /mode 0644, readable or writable by others/,
		},
		{
			name: "a file the group can read (0640)",
			arrange: (s) => s.write({}, 0o640),
			warning: /mode 0640, readable or writable by others/,
		},
		{
			name: "a symlink to a good send",
			arrange: (s) => {
				s.write();
				const target = join(s.dir, "elsewhere");
				writeFileSync(
					target,
					JSON.stringify(sendRequest({ editorPid: EDITOR, piPid: PI, id: "a", item: { file: "/p/a.ts", text: "x" } })),
					{ mode: 0o600 },
				);
				rmSync(s.path);
				symlinkSync(target, s.path);
			},
			warning: null,
		},
		{
			name: "an oversized file",
			arrange: (s) => {
				writeFileSync(s.path, " ".repeat(MAX_SEND_FILE_BYTES + 1), { mode: 0o600 });
			},
			warning: /over the/,
		},
		{ name: "malformed JSON", arrange: (s) => writeFileSync(s.path, "{", { mode: 0o600 }), warning: /not JSON/ },
		{ name: "a pid not the name's", arrange: (s) => s.write({ pid: 7 }), warning: /pid does not match/ },
		{ name: "a send for another pi", arrange: (s) => s.write({ pi_pid: 9999 }), warning: null },
		...(UID === 0
			? [
					{
						name: "another user's file",
						arrange: (s: ReturnType<typeof setup>) => {
							s.write();
							chownSync(s.path, 12345, 12345);
						},
						warning: /owned by uid 12345/,
					},
				]
			: []),
	];
	for (const c of refused)
		it(`refuses ${c.name}: nothing delivered`, (t) => {
			const s = setup(t);
			c.arrange(s);
			s.desk.changed(s.name);
			assert.deepEqual(s.delivered, []);
			assert.deepEqual(s.outcomes, []);
			if (c.warning) assert.match(s.warnings.join("\n"), c.warning);
			else assert.deepEqual(s.warnings, []);
		});

	it("an excluded file: the fate says so, nothing delivered; a stale send: refused", (t) => {
		const s = setup(t);
		s.write({ item: { kind: "line", file: "/p/.env", start_line: 1, end_line: 1, text: "K=v" } });
		s.desk.changed(s.name);
		s.write({ id: "old", timestamp: Date.now() / 1000 - 3600 });
		s.desk.changed(s.name);
		assert.deepEqual(s.delivered, []);
		assert.deepEqual(
			s.outcomes.map((o) => [o.id, o.fate]),
			[
				["a", "excluded"],
				["old", "refused"],
			],
		);
	});

	it("pi's input failing: the fate is refused with the reason, never a throw", (t) => {
		const s = setup(t);
		const desk = new SendDesk({
			stateDir: s.dir,
			uid: UID,
			piPid: PI,
			cwd: "/p",
			connectedPid: () => EDITOR,
			excluded: () => false,
			caps: () => ({ maxLines: 100, maxBytes: 10_000 }),
			deliver: () => {
				throw new Error("no input");
			},
			published: (o) => s.outcomes.push(o),
			seen: new Map(),
		});
		s.write();
		desk.changed(s.name);
		assert.equal(s.outcomes[0]?.fate, "refused");
		assert.match(s.outcomes[0]?.reason ?? "", /no input/);
	});
});
