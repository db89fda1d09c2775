--- The texts of this Neovim's unsaved file buffers for pi (protocol v0.5, `<pid>.buffers.json` beside the state
--- file): pi's `read` of such a file then returns what the user sees, not the disk. Written on the state file's
--- own debounced write (never per keystroke), and only when some modified buffer's `changedtick` changed, or the
--- set of modified buffers did; removed once no file buffer is modified. The state file's `buffers_serial` names
--- the current one, and is written after it, so pi never reads a sidecar its state does not name.
---@module 'pi-ide.buffers'
local M = {}

--- PROTOCOL.md, Limits (src/protocol/limits.ts; test/nvim/limits-agree.test.ts holds the copies together): the
--- texts take at most MAX_TEXT_BYTES once JSON-encoded, in all; at most MAX_BUFFERS are listed.
M.MAX_TEXT_BYTES = 2 * 1024 * 1024
M.MAX_BUFFERS = 32

local H = {
  serial = 0, -- grows for the life of this Neovim
  key = nil, ---@type string|nil the modified buffers and their ticks at the last sidecar write
  written = false, -- a sidecar of ours exists
}

--- The modified file buffers, the current one first: { buf, file, tick }.
---@param current integer
---@return table[]
local function modified_buffers(current)
  local api = vim.api
  local state = require("pi-ide.state")
  local out = {}
  local bufs = api.nvim_list_bufs()
  table.sort(bufs, function(a, b)
    if a == current or b == current then
      return a == current and b ~= current
    end
    return a < b
  end)
  for _, buf in ipairs(bufs) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local name = api.nvim_buf_get_name(buf)
      local buftype = vim.bo[buf].buftype
      if state.is_file_buffer(buftype, name) then
        out[#out + 1] = { buf = buf, file = vim.fn.fnamemodify(name, ":p"), tick = api.nvim_buf_get_changedtick(buf) }
        if #out >= M.MAX_BUFFERS then
          break
        end
      end
    end
  end
  return out
end

--- Encode the sidecar for `mods` (pure but for reading the buffers' lines). Each text is JSON-encoded once: its
--- encoded size decides whether it fits, and the encoded string is spliced into the file as it is.
---@param pid integer
---@param serial integer
---@param mods table[]
---@param now number
---@return string
function M.encode(pid, serial, mods, now)
  local api = vim.api
  local json = vim.json.encode
  local budget = M.MAX_TEXT_BYTES
  local entries = {}
  for i, m in ipairs(mods) do
    local lines = api.nvim_buf_get_lines(m.buf, 0, -1, false)
    local head = ('{"file":%s,"version":%d,"lines_total":%d,'):format(json(m.file), m.tick, #lines)
    -- The encoded size decides (escapes grow the text): a buffer that would pass what is left goes without text.
    local text = json(table.concat(lines, "\n"))
    if #text <= budget then
      budget = budget - #text
      entries[i] = head .. '"text":' .. text .. "}"
    else
      entries[i] = head .. '"note":"too_large"}'
    end
  end
  return ('{"protocol":"0.5","kind":"editor-buffers","pid":%d,"serial":%d,"timestamp":%.3f,"buffers":[%s]}'):format(
    pid,
    serial,
    now,
    table.concat(entries, ",")
  )
end

--- Before the state file's write: write the sidecar when the modified buffers changed. Returns the serial the state
--- file names (nil: no sidecar), and a function to run once the state file is written (removes a sidecar no longer
--- named). Never throws into the caller's write: an I/O failure is `ok = false, err`. Without a connected pi
--- (`wanted` false) no buffer is looked at: none is handed over, and a sidecar written before goes.
---@param dir string the checked state dir
---@param pid integer
---@param current integer the current buffer
---@param now number
---@param wanted boolean is a live pi's message naming this Neovim?
---@return boolean ok
---@return integer|nil|string serial_or_err
---@return fun()|nil after
function M.prepare(dir, pid, current, now, wanted)
  local mods = wanted and modified_buffers(current) or {}
  if #mods == 0 then
    if not H.written then
      return true, nil, nil
    end
    return true,
      nil,
      function()
        local ok = require("pi-ide.writer").remove_named(dir, M.file_name(pid))
        if ok then
          H.written, H.key = false, nil
        end
      end
  end
  local parts = {}
  for i, m in ipairs(mods) do
    parts[i] = m.file .. "\0" .. m.tick
  end
  local key = table.concat(parts, "\n")
  -- Unchanged, and still there (it goes with the state dir when someone removes that): named again as it is.
  local uv = require("pi-ide.compat").uv
  if key == H.key and H.written and uv.fs_lstat(dir .. "/" .. M.file_name(pid)) then
    return true, H.serial, nil
  end
  local serial = H.serial + 1
  local ok, err = require("pi-ide.writer").write_named(dir, M.file_name(pid), M.encode(pid, serial, mods, now))
  if not ok then
    return false, err
  end
  H.serial, H.key, H.written = serial, key, true
  return true, serial, nil
end

--- `<pid>.buffers.json` (src/protocol/wire.ts, editorBuffersFileName).
---@param pid integer
---@return string
function M.file_name(pid)
  return ("%d.buffers.json"):format(pid)
end

--- Our sidecar went (removed with the state file, or with its directory): the next write starts afresh.
function M.forget()
  H.written, H.key = false, nil
end

return M
