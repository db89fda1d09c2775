--- Which buffer the state file describes. Normally the current one; but while the user is in a terminal
--- (pi's own, or any other), help, quickfix, a picker prompt or another non-file buffer, the state keeps
--- describing the file they were last in, with its cursor and selection: select, switch to the terminal,
--- type the prompt, and the selection goes along.
---@module 'pi-ide.focus'
local M = {}

-- The last file buffer the user was in (named, not a URL), and the window they were in it.
local last = { buf = nil, win = nil } ---@type { buf: integer|nil, win: integer|nil }

--- A buffer that holds the user's text: a normal buffer (buftype ""), named or not. Terminals, help,
--- quickfix, prompts and plugin views (nofile, acwrite) are not.
---@param buf integer
---@return boolean
local function is_text_buffer(buf)
  return vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == ""
end

--- Note that the user is in `win` showing `buf` (called before leaving it and on every snapshot).
---@param buf integer
---@param win integer
function M.note(buf, win)
  if is_text_buffer(buf) and require("pi-ide.state").is_file_buffer("", vim.api.nvim_buf_get_name(buf)) then
    last.buf, last.win = buf, win
  end
end

--- Forget a wiped-out buffer.
---@param buf integer
function M.forget(buf)
  if last.buf == buf then
    last.buf, last.win = nil, nil
  end
end

--- The buffer to describe and its cursor ({line, 0-based byte col}, as nvim_win_get_cursor returns it).
--- `fallback` is true when it is not the current buffer (the user is in a non-file buffer).
---@param buf integer the current buffer
---@param win integer the current window
---@return integer buf
---@return integer[] cursor
---@return boolean fallback
function M.target(buf, win)
  local api = vim.api
  if is_text_buffer(buf) or not (last.buf and is_text_buffer(last.buf) and api.nvim_buf_is_loaded(last.buf)) then
    M.note(buf, win)
    return buf, api.nvim_win_get_cursor(win), false
  end
  local b = last.buf
  -- The window the user left, if it still shows that buffer; else any window showing it; else the buffer's
  -- last cursor position (the '"' mark, set when it was left).
  local w = last.win
  if not (w and api.nvim_win_is_valid(w) and api.nvim_win_get_buf(w) == b) then
    w = vim.fn.bufwinid(b)
  end
  local cursor
  if w and w > 0 then
    cursor = api.nvim_win_get_cursor(w)
  else
    cursor = api.nvim_buf_get_mark(b, '"')
    if cursor[1] < 1 then
      cursor = { 1, 0 }
    end
  end
  return b, cursor, true
end

return M
