/**
 * Issue 26 items 2 and 3 end to end in Emacs: a real `emacs --daemon` with a tty frame in tmux, the user's edit typed
 * as keys and not saved, and a real pi whose fake model calls pi's own `edit` and `write`. pi's change lands in the
 * unsaved buffer beside the user's line (one `C-_` takes only pi's out: the merge is not joined to the user's typing),
 * the disk has exactly what the tool wrote, and the tool result says it was merged into the editor's unsaved buffer;
 * a `write` touching the user's line keeps the user's text and the result names the line and quotes it; the conflict
 * is then listed with pi's hunks (M-x pi-ide-hunks), on the user's line as it moves, until the buffer is saved.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type Emacs, elispString, startEmacs } from "../helpers/emacs.ts";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { type PiEnv, runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const ORIGINAL = Array.from({ length: 20 }, (_, i) => `v${i + 1} = ${i + 1}  # line ${i + 1}`);
const TYPED = "typed = 'UNSAVED BY THE USER'";

async function runTools(env: PiEnv, calls: { name: string; arguments: Record<string, unknown> }[]): Promise<string> {
	env.model.respond = toolsThenReply(calls);
	const result = await runPrint(env, [PROMPT]);
	assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
	return toolResults(env.model.requests[1]).join("\n");
}

const bufferLines = async (e: Emacs, file: string) =>
	(await e.json<string>(`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (buffer-string))`)).split(
		"\n",
	);
const modified = (e: Emacs, file: string) =>
	e.json<boolean>(
		`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (if (buffer-modified-p) t :false))`,
	);

/** Emacs with src/app.py open and line 3 replaced by TYPED, typed as keys (the command loop's own undo steps). */
async function typedInEmacs(t: Parameters<typeof envFor>[0]) {
	const env = await envFor(t);
	const file = touch(env.workDir, "src/app.py", `${ORIGINAL.join("\n")}\n`);
	const e = await startEmacs(t, { runtimeDir: env.runtimeDir, cwd: env.workDir });
	await e.act(`(find-file ${elispString(file)})`);
	await e.until((s) => (s?.active_buffer.file === file ? true : undefined), "Emacs reports src/app.py");
	await e.keys("M-<", "C-n", "C-n", "C-a", "C-k");
	await e.keys("-l", TYPED);
	await pollUntil(async () => ((await bufferLines(e, file))[2] === TYPED ? true : undefined), "the typed line");
	await e.until((s) => (s?.active_buffer.modified ? true : undefined), "Emacs reports the unsaved change");
	return { env, e, file };
}

describe("emacs: pi's edits merged into the user's unsaved buffer", { concurrency: 2 }, () => {
	it("an edit away from the typed line: both in the buffer, one C-_ takes pi's out, the model told", async (t) => {
		const { env, e, file } = await typedInEmacs(t);
		const toolText = await runTools(env, [
			{ name: "edit", arguments: { path: file, edits: [{ oldText: "# line 15", newText: "# line fifteen" }] } },
		]);
		const piText = `${ORIGINAL.map((l, i) => (i === 14 ? l.replace("line 15", "line fifteen") : l)).join("\n")}\n`;
		assert.equal(readFileSync(file, "utf8"), piText, "the disk has exactly what the tool wrote");
		assert.match(toolText, /merged this change into the editor's unsaved buffer/);
		const lines = await bufferLines(e, file);
		assert.equal(lines[2], TYPED);
		assert.equal(lines[14], "v15 = 15  # line fifteen");
		assert.equal(await modified(e, file), true, "the buffer stays modified, unsaved");
		await e.keys("C-_");
		await pollUntil(
			async () => ((await bufferLines(e, file))[14] === ORIGINAL[14] ? true : undefined),
			"C-_ takes pi's line out",
		);
		assert.equal((await bufferLines(e, file))[2], TYPED, "the user's typing stays");
	});

	it("a write over the typed line: the user's text kept, the model told the line and the text", async (t) => {
		const { env, e, file } = await typedInEmacs(t);
		const content = `${ORIGINAL.map((l, i) => (i === 2 ? "v3 = 'pi'  # line 3" : l)).join("\n")}\n`;
		const toolText = await runTools(env, [{ name: "write", arguments: { path: file, content } }]);
		assert.equal(readFileSync(file, "utf8"), content, "the disk has exactly what the tool wrote");
		assert.match(toolText, /Conflict/);
		assert.match(toolText, /line 3 of the user's unsaved buffer/);
		assert.ok(toolText.includes(TYPED), `the user's text quoted:\n${toolText}`);
		assert.match(toolText, /user decides/);
		assert.equal((await bufferLines(e, file))[2], TYPED);
		assert.equal(await modified(e, file), true);
		const said = (await e.json<string>(`(with-current-buffer "*Messages*" (buffer-string))`))
			.split("\n")
			.filter((l) => l.includes("touches your unsaved"));
		assert.equal(said.length, 1, "one message line");
		assert.match(
			said[0] ?? "",
			/app\.py touches your unsaved line 3: kept yours\. Compare: M-x diff-buffer-with-file$/,
		);
		// Item 6: the conflict is listed where pi's hunks are (M-x pi-ide-hunks, a compilation buffer), on the user's
		// line as it moves; gone once the buffer is saved (the buffer and its file agree again).
		const conflicts = async () => {
			// nil when it lists something; else the line it says ("pi changed no files ..."), the list left as it was.
			if ((await e.json<string | null>("(pi-ide-hunks)")) !== null) return [];
			return (await e.json<string>('(with-current-buffer "*pi-ide hunks*" (buffer-string))'))
				.split("\n")
				.filter((l) => l.includes("conflict:"));
		};
		const listed = (line: number) =>
			`${file}:${line}: conflict: your unsaved line ${line} kept; pi's version is on disk (M-x diff-buffer-with-file)`;
		assert.deepEqual(await conflicts(), [listed(3)]);
		await e.keys("M-<", "C-o");
		assert.deepEqual(await conflicts(), [listed(4)], "the listed line follows the user's line");
		// Saved as the user answers yes to Emacs's "changed on disk" question (the buffer is older than the file).
		await e.act(
			`(with-current-buffer (find-buffer-visiting ${elispString(file)}) (set-visited-file-modtime) (save-buffer))`,
		);
		assert.deepEqual(await conflicts(), [], "saved: no longer listed");
	});
});
