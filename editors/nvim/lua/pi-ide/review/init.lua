--- pi-ide.review: protocol v0.4, pi's change set (`pi-<pid>.review.json`) in Neovim. Passive by default: the
--- buffers of files pi changed mark pi's hunks in the sign column (extmarks, so the marks move with edits);
--- nothing opens, moves the cursor or takes focus unless the user asks:
---   :PiIde hunks    pi's hunks of its last run into the quickfix list
---   :PiIde review   the current buffer beside pi's baseline (a read-only scratch buffer, diff mode)
---   :PiIde revert [file|run]   put the baseline's lines back in the buffer for the hunk under the cursor, the
---                   buffer's file, or every open buffer of the run: the buffer changes, not the disk (one `u`
---                   brings pi's version back; the user saves when they choose). A hunk whose lines differ
---                   from what pi left (the user edited them) is refused, never overwritten.
--- The change set is read only for a pi whose message names this Neovim, through the same checks as pi's
--- message; only buffers already loaded are marked or changed. What was reverted goes into the state file
--- (`reverted`), so pi can tell its model. A revert the user takes back with `u` (Neovim's undo tree says so)
--- leaves `reverted` before pi tells its model, and the hunk is marked again; a redo lists it again. A revert
--- thrown away unsaved with the buffer's text (`:e!`, `:bd!`, `:bw!`) leaves it for good. Marks follow their
--- lines when lines move above them (pi's next message checks them where they are), and a hunk whose lines of
--- pi's were deleted is not reverted (its mark moved onto the next line, which may read the same).
--- The rules (validation, which hunks are whose, the revert key...) are pure, in pi-ide.review.rules; this module
--- is the UI: marks, commands, the undo tree asked, the buffers' events.
---@module 'pi-ide.review'
local rules = require("pi-ide.review.rules")

local M = {}

--- Asks init.lua for a prompt state write (set by pi-ide.inbox.start).
---@type fun()|nil
M.on_change = nil

--- The caps (pi-ide.review.rules), and its pure rules, reachable here as before the split.
M.MAX_BYTES = rules.MAX_BYTES
M.MAX_REVERTED = rules.MAX_REVERTED
M.MAX_RUNS = rules.MAX_RUNS
M.MAX_HUNKS = rules.MAX_HUNKS
M.MAX_LINE = rules.MAX_LINE
M.MAX_ID_BYTES = rules.MAX_ID_BYTES
M.is_line = rules.is_line
M.over_cap = rules.over_cap
M.valid_hunk = rules.valid_hunk
M.validate = rules.validate
M.add_reverted = rules.add_reverted
M._step_applied = rules.step_applied

local H = {
  ns = vim.api.nvim_create_namespace("pi-ide-review"),
  --- Where each revert's lines start in a buffer (extmarks without a sign; see track_revert).
  ns_reverted = vim.api.nvim_create_namespace("pi-ide-review-reverted"),
  --- The whole lines of each marked hunk of pi's (extmarks without a sign, from the start of pi's first line to
  --- the start of the line after its last): the user deleting pi's lines leaves it empty (see place).
  ns_span = vim.api.nvim_create_namespace("pi-ide-review-span"),
  --- pi pid -> { runs = decoded runs } (only pis connected to this Neovim)
  sets = {},
  --- buf -> { [extmark id] = { pid, run, file, hunk } }
  marks = {},
  --- buf -> what its marks were placed from (marks_source)
  marked = {},
  --- buf -> its changedtick when its marks were last placed or checked (keep_marks)
  marks_tick = {},
  --- newest last: { pi_pid, run, id, file, line, lines }
  reverted = {},
  --- buf -> list of { info = the mark's info, record = its entry in `reverted`, seq = its undo step, top = the
  --- extmark at the top of its lines (ns_reverted), mark = the hunk's mark placed again after an undo, saved =
  --- whether the buffer's last write after the revert had it (see M.buffer_written) }
  undoable = {},
  --- buf -> changedtick when its reverts were last checked for an undo
  checked = {},
  --- entries of `reverted` the user undid: left out of the state file
  undone = {},
  hl_defined = false,
}

local function define_highlights()
  if H.hl_defined then
    return
  end
  H.hl_defined = true
  local links = { PiIdeReviewAdd = "DiffAdd", PiIdeReviewChange = "DiffChange", PiIdeReviewDelete = "DiffDelete" }
  for name, link in pairs(links) do
    pcall(vim.api.nvim_set_hl, 0, name, { link = link, default = true })
  end
end

--- The newest run's entry for `file` among all connected pis: pid, run number, file entry.
local function newest_entry(file)
  return rules.newest_entry(H.sets, file)
end

--- What marks would be placed from: pi, run, each hunk's id and place. nil: no marks. Not the buffer's text:
--- marks placed from the same source follow the lines they were placed on (extmarks), where pi's line numbers
--- no longer hold once lines were added or removed above (a revert that changes the line count, the user's
--- edits); they are checked where they are (keep_marks), and the buffer read again from its file
--- (M.buffer_read) places them anew.
local function marks_source(found)
  if require("pi-ide").option("review_marks") == false then
    return nil
  end
  return rules.marks_source(found)
end

local base_lines = rules.base_lines

--- Whether `buf` has, around a deletion of pi's, the baseline's lines that were around the deleted ones
--- (pi-ide.review.rules.deletion_holds, on the buffer's lines). `follow`: the 1-based buffer line that follows the
--- deletion (the line count + 1 for a deletion at the end).
---@param buf integer
---@param base string[] the baseline's lines
---@param h table the hunk (old_start, old_text)
---@param follow integer
---@return boolean
function M._deletion_holds(buf, base, h, follow)
  local line = function(n)
    return vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
  end
  return rules.deletion_holds(vim.api.nvim_buf_line_count(buf), line, base, h, follow)
end

--- Whether `buf` has `lines` from 0-based `row`.
local function has_lines(buf, row, lines)
  return row + #lines <= vim.api.nvim_buf_line_count(buf)
    and vim.deep_equal(vim.api.nvim_buf_get_lines(buf, row, row + #lines, false), lines)
end

--- The sign of a hunk of pi's that adds or changes lines (`n` of pi's), or of a deletion.
local function sign_opts(h, row, n)
  if n == 0 then
    return { sign_text = "▁", sign_hl_group = "PiIdeReviewDelete", priority = 8 }
  end
  local group = #h.old_text == 0 and "PiIdeReviewAdd" or "PiIdeReviewChange"
  -- The range ends at the start of pi's last line: with left gravity there, the user replacing the line above
  -- (a splice that ends at that point) would pull the end above the start, and the hunk out from under the
  -- cursor.
  return {
    end_row = row + n - 1,
    end_right_gravity = true,
    sign_text = "┃",
    sign_hl_group = group,
    priority = 8,
  }
end

--- Place one mark (extmark `opts` at `row`) for hunk `h` of `found` (newest_entry) and record it in `marks`;
--- returns its id, or nil when Neovim refused it. A hunk with lines of pi's gets a span too (ns_span): the sign's
--- extmark cannot tell pi's lines deleted (it moves onto the line that follows, which can be equal to pi's: a
--- revert there would change a line that is not pi's); the span ends at the start of the next line with left
--- gravity, so it loses a row with each of pi's lines deleted and keeps out lines added below it.
local function place(buf, marks, row, opts, found, file, h, at_end)
  local ok, id = pcall(vim.api.nvim_buf_set_extmark, buf, H.ns, row, 0, opts)
  if ok then
    local deletion = #h.new_text == 0
    local span
    if not deletion then
      local span_ok, span_id = pcall(vim.api.nvim_buf_set_extmark, buf, H.ns_span, row, 0, {
        end_row = row + #h.new_text,
        end_col = 0,
        end_right_gravity = false,
      })
      span = span_ok and span_id or nil
    end
    marks[id] = {
      pid = found.pid,
      pi_ns = found.pi_ns,
      run = found.run,
      file = file,
      hunk = h,
      span = span,
      at_end = deletion and at_end,
      base = deletion and base_lines(found.entry) or nil,
    }
    return id
  end
  return nil
end

--- Take mark `id` of `buf` away, with its span.
local function drop_mark(buf, id)
  pcall(vim.api.nvim_buf_del_extmark, buf, H.ns, id)
  local info = H.marks[buf] and H.marks[buf][id]
  if info and info.span then
    pcall(vim.api.nvim_buf_del_extmark, buf, H.ns_span, info.span)
  end
  if H.marks[buf] then
    H.marks[buf][id] = nil
  end
end

--- Whether the span of a mark (`info`, placed at 0-based `row`) still holds exactly pi's lines from `row`: none
--- of them deleted (the span would have fewer rows) and none added inside.
local function span_holds(buf, info, row)
  if not info.span then
    return false
  end
  local at = vim.api.nvim_buf_get_extmark_by_id(buf, H.ns_span, info.span, { details = true })
  local d = at[3]
  return at[1] == row and at[2] == 0 and d ~= nil and d.end_row == row + #info.hunk.new_text and d.end_col == 0
end

--- Mark pi's hunks in `buf` (whose file is `file`): only hunks whose lines in the buffer are still pi's. Marks
--- placed from the same source stay as they are, where they moved (marks_source), unless `anew` (the buffer was
--- read from its file): and pi's change set is rewritten with every change of any file, so re-placing hundreds
--- of extmarks in the buffers of the files it did not change would be most of a load's cost.
local function mark_buffer(buf, file, anew)
  local found = newest_entry(file)
  local source = marks_source(found)
  if source ~= nil and source == H.marked[buf] and not anew then
    local tick = vim.api.nvim_buf_get_changedtick(buf)
    if H.marks_tick[buf] ~= tick then
      H.marks_tick[buf] = tick
      M._keep_marks(buf)
    end
    return
  end
  H.marks_tick[buf] = vim.api.nvim_buf_get_changedtick(buf)
  vim.api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, H.ns_span, 0, -1)
  H.marks[buf] = nil
  H.marked[buf] = source
  if source == nil then
    return
  end
  define_highlights()
  local count = vim.api.nvim_buf_line_count(buf)
  local marks = {}
  for _, h in ipairs(found.entry.hunks) do
    local row = h.new_start - 1
    local n = #h.new_text
    local opts
    if n > 0 then
      if not has_lines(buf, row, h.new_text) then
        -- Issue 26: merged into an unsaved buffer, pi's lines stand where the user's lines above moved them.
        row = require("pi-ide.inbox.merge").buffer_row(buf, row) or row
      end
      if has_lines(buf, row, h.new_text) then
        opts = sign_opts(h, row, n)
      end
    elseif n == 0 and count > 0 and M._deletion_holds(buf, base_lines(found.entry), h, h.new_start) then
      -- A deletion: marked on the line that now follows it (or the last line, for a deletion at the end).
      row = math.min(row, count - 1)
      opts = sign_opts(h, row, 0)
    end
    if opts then
      place(buf, marks, row, opts, found, file, h, n == 0 and h.new_start > count)
    end
  end
  H.marks[buf] = marks
end

--- Re-mark every loaded file buffer (after a change set arrived or a pi went away).
function M.refresh()
  local reload = require("pi-ide.inbox.reload")
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local file = reload.buffer_path(buf)
      if file and (H.marks[buf] or newest_entry(file)) then
        mark_buffer(buf, file)
      end
    end
  end
end

--- Read `<dir>/pi-<pid>.review.json` (pi `pid` names this Neovim). Returns nil, or why it was not used (a
--- missing file is no problem: pi has changed nothing yet, or is older than v0.4).
---@param dir string
---@param who table|integer pi's identity (pi-ide.inbox.identity; v0.5 `pi-<pid>-<ns>.review.json`), or a pid
---@return string|nil problem
function M.load(dir, who)
  local identity = require("pi-ide.inbox.identity")
  local ident = identity.of(who)
  local key = ident.key
  local name = identity.file_name("review", ident.pid, ident.ns)
  local ok, msg = require("pi-ide.inbox.read").read_json(dir .. "/" .. name, rules.MAX_BYTES)
  if not ok then
    if not msg and H.sets[key] then
      H.sets[key] = nil
      M.refresh()
    end
    return msg
  end
  local runs, bad = rules.validate(msg, ident.pid)
  bad = bad or identity.disagreement(ident, msg.pid_ns)
  if not runs or bad then
    return bad
  end
  -- pi_ns: exactly as the change set said (v0.5), echoed in `reverted`; left out when it said none.
  H.sets[key] = { runs = runs, pid = ident.pid, pi_ns = type(msg.pid_ns) == "string" and msg.pid_ns or nil }
  M.refresh()
  return nil
end

--- pi `who` (its key, identity or pid) is gone or no longer connected to this Neovim: its marks go.
---@param who string|table|integer
function M.forget(who)
  local key = require("pi-ide.inbox.identity").key_of(who)
  if H.sets[key] then
    H.sets[key] = nil
    M.refresh()
  end
end

--- The marks of `buf` as { row, end_row, info } (0-based rows, current positions), top to bottom.
local function current_marks(buf)
  local out = {}
  local marks = H.marks[buf] or {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, H.ns, 0, -1, { details = true })) do
    local info = marks[m[1]]
    if info then
      out[#out + 1] = { id = m[1], row = m[2], end_row = (m[4] and m[4].end_row) or m[2], info = info }
    end
  end
  return out
end

--- v0.5 send to pi: the 1-based first and last line of pi's hunk under the cursor in the current buffer, or nil.
---@return integer|nil first
---@return integer|nil last
function M.hunk_at_cursor()
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, m in ipairs(current_marks(buf)) do
    -- A mark over whole lines ends at column 0 of the line after its last.
    local pos = vim.api.nvim_buf_get_extmark_by_id(buf, H.ns, m.id, { details = true })
    local details = pos[3] or {}
    local last = m.end_row
    if last > m.row and (details.end_col or 0) == 0 then
      last = last - 1
    end
    if row >= m.row and row <= last then
      return m.row + 1, last + 1
    end
  end
  return nil
end

--- The marks of `buf` checked where they are now: one whose lines are no longer pi's (the user edited or deleted
--- them), or, for a deletion, whose neighbours are no longer the baseline's, goes, as mark_buffer would not
--- place it (a revert of it is refused anyway). The others stay where they moved.
function M._keep_marks(buf)
  for _, m in ipairs(current_marks(buf)) do
    local h = m.info.hunk
    local n = #h.new_text
    local holds
    if n > 0 then
      holds = span_holds(buf, m.info, m.row) and has_lines(buf, m.row, h.new_text)
    else
      local at = m.info.at_end and m.row + 1 or m.row
      holds = M._deletion_holds(buf, m.info.base, h, at + 1)
    end
    if not holds then
      drop_mark(buf, m.id)
    end
  end
end

--- The undo tree of `buf` (`:help undotree()`), asked in the buffer (0.7 asks the current one only).
local function undo_tree(buf)
  return vim.api.nvim_buf_call(buf, function()
    return vim.fn.undotree()
  end)
end

--- Close the undo block of `buf` (`:help undo-break`): what comes next is an undo step of its own.
local function undo_break(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("let &undolevels = &undolevels")
  end)
end

--- Record a revert in `reverted`, and follow it in `buf`: its undo step (an undo of it, and a redo, are seen by
--- asking Neovim's undo tree: M.report) and where its lines start (0-based `at`: an extmark that stays above
--- lines put at it, so the hunk can be marked again after an undo).
local function track_revert(buf, info, line, at)
  local record = rules.revert_record(info, line)
  rules.add_reverted(H.reverted, record)
  local t = { info = info, record = record, seq = undo_tree(buf).seq_cur }
  local ok, id = pcall(vim.api.nvim_buf_set_extmark, buf, H.ns_reverted, at, 0, { right_gravity = false })
  t.top = ok and id or nil
  H.undoable[buf] = H.undoable[buf] or {}
  table.insert(H.undoable[buf], t)
end

--- Put one marked hunk's baseline lines back in `buf`, or return why not.
local function revert_mark(buf, mark)
  local h = mark.info.hunk
  local n = #h.new_text
  local at
  if n > 0 then
    local now = vim.api.nvim_buf_get_lines(buf, mark.row, mark.end_row + 1, false)
    -- The span too: pi's line deleted moves the mark onto the next line, which can be equal to it.
    local edited = mark.end_row - mark.row + 1 ~= n or not vim.deep_equal(now, h.new_text)
    if edited or not span_holds(buf, mark.info, mark.row) then
      -- Lines replaced under a mark can leave it past the end: name the last line then.
      local line = math.min(mark.row + 1, vim.api.nvim_buf_line_count(buf))
      return ("line %d: you changed these lines after pi's edit; not reverted"):format(line)
    end
    vim.api.nvim_buf_set_lines(buf, mark.row, mark.row + n, false, h.old_text)
    at = mark.row
  else
    at = mark.info.at_end and mark.row + 1 or mark.row
    -- The mark follows its line; the lines around the deletion must still be the baseline's.
    if not M._deletion_holds(buf, mark.info.base, h, at + 1) then
      return ("line %d: the lines around pi's deletion changed; not reverted"):format(mark.row + 1)
    end
    vim.api.nvim_buf_set_lines(buf, at, at, false, h.old_text)
  end
  drop_mark(buf, mark.id)
  track_revert(buf, mark.info, mark.row + 1, at)
  return nil
end

--- Revert marked hunks of `buf` (all of them, or the one under the cursor), bottom up so rows stay valid.
--- Returns how many, and the problems.
local function revert_in(buf, under_cursor)
  local marks = current_marks(buf)
  local chosen = {}
  if under_cursor then
    local row = vim.api.nvim_win_get_cursor(0)[1] - 1
    for _, m in ipairs(marks) do
      if row >= m.row and row <= m.end_row then
        chosen[#chosen + 1] = m
      end
    end
  else
    chosen = marks
  end
  local done, problems = 0, {}
  if #chosen > 0 then
    -- The revert is one undo step of its own: `u` takes back exactly it, and its step tells an undo (M.report).
    undo_break(buf)
  end
  for i = #chosen, 1, -1 do
    local problem = revert_mark(buf, chosen[i])
    if problem then
      problems[#problems + 1] = problem
    else
      done = done + 1
    end
  end
  if done > 0 then
    undo_break(buf)
  end
  return done, problems, #chosen
end

--- :PiIde revert [file|run]. Returns a one-line message for the user.
---@param scope string|nil nil (the hunk under the cursor), "file" or "run"
---@return string
function M.revert(scope)
  local buf = vim.api.nvim_get_current_buf()
  local done, problems, seen = 0, {}, 0
  local undo_note = " (in the buffer; `u` undoes, `:w` saves)"
  if scope == "run" then
    for b in pairs(H.marks) do
      if vim.api.nvim_buf_is_valid(b) then
        local d, p, s = revert_in(b, false)
        done, seen = done + d, seen + s
        vim.list_extend(problems, p)
      end
    end
    undo_note = " (in the buffers; `u` in each undoes, `:wa` saves)"
  else
    done, problems, seen = revert_in(buf, scope ~= "file")
  end
  if seen == 0 then
    return scope and "(pi-ide) no hunks of pi's to revert here"
      or "(pi-ide) no hunk of pi's under the cursor (`:PiIde hunks` lists them)"
  end
  if done > 0 and M.on_change then
    M.on_change()
  end
  local msg = ("(pi-ide) reverted %d of pi's hunks%s"):format(done, done > 0 and undo_note or "")
  if #problems > 0 then
    msg = ("%s; %d refused: %s"):format(msg, #problems, problems[1])
  end
  return msg
end

--- :PiIde hunks: pi's hunks of its newest run, every file, into the quickfix list, and (issue 26) each place
--- where a merge of pi's change into an unsaved buffer kept the user's lines. Returns how many.
---@return integer
function M.to_quickfix()
  local newest = rules.newest_run(H.sets)
  local items = rules.quickfix_items(newest and newest.run)
  vim.list_extend(items, require("pi-ide.inbox").conflict_items())
  vim.fn.setqflist({}, " ", { title = "pi's changes", items = items })
  return #items
end

--- :PiIde review: the current buffer beside pi's baseline for its file. Returns nil or why not.
---@return string|nil problem
function M.show_baseline()
  local buf = vim.api.nvim_get_current_buf()
  local file = require("pi-ide.inbox.reload").buffer_path(buf)
  local found = file and newest_entry(file)
  if not found then
    return "(pi-ide) pi has not changed this buffer's file in its last runs"
  end
  if not found.entry.baseline and #found.entry.hunks == 0 then
    return "(pi-ide) pi's change set carries no baseline for this file (binary or too large)"
  end
  local lines = require("pi-ide.inbox.compare").lines_of(found.entry.baseline or "", "unix")
  require("pi-ide.inbox.compare").show_beside(buf, lines, "pi-ide://baseline" .. file)
  return nil
end

--- Look again at the reverts in buffers that changed since the last look, by asking each buffer's undo tree
--- whether the revert's undo step is in its text. One UNDONE (`u`, `:earlier`, an undo branch without it) is
--- left out of `reverted`, so pi never tells its model of a revert that does not hold, and while its run is still
--- the file's newest in pi's change set its hunk is marked again where pi's lines are back. A redo lists it
--- again and takes that mark away. The user's own edits of those lines change neither: only the undo history
--- decides, so equal lines, or lines typed around the place, cannot be mistaken for an undo.
local function look_at_reverts()
  local api = vim.api
  local live = {}
  for _, r in ipairs(H.reverted) do
    live[r] = true
  end
  for buf, trackers in pairs(H.undoable) do
    if not api.nvim_buf_is_valid(buf) then
      -- Wiped: its reverts stay as last seen (one undone stays out of `reverted`: H.undone).
      H.undoable[buf], H.checked[buf] = nil, nil
    elseif api.nvim_buf_is_loaded(buf) and H.checked[buf] ~= api.nvim_buf_get_changedtick(buf) then
      H.checked[buf] = api.nvim_buf_get_changedtick(buf)
      local tree = undo_tree(buf)
      local kept = {}
      for _, t in ipairs(trackers) do
        if not live[t.record] then
          H.undone[t.record] = nil
          if t.top then
            pcall(api.nvim_buf_del_extmark, buf, H.ns_reverted, t.top)
          end
        else
          kept[#kept + 1] = t
          local holds = rules.step_applied(tree, t.seq)
          if not holds and not H.undone[t.record] then
            H.undone[t.record] = true
            local row = t.top and api.nvim_buf_get_extmark_by_id(buf, H.ns_reverted, t.top, {})[1]
            local found = newest_entry(t.info.file)
            local h = t.info.hunk
            local n, count = #h.new_text, api.nvim_buf_line_count(buf)
            local same = found and found.pid == t.info.pid and found.pi_ns == t.info.pi_ns and found.run == t.info.run
            if row and same and H.marks[buf] then
              if n > 0 and has_lines(buf, row, h.new_text) then
                t.mark = place(buf, H.marks[buf], row, sign_opts(h, row, n), found, t.info.file, h, false)
              elseif n == 0 and count > 0 then
                local at = math.min(row, count - 1)
                t.mark = place(buf, H.marks[buf], at, sign_opts(h, at, 0), found, t.info.file, h, row >= count)
              end
            end
          elseif holds and H.undone[t.record] then
            H.undone[t.record] = nil
            if t.mark then
              drop_mark(buf, t.mark)
              t.mark = nil
            end
          end
        end
      end
      H.undoable[buf] = kept
    end
  end
end

--- The state file's `reverted` list (v0.4), or nil when nothing was reverted (or every revert was undone).
---@return table|nil
function M.report()
  look_at_reverts()
  return rules.report(H.reverted, H.undone)
end

--- Drop revert `t` (a tracker of `buf`) from `reverted`: its buffer was read again from a file that does not
--- have it, or thrown away unsaved. Returns true.
local function discard(buf, t)
  for i = #H.reverted, 1, -1 do
    if H.reverted[i] == t.record then
      table.remove(H.reverted, i)
    end
  end
  H.undone[t.record] = nil
  if t.top and vim.api.nvim_buf_is_valid(buf) then
    pcall(vim.api.nvim_buf_del_extmark, buf, H.ns_reverted, t.top)
  end
  return true
end

--- Whether `t` (a tracker) is still in `reverted`.
local function listed(t)
  for _, r in ipairs(H.reverted) do
    if r == t.record then
      return true
    end
  end
  return false
end

--- The text of `buf` was thrown away for its file's: read again (`:e!`, a reload; `read`) or unloaded (`:bd!`,
--- `:bw!`; `read` false). A revert the file does not have (none of the buffer's writes since it had it) is gone
--- with the text: out of `reverted`, so pi never tells its model of a revert the file and buffer do not hold.
--- One the file has holds, even if undone in the text thrown away; after a read, the undo step it is in is the
--- read's when the text before it had it undone.
local function text_replaced(buf, read)
  local trackers = H.undoable[buf]
  if not trackers then
    return
  end
  local changed = false
  local kept = {}
  local tree = read and undo_tree(buf)
  for _, t in ipairs(trackers) do
    if listed(t) then
      if not t.saved then
        changed = discard(buf, t) or changed
      else
        changed = changed or H.undone[t.record] ~= nil
        H.undone[t.record] = nil
        if read then
          if not rules.step_applied(tree, t.seq) then
            t.seq = tree.seq_cur
          end
          t.mark = nil
          kept[#kept + 1] = t
        end
      end
    end
  end
  H.undoable[buf] = read and kept or nil
  H.checked[buf] = nil
  if changed and M.on_change then
    M.on_change()
  end
end

--- BufReadPost: a file pi changed, opened (or read again) after its change set arrived, gets its marks where
--- the text read has pi's lines; reverts the file read does not have are no longer listed (text_replaced).
---@param buf integer
function M.buffer_read(buf)
  text_replaced(buf, true)
  local file = require("pi-ide.inbox.reload").buffer_path(buf)
  if file and newest_entry(file) then
    mark_buffer(buf, file, true)
  end
end

--- pi's message reloaded `buf` with new text (pi-ide.inbox): its marks are placed anew from that text, as after a
--- read. pi writes its change set before the message of its edit, and the change set is read after each message:
--- one handled past pi's answer wait (a busy machine) lets pi's next run go on, and the change set read then is
--- already that run's while the buffer still holds the text before its edit. None of its hunks stood there, and
--- the same source would have kept that when the edit's message came (mark_buffer).
---@param buf integer
function M.reloaded(buf)
  local file = require("pi-ide.inbox.reload").buffer_path(buf)
  if file and newest_entry(file) then
    mark_buffer(buf, file, true)
  end
end

--- BufWritePost: the reverts of `buf` its file now has, or no longer has (one undone when written).
---@param buf integer
---@param file string the file written (`:w other` writes another one)
function M.buffer_written(buf, file)
  local trackers = H.undoable[buf]
  if not trackers or vim.fn.fnamemodify(file, ":p") ~= vim.api.nvim_buf_get_name(buf) then
    return
  end
  local tree = undo_tree(buf)
  for _, t in ipairs(trackers) do
    t.saved = rules.step_applied(tree, t.seq)
  end
end

--- BufUnload (`:bd!`, `:bw!`): the buffer's text is thrown away; see text_replaced.
---@param buf integer
function M.buffer_unloaded(buf)
  text_replaced(buf, false)
end

--- A buffer was wiped: drop its marks.
---@param buf integer
function M.forget_buffer(buf)
  H.marks[buf] = nil
  H.marked[buf] = nil
  H.marks_tick[buf] = nil
  H.undoable[buf] = nil
  H.checked[buf] = nil
end

--- For tests.
function M._state()
  return H
end

function M._reset()
  for b in pairs(H.marks) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.api.nvim_buf_clear_namespace(b, H.ns, 0, -1)
      vim.api.nvim_buf_clear_namespace(b, H.ns_span, 0, -1)
    end
  end
  for b in pairs(H.undoable) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.api.nvim_buf_clear_namespace(b, H.ns_reverted, 0, -1)
    end
  end
  H.sets, H.marks, H.marked, H.reverted, H.undoable, H.checked, H.undone = {}, {}, {}, {}, {}, {}, {}
  H.marks_tick = {}
end

return M
