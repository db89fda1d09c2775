/**
 * RPC mode (`pi --mode rpc`, as ACP clients such as pi-acp use it): the pill arrives as setStatus requests,
 * `/ide` is a select dialog answered with extension_ui_response, `/ide off` and `/ide status` work, and a
 * choice sticks. What the model receives is read from the fake model's recorded requests.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { killAllEditors, makeSelection, nowSeconds } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { GLYPH_DISCONNECTED, GLYPH_NVIM, PILL_NVIM_TS, PUA, STATUS_KEY } from "../helpers/ide.ts";
import { type PiEnv, WAIT_MS } from "../helpers/pi-env.ts";
import { pollFor } from "../helpers/poll.ts";
import { type RpcPi, type RpcRecord, startRpc } from "../helpers/rpc.ts";
import {
	envFor as baseEnvFor,
	fileLine,
	type PlacedEditor,
	placeEditor,
	switchBuffer,
	touch,
} from "../helpers/scenario.ts";

/**
 * Envs for RPC tests: the Neovim-client link (announced with a notify at session start, asynchronously) is off,
 * so the only notifies are the ones `/ide` produces.
 */
const envFor = (t: Parameters<typeof baseEnvFor>[0], options: Parameters<typeof baseEnvFor>[1] = {}) =>
	baseEnvFor(t, { ...options, settings: { ideContext: { linkNvim: false }, ...options.settings } });

const isStatus = (r: RpcRecord) =>
	r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === STATUS_KEY;

async function rpcFor(t: { after(fn: () => unknown): void }, env: PiEnv): Promise<RpcPi> {
	const rpc = await startRpc(env);
	t.after(() => rpc.close());
	return rpc;
}

/** The Neovim + TypeScript pill. */
const isNvimTs = (text: string | undefined) => text !== undefined && PILL_NVIM_TS.test(text);

/** Send `/ide` as prompt `id` (records from `since` on) and return the select request it opens. */
function openPicker(rpc: RpcPi, id: string, since: number): Promise<RpcRecord> {
	rpc.send({ id, type: "prompt", message: "/ide" });
	return rpc.waitFor((r) => r.type === "extension_ui_request" && r.method === "select", WAIT_MS, since);
}

/** The latest pill text, waiting until it satisfies `accept`. */
async function waitForStatus(
	rpc: RpcPi,
	accept: (text: string | undefined) => boolean,
	timeoutMs = WAIT_MS,
	since = 0,
) {
	const record = await rpc.waitFor((r) => isStatus(r) && accept(r.statusText), timeoutMs, since);
	return record.statusText;
}

/**
 * Write an unnamed-buffer state every 100 ms until the pill reacts, then write the TypeScript state back and
 * wait for its pill: from then on the extension is known to follow writes. Every probe looks at all records
 * since the first write, so a pill that arrives late (a loaded machine) or between two probes still counts.
 */
async function untilReacting(rpc: RpcPi, env: PiEnv, editor: PlacedEditor): Promise<void> {
	const first = rpc.records.length;
	const reacted = () => rpc.records.slice(first).some((r) => isStatus(r) && r.statusText === GLYPH_NVIM);
	await pollFor(
		() => {
			if (reacted()) return true;
			switchBuffer(env, editor, { file: null, language: null });
			return false;
		},
		"the pill following a state-file write",
		{ timeoutMs: WAIT_MS, intervalMs: 100 },
	);
	const since = rpc.records.length;
	switchBuffer(env, editor);
	await waitForStatus(rpc, isNvimTs, WAIT_MS, since);
}

/** Send `/ide ...` and return the notify text it produced. */
async function ideCommand(
	rpc: RpcPi,
	args: string,
	isReply: (message: string) => boolean = () => true,
): Promise<string> {
	const since = rpc.records.length;
	const { response } = await rpc.prompt(`/ide ${args}`.trim());
	assert.equal(response.success, true);
	const notify = await rpc.waitFor(
		(r) => r.type === "extension_ui_request" && r.method === "notify" && isReply(String(r.message)),
		WAIT_MS,
		since,
	);
	return String(notify.message);
}

