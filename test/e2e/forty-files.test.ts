/**
 * Report retention end to end (issue 24, PROTOCOL.md `files`): real pi (print mode, the fake model) writes 40
 * files the editor has open, all in one assistant message, and every one of the 40 tool results gets the editor's
 * answer in time (no "did not answer" note). A client that keeps 20 reports in all, instead of each pi's newest 20
 * plus those pi may still wait for, loses about half of them. One editor per client, started once through the
 * conformance kit's adapter (test/conformance/adapters/), which opens files as a user does: real VS Code
 * (code-server) and the JetBrains headless driver. Not Obsidian: its plugin speaks v0.2
 * and reads no pi messages, so pi waits for no answer from it (its kit adapter lists `reload` as not run).
 * Not Neovim, Vim and Emacs, for now (issue 24): alone, and in most loaded runs, they answer all 40; inside the whole
 * suite (four lanes on two cores) they have lost the answers to the first 10 to 20 files, not late but never
 * seen by pi in 7 to 15 s. One cause is fixed in Neovim and Vim (a report's 5 s hold now counts from the first state write that
 * carries it, not from when it was made: a busy editor dropped reports it had never written); another is not
 * found yet.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ClientAdapter, ClientSession } from "../conformance/client.ts";
import { toolResults, toolsThenReply } from "../helpers/fake-llm.ts";
import { runPrint } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

const FILES = 40;

/** The clients, by their kit adapter's module and name. */
const CLIENTS: { label: string; module: string; name: string }[] = [
	{ label: "VS Code (code-server)", module: "vscode-code-server", name: "vscode (code-server)" },
	{ label: "JetBrains (headless driver)", module: "jetbrains", name: "jetbrains (headless)" },
];

async function adapterOf(module: string, name: string): Promise<ClientAdapter> {
	const loaded = (await import(`../conformance/adapters/${module}.ts`)) as { adapters: ClientAdapter[] };
	const adapter = loaded.adapters.find((a) => a.name.startsWith(name));
	if (!adapter) throw new Error(`no adapter ${name} in test/conformance/adapters/${module}.ts`);
	return adapter;
}

describe(`pi writes ${FILES} open files in one message: every tool result gets the editor's answer`, () => {
	for (const { label, module, name } of CLIENTS) {
		it(label, async (t) => {
			const adapter = await adapterOf(module, name);
			// What this run checks is retention (every answer kept until pi read it), not speed: on this loaded machine
			// (the suite's four lanes on two cores) an editor's first answer to a burst of 40 can take more than the
			// default second, so the wait is the setting's for slow machines. A client that keeps 20 reports in all
			// loses 20 answers however long pi waits.
			const env = await envFor(t, { settings: { ideContext: { answerWaitMs: 5000 } } });
			const files = Array.from({ length: FILES }, (_, i) =>
				touch(env.workDir, `src/f${String(i + 1).padStart(2, "0")}.txt`, `file ${i + 1}\n`),
			);
			let session: ClientSession | undefined;
			try {
				session = await adapter.start({
					cwd: env.workDir,
					env: {
						HOME: env.home,
						XDG_RUNTIME_DIR: env.runtimeDir,
						PATH: process.env["PATH"] ?? "/usr/bin:/bin",
						LANG: "C.UTF-8",
					},
				});
				for (const file of files) await session.open(file);
				const open = session;
				await pollUntil(async () => {
					const loaded = new Set(await open.loadedFiles());
					return files.every((f) => loaded.has(f)) ? true : undefined;
				}, `the editor has all ${FILES} files open`);
				env.model.respond = toolsThenReply(
					files.map((path, i) => ({ name: "write", arguments: { path, content: `file ${i + 1}, by pi\n` } })),
				);
				const result = await runPrint(env, [PROMPT]);
				assert.equal(result.code, 0, `pi -p failed.\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
				const results = toolResults(env.model.requests[1]);
				assert.equal(results.length, FILES, `${FILES} tool results`);
				const unanswered = results.filter((text) => /did not answer/.test(text));
				assert.deepEqual(unanswered, [], `${unanswered.length} of ${FILES} tool results without the editor's answer`);
				for (const text of results) assert.match(text, /Successfully wrote/);
			} finally {
				await session?.dispose();
				await adapter.close?.();
			}
		});
	}
});
