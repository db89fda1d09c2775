/**
 * The release path as documented (DEVELOPING.md, "Releasing"): `npm run release` builds every artifact at
 * package.json's version; the pi package it made is published to a registry on 127.0.0.1 (verdaccio, from npm,
 * installed by scripts/setup-test-env.sh into test/registry/) and installed by a new user with
 * `pi install npm:pi-ide-context`; the model then receives the editor's block.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { killAllEditors } from "../helpers/editors.ts";
import { injectedAfter } from "../helpers/fake-llm.ts";
import { freePort } from "../helpers/net.ts";
import { npmEnv } from "../helpers/npm.ts";
import { REPO, runPi, runPrint } from "../helpers/pi-env.ts";
import { pollFor } from "../helpers/poll.ts";
import { envFor, fileLine, PROMPT, placeEditor, touch } from "../helpers/scenario.ts";

const run = promisify(execFile);
const VERSION: string = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
const VERDACCIO = join(REPO, "test/registry/node_modules/verdaccio/bin/verdaccio");
const TARBALL = `pi-ide-context-${VERSION}.tgz`;

/** One file's text from inside a zip (`unzip -p`). */
async function fromZip(zip: string, path: string): Promise<string> {
	const { stdout } = await run("unzip", ["-p", zip, path], { encoding: "buffer", maxBuffer: 64 << 20 });
	return stdout.toString("utf8");
}

async function fromTar(tar: string, path: string): Promise<string> {
	return (await run("tar", ["-xOf", tar, path], { maxBuffer: 64 << 20 })).stdout;
}

async function tarList(tar: string): Promise<string[]> {
	return (await run("tar", ["-tf", tar], { maxBuffer: 64 << 20 })).stdout.trim().split("\n");
}

