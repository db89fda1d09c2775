/**
 * The state directory deleted (the README's advice for a stale one), or replaced by a new one made by someone
 * else, while Neovim runs: the client notices, watches the directory that is there now, rewrites its state
 * file at once, answers pi's next message promptly, and :PiIde and :checkhealth tell the truth meanwhile.
 */
import assert from "node:assert/strict";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { after, describe, it } from "node:test";
import { killAllEditors } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { message, send, world } from "../helpers/nvim-inbox.ts";
import { pollFor } from "../helpers/poll.ts";

after(killAllEditors);

const CASES = [
	{ name: "deleted", replace: (dir: string) => rmSync(dir, { recursive: true, force: true }) },
	{
		// Made again by someone else: a new directory put in place in one step (two back-to-back renames), so
		// the client cannot be the one that made it.
		name: "replaced by a new directory (0700)",
		replace: (dir: string) => {
			mkdirSync(`${dir}.new`, { mode: 0o700 });
			// The client may make the directory again between the two renames (it hears the first): then its
			// directory moves aside too and the new one is put in place again, until it is ours.
			for (let attempt = 0; ; attempt++) {
				renameSync(dir, `${dir}.old${attempt}`);
				try {
					renameSync(`${dir}.new`, dir);
					break;
				} catch (error) {
					const code = (error as NodeJS.ErrnoException).code;
					if ((code !== "ENOTEMPTY" && code !== "EEXIST") || attempt >= 20) throw error;
				}
			}
			for (let attempt = 0; attempt <= 20; attempt++) rmSync(`${dir}.old${attempt}`, { recursive: true, force: true });
		},
	},
];

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: the state directory deleted while Neovim runs`, { concurrency: 2 }, () => {
		for (const c of CASES) {
			it(`${c.name}: watched again, the state file rewritten at once, pi's next edit answered`, async (t) => {
				const w = await world(t, flavour);
				c.replace(w.nv.stateDir);
				// No editor event: the client hears the directory go and writes its state file again by itself.
				await pollFor(() => w.nv.readState() !== null, "the state file is back", { timeoutMs: 3000 });
				await pollFor(
					async () => (await w.nv.lua<boolean>("return require('pi-ide.inbox').watching()")) === true,
					"the directory there now is watched",
				);
				writeFileSync(w.file, "pi's version\n");
				const msg = message(w);
				send(w, msg);
				const state = await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's next message is answered", 3000);
				assert.equal(state.files?.find((f) => f.file === w.file)?.status, "reloaded");
				assert.doesNotMatch(await w.nv.exec("PiIde"), /not watching/);
			});
		}

		it(":PiIde says so while the watched directory is not the one at the path", async (t) => {
			const w = await world(t, flavour);
			// Keep the client from starting over, to see what :PiIde says in between.
			await w.nv.lua("require('pi-ide.inbox').check_dir = function() end");
			rmSync(w.nv.stateDir, { recursive: true, force: true });
			await pollFor(async () => /not watching .* for pi's messages/.test(await w.nv.exec("PiIde")), ":PiIde says so");
		});
	});
});
