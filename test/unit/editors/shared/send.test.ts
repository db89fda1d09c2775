/**
 * Send to pi for the TypeScript clients (editors/shared/send.ts, protocol v0.5): what each form hands over, which
 * pi (the only one, the one picked before, the user's pick asked once), the request as pi's validator reads it,
 * and pi's answer as one line. The kit (cases/send.ts) runs the same rules through the VS Code and Obsidian shells.
 */
import assert from "node:assert/strict";
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PiMessage } from "../../../../editors/shared/pi-message.ts";
import { parsePiMessage } from "../../../../editors/shared/pi-message.ts";
import { pisNaming, SEND_NOTICES, SendDesk, type SendInput, sendItem } from "../../../../editors/shared/send.ts";
import { linesOf } from "../../../../editors/shared/state.ts";
import type { SendItem } from "../../../../src/protocol/send.ts";
import { editorSendFileName, parseSendRequest } from "../../../../src/protocol/wire.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";

const FILE = "/p/a.ts";
const TEXT = "one\ntwo\nthree\n";

const root = mkdtempSync(join(tmpdir(), "shared-send-"));
after(() => rmSync(root, { recursive: true, force: true }));

interface ItemRow {
	name: string;
	input: Partial<SendInput>;
	/** kind, start, end, text, message; or the notice when nothing is sent. */
	expect: [string, number, number, string, string | null] | string;
}

const ITEMS: ItemRow[] = [
	{ name: "the line under the cursor", input: { cursor: 1 }, expect: ["line", 2, 2, "two", null] },
	{
		name: "the selected lines",
		input: { cursor: 0, selection: { first: 0, last: 1 } },
		expect: ["selection", 1, 2, "one\ntwo", null],
	},
	{
		name: "a selection made upwards",
		input: { cursor: 0, selection: { first: 2, last: 1 } },
		expect: ["selection", 2, 3, "two\nthree", null],
	},
	{
		name: "the whole file, without the empty line after the last newline",
		input: { form: "file" },
		expect: ["file", 1, 3, "one\ntwo\nthree", null],
	},
	{
		name: "the most severe diagnostic under the cursor",
		input: {
			form: "diagnostic",
			cursor: 2,
			diagnostics: [
				{ line: 2, endLine: 2, severity: "warning", message: "meh" },
				{ line: 1, endLine: 2, severity: "error", message: "bad" },
				{ line: 0, endLine: 0, severity: "error", message: "elsewhere" },
			],
		},
		expect: ["diagnostic", 2, 3, "two\nthree", "bad"],
	},
	{
		name: "no diagnostic under the cursor",
		input: { form: "diagnostic", cursor: 1, diagnostics: [{ line: 0, endLine: 0, severity: "error", message: "x" }] },
		expect: SEND_NOTICES.noDiagnostic,
	},
	{
		name: "pi's hunk under the cursor",
		input: { form: "hunk", cursor: 1, hunk: { first: 1, last: 2 } },
		expect: ["hunk", 2, 3, "two\nthree", null],
	},
	{ name: "no hunk of pi's under the cursor", input: { form: "hunk", cursor: 1 }, expect: SEND_NOTICES.noHunk },
	{ name: "not a file", input: { file: undefined }, expect: SEND_NOTICES.notFile },
];

describe("send to pi: what each form hands over", () => {
	for (const row of ITEMS) {
		test(row.name, () => {
			const result = sendItem({ form: "default", file: FILE, lines: linesOf(TEXT), cursor: 0, ...row.input });
			if (typeof row.expect === "string") {
				assert.deepEqual(result, { ok: false, notice: row.expect });
				return;
			}
			assert.ok(result.ok, JSON.stringify(result));
			const { kind, start_line, end_line, text, message } = result.item;
			assert.deepEqual([kind, start_line, end_line, text, message], row.expect);
			assert.equal(result.item.truncated, false);
		});
	}

	test("a line past the cap is cut at 256 KiB encoded, with truncated", () => {
		const long = '"'.repeat(200 * 1024);
		const result = sendItem({ form: "default", file: FILE, lines: linesOf(`${long}\n`), cursor: 0 });
		assert.ok(result.ok);
		assert.equal(result.item.truncated, true);
		assert.equal(JSON.stringify(result.item.text).length - 2, 256 * 1024);
	});
});

const pi = (pid: number, editor: number | null, pidNs?: string): PiMessage =>
	makePiMessage({ pid, editor_pid: editor, ...(pidNs ? { pid_ns: pidNs } : {}) }) as PiMessage;

