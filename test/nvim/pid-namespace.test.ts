/**
 * Neovim names its pid namespace in its state file (PROTOCOL.md v0.5 `pid_ns`), so a pi in a sandbox knows the
 * editor's pid is not one it can judge (issue 23). The value is the one /proc gives for the Neovim process.
 */
import assert from "node:assert/strict";
import { readlinkSync } from "node:fs";
import { describe, it } from "node:test";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: pid_ns`, () => {
		it("the state file names Neovim's own pid namespace", async (t) => {
			const nv = await startNvim(t, flavour);
			const state = await nv.until((s) => typeof s.pid_ns === "string", "a state file with pid_ns");
			assert.equal(state.pid_ns, readlinkSync(`/proc/${nv.pid}/ns/pid`));
		});
	});
});
