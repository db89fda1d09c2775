--- pi-ide: writes this editor's state (file, cursor, selection, cwd) to `<state_dir>/<pid>.json` for the pi
--- coding agent, following protocol v0.2. See `:help pi-ide`.
---
--- Shape: one augroup, one timer. Events only mark the state dirty and arm the timer; the snapshot, the
--- encoding and the write happen when it fires, so a burst of cursor moves costs one write. Everything an
--- autocmd runs is wrapped in pcall: a bug or an I/O failure here must never surface as an error while the
--- user is typing, and it is reported once, not on every keystroke.
---@module 'pi-ide'
local compat = require("pi-ide.compat")
local config = require("pi-ide.config")
local uv = compat.uv

local M = {}
local H = {}

---@type PiIdeConfig
H.config = vim.deepcopy(config.defaults)
H.configured = false -- setup() or the autostart ran
H.enabled = false
H.group = nil ---@type integer|nil
H.timer = nil ---@type userdata|nil
-- nil = no write pending, "soon" = debounced write armed, "now" = prompt write armed.
H.pending = nil ---@type nil|"soon"|"now"
H.sel = {} ---@type table<integer, PiIdeSelRecord> per-buffer record of the last selection made
H.warned = {} ---@type table<string, boolean>
H.argv = nil ---@type string[]|nil computed once: launch args never change
-- A UI is attached (the TUI, a GUI over --embed, --remote-ui). Without one this Neovim is a script
-- (`nvim --headless +qa`, a plugin-manager sync): it writes no state file and is never offered to pi.
H.ui = false
-- What :PiIde and :checkhealth show, and what tests and the benchmark read.
H.stats = {
  dir = nil, ---@type string|nil
  path = nil, ---@type string|nil
  writes = 0,
  skipped = 0,
  failures = 0,
  last_write = nil, ---@type number|nil unix seconds
  last_error = nil, ---@type string|nil
  last_payload = nil, ---@type table|nil
  written = false, -- our file exists (so disable/exit must remove it)
}
H.last_content = nil ---@type string|nil
-- Prompt writes are spaced at least this far apart: the first one after a pause goes out on the next
-- event-loop turn (the pill is not delayed), a burst (1,000 visual toggles) costs one write per gap instead of
-- one per toggle.
H.prompt_gap_ms = 20
H.last_write_ms = nil ---@type number|nil uv.now() of the last write attempt

--- Warn once per key, in one line (pi-ide.notice: a longer warning, e.g. about a state dir of another user
--- at startup, would open a hit-enter prompt; :PiIde repeats it whole). Scheduled there: vim.notify inside
--- some autocmds, e.g. textlock, is not allowed.
local function warn_once(key, msg)
  if H.warned[key] then
    return
  end
  H.warned[key] = true
  require("pi-ide.notice").line(msg)
end

--- Run `fn` so that nothing escapes into the editor. Autocmd callbacks must also return nil: on 0.10 any
--- truthy return value deletes the autocmd.
local function guard(fn, ...)
  local ok, err = pcall(fn, ...)
  if not ok then
    warn_once("internal", "(pi-ide) internal error, please report it: " .. tostring(err))
  end
end

--- Take a snapshot of the current window/buffer. Only called when a write is due.
---@return PiIdeSnapshot
local function snapshot()
  local api = vim.api
  local selection = require("pi-ide.selection")
  local state = require("pi-ide.state")
  -- In a terminal or another non-file buffer, describe the file the user was last in (pi-ide.focus).
  local current = api.nvim_get_current_buf()
  local buf, cursor, fallback = require("pi-ide.focus").target(current, api.nvim_get_current_win())
  local mode = fallback and "n" or api.nvim_get_mode().mode
  if not H.argv then
    H.argv = state.filter_argv(vim.v.argv)
    H.pid_ns = state.pid_namespace()
  end
  local name = api.nvim_buf_get_name(buf)
  local buftype = vim.bo[buf].buftype
  local sel, at = selection.read(buf, mode, H.sel[buf], compat.now(), H.config.max_selection_bytes)
  return {
    pid = vim.fn.getpid(),
    cwd = vim.fn.getcwd(),
    argv = H.argv,
    pid_ns = H.pid_ns,
    -- ":p" makes sure the path is absolute even for buffers named relative to an old cwd.
    bufname = (name ~= "" and buftype == "") and vim.fn.fnamemodify(name, ":p") or name,
    buftype = buftype,
    filetype = vim.bo[buf].filetype,
    modified = vim.bo[buf].modified,
    lines_total = api.nvim_buf_line_count(buf),
    cursor = cursor,
    selection = sel,
    selected_at = at,
  }
