--- pi-ide.inbox: protocol v0.3, pi -> editor. pi writes `<state dir>/pi-<pid>.json` naming the editor it is
--- connected to and the files its tools changed. This module watches the state directory (one libuv
--- fs_event: no polling), reads those files through the same checks pi applies to ours, and for a live pi of
--- ours that names this Neovim, reloads the changed files this Neovim already has loaded:
---
--- * unmodified buffer: reloaded from disk (`:checktime` with a buffer-local 'autoread', so there is never a
---   prompt), cursor and view of every window kept;
--- * buffer with unsaved changes: never touched; the user is told once per conflict (until the buffer is
---   written or read again), in one line naming the file, and :PiIde says how to compare or reload;
--- * the buffer's file gone, or no longer what the buffer was read from (a regular file now a symlink, a
---   symlink now pointing elsewhere, not a regular file): not reloaded. A buffer read through a symlink
---   (a dotfile linked from a dotfiles repository) reloads while the link still resolves to the same file.
---
--- It never opens, runs or deletes anything because a message said so. Each outcome becomes a `files` report
--- in our state file (with the buffer's diagnostics), and `pi` says which message was handled last.
--- Malformed, oversized or foreign messages are ignored with one diagnostic (in :PiIde), never an error.
--- Notices are cut to one line of the message area: a longer one would open a hit-enter prompt, which blocks
--- the editor until a key is pressed.
---@module 'pi-ide.inbox'
local compat = require("pi-ide.compat")
local diagnostics = require("pi-ide.diagnostics")
local uv = compat.uv

local M = {}

M.MAX_BYTES = 64 * 1024
M.MAX_CHANGED = 50
M.MAX_REPORTS = 20

local H = {
  dir = nil, ---@type string|nil
  handle = nil, ---@type userdata|nil the fs_event
  queued = {}, ---@type table<string, boolean> file names waiting to be read
  flush_armed = false,
  on_report = nil, ---@type fun()|nil asks init.lua for a prompt state write
  pis = {}, ---@type table<integer, { message: table, handled: integer, at: number }>
  reports = {}, ---@type table[] newest last, at most MAX_REPORTS
  last = nil, ---@type { pid: integer, seq: integer }|nil
  problems = {}, ---@type table<string, string> file name -> why it was ignored (each said once)
  told = {}, ---@type table<integer, string> buffer -> file name, for the "unsaved, not reloaded" said
  read_as = {}, ---@type table<integer, table> buffer -> its path when it was read (M.buffer_read)
  alive_at = {}, ---@type table<integer, number> pid -> last time kill(pid, 0) said alive
  status_drawn = "", -- what statusline() last returned, i.e. what statuslines show
}

--- For the benchmark: when the last reload happened (uv.hrtime()), per file.
M._reloaded_at = {}

local function is_integer(v, min)
  return type(v) == "number" and v == math.floor(v) and v >= (min or 0) and v < 2 ^ 53
end

--- Pure: is `msg` (decoded JSON) a well-formed pi message from the file `pi-<name_pid>.json`? Returns the
--- reason when it is not.
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
    return ("pid field %s does not match the file name"):format(tostring(msg.pid))
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
  if msg.last_turn ~= nil and (type(msg.last_turn) ~= "table" or #msg.last_turn > 50) then
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

local ELLIPSIS = "…"

--- Pure: `text` cut at its end to at most `cells` display cells, "…" marking the cut.
---@param text string
---@param cells integer
---@return string
local function head(text, cells)
  if vim.fn.strdisplaywidth(text) <= cells then
    return text
  end
  for n = vim.fn.strchars(text) - 1, 0, -1 do
    local cut = vim.fn.strcharpart(text, 0, n) .. ELLIPSIS
    if vim.fn.strdisplaywidth(cut) <= cells then
      return cut
    end
  end
  return ""
end

--- Pure: `text` cut at its start to at most `cells` display cells, "…" marking the cut: the tail of a path
--- is where its file name is.
---@param text string
---@param cells integer
---@return string
local function tail(text, cells)
  if vim.fn.strdisplaywidth(text) <= cells then
    return text
  end
  local chars = vim.fn.strchars(text)
  for skip = 1, chars do
    local cut = ELLIPSIS .. vim.fn.strcharpart(text, skip)
    if vim.fn.strdisplaywidth(cut) <= cells then
      return cut
    end
  end
  return ELLIPSIS
end

--- Pure: the first of `variants` (`{ before, after }` around `name`, longest first) that fits in `cells`
--- display cells; else the last one with `name` cut to its tail, and that cut to `cells` if still too long.
---@param variants string[][]
---@param name string
---@param cells integer
---@return string
function M.fit(variants, name, cells)
  for _, v in ipairs(variants) do
    local text = v[1] .. name .. v[2]
    if vim.fn.strdisplaywidth(text) <= cells then
      return text
    end
  end
  local last = variants[#variants]
  local room = cells - vim.fn.strdisplaywidth(last[1] .. last[2])
  return head(last[1] .. tail(name, math.max(room, 1)) .. last[2], cells)
end

--- Warn in one line of the message area. v:echospace is what the last line holds before Neovim opens a
--- hit-enter prompt (it depends on 'columns', 'showcmd' and 'ruler'), so it is read when the notice shows.
---@param variants string[][] see fit()
---@param name string
local function notice(variants, name)
  vim.schedule(function()
    local cells = tonumber(vim.v.echospace) or (vim.o.columns - 12)
    vim.notify(M.fit(variants, name, math.max(cells, 1)), vim.log.levels.WARN)
  end)
end

--- Say once per file name why a message was ignored; keep it (whole) for :PiIde.
local function problem(name, why)
  if H.problems[name] == why then
    return
  end
  H.problems[name] = why
  notice({ { "(pi-ide) ignoring ", ": " .. why }, { "(pi-ide) ignoring ", " (why: :PiIde)" } }, name)
end

--- Read `<dir>/<name>` only if it is a regular file (not a symlink, and the opened file is the one lstat
--- saw), ours, not group/other-accessible, and at most MAX_BYTES. Returns text, or nil and why (nil, nil
--- when it is simply gone).
---@return string|nil text
---@return string|nil problem
function M.read_file(path)
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
  if st.size > M.MAX_BYTES then
    return nil, ("is %d bytes, over the %d-byte limit"):format(st.size, M.MAX_BYTES)
  end
  local fd = uv.fs_open(path, "r", 0)
  if not fd then
    return nil, nil
  end
  local fst = uv.fs_fstat(fd)
  local text
  if fst and fst.ino == st.ino and fst.dev == st.dev and fst.type == "file" and fst.size <= M.MAX_BYTES then
    text = uv.fs_read(fd, M.MAX_BYTES + 1, 0)
  end
  uv.fs_close(fd)
  if text == nil then
    return nil, nil -- swapped between lstat and open: the next event reads the new file
  end
  if #text > M.MAX_BYTES then
    return nil, ("grew over the %d-byte limit"):format(M.MAX_BYTES)
  end
  return text
end

--- kill(pid, 0): "alive", "dead" or "foreign" (a process of another user).
local function liveness(pid)
  local ok, _, code = uv.kill(pid, 0)
  if ok == 0 or ok == true then
    return "alive"
  end
  return code == "EPERM" and "foreign" or "dead"
end

--- The loaded file buffer showing `file`, if any (by name, then by real path).
local function find_buffer(file)
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
local function buffer_path(buf)
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

--- Reload an unmodified buffer from disk, keeping every window's view. Returns true when its content
--- changed. 'autoread' (buffer-local, only for this call) makes :checktime reload without asking.
local function reload(buf)
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

local HOW_TO_RESOLVE = "Compare: :w !diff % -   Take pi's version: :e!"

--- Longest first: the whole story when the message line is wide enough, else the file and :PiIde.
local MODIFIED_NOTICE = {
  { "(pi-ide) pi changed ", " on disk; your buffer has unsaved changes and was not reloaded. " .. HOW_TO_RESOLVE },
  { "(pi-ide) pi changed ", "; unsaved buffer kept, see :PiIde" },
  { "(pi-ide) pi changed ", "; unsaved, kept (:PiIde)" },
}

--- Once per conflict: until the buffer is written or read again (M.buffer_synced), further changes by pi
--- to the same unsaved buffer are the same conflict.
local function tell_modified(buf, file)
  if H.told[buf] then
    return
  end
  local name = vim.fn.fnamemodify(file, ":~:.")
  H.told[buf] = name
  notice(MODIFIED_NOTICE, name)
end

--- Handle one change: find the buffer, decide, act. Returns the report.
local function handle_change(change, pi_pid)
  local file = change.file
  local report = {
    file = file,
    seq = change.seq,
    pi_pid = pi_pid,
    status = "not-open",
    version = vim.NIL,
    modified = false,
    diagnostics_expected = false,
    diagnostics = vim.NIL,
  }
  local buf = find_buffer(file)
  if not buf then
    return report
  end
  report.buf = buf
  report.modified = vim.bo[buf].modified
  -- Decided on the path the reload reads, the buffer's own: pi's path may be another name for it.
  local path = buffer_path(buf)
  local was = H.read_as[buf]
  if was and was.name ~= path then
    was = nil -- renamed since it was read (:saveas, :file)
  end
  local verdict = M.reload_verdict(was, path and path_identity(path))
  if verdict ~= "reload" then
    report.status = verdict
  elseif report.modified then
    report.status = "modified"
    tell_modified(buf, file)
  else
    H.told[buf] = nil
    report.status = reload(buf) and "reloaded" or "unchanged"
    if report.status == "reloaded" then
      M._reloaded_at[file] = uv.hrtime()
    end
  end
  if vim.api.nvim_buf_is_valid(buf) then
    report.version = vim.api.nvim_buf_get_var(buf, "changedtick")
    report.diagnostics_expected = diagnostics.expected(buf)
  end
  return report
end

local function remember(report)
  for i = #H.reports, 1, -1 do
    if H.reports[i].file == report.file then
      table.remove(H.reports, i)
    end
  end
  H.reports[#H.reports + 1] = report
  while #H.reports > M.MAX_REPORTS do
    table.remove(H.reports, 1)
  end
end

--- Act on one pi message (already validated) from a live pi.
local function handle_message(msg)
  local me = vim.fn.getpid()
  if msg.editor_pid ~= me then
    -- Not (or no longer) connected to us: forget it, act on nothing.
    H.pis[msg.pid] = nil
    return false
  end
  local known = H.pis[msg.pid]
  local handled = known and known.handled or 0
  H.pis[msg.pid] = { message = msg, handled = math.max(handled, msg.seq), at = compat.now() }
  -- Newest change per file, in seq order.
  local newest = {}
  for _, c in ipairs(msg.changed) do
    if c.seq > handled and (not newest[c.file] or newest[c.file].seq < c.seq) then
      newest[c.file] = c
    end
  end
  local todo = vim.tbl_values(newest)
  table.sort(todo, function(a, b)
    return a.seq < b.seq
  end)
  for _, c in ipairs(todo) do
    remember(handle_change(c, msg.pid))
  end
  H.last = { pid = msg.pid, seq = msg.seq }
  return true
end

--- Read and handle `<dir>/<name>` (a `pi-<digits>.json`).
function M._process(name)
  local pid = M.pid_of_name(name)
  if not pid or not H.dir then
    return false
  end
  -- The directory itself may have been swapped or opened up since the watch began.
  if not require("pi-ide.writer").check(H.dir) then
    return false
  end
  local text, why = M.read_file(H.dir .. "/" .. name)
  if not text then
    if why then
      problem(name, why)
    else
      H.pis[pid] = nil -- pi exited and removed its file
    end
    return false
  end
  local ok, msg = pcall(vim.json.decode, text)
  if not ok then
    problem(name, "not valid JSON")
    return false
  end
  local bad = M.validate(msg, pid)
  if bad then
    problem(name, bad)
    return false
  end
  local life = liveness(pid)
  if life ~= "alive" then
    if life == "foreign" then
      problem(name, ("pid %d belongs to another user"):format(pid))
    end
    H.pis[pid] = nil
    return false
  end
  H.alive_at[pid] = compat.now()
  H.problems[name] = nil
  return handle_message(msg)
end

--- statusline() without remembering what it returned.
local function status_text()
  local ok, pi = pcall(M.connected)
  if not ok or not pi then
    return ""
  end
  local n = #pi.last_turn
  return n > 0 and ("pi +%d"):format(n) or "pi"
end

--- Statuslines are evaluated only when Neovim redraws them: when a message changed what statusline() says,
--- ask for that redraw (flush runs from vim.schedule, never in a fast event, where redrawing is not allowed).
local function redraw_statusline_if_changed()
  local text = status_text()
  if text ~= H.status_drawn then
    H.status_drawn = text
    vim.cmd("redrawstatus!")
  end
end

local function flush()
  H.flush_armed = false
  local names = vim.tbl_keys(H.queued)
  H.queued = {}
  local acted = false
  for _, name in ipairs(names) do
    local ok, res = pcall(M._process, name)
    if not ok then
      problem(name, "internal error: " .. tostring(res))
    elseif res then
      acted = true
    end
  end
  -- Also after a pi went away: the statusline and :PiIde should follow.
  if acted or #names > 0 then
    pcall(redraw_statusline_if_changed)
    if H.on_report then
      H.on_report()
    end
  end
end

local function queue(name)
  if not M.pid_of_name(name) then
    return
  end
  H.queued[name] = true
  if not H.flush_armed then
    H.flush_armed = true
    vim.schedule(flush)
  end
end

--- Start watching `dir` (already checked and created by the writer). `on_report` asks for a prompt write.
---@param dir string
---@param on_report fun()
---@return boolean ok
---@return string|nil err
function M.start(dir, on_report)
  M.stop()
  H.dir, H.on_report = dir, on_report
  local handle = uv.new_fs_event()
  if not handle then
    return false, "cannot create a file watcher"
  end
  local ok, err = handle:start(dir, {}, function(werr, filename)
    if not werr then
      queue(filename)
    end
  end)
  if not ok then
    handle:close()
    return false, ("cannot watch %s: %s"):format(dir, tostring(err))
  end
  H.handle = handle
  -- A pi that wrote before this Neovim started.
  local scan = uv.fs_scandir(dir)
  while scan do
    local name = uv.fs_scandir_next(scan)
    if not name then
      break
    end
    queue(name)
  end
  return true
end

function M.stop()
  if H.handle then
    if not H.handle:is_closing() then
      H.handle:stop()
      H.handle:close()
    end
    H.handle = nil
  end
  H.queued, H.flush_armed = {}, false
end

--- DiagnosticChanged & co. Returns true when the state file should be rewritten now.
---@param buf integer
---@param data table|nil the event's args.data (see diagnostics.on_changed)
---@return boolean
function M.diagnostics_changed(buf, data)
  diagnostics.on_changed(buf, data)
  if buf == vim.api.nvim_get_current_buf() then
    return true
  end
  for _, r in ipairs(H.reports) do
    if r.buf == buf then
      return true
    end
  end
  return false
end

function M.forget(buf)
  diagnostics.forget(buf)
  H.told[buf] = nil
  H.read_as[buf] = nil
end

--- BufWritePost, BufReadPost: the buffer and its file agree again, so a conflict with pi's next change is a
--- new one and is told again.
---@param buf integer
function M.buffer_synced(buf)
  H.told[buf] = nil
end

--- BufReadPost: the buffer was read from its path; remember what that path was (see reload_verdict), so a
--- later reload for pi reads only the same file. At read time, not when pi's message comes: by then the
--- path may already have been swapped. Three syscalls per read, nothing per keystroke.
---@param buf integer
function M.buffer_read(buf)
  M.buffer_synced(buf)
  local path = vim.bo[buf].buftype == "" and buffer_path(buf) or nil
  local now = path and path_identity(path)
  if now and now.real and now.resolves_to == "file" then
    H.read_as[buf] = { name = path, type = now.type, real = now.real }
  else
    H.read_as[buf] = nil
  end
end

--- Add the v0.3 fields to a state payload: the protocol version, the active buffer's version and
--- diagnostics, the reports on pi's changes and the last pi message handled.
---@param payload table from state.build()
---@param buf integer the active buffer
function M.annotate(payload, buf)
  payload.protocol = "0.3"
  local b = payload.active_buffer
  b.version = vim.api.nvim_buf_get_var(buf, "changedtick")
  b.diagnostics = diagnostics.collect(buf)
  if #H.reports > 0 then
    local files = {}
    for i, r in ipairs(H.reports) do
      local d = vim.NIL
      if r.buf and vim.api.nvim_buf_is_valid(r.buf) then
        d = diagnostics.collect(r.buf)
      end
      files[i] = {
        file = r.file,
        seq = r.seq,
        status = r.status,
        version = r.version,
        modified = r.modified,
        diagnostics_expected = r.diagnostics_expected,
        diagnostics = d,
        pi_pid = r.pi_pid,
      }
    end
    payload.files = files
  end
  payload.pi = H.last and { pid = H.last.pid, seq = H.last.seq } or vim.NIL
end

--- The pi connected to this Neovim: the most recent live pi whose message names us.
---@return { pid: integer, cwd: string, last_turn: string[] }|nil
function M.connected()
  local best
  local now = compat.now()
  for pid, p in pairs(H.pis) do
    -- kill(pid, 0) at most every 2 s: the statusline calls this on every redraw.
    if now - (H.alive_at[pid] or 0) > 2 then
      if liveness(pid) == "alive" then
        H.alive_at[pid] = now
      else
        H.pis[pid] = nil
        p = nil
      end
    end
    if p and (not best or p.at > best.at) then
      best = p
    end
  end
  if not best then
    return nil
  end
  local m = best.message
  return { pid = m.pid, cwd = type(m.cwd) == "string" and m.cwd or "", last_turn = m.last_turn or {} }
end

--- For statuslines: "" without a connected pi, "pi" with one, "pi +N" when its last turn changed N files.
---@return string
function M.statusline()
  H.status_drawn = status_text()
  return H.status_drawn
end

--- Lines for :PiIde.
---@return string[]
function M.summary_lines()
  local lines = {}
  local pi = M.connected()
  if pi then
    lines[#lines + 1] = ("pi: connected, pid %d, cwd %s"):format(pi.pid, pi.cwd)
    if #pi.last_turn > 0 then
      local names = {}
      for i, f in ipairs(pi.last_turn) do
        names[i] = vim.fn.fnamemodify(f, ":~:.")
      end
      lines[#lines + 1] = "pi changed in its last turn: " .. table.concat(names, ", ")
    else
      lines[#lines + 1] = "pi changed no files in its last turn"
    end
  else
    lines[#lines + 1] = "pi: none connected"
  end
  local told = vim.tbl_keys(H.told)
  table.sort(told)
  for _, buf in ipairs(told) do
    if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
      lines[#lines + 1] = ("not reloaded: pi changed %s on disk, your unsaved changes were kept. %s"):format(
        H.told[buf],
        HOW_TO_RESOLVE
      )
    end
  end
  local names = vim.tbl_keys(H.problems)
  table.sort(names)
  for _, name in ipairs(names) do
    lines[#lines + 1] = ("ignored %s: %s"):format(name, H.problems[name])
  end
  return lines
end

--- For tests.
function M._state()
  return { reports = H.reports, last = H.last, problems = H.problems, watching = H.handle ~= nil }
end

return M