describe("release", () => {
	let out = "";
	before(async () => {
		out = mkdtempSync(join(tmpdir(), "pi-ide-release-"));
		// As documented: `npm run release`, here into a directory of the test's own.
		await run("npm", ["run", "--silent", "release"], {
			cwd: REPO,
			env: { ...process.env, PI_IDE_RELEASE_OUT: out },
			maxBuffer: 16 << 20,
			timeout: 10 * 60_000,
		});
	});
	after(async () => {
		await killAllEditors();
		rmSync(out, { recursive: true, force: true });
	});

	test("npm run release builds every artifact, each reporting package.json's version", async () => {
		assert.deepEqual(readdirSync(out).sort(), [
			`pi-ide-${VERSION}.tar`,
			TARBALL,
			`pi-ide-context-${VERSION}.vsix`,
			`pi-ide-context-jetbrains-${VERSION}.zip`,
			`pi-ide-context-obsidian-${VERSION}`,
		]);
		const versions: Record<string, string | undefined> = {
			"pi package": JSON.parse(await fromTar(join(out, TARBALL), "package/package.json")).version,
			"VS Code extension": JSON.parse(
				await fromZip(join(out, `pi-ide-context-${VERSION}.vsix`), "extension/package.json"),
			).version,
			"Obsidian plugin": JSON.parse(readFileSync(join(out, `pi-ide-context-obsidian-${VERSION}/manifest.json`), "utf8"))
				.version,
			"Emacs package": /\(define-package\s+"pi-ide"\s+"([^"]+)"/.exec(
				await fromTar(join(out, `pi-ide-${VERSION}.tar`), `pi-ide-${VERSION}/pi-ide-pkg.el`),
			)?.[1],
		};
		// The JetBrains plugin's version is in plugin.xml, inside the jar inside the zip.
		const jarDir = mkdtempSync(join(tmpdir(), "pi-ide-release-jar-"));
		try {
			await run("unzip", ["-q", join(out, `pi-ide-context-jetbrains-${VERSION}.zip`), "-d", jarDir]);
			const pluginXml = await fromZip(join(jarDir, "pi-ide-context/lib/pi-ide-context.jar"), "META-INF/plugin.xml");
			versions["JetBrains plugin"] = /<version>([^<]+)<\/version>/.exec(pluginXml)?.[1];
		} finally {
			rmSync(jarDir, { recursive: true, force: true });
		}
		for (const [artifact, version] of Object.entries(versions)) assert.equal(version, VERSION, artifact);
		assert.ok(statSync(join(out, `pi-ide-context-obsidian-${VERSION}/main.js`)).size > 0, "Obsidian's main.js");
	});

	test("the pi package ships the extension and the Neovim, Vim and Emacs clients, no tests, bench or caches, under 5 MB", async () => {
		const tarball = join(out, TARBALL);
		assert.ok(statSync(tarball).size < 5 * 1024 * 1024, `${statSync(tarball).size} bytes`);
		const files = await tarList(tarball);
		for (const shipped of [
			"package/index.ts",
			"package/src/index.ts",
			"package/editors/nvim/plugin/pi-ide.lua",
			"package/editors/vim/plugin/pi-ide.vim",
			"package/editors/emacs/pi-ide.el",
			"package/PROTOCOL.md",
			"package/CHANGELOG.md",
		]) {
			assert.ok(files.includes(shipped), `${shipped} in the tarball`);
		}
		const unwanted = files.filter((f) => /^package\/(test|bench|\.cache|dist|node_modules|scripts)\//.test(f));
		assert.deepEqual(unwanted, []);
	});

	test("the Emacs package is a package.el tar: one pi-ide-<version>/ folder with its -pkg.el", async () => {
		const files = await tarList(join(out, `pi-ide-${VERSION}.tar`));
		assert.ok(files.includes(`pi-ide-${VERSION}/pi-ide-pkg.el`));
		assert.ok(files.includes(`pi-ide-${VERSION}/pi-ide.el`));
		assert.deepEqual(
			files.filter((f) => !f.startsWith(`pi-ide-${VERSION}/`)),
			[],
		);
	});

	test("bash editors/jetbrains/build.sh works as documented with the system PATH (Debian's Node first, not the pinned one)", async (t) => {
		const build = mkdtempSync(join(tmpdir(), "pi-ide-jetbrains-build-"));
		t.after(() => rmSync(build, { recursive: true, force: true }));
		await run("bash", ["editors/jetbrains/build.sh"], {
			cwd: REPO,
			env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: process.env["HOME"] ?? "/root", PI_IDE_JETBRAINS_OUT: build },
			maxBuffer: 16 << 20,
		});
		assert.ok(statSync(join(build, "pi-ide-context-jetbrains.zip")).size > 0);
	});

	test("published to a registry on 127.0.0.1, `pi install npm:pi-ide-context` by a new user gives the model the block", async (t) => {
		assert.ok(existsSync(VERDACCIO), "verdaccio is installed by scripts/setup-test-env.sh (npm test runs it)");
		const dir = mkdtempSync(join(tmpdir(), "pi-ide-registry-"));
		t.after(() => rmSync(dir, { recursive: true, force: true }));
		const port = await freePort();
		const registry = `http://127.0.0.1:${port}/`;
		const { stdout: upstream } = await run("npm", ["config", "get", "registry"]);
		writeFileSync(
			join(dir, "config.yaml"),
			[
				`storage: ${join(dir, "storage")}`,
				"auth:",
				"  htpasswd:",
				`    file: ${join(dir, "htpasswd")}`,
				"uplinks:",
				"  upstream:",
				`    url: ${upstream.trim()}`,
				"packages:",
				"  'pi-ide-context':",
				"    access: $all",
				"    publish: $authenticated",
				"  '**':",
				"    access: $all",
				"    proxy: upstream",
				"web:",
				"  enable: false",
				"log: { type: stdout, format: pretty, level: warn }",
				"",
			].join("\n"),
		);
		const server: ChildProcess = spawn(
			process.execPath,
			[VERDACCIO, "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
			{ stdio: ["ignore", "pipe", "pipe"] },
		);
		let serverLog = "";
		server.stdout?.on("data", (d: Buffer) => (serverLog += d.toString()));
		server.stderr?.on("data", (d: Buffer) => (serverLog += d.toString()));
		t.after(() => server.kill("SIGKILL"));
		await pollFor(
			async () => (await fetch(`${registry}-/ping`).catch(() => undefined))?.ok === true,
			() => `verdaccio answering on ${registry}: ${serverLog}`,
			{ timeoutMs: 60_000, intervalMs: 100 },
		);

		// A publisher's account and token (npm adduser's request), then npm publish of the released tarball.
		const login = await fetch(`${registry}-/user/org.couchdb.user:releaser`, {
			method: "PUT",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ name: "releaser", password: "release-test-password" }),
		});
		const { token } = (await login.json()) as { token?: string };
		assert.ok(token, `a token from the registry (${login.status})`);
		const npmrc = join(dir, "publisher.npmrc");
		writeFileSync(npmrc, `//127.0.0.1:${port}/:_authToken=${token}\n`);
		await run("npm", ["publish", join(out, TARBALL), "--registry", registry, "--userconfig", npmrc], {
			env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false" },
		});
		const published = (await (await fetch(`${registry}pi-ide-context`)).json()) as {
			"dist-tags"?: { latest?: string };
		};
		assert.equal(published["dist-tags"]?.latest, VERSION);

		// A new user: a fresh HOME and agent dir, npm pointed at the registry, the machine's npm cache reused.
		const env = await envFor(t);
		const install = await runPi(env, ["install", "npm:pi-ide-context"], {
			env: { ...npmEnv(), npm_config_registry: registry },
			timeoutMs: 180_000,
		});
		assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}\n${serverLog}`);
		const installed = JSON.parse(
			readFileSync(join(env.agentDir, "npm/node_modules/pi-ide-context/package.json"), "utf8"),
		) as { version: string };
		assert.equal(installed.version, VERSION);

		const file = touch(env.workDir, "src/main.ts");
		await placeEditor(env, { active_buffer: { file } });
		const result = await runPrint(env, [PROMPT], [], { extension: null });
		assert.equal(result.code, 0, result.stderr);
		const injected = injectedAfter(env.model.requests.at(-1), PROMPT);
		assert.equal(injected.length, 1, JSON.stringify(injected));
		assert.equal(fileLine(injected[0] ?? ""), file);
	});
});
