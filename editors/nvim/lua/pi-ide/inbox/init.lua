--- pi-ide.inbox: protocol v0.3, pi -> editor. pi writes `<state dir>/pi-<pid>.json` naming the editor it is
--- connected to and the files its tools changed. This module watches the state directory (one libuv
--- fs_event: no polling), reads those files (pi-ide.inbox.read) and checks them (pi-ide.inbox.message), and
--- for a live pi of ours that names this Neovim (pi-ide.inbox.pis), acts on the changed files this Neovim
--- already has loaded:
---
--- * unmodified buffer: reloaded from disk when its path is still what it was read from
---   (pi-ide.inbox.reload);
--- * buffer with unsaved changes: never touched; the user is told once per conflict (until the buffer is
---   written or read again), in one line naming the file (pi-ide.notice), and :PiIde says how to
---   compare or reload.
---
--- It never opens, runs or deletes anything because a message said so. Each outcome becomes a `files` report
--- in our state file (with the buffer's diagnostics), and `pi` says which message was handled last.
--- Malformed, oversized or foreign messages are ignored with one diagnostic (in :PiIde), never an error.
---@module 'pi-ide.inbox'
local compat = require("pi-ide.compat")
local diagnostics = require("pi-ide.diagnostics")
local identity = require("pi-ide.inbox.identity")
local merge = require("pi-ide.inbox.merge")
local message = require("pi-ide.inbox.message")
local notice = require("pi-ide.notice")
local pis = require("pi-ide.inbox.pis")
local read = require("pi-ide.inbox.read")
local reload = require("pi-ide.inbox.reload")
local uv = compat.uv

local M = {}

--- `files` holds at most MAX_REPORTS reports (pi reads no more: MAX_FILE_REPORTS of src/protocol/limits.ts),
--- kept by what pi still lists, never by a clock (PROTOCOL.md `files`, v0.5): each pi's newest KEPT_REPORTS, and
--- every report on a change (file and seq) that pi's newest message still lists in `changed` (pi-ide.inbox.pis
--- `listed`). pi writing 200 files in one run, or slow to read them, then finds every answer, and a second pi's
--- reports never push out the first's.
M.MAX_REPORTS = 200
M.KEPT_REPORTS = 20
--- New unsaved conflicts within this long of each other are told in one notice.
M.CONFLICT_DEBOUNCE_MS = 150

local H = {
  dir = nil, ---@type string|nil
  handle = nil, ---@type userdata|nil the fs_event
  queued = {}, ---@type table<string, boolean> file names waiting to be read
  flush_armed = false,
  on_report = nil, ---@type fun()|nil asks init.lua for a prompt state write
  on_lost = nil, ---@type fun()|nil the watched directory was deleted or replaced: start over (pi-ide.v03)
  watched = nil, ---@type { dev: integer, ino: integer }|nil the directory the watcher is on
  dir_check_armed = false,
  reports = {}, ---@type table[] newest last, at most MAX_REPORTS
  last = nil, ---@type { pid: integer, seq: integer }|nil
  was_connected = false, -- a pi connected at the last look (notice_connection)
  problems = {}, ---@type table<string, string> file name -> why it was ignored (each said once)
  told = {}, ---@type table<integer, string> buffer -> file name, for the "unsaved, not reloaded" said
  told_where = {}, ---@type table<integer, string> buffer -> "line N"/"lines N-M" of a merge's conflict (issue 26)
  conflicts_armed = false, -- a notice naming every unsaved conflict is due
  --- Issue 26: where merges' conflicts stand in each buffer (extmarks: they move with the lines), for :PiIde hunks
  conflict_ns = vim.api.nvim_create_namespace("pi-ide-conflict"),
  status_drawn = "", -- what statusline() last returned, i.e. what statuslines show
  alive_timer = nil, ---@type userdata|nil while a pi is recorded: is it still running?
}

--- For the benchmark: when the last reload happened (uv.hrtime()), per file.
M._reloaded_at = {}