end

--- Write the state file now, unless its content would not change. Returns ok, err.
---@return boolean ok
---@return string|nil err
function H.write_now()
  -- No UI yet (a script, or a GUI that has not attached), or exiting (a deferred write during exit would
  -- recreate the file VimLeavePre just removed): nothing to write.
  if not H.ui or vim.v.exiting ~= vim.NIL then
    return true
  end
  local state = require("pi-ide.state")
  local writer = require("pi-ide.writer")
  local payload = state.build(snapshot())
  require("pi-ide.inbox").annotate(payload, vim.api.nvim_get_current_buf()) -- protocol v0.3 fields
  local now = compat.now()
  -- v0.5: the unsaved buffers' texts, written before the state file that names them.
  local after_buffers = H.write_buffers(payload, now)
  local content, text = state.encode(payload, now)
  if content ~= nil and content == H.last_content then
    H.stats.skipped = H.stats.skipped + 1
    return true
  end
  local dir = H.stats.dir
  local ok, err, insecure
  if content == nil then
    ok, err = false, text
  else
    ok, err, insecure = writer.ensure_dir(dir)
  end
  if ok then
    -- Also here, not only on the watcher's event: the directory may have gone while nothing was heard.
    pcall(require("pi-ide.inbox").check_dir)
    ok, err = writer.write(dir, vim.fn.getpid(), text)
  end
  if not ok then
    H.stats.failures = H.stats.failures + 1
    H.stats.last_error = err
    -- One warning per failure spell, not one per cursor move; a later success re-arms it.
    warn_once(insecure and "insecure" or "write", "(pi-ide) not writing the state file: " .. tostring(err))
    return false, err
  end
  H.warned.write, H.warned.insecure = nil, nil
  if after_buffers then
    after_buffers()
  end
  H.last_content = content
  H.stats.writes = H.stats.writes + 1
  H.stats.last_write = now
  H.stats.last_error = nil
  H.stats.last_payload = payload
  H.stats.written = true
  local armed, aerr = require("pi-ide.exit").arm(H.stats.path)
  if not armed then
    warn_once("exit-guard", "(pi-ide) the state file may outlive a crash: " .. tostring(aerr))
  end
  return true
end

--- v0.5: while a pi is connected, write `<pid>.buffers.json` when the modified buffers changed and name it in
--- `payload` (buffers_serial).
--- Returns what to run once the state file is written (the removal of a sidecar it no longer names), or nil. A
--- failure is warned once and leaves the state file without the field: pi then reads the disk, as before.
---@param payload table
---@param now number
---@return fun()|nil
function H.write_buffers(payload, now)
  local dir = H.stats.dir
  if not dir or not require("pi-ide.writer").check(dir) then
    return nil
  end
  -- Only while a pi is connected (issue 26: nothing is added to a keystroke without one); the inbox asks for a
  -- write as soon as that changes (pi-ide.inbox, notice_connection).
  local wanted = require("pi-ide.inbox.pis").connected() ~= nil
  local ok, serial, after =
    require("pi-ide.buffers").prepare(dir, vim.fn.getpid(), vim.api.nvim_get_current_buf(), now, wanted)
  if not ok then
    warn_once("buffers", "(pi-ide) not handing the unsaved buffers to pi: " .. tostring(serial))
    return nil
  end
  H.warned.buffers = nil
  payload.buffers_serial = serial
  return after
