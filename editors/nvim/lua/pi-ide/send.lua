--- pi-ide.send: `:PiIdeSend` (protocol v0.5, send to pi). Hands the pi connected to this Neovim the selection (a
--- range), the line under the cursor, the diagnostic there, pi's hunk there or the whole file, with the words typed
--- after the command: `<state dir>/<pid>.send.json`, written like the state file (0600, exclusive temp file and
--- rename, in a checked directory). pi puts it into its input as a draft, or with `!` sends it at once, and says
--- what became of it in its message (`sent`): answered() shows that in one line. No autocmd, no timer.
---@module 'pi-ide.send'
local compat = require("pi-ide.compat")
local uv = compat.uv

local M = {}

--- What `item.text` may take once JSON-encoded: the selection's cap (MAX_SELECTION_TEXT_BYTES).
M.MAX_TEXT_BYTES = 256 * 1024
--- The typed prompt's cap in bytes (MAX_SEND_PROMPT_BYTES).
M.MAX_PROMPT_BYTES = 16 * 1024

local H = {
  chosen = nil, ---@type string|nil the key (pi-ide.inbox.identity) of the pi picked when several name this Neovim
  pending = {}, ---@type table<string, boolean> ids sent and not yet answered
  count = 0,
  last = nil, ---@type table|nil the last send: { id, pi, kind, file, fate }
}

--- The forms after the command: `:PiIdeSend @diagnostic [prompt]` and so on.
M.FORMS = { "@diagnostic", "@hunk", "@file" }

--- Pure: the form word and the prompt of the command's arguments.
---@param args string
---@return string|nil form "diagnostic", "hunk", "file" or nil
---@return string prompt
function M.parse_args(args)
  args = vim.trim(args or "")
  local word, rest = args:match("^@(%a+)%s*(.*)$")
  if word == "diagnostic" or word == "hunk" or word == "file" then
    return word, rest
  end
  return nil, args
end

local function say(text)
  require("pi-ide.notice").line(text)
end

--- The lines first..last of `buf` joined, cut to the cap (whole characters). Returns text, cut.
local function lines_text(buf, first, last)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, first - 1, last, false), "\n")
  return require("pi-ide.selection").fit(text, M.MAX_TEXT_BYTES)
end

--- The item to send, or nil and why not.
---@param form string|nil
---@param range { first: integer, last: integer }|nil
---@return table|nil item
---@return string|nil why
function M.item(form, range)
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buf)
  if not require("pi-ide.state").is_file_buffer(vim.bo[buf].buftype, name) or name == "" then
    return nil, "(pi-ide) not a file buffer: nothing sent"
  end
  local file = vim.fn.fnamemodify(name, ":p")
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local kind, first, last, message = "line", row, row, nil
  if form == "file" then
    kind, first, last = "file", 1, vim.api.nvim_buf_line_count(buf)
  elseif form == "diagnostic" then
    local found = vim.diagnostic.get(buf, { lnum = row - 1 })
    table.sort(found, function(a, b)
      return (a.severity or 4) < (b.severity or 4)
    end)
    local d = found[1]
    if not d then
      return nil, "(pi-ide) no diagnostic under the cursor: nothing sent"
    end
    kind, first, message = "diagnostic", d.lnum + 1, tostring(d.message)
    last = math.max(first, (d.end_lnum or d.lnum) + 1)
  elseif form == "hunk" then
    local a, b = require("pi-ide.review").hunk_at_cursor()
    if not a then
      return nil, "(pi-ide) no hunk of pi's under the cursor: nothing sent"
    end
    kind, first, last = "hunk", a, b
  elseif range then
    kind, first, last = "selection", range.first, range.last
  end
  last = math.min(last, vim.api.nvim_buf_line_count(buf))
  local text, cut = lines_text(buf, first, last)
  return {
    kind = kind,
    file = file,
    start_line = first,
    end_line = math.max(first, last),
    text = text,
    truncated = cut,
    message = message,
  }
end

