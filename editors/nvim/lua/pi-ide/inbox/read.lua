--- pi-ide.inbox.read: reading a pi message file out of the state directory, under the rules pi applies to
--- ours: a regular file (never a symlink), ours, not group/other-accessible, at most MAX_BYTES.
---@module 'pi-ide.inbox.read'
local compat = require("pi-ide.compat")
local uv = compat.uv
local MESSAGE_MAX_BYTES = require("pi-ide.inbox.message").MAX_BYTES

local M = {}

--- For tests: called between the checks on the path and its open, to swap the file deterministically.
---@type fun(path: string)|nil
M._between_check_and_open = nil

--- Read `path` only if it is a regular file (not a symlink, and the opened file is the one lstat saw), ours,
--- not group/other-accessible, and at most `max_bytes` (default: a pi message's MAX_BYTES). Returns text, or
--- nil and why (nil, nil when it is simply gone).
---@param path string
---@param max_bytes integer|nil
---@return string|nil text
---@return string|nil problem
function M.read_file(path, max_bytes)
  local MAX_BYTES = max_bytes or MESSAGE_MAX_BYTES
  local st = uv.fs_lstat(path)
  if not st then
    return nil, nil
  end
  if st.type ~= "file" then
    return nil, ("is a %s, not a regular file"):format(tostring(st.type))
  end
  if st.uid ~= uv.getuid() then
    return nil, ("belongs to uid %d, not to you"):format(st.uid)
  end
  if st.mode % 64 ~= 0 then
    return nil, ("has group/other permissions (%03o)"):format(st.mode % 512)
  end
  if st.size > MAX_BYTES then
    return nil, ("is %d bytes, over the %d-byte limit"):format(st.size, MAX_BYTES)
  end
  if M._between_check_and_open then
    M._between_check_and_open(path)
  end
  -- What lstat saw may be gone by now: the open must neither block (a FIFO) nor follow (a symlink).
  local fd, _, code = uv.fs_open(path, compat.open_flags_untrusted(), 0)
  if not fd then
    return nil, code == "ELOOP" and "is a symbolic link, not a regular file" or nil
  end
  local fst = uv.fs_fstat(fd)
  local text
  if fst and fst.ino == st.ino and fst.dev == st.dev and fst.type == "file" and fst.size <= MAX_BYTES then
    text = uv.fs_read(fd, MAX_BYTES + 1, 0)
  end
  uv.fs_close(fd)
  if text == nil then
    return nil, nil -- swapped between lstat and open: the next event reads the new file
  end
  if #text > MAX_BYTES then
    return nil, ("grew over the %d-byte limit"):format(MAX_BYTES)
  end
  return text
end

--- PROTOCOL.md "Limits": pi's files nest at most this many levels of lists and objects.
M.MAX_DEPTH = 16

--- Pure: does `text` nest lists and objects deeper than MAX_DEPTH? Measured on the text, before any decoder
--- (some recurse per level): escapes and strings out, then everything but brackets; each pass takes out the
--- innermost empty pairs, one level per pass. nil: no deeper; or why the text is refused.
---@param text string
---@return string|nil problem
function M.too_deep(text)
  local b = text:gsub("\\.", ""):gsub('"[^"]*"', ""):gsub("[^%[%]{}]+", "")
  for _ = 1, M.MAX_DEPTH do
    if b == "" then
      return nil
    end
    b = b:gsub("[%[{][%]}]", "") -- one level: `[]` and `{}` (a mismatched pair is no JSON either way)
  end
  if b == "" then
    return nil
  end
  -- As many openers as closers left: deeper than MAX_DEPTH; else brackets that never close (no JSON).
  local _, openers = b:gsub("[%[{]", "")
  return 2 * openers == #b and ("nested deeper than %d levels: refused unread"):format(M.MAX_DEPTH) or "not valid JSON"
end

--- `read_file`, then JSON (not read deeper than MAX_DEPTH).
---@param path string
---@param max_bytes integer|nil
---@return boolean ok
---@return any value_or_problem the decoded value; or why it was refused (nil: the file is simply gone)
function M.read_json(path, max_bytes)
  local text, why = M.read_file(path, max_bytes)
  if not text then
    return false, why
  end
  local deep = M.too_deep(text)
  if deep then
    return false, deep
  end
  local ok, value = pcall(vim.json.decode, text)
  if not ok then
    return false, "not valid JSON"
  end
  return true, value
end

return M
