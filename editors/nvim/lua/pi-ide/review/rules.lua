--- pi-ide.review.rules: the pure rules of pi's change set (protocol v0.4, `pi-<pid>.review.json`): its caps and
--- validation, which hunks are whose (the newest run's entry for a file), where a deletion of pi's still holds,
--- the undo tree's say on a revert, and the revert key of the `reverted` list. No buffer, extmark or command here:
--- pi-ide.review (review/init.lua) is the UI that uses them.
---@module 'pi-ide.review.rules'
local M = {}

--- PROTOCOL.md "v0.4": the largest change set read, the reverts kept for pi.
M.MAX_BYTES = 8 * 1024 * 1024
M.MAX_REVERTED = 50
--- PROTOCOL.md "Limits": the runs of a change set, the hunks of a file (or of an approval request): more is
--- refused whole, by the count, before any work per hunk; and the largest line number or count taken from a hunk.
M.MAX_RUNS = 3
M.MAX_HUNKS = 500
M.MAX_LINE = 2 ^ 31 - 1
--- PROTOCOL.md `hunks[].id` and `request.id`: 1 to this many bytes (Lua's `#` counts bytes).
M.MAX_ID_BYTES = 64

local function is_list(v)
  return type(v) == "table" and (next(v) == nil or v[1] ~= nil)
end

local function is_count(v)
  return type(v) == "number" and v >= 0 and v == math.floor(v) and v < 2 ^ 53
end

--- Is `v` a line number or line count of pi's: an integer 0 to MAX_LINE (1.5, -1, 1e400, 2^53 are none)?
---@param v any
---@return boolean
function M.is_line(v)
  return type(v) == "number" and v >= 0 and v <= M.MAX_LINE and v == math.floor(v)
end

--- Why a list of pi's hunks is over the cap (refused whole), or nil.
---@param what string
---@param hunks table
---@return string|nil
function M.over_cap(what, hunks)
  if #hunks > M.MAX_HUNKS then
    return ("%s: %d, over the cap of %d: refused"):format(what, #hunks, M.MAX_HUNKS)
  end
  return nil
end

local function is_lines(v)
  if not is_list(v) then
    return false
  end
  for _, line in ipairs(v) do
    if type(line) ~= "string" then
      return false
    end
  end
  return true
end

--- Is `h` (decoded JSON) a hunk as pi writes them (v0.4; the approval request's hunks too): its id 1 to
--- MAX_ID_BYTES bytes, `old_start` and `new_start` line numbers from 1 (PROTOCOL.md `hunks[]`)?
---@param h any
---@return boolean
function M.valid_hunk(h)
  return type(h) == "table"
    and type(h.id) == "string"
    and #h.id >= 1
    and #h.id <= M.MAX_ID_BYTES
    and M.is_line(h.old_start)
    and h.old_start >= 1
    and M.is_line(h.new_start)
    and h.new_start >= 1
    and is_lines(h.old_text)
    and is_lines(h.new_text)
end

--- pi's notes on a file entry without hunks (PROTOCOL.md `files[].note`, wire.ts REVIEW_NOTES).
local NOTES = { binary = true, ["too large"] = true, unreadable = true }
M.NOTES = NOTES

--- The runs of a decoded change set from pi `pid`, or nil and why. Hunks that are malformed are dropped.
---@param msg any
---@param pid integer
---@return table|nil runs
---@return string|nil problem
function M.validate(msg, pid)
  if type(msg) ~= "table" or msg.kind ~= "pi-review" then
    return nil, "not a pi change set"
  end
  if msg.pid ~= pid then
    return nil, ("its pid (%s) is not the one in its name"):format(tostring(msg.pid))
  end
  if not is_list(msg.runs) then
    return nil, "runs: not a list"
  end
  -- The caps by the counts alone, before any work per hunk.
  if #msg.runs > M.MAX_RUNS then
    return nil, ("runs: %d, over the cap of %d: refused"):format(#msg.runs, M.MAX_RUNS)
  end
  for _, run in ipairs(msg.runs) do
    for _, f in ipairs(type(run) == "table" and is_list(run.files) and run.files or {}) do
      local over = type(f) == "table" and is_list(f.hunks) and M.over_cap("hunks of a file", f.hunks)
      if over then
        return nil, over
      end
    end
  end
  local runs = {}
  for _, run in ipairs(msg.runs) do
    if type(run) == "table" and is_count(run.run) and is_list(run.files) then
      local files = {}
      for _, f in ipairs(run.files) do
        -- An unknown note makes the entry malformed (PROTOCOL.md `files[].note`): dropped, never shown.
        local note_ok = type(f) == "table" and (f.note == nil or f.note == vim.NIL or NOTES[f.note] == true)
        if note_ok and type(f.file) == "string" and f.file:sub(1, 1) == "/" and is_list(f.hunks) then
          local hunks = {}
          for _, h in ipairs(f.hunks) do
            if M.valid_hunk(h) then
              hunks[#hunks + 1] = h
            end
          end
          local baseline = type(f.baseline) == "string" and f.baseline or nil
          files[#files + 1] = { file = f.file, baseline = baseline, hunks = hunks }
        end
      end
      runs[#runs + 1] = { run = run.run, files = files }
    end
  end
  return runs
end

--- The newest run's entry for `file` among the change sets of all connected pis (`sets`: pi pid -> { runs =
--- validated runs }): { pid, run = run number, entry = the file's entry }, or nil.
---@param sets table
---@param file string
---@return table|nil
function M.newest_entry(sets, file)
  local best
  for pid, set in pairs(sets) do
    for _, run in ipairs(set.runs) do
      for _, f in ipairs(run.files) do
        if f.file == file and (not best or run.run > best.run) then
          best = { pid = set.pid or pid, pi_ns = set.pi_ns, run = run.run, entry = f }
        end
      end
    end
  end
  return best
end

--- The newest run among the change sets of all connected pis: { pid, run = the run }, or nil.
---@param sets table
---@return table|nil
function M.newest_run(sets)
  local newest
  for pid, set in pairs(sets) do
    local run = set.runs[#set.runs]
    if run and (not newest or run.run > newest.run.run) then
      newest = { pid = set.pid or pid, pi_ns = set.pi_ns, run = run }
    end
  end
  return newest
end

--- The quickfix items of a run's hunks (`:PiIde hunks`): every file's, in order.
---@param run table|nil a validated run
---@return table[]
function M.quickfix_items(run)
  local items = {}
  for _, f in ipairs(run and run.files or {}) do
    for _, h in ipairs(f.hunks) do
      local what = ("+%d -%d"):format(#h.new_text, #h.old_text)
      local first = h.new_text[1] or h.old_text[1] or ""
      local text = ("pi %s  %s"):format(what, first)
      items[#items + 1] = { filename = f.file, lnum = math.max(1, h.new_start), text = text }
    end
  end
  return items
end

--- What marks would be placed from (`found`: newest_entry's): pi, run, each hunk's id and place; nil: none.
---@param found table|nil
---@return string|nil
function M.marks_source(found)
  if not found then
    return nil
  end
  local parts = { found.pid, found.pi_ns or "", found.run }
  for _, h in ipairs(found.entry.hunks) do
    parts[#parts + 1] = h.id .. ":" .. h.new_start
  end
  return table.concat(parts, " ")
end

--- The baseline's lines of a change set entry, split once.
---@param entry table
---@return string[]
function M.base_lines(entry)
  if not entry.base_lines then
    entry.base_lines = require("pi-ide.inbox.compare").lines_of(entry.baseline or "", "unix")
  end
  return entry.base_lines
end

--- Whether a text has, around a deletion of pi's, the baseline's lines that were around the deleted ones: a
--- deletion leaves no line of pi's to check, and without this a buffer whose lines moved (unsaved lines added
--- above, not reloaded) would be marked, and reverted, on a wrong line. The text is `count` lines (a buffer's
--- count: one empty line is an empty text, as pi counts lines), `line(n)` its 1-based line n; `follow`: the
--- 1-based line that follows the deletion (the line count + 1 for a deletion at the end).
---@param count integer
---@param line fun(n: integer): string|nil
---@param base string[] the baseline's lines
---@param h table the hunk (old_start, old_text)
---@param follow integer
---@return boolean
function M.deletion_holds(count, line, base, h, follow)
  -- As pi counts lines: an empty buffer has none.
  if count == 1 and line(1) == "" then
    count = 0
  end
  local before, after = h.old_start - 1, h.old_start + #h.old_text
  local before_ok
  if before >= 1 then
    before_ok = follow - 1 >= 1 and follow - 1 <= count and line(follow - 1) == base[before]
  else
    before_ok = follow == 1
  end
  local after_ok
  if after <= #base then
    after_ok = follow <= count and line(follow) == base[after]
  else
    after_ok = follow == count + 1
  end
  return before_ok and after_ok
end

--- Whether undo step `seq` of `tree` (`:help undotree()`) is in the text now: on the path from the first step to
--- the current one (an undone step is past it; one on another branch is not on it), or no longer in the history
--- at all (cut by 'undolevels', or the history was dropped): then nothing can take it back.
---@param tree table
---@param seq integer
---@return boolean
function M.step_applied(tree, seq)
  local function has(entries)
    for _, e in ipairs(entries) do
      if e.seq == seq or (e.alt and has(e.alt)) then
        return true
      end
    end
    return false
  end
  if not has(tree.entries or {}) then
    return true
  end
  -- Each `alt` list is a branch that left the list it is in just before its entry.
  local function walk(entries, seen)
    for _, e in ipairs(entries) do
      if e.alt then
        local found, on = walk(e.alt, seen)
        if found then
          return true, on
        end
      end
      seen = seen or e.seq == seq
      if e.seq == tree.seq_cur then
        return true, seen
      end
    end
    return false, false
  end
  local _, on_path = walk(tree.entries or {}, false)
  return on_path
end

--- The `reverted` entry of a revert of a marked hunk (`info`: pid, run, file, hunk) whose lines started at 1-based
--- `line`.
---@param info table
---@param line integer
---@return table { pi_pid, run, id, file, line, lines }
function M.revert_record(info, line)
  return {
    pi_pid = info.pid,
    pi_ns = info.pi_ns, -- v0.5: as pi's change set said; nil leaves it out
    run = info.run,
    id = info.hunk.id,
    file = info.file,
    line = line,
    lines = #info.hunk.new_text,
  }
end

--- `reverted` (newest last, changed in place) with `record` added, at most MAX_REVERTED. A revert is keyed by
--- `(pi_pid, run, id)` (PROTOCOL.md `hunks[].id`): the same hunk reverted again (after an undo) is one entry, the
--- newest; two that differ in any of the three are two (pi's key and every client's: test/fixtures/revert-key.ts).
---@param reverted table
---@param record table { pi_pid, run, id, file, line, lines }
---@return table reverted
function M.add_reverted(reverted, record)
  for i = #reverted, 1, -1 do
    local r = reverted[i]
    local INITIAL = "pid:[4026531836]" -- pi-ide.inbox.identity.INITIAL: `pi_ns` left out is the initial namespace
    local same_pi = r.pi_pid == record.pi_pid and (r.pi_ns or INITIAL) == (record.pi_ns or INITIAL)
    if same_pi and r.run == record.run and r.id == record.id then
      table.remove(reverted, i)
    end
  end
  reverted[#reverted + 1] = record
  while #reverted > M.MAX_REVERTED do
    table.remove(reverted, 1)
  end
  return reverted
end

--- The state file's `reverted` list (v0.4): copies of the entries of `reverted` not in `undone`, or nil when none.
---@param reverted table
---@param undone table entry -> true
---@return table|nil
function M.report(reverted, undone)
  local out = {}
  for _, r in ipairs(reverted) do
    if not undone[r] then
      out[#out + 1] = vim.deepcopy(r)
    end
  end
  return #out > 0 and out or nil
end

return M
