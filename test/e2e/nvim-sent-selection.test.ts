/**
 * Issue 25 item 1, with real Neovim (0.7.2 and 0.10, with a UI) and real pi in RPC mode: a selection sent at once
 * from the editor (`:PiIdeSend!` from visual mode) counts as the selection the model has. The model's request holds
 * its text once, in the user's message, and the prompt's editor context refers to it; a later prompt of the same
 * session still does not repeat it; after /new the user's message is gone and the block sends the text again.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type RecordedRequest, userTexts } from "../helpers/fake-llm.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";
import { WAIT_MS } from "../helpers/pi-env.ts";
import { pollUntil } from "../helpers/poll.ts";
import { startRpc } from "../helpers/rpc.ts";
import { envFor, touch } from "../helpers/scenario.ts";

const MARKER = "sent-once-7d3";
const REFERENCE = "Selection (lines 2-3, made";
const USER_REFERENCE = "the selection the user sent in their message; not repeated.";

const count = (text: string, part: string) => text.split(part).length - 1;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: a selection sent at once counts as the selection the model has`, () => {
		it("its text reaches the model once, in the user's message; after /new the block sends it", async (t) => {
			const env = await envFor(t, { settings: { ideContext: { linkNvim: false } } });
			const file = touch(
				env.workDir,
				"src/main.ts",
				`const a = 1;\nconst marker = "${MARKER}";\nconst c = 3;\nconst d = 4;\n`,
			);
			const nv = await startNvim(t, flavour, { runtimeDir: env.runtimeDir, cwd: env.workDir });
			await nv.command(`edit ${file}`);
			await nv.until((s) => s.active_buffer.file === file, "Neovim reports main.ts");
			const rpc = await startRpc(env);
			t.after(() => rpc.close());
			await pollUntil(
				async () => ((await nv.lua<number>("return #require('pi-ide.inbox.pis').all()")) > 0 ? true : undefined),
				"pi's message naming this Neovim",
				WAIT_MS,
			);

			// Lines 2-3 selected; the editor reports the selection before it is sent (so the block has it too).
			await nv.input("2GVj<Esc>");
			await nv.until((s) => s.active_buffer.selection?.start.line === 2, "Neovim reports the selection");
			await nv.input("gv:PiIdeSend! explain these<CR>");
			const sent = `explain these\n\nSelection from src/main.ts, lines 2-3:\n\`\`\`typescript\nconst marker = "${MARKER}";\nconst c = 3;\n\`\`\``;
			const requestWith = (text: string) =>
				pollUntil(
					() => env.model.requests.find((r) => userTexts(r).includes(text)),
					`the model's request with ${JSON.stringify(text.slice(0, 20))}`,
					WAIT_MS,
				);
			const all = (request: RecordedRequest) => userTexts(request).join("\n---\n");
			const first = await requestWith(sent);
			assert.equal(count(all(first), MARKER), 1, all(first));
			assert.ok(all(first).includes(REFERENCE), `the block names the selection:\n${all(first)}`);
			assert.ok(all(first).includes(USER_REFERENCE), all(first));
			await pollUntil(() => (rpc.records.some((r) => r.type === "agent_settled") ? true : undefined), "pi settles");

			// The next prompt of the session: the user's message is still in the model's view.
			await rpc.prompt("and the next line?");
			const next = await requestWith("and the next line?");
			assert.equal(count(all(next), MARKER), 1, all(next));

			// /new: the user's message is gone; the selection (still fresh in the editor) goes in the block.
			assert.equal((await rpc.command({ type: "new_session" })).success, true);
			await rpc.prompt("in a new session");
			const fresh = await requestWith("in a new session");
			assert.equal(count(all(fresh), MARKER), 1, all(fresh));
			assert.ok(!all(fresh).includes(USER_REFERENCE), all(fresh));
			assert.ok(all(fresh).includes(`Selection (lines 2-3`), all(fresh));
		});
	});
});
