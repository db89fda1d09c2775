/**
 * The VS Code shell of send to pi (editors/vscode/src/send-view.ts, protocol v0.5) against the fake VS Code API
 * (test/helpers/fake-vscode.ts), for what the kit's send case does not drive: the input box asked when the
 * command has no argument (Escape: nothing sent), the quick pick asked once with several pis and remembered, pi's
 * hunk under the cursor, a selection of whole lines, and every command registered under its documented id.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { PiMessage } from "../../../../editors/shared/pi-message.ts";
import { editorSendFileName, parseSendRequest, type SendRequest } from "../../../../src/protocol/wire.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";
import "../../../helpers/fake-vscode-hook.ts";

const vscode = await import("../../../helpers/fake-vscode.ts");
const { SendView, SEND_COMMANDS } = await import("../../../../editors/vscode/src/send-view.ts");

const PID = 4321;
const root = mkdtempSync(join(tmpdir(), "vscode-send-view-"));
after(() => rmSync(root, { recursive: true, force: true }));

function setup(name: string, pis: PiMessage[], hunk?: { first: number; last: number }) {
	const dir = mkdtempSync(join(root, `${name}-`));
	chmodSync(dir, 0o700);
	const file = join(dir, "a.txt");
	writeFileSync(file, "one\ntwo\nthree\n");
	const bench = new vscode.Workbench(dir);
	vscode.useWorkbench(bench);
	const view = new SendView({
		dir: join(dir, "state"),
		pid: PID,
		messages: () => pis,
		hunkAt: () => hunk,
		log: () => {},
	});
	bench.open(file);
	const run = async (id: string, arg?: unknown) => {
		const command = bench.commands.get(id);
		assert.ok(command, `${id} registered`);
		await command(arg);
	};
	const request = (): SendRequest | undefined => {
		let text: string;
		try {
			text = readFileSync(join(dir, "state", editorSendFileName(PID)), "utf8");
		} catch {
			return undefined;
		}
		const parsed = parseSendRequest(text, PID);
		assert.ok(parsed.ok, JSON.stringify(parsed));
		return parsed.request;
	};
	const done = () => {
		view.dispose();
		bench.dispose();
		vscode.useWorkbench(undefined);
	};
	return { bench, file, run, request, done, view };
}

const pi = (pid: number) => makePiMessage({ pid, editor_pid: PID, cwd: `/w${pid}` }) as PiMessage;

describe("VS Code: send to pi", () => {
	test("every form and mode is a command of its own", () => {
		const { bench, done } = setup("ids", []);
		try {
			assert.deepEqual(
				SEND_COMMANDS.map((c) => c.id).filter((id) => !bench.commands.has(id)),
				[],
			);
			const pkg = JSON.parse(readFileSync(new URL("../../../../editors/vscode/package.json", import.meta.url), "utf8"));
			const contributed = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
			assert.deepEqual(
				SEND_COMMANDS.map((c) => c.id).filter((id) => !contributed.has(id)),
				[],
				"in package.json",
			);
		} finally {
			done();
		}
	});

	test("without an argument the prompt is asked; Escape sends nothing", async () => {
		const { bench, run, request, done } = setup("ask", [pi(11)]);
		try {
			await run("piIdeContext.send");
			assert.equal(request(), undefined);
			assert.deepEqual(bench.shown, ["pi: nothing sent"]);
			bench.answers.push("why?");
			await run("piIdeContext.sendNow");
			assert.deepEqual([request()?.mode, request()?.prompt, request()?.pi_pid], ["now", "why?", 11]);
			assert.equal(bench.asked.filter((q) => q.startsWith("input:")).length, 2);
		} finally {
			done();
		}
	});

	test("several pis: asked once, then remembered", async () => {
		const { bench, run, request, done, view } = setup("pick", [pi(11), pi(12)]);
		try {
			bench.answers.push("pi 12 in /w12");
			await run("piIdeContext.send", "first");
			await run("piIdeContext.send", { prompt: "second" });
			assert.deepEqual([request()?.pi_pid, request()?.prompt], [12, "second"]);
			assert.equal(bench.asked.filter((q) => q.startsWith("pick:")).length, 1, bench.asked.join("\n"));
			assert.match(view.summary() ?? "", /^last send: line of .*a\.txt to pi 12: no answer yet$/);
		} finally {
			done();
		}
	});

	test("pi's hunk under the cursor, and a selection of whole lines", async () => {
		const { bench, run, request, done } = setup("hunk", [pi(11)], { first: 1, last: 2 });
		try {
			await run("piIdeContext.sendHunk", "");
			assert.deepEqual([request()?.item.kind, request()?.item.start_line, request()?.item.end_line], ["hunk", 2, 3]);
			// Lines 1 and 2 selected with the cursor at the start of line 3, as a triple click and drag leaves it.
			bench.select({ line: 0, character: 0 }, { line: 2, character: 0 });
			await run("piIdeContext.send", "");
			assert.deepEqual([request()?.item.kind, request()?.item.text], ["selection", "one\ntwo"]);
		} finally {
			done();
		}
	});

	test("no pi: one line, nothing written", async () => {
		const { bench, run, request, done } = setup("none", []);
		try {
			await run("piIdeContext.sendFile", "x");
			assert.equal(request(), undefined);
			assert.deepEqual(bench.shown, ["pi: no pi is connected to this editor: nothing sent"]);
		} finally {
			done();
		}
	});
});
