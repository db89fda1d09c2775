--- pi-ide.inbox.reload: re-reading a buffer from disk after pi changed its file, and the rule that decides
--- whether it may be re-read at all:
---
--- * unmodified buffer: reloaded from disk (`:checktime` with a buffer-local 'autoread', so there is never a
---   prompt), cursor and view of every window kept;
--- * the buffer's file gone, or no longer what the buffer was read from (a regular file now a symlink, a
---   symlink now pointing elsewhere, not a regular file): not reloaded. A buffer read through a symlink
---   (a dotfile linked from a dotfiles repository) reloads while the link still resolves to the same file.
---@module 'pi-ide.inbox.reload'
local uv = require("pi-ide.compat").uv
local diagnostics = require("pi-ide.diagnostics")

local M = {}

local H = {
  read_as = {}, ---@type table<integer, table> buffer -> its path when it was read (M.buffer_read)
}

--- The loaded file buffer showing `file`, if any (by name, then by real path).
---@param file string
---@return integer|nil
function M.find_buffer(file)
  local real = uv.fs_realpath(file)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" then
        if name == file or vim.fn.fnamemodify(name, ":p") == file then
          return buf
        end
        if real and uv.fs_realpath(name) == real then
          return buf
        end
      end
    end
  end
  return nil
end

--- The buffer's file name as an absolute path, nil for a buffer without one.
---@param buf integer
---@return string|nil
function M.buffer_path(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  return name ~= "" and vim.fn.fnamemodify(name, ":p") or nil
end

--- What `path` is on disk, for the reload rule: its own type (lstat: "file", "link", ...), its real path,
--- and the type of what that resolves to. nil when nothing is at `path`.
---@return { type: string, real: string|nil, resolves_to: string|nil }|nil
local function path_identity(path)
  local st = uv.fs_lstat(path)
  if not st then
    return nil
  end
  local target = st.type == "link" and uv.fs_stat(path) or st
  return { type = st.type, real = uv.fs_realpath(path), resolves_to = target and target.type or nil }
end

--- Pure: may a buffer be re-read from its path, which was `was` when the buffer was read (nil: read before
--- the client saw it) and is `now` (nil: gone)? "reload", "gone" or "refused". The threat: a path replaced
--- between pi's write and the reload (a symlink planted in a shared directory) must not read another file
--- into a buffer the user trusts, and on to the model. So the path must still be what it was: a regular
--- file then and now, or a symlink then and now that resolves to the same real path, a regular file.
--- Without a record, a symlink is refused. (Neovim names a buffer by its directory's real path, so a
--- re-pointed symlinked directory makes pi's path another file, not this buffer's.)
---@param was { name: string, type: string, real: string }|nil
---@param now { type: string, real: string|nil, resolves_to: string|nil }|nil
---@return "reload"|"gone"|"refused"
function M.reload_verdict(was, now)
  if not now then
    return "gone"
  end
  if now.resolves_to ~= "file" or (now.type ~= "file" and now.type ~= "link") then
    return "refused"
  end
  if not was then
    return now.type == "file" and "reload" or "refused"
  end
  if was.type ~= now.type or (now.type == "link" and was.real ~= now.real) then
    return "refused"
  end
  return "reload"
end

--- The verdict for re-reading `buf` from its path now (see reload_verdict).
---@param buf integer
---@return "reload"|"gone"|"refused"
function M.verdict(buf)
  -- Decided on the path the reload reads, the buffer's own: pi's path may be another name for it.
  local path = M.buffer_path(buf)
  local was = H.read_as[buf]
  if was and was.name ~= path then
    was = nil -- renamed since it was read (:saveas, :file)
  end
  return M.reload_verdict(was, path and path_identity(path))
end

--- Reload an unmodified buffer from disk, keeping every window's view. Returns true when its content
--- changed. 'autoread' (buffer-local, only for this call) makes :checktime reload without asking.
---@param buf integer
---@return boolean changed
function M.reload(buf)
  local views = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
    end
  end
  local before = vim.api.nvim_buf_get_var(buf, "changedtick")
  local had_autoread = vim.bo[buf].autoread
  vim.bo[buf].autoread = true
  local ok, err = pcall(vim.cmd, ("silent! checktime %d"):format(buf))
  if vim.api.nvim_buf_is_valid(buf) and not had_autoread then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("setlocal autoread<")
    end)
  end
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
  if not ok then
    error(err)
  end
  local changed = vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_var(buf, "changedtick") ~= before
  if changed then
    -- Servers answer the reload asynchronously, so this is in time for their first publish.
    diagnostics.on_reload(buf)
  end
  return changed
end

--- BufReadPost: the buffer was read from its path; remember what that path was (see reload_verdict), so a
--- later reload for pi reads only the same file. At read time, not when pi's message comes: by then the
--- path may already have been swapped. Three syscalls per read, nothing per keystroke.
---@param buf integer
function M.buffer_read(buf)
  local path = vim.bo[buf].buftype == "" and M.buffer_path(buf) or nil
  local now = path and path_identity(path)
  if now and now.real and now.resolves_to == "file" then
    H.read_as[buf] = { name = path, type = now.type, real = now.real }
  else
    H.read_as[buf] = nil
  end
end

---@param buf integer
function M.forget(buf)
  H.read_as[buf] = nil
end

return M
