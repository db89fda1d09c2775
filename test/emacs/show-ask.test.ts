/**
 * v0.5 show and ask in a real Emacs (daemon with a tty frame in tmux), the parts the conformance kit does not
 * drive: `pi-ide-show-follow` (default nil) displays the shown place; the `*pi-ide shown*` buffer is a grep-mode
 * list that `next-error` walks, never displayed by a show; an ask's diagnostics over the answer's cap (200 items
 * in all) are cut with each buffer's total kept.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { buildAsk, buildShow, encodeAskMessage, findAnswer } from "../../src/link/show-ask.ts";
import { type AskAnswer, parseAnswers, type ShowAskAnswer, type ShowAskRequest } from "../../src/protocol/show-ask.ts";
import { spawnLiveEditor, writeRawStateFile } from "../helpers/editors.ts";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { nowSeconds } from "../helpers/nvim.ts";
import { pollUntil } from "../helpers/poll.ts";

function ask(e: Emacs, piPid: number, requests: ShowAskRequest[]): void {
	const text = encodeAskMessage({ pid: piPid, pidNs: null, editorPid: e.pid, now: nowSeconds(), requests });
	writeRawStateFile(e.stateDir, `pi-${piPid}.ask.json`, text);
}

function answerOf(e: Emacs, piPid: number, id: string): Promise<ShowAskAnswer> {
	return pollUntil(() => {
		let text: string;
		try {
			text = readFileSync(join(e.stateDir, `${e.pid}.answers.json`), "utf8");
		} catch {
			return undefined;
		}
		const parsed = parseAnswers(text, e.pid);
		return parsed.ok ? findAnswer(parsed.answers, piPid, null, id) : undefined;
	}, `the answer to ${id}`);
}

const show = (id: string, file: string, line: number) =>
	buildShow(id, file, { path: file, line, endLine: null, note: null }, nowSeconds() + 30);

describe("emacs: show and ask", () => {
	it("pi-ide-show-follow (default nil) displays the place; without it nothing moves, next-error walks the list", async (t) => {
		const e = await startEmacs(t);
		const a = join(e.dir, "a.ts");
		const b = join(e.dir, "b.ts");
		writeFileSync(a, "1\n2\n3\n4\n");
		writeFileSync(b, "1\n2\n3\n4\n");
		await e.act(`(find-file ${elispString(a)})`);
		const pi = await spawnLiveEditor();
		t.after(() => pi.kill());
		const where = () =>
			e.json<[string, number, number]>(
				"(let ((w (selected-window))) (with-selected-window w (vector (buffer-file-name) (line-number-at-pos) (length (window-list)))))",
			);
		ask(e, pi.pid, [show("off", b, 3)]);
		assert.equal(((await answerOf(e, pi.pid, "off")) as { status: string }).status, "listed");
		assert.deepEqual(await where(), [a, 1, 1], "off: the window, buffer and point stay");
		assert.equal(
			await e.json<boolean>("(if (find-buffer-visiting " + elispString(b) + ") t :false)"),
			false,
			"b not visited",
		);
		assert.equal(
			await e.json<string>("(with-current-buffer next-error-last-buffer (symbol-name major-mode))"),
			"grep-mode",
		);

		await e.eval("(setq pi-ide-show-follow t)");
		ask(e, pi.pid, [show("on", b, 3)]);
		assert.equal(((await answerOf(e, pi.pid, "on")) as { status: string }).status, "opened");
		assert.deepEqual((await where()).slice(0, 2), [b, 3]);
	});

	it("an ask over the cap: 200 diagnostics in all, each buffer's total kept", async (t) => {
		const e = await startEmacs(t);
		const files = [0, 1, 2].map((i) => join(e.dir, `f${i}.ts`));
		for (const f of files) {
			writeFileSync(f, "x\n".repeat(200));
			await e.act(`(find-file ${elispString(f)})`);
			const items = Array.from({ length: 100 }, (_, i) => `(${i + 1} 1 "error" "m${i}")`).join(" ");
			await e.eval(`(pi-ide-test-set-diagnostics ${elispString(f)} '(${items}))`);
		}
		const pi = await spawnLiveEditor();
		t.after(() => pi.kill());
		await pollUntil(
			async () =>
				(await e.json<number>(
					`(length (with-current-buffer (find-buffer-visiting ${elispString(files[2] ?? "")}) (flymake-diagnostics)))`,
				)) === 100 || undefined,
			"flymake's diagnostics",
		);
		ask(e, pi.pid, [buildAsk("cap", "all", nowSeconds() + 30)]);
		const answer = (await answerOf(e, pi.pid, "cap")) as AskAnswer;
		const counts = answer.buffers
			.filter((b) => files.includes(b.file))
			.map((b) => [b.diagnostics?.items.length, b.diagnostics?.total]);
		assert.deepEqual(counts, [
			[100, 100],
			[100, 100],
			[0, 100],
		]);
	});
});
