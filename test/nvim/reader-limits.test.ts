/**
 * The reader rules of PROTOCOL.md "Limits" (test/fixtures/reader-limits.ts: nesting, caps, line numbers) in the
 * Neovim client: each row written as pi's file and read through its one reader (pi-ide.inbox.read.read_json:
 * the nesting scan, then vim.json.decode) and its validators of a message, a change set and a request; a change set
 * it takes is then loaded and listed as `:PiIde hunks` lists it (a line of 1e400 decoded to infinity and raised
 * E805 there). Neovim 0.7.2 and 0.10.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { MAX_PI_FILE_DEPTH } from "../../src/protocol/limits.ts";
import { PI_PID, READER_CASES, randomNestedTexts, verdictHolds } from "../fixtures/reader-limits.ts";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const READ_ALL = `
local dir, pid, cases = ...
local read = require("pi-ide.inbox.read")
local review = require("pi-ide.review")
local approval = require("pi-ide.approval")
local message = require("pi-ide.inbox.message")
local names = { message = "pi-%d.json", review = "pi-%d.review.json", approval = "pi-%d.approval.json" }
local caps = { message = message.MAX_BYTES, review = review.MAX_BYTES, approval = approval.MAX_BYTES }
local out = {}
for i, c in ipairs(cases) do
  local kind, text = c[1], c[2]
  local path = dir .. "/" .. names[kind]:format(pid)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  vim.loop.fs_chmod(path, 384)
  local ok, msg = read.read_json(path, caps[kind])
  local why, kept = nil, 0
  if not ok then
    why = msg or "gone"
  elseif kind == "message" then
    why = message.validate(msg, pid)
  elseif kind == "review" then
    local runs
    runs, why = review.validate(msg, pid)
    for _, run in ipairs(runs or {}) do
      for _, file in ipairs(run.files) do
        kept = kept + #file.hunks
      end
    end
    if not why then
      local loaded, err = pcall(review.load, dir, pid)
      local listed, err2 = pcall(review.to_quickfix)
      if not (loaded and listed) then
        why = "raised: " .. tostring(err) .. " " .. tostring(err2)
      end
      review.forget(pid)
    end
  else
    local request
    request, why = approval.validate(msg, pid)
    kept = request and #request.hunks or 0
  end
  os.remove(path)
  out[i] = { why or "", kept }
end
return out
`;

forEachNvim((flavour) => {
	describe(`Neovim readers of pi's files: nesting, caps and line numbers (${flavour.name})`, () => {
		it("too deep refused before decoding, lists over a cap by their count, bad lines dropped, no error", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const dir = join(nv.tmp, "pi-files");
			mkdirSync(dir, { mode: 0o700 });
			const out = await nv.lua<[string, number][]>(
				READ_ALL,
				dir,
				PI_PID,
				READER_CASES.map((c) => [c.kind, c.text]),
			);
			// Every row's verdict, so one run names every row that fails.
			const wrong = READER_CASES.flatMap((c, i) => {
				const [why, kept] = out[i] ?? ["missing", -1];
				return verdictHolds(c, why, kept) ? [] : [`${c.name}: ${why || `kept ${kept}`}`];
			});
			assert.deepEqual(wrong, []);
		});

		it("too_deep refuses exactly the seeded random texts nested deeper than the limit (PI_IDE_SEED)", async (t) => {
			const seed = Number(process.env["PI_IDE_SEED"] ?? 2026);
			const texts = randomNestedTexts(seed, 300);
			const nv = await startNvim(t, flavour, { ui: false });
			const whys = await nv.lua<(string | null)[]>(
				`local out = {}
				for i, text in ipairs(...) do out[i] = require("pi-ide.inbox.read").too_deep(text) or vim.NIL end
				return out`,
				texts.map((x) => x.text),
			);
			const wrong = texts.flatMap(({ text, depth }, i) => {
				const why = whys[i] ?? "";
				const right = depth > MAX_PI_FILE_DEPTH ? /nested deeper than/.test(why) : why === "";
				return right ? [] : [`seed ${seed} #${i} (depth ${depth}): ${why || "taken"}: ${text.slice(0, 200)}`];
			});
			assert.deepEqual(wrong, []);
		});
	});
});