end

H.on_timer = function()
  H.pending = nil
  if H.enabled then
    uv.update_time()
    H.last_write_ms = uv.now()
    guard(H.write_now)
  end
end

--- How long a prompt write must wait to keep `prompt_gap_ms` after the last write.
local function prompt_wait()
  if not H.last_write_ms then
    return 0
  end
  uv.update_time()
  return math.max(0, H.last_write_ms + H.prompt_gap_ms - uv.now())
end

--- Ask for a write: `urgent` ones go out on the next loop iteration (or, in a burst, `prompt_gap_ms` after
--- the last write: all urgent requests meanwhile share that one write), the rest are coalesced for
--- `debounce_ms`. The timer is armed by the first event and not re-armed by later ones, so continuous
--- movement still writes every `debounce_ms` (at most 5/s at 200 ms) instead of never.
---@param urgent boolean
function H.schedule(urgent)
  if not H.enabled then
    return
  end
  if urgent then
    if H.pending ~= "now" then
      H.pending = "now"
      -- Starting an armed libuv timer re-arms it: the debounced write becomes this prompt one.
      H.timer:start(prompt_wait(), 0, H.on_timer_wrapped)
    end
  elseif H.pending == nil then
    H.pending = "soon"
    -- libuv times from the loop's cached "now", which lags when the loop was busy; refresh it so the
    -- window is `debounce_ms` of real time and the 5-writes-a-second bound holds under load too.
    uv.update_time()
    H.timer:start(H.config.debounce_ms, 0, H.on_timer_wrapped)
  end
end

-- Autocmd handlers. Each returns nothing (see guard()).
H.handlers = {}

function H.handlers.soon()
  H.schedule(false)
end

function H.handlers.now()
  H.schedule(true)
end

--- Cursor moves: in visual mode they also move the selection tracker (see selection.track), synchronously,
--- because an operator (`d`, `c`) may follow before any write.
function H.handlers.moved()
  local mode = vim.api.nvim_get_mode().mode
  if require("pi-ide.selection").visual_kind(mode) then
    require("pi-ide.selection").track(vim.api.nvim_get_current_buf(), mode)
  end
  H.schedule(false)
end

--- Visual-mode transitions. One ModeChanged autocmd filtered here: a pattern list would register one
--- autocmd per pattern and fire twice for v -> V.
function H.handlers.mode_changed()
  local sel = require("pi-ide.selection")
  local ev = vim.v.event
  local was, is = sel.visual_kind(ev.old_mode or ""), sel.visual_kind(ev.new_mode or "")
  if not was and not is then
    return
  end
  if is then
    sel.track(vim.api.nvim_get_current_buf(), ev.new_mode)
  end
  if was and not is then
    -- Leaving visual mode: this is the moment `selected_at` records; Neovim has just set '< and '>.
    local buf = vim.api.nvim_get_current_buf()
    H.sel[buf] = sel.record(buf, ev.old_mode, compat.now())
  end
  H.schedule(true)
end

function H.handlers.buf_wipeout(args)
  H.sel[args.buf] = nil
  require("pi-ide.focus").forget(args.buf)
  require("pi-ide.selection").forget(args.buf)
end

function H.handlers.leave()
  M._stop(true)
end

--- Leaving a buffer or window: remember it if it holds a file, so a terminal entered next describes it.
function H.handlers.buf_leave()
  local api = vim.api
  require("pi-ide.focus").note(api.nvim_get_current_buf(), api.nvim_get_current_win())
end

--- A UI attached (the TUI at startup, a GUI over --embed, --remote-ui): from now on this is an editor.
function H.handlers.ui_enter()
  H.ui = true
  H.schedule(true)
end

--- The last UI detached: a headless Neovim again, which no user is looking at; its file goes.
function H.handlers.ui_leave()
  if #vim.api.nvim_list_uis() == 0 then
    H.ui = false
    H.remove_file()
  end
end

