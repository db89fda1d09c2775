--- pi-ide.inbox.message: what a pi message (`<state dir>/pi-<pid>.json`, protocol v0.3) must look like. Pure:
--- decoded JSON in, the reason it is refused out.
---@module 'pi-ide.inbox.message'
local M = {}

M.MAX_BYTES = 64 * 1024
M.MAX_CHANGED = 50
M.MAX_LAST_TURN = 50

local function is_integer(v, min)
  return type(v) == "number" and v == math.floor(v) and v >= (min or 0) and v < 2 ^ 53
end

--- Is `msg` (decoded JSON) a well-formed pi message from the file `pi-<name_pid>.json`? Returns the reason
--- when it is not.
---@param msg any
---@param name_pid integer
---@return string|nil problem
function M.validate(msg, name_pid)
  if type(msg) ~= "table" then
    return "not a JSON object"
  end
  if msg.kind ~= "pi" then
    return "kind is not \"pi\""
  end
  if type(msg.protocol) ~= "string" then
    return "no protocol version"
  end
  if msg.pid ~= name_pid then
    -- Its value only when it is a number: a string could be anything (60 KiB, line breaks).
    local value = type(msg.pid) == "number" and tostring(msg.pid) or ("a " .. type(msg.pid))
    return ("pid field %s does not match the file name"):format(value)
  end
  if msg.editor_pid ~= vim.NIL and msg.editor_pid ~= nil and not is_integer(msg.editor_pid, 1) then
    return "editor_pid is not a pid"
  end
  if not is_integer(msg.seq) then
    return "seq is not an integer"
  end
  if type(msg.changed) ~= "table" or #msg.changed > M.MAX_CHANGED then
    return "changed is not a list of at most 50 entries"
  end
  for _, c in ipairs(msg.changed) do
    if type(c) ~= "table" or type(c.file) ~= "string" or c.file:sub(1, 1) ~= "/" or not is_integer(c.seq, 1) then
      return "a changed entry is not {file = absolute path, seq = integer}"
    end
  end
  if msg.last_turn ~= nil and (type(msg.last_turn) ~= "table" or #msg.last_turn > M.MAX_LAST_TURN) then
    return "last_turn is not a list of at most 50 paths"
  end
  for _, f in ipairs(msg.last_turn or {}) do
    if type(f) ~= "string" then
      return "last_turn holds a non-string"
    end
  end
  return nil
end

--- The pid of a pi message file, `pi-<pid>.json`: the state file name rule of pi-ide.writer (canonical
--- decimal, so `pi-042.json` is not pi 42's) behind the prefix. nil for any other name.
---@param name any
---@return integer|nil
function M.pid_of_name(name)
  if type(name) ~= "string" or name:sub(1, 3) ~= "pi-" then
    return nil
  end
  return require("pi-ide.writer").pid_of_name(name:sub(4))
end

return M
