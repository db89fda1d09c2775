/**
 * The Neovim client's writer (editors/nvim/lua/pi-ide/writer.lua) against the same table of state dir
 * cases as src/protocol/state-dir.ts (test/fixtures/state-dir-cases.ts, run in test/unit/protocol/state-dir.test.ts), in a
 * real Neovim per version: the Lua and TypeScript rules cannot drift apart unnoticed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
	CONTENT,
	expectedFor,
	observeCase,
	PID,
	type Problem,
	prepareCase,
	removeCase,
	STATE_DIR_CASES,
} from "../fixtures/state-dir-cases.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

/** One operation of the table, the way the Neovim client does it; returns the problem name or "". */
const RUN_CASE = `
local op, dir, pid, content, uid = ...
local w = require("pi-ide.writer")
local ok, err, kind, insecure
if op == "check" then
  ok, err, kind = w.check(dir, uid)
elseif op == "create" then
  ok, err, insecure, kind = w.ensure_dir(dir, uid)
elseif op == "write" then
  ok, err, insecure, kind = w.ensure_dir(dir, uid)
  if ok then ok, err, kind = w.write(dir, pid, content, uid) end
elseif op == "remove" then
  ok, err, kind = w.remove(dir, pid, uid)
end
if ok then return "" end
assert(type(err) == "string" and err ~= "", "a failure comes with a message")
return kind or "(no problem name)"
`;

forEachNvim((flavour) => {
	describe(`nvim ${flavour.name}: writer.lua against the state dir table`, { concurrency: 4 }, () => {
		for (const c of STATE_DIR_CASES) {
			it(`${c.op}: ${c.name}`, async (t) => {
				const nv = await startNvim(t, flavour, { preCmds: ["let g:pi_ide_disable = 1"] });
				const prepared = prepareCase(c);
				try {
					const kind = await nv.lua<string>(RUN_CASE, c.op, prepared.dir, PID, CONTENT, prepared.uid);
					const problem = kind === "" ? null : (kind as Problem);
					assert.deepEqual(observeCase(c, prepared, problem), expectedFor(c));
				} finally {
					removeCase(prepared);
				}
			});
		}
	});
});
