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
