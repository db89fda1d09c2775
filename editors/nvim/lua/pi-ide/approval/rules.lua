--- pi-ide.approval.rules: the pure rules of pi's request for approval (protocol v0.4, `pi-<pid>.approval.json`):
--- its name and validation, which request approve/reject answer, whether the proposed hunks still stand in a
--- text, the text with them applied, the request as a diff, and the `decisions` list's cap. No buffer, extmark or
--- notice here: pi-ide.approval (approval/init.lua) is the UI that uses them.
---@module 'pi-ide.approval.rules'
local review = require("pi-ide.review.rules")

local M = {}

--- PROTOCOL.md "v0.4": the largest request read, the decisions kept for pi, the proposed lines shown inline.
M.MAX_BYTES = 1024 * 1024
M.MAX_DECISIONS = 20
M.MAX_VIRTUAL_LINES = 20

--- `pi-<pid>.approval.json` -> pid, else nil (the same canonical decimal as every state file name).
---@param name string
---@return integer|nil
function M.pid_of_name(name)
  if type(name) ~= "string" then
    return nil
  end
  local digits = name:match("^pi%-(%d+)%.approval%.json$")
  return digits and require("pi-ide.writer").pid_of_name(digits .. ".json") or nil
end

local function is_integer(v, min)
  return type(v) == "number" and v == math.floor(v) and v >= (min or 0) and v < 2 ^ 53
end

