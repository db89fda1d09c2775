/**
 * Prompt writes (visual-mode changes, buffer switches) are coalesced: after a pause the first one goes out at
 * once, and everything a burst asks for meanwhile shares one later write. Counted, not timed: the gap between
 * prompt writes is set to 60 s for the test, so a burst written one-per-toggle would show as extra writes.
 * Once per Neovim in the matrix; the writes/s figure is in bench/nvim.ts.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const TOGGLES = 1000;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: prompt writes are rate-limited`, () => {
		it(`${TOGGLES} visual toggles from separate event-loop turns make one write, the first one at once`, async (t) => {
			const nv = await startNvim(t, flavour);
			writeFileSync(join(nv.tmp, "rate.txt"), "alpha\nbeta\ngamma\n");
			// Debounced writes 60 s away: only prompt writes can happen during the test.
			await nv.lua("require('pi-ide').setup({ debounce_ms = 60000 })");
			await nv.command("edit rate.txt");
			await nv.until((x) => x.active_buffer.name === "rate.txt" && x.active_buffer.selection === null, "rate.txt");
			await nv.lua("require('pi-ide')._set_prompt_gap(60000, true)");
			const before = (await nv.status()).writes;

			// After a pause: written at once, not 60 s later.
			await nv.input("v");
			await nv.until((x) => x.active_buffer.selection !== null, "the first toggle written at once");
			assert.equal((await nv.status()).writes, before + 1);

			// The burst: each toggle is its own request, hence its own event-loop turn.
			for (let i = 0; i < TOGGLES; i++) await nv.input(i % 2 === 0 ? "<Esc>" : "v");
			assert.equal((await nv.status()).writes, before + 1, "no write during the burst");
			const pending = nv.readState();

			// The pending write lands when the gap allows: exactly one, with the final state (in visual mode again).
			await nv.lua("require('pi-ide')._set_prompt_gap(0)");
			const s = await nv.until(
				(x) => x.active_buffer.selection !== null && x.timestamp > (pending?.timestamp ?? 0),
				"the coalesced write",
			);
			assert.ok(s.active_buffer.selection);
			await nv.settle();
			assert.equal((await nv.status()).writes, before + 2, "one write for the whole burst");
			assert.equal((await nv.call<{ mode: string }>("nvim_get_mode")).mode, "v");
		});
	});
});
