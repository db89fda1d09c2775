--- pi-ide.approval: protocol v0.4, optional approval. With `ideContext.approve: "edits"` pi's write/edit waits
--- for the user's decision: pi writes `pi-<pid>.approval.json` (the proposed hunks against the file as it is)
--- while it waits and removes it once decided. Passive, never blocking: a one-line notice, marks of the
--- proposed hunks in the file's buffer if it is open (signs, and the proposed lines as virtual lines), the
--- statusline and :PiIde; nothing opens or takes focus unless asked:
---   :PiIde approve    let pi apply the change
---   :PiIde reject     pi does not apply it (and tells its model the user rejected it)
---   :PiIde proposal   the proposed change beside the buffer (or as a diff), read-only
--- Issue 26: a buffer with unsaved changes shows the proposal against it (rules.against, the merge's rule): hunks
--- placed where the merge would put them, those touching the user's unsaved lines marked there with "!" and named.
--- An answer is bound to the request the user was shown (PROTOCOL.md "An answer is for the request the user saw"):
--- approve/reject answer the request this Neovim last showed (its notice, or :PiIde proposal) and not yet answered;
--- when that one no longer waits and another does, they refuse in one line that names the other, and the same
--- command again answers it. A request that arrives while one shown is unanswered does not take its place.
--- The decision goes into the state file (`decisions`); pi reads it. Doing nothing is not a rejection: pi's own
--- dialog may answer, or its timeout ends the wait. Only a request of a live pi of this user naming this
--- Neovim counts; it never changes a buffer or a file.
--- The rules (validation, which request an answer is for, the hunks against a text...) are pure, in
--- pi-ide.approval.rules; this module is the UI: notice, marks, commands, the buffers' events.
---@module 'pi-ide.approval'
local notice = require("pi-ide.notice")
local rules = require("pi-ide.approval.rules")

local M = {}

--- Asks init.lua for a prompt state write (set by pi-ide.inbox.start).
---@type fun()|nil
M.on_change = nil

--- The caps (pi-ide.approval.rules), and its pure rules, reachable here as before the split.
M.MAX_BYTES = rules.MAX_BYTES
M.MAX_DECISIONS = rules.MAX_DECISIONS
M.MAX_VIRTUAL_LINES = rules.MAX_VIRTUAL_LINES
M.pid_of_name = rules.pid_of_name
M.validate = rules.validate
M.target = rules.target
M.matches = rules.matches
M.apply = rules.apply
M.diff_lines = rules.diff_lines

local H = {
  ns = vim.api.nvim_create_namespace("pi-ide-approval"),
  --- pi pid -> the request it waits on
  pending = {},
  --- newest last: { pi_pid, id, decision }
  decisions = {},
  --- "<pi key>:<request id>" -> true, once its notice was shown (pi key: pi-ide.inbox.identity.key)
  told = {},
  --- { pi_pid, id } of the request the user was last shown and has not answered: the one approve/reject answer
  shown = nil,
  hl_defined = false,
}

local function define_highlights()
  if H.hl_defined then
    return
  end
  H.hl_defined = true
  local links = { PiIdeApproval = "DiffText", PiIdeApprovalAdd = "DiffAdd" }
  for name, link in pairs(links) do
    pcall(vim.api.nvim_set_hl, 0, name, { link = link, default = true })
  end
end

--- The request shown first: the one that runs out first (M.target's rule, with no request shown).
local function current()
  local _, first = rules.target(H.pending, nil)
  return first
end

local function buffer_of(file)
  local reload = require("pi-ide.inbox.reload")
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and reload.buffer_path(buf) == file then
      return buf
    end
  end
  return nil
end

--- Where the proposal `r` stands in `buf`: one place per hunk ({ row, rows, touches }), and the proposed text as
--- the user would see it; nil when it cannot be shown there. An unmodified buffer holds the file pi read: the
--- hunks' own lines, where they still stand. One with unsaved changes (issue 26): against the file on disk (read as
--- a reload reads it) by the merge's rule (rules.against), when the disk holds the lines pi read.
local function places_in(buf, r)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  if not vim.bo[buf].modified then
    if not rules.matches(lines, r.hunks) then
      return nil
    end
    local places = {}
    for i, h in ipairs(r.hunks) do
      places[i] = { row = h.old_start - 1, rows = #h.old_text, touches = false }
    end
    return places, rules.apply(lines, r.hunks)
  end
  local merge = require("pi-ide.inbox.merge")
  local text = require("pi-ide.inbox.reload").read_disk(buf)
  if not text or not merge.comparable(buf) then
    return nil
  end
  local disk = merge.split(text)
  if not rules.matches(disk, r.hunks) then
    return nil
  end
  return rules.against(disk, lines, r.hunks)
end

--- Mark the proposed hunks in the buffer of `file`, if it is loaded and they can be shown there (places_in). The
--- request learns which of the user's unsaved lines it touches (`touch`, `touch_short`: rules.touch_phrase).
local function mark(file)
  local buf = buffer_of(file)
  if not buf then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  local r
  for _, p in pairs(H.pending) do
    if p.file == file then
      r = p
    end
  end
  if not r or r.note then
    return
  end
  -- A request that cannot be placed (hunks out of order) is not shown there; never an error in the editor.
  local ok, places = pcall(places_in, buf, r)
  if not ok or not places then
    return
  end
  r.touch, r.touch_short = rules.touch_phrase(places)
  if require("pi-ide").option("review_marks") == false then
    return
  end
  define_highlights()
  local count = vim.api.nvim_buf_line_count(buf)
  for i, h in ipairs(r.hunks) do
    local place = places[i]
    local virt = {}
    for j, text in ipairs(h.new_text) do
      if j > rules.MAX_VIRTUAL_LINES then
        virt[#virt + 1] = { { ("+ … %d more lines"):format(#h.new_text - j + 1), "PiIdeApprovalAdd" } }
        break
      end
      virt[#virt + 1] = { { "+ " .. text, "PiIdeApprovalAdd" } }
    end
    -- Replaced lines carry the sign; the proposed lines follow them (an insertion: above its line). A hunk that
    -- touches the user's unsaved lines is marked on those lines, with "!".
    local n = place.rows
    local row = math.max(0, math.min(place.row, count - 1))
    local opts = { sign_text = place.touches and "!" or "?", sign_hl_group = "PiIdeApproval", priority = 9 }
    if n > 0 then
      opts.end_row = row + n - 1
      if #virt > 0 then
        pcall(vim.api.nvim_buf_set_extmark, buf, H.ns, row + n - 1, 0, { virt_lines = virt })
      end
    elseif #virt > 0 then
      opts.virt_lines = virt
      opts.virt_lines_above = place.row < count
    end
    pcall(vim.api.nvim_buf_set_extmark, buf, H.ns, row, 0, opts)
  end
end

local function unmark(file)
  local buf = buffer_of(file)
  if buf then
    vim.api.nvim_buf_clear_namespace(buf, H.ns, 0, -1)
  end
end

local function describe(r)
  local name = vim.fn.fnamemodify(r.file, ":~:.")
  local what = r.note and ("(" .. r.note .. ")")
    or ("%d %s"):format(r.hunks_total, r.hunks_total == 1 and "hunk" or "hunks")
  return name, what
end

--- The user is shown `r`: approve/reject answer it from now on.
local function bind(r)
  H.shown = { pi_pid = r.pi_pid, key = r.pi_key, id = r.id }
end

--- A request arrived: say so once, in one line that fits (no hit-enter prompt). It becomes the one approve/reject
--- answer only when no request the user was shown is still unanswered (they may be typing their answer to it).
local function tell(r)
  -- A request is (pi pid, id): pi's ids are its tool calls', which another pi may use too.
  local key = ("%s:%s"):format(r.pi_key or require("pi-ide.inbox.identity").key(r.pi_pid, nil), r.id)
  if H.told[key] then
    return
  end
  H.told[key] = true
  if not H.shown then
    bind(r)
  end
  local name, what = describe(r)
  -- Issue 26: the hunks that touch the user's unsaved lines are named in every form of the line.
  local long, short = r.touch and ("; " .. r.touch) or "", r.touch_short and (" (" .. r.touch_short .. ")") or ""
  notice.show({
    {
      ("(pi-ide) pi waits for your approval (%s, %d s) of "):format(what, r.timeout_s),
      long .. ": :PiIde approve / reject / proposal",
    },
    { "(pi-ide) approve pi's change to ", short .. "? :PiIde approve / reject" },
    { "(pi-ide) pi waits: ", short .. " (:PiIde)" },
  }, name)
end

--- Read `<dir>/pi-<pid>.approval.json` (a live pi of ours). A missing file: pi waits on nothing (any longer).
--- Returns nil, or why the file was not used.
---@param dir string
---@param who table|integer pi's identity (pi-ide.inbox.identity; v0.5 `pi-<pid>-<ns>.approval.json`), or a pid
---@return string|nil problem
function M.load(dir, who)
  local identity = require("pi-ide.inbox.identity")
  local ident = identity.of(who)
  local pid, key = ident.pid, ident.key
  local path = ("%s/%s"):format(dir, identity.file_name("approval", pid, ident.ns))
  local ok, msg = require("pi-ide.inbox.read").read_json(path, rules.MAX_BYTES)
  if not ok then
    if not msg then
      M.forget(key)
    end
    return msg
  end
  local r, bad = rules.validate(msg, pid)
  bad = bad or identity.disagreement(ident, msg.pid_ns)
  if not r or bad then
    return bad
  end
  -- v0.5: the request is pi (pid, namespace)'s; the decision echoes `pid_ns` as `pi_ns`, as the file said.
  r.pi_key = key
  r.pi_ns = type(msg.pid_ns) == "string" and msg.pid_ns or nil
  if r.editor_pid ~= vim.fn.getpid() then
    M.forget(key) -- asks another editor
    return nil
  end
  local before = H.pending[key]
  if before and before.file ~= r.file then
    unmark(before.file)
  end
  H.pending[key] = r
  mark(r.file)
  tell(r)
  return nil
end

--- pi `who` (its key, identity or pid) waits on nothing any more (decided, gone, or asking another editor).
---@param who string|table|integer
function M.forget(who)
  local key = require("pi-ide.inbox.identity").key_of(who)
  local r = H.pending[key]
  if r then
    H.pending[key] = nil
    unmark(r.file)
  end
end

--- Not listening any more: no request counts.
function M.reset()
  for pid in pairs(H.pending) do
    M.forget(pid)
  end
end

--- :PiIde approve | reject. Returns the one line to tell the user.
---@param decision "accept"|"reject"
---@return string
function M.decide(decision)
  local r, instead = rules.target(H.pending, H.shown)
  if not r then
    if not instead then
      H.shown = nil
      return "(pi-ide) pi is not waiting for your approval"
    end
    -- The request the user saw is gone (timed out, answered elsewhere): this one was never answered by them.
    bind(instead)
    local name, what = describe(instead)
    local verb = decision == "accept" and "approve" or "reject"
    return ("(pi-ide) not %s: the request you saw is gone; pi now asks about %s (%s): :PiIde %s again"):format(
      decision == "accept" and "approved" or "rejected",
      name,
      what,
      verb
    )
  end
  H.shown = nil
  M.forget(r.pi_key or r.pi_pid)
  local name = describe(r)
  if os.time() > r.expires then
    return ("(pi-ide) pi's request to change %s ran out (%d s); pi did not apply it"):format(name, r.timeout_s)
  end
  rules.add_decision(H.decisions, { pi_pid = r.pi_pid, pi_ns = r.pi_ns, id = r.id, decision = decision })
  if M.on_change then
    M.on_change()
  end
  return decision == "accept" and ("(pi-ide) approved: pi applies its change to %s"):format(name)
    or ("(pi-ide) rejected: pi leaves %s as it is"):format(name)
end

--- :PiIde proposal: the change pi waits on. The file's buffer, when it holds the lines pi read, beside the
--- proposed text (pi-ide.inbox.compare: the buffer is never reloaded or written, no W12); else the hunks as a
--- diff in a scratch window. Either way read-only, and the cursor comes back. Returns nil or why not.
---@return string|nil problem
function M.show()
  local r = rules.target(H.pending, H.shown) or current()
  if not r then
    return "(pi-ide) pi is not waiting for your approval"
  end
  bind(r)
  local compare = require("pi-ide.inbox.compare")
  local buf = buffer_of(r.file)
  if buf and not r.note then
    -- Issue 26: a buffer with unsaved changes beside itself with pi's hunks that touch none of them placed.
    local ok, places, proposed = pcall(places_in, buf, r)
    if ok and places then
      compare.show_beside(buf, proposed, "pi-ide://proposal" .. r.file)
      local touch = rules.touch_phrase(places)
      return touch and ("(pi-ide) %s"):format(touch) or nil
    end
  end
  vim.cmd("botright new")
  local scratch = vim.api.nvim_get_current_buf()
  local bo = vim.bo[scratch]
  bo.buftype, bo.bufhidden, bo.swapfile = "nofile", "wipe", false
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, rules.diff_lines(r))
  bo.modifiable, bo.readonly, bo.filetype = false, true, "diff"
  pcall(vim.api.nvim_buf_set_name, scratch, "pi-ide://proposal.diff" .. r.file)
  vim.cmd("wincmd p")
  return nil
end

--- The state file's `decisions` (v0.4): always a list, empty included: it tells pi this Neovim answers.
---@return table
function M.report()
  return vim.deepcopy(H.decisions)
end

--- For statuslines: "" or "approve?" while pi waits.
---@return string
function M.status_text()
  return current() and "approve?" or ""
end

--- Lines for :PiIde.
---@return string[]
function M.summary_lines()
  local r = current()
  if not r then
    return {}
  end
  local name, what = describe(r)
  return {
    ("pi waits for your approval: %s of %s (%s)%s, %d s left. :PiIde approve / reject / proposal"):format(
      r.created and "creation" or r.tool,
      notice.inert(name),
      what,
      r.touch and ("; " .. r.touch) or "",
      math.max(0, r.expires - os.time())
    ),
  }
end

--- BufReadPost: a file with a pending request, opened now, gets its marks.
---@param buf integer
function M.buffer_read(buf)
  local file = require("pi-ide.inbox.reload").buffer_path(buf)
  for _, r in pairs(H.pending) do
    if r.file == file then
      mark(file)
    end
  end
end

--- For tests.
function M._state()
  return H
end

return M