/** `/ide status`: the report itself, not an earlier notify (such as the one-time state-dir warning) in flight. */
function ideStatus(rpc: RpcPi): Promise<string> {
	return ideCommand(rpc, "status", (message) => message.startsWith("State dir:"));
}

/** Prompt and return the user-role messages the model got right after it. */
async function injectedFor(rpc: RpcPi, env: PiEnv, prompt: string): Promise<string[]> {
	await rpc.prompt(prompt);
	return injectedAfter(env.model.requests.at(-1), prompt);
}

describe("RPC mode", { concurrency: 4 }, () => {
	after(killAllEditors);

	test("setStatus: Neovim + TypeScript pill at start; live updates; U+EAE3 when the editor dies", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);

		const since = rpc.records.length;
		switchBuffer(env, editor, { file: null, name: "[No Name]", language: null });
		await waitForStatus(rpc, (s) => s === GLYPH_NVIM, WAIT_MS, since);

		const beforeKill = rpc.records.length;
		await editor.kill();
		await waitForStatus(rpc, (s) => s === GLYPH_DISCONNECTED, WAIT_MS, beforeKill);
	});

	test("setStatus follows each of five alternating writes (the latency itself is measured by npm run bench)", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		// Prime: the extension reacts to writes at all (a write right after start is the previous test's subject).
		await untilReacting(rpc, env, editor);
		for (let i = 0; i < 5; i++) {
			const named = i % 2 === 0;
			const since = rpc.records.length;
			switchBuffer(env, editor, named ? { file: null, name: "[No Name]", language: null } : {});
			await waitForStatus(rpc, (s) => (named ? s === GLYPH_NVIM : isNvimTs(s)), WAIT_MS, since);
		}
	});

	test("glyph tables: unknown JetBrains product falls back to the app glyph; known products differ from nvim", async (t) => {
		const pills = await Promise.all(
			[
				{ app: "jetbrains" },
				{ app: "jetbrains", product: "NoSuchIDE 9000" },
				{ app: "jetbrains", product: "WebStorm" },
				{ app: "vscode" },
				{ app: "obsidian" },
			].map(async (editor) => {
				const env = await envFor(t);
				await placeEditor(env, { ...editor, active_buffer: { file: null, name: "[No Name]", language: null } });
				const rpc = await rpcFor(t, env);
				return waitForStatus(rpc, (s) => s !== undefined && s !== GLYPH_DISCONNECTED);
			}),
		);
		const [jetbrains, unknown, webstorm, vscode, obsidian] = pills;
		for (const pill of pills) assert.match(pill ?? "", new RegExp(`^${PUA.source}$`, "u"), `one glyph: ${pill}`);
		assert.equal(unknown, jetbrains, "unknown product → app glyph");
		assert.notEqual(webstorm, jetbrains, "WebStorm has its own glyph");
		assert.equal(new Set([jetbrains, vscode, obsidian, GLYPH_NVIM]).size, 4, "each app its own glyph");
	});

	test("/ide: select dialog with both editors; the pick is injected and sticks while the other editor writes", async (t) => {
		const env = await envFor(t);
		const alpha = touch(env.workDir, "alpha.ts");
		const beta = touch(env.workDir, "beta.ts");
		const a = await placeEditor(env, {
			argv: ["alpha-dir/"],
			timestamp: nowSeconds() - 100,
			active_buffer: { file: alpha },
		});
		const b = await placeEditor(env, { argv: ["beta-dir/"], timestamp: nowSeconds(), active_buffer: { file: beta } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, (s) => s === GLYPH_DISCONNECTED);
		assert.deepEqual(await injectedFor(rpc, env, "before picking"), [], "two candidates: no auto-connect");

		const since = rpc.records.length;
		const select = await openPicker(rpc, "ide-1", since);
		const options = select.options ?? [];
		assert.equal(options.length, 2, `two rows, no disconnect row: ${JSON.stringify(options)}`);
		assert.match(options[0] ?? "", /beta/, "most recent first");
		const alphaRow = options.find((o) => /alpha-dir/.test(o) && /alpha\.ts/.test(o));
		assert.ok(alphaRow, JSON.stringify(options));
		rpc.respond(String(select.id), { value: alphaRow });
		await waitForStatus(rpc, isNvimTs, WAIT_MS, since);

		assert.equal(fileLine((await injectedFor(rpc, env, "after picking"))[0] ?? ""), alpha);

		// Beta writes again (most recent, new file); the choice still sticks to alpha, and follows alpha's writes.
		// Alpha is unchanged, so the model, which has alpha's block, gets nothing new (and nothing of beta's).
		switchBuffer(env, b, { file: touch(env.workDir, "beta2.ts") });
		assert.deepEqual(await injectedFor(rpc, env, "still alpha?"), []);
		const alpha2 = touch(env.workDir, "alpha2.ts");
		switchBuffer(env, a, { file: alpha2 });
		assert.equal(fileLine((await injectedFor(rpc, env, "alpha moved"))[0] ?? ""), alpha2);
	});

	test("/ide when connected offers a disconnect row; choosing it stops injection", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		const since = rpc.records.length;
		const select = await openPicker(rpc, "ide-2", since);
		const disconnect = (select.options ?? []).find((o) => /disconnect/i.test(o));
		assert.ok(disconnect, JSON.stringify(select.options));
		rpc.respond(String(select.id), { value: disconnect });
		await waitForStatus(rpc, (s) => s === GLYPH_DISCONNECTED, WAIT_MS, since);
		assert.deepEqual(await injectedFor(rpc, env, "after disconnect"), []);
	});

	test("/ide cancelled: nothing changes", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		const since = rpc.records.length;
		const select = await openPicker(rpc, "ide-3", since);
		rpc.respond(String(select.id), { cancelled: true });
		await rpc.waitFor((r) => r.type === "response" && r.id === "ide-3", WAIT_MS, since);
		assert.equal(fileLine((await injectedFor(rpc, env, "still connected"))[0] ?? ""), file);
	});

	test("/ide off: no block and no auto-connect, even when a new sole candidate appears", async (t) => {
		const env = await envFor(t);
		const first = await placeEditor(env, { active_buffer: { file: touch(env.workDir, "src/main.ts") } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		const since = rpc.records.length;
		await ideCommand(rpc, "off");
		await waitForStatus(rpc, (s) => s === GLYPH_DISCONNECTED, WAIT_MS, since);
		assert.deepEqual(await injectedFor(rpc, env, "after off"), []);
		await first.kill();
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "new.ts") } });
		assert.deepEqual(await injectedFor(rpc, env, "still off"), []);
	});

	test("/ide status: state dir, the editor with its tier, the connection, and what would be injected", async (t) => {
		const env = await envFor(t);
		const editor = await placeEditor(env, {
			active_buffer: { file: touch(env.workDir, "src/main.ts"), selection: makeSelection("x", { ageSeconds: 200 }) },
		});
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		const report = await ideStatus(rpc);
		assert.ok(report.includes(env.stateDir), report);
		assert.ok(report.includes(String(editor.pid)), report);
		assert.match(report, /tier\s*0|tier 0|same (cwd|directory)/i, report);
		assert.match(report, /main\.ts/);
		assert.match(report, /stale|old/i, `says the selection is stale: ${report}`);
		// 200 s plus pi's start on a loaded machine: "3 min" or "4 min" (formatSeconds rounds to minutes from 120 s).
		assert.match(report, /\b[34] min\b/, `and how old: ${report}`);
	});

	test("/ide status explains why nothing is injected: several candidates", async (t) => {
		const env = await envFor(t);
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "a.ts") } });
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "b.ts") } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, (s) => s === GLYPH_DISCONNECTED);
		assert.match(await ideStatus(rpc), /several|two|2 (editors|candidates)|multiple/i);
	});

	test("/ide status reports an insecure state dir", async (t) => {
		const env = await envFor(t);
		await placeEditor(env);
		chmodSync(env.stateDir, 0o755);
		const rpc = await rpcFor(t, env);
		const warning = await rpc.waitFor(
			(r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes(env.stateDir),
		);
		assert.match(String(warning.message), /chmod 700/, "the session warns once, with the fix");
		const report = await ideStatus(rpc);
		assert.match(report, /permission|insecure|group|other|755|chmod/i, report);
		assert.ok(report.includes(env.stateDir), report);
	});

	test("/ide status names the rules file that excludes the active file", async (t) => {
		const env = await envFor(t);
		writeFileSync(join(env.agentDir, "ide-context.ignore"), "secrets/\n");
		await placeEditor(env, { active_buffer: { file: touch(env.workDir, "secrets/key.ts") } });
		const rpc = await rpcFor(t, env);
		await rpc.waitFor(isStatus);
		const report = await ideStatus(rpc);
		assert.ok(report.includes(join(env.agentDir, "ide-context.ignore")), report);
		assert.deepEqual(await injectedFor(rpc, env, "secret?"), []);
	});

	test("ignore rules are re-read on every prompt", async (t) => {
		// A block with every prompt, so the third prompt shows the rules were read again.
		const env = await envFor(t, { settings: { ideContext: { linkNvim: false, sendUnchanged: true } } });
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		assert.equal(fileLine((await injectedFor(rpc, env, "first"))[0] ?? ""), file);
		mkdirSync(join(env.workDir, ".pi"), { recursive: true });
		writeFileSync(join(env.agentDir, "ide-context.ignore"), "src/\n");
		// Excluded now: no block, only the notice that the model's editor context is out of date (never naming it).
		const second = await injectedFor(rpc, env, "second");
		assert.equal(second.length, 1, JSON.stringify(second));
		assert.match(
			second[0] ?? "",
			/^Editor context out of date: the file now active in the editor is one the user excluded/,
		);
		assert.doesNotMatch(second[0] ?? "", /main\.ts/);
		writeFileSync(join(env.agentDir, "ide-context.ignore"), "# nothing\n");
		assert.equal(fileLine((await injectedFor(rpc, env, "third"))[0] ?? ""), file);
	});

	test("a selection entry is recorded only when a fresh selection was injected", async (t) => {
		const env = await envFor(t);
		const file = touch(env.workDir, "src/main.ts");
		const editor = await placeEditor(env, {
			active_buffer: { file, selection: makeSelection("let picked = true;", { startLine: 7, ageSeconds: 1 }) },
		});
		const rpc = await rpcFor(t, env);
		await waitForStatus(rpc, isNvimTs);
		await rpc.prompt("with selection");
		switchBuffer(env, editor, { file });
		await rpc.prompt("without selection");
		const entries = await rpc.command({ type: "get_entries" });
		assert.equal(entries.success, true, JSON.stringify(entries));
		const all = JSON.stringify(entries.data);
		const custom = findEntries(entries.data, "ide-context-selection");
		assert.equal(custom.length, 1, `one selection entry: ${all.slice(0, 2000)}`);
		assert.match(JSON.stringify(custom[0]), /main\.ts/);
		assert.match(JSON.stringify(custom[0]), /"line":7/);
	});
});

/** Custom session entries of `customType` anywhere in a get_entries payload. */
function findEntries(data: unknown, customType: string): unknown[] {
	const found: unknown[] = [];
	const visit = (value: unknown) => {
		if (Array.isArray(value)) value.forEach(visit);
		else if (value && typeof value === "object") {
			const record = value as { type?: unknown; customType?: unknown };
			if (record.type === "custom" && record.customType === customType) found.push(value);
			else Object.values(value).forEach(visit);
		}
	};
	visit(data);
	return found;
}