local function create_autocmds()
  H.group = vim.api.nvim_create_augroup("PiIde", { clear = true })
  local function au(events, handler, desc)
    vim.api.nvim_create_autocmd(events, {
      group = H.group,
      desc = "pi-ide: " .. desc,
      callback = function(args)
        guard(handler, args)
      end,
    })
  end
  au("CursorMoved", H.handlers.moved, "debounced write; follow the visual area")
  au({ "CursorMovedI", "TextChanged", "TextChangedI", "TextChangedP" }, H.handlers.soon, "debounced write")
  au(
    { "BufEnter", "WinEnter", "BufFilePost", "FileType", "TermOpen", "BufWritePost", "DirChanged", "InsertLeave" },
    H.handlers.now,
    "prompt write"
  )
  au("ModeChanged", H.handlers.mode_changed, "selection made or left")
  au("BufWipeout", H.handlers.buf_wipeout, "forget the buffer's selection record")
  au({ "BufLeave", "WinLeave" }, H.handlers.buf_leave, "remember the file left for a terminal")
  au("UIEnter", H.handlers.ui_enter, "start writing once a UI is attached")
  au("UILeave", H.handlers.ui_leave, "remove the state file when the last UI detaches")
  -- VimLeave too, a second chance (e.g. when something deleted our VimLeavePre autocmd). Neither runs after
  -- another plugin's VimLeavePre throws, nor on 0.7's --embed channel close or SIGKILL: the exit guard of
  -- pi-ide.exit covers those.
  au({ "VimLeavePre", "VimLeave" }, H.handlers.leave, "remove the state file")
  require("pi-ide.v03").autocmds(au, H.schedule) -- diagnostics, pi's messages (protocol v0.3)
end

--- Start writing the state file (idempotent).
function M.enable()
  guard(function()
    if H.enabled then
      return
    end
    local writer = require("pi-ide.writer")
    H.stats.dir = writer.state_dir(uv.os_getenv("XDG_RUNTIME_DIR"))
    H.stats.path = ("%s/%d.json"):format(H.stats.dir, vim.fn.getpid())
    -- Processes started in this Neovim's terminals find it by this pid (pi connects to the editor it runs in).
    vim.env.PI_IDE_EDITOR_PID = tostring(vim.fn.getpid())
    H.ui = #vim.api.nvim_list_uis() > 0
    H.timer = H.timer or uv.new_timer()
    H.on_timer_wrapped = H.on_timer_wrapped or vim.schedule_wrap(H.on_timer)
    H.enabled = true
    H.last_content = nil
    H.warned = {}
    create_autocmds()
    H.schedule(true)
    require("pi-ide.v03").start(H.stats.dir, H.schedule, function()
      H.last_content = nil
      H.stats.written = false -- the file went with its directory
      H.schedule(true)
    end)
  end)
end

--- Stop: remove the autocmds and the timer, and delete our state file.
---@param exiting boolean|nil true from VimLeavePre (also frees the timer)
function M._stop(exiting)
  H.enabled = false
  pcall(require("pi-ide.inbox").stop)
  H.pending = nil
  if H.group then
    pcall(vim.api.nvim_del_augroup_by_id, H.group)
    H.group = nil
  end
  if H.timer then
    H.timer:stop()
    if exiting and not H.timer:is_closing() then
      H.timer:close()
      H.timer = nil
    end
  end
  if vim.env.PI_IDE_EDITOR_PID == tostring(vim.fn.getpid()) then
    vim.env.PI_IDE_EDITOR_PID = nil
  end
  H.remove_file()
end

--- Delete our state file if we wrote it; the next write starts afresh.
function H.remove_file()
  if H.stats.written and H.stats.dir then
    local ok, err = require("pi-ide.writer").remove(H.stats.dir, vim.fn.getpid())
    H.stats.written = not ok
    if not ok then
      H.stats.last_error = err
    end
  end
  H.last_content = nil
end

--- Stop writing and delete the state file.
function M.disable()
  guard(M._stop, false)
end