--- Say once per file name why a message was ignored (rate-limited: see notice.warn); keep it (whole) for
--- :PiIde.
local function problem(name, why)
  if H.problems[name] == why then
    return
  end
  H.problems[name] = why
  notice.warn({ { "(pi-ide) ignoring ", ": " .. why }, { "(pi-ide) ignoring ", " (why: :PiIde)" } }, name)
end

--- :PiIde diff shows the file on disk beside the buffer (pi-ide.inbox.compare), never reloading it.
local HOW_TO_RESOLVE = "Compare: :PiIde diff   Take pi's version: :e!"

--- Longest first: the whole story when the message line is wide enough, else the file and :PiIde.
local MODIFIED_NOTICE = {
  { "(pi-ide) pi changed ", " on disk; your buffer has unsaved changes and was not reloaded. " .. HOW_TO_RESOLVE },
  { "(pi-ide) pi changed ", "; unsaved buffer kept, see :PiIde diff" },
  { "(pi-ide) pi changed ", "; unsaved, kept (:PiIde)" },
}

--- The same for several files, `%d` their number and the names a list.
local CONFLICTS_NOTICE = {
  { "(pi-ide) pi changed %d files you have unsaved edits in: ", " — :PiIde diff" },
  { "(pi-ide) pi changed %d unsaved files: ", " (:PiIde)" },
}

