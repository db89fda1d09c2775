--- pi-ide.ask: protocol v0.5, the model shows a place and asks what is open. While pi's `ide_show` or
--- `ide_open_files` tool waits (at most 1 s), pi writes `pi-<pid>.ask.json` naming this Neovim; each request is
--- answered once, in `<state dir>/<pid>.answers.json` (written like the state file), keyed by pi and the request id.
---   show: the place goes to the quickfix list ("pi-ide: pi's places", appended while it stays pi's, a new list
---         in the stack otherwise, so the user's own list stays one `:colder` away) with one inert notice; the
---         current window, buffer and cursor stay as they are, unless the `follow` option is on (then it opens).
---   ask:  the loaded file buffers with their `modified` flag and `changedtick`, the current one first, and the
---         diagnostics (vim.diagnostic, dated as in the state file) of the named file, of every one, or none.
--- Only a live pi of this user naming this Neovim counts (the inbox checks); nothing is opened, created or run
--- because pi said so (but the user's `follow`). Validation is pure (M.validate); the rest is the UI.
---@module 'pi-ide.ask'
local notice = require("pi-ide.notice")

local M = {}

--- The caps (src/protocol/limits.ts, held together by test/nvim/show-ask.test.ts).
M.MAX_BYTES = 64 * 1024
M.MAX_REQUESTS = 8
M.MAX_NOTE_BYTES = 1024
M.MAX_ANSWERS = 16
M.MAX_FILE_BYTES = 1024 * 1024
M.MAX_BUFFERS = 200
M.MAX_ITEMS = 200
M.MAX_ID_BYTES = 64
M.MAX_LINE = 2147483647
--- How many answered requests are remembered (each is answered once).
M.MAX_DONE = 64
M.QF_TITLE = "pi-ide: pi's places"

local H = {
  --- newest last: the answers as written
  answers = {},
  --- "<pi key>:<id>" -> true, and their order
  done = {},
  done_order = {},
  --- the quickfix list pi's places go to, while it exists
  qf_id = nil,
}

local function is_line(v)
  return type(v) == "number" and v == math.floor(v) and v >= 1 and v <= M.MAX_LINE
end

local function is_path(v)
  return type(v) == "string" and v:sub(1, 1) == "/" and #v <= 4095 and not v:find("%z")
end

--- Pure: one request, or why it is malformed.
---@param r any
---@return table|nil request
---@return string|nil problem
local function validate_request(r)
  if type(r) ~= "table" then
    return nil, "a request is not an object"
  end
  if type(r.id) ~= "string" or #r.id < 1 or #r.id > M.MAX_ID_BYTES then
    return nil, ("a request's id is not 1 to %d bytes"):format(M.MAX_ID_BYTES)
  end
  if type(r.expires) ~= "number" then
    return nil, "a request has no expires"
  end
  if r.kind == "show" then
    if not is_path(r.file) or not is_line(r.line) then
      return nil, "a show has no absolute file and line"
    end
    local e = r.end_line
    if e == vim.NIL then
      e = nil
    end
    if e ~= nil and (not is_line(e) or e < r.line) then
      return nil, "a show's end_line is not a line at or after its line"
    end
    local note = r.note
    if note == vim.NIL then
      note = nil
    end
    if note ~= nil and (type(note) ~= "string" or #note > M.MAX_NOTE_BYTES) then
      return nil, ("a show's note is not text of at most %d bytes"):format(M.MAX_NOTE_BYTES)
    end
    return { id = r.id, kind = "show", file = r.file, line = r.line, end_line = e, note = note, expires = r.expires }
  elseif r.kind == "ask" then
    local d = r.diagnostics
    if d ~= "file" and d ~= "all" and d ~= "none" then
      return nil, "an ask's diagnostics is not file, all or none"
    end
    if d == "file" and not is_path(r.file) then
      return nil, "an ask for a file's diagnostics names no absolute file"
    end
    return { id = r.id, kind = "ask", diagnostics = d, file = d == "file" and r.file or nil, expires = r.expires }
  end
  return nil, "a request's kind is not show or ask"
end

--- Pure: pi's request file, as decoded, for pi `pid` (the name's). Returns its requests (the malformed ones left
--- out, the first's problem said), or nil and why the file is refused whole.
---@param msg any
---@param pid integer
---@return table|nil msg { editor_pid, requests }
---@return string|nil problem
function M.validate(msg, pid)
  if type(msg) ~= "table" or msg.kind ~= "pi-ask" then
    return nil, 'kind is not "pi-ask"'
  end
  if msg.pid ~= pid then
    return nil, "pid does not match the file name"
  end
  if type(msg.editor_pid) ~= "number" then
    return nil, "editor_pid is not a pid"
  end
  if type(msg.requests) ~= "table" or #msg.requests > M.MAX_REQUESTS then
    return nil, ("requests is not a list of at most %d"):format(M.MAX_REQUESTS)
  end
  local out, problem = {}, nil
  for _, raw in ipairs(msg.requests) do
    local r, bad = validate_request(raw)
    if r then
      out[#out + 1] = r
    else
      problem = problem or bad
    end
  end
  return { editor_pid = msg.editor_pid, requests = out }, problem
end

local function remember_done(key)
  H.done[key] = true
  H.done_order[#H.done_order + 1] = key
  while #H.done_order > M.MAX_DONE do
    H.done[table.remove(H.done_order, 1)] = nil
  end
end

--- The loaded file buffers: { buf, file }, the current one first.
local function file_buffers()
  local state = require("pi-ide.state")
  local reload = require("pi-ide.inbox.reload")
  local current = vim.api.nvim_get_current_buf()
  local list = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      if state.is_file_buffer(vim.bo[buf].buftype, name) then
        local entry = { buf = buf, file = reload.buffer_path(buf) }
        if buf == current then
          table.insert(list, 1, entry)
        else
          list[#list + 1] = entry
        end
      end
    end
  end
  return list
end

--- Is `buf` the buffer of `file` (by name, then by real path)?
local function shows(entry, file)
  if entry.file == file then
    return true
  end
  local uv = require("pi-ide.compat").uv
  local a, b = uv.fs_realpath(file), entry.file and uv.fs_realpath(entry.file)
  return a ~= nil and a == b
end

--- The diagnostics of `buf`, vim.NIL when no checker reported; at most `room` items (the answer's cap).
local function diagnostics_of(buf, room)
  local d = require("pi-ide.diagnostics").collect(buf)
  if d == vim.NIL or #d.items <= room then
    return d
  end
  return { version = d.version, total = d.total, items = vim.list_slice(d.items, 1, math.max(0, room)) }
end

local function answer_ask(r)
  local buffers, room = {}, M.MAX_ITEMS
  local all = file_buffers()
  local current = vim.api.nvim_get_current_buf()
  for i, e in ipairs(all) do
    if i > M.MAX_BUFFERS then
      break
    end
    local b = {
      file = e.file,
      modified = vim.bo[e.buf].modified,
      version = vim.api.nvim_buf_get_changedtick(e.buf),
      lines_total = vim.api.nvim_buf_line_count(e.buf),
      active = e.buf == current,
    }
    if r.diagnostics == "all" or (r.diagnostics == "file" and shows(e, r.file)) then
      local d = diagnostics_of(e.buf, room)
      if d ~= vim.NIL then
        room = room - #d.items
      end
      b.diagnostics = d
    end
    buffers[#buffers + 1] = b
  end
  return { kind = "ask", buffers = buffers, buffers_total = #all }
end

--- Open the place in the current window (a split when it holds unsaved changes 'hidden' cannot keep, or is no
--- file window): the user's `follow` option. Returns whether it opened.
local function follow(r)
  local bo = vim.bo[vim.api.nvim_get_current_buf()]
  local split = bo.buftype ~= "" or (bo.modified and not vim.o.hidden)
  -- "A": no swap-file ATTENTION prompt; nothing pi asks for may block the user with a question.
  local shortmess = vim.o.shortmess
  vim.o.shortmess = shortmess .. "A"
  local ok = pcall(vim.cmd, ("%s +%d %s"):format(split and "split" or "edit", r.line, vim.fn.fnameescape(r.file)))
  vim.o.shortmess = shortmess
  return ok
end

local function answer_show(r)
  local text = r.note and notice.inert(r.note) or ""
  local item = { filename = r.file, lnum = r.line, col = 1, text = "pi: " .. text }
  if r.end_line then
    item.end_lnum = r.end_line
  end
  local ours = H.qf_id and vim.fn.getqflist({ id = H.qf_id }).id or 0
  if ours ~= 0 then
    vim.fn.setqflist({}, "a", { id = ours, items = { item } })
  else
    vim.fn.setqflist({}, " ", { title = M.QF_TITLE, items = { item } })
    H.qf_id = vim.fn.getqflist({ id = 0 }).id
  end
  local size = vim.fn.getqflist({ id = H.qf_id, size = 0 }).size
  local lines = r.end_line and r.end_line ~= r.line and ("%d-%d"):format(r.line, r.end_line) or tostring(r.line)
  local opened = require("pi-ide").option("follow") == true and follow(r)
  local name = vim.fn.fnamemodify(r.file, ":~:.")
  local tail = (r.note and (": " .. text) or "") .. (opened and "" or (" (:cc %d)"):format(size))
  notice.show({
    { "(pi-ide) pi shows ", ":" .. lines .. tail },
    { "(pi-ide) pi shows ", ":" .. lines .. (opened and "" or (" (:cc %d)"):format(size)) },
    { "(pi-ide) pi: ", " (:cc)" },
  }, name)
  return { kind = "show", status = opened and "opened" or "listed", list = "quickfix" }
end

--- Encode the answers, the oldest dropped until the file stays under M.MAX_FILE_BYTES.
---@return string|nil text
local function encode(pid)
  while true do
    local text = vim.json.encode({
      protocol = "0.5",
      kind = "editor-answers",
      pid = pid,
      timestamp = require("pi-ide.compat").now(),
      answers = H.answers,
    })
    if #text <= M.MAX_FILE_BYTES or #H.answers == 0 then
      return #text <= M.MAX_FILE_BYTES and text or nil
    end
    table.remove(H.answers, 1)
  end
end

--- Read `<dir>/pi-<pid>[-<ns>].ask.json` of pi `ident` (live and ours: the inbox checked) and answer each new
--- request for this Neovim. Returns nil, or why the file (or a request in it) was not used.
---@param dir string
---@param ident table pi's identity (pi-ide.inbox.identity)
---@return string|nil problem
function M.load(dir, ident)
  local identity = require("pi-ide.inbox.identity")
  local path = ("%s/%s"):format(dir, identity.file_name("ask", ident.pid, ident.ns))
  local ok, msg = require("pi-ide.inbox.read").read_json(path, M.MAX_BYTES)
  if not ok then
    return msg -- nil: pi waits on nothing any more
  end
  local m, bad = M.validate(msg, ident.pid)
  local disagree = identity.disagreement(ident, msg.pid_ns)
  if not m or disagree then
    return bad or disagree
  end
  local me = vim.fn.getpid()
  if m.editor_pid ~= me then
    return nil -- asks another editor
  end
  local pi_ns = type(msg.pid_ns) == "string" and msg.pid_ns or nil
  local now, answered = require("pi-ide.compat").now(), false
  for _, r in ipairs(m.requests) do
    local key = ident.key .. ":" .. r.id
    if not H.done[key] and r.expires >= now then
      remember_done(key)
      local okr, a = pcall(r.kind == "show" and answer_show or answer_ask, r)
      if not okr then
        a = { kind = r.kind, status = "refused", reason = "the editor failed: " .. tostring(a) }
        if r.kind == "ask" then
          a = { kind = "ask", buffers = {}, buffers_total = 0 }
        end
      end
      a.pi_pid, a.pi_ns, a.id = ident.pid, pi_ns, r.id
      H.answers[#H.answers + 1] = a
      answered = true
    end
  end
  while #H.answers > M.MAX_ANSWERS do
    table.remove(H.answers, 1)
  end
  if answered then
    local text = encode(me)
    if not text then
      return "the answers would not fit in their file"
    end
    local wok, err = require("pi-ide.writer").write_named(dir, M.file_name(me), text)
    if not wok then
      return err
    end
  end
  return bad
end

--- `<pid>.answers.json` (src/protocol/show-ask.ts, editorAnswersFileName).
---@param pid integer
---@return string
function M.file_name(pid)
  return ("%d.answers.json"):format(pid)
end

--- For tests.
function M._state()
  return H
end

return M
