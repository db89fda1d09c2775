--- pi-ide.inbox.reload: re-reading a buffer from disk after pi changed its file, and the rule that decides
--- whether it may be re-read at all:
---
--- * unmodified buffer: given exactly the bytes of one read of the recorded file (one fd, checked), applied
---   through the API as one undoable change of the lines that differ (marks, folds and undo history kept,
---   never a prompt, the path never read again), cursor and view of every window kept;
--- * the buffer's file gone, or no longer what the buffer was read from (a regular file now a symlink, a
---   symlink now pointing elsewhere, not a regular file): not reloaded. A buffer read through a symlink
---   (a dotfile linked from a dotfiles repository) reloads while the link still resolves to the same file.
---@module 'pi-ide.inbox.reload'
local compat = require("pi-ide.compat")
local uv = compat.uv
local linemap = require("pi-ide.linemap")

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
--- the type of what that resolves to, and that file's identity (dev, ino). nil when nothing is at `path`.
---@return { type: string, real: string|nil, resolves_to: string|nil, dev: integer|nil, ino: integer|nil }|nil
local function path_identity(path)
  local st = uv.fs_lstat(path)
  if not st then
    return nil
  end
  local target = st.type == "link" and uv.fs_stat(path) or st
  return {
    type = st.type,
    real = uv.fs_realpath(path),
    resolves_to = target and target.type or nil,
    dev = target and target.dev or nil,
    ino = target and target.ino or nil,
  }
end

--- Pure: may a buffer be re-read from its path, which was `was` when the buffer was read (nil: read before
--- the client saw it) and is `now` (nil: gone)? "reload", "gone" or "refused". The threat: a path replaced
--- between pi's write and the reload (a symlink planted in a shared directory) must not read another file
--- into a buffer the user trusts, and on to the model. So the path must still be what it was: a regular
--- file then and now, or a symlink then and now that resolves to the same real path, a regular file.
--- Without a record, a symlink is refused. (Neovim names a buffer by its directory's real path, so a
--- re-pointed symlinked directory makes pi's path another file, not this buffer's.) This is the check before
--- the read; M.reload also checks the file it opened (is_recorded_file) and what Neovim read.
---@param was { name: string, type: string, real: string, dev: integer|nil, ino: integer|nil }|nil
---@param now { type: string, real: string|nil, resolves_to: string|nil, dev: integer|nil, ino: integer|nil }|nil
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

--- The record of `buf`'s read, if it is still about the buffer's path (not renamed since: :saveas, :file).
local function record_of(buf, path)
  local was = H.read_as[buf]
  return (was and was.name == path) and was or nil
end

--- The verdict for re-reading `buf` from its path now (see reload_verdict).
---@param buf integer
---@return "reload"|"gone"|"refused"
function M.verdict(buf)
  -- Decided on the path the reload reads, the buffer's own: pi's path may be another name for it.
  local path = M.buffer_path(buf)
  return M.reload_verdict(path and record_of(buf, path), path and path_identity(path))
end

--- For tests: called between the path check (M.verdict) and the open, and between the verified read and
--- Neovim's own read of the path, to swap the file deterministically.
---@type fun(path: string)|nil
M._between_check_and_open = nil
---@type fun(path: string)|nil
M._between_verify_and_reload = nil

--- All of an open file, from its start.
local function read_all(fd)
  local parts, offset = {}, 0
  while true do
    local chunk = uv.fs_read(fd, 65536, offset)
    if not chunk or chunk == "" then
      return chunk and table.concat(parts) or nil
    end
    parts[#parts + 1] = chunk
    offset = offset + #chunk
  end
end

--- Pure: is the file opened for a reload (`opened`, its fstat) the one the buffer was read from (`was`, the
--- record; nil: read before the client saw it)? The file recorded (dev, inode); or, once replaced (deleted
--- and written anew, renamed over by a formatter), a regular file with a single link: for a regular-file
--- record it was opened without following a symlink, so it is what is at the path; for a symlink record it
--- must be the file at the recorded real path (`at_real`, its lstat), not whatever the link points to now. A
--- file with more links could be any file of yours hard-linked into a shared directory: refused.
---@param was { type: string, dev: integer|nil, ino: integer|nil }|nil
---@param opened { type: string, dev: integer, ino: integer, nlink: integer }
---@param at_real { type: string, dev: integer, ino: integer }|nil
---@return boolean
function M.is_recorded_file(was, opened, at_real)
  if opened.type ~= "file" then
    return false
  end
  if not was or (was.dev ~= nil and opened.dev == was.dev and opened.ino == was.ino) then
    return true
  end
  if opened.nlink ~= 1 then
    return false
  end
  if was.type == "link" then
    return at_real ~= nil and at_real.type == "file" and at_real.dev == opened.dev and at_real.ino == opened.ino
  end
  return true
end

--- Open `path` as the buffer's record says it was read (never following a symlink at a regular file's path,
--- never blocking on a FIFO) and read it if the opened file is the one recorded (is_recorded_file). Returns
--- its text and stat, or nil.
---@return string|nil text
---@return table|nil stat
local function read_verified(path, was)
  local through_link = was ~= nil and was.type == "link"
  if M._between_check_and_open then
    M._between_check_and_open(path)
  end
  local fd = uv.fs_open(path, compat.open_flags_untrusted(through_link), 0)
  if not fd then
    return nil
  end
  local st = uv.fs_fstat(fd)
  local text
  if st and M.is_recorded_file(was, st, through_link and uv.fs_lstat(was.real) or nil) then
    text = read_all(fd)
  end
  uv.fs_close(fd)
  return text, st
