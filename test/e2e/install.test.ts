/**
 * Installing the package the two ways users do, then running pi WITHOUT `-e`: the extension must load from
 * the install and the model must receive the block. `pi install <local clone path>` records the path of a
 * fresh `git clone` (HEAD: what a user gets) with its runtime dependencies installed (`npm ci --omit=dev`; pi
 * never runs npm for a local path); `pi install npm:pi-ide-context@file:<tarball>` runs npm on a tarball made
 * by `npm pack` from the working tree.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { killAllEditors } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { freePort } from "../helpers/net.ts";
import { npmEnv } from "../helpers/npm.ts";
import { MODEL_ARG, type PiEnv, piArgs, REPO, runPi, runPrint, WAIT_MS } from "../helpers/pi-env.ts";
import { envFor, fileLine, PROMPT, placeEditor, touch } from "../helpers/scenario.ts";
import { startTui } from "../helpers/tmux.ts";

const run = promisify(execFile);

async function assertBlockWithoutDashE(env: PiEnv): Promise<void> {
	const file = touch(env.workDir, "src/main.ts");
	await placeEditor(env, { active_buffer: { file } });
	const result = await runPrint(env, [PROMPT], [], { extension: null });
	assert.equal(result.code, 0, result.stderr);
	const injected = injectedAfter(env.model.requests.at(-1), PROMPT);
	assert.equal(
		injected.length,
		1,
		`exactly one block (the extension loaded once): ${JSON.stringify(injected)}\n${result.stderr}`,
	);
	assert.equal(fileLine(injected[0] ?? ""), file);
	// An installed package should load cleanly: pi prints manifest problems as warnings on every start.
	assert.doesNotMatch(result.stderr, /warning|error/i, "pi loads the installed package without warnings");
}

/**
 * The extensions pi's TUI lists at startup (its "[Extensions]" section, shown with quietStartup off), as the
 * pane's text from that heading to the next blank line.
 */
async function listedExtensions(env: PiEnv): Promise<string> {
	const settingsPath = join(env.agentDir, "settings.json");
	const settings: unknown = JSON.parse(readFileSync(settingsPath, "utf8"));
	writeFileSync(settingsPath, JSON.stringify({ ...(settings as object), quietStartup: false }));
	const tui = await startTui(env, { args: piArgs(null, ["--no-session"]) });
	try {
		const pane = await tui.waitFor(/\[Extensions\]\s*\n\s*\S/);
		return (/\[Extensions\][^\n]*\n((?:[^\n]*\S[^\n]*\n?)+)/.exec(pane)?.[1] ?? pane).trim();
	} finally {
		await tui.close();
	}
}

describe("install", { concurrency: 2 }, () => {
	let packDir = "";
	let tarball = "";
	let clone = "";

	before(async () => {
		packDir = mkdtempSync(join(tmpdir(), "pi-ide-pack-"));
		clone = join(packDir, "pi-ide-context");
		await run("git", ["clone", "--quiet", REPO, clone]);
		await run("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund"], {
			cwd: clone,
			env: { ...process.env, ...npmEnv() },
		});
		const { stdout } = await run("npm", ["pack", "--silent", "--pack-destination", packDir], {
			cwd: REPO,
			env: { ...process.env, ...npmEnv() },
		});
		const name = stdout.trim().split("\n").at(-1) ?? "";
		tarball = join(packDir, name);
		assert.ok(existsSync(tarball), `npm pack wrote ${tarball}: ${readdirSync(packDir).join(", ")}`);
	});
	after(async () => {
		await killAllEditors();
		rmSync(packDir, { recursive: true, force: true });
	});

	test("pi install <local clone path>: the extension loads and the model receives the block", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", clone]);
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const list = await runPi(env, ["list"]);
		assert.match(list.stdout, /pi-ide-context/, list.stdout);
		await assertBlockWithoutDashE(env);
	});

	test('pi lists a local install under the clone\'s name, not "src"', async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", clone]);
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const listed = await listedExtensions(env);
		assert.match(listed, /\bpi-ide-context\b/);
		assert.doesNotMatch(listed, /\bsrc\b/);
	});

	test("the README's command runs pi in your own project with the clone's pinned Node, whatever node is on PATH", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", clone]);
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		// The test's clone has no dev dependencies (pi install never runs npm for a path); this repository's
		// node_modules is what `npm ci` makes in a clone. The PATH is the system's only: no pinned Node on it.
		const bin = join(REPO, "node_modules/.bin");
		const piRun = run(
			join(bin, "node"),
			[join(bin, "pi"), "-p", "--offline", "--no-session", "--model", MODEL_ARG, PROMPT],
			{
				cwd: env.workDir,
				env: { ...env.env, PATH: "/usr/local/bin:/usr/bin:/bin" },
				timeout: 2 * WAIT_MS,
			},
		);
		// As from a terminal: nothing piped in (pi -p reads a piped stdin to its end).
		piRun.child.stdin?.end();
		const { stdout } = await piRun;
		assert.equal(stdout.trim(), "FAKE-REPLY-OK");
		const injected = injectedAfter(env.model.requests.at(-1), PROMPT);
		assert.equal(injected.length, 1, JSON.stringify(injected));
		assert.equal(fileLine(injected[0] ?? ""), file);
	});

	test("pi lists an npm install as pi-ide-context", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", `npm:pi-ide-context@file:${tarball}`], {
			env: npmEnv(),
			timeoutMs: 120_000,
		});
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const listed = await listedExtensions(env);
		assert.match(listed, /\bpi-ide-context\b/);
		assert.doesNotMatch(listed, /\bsrc\b/);
	});

	test("pi install npm:pi-ide-context@file:<packed tarball>: the extension loads and the model receives the block", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", `npm:pi-ide-context@file:${tarball}`], {
			env: npmEnv(),
			timeoutMs: 120_000,
		});
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
		const installed = join(env.agentDir, "npm/node_modules/pi-ide-context");
		assert.ok(existsSync(join(installed, "index.ts")), "the package's entry is in the tarball");
		assert.ok(existsSync(join(installed, "src/index.ts")), "the package's src/ is in the tarball");
		for (const dep of ["chokidar", "ignore"]) {
			assert.ok(existsSync(join(env.agentDir, "npm/node_modules", dep)), `runtime dependency ${dep} installed`);
		}
		await assertBlockWithoutDashE(env);
	});

	test("pi install npm:... with an unreachable registry fails at once and shows npm's reason", async (t) => {
		const env = await envFor(t);
		const install = await runPi(env, ["install", "npm:pi-ide-context-not-published@1.0.0"], {
			env: {
				...npmEnv(),
				npm_config_registry: `http://127.0.0.1:${await freePort()}/`,
				npm_config_cache: join(env.root, "empty-npm-cache"),
			},
			// npm's default retries (two, 10-60 s apart) would not end within this deadline.
			timeoutMs: WAIT_MS,
		});
		assert.notEqual(install.code, 0, `${install.stdout}\n${install.stderr}`);
		assert.match(`${install.stdout}\n${install.stderr}`, /ECONNREFUSED/);
	});
});