--- The buffers in conflict now (told, still unsaved), by buffer number.
local function open_conflicts()
  local bufs = {}
  for buf in pairs(H.told) do
    if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].modified then
      bufs[#bufs + 1] = buf
    end
  end
  table.sort(bufs)
  return bufs
end

--- One merge's conflict (issue 26): pi's other hunks are in the buffer, these lines are the user's.
local function conflict_notice(where)
  return {
    { "(pi-ide) pi's change to ", (" touches your unsaved %s: kept yours. Compare: :PiIde diff"):format(where) },
    { "(pi-ide) pi's change to ", (" conflicts at %s; see :PiIde diff"):format(where) },
    { "(pi-ide) conflict in ", " (:PiIde diff)" },
  }
end

local function show_conflicts()
  H.conflicts_armed = false
  local bufs = open_conflicts()
  if #bufs == 1 and H.told_where[bufs[1]] then
    notice.show(conflict_notice(H.told_where[bufs[1]]), H.told[bufs[1]])
  elseif #bufs == 1 then
    notice.show(MODIFIED_NOTICE, H.told[bufs[1]])
  elseif #bufs > 1 then
    local names = vim.tbl_map(function(buf)
      return H.told[buf]
    end, bufs)
    local variants = vim.tbl_map(function(v)
      return { v[1]:format(#bufs), v[2] }
    end, CONFLICTS_NOTICE)
    notice.show(variants, table.concat(names, ", "))
  end
end

--- Once per conflict: until the buffer is written or read again (M.buffer_synced), further changes by pi
--- to the same unsaved buffer are the same conflict. New conflicts of one run (pi writing several files)
--- are said together: one notice, shortly after the last, naming every unsaved file pi changed. A notice
--- per file would leave only the last one on screen.
local function tell_modified(buf, file, where)
  if H.told[buf] then
    return
  end
  H.told[buf] = vim.fn.fnamemodify(file, ":~:.")
  H.told_where[buf] = where
  if not H.conflicts_armed then
    H.conflicts_armed = true
    vim.defer_fn(function()
      pcall(show_conflicts)
    end, M.CONFLICT_DEBOUNCE_MS)
  end
end

--- Issue 26: remember where a merge's `conflicts` stand in `buf` (the user's lines kept there), listed by :PiIde
--- hunks with pi's hunks until the buffer and its file agree again. Invisible extmarks: they follow the lines.
local function list_conflicts(buf, conflicts)
  local count = vim.api.nvim_buf_line_count(buf)
  for _, c in ipairs(conflicts) do
    local row = math.max(0, math.min(c.line - 1, count - 1))
    local opts = { right_gravity = false }
    if c.lines > 0 then
      opts.end_row, opts.end_col = math.min(row + c.lines - 1, count - 1), 0
    end
    pcall(vim.api.nvim_buf_set_extmark, buf, H.conflict_ns, row, 0, opts)
  end
end

local function unlist_conflicts(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, H.conflict_ns, 0, -1)
  end
end

--- "line N" or "lines N-M" for a conflict's lines.
local function lines_phrase(c)
  if c.lines <= 1 then
    return ("line %d"):format(c.line)
  end
  return ("lines %d-%d"):format(c.line, c.line + c.lines - 1)
end

--- Merge pi's `chain` (its new changes of the file, oldest first; `handled`: the seq this pi had before) into
--- the modified `buf` (pi-ide.inbox.merge), when every change carries its hunks and they follow each other from
--- what this Neovim already handled. nil: not merged (an older pi, a change too large to carry, a file not
--- what pi wrote): the buffer is untouched and reported `modified`, as before.
local function try_merge(buf, chain, handled)
  for i, c in ipairs(chain) do
    local parsed = c.merge ~= nil and merge.parse(c.merge) or nil
    if not parsed then
      return nil
    end
    local prev = parsed.prev_seq
    if (i == 1 and prev and prev > handled) or (i > 1 and prev ~= chain[i - 1].seq) then
      return nil -- a change of this file in between is not in the message: its base is unknown
    end
    chain[i] = { seq = c.seq, merge = parsed }
  end
  local ok, outcome = pcall(merge.merge, buf, chain, reload.read_disk(buf))
  return ok and outcome or nil
end

--- Handle one change: find the buffer, decide, act. Returns the report. `chain`: this pi's new changes of the
--- file, oldest first (the change is the last), for a merge; `handled`: the seq this pi had before.
local function handle_change(change, pi_pid, pi_ns, chain, handled)
  local file = change.file
  local report = {
    file = file,
    seq = change.seq,
    pi_pid = pi_pid,
    pi_ns = pi_ns, -- v0.5: exactly as pi's file said; nil leaves it out
    status = "not-open",
    version = vim.NIL,
    modified = false,
    diagnostics_expected = false,
    diagnostics = vim.NIL,
  }
  local buf = reload.find_buffer(file)
  if not buf then
    return report
  end
  report.buf = buf
  report.modified = vim.bo[buf].modified
  local verdict = reload.verdict(buf)
  if verdict ~= "reload" then
    report.status = verdict
  elseif report.modified then
    local outcome = try_merge(buf, chain or { change }, handled or 0)
    if not outcome then
      report.status = "modified"
      tell_modified(buf, file)
    else
      report.status = outcome.status
      report.merge = { hunks = outcome.hunks, merged = outcome.merged, conflicts = outcome.conflicts }
      if outcome.status == "merged" then
        reload.record_on_disk(buf) -- the buffer has pi's change: a :w must not say the file changed
      else
        list_conflicts(buf, outcome.conflicts)
        tell_modified(buf, file, lines_phrase(outcome.conflicts[1]))
      end
    end
  else
    H.told[buf] = nil
    unlist_conflicts(buf)
    report.status = reload.reload(buf)
    if report.status == "reloaded" then
      M._reloaded_at[file] = uv.hrtime()
      require("pi-ide.review").reloaded(buf)
    end
  end
  if vim.api.nvim_buf_is_valid(buf) then
    report.version = vim.api.nvim_buf_get_var(buf, "changedtick")
    report.diagnostics_expected = diagnostics.expected(buf)
  end
  return report
end

--- Pure: which of `reports` (newest last) to keep: per pi its newest KEPT_REPORTS, and those on a change (file
--- and seq) its newest message lists (`listed`: pi's key (pi-ide.inbox.identity) -> its `changed` entries); at
--- most MAX_REPORTS, the newest.
---@param reports table[]
---@param listed table<string, { file: string, seq: integer }[]>
---@return table[]
function M.retain(reports, listed)
  local lookup = {}
  for key, changed in pairs(listed) do
    local set = {}
    for _, c in ipairs(changed) do
      set[c.seq .. "\0" .. c.file] = true
    end
    lookup[key] = set
  end
  local kept, per_pi = {}, {}
  for i = #reports, 1, -1 do
    if #kept >= M.MAX_REPORTS then
      break
    end
    local r = reports[i]
    local pi = identity.key(r.pi_pid or 0, r.pi_ns)
    per_pi[pi] = (per_pi[pi] or 0) + 1
    if per_pi[pi] <= M.KEPT_REPORTS or (lookup[pi] and lookup[pi][r.seq .. "\0" .. r.file]) then
      kept[#kept + 1] = r
    end
  end
  local out = {}
  for i = #kept, 1, -1 do
    out[#out + 1] = kept[i]
  end
  return out
end

--- Add `report`, replacing this pi's earlier report on the same file (another pi's stays: see retain).
local function remember(report)
  for i = #H.reports, 1, -1 do
    local r = H.reports[i]
    if
      r.file == report.file
      and identity.key(r.pi_pid or 0, r.pi_ns) == identity.key(report.pi_pid or 0, report.pi_ns)
    then
      table.remove(H.reports, i)
    end
  end
  H.reports[#H.reports + 1] = report
  H.reports = M.retain(H.reports, pis.listed())
end

--- Act on one pi message (already validated) from pi `ident` (live, or of another namespace).
local function handle_message(msg, ident)
  local me = vim.fn.getpid()
  if msg.editor_pid ~= me then
    -- Not (or no longer) connected to us: forget it, act on nothing.
    pis.forget(ident.key)
    require("pi-ide.approval").forget(ident.key)
    return false
  end
  local handled = pis.handled(ident.key)
  pis.record(msg, ident)
  pcall(require("pi-ide.send").answered, msg) -- v0.5: what became of our send
  -- Newest change per file, in seq order; and each file's new changes, oldest first (for a merge).
  local newest, chains = {}, {}
  for _, c in ipairs(msg.changed) do
    if c.seq > handled and (not newest[c.file] or newest[c.file].seq < c.seq) then
      newest[c.file] = c
    end
    if c.seq > handled then
      chains[c.file] = chains[c.file] or {}
      table.insert(chains[c.file], c)
    end
  end
  for _, chain in pairs(chains) do
    table.sort(chain, function(a, b)
      return a.seq < b.seq
    end)
  end
  local todo = vim.tbl_values(newest)
  table.sort(todo, function(a, b)
    return a.seq < b.seq
  end)
  for _, c in ipairs(todo) do
    remember(handle_change(c, msg.pid, msg.pid_ns, chains[c.file], handled))
  end
  H.last = { pid = msg.pid, seq = msg.seq }
  -- v0.4: pi wrote its change set before this message; marks go on the buffers as reloaded above.
  local why = require("pi-ide.review").load(H.dir, ident)
  if why then
    problem(identity.file_name("review", ident.pid, ident.ns), why)
  end
  return true
end

--- Read `<dir>/<name>`, a `pi-<digits>.approval.json` (v0.4): only a live pi of ours counts (v0.5: checked only
--- for a pi of this Neovim's namespace).
local function process_approval(name, ident)
  local approval = require("pi-ide.approval")
  local life = identity.judges(ident.ns) and pis.liveness(ident.pid) or "alive"
  if life ~= "alive" then
    if life == "foreign" then
      problem(name, ("pid %d belongs to another user"):format(ident.pid))
    end
    approval.forget(ident.key)
    return true
  end
  local why = approval.load(H.dir, ident)
  if why then
    problem(name, why)
  else
    H.problems[name] = nil
  end
  return true
end

--- Read `<dir>/<name>`, a `pi-<digits>.ask.json` (v0.5 show and ask): only a live pi of ours counts (checked
--- only for a pi of this Neovim's namespace, as approval's).
local function process_ask(name, ident)
  local life = identity.judges(ident.ns) and pis.liveness(ident.pid) or "alive"
  if life ~= "alive" then
    if life == "foreign" then
      problem(name, ("pid %d belongs to another user"):format(ident.pid))
    end
    return false
  end
  local why = require("pi-ide.ask").load(H.dir, ident)
  if why then
    problem(name, why)
  else
    H.problems[name] = nil
  end
  return false
end

--- Read and handle `<dir>/<name>` (a `pi-<digits>.json`, a `pi-<digits>.approval.json` or `.ask.json`).
function M._process(name)
  local ident = identity.parse_name(name)
  if not ident or ident.kind == "review" or not H.dir then
    return false
  end
  local pid = ident.pid
  -- The directory itself may have been swapped or opened up since the watch began.
  if not require("pi-ide.writer").check(H.dir) then
    return false
  end
  if ident.kind == "approval" then
    return process_approval(name, ident)
  end
  if ident.kind == "ask" then
    return process_ask(name, ident)
  end
  local ok, msg = read.read_json(H.dir .. "/" .. name)
  if not ok then
    if msg then
      problem(name, msg)
    else
      pis.forget(ident.key) -- pi exited and removed its file
      require("pi-ide.approval").forget(ident.key)
      H.problems[name] = nil
    end
    return false
  end
  local bad = message.validate(msg, pid) or identity.disagreement(ident, msg.pid_ns)
  if bad then
    problem(name, bad)
    return false
  end
  -- v0.5: kill(pid, 0) judges only a pi of this Neovim's own namespace; another's pid names another process
  -- here, or none, so its message is acted on without the check (it passed every other one).
  local life = identity.judges(ident.ns) and pis.liveness(pid) or "alive"
  if life ~= "alive" then
    if life == "foreign" then
      problem(name, ("pid %d belongs to another user"):format(pid))
    end
    pis.forget(ident.key)
    return false
  end
  H.problems[name] = nil
  return handle_message(msg, ident)
end

--- Statuslines are evaluated only when Neovim redraws them: when a message changed what statusline() says,
--- ask for that redraw (flush runs from vim.schedule, never in a fast event, where redrawing is not allowed).
--- The statusline's text: the connected pi (pi-ide.inbox.pis) and a request waiting for approval.
local function status_text()
  local waits = require("pi-ide.approval").status_text()
  local text = pis.status_text()
  if waits == "" then
    return text
  end
  return text == "" and waits or (text .. " " .. waits)
end

local function redraw_statusline_if_changed()
  local text = status_text()
  if text ~= H.status_drawn then
    H.status_drawn = text
    vim.cmd("redrawstatus!")
  end
end

--- Whether a pi was connected at the last look: the unsaved buffers (pi-ide.buffers) are handed over only while
--- one is, so a change either way asks for a prompt state write (which writes or removes them).
local function notice_connection()
  local now = pis.connected() ~= nil
  if now ~= (H.was_connected == true) then
    H.was_connected = now
    if H.on_report then
      H.on_report()
    end
  end
end

--- While a pi is recorded, check every CHECK_EVERY_S that it still runs: a pi killed (SIGKILL, a crash)
--- leaves its message file, and no event says it went. Stops once no pi is left: nothing runs without a pi.
local function watch_pis_alive()
  if H.alive_timer or not pis.any() then
    return
  end
  H.alive_timer = uv.new_timer()
  local every = pis.CHECK_EVERY_S * 1000
  H.alive_timer:start(
    every,
    every,
    vim.schedule_wrap(function()
      pcall(redraw_statusline_if_changed)
      pcall(notice_connection)
      if not pis.any() and H.alive_timer then
        H.alive_timer:stop()
        H.alive_timer:close()
        H.alive_timer = nil
      end
    end)
  )
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
    pcall(watch_pis_alive)
    H.was_connected = pis.connected() ~= nil
    if H.on_report then
      H.on_report()
    end
  end
end

local function queue(name)
  local ident = identity.parse_name(name)
  if not ident or ident.kind == "review" then
    return
  end
  H.queued[name] = true
  if not H.flush_armed then
    H.flush_armed = true
    vim.schedule(flush)
  end
end

--- The directory at `dir` as (dev, ino), nil when it is not a directory.
local function dir_identity(dir)
  local st = uv.fs_lstat(dir)
  return st and st.type == "directory" and { dev = st.dev, ino = st.ino } or nil
end

--- Is the watcher on the directory that is at the state dir's path now? The directory deleted (the README's
--- advice for a stale one) or replaced leaves a watcher on a dead directory, which hears nothing.
---@return boolean
function M.watching()
  if not H.handle or not H.dir or not H.watched then
    return false
  end
  local now = dir_identity(H.dir)
  return now ~= nil and now.dev == H.watched.dev and now.ino == H.watched.ino
end

--- After a watcher event (a deleted directory sends one, as the watch ends) and before each state write:
--- if the watched directory is no longer the one at the path, start over (on_lost).
function M.check_dir()
  if H.handle and H.on_lost and not M.watching() then
    H.on_lost()
  end
end

local function arm_dir_check()
  if not H.dir_check_armed then
    H.dir_check_armed = true
    vim.schedule(function()
      H.dir_check_armed = false
      pcall(M.check_dir)
    end)
  end
end

--- Start watching `dir` (already checked and created by the writer). `on_report` asks for a prompt write;
--- `on_lost` is called when the directory is deleted or replaced (see check_dir).
---@param dir string
---@param on_report fun()
---@param on_lost fun()|nil
---@return boolean ok
---@return string|nil err
function M.start(dir, on_report, on_lost)
  M.stop()
  H.dir, H.on_report, H.on_lost = dir, on_report, on_lost
  H.watched = dir_identity(dir)
  require("pi-ide.review").on_change = on_report
  require("pi-ide.approval").on_change = function()
    pcall(redraw_statusline_if_changed)
    on_report()
  end
  local handle = uv.new_fs_event()
  if not handle then
    return false, "cannot create a file watcher"
  end
  local ok, err = handle:start(dir, {}, function(werr, filename)
    arm_dir_check()
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
  if H.alive_timer then
    H.alive_timer:stop()
    H.alive_timer:close()
    H.alive_timer = nil
  end
  -- Not listening any more: no pi is connected, whatever it last said (the statusline and :PiIde follow).
  pis.reset()
  H.was_connected = false
  require("pi-ide.approval").reset()
  vim.schedule(function()
    pcall(redraw_statusline_if_changed)
  end)
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
  H.told[buf], H.told_where[buf] = nil, nil
  unlist_conflicts(buf)
  reload.forget(buf)
  merge.forget(buf)
  require("pi-ide.review").forget_buffer(buf)
end

--- BufWritePost, BufReadPost: the buffer and its file agree again, so a conflict with pi's next change is a
--- new one and is told again.
---@param buf integer
function M.buffer_synced(buf)
  H.told[buf], H.told_where[buf] = nil, nil
  unlist_conflicts(buf)
end

--- Issue 26: the quickfix items of merges' conflicts in buffers still modified (:PiIde hunks lists them with pi's
--- hunks): one per place, on the user's lines kept there.
---@return table[]
function M.conflict_items()
  local items = {}
  for _, buf in ipairs(open_conflicts()) do
    local file = reload.buffer_path(buf) or vim.api.nvim_buf_get_name(buf)
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, H.conflict_ns, 0, -1, { details = true })) do
      local first, last = m[2] + 1, (m[4].end_row or m[2]) + 1
      local where = m[4].end_row == nil and ("line %d (you deleted pi's lines there)"):format(first)
        or lines_phrase({ line = first, lines = last - first + 1 })
      items[#items + 1] = {
        filename = file,
        lnum = first,
        end_lnum = last,
        text = ("conflict: your unsaved %s kept; pi's version is on disk (:PiIde diff)"):format(where),
      }
    end
  end
  return items
end

--- BufReadPost: see pi-ide.inbox.reload.buffer_read; and a later conflict with pi is told again.
---@param buf integer
function M.buffer_read(buf)
  M.buffer_synced(buf)
  reload.buffer_read(buf)
  require("pi-ide.review").buffer_read(buf)
  require("pi-ide.approval").buffer_read(buf)
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
  H.reports = M.retain(H.reports, pis.listed())
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
        pi_ns = r.pi_ns,
        merge = r.merge, -- issue 26: only for `merged` and `conflict`, which only a pi that sent hunks gets
      }
    end
    payload.files = files
  end
  payload.pi = H.last and { pid = H.last.pid, seq = H.last.seq } or vim.NIL
  payload.reverted = require("pi-ide.review").report() -- v0.4; nil leaves the field out
  payload.decisions = require("pi-ide.approval").report() -- v0.4; always written: it says we answer approvals
end

--- For statuslines: "" without a connected pi, "pi" with one, "pi +N" when its last turn changed N files.
---@return string
function M.statusline()
  H.status_drawn = status_text()
  return H.status_drawn
end

--- :PiIde diff: the current buffer (else the first unsaved one pi changed) beside its file on disk.
---@return string|nil problem
function M.compare()
  return require("pi-ide.inbox.compare").open(open_conflicts())
end

--- :PiIde lists this many ignored messages, then counts the rest: a flood of them must not fill the screen.
M.MAX_PROBLEM_LINES = 5

--- Lines for :PiIde. Everything from pi's messages is made inert (notice.inert): a line break in a cwd or a
--- file name must not break the listing.
---@return string[]
function M.summary_lines()
  local inert = notice.inert
  local lines = {}
  local pi = pis.connected()
  if pi then
    lines[#lines + 1] = ("pi: connected, pid %d, cwd %s"):format(pi.pid, inert(pi.cwd))
    if #pi.last_turn > 0 then
      local names = {}
      for i, f in ipairs(pi.last_turn) do
        names[i] = inert(vim.fn.fnamemodify(f, ":~:."))
      end
      lines[#lines + 1] = "pi changed in its last turn: " .. table.concat(names, ", ")
    else
      lines[#lines + 1] = "pi changed no files in its last turn"
    end
  else
    lines[#lines + 1] = "pi: none connected"
  end
  vim.list_extend(lines, require("pi-ide.approval").summary_lines())
  if H.dir and not M.watching() then
    lines[#lines + 1] = ("not watching %s for pi's messages (missing, or replaced since the watch began)"):format(
      inert(H.dir)
    )
  end
  for _, buf in ipairs(open_conflicts()) do
    if H.told_where[buf] then
      -- Issue 26: pi's other hunks were merged; these lines are yours, pi's version of them is on disk.
      lines[#lines + 1] = ("conflict: pi's change to %s touches your unsaved %s, kept yours. %s"):format(
        inert(H.told[buf]),
        H.told_where[buf],
        HOW_TO_RESOLVE
      )
    else
      lines[#lines + 1] = ("not reloaded: pi changed %s on disk, your unsaved changes were kept. %s"):format(
        inert(H.told[buf]),
        HOW_TO_RESOLVE
      )
    end
  end
  local names = vim.tbl_keys(H.problems)
  table.sort(names)
  for i, name in ipairs(names) do
    if i > M.MAX_PROBLEM_LINES then
      lines[#lines + 1] = ("ignored %d more pi message files (malformed or not ours)"):format(#names - i + 1)
      break
    end
    lines[#lines + 1] = ("ignored %s: %s"):format(inert(name), inert(H.problems[name]))
  end
  return lines
end

--- For tests.
function M._state()
  return { reports = H.reports, last = H.last, problems = H.problems, watching = M.watching() }
end

return M