describe("send to pi: which pi", () => {
	test("only the pis naming this editor, in a stable order", () => {
		const all = [pi(9, 77), pi(5, 77, "pid:[2]"), pi(6, 78), pi(5, 77)];
		assert.deepEqual(
			pisNaming(all, 77).map((m) => [m.pid, m.pid_ns]),
			[
				[5, undefined],
				[5, "pid:[2]"],
				[9, undefined],
			],
		);
	});

	test("none: one line; one: no question; several: asked once, remembered while it names the editor", async () => {
		const desk = new SendDesk({ dir: join(root, "which"), pid: 77 });
		const asked: number[] = [];
		const ask = (pick: number) => async (choices: readonly PiMessage[]) => {
			asked.push(choices.length);
			return choices.find((c) => c.pid === pick);
		};
		assert.deepEqual(await desk.pick([], ask(1)), { ok: false, notice: SEND_NOTICES.noPi });
		const [a, b, c] = [pi(1, 77), pi(2, 77), pi(3, 77)];
		assert.equal(((await desk.pick([a], ask(1))) as { pi: PiMessage }).pi, a);
		assert.deepEqual(asked, []);
		assert.equal(((await desk.pick([a, b], ask(2))) as { pi: PiMessage }).pi, b);
		assert.equal(((await desk.pick([a, b, c], ask(1))) as { pi: PiMessage }).pi, b, "remembered");
		assert.deepEqual(asked, [2]);
		// The one picked no longer names this editor: asked again.
		assert.equal(((await desk.pick([a, c], ask(3))) as { pi: PiMessage }).pi, c);
		assert.deepEqual(asked, [2, 2]);
		assert.deepEqual(await desk.pick([a, b], async () => undefined), { ok: false, notice: SEND_NOTICES.notPicked });
	});
});

describe("send to pi: the request written, and pi's answer", () => {
	const item: SendItem = {
		kind: "line",
		file: FILE,
		start_line: 2,
		end_line: 2,
		text: "two",
		truncated: false,
		message: null,
	};

	test("pi's validator takes it: 0600, no temp file, a new id each time, pi_ns echoed, prompt cut to 16 KiB", () => {
		const dir = join(root, "write");
		const desk = new SendDesk({ dir, pid: 77, now: () => 1_700_000_000.25 });
		const first = desk.write(pi(5, 77, "pid:[9]"), item, "now", "é".repeat(9000));
		const second = desk.write(pi(5, 77), item, "draft", "why?");
		assert.ok(first.ok && second.ok);
		assert.notEqual(first.id, second.id);
		const path = join(dir, editorSendFileName(77));
		assert.equal(lstatSync(path).mode & 0o777, 0o600);
		assert.deepEqual(
			readdirSync(dir).filter((n) => n.endsWith(".tmp")),
			[],
		);
		const parsed = parseSendRequest(readFileSync(path, "utf8"), 77);
		assert.ok(parsed.ok, JSON.stringify(parsed));
		assert.deepEqual(
			[parsed.request.id, parsed.request.pi_pid, parsed.request.pi_ns, parsed.request.mode, parsed.request.prompt],
			[second.id, 5, undefined, "draft", "why?"],
		);
		desk.dispose();
		assert.deepEqual(readdirSync(dir), [], "removed on exit");
	});

	test("a prompt over 16 KiB is cut on a character boundary", () => {
		const dir = join(root, "prompt");
		const desk = new SendDesk({ dir, pid: 78 });
		assert.ok(desk.write(pi(5, 78), item, "draft", "é".repeat(9000)).ok);
		const parsed = parseSendRequest(readFileSync(join(dir, editorSendFileName(78)), "utf8"), 78);
		assert.ok(parsed.ok);
		assert.equal(parsed.request.prompt, "é".repeat(8192));
	});

	test("a state dir open to others: nothing written, one line", () => {
		const dir = join(root, "open");
		const desk = new SendDesk({ dir, pid: 79 });
		assert.ok(desk.write(pi(5, 79), item, "draft", "").ok);
		chmodSync(dir, 0o755);
		const result = desk.write(pi(5, 79), item, "draft", "");
		assert.equal(result.ok, false);
		assert.match((result as { notice: string }).notice, /^not sending: /);
	});

	const FATES: { fate: string; reason?: string; line: string }[] = [
		{ fate: "draft", line: "line in pi's input as a draft" },
		{ fate: "prompt", line: "line sent to pi as a prompt" },
		{ fate: "follow-up", line: "line queued for pi as a follow-up" },
		{ fate: "excluded", line: "not sent: the file is excluded by pi's ignore rules" },
		{ fate: "refused", reason: "too old\n\u001b[31mred", line: "pi refused the send: too old\\n\\u001b[31mred" },
	];
	for (const row of FATES) {
		test(`pi's answer "${row.fate}" in one line, once, only for our own send`, () => {
			const dir = join(root, `fate-${row.fate}`);
			const desk = new SendDesk({ dir, pid: 80 });
			const written = desk.write(pi(5, 80), item, "draft", "");
			assert.ok(written.ok);
			const answer = (id: string, editor = 80) => {
				const text = JSON.stringify({
					...makePiMessage({ pid: 5, editor_pid: 80 }),
					sent: { editor_pid: editor, id, fate: row.fate, ...(row.reason ? { reason: row.reason } : {}) },
				});
				const parsed = parsePiMessage(text);
				assert.ok(parsed.ok);
				return desk.answered(parsed.message);
			};
			assert.equal(answer("s-other"), undefined, "another id");
			assert.equal(answer(written.id, 81), undefined, "another editor's");
			const line = answer(written.id);
			assert.equal(line, row.line);
			assert.ok(!(line ?? "").includes("\n") && !(line ?? "").includes("\u001b"), "one inert line");
			assert.equal(answer(written.id), undefined, "said once");
			assert.match(desk.summary() ?? "", new RegExp(`to pi 5: ${row.fate}$`));
		});
	}

	test("a malformed sent is dropped, the message kept", () => {
		const parsed = parsePiMessage(JSON.stringify({ ...makePiMessage(), sent: { editor_pid: "x", id: 3 } }));
		assert.ok(parsed.ok);
		assert.equal(parsed.message.sent, undefined);
	});
});