--- The request in a decoded approval file from pi `pid`, or nil and why it is refused.
---@param msg any
---@param pid integer
---@return table|nil request
---@return string|nil problem
function M.validate(msg, pid)
  if type(msg) ~= "table" or msg.kind ~= "pi-approval" then
    return nil, "not a pi approval request"
  end
  if msg.pid ~= pid then
    return nil, "its pid is not the one in its name"
  end
  if not is_integer(msg.editor_pid, 1) then
    return nil, "editor_pid is not a pid"
  end
  local r = msg.request
  if type(r) ~= "table" then
    return nil, "request: not an object"
  end
  local max_id = review.MAX_ID_BYTES
  if type(r.id) ~= "string" or #r.id == 0 or #r.id > max_id then
    return nil, ("request.id: not a string of 1 to %d bytes"):format(max_id)
  end
  if type(r.file) ~= "string" or r.file:sub(1, 1) ~= "/" then
    return nil, "request.file: not an absolute path"
  end
  -- expires: a time, finite (1e400 decodes to infinity, which never runs out).
  local finite = type(r.expires) == "number" and r.expires == r.expires and math.abs(r.expires) ~= math.huge
  if type(r.tool) ~= "string" or not is_integer(r.timeout_s, 1) or not finite then
    return nil, "request: tool, timeout_s or expires missing"
  end
  if type(r.hunks) ~= "table" then
    return nil, "request.hunks: not a list"
  end
  if r.note ~= nil and r.note ~= vim.NIL and review.NOTES[r.note] ~= true then
    return nil, "request.note: not binary, too large or unreadable"
  end
  local over = review.over_cap("request.hunks", r.hunks)
  if over then
    return nil, over
  end
  local hunks = {}
  for _, h in ipairs(r.hunks) do
    if review.valid_hunk(h) then
      hunks[#hunks + 1] = h
    end
  end
  return {
    pi_pid = pid,
    editor_pid = msg.editor_pid,
    id = r.id,
    tool = r.tool,
    file = r.file,
    created = r.created == true,
    note = type(r.note) == "string" and r.note or nil,
    hunks = hunks,
    hunks_total = review.is_line(r.hunks_total) and r.hunks_total or #hunks,
    timeout_s = r.timeout_s,
    expires = r.expires,
  }
end

--- The request approve/reject answer, from the requests waiting (pi pid -> request) and the one the user was
--- shown (`shown`: { pi_pid, id } or nil). Returns it, or nil and the request that waits instead (if any): an
--- answer is never given to a request the user was not shown.
---@param pending table
---@param shown table|nil
---@return table|nil answer
---@return table|nil instead
function M.target(pending, shown)
  -- Keyed by pi's identity key (pi-ide.inbox.identity.key); a `shown` without one names a pid of the initial namespace.
  local r = shown and pending[shown.key or require("pi-ide.inbox.identity").key(shown.pi_pid, nil)]
  if r and r.id == shown.id then
    return r, nil
  end
  local first
  for _, p in pairs(pending) do
    if not first or p.expires < first.expires then
      first = p
    end
  end
  return nil, first
end

--- Do the hunks' old lines stand in `lines` where the request says (the buffer is the file pi read)?
---@param lines string[]
---@param hunks table[]
---@return boolean
function M.matches(lines, hunks)
  for _, h in ipairs(hunks) do
    for i, text in ipairs(h.old_text) do
      if lines[h.old_start - 1 + i] ~= text then
        return false
      end
    end
  end
  return true
end

--- `lines` with the hunks applied (bottom up, so earlier line numbers stay right).
---@param lines string[]
---@param hunks table[]
---@return string[]
function M.apply(lines, hunks)
  local out = vim.list_extend({}, lines)
  local sorted = vim.list_extend({}, hunks)
  table.sort(sorted, function(a, b)
    return a.old_start > b.old_start
  end)
  for _, h in ipairs(sorted) do
    local at = h.old_start - 1
    for _ = 1, #h.old_text do
      table.remove(out, at + 1)
    end
    for i, text in ipairs(h.new_text) do
      table.insert(out, at + i, text)
    end
  end
  return out
end

--- Issue 26: the proposal against the user's unsaved buffer. `disk` is the file as it is (what pi proposed from:
--- the hunks' old lines stand there), `ours` the buffer's lines. The user's changes are the line diff disk ->
--- buffer, and pi-ide.inbox.merge.plan (the merge's own rule: placement and "touches") decides. Returns one place per
--- hunk, in order ({ row: 0-based first row in `ours`, rows: how many, touches }): a hunk that touches no change of
--- the user's where the merge would put it (its replaced lines, moved by the user's line-count changes above); one
--- that touches the user's lines on those lines (rows 0: the user deleted them, `row` is where they were). And
--- `ours` with the hunks that touch nothing placed (the proposal as the user would see it).
--- nil when the hunks are not ascending and apart (pi's never overlap; the merge's rule needs them so).
---@param disk string[]
---@param ours string[]
---@param hunks table[]
---@return table[]|nil places
---@return string[]|nil proposed
function M.against(disk, ours, hunks)
  local plan = require("pi-ide.inbox.merge").plan
  -- The plan counts a hunk's lines by `old_lines`: taken from its text, as everything else here takes them.
  local given, at = hunks, 1
  hunks = {}
  for i, h in ipairs(given) do
    if h.old_start < at then
      return nil, nil
    end
    at = h.old_start + #h.old_text
    hunks[i] = { old_start = h.old_start, old_lines = #h.old_text, new_text = h.new_text }
  end
  local all = plan(disk, ours, hunks)
  local places = {}
  if all.conflicts_total == 0 then
    for i, ed in ipairs(all.edits) do
      places[i] = { row = ed.from, rows = ed.to - ed.from, touches = false }
    end
  else
    -- Each hunk alone: its place depends on the user's changes only, and a conflict is then named in `ours`'
    -- rows (the plan names the merged buffer's, moved by pi's hunks above it).
    for i, h in ipairs(hunks) do
      local one = plan(disk, ours, { h })
      local ed, c = one.edits[1], one.conflicts[1]
      places[i] = ed and { row = ed.from, rows = ed.to - ed.from, touches = false }
        or { row = c.line - 1, rows = c.lines, touches = true }
    end
  end
  local proposed = vim.list_extend({}, ours)
  for i = #all.edits, 1, -1 do
    local ed = all.edits[i]
    for _ = ed.from + 1, ed.to do
      table.remove(proposed, ed.from + 1)
    end
    for j, line in ipairs(ed.lines) do
      table.insert(proposed, ed.from + j, line)
    end
  end
  return places, proposed
end

--- Issue 26: the one line naming the user's unsaved lines the proposal touches (`places` from M.against), or nil
--- when it touches none; and a short form for a narrow message area.
---@param places table[]
---@return string|nil long
---@return string|nil short
function M.touch_phrase(places)
  -- The touched spans in order (0-based half-open rows), those that overlap or meet joined: one place named once.
  local spans, n = {}, 0
  for _, p in ipairs(places) do
    if p.touches then
      n = n + 1
      local last = spans[#spans]
      local to = p.row + math.max(p.rows, 1) -- where the user deleted: the row the place stands on
      if last and p.row <= last.to then
        last.to = math.max(last.to, to)
      else
        spans[#spans + 1] = { from = p.row, to = to }
      end
    end
  end
  if n == 0 then
    return nil, nil
  end
  local ranges = {}
  for i, span in ipairs(spans) do
    ranges[i] = span.to == span.from + 1 and tostring(span.to) or ("%d-%d"):format(span.from + 1, span.to)
  end
  local lines = (#ranges == 1 and not ranges[1]:find("-", 1, true)) and "line " or "lines "
  local where = lines .. table.concat(ranges, ", ", 1, math.min(#ranges, 5)) .. (#ranges > 5 and ", …" or "")
  local short = ("%d of %d %s your unsaved %s"):format(
    n,
    #places,
    (#places == 1 and "hunk touches") or (n == 1 and "hunks touches") or "hunks touch",
    where
  )
  return short .. ": if accepted, the file gets pi's text and your buffer keeps yours there", short
end

--- `decisions` (newest last, changed in place) with `decision` added, at most MAX_DECISIONS.
---@param decisions table
---@param decision table { pi_pid, id, decision }
---@return table decisions
function M.add_decision(decisions, decision)
  decisions[#decisions + 1] = decision
  while #decisions > M.MAX_DECISIONS do
    table.remove(decisions, 1)
  end
  return decisions
end

--- The request as a unified diff, for a file that is not open (or no longer holds pi's lines).
---@param r table
---@return string[]
function M.diff_lines(r)
  local out = { "--- " .. r.file, "+++ " .. r.file .. " (pi's proposal)" }
  if r.note then
    out[#out + 1] = ("(no preview: %s)"):format(r.note)
  end
  for _, h in ipairs(r.hunks) do
    out[#out + 1] = ("@@ -%d,%d +%d,%d @@"):format(h.old_start, #h.old_text, h.new_start, #h.new_text)
    for _, l in ipairs(h.old_text) do
      out[#out + 1] = "-" .. l
    end
    for _, l in ipairs(h.new_text) do
      out[#out + 1] = "+" .. l
    end
  end
  return out
end

return M