--- Write the request for `pi` (pis.all()'s entry: pid, and pid_ns as its file said, or a pid: a pi that wrote no
--- pid_ns). Returns the id, or nil and why not.
function M.write(pi, item, mode, prompt)
  if type(pi) ~= "table" then
    pi = { pid = pi }
  end
  local writer = require("pi-ide.writer")
  local dir = writer.state_dir(uv.os_getenv("XDG_RUNTIME_DIR"))
  local ok, err = writer.ensure_dir(dir)
  if not ok then
    return nil, "(pi-ide) not sending: " .. tostring(err)
  end
  H.count = H.count + 1
  local id = ("s%d-%d-%d"):format(vim.fn.getpid(), uv.hrtime() % 1e12, H.count)
  local pid = vim.fn.getpid()
  local text = vim.json.encode({
    protocol = "0.5",
    kind = "send",
    pid = pid,
    pi_pid = pi.pid,
    pi_ns = pi.pid_ns,
    id = id,
    timestamp = compat.now(),
    mode = mode,
    prompt = require("pi-ide.selection").cut(prompt, M.MAX_PROMPT_BYTES),
    item = item,
  })
  ok, err = writer.write_named(dir, ("%d.send.json"):format(pid), text)
  if not ok then
    return nil, "(pi-ide) not sending: " .. tostring(err)
  end
  H.pending[id] = true
  H.last = { id = id, pi = pi.pid, kind = item.kind, file = item.file, fate = nil }
  return id
end

--- Which pi: the only one naming this Neovim, the one picked before while it still does, or ask once.
local function with_pi(fn)
  local all = require("pi-ide.inbox.pis").all()
  if #all == 0 then
    say("(pi-ide) no pi is connected to this Neovim: nothing sent")
    return
  end
  if #all == 1 then
    return fn(all[1])
  end
  for _, p in ipairs(all) do
    if p.key == H.chosen then
      return fn(p)
    end
  end
  vim.ui.select(all, {
    prompt = "Send to which pi?",
    format_item = function(p)
      local ns = p.pid_ns and (" (%s)"):format(p.pid_ns) or ""
      return ("pi %d%s in %s"):format(p.pid, ns, require("pi-ide.notice").inert(p.cwd))
    end,
  }, function(p)
    if p then
      H.chosen = p.key
      local ok, err = pcall(fn, p)
      if not ok then
        say("(pi-ide) send failed: " .. tostring(err))
      end
    end
  end)
end

--- :PiIdeSend[!] [@diagnostic|@hunk|@file] [prompt], from nvim_create_user_command's table.
function M.command(opts)
  local ok, err = pcall(function()
    local form, prompt = M.parse_args(opts.args)
    local range = (opts.range or 0) > 0 and { first = opts.line1, last = opts.line2 } or nil
    local item, why = M.item(form, range)
    if not item then
      say(why)
      return
    end
    local mode = opts.bang and "now" or "draft"
    with_pi(function(pi)
      local id, werr = M.write(pi, item, mode, prompt)
      if not id then
        say(werr)
      end
    end)
  end)
  if not ok then
    say("(pi-ide) send failed: " .. tostring(err))
  end
end

local FATES = {
  draft = "in pi's input as a draft",
  prompt = "sent to pi as a prompt",
  ["follow-up"] = "queued for pi as a follow-up",
}

--- A pi message naming us (validated by the inbox): if it answers one of our sends, say what became of it.
function M.answered(msg)
  local sent = msg.sent
  if type(sent) ~= "table" or type(sent.id) ~= "string" or not H.pending[sent.id] then
    return
  end
  if sent.editor_pid ~= vim.fn.getpid() then
    return
  end
  H.pending[sent.id] = nil
  local fate = type(sent.fate) == "string" and sent.fate or "?"
  if H.last and H.last.id == sent.id then
    H.last.fate = fate
  end
  local text
  if FATES[fate] then
    text = ("(pi-ide) %s %s"):format(H.last and H.last.kind or "send", FATES[fate])
  elseif fate == "excluded" then
    text = "(pi-ide) not sent: the file is excluded by pi's ignore rules"
  else
    text = "(pi-ide) pi refused the send: " .. (type(sent.reason) == "string" and sent.reason or fate)
  end
  local line = require("pi-ide.notice").inert(text)
  vim.schedule(function()
    vim.notify(line, FATES[fate] and vim.log.levels.INFO or vim.log.levels.WARN)
  end)
end

--- For tests and :PiIde: the last send and its fate.
function M._state()
  return { last = H.last, chosen = H.chosen }
end

return M
