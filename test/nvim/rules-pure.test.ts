/**
 * The Neovim client keeps each feature's rules apart from its UI (issue 27 item 5): `pi-ide.review.rules` and
 * `pi-ide.approval.rules` are pure. Each is loaded, and each of its functions called on a table of cases, with the
 * editor out of reach (vim.api, vim.fn, vim.cmd, the option and variable tables, vim.loop/uv replaced by traps that
 * raise on any use); every call must succeed and return what it returns with the editor in reach. The UI modules
 * (`pi-ide.review`, `pi-ide.approval`) still reach each rule under its old name. Neovim 0.7.2 and 0.10.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { forEachNvim, startNvim } from "../helpers/nvim.ts";

const CALL_ALL = `
local RULES = { "pi-ide.review.rules", "pi-ide.approval.rules" }
-- Modules the rules require that are not rules (loaded beforehand: their loading is not what is checked).
require("pi-ide.inbox.compare")
require("pi-ide.writer")
require("pi-ide.inbox.merge")

local hunk = { id = "h1", old_start = 2, new_start = 2, old_text = { "b" }, new_text = { "B", "B2" } }
local del = { id = "h2", old_start = 3, new_start = 4, old_text = { "c" }, new_text = {} }
local entry = { file = "/a", baseline = "a\\nb\\nc\\nd\\n", hunks = { hunk, del } }
local sets = { [7] = { runs = { { run = 1, files = { entry } } } }, [8] = { runs = { { run = 2, files = {} } } } }
local set_msg = { kind = "pi-review", pid = 7, runs = { { run = 1, files = { entry, { file = "rel", hunks = {} } } } } }
local many = {}
for i = 1, 501 do
  many[i] = hunk
end
local tree = { seq_cur = 3, entries = { { seq = 1 }, { seq = 2, alt = { { seq = 4 } } }, { seq = 3 } } }
local info = { pid = 7, run = 1, file = "/a", hunk = hunk }
local buf_lines = { "a", "b", "d" }
local line = function(n)
  return buf_lines[n]
end
local request = {
  kind = "pi-approval",
  pid = 12,
  editor_pid = 99,
  request = { id = "r1", file = "/a", tool = "edit", timeout_s = 30, expires = 5, hunks = { hunk } },
}
local pending = { [12] = { pi_pid = 12, id = "r1", expires = 5 }, [13] = { pi_pid = 13, id = "r2", expires = 4 } }
local decisions = {}
for i = 1, 20 do
  decisions[i] = { pi_pid = 1, id = tostring(i), decision = "accept" }
end

-- { module, function, case name, function returning the arguments (fresh tables each call) }
local CASES = {
  { 1, "is_line", "a line", function() return 5 end },
  { 1, "is_line", "1.5", function() return 1.5 end },
  { 1, "over_cap", "501 hunks", function() return "hunks", many end },
  { 1, "valid_hunk", "a hunk", function() return hunk end },
  { 1, "valid_hunk", "an empty id", function() return { id = "", old_start = 1, new_start = 1, old_text = {}, new_text = {} } end },
  { 1, "validate", "a change set", function() return vim.deepcopy(set_msg), 7 end },
  { 1, "validate", "another pid", function() return vim.deepcopy(set_msg), 8 end },
  { 1, "validate", "over the cap", function() return { kind = "pi-review", pid = 7, runs = { { run = 1, files = { { file = "/a", hunks = many } } } } }, 7 end },
  { 1, "newest_entry", "its file", function() return sets, "/a" end },
  { 1, "newest_entry", "another file", function() return sets, "/b" end },
  { 1, "newest_run", "two pis", function() return sets end },
  { 1, "quickfix_items", "a run", function() return sets[7].runs[1] end },
  { 1, "marks_source", "an entry", function() return { pid = 7, run = 1, entry = entry } end },
  { 1, "base_lines", "a baseline", function() return { baseline = "x\\ny\\n" } end },
  { 1, "deletion_holds", "holds", function() return 3, line, { "a", "b", "c", "d" }, del, 3 end },
  { 1, "deletion_holds", "moved", function() return 3, line, { "a", "b", "c", "d" }, del, 2 end },
  { 1, "step_applied", "on the path", function() return tree, 2 end },
  { 1, "step_applied", "another branch", function() return tree, 4 end },
  { 1, "step_applied", "not in the history", function() return tree, 9 end },
  { 1, "revert_record", "a hunk", function() return info, 2 end },
  { 1, "add_reverted", "the same key twice", function()
    return { { pi_pid = 7, run = 1, id = "h1", file = "/a", line = 1, lines = 1 } }, { pi_pid = 7, run = 1, id = "h1", file = "/a", line = 2, lines = 2 }
  end },
  { 1, "report", "one undone", function()
    local a, b = { id = "a" }, { id = "b" }
    return { a, b }, { [a] = true }
  end },
  { 2, "pid_of_name", "a name", function() return "pi-12.approval.json" end },
  { 2, "pid_of_name", "a leading zero", function() return "pi-012.approval.json" end },
  { 2, "validate", "a request", function() return vim.deepcopy(request), 12 end },
  { 2, "validate", "another pid", function() return vim.deepcopy(request), 13 end },
  { 2, "target", "the one shown", function() return pending, { pi_pid = 12, id = "r1" } end },
  { 2, "target", "the one shown is gone", function() return pending, { pi_pid = 12, id = "r0" } end },
  { 2, "matches", "its lines", function() return { "a", "b" }, { hunk } end },
  { 2, "matches", "other lines", function() return { "a", "x" }, { hunk } end },
  { 2, "apply", "two hunks", function() return { "a", "b", "c", "d" }, { hunk, { id = "x", old_start = 4, new_start = 4, old_text = { "d" }, new_text = {} } } end },
  { 2, "add_decision", "over the cap", function() return vim.deepcopy(decisions), { pi_pid = 2, id = "new", decision = "reject" } end },
  { 2, "diff_lines", "a request", function() return { file = "/a", note = "big", hunks = { hunk, del } } end },
  { 2, "against", "one hunk placed, one touching the user's line", function()
    return { "a", "b", "c", "d" }, { "u", "a", "b", "C", "d" }, { hunk, { id = "h3", old_start = 3, new_start = 4, old_text = { "c" }, new_text = { "x" } } }
  end },
  { 2, "against", "hunks out of order: nothing placed", function()
    return { "a", "b", "c", "d" }, { "u", "a", "b", "C", "d" }, { { id = "h3", old_start = 3, new_start = 3, old_text = { "c" }, new_text = { "x" } }, hunk }
  end },
  { 2, "touch_phrase", "1 of 2", function() return { { row = 0, rows = 1, touches = false }, { row = 3, rows = 2, touches = true } } end },
}

local PATHS = {}
local function call(poisoned)
  local saved, names = {}, { "api", "fn", "cmd", "bo", "wo", "o", "b", "g", "w", "opt", "loop", "uv", "schedule" }
  if poisoned then
    for _, k in ipairs(names) do
      saved[k] = rawget(vim, k)
      local trap = function()
        error("the editor touched: vim." .. k, 0)
      end
      rawset(vim, k, setmetatable({}, { __index = trap, __newindex = trap, __call = trap }))
    end
  end
  local out = {}
  local ok, err = pcall(function()
    local mods = {}
    -- Each file run as \`require\` would (Neovim's loader asks vim.api where it is: found beforehand), in order, so
    -- that approval's require of review's rules finds them loaded.
    for i, name in ipairs(RULES) do
      mods[i] = assert(loadfile(PATHS[i]))(name)
      package.loaded[name] = mods[i]
    end
    for i, c in ipairs(CASES) do
      local f = mods[c[1]][c[2]]
      if type(f) ~= "function" then
        out[i] = { false, RULES[c[1]] .. "." .. c[2] .. ": not a function" }
      else
        local args = { c[4]() }
        local res = { pcall(f, unpack(args, 1, table.maxn(args))) }
        out[i] = res
      end
    end
  end)
  if poisoned then
    for _, k in ipairs(names) do
      rawset(vim, k, saved[k])
    end
  end
  return ok, err, out
end

local loaded = {}
for i, name in ipairs(RULES) do
  loaded[i] = package.loaded[name]
  PATHS[i] = vim.api.nvim_get_runtime_file("lua/" .. name:gsub("%.", "/") .. ".lua", false)[1]
  if not PATHS[i] then
    return { { name .. ": no such module" }, #CASES }
  end
end
local ok1, err1, plain = call(false)
local ok2, err2, poisoned = call(true)
for i, name in ipairs(RULES) do
  package.loaded[name] = loaded[i]
end
local problems = {}
if not ok1 then problems[#problems + 1] = "loading: " .. tostring(err1) end
if not ok2 then problems[#problems + 1] = "loading without the editor: " .. tostring(err2) end
for i, c in ipairs(CASES) do
  local name = RULES[c[1]] .. "." .. c[2] .. " (" .. c[3] .. ")"
  local a, b = plain[i], poisoned[i]
  if not (a and a[1]) then
    problems[#problems + 1] = name .. ": " .. tostring(a and a[2])
  elseif not (b and b[1]) then
    problems[#problems + 1] = name .. " without the editor: " .. tostring(b and b[2])
  elseif not vim.deep_equal(a, b) then
    problems[#problems + 1] = name .. ": another result without the editor"
  end
end
-- The UI modules still reach each rule under its old name (tests, bench and the other modules use them).
local review, approval = require("pi-ide.review"), require("pi-ide.approval")
local rr, ar = require("pi-ide.review.rules"), require("pi-ide.approval.rules")
local same = {
  { review, rr, { "MAX_BYTES", "MAX_REVERTED", "MAX_RUNS", "MAX_HUNKS", "MAX_LINE", "MAX_ID_BYTES", "is_line",
    "over_cap", "valid_hunk", "validate", "add_reverted" } },
  { approval, ar, { "MAX_BYTES", "MAX_DECISIONS", "MAX_VIRTUAL_LINES", "pid_of_name", "validate", "target",
    "matches", "apply", "diff_lines" } },
}
for _, s in ipairs(same) do
  for _, k in ipairs(s[3]) do
    if s[1][k] == nil or s[1][k] ~= s[2][k] then
      problems[#problems + 1] = "the UI module's " .. k .. " is not its rules'"
    end
  end
end
if review._step_applied ~= rr.step_applied then
  problems[#problems + 1] = "pi-ide.review._step_applied is not its rules' step_applied"
end
return { problems, #CASES }
`;

forEachNvim((flavour) => {
	describe(`the Neovim client's rules apart from its UI (${flavour.name})`, () => {
		it("review and approval rules load and answer every case without the editor, as with it", async (t) => {
			const nv = await startNvim(t, flavour, { ui: false });
			const [problems, cases] = await nv.lua<[string[], number]>(CALL_ALL);
			assert.deepEqual(problems, []);
			assert.equal(cases, 36);
		});
	});
});
