/**
 * Issue 26 item 1: a hunk the user reverted with `:PiIde revert` is unsaved text in the buffer (never on disk), so
 * it reaches pi as the unsaved buffer does: real Neovim (0.7.2 and 0.10) reverts pi's hunk from a real change set,
 * and what pi's `read` would return (the editor's `<pid>.buffers.json` through pi's own parser and renderer) holds
 * the reverted line, not pi's version on disk.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { formatUnsavedRead, parseEditorBuffers } from "../../src/context/unsaved-read.ts";
import { editorBuffersFileName } from "../../src/protocol/wire.ts";
import { oneRunReview } from "../fixtures/review-message.ts";
import { killAllEditors, writeRawStateFile } from "../helpers/editors.ts";
import { forEachNvim } from "../helpers/nvim.ts";
import { CONTENT, lines, message, send, world } from "../helpers/nvim-inbox.ts";

after(killAllEditors);

const PI_VERSION = "one\nTWO\nthree\n";

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: a reverted hunk is read as the unsaved buffer`, () => {
		it("`:PiIde revert` puts the baseline back in the buffer; pi's read gets it, the disk keeps pi's", async (t) => {
			const w = await world(t, flavour);
			writeFileSync(w.file, PI_VERSION);
			writeRawStateFile(
				w.nv.stateDir,
				`pi-${w.piPid}.review.json`,
				oneRunReview([{ file: w.file, before: CONTENT, after: PI_VERSION }], {
					pid: w.piPid,
					editorPid: w.nv.pid,
				}).toString(),
			);
			const msg = message(w);
			send(w, msg);
			await w.nv.until((s) => s.pi?.seq === msg["seq"], "pi's message is handled");
			assert.deepEqual(await lines(w.nv), ["one", "TWO", "three"]);
			await w.nv.command("call cursor(2, 1)");
			await w.nv.command("PiIde revert");
			assert.deepEqual(await lines(w.nv), ["one", "two", "three"]);
			assert.equal(readFileSync(w.file, "utf8"), PI_VERSION, "the disk keeps pi's version");
			const tick = await w.nv.lua<number>("return vim.b.changedtick");
			const state = await w.nv.until(
				(s) => s.active_buffer.version === tick && typeof s.buffers_serial === "number",
				"the state naming the unsaved buffer after the revert",
			);
			const text = readFileSync(join(w.nv.stateDir, editorBuffersFileName(w.nv.pid)), "utf8");
			const parsed = parseEditorBuffers(text, w.nv.pid, state.buffers_serial as number);
			assert.ok(parsed.ok, parsed.ok ? "" : parsed.problem);
			const buffer = parsed.buffers.find((b) => b.file === w.file);
			assert.ok(buffer, "a.txt is listed");
			const read = formatUnsavedRead({
				path: w.file,
				editor: "Neovim",
				buffer,
				caps: { maxLines: 2000, maxBytes: 51200 },
			});
			assert.equal(read.kind, "replace");
			assert.match(read.text, /unsaved buffer/);
			assert.match(read.text, /^two$/m);
			assert.doesNotMatch(read.text, /^TWO$/m);
		});
	});
});
