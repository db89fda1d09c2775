/**
 * The zero-config path for real: a throwaway HOME, `pi install <repo>`, one pi start (print mode, fake model),
 * then a plain Neovim (started as a GUI starts it: `--embed`, a UI attaches) with no config and no plugin manager writes its state file, because pi linked
 * the client into `$XDG_DATA_HOME/nvim/site/pack/pi-ide-context/start/`. Once per Neovim in the matrix.
 */
import assert from "node:assert/strict";
import { lstatSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, PLUGIN_DIR, startNvim } from "../helpers/nvim.ts";
import { REPO, runPi, runPrint } from "../helpers/pi-env.ts";
import { envFor, PROMPT, touch } from "../helpers/scenario.ts";

forEachNvim((flavour) => {
	describe(`zero-config Neovim ${flavour.name}`, () => {
		it("pi install + one pi start, then a plain Neovim (no config) writes its state file once a UI attaches", async (t) => {
			const env = await envFor(t);
			const install = await runPi(env, ["install", REPO]);
			assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
			const run = await runPrint(env, [PROMPT], [], { extension: null });
			assert.equal(run.code, 0, run.stderr);

			const dataHome = env.env["XDG_DATA_HOME"] as string;
			const link = join(dataHome, "nvim/site/pack/pi-ide-context/start/pi-ide");
			assert.ok(lstatSync(link).isSymbolicLink(), `${link} is a link`);
			assert.equal(realpathSync(link), realpathSync(PLUGIN_DIR));

			const file = touch(env.workDir, "notes.md", "# notes\n");
			const nv = await startNvim(t, flavour, {
				// A GUI's way of starting Neovim: --embed, then a UI attaches (the helper does it).
				rawArgs: ["--embed", "--headless", "notes.md"],
				cwd: env.workDir,
				runtimeDir: env.runtimeDir,
				// The throwaway HOME and XDG dirs: no init.lua, no plugin manager, only what pi linked.
				env: { ...env.env, PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
			});
			const s = await nv.until((x) => x.active_buffer.file === file, "the state file of a zero-config Neovim", 10_000);
			assert.equal(s.pid, nv.pid);
			assert.equal(s.app, "nvim");
			assert.equal(s.cwd, env.workDir);
			assert.deepEqual(s.argv, ["notes.md"], "--embed and --headless are plumbing, the file is what the user typed");
			assert.equal(s.active_buffer.language, "markdown");
			nv.proc.kill("SIGTERM");
			await nv.exited;
			assert.equal(nv.readState(), null, "removed on exit");
		});
	});
});
