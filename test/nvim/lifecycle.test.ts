/**
 * No litter, and pi finds the editor it runs in: a Neovim without a UI (a script) writes no state file; one
 * that gets a UI later appears when it attaches and goes when the last UI leaves; quitting during startup
 * leaves nothing, and so does Ctrl-C on a headless run; the file goes however Neovim exits (another plugin's failing VimLeavePre, SIGKILL, a GUI
 * closing the --embed channel); processes started in Neovim's terminals get PI_IDE_EDITOR_PID.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { attachUi, forEachNvim, PLUGIN_DIR, pollUntil, startNvim } from "../helpers/nvim.ts";
import { pollFor } from "../helpers/poll.ts";

/** The state dir's entries (none when it does not exist). */
const entries = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir) : []);

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: lifecycle`, { concurrency: 4 }, () => {
		it("`nvim --headless +qa` (a script) leaves no file", async (t) => {
			const nv = await startNvim(t, flavour, {
				rawArgs: ["--headless", "--clean", "-n", "-i", "NONE", "--cmd", `set rtp+=${PLUGIN_DIR}`, "+qa"],
			});
			assert.deepEqual(await nv.exited, { code: 0, signal: null });
			assert.deepEqual(entries(nv.stateDir), []);
		});

		it("Ctrl-C on a headless run (a plugin-manager sync interrupted) leaves no file", async (t) => {
			// A script still running: its timer fires 300 ms in, long after the client's deferred start (and any
			// write it would make) had its turn.
			const nv = await startNvim(t, flavour, {
				rawArgs: [
					...["--headless", "--clean", "-n", "-i", "NONE", "--cmd", `set rtp+=${PLUGIN_DIR}`],
					'+lua vim.defer_fn(function() vim.fn.writefile({}, "timer-fired") end, 300)',
				],
			});
			await pollFor(() => existsSync(join(nv.tmp, "timer-fired")), "the script's timer (it writes in its cwd)");
			assert.deepEqual(entries(nv.stateDir), [], "no file while the script runs");
			nv.proc.kill("SIGINT");
			const exit = await nv.exited;
			assert.ok(exit.code === 130 || exit.signal === "SIGINT", `ended by the interrupt: ${JSON.stringify(exit)}`);
			assert.deepEqual(entries(nv.stateDir), []);
		});

		it("quitting during startup with a UI attached leaves nothing", async (t) => {
			// Without --headless, --embed waits for the UI before it runs the startup commands: +qa then quits
			// while the deferred start of the client is still queued.
			const nv = await startNvim(t, flavour, {
				rawArgs: ["--embed", "--clean", "-n", "-i", "NONE", "--cmd", `set rtp+=${PLUGIN_DIR}`, "+qa"],
				ui: false,
			});
			await nv.call("nvim_ui_attach", 80, 24, { rgb: true, ext_linegrid: true }).catch(() => undefined);
			assert.equal((await nv.exited).code, 0);
			assert.deepEqual(entries(nv.stateDir), []);
		});

		it("a headless Neovim without a UI writes nothing; a UI attaching later makes it appear; the last UI leaving removes it", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			await nv.command("edit notes.txt");
			await nv.input("ihello<Esc>");
			await nv.command("PiIde enable");
			const status = await nv.status();
			assert.equal(status.enabled, true);
			assert.equal(status.writes, 0, "no write without a UI");
			assert.match(await nv.exec("PiIde"), /no UI attached/);
			assert.deepEqual(entries(nv.stateDir), []);
			await attachUi(nv);
			const s = await nv.until((x) => x.active_buffer.name === "notes.txt", "the file once a UI attached");
			assert.equal(s.pid, nv.pid);
			await nv.call("nvim_ui_detach");
			await nv.settle();
			assert.equal(nv.readState(), null, "removed when the last UI left");
			await attachUi(nv);
			await nv.until(() => true, "back when a UI attaches again");
		});

		it("removed on exit even when another plugin's VimLeavePre fails first", async (t) => {
			const nv = await startNvim(t, flavour);
			await nv.until(() => true, "first write");
			// Registered before ours would be, as a plugin loaded earlier: its error ends the VimLeavePre chain.
			await nv.lua(`
				local g = vim.api.nvim_create_augroup("OtherPlugin", {})
				vim.api.nvim_create_autocmd("VimLeavePre", { group = g, callback = function() error("boom") end })
				-- put ours after it: re-create the PiIde group
				require("pi-ide").disable()
				require("pi-ide").enable()
			`);
			await nv.until(() => true, "written again");
			nv.notify("nvim_exec_lua", "vim.cmd('qa!')", []);
			// The error message opens a hit-enter prompt, as it would for the user: press Enter.
			await pollUntil(
				async () => {
					if (nv.proc.exitCode !== null) return true;
					const mode = await nv.call<{ mode: string; blocking: boolean }>("nvim_get_mode").catch(() => null);
					if (mode?.blocking) nv.notify("nvim_input", "<CR>");
					return undefined;
				},
				() => "Neovim to exit",
				10_000,
			);
			await nv.exited;
			await pollUntil(
				() => (entries(nv.stateDir).length === 0 ? true : undefined),
				() => `the state dir to be empty: ${entries(nv.stateDir).join(", ")}`,
			);
		});

		it("removed when Neovim is killed (SIGKILL) and when a GUI closes the --embed channel", async (t) => {
			for (const how of ["SIGKILL", "close"] as const) {
				const nv = await startNvim(t, flavour);
				await nv.until(() => true, "first write");
				assert.ok((await nv.lua<number | null>("return require('pi-ide').status().exit_guard")) !== null);
				if (how === "SIGKILL") nv.proc.kill("SIGKILL");
				else nv.proc.stdin.end();
				await nv.exited;
				await pollUntil(
					() => (entries(nv.stateDir).length === 0 ? true : undefined),
					() => `${how}: the state dir to be empty: ${entries(nv.stateDir).join(", ")}`,
				);
			}
		});

		it("processes started in its terminals get PI_IDE_EDITOR_PID; :PiIde disable takes it back", async (t) => {
			const nv = await startNvim(t, flavour, { env: { PI_IDE_EDITOR_PID: "1" } });
			await nv.until(() => true, "first write");
			assert.equal(
				await nv.call<string>("nvim_call_function", "system", ['printf %s "$PI_IDE_EDITOR_PID"']),
				String(nv.pid),
			);
			await nv.command("PiIde disable");
			assert.equal(await nv.call<string>("nvim_call_function", "system", ['printf %s "$PI_IDE_EDITOR_PID"']), "");
		});
	});
});
