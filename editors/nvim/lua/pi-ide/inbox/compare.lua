--- pi-ide.inbox.compare: `:PiIde diff`, the compare that can never lose unsaved text. The file on disk (pi's
--- version) opens read-only in a scratch buffer beside the user's buffer, both in diff mode. The user's
--- buffer is never reloaded or written: `:w !diff % -` would run a shell command, after which Neovim checks
--- the file's time and asks W12, whose "Load" throws the unsaved text away.
---@module 'pi-ide.inbox.compare'
local reload = require("pi-ide.inbox.reload")

local M = {}

--- Pure: `text` (a file's bytes) as buffer lines: split at line breaks (CR-LF for a "dos" format), the break
--- ending the last line not starting another.
---@param text string
---@param format string 'fileformat'
---@return string[]
function M.lines_of(text, format)
  local nl = format == "dos" and "\r\n" or "\n"
  local lines, from = {}, 1
  while true do
    local at = text:find(nl, from, true)
    if not at then
      break
    end
    lines[#lines + 1] = text:sub(from, at - 1)
    from = at + #nl
  end
  if from <= #text then
    lines[#lines + 1] = text:sub(from)
  end
  return lines
end

--- The buffer to compare: the current one if it shows a file, else the first unsaved buffer pi changed.
---@param conflicts integer[] buffers in conflict with pi, in order
---@return integer|nil
local function target(conflicts)
  local cur = vim.api.nvim_get_current_buf()
  if vim.bo[cur].buftype == "" and vim.api.nvim_buf_get_name(cur) ~= "" then
    return cur
  end
  return conflicts[1]
end

--- Open the compare. Returns nil, or why it cannot (one line).
---@param conflicts integer[]
---@return string|nil problem
function M.open(conflicts)
  local buf = target(conflicts)
  if not buf then
    return "(pi-ide) :PiIde diff compares a file's buffer with the file on disk: no file buffer here"
  end
  local text = reload.read_disk(buf)
  if not text then
    return "(pi-ide) :PiIde diff: the file on disk is gone or not the one this buffer was read from"
  end
  local format = reload.fileformat_of(text, vim.o.fileformats) or vim.bo[buf].fileformat
  M.show_beside(buf, M.lines_of(text, format), "pi-ide://disk" .. vim.api.nvim_buf_get_name(buf))
  return nil
end

--- Show `lines` read-only in a scratch buffer named `name` beside `buf`, both in diff mode, and come back to
--- `buf`'s window. `buf` itself is never reloaded, written or changed (no W12 prompt can follow).
---@param buf integer
---@param lines string[]
---@param name string
function M.show_beside(buf, lines, name)
  if vim.api.nvim_get_current_buf() ~= buf then
    local shown = vim.fn.win_findbuf(buf)[1]
    if shown then
      vim.api.nvim_set_current_win(shown)
    else
      vim.cmd("sbuffer " .. buf)
    end
  end
  local filetype = vim.bo[buf].filetype
  vim.cmd("diffthis")
  vim.cmd("vertical rightbelow new")
  local scratch = vim.api.nvim_get_current_buf()
  local bo = vim.bo[scratch]
  bo.buftype, bo.bufhidden, bo.swapfile = "nofile", "wipe", false
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, lines)
  bo.modifiable, bo.readonly = false, true
  pcall(vim.api.nvim_buf_set_name, scratch, name)
  bo.filetype = filetype
  vim.cmd("diffthis")
  vim.cmd("wincmd p") -- back to the user's buffer
end

return M