--- Configure (optional: the defaults work without it) and start unless `enabled = false`.
--- Invalid options are reported, and the previous configuration stays in effect.
---@param opts PiIdeConfig|table|nil
---@return boolean ok
---@return string|nil err
function M.setup(opts)
  local ok, cfg = config.resolve(opts)
  if not ok then
    vim.notify(cfg, vim.log.levels.ERROR)
    return false, cfg
  end
  H.config = cfg
  H.configured = true
  if cfg.enabled then
    -- Re-enable so a new debounce or cap takes effect at once.
    if H.enabled then
      guard(M._stop, false)
    end
    M.enable()
  else
    M.disable()
  end
  return true
end

--- Called by plugin/pi-ide.lua: start with defaults unless setup() already ran (e.g. from init.lua).
function M._autostart()
  if not H.configured then
    M.setup()
  end
end

--- A copy of the client's status, for :PiIde, :checkhealth and tests.
---@return table
function M.status()
  -- Shallow: the payload holds vim.NIL, which 0.7's deepcopy refuses; payloads are never mutated anyway.
  local s = {}
  for k, v in pairs(H.stats) do
    s[k] = v
  end
  s.enabled = H.enabled
  s.ui = H.ui
  s.exit_guard = require("pi-ide.exit").guard_pid()
  s.config = vim.deepcopy(H.config)
  s.now = compat.now()
  return s
end

local function age(now, t)
  local d = math.max(0, now - t)
  if d < 60 then
    return ("%.1fs ago"):format(d)
  elseif d < 3600 then
    return ("%dm%02ds ago"):format(math.floor(d / 60), math.floor(d % 60))
  end
  return ("%dh%02dm ago"):format(math.floor(d / 3600), math.floor(d % 3600 / 60))
end

