--- Pure: a snapshot of the editor (plain data) -> the protocol v0.2 payload -> JSON text.
--- No vim.api calls here, so the mapping can be tested with literal tables.
---@module 'pi-ide.state'
local M = {}

--- Arguments Neovim's launcher or a GUI adds for embedding and remote UIs, which say nothing about what the
--- user is working on. Value = how many following arguments belong to the flag.
---@type table<string, integer>
M.PLUMBING = {
  ["--embed"] = 0,
  ["--headless"] = 0,
  ["--listen"] = 1,
}

--- Launch arguments for the protocol's `argv`: v:argv without argv[0] and without embedding/UI plumbing
--- (`--embed`, `--headless`, `--listen <addr>`). Everything the user typed stays, flags included
--- (`-c`, `--cmd`, `-u`, file names): pi only counts an entry as evidence when it resolves to a directory.
---@param argv string[] v:argv
---@return string[]
function M.filter_argv(argv)
  local out, i = {}, 2
  while i <= #argv do
    local a = argv[i]
    local skip = M.PLUMBING[a]
    if skip then
      i = i + skip
    elseif not a:match("^%-%-listen=") then
      out[#out + 1] = a
    end
    i = i + 1
  end
  return out
end

--- URL-like names (scp://, fugitive://, term://) are not paths on this machine.
local function is_url(bufname)
  return bufname:match("^%a[%w+.-]*://") ~= nil
end

--- Buffer types that are never "the file": pi's own terminal, help, quickfix, prompts, scratch buffers.
--- Only buftype "" is a file buffer; "acwrite" buffers (fugitive://, oil://) are views, not paths.
---@param buftype string
---@param bufname string
---@return boolean
function M.is_file_buffer(buftype, bufname)
  if buftype ~= "" or bufname == "" then
    return false
  end
  return not is_url(bufname)
end

--- Display name: the basename for files, something recognisable otherwise.
---@param buftype string
---@param bufname string
---@return string
function M.display_name(buftype, bufname)
  if bufname == "" then
    if buftype == "quickfix" then
      return "[Quickfix List]"
    end
    return buftype == "prompt" and "[Prompt]" or "[No Name]"
  end
  if buftype == "terminal" or is_url(bufname) then
    return bufname
  end
  return bufname:match("([^/]+)/*$") or bufname
end

---@class PiIdeSnapshot
---@field pid integer
---@field cwd string effective cwd of the current window (:lcd/:tcd aware)
---@field argv string[] already filtered
---@field bufname string absolute path or "" (nvim_buf_get_name)
---@field buftype string
---@field filetype string
---@field modified boolean
---@field lines_total integer
---@field cursor integer[] {line, 0-based byte col} (nvim_win_get_cursor)
---@field selection PiIdeSelection|nil
---@field selected_at number|nil

--- Build the payload (without `timestamp`, which encode() adds) from a snapshot.
---@param snap PiIdeSnapshot
---@return table
function M.build(snap)
  local null = vim.NIL
  local sel = null
  if snap.selection then
    sel = {
      start = snap.selection.start,
      ["end"] = snap.selection["end"],
      text = snap.selection.text,
      selected_at = snap.selected_at or null,
      -- Protocol v0.2 addition: present (and true) only when the client cut the text.
      truncated = snap.selection.truncated or nil,
    }
  end
  local is_file = M.is_file_buffer(snap.buftype, snap.bufname)
  return {
    pid = snap.pid,
    pid_ns = snap.pid_ns,
    cwd = snap.cwd,
    app = "nvim",
    argv = snap.argv,
    active_buffer = {
      file = is_file and snap.bufname or null,
      name = M.display_name(snap.buftype, snap.bufname),
      language = snap.filetype ~= "" and snap.filetype or null,
      cursor = { line = snap.cursor[1], column = snap.cursor[2] + 1 },
      selection = sel,
      modified = snap.modified,
      lines_total = snap.lines_total,
    },
  }
end

--- This Neovim's pid namespace as /proc names it ("pid:[4026531836]" on the host), or nil where /proc does not
--- say (PROTOCOL.md v0.5 `pid_ns`: a pid means something only in its namespace; pi in a sandbox reads it).
---@return string|nil
function M.pid_namespace()
  local ok, name = pcall((vim.uv or vim.loop).fs_readlink, "/proc/self/ns/pid")
  if ok and type(name) == "string" and name:match("^pid:%[%d+%]$") then
    return name
  end
  return nil
end

--- pi refuses state files larger than this (PROTOCOL.md, "Limits"): no write may produce a bigger one.
M.MAX_FILE_BYTES = 1024 * 1024

--- Encode a payload. Returns the content (everything but `timestamp`, used to skip writes that would change
--- nothing) and the full text with `timestamp` spliced in front.
---
--- The selection is already capped by its encoded size; if the whole file would still exceed
--- MAX_FILE_BYTES (long paths, a huge argv), the selection text is cut further to make room, and marked
--- `truncated`. When even that is not enough, nothing is returned: a file pi refuses would make this editor
--- vanish from pi, which is worse than a state file that is briefly stale.
---@param payload table
---@param timestamp number unix seconds
---@return string|nil content nil when the file cannot be kept under MAX_FILE_BYTES
---@return string text_or_err
function M.encode(payload, timestamp)
  local content = vim.json.encode(payload)
  local prefix = ('{"timestamp":%.3f,'):format(timestamp)
  local function over()
    return #prefix + #content - 1 - M.MAX_FILE_BYTES
  end
  local sel = payload.active_buffer.selection
  if over() > 0 and sel ~= vim.NIL and sel.text ~= "" then
    local selection = require("pi-ide.selection")
    -- 32 bytes of slack for `"truncated":true,` when it was not there yet.
    local room = selection.encoded_size(sel.text) - over() - 32
    sel.text = selection.fit(sel.text, math.max(0, room))
    sel.truncated = true
    content = vim.json.encode(payload)
  end
  -- Many reports with many diagnostics (pi writing 200 files at once): the oldest reports go first, they are
  -- the ones pi has most likely read already.
  local files = payload.files
  if over() > 0 and type(files) == "table" and #files > 0 then
    -- Each report's size once, so that one more encode (not one per report dropped) makes it fit.
    local excess, drop = over(), 0
    while excess > 0 and drop < #files do
      drop = drop + 1
      excess = excess - #vim.json.encode(files[drop]) - 1
    end
    payload.files = vim.list_slice(files, drop + 1)
    if #payload.files == 0 then
      payload.files = nil
    end
    content = vim.json.encode(payload)
  end
  if over() > 0 then
    return nil, ("the state would take %d bytes, over pi's limit of %d; not written"):format(
      #prefix + #content - 1,
      M.MAX_FILE_BYTES
    )
  end
  return content, prefix .. content:sub(2)
end

return M
