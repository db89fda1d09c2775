/**
 * Send to pi from the Obsidian plugin (editors/obsidian/src/send.ts, protocol v0.5) against the fake Obsidian, with
 * real pi-like processes (live pids) whose messages name the plugin: what the kit's send case does not drive. Several
 * pis: the user picks one in a suggestion list, once, and it is remembered; the prompt window closed without Enter
 * sends nothing; reading mode has no cursor (one line, nothing sent); the pi's message is echoed as `pi`.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { parseEditorState } from "../../../../src/protocol/protocol.ts";
import { editorSendFileName, parseSendRequest, type SendRequest } from "../../../../src/protocol/wire.ts";
import { makePiMessage } from "../../../fixtures/pi-message.ts";
import { type LiveEditor, spawnLiveEditor, writeRawStateFile } from "../../../helpers/editors.ts";
import { fake, PiIdeContextPlugin } from "../../../helpers/obsidian-host.ts";
import { pollUntil } from "../../../helpers/poll.ts";

const root = mkdtempSync(join(tmpdir(), "pi-ide-obsidian-send-"));
const VAULT = join(root, "vault");
const DIR = join(root, "run/pi-ide");
process.env["XDG_RUNTIME_DIR"] = join(root, "run");
mkdirSync(join(root, "run"), { mode: 0o700 });
mkdirSync(VAULT);
writeFileSync(join(VAULT, "note.md"), "one\ntwo\nthree\n");
const pis: LiveEditor[] = [];
after(async () => {
	for (const pi of pis) await pi.kill();
	rmSync(root, { recursive: true, force: true });
});

function request(): SendRequest | undefined {
	let text: string;
	try {
		text = readFileSync(join(DIR, editorSendFileName(process.pid)), "utf8");
	} catch {
		return undefined;
	}
	const parsed = parseSendRequest(text, process.pid);
	assert.ok(parsed.ok, JSON.stringify(parsed));
	return parsed.request;
}

async function load() {
	const app = new fake.App(new fake.FileSystemAdapter(VAULT));
	const plugin = new PiIdeContextPlugin(app as never, { id: "pi-ide-context" } as never);
	const host = plugin as unknown as InstanceType<typeof fake.Plugin>;
	await plugin.onload();
	const view = new fake.MarkdownView(new fake.TFile("note.md"), "one\ntwo\nthree\n");
	app.workspace.activeView = view;
	app.workspace.trigger("file-open", view.file);
	/** Run command `id`; `modals` answers each window it opens, in turn. */
	const run = async (id: string, ...modals: ((modal: InstanceType<typeof fake.Modal>) => void)[]) => {
		const command = host.commands.find((c) => c.id === id);
		assert.ok(command?.callback, `command ${id}`);
		let settled = false;
		const done = Promise.resolve(command.callback()).finally(() => {
			settled = true;
		});
		let last: InstanceType<typeof fake.Modal> | undefined;
		for (const answer of modals) {
			// A window opens as soon as the command reaches it (perhaps before the callback returns).
			const modal = await pollUntil(() => {
				const open = fake.Modal.shown.at(-1);
				return open !== undefined && open !== last ? open : settled ? null : undefined;
			}, `a window of ${id}`);
			assert.ok(modal, `${id} opened a window: ${fake.Notice.shown.join(" / ")}`);
			last = modal;
			answer(modal);
		}
		await done;
	};
	return { plugin: host, view, run };
}

const notices = () => fake.Notice.shown;

describe("Obsidian: send to pi", () => {
	test("several pis: picked once and remembered; the prompt closed sends nothing; reading mode has no cursor", async () => {
		for (let i = 0; i < 2; i++) pis.push(await spawnLiveEditor());
		const { plugin, view, run } = await load();
		try {
			const [a, b] = pis.map((p) => p.pid) as [number, number];
			for (const pid of [a, b]) {
				const message = makePiMessage({
					pid,
					cwd: `/w${pid}`,
					editor_pid: process.pid,
					seq: 0,
					changed: [],
					last_turn: [],
				});
				writeRawStateFile(DIR, `pi-${pid}.json`, JSON.stringify(message));
			}
			const state = join(DIR, `${process.pid}.json`);
			await pollUntil(() => {
				const parsed = parseEditorState(readFileSync(state, "utf8"));
				return (parsed.ok && parsed.state.pi !== undefined) || undefined;
			}, "pi's message echoed");

			let labels: string[] = [];
			await run(
				"send",
				(pick) => {
					labels = (pick as InstanceType<typeof fake.SuggestModal<unknown>>).labels();
					(pick as InstanceType<typeof fake.SuggestModal<unknown>>).choose(`pi ${b} in /w${b}`);
				},
				(prompt) => prompt.answer("why?"),
			);
			assert.deepEqual(
				labels,
				[`pi ${a} in /w${a}`, `pi ${b} in /w${b}`].sort((x, y) => (x < y ? -1 : 1)),
			);
			assert.deepEqual([request()?.pi_pid, request()?.prompt, request()?.item.kind], [b, "why?", "line"]);
			const first = request()?.id;

			// Remembered: only the prompt window opens now; closing it sends nothing.
			await run("send-file-now", (prompt) => prompt.close());
			assert.equal(notices().at(-1), "pi: nothing sent");
			assert.equal(request()?.id, first);
			await run("send-file-now", (prompt) => prompt.answer(""));
			assert.deepEqual([request()?.pi_pid, request()?.mode, request()?.item.kind], [b, "now", "file"]);

			view.mode = "preview";
			await run("send");
			assert.match(notices().at(-1) ?? "", /reading mode has no cursor/);
		} finally {
			plugin.unload();
		}
	});
});