--- Lines for :PiIde.
---@return string[]
function M.summary()
  local s = M.status()
  local lines = {}
  lines[#lines + 1] = ("pi-ide: %s"):format(s.enabled and "enabled" or "disabled")
  if s.path then
    local present = uv.fs_lstat(s.path) and "present" or "absent"
    lines[#lines + 1] = ("state file: %s (%s)"):format(s.path, present)
  end
  if s.last_error then
    lines[#lines + 1] = "problem: " .. s.last_error
  end
  if s.enabled and not s.ui then
    lines[#lines + 1] = "no UI attached (a script): no state file until a UI attaches"
  end
  if s.last_write then
    lines[#lines + 1] = ("last write: %s (%s), %d writes, %d unchanged skipped"):format(
      os.date("%H:%M:%S", math.floor(s.last_write)),
      age(s.now, s.last_write),
      s.writes,
      s.skipped
    )
    local b = s.last_payload.active_buffer
    local file = b.file ~= vim.NIL and b.file or (b.name .. " (not a file)")
    local lang = b.language ~= vim.NIL and b.language or "no filetype"
    lines[#lines + 1] = ("buffer: %s [%s] line %d col %d of %d%s"):format(
      file,
      lang,
      b.cursor.line,
      b.cursor.column,
      b.lines_total,
      b.modified and ", modified" or ""
    )
    local sel = b.selection
    if sel ~= vim.NIL then
      local when = sel.selected_at ~= vim.NIL and ("made " .. age(s.now, sel.selected_at)) or "made before this session"
      lines[#lines + 1] = ("selection: %d:%d-%d:%d, %d bytes%s, %s"):format(
        sel.start.line,
        sel.start.column,
        sel["end"].line,
        sel["end"].column,
        #sel.text,
        sel.truncated and " (cut to max_selection_bytes)" or "",
        when
      )
    else
      lines[#lines + 1] = "selection: none"
    end
    lines[#lines + 1] = "cwd: " .. s.last_payload.cwd
  else
    lines[#lines + 1] = "last write: none yet"
  end
  return lines
end

--- One option's value as setup() left it (for modules that read options outside init.lua).
---@param name string
---@return any
function M.option(name)
  return H.config[name]
end

--- :PiIde review | hunks | revert [file|run] (pi-ide.review). Returns the one line to tell the user, or nil.
---@param sub string
---@param scope string|nil
---@return string|nil
function M.review_command(sub, scope)
  local review = require("pi-ide.review")
  if sub == "review" then
    return review.show_baseline()
  elseif sub == "hunks" then
    local n = review.to_quickfix()
    if n == 0 then
      return "(pi-ide) pi's last run changed no lines (or no pi is connected)"
    end
    vim.cmd("botright copen")
    return nil
  end
  if scope ~= nil and scope ~= "file" and scope ~= "run" then
    return ("(pi-ide) :PiIde revert takes `file` or `run`, not `%s`"):format(scope)
  end
  return review.revert(scope)
end

--- :PiIde [status|enable|disable|diff|review|hunks|revert|approve|reject|proposal]
---@param args string[]
function M.command(args)
  local sub = args[1]
  if sub == nil or sub == "" then
    sub = "status"
  end
  if sub == "diff" then
    local ok, problem = pcall(require("pi-ide.inbox").compare)
    if not ok or problem then
      require("pi-ide.notice").line(ok and problem or ("(pi-ide) :PiIde diff failed: " .. tostring(problem)))
    end
    return
  elseif sub == "review" or sub == "hunks" or sub == "revert" then
    local ok, said = pcall(M.review_command, sub, args[2])
    if not ok or said then
      require("pi-ide.notice").line(ok and said or ("(pi-ide) :PiIde %s failed: %s"):format(sub, tostring(said)))
    end
    return
  elseif sub == "approve" or sub == "reject" or sub == "proposal" then
    local approval = require("pi-ide.approval")
    local ok, said = pcall(function()
      if sub == "proposal" then
        return approval.show()
      end
      return approval.decide(sub == "approve" and "accept" or "reject")
    end)
    if not ok or said then
      -- One line, not a warning: a decision is news the user asked for.
      local text = ok and said or ("(pi-ide) :PiIde %s failed: %s"):format(sub, tostring(said))
      vim.api.nvim_echo({ { require("pi-ide.notice").inert(text) } }, false, {})
    end
    return
  elseif sub == "enable" then
    M.enable()
  elseif sub == "disable" then
    M.disable()
  elseif sub ~= "status" then
    vim.notify(
      ("(pi-ide) unknown subcommand `%s` (use status, enable, disable, diff, review, hunks, revert, "
        .. "approve, reject or proposal)"):format(sub),
      vim.log.levels.ERROR
    )
    return
  end
  local ok, lines = pcall(M.summary)
  if ok then
    vim.list_extend(lines, require("pi-ide.inbox").summary_lines())
    vim.list_extend(lines, require("pi-ide.notice").summary_lines())
  end
  if not ok then
    lines = { "(pi-ide) " .. tostring(lines) }
  end
  vim.api.nvim_echo({ { table.concat(lines, "\n") } }, false, {})
end

--- For statuslines: "" when no pi is connected to this Neovim, "pi" when one is, "pi +N" when pi's last turn
--- changed N files. Cheap enough for every redraw. See `:help pi-ide-statusline`.
---@return string
function M.statusline()
  local ok, text = pcall(require("pi-ide.inbox").statusline)
  return ok and text or ""
end

--- For tests: set the gap between prompt writes (a pending prompt write is re-timed to it); `idle` forgets the
--- last write, as after a long pause.
---@param ms integer
---@param idle boolean|nil
M._set_prompt_gap = function(ms, idle)
  H.prompt_gap_ms = ms
  if idle then
    H.last_write_ms = nil
  end
  if H.pending == "now" then
    H.timer:start(prompt_wait(), 0, H.on_timer_wrapped)
  end
end

-- For tests and the benchmark: the handlers as autocmds run them, and a synchronous write.
M._handlers = H.handlers
---@param force boolean|nil forget the last content, so the write is not skipped as unchanged
M._write_now = function(force)
  if force then
    H.last_content = nil
  end
  return H.write_now()
end

return M