end

--- What a reload of `buf` would read: the text of its file through the same checks (verdict, then one
--- verified fd), or nil when the file is gone or not the one the buffer was read from. For :PiIde diff.
---@param buf integer
---@return string|nil
function M.read_disk(buf)
  local path = M.buffer_path(buf)
  if not path or M.verdict(buf) ~= "reload" then
    return nil
  end
  return (read_verified(path, record_of(buf, path)))
end

local NEWLINE = { unix = "\n", dos = "\r\n", mac = "\r" }
local BOM = "\239\187\191"

--- Pure: the 'fileformat' Neovim detects for `text` under 'fileformats' `formats` ("unix,dos"): dos when
--- every line ends in CR-LF, unix when some line ends in a bare LF; nil (keep the buffer's) for text without
--- a line break or formats that allow neither. A reload keeps the buffer's old format otherwise, so a file
--- pi converted would be written back in the old one.
---@param text string
---@param formats string
---@return "unix"|"dos"|nil
function M.fileformat_of(text, formats)
  local allowed = "," .. formats .. ","
  local lf = select(2, text:gsub("\n", ""))
  if lf == 0 then
    return nil
  end
  local crlf = select(2, text:gsub("\r\n", ""))
  if crlf == lf and allowed:find(",dos,", 1, true) then
    return "dos"
  end
  return allowed:find(",unix,", 1, true) and "unix" or nil
end

local function is_utf8(enc)
  return enc == "" or enc:match("^utf%-8") ~= nil
end

--- Pure: the bytes Neovim writes for `lines` (an empty list: an empty file) under the buffer options `o`
--- ('fileformat', 'endofline', 'bomb', 'fileencoding'); nil when they cannot be converted to the encoding.
---@param lines string[]
---@param o { fileformat: string, endofline: boolean, bomb: boolean, fileencoding: string }
---@return string|nil
function M.encode(lines, o)
  if #lines == 0 then
    return ""
  end
  local nl = NEWLINE[o.fileformat] or "\n"
  local text = table.concat(lines, nl) .. (o.endofline and nl or "")
  if not is_utf8(o.fileencoding) then
    local converted = vim.fn.iconv(text, "utf-8", o.fileencoding)
    if converted == "" then
      return nil
    end
    text = converted
  end
  return (o.bomb and is_utf8(o.fileencoding) and BOM or "") .. text
end

--- Pure: what a buffer with 'fileformat' `fileformat` and 'fileencoding' `fileencoding` holds for the bytes
--- `text`: its lines (none for an empty file), 'endofline' (nil: keep) and 'bomb'. nil when those would not
--- be written back as exactly `text` (M.encode): then the bytes are not what the buffer can show as they are.
--- `binary` ('binary'): no BOM taken off.
---@param text string
---@param fileformat string
---@param fileencoding string
---@param binary boolean|nil
---@return { lines: string[], endofline: boolean|nil, bomb: boolean }|nil
function M.decode(text, fileformat, fileencoding, binary)
  local body, bomb = text, false
  if not binary and is_utf8(fileencoding) and body:sub(1, 3) == BOM then
    body, bomb = body:sub(4), true
  elseif not is_utf8(fileencoding) and body ~= "" then
    body = vim.fn.iconv(body, fileencoding, "utf-8")
  end
  local decoded = { lines = {}, endofline = nil, bomb = bomb }
  if body ~= "" then
    local nl = NEWLINE[fileformat] or "\n"
    decoded.endofline = body:sub(-#nl) == nl
    decoded.lines = vim.split(decoded.endofline and body:sub(1, -#nl - 1) or body, nl, { plain = true })
  end
  local again = M.encode(decoded.lines, {
    fileformat = fileformat,
    endofline = decoded.endofline ~= false,
    bomb = bomb,
    fileencoding = fileencoding,
  })
  return again == text and decoded or nil
end

--- The lines of `buf` as M.encode takes them: none for a buffer as an empty file reads (Neovim shows one
--- empty line, and writes nothing: told apart from a line break by its byte count).
local function lines_of(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines == 1 and lines[1] == "" then
    local bytes = vim.api.nvim_buf_call(buf, function()
      return vim.fn.wordcount().bytes
    end)
    return bytes == 0 and {} or lines
  end
  return lines
end

--- The options M.encode takes, as Neovim writes `buf`: with 'binary', no line-ending or encoding conversion.
local function write_options(buf)
  local bo = vim.bo[buf]
  return {
    fileformat = bo.binary and "unix" or bo.fileformat,
    endofline = bo.endofline,
    bomb = bo.bomb and not bo.binary,
    fileencoding = bo.binary and "" or bo.fileencoding,
  }
end

--- The bytes `buf` holds as Neovim writes them (M.encode), nil when it cannot say.
local function bytes_of(buf)
  return M.encode(lines_of(buf), write_options(buf))
end

--- Put `lines` back into `buf` as if the reload never happened, and drop the undo history that holds what
--- was applied (the idiom of :help clear-undo: a change made with 'undolevels' at -1).
local function put_back(buf, lines)
  local levels = vim.bo[buf].undolevels
  vim.bo[buf].undolevels = -1
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].undolevels = levels
  vim.bo[buf].modified = false
end

--- Replace the lines of `buf` that differ from `new` (`hunks`: linemap.hunks from `old`, lines_of(buf)),
--- hunk by hunk from the last, so marks, extmarks and folds on the lines pi left alone stay where they are;
--- one undoable change. Deleting every line leaves the buffer as an empty file reads; lines put into such a
--- buffer go before the empty line it shows, which then goes.
local function apply_lines(buf, hunks, old, new)
  for i = #hunks, 1, -1 do
    local sa, ca, sb, cb = unpack(hunks[i])
    local from = ca == 0 and sa or sa - 1 -- 0-based: an insertion goes after line sa
    vim.api.nvim_buf_set_lines(buf, from, from + ca, false, { unpack(new, sb, sb + cb - 1) })
  end
  if #old == 0 and #new > 0 then
    vim.api.nvim_buf_set_lines(buf, #new, #new + 1, false, {})
  end
end

local ffi_declared = false

--- Neovim's own "the file was written" update (ml_timestamp: what :w does after writing): it stats the
--- buffer's file, never reads it, and records its mtime, size and mode as the ones the buffer was read at.
--- Through LuaJIT's FFI (both functions are exported by Neovim's executable); false when not available.
local function timestamp_via_ffi(buf)
  local has_ffi, ffi = pcall(require, "ffi")
  if not has_ffi then
    return false
  end
  if not ffi_declared then
    ffi_declared = true
    -- Each apart: another plugin may have declared one already (a redefinition is an error).
    pcall(ffi.cdef, "typedef struct file_buffer buf_T;")
    pcall(ffi.cdef, "buf_T *buflist_findnr(int nr);")
    pcall(ffi.cdef, "void ml_timestamp(buf_T *buf);")
  end
  return (pcall(function()
    local b = ffi.C.buflist_findnr(buf)
    assert(b ~= nil, "no such buffer")
    ffi.C.ml_timestamp(b)
  end))
end

--- Make Neovim's record of `buf`'s file current without reading it, so neither a later :checktime (W11,
--- W12, an 'autoread' reload that would read the path after all) nor :w ("changed since reading it") says
--- the file changed. Without the FFI: a :checktime of this buffer while it counts as modified (so
--- 'autoread' does not reload it), its "file changed" question answered with "do nothing" (v:fcs_choice
--- empty): Neovim stores the file's stat and reads nothing; :w may then still ask once.
function M.record_on_disk(buf)
  if timestamp_via_ffi(buf) then
    return
  end
  local answer = vim.api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    desc = "pi-ide: a reload for pi was applied from the verified read; nothing to do",
    callback = function()
      vim.v.fcs_choice = ""
    end,
  })
  local modified = vim.bo[buf].modified
  vim.bo[buf].modified = true
  pcall(vim.cmd, ("silent! checktime %d"):format(buf))
  vim.bo[buf].modified = modified
  pcall(vim.api.nvim_del_autocmd, answer)
end

--- Apply `new` (M.decode of the verified read) to `buf` as a change through the API: no read of the path, no
--- BufReadPre/BufReadPost, only the new content in on_lines callbacks, and a didChange (a higher version)
--- to language servers. 'modifiable' and 'readonly' are lifted for it, as Neovim's reload ignores them.
local function apply(buf, hunks, old, new, format)
  local bo = vim.bo[buf]
  local modifiable, readonly = bo.modifiable, bo.readonly
  if not modifiable then
    bo.modifiable = true
  end
  if readonly then
    bo.readonly = false -- no W10 "Changing a readonly file"
  end
  local ok, err = pcall(function()
    apply_lines(buf, hunks, old, new.lines)
    if format ~= bo.fileformat then
      bo.fileformat = format
    end
    if new.endofline ~= nil and new.endofline ~= bo.endofline then
      bo.endofline = new.endofline
    end
    if not bo.binary and new.bomb ~= bo.bomb then
      bo.bomb = new.bomb
    end
  end)
  if vim.api.nvim_buf_is_valid(buf) then
    if readonly then
      bo.readonly = true
    end
    if not modifiable then
      bo.modifiable = false
    end
  end
  if not ok then
    error(err, 0)
  end
end

--- Reload an unmodified buffer from its file, keeping every window's view: the bytes of one read verified
--- to be the buffer's file (read_verified) are applied to the buffer (apply), and Neovim's record of the
--- file is made current (record_on_disk). Nothing reads the path a second time, so another user swapping
--- it after the verified read changes nothing. Returns "reloaded", "unchanged" or "refused" (and the
--- buffer as it was).
---@param buf integer
---@return "reloaded"|"unchanged"|"refused"
function M.reload(buf)
  local path = M.buffer_path(buf)
  local was = path and record_of(buf, path)
  local text, st = nil, nil
  if path then
    text, st = read_verified(path, was)
  end
  if not text or not st then
    return "refused"
  end
  -- 'binary': read and written as it is ('fileformat' and 'fileencoding' ignored, as Neovim does).
  local binary = vim.bo[buf].binary
  local format = not binary and M.fileformat_of(text, vim.o.fileformats) or vim.bo[buf].fileformat
  local new = M.decode(text, binary and "unix" or format, binary and "" or vim.bo[buf].fileencoding, binary)
  if not new then
    return "refused" -- bytes this buffer cannot hold as they are (not valid in its 'fileencoding')
  end
  if M._between_verify_and_reload then
    M._between_verify_and_reload(path)
  end
  local views = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
    end
  end
  local held = bytes_of(buf)
  local old = lines_of(buf)
  local hunks = linemap.hunks(old, new.lines)
  local ok, err = pcall(apply, buf, hunks, old, new, format)
  local verified = ok and vim.api.nvim_buf_is_valid(buf) and bytes_of(buf) == text
  if vim.api.nvim_buf_is_valid(buf) then
    if verified then
      M.record_on_disk(buf)
      vim.bo[buf].modified = false
    else
      put_back(buf, #old == 0 and {} or old)
    end
  end
  -- Every window's cursor and view stay on the text they were on: mapped through the change (a line pi
  -- inserted above the cursor moves it down with its text), not kept at the same line number.
  hunks = verified and hunks or {}
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == buf then
      view.lnum = linemap.map_line(hunks, view.lnum)
      view.topline = linemap.map_line(hunks, view.topline)
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
  if not ok then
    error(err)
  end
  if not verified then
    return "refused"
  end
  -- The record stays the file verified, whatever is at the path now.
  H.read_as[buf] = {
    name = path,
    type = was and was.type or "file",
    real = was and was.real or uv.fs_realpath(path) or path,
    dev = st.dev,
    ino = st.ino,
  }
  return held ~= text and "reloaded" or "unchanged"
end

--- BufReadPost: the buffer was read from its path; remember what that path was (see reload_verdict), so a
--- later reload for pi reads only the same file. At read time, not when pi's message comes: by then the
--- path may already have been swapped. Three syscalls per read, nothing per keystroke.
---@param buf integer
function M.buffer_read(buf)
  local path = vim.bo[buf].buftype == "" and M.buffer_path(buf) or nil
  local now = path and path_identity(path)
  if now and now.real and now.resolves_to == "file" then
    H.read_as[buf] = { name = path, type = now.type, real = now.real, dev = now.dev, ino = now.ino }
  else
    H.read_as[buf] = nil
  end
end

---@param buf integer
function M.forget(buf)
  H.read_as[buf] = nil
end

return M
