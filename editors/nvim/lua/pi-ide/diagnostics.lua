--- pi-ide.diagnostics: a buffer's vim.diagnostic entries as protocol v0.3 reports them, stamped with the
--- buffer version (changedtick) they belong to, so pi can tell current diagnostics from stale ones.
---
--- The stamp is the changedtick at the last DiagnosticChanged for the buffer: a checker (LSP, linter)
--- publishes for the content it saw, and that is the content of that moment. The DiagnosticChanged handler
--- only records the stamp and bumps a generation counter; the reading, sorting and capping happen at most
--- once per generation, when a state write needs them.
---@module 'pi-ide.diagnostics'
local M = {}

--- Caps from PROTOCOL.md (v0.3): the state file stays small whatever the checker reports.
M.MAX_ITEMS = 100
M.MAX_MESSAGE = 500

local SEVERITY = { "error", "warning", "info", "hint" } -- vim.diagnostic.severity.ERROR = 1 .. HINT = 4

local H = {
  stamp = {}, ---@type table<integer, integer> buf -> changedtick at the last DiagnosticChanged
  gen = {}, ---@type table<integer, integer> buf -> generation, bumped by every DiagnosticChanged
  cache = {}, ---@type table<integer, { gen: integer, value: table }>
  before_write = {}, ---@type table<integer, integer> buf -> changedtick at BufWritePre
  skip_clears = {}, ---@type table<integer, integer> buf -> empty publishes still to ignore after a reload
}

local function tick(buf)
  return vim.api.nvim_buf_get_var(buf, "changedtick")
end

--- DiagnosticChanged: stamp the buffer's diagnostics with its current version.
---@param buf integer
function M.on_changed(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local skip = H.skip_clears[buf]
  if skip then
    if #vim.diagnostic.get(buf) == 0 and skip > 0 then
      -- The server clearing the closed document, not a verdict on the new content: stamping it would
      -- present "no diagnostics" as current.
      H.skip_clears[buf] = skip > 1 and skip - 1 or nil
      return
    end
    H.skip_clears[buf] = nil
  end
  H.stamp[buf] = tick(buf)
  H.gen[buf] = (H.gen[buf] or 0) + 1
end

--- Writing a buffer bumps its changedtick without changing its content: diagnostics that were current
--- before the write are still current after it.
---@param buf integer
function M.on_write_pre(buf)
  H.before_write[buf] = tick(buf)
end

---@param buf integer
function M.on_write_post(buf)
  local before = H.before_write[buf]
  H.before_write[buf] = nil
  if before and H.stamp[buf] == before and vim.api.nvim_buf_is_valid(buf) then
    H.stamp[buf] = tick(buf)
    H.gen[buf] = (H.gen[buf] or 0) + 1
  end
end

---@param buf integer
function M.forget(buf)
  H.stamp[buf], H.gen[buf], H.cache[buf], H.before_write[buf], H.skip_clears[buf] = nil, nil, nil, nil, nil
end

--- Before 0.10, Neovim's LSP client answers a reload with didClose + didOpen, and push-diagnostics servers
--- (vscode-json-language-server, most VS Code servers) answer the didClose by publishing an empty list, at
--- once, before they have looked at the new content. After a reload pi asked for, that one empty publish
--- per attached client is not stamped. If a server does not send it, its first real empty publish is the
--- one skipped: pi then hears nothing and says so ("no diagnostics ... within 2 s"), never a false "clean".
---@param buf integer
function M.on_reload(buf)
  if vim.fn.has("nvim-0.10") == 1 or not vim.lsp or vim.lsp.get_clients then
    return
  end
  local n = vim.tbl_count(vim.lsp.buf_get_clients(buf))
  H.skip_clears[buf] = n > 0 and n or nil
end

--- Order: severity, then line, then column. Sorting plain numbers is several times faster than sorting with
--- a Lua comparator (500 items: ~0.05 ms instead of ~0.35 ms), so each item gets one numeric key:
--- severity (3 bits) | line (24 bits) | column (16 bits) | index (10 bits) = 53 bits, exact in a double.
local function sorted_indices(list)
  local n = #list
  if n > 1023 then
    local idx = {}
    for i = 1, n do
      idx[i] = i
    end
    table.sort(idx, function(x, y)
      local a, b = list[x], list[y]
      if (a.severity or 1) ~= (b.severity or 1) then
        return (a.severity or 1) < (b.severity or 1)
      end
      if a.lnum ~= b.lnum then
        return a.lnum < b.lnum
      end
      return (a.col or 0) < (b.col or 0)
    end)
    return idx
  end
  local keys = {}
  for i = 1, n do
    local d = list[i]
    local sev = math.min(math.max(d.severity or 1, 1), 7)
    local line = math.min(math.max(d.lnum or 0, 0), 16777215)
    local col = math.min(math.max(d.col or 0, 0), 65535)
    keys[i] = ((sev * 16777216 + line) * 65536 + col) * 1024 + i
  end
  table.sort(keys)
  for i = 1, n do
    keys[i] = keys[i] % 1024
  end
  return keys
end

--- Pure: vim.diagnostic items -> the protocol's `{version, total, items}` (errors first, then by position,
--- capped). Exposed for tests and the benchmark.
---@param list table[] vim.diagnostic.get() items
---@param version integer
---@param total integer|nil how many there are in all (default #list)
---@return table
function M.build(list, version, total)
  local order = sorted_indices(list)
  local items = {}
  local null = vim.NIL
  for i = 1, math.min(#order, M.MAX_ITEMS) do
    local d = list[order[i]]
    local message = type(d.message) == "string" and d.message or tostring(d.message)
    if #message > M.MAX_MESSAGE then
      -- Cut on a UTF-8 character boundary so the JSON stays valid text.
      local cut = M.MAX_MESSAGE
      while cut > 0 and message:byte(cut + 1) and message:byte(cut + 1) >= 0x80 and message:byte(cut + 1) < 0xC0 do
        cut = cut - 1
      end
      message = message:sub(1, cut)
    end
    local code = d.code
    items[i] = {
      severity = SEVERITY[d.severity] or "error",
      line = (d.lnum or 0) + 1,
      column = (d.col or 0) + 1,
      end_line = d.end_lnum and (d.end_lnum + 1) or null,
      end_column = d.end_col and (d.end_col + 1) or null,
      message = message,
      source = type(d.source) == "string" and d.source or null,
      code = (type(code) == "string" or type(code) == "number") and tostring(code) or null,
    }
  end
  return { version = version, total = total or #list, items = items }
end

--- The diagnostics worth reading, and how many there are in all. vim.diagnostic.get() deep-copies every
--- item (0.10: ~0.4 ms for 500), so where vim.diagnostic.count() exists (0.10+) only the severities
--- that can make the cap are fetched.
local function fetch(buf)
  if not vim.diagnostic.count then
    local list = vim.diagnostic.get(buf)
    return list, #list
  end
  local counts = vim.diagnostic.count(buf)
  local total = 0
  for sev = 1, 4 do
    total = total + (counts[sev] or 0)
  end
  local list, got = {}, 0
  for sev = 1, 4 do
    if got >= M.MAX_ITEMS then
      break
    end
    if (counts[sev] or 0) > 0 then
      for _, d in ipairs(vim.diagnostic.get(buf, { severity = sev })) do
        list[#list + 1] = d
      end
      got = got + counts[sev]
    end
  end
  return list, total
end

--- The buffer's diagnostics for the state file, or vim.NIL when no checker has reported for it yet
--- (then nothing is known, not "no problems").
---@param buf integer
---@return table|userdata
function M.collect(buf)
  local gen = H.gen[buf]
  if not gen then
    return vim.NIL
  end
  local cached = H.cache[buf]
  if cached and cached.gen == gen then
    return cached.value
  end
  local list, total = fetch(buf)
  local value = M.build(list, H.stamp[buf], total)
  H.cache[buf] = { gen = gen, value = value }
  return value
end

--- Will a checker report diagnostics for this buffer? An attached LSP client, or a linter that says so by
--- setting `vim.b.pi_ide_diagnostics_expected = true` (nvim-lint, efm-style setups, tests).
---@param buf integer
---@return boolean
function M.expected(buf)
  local ok, flag = pcall(vim.api.nvim_buf_get_var, buf, "pi_ide_diagnostics_expected")
  if ok and flag == true then
    return true
  end
  local lsp = vim.lsp
  if not lsp then
    return false
  end
  -- TODO: use get_clients only when 0.9 support is dropped (0.10 added it; buf_get_clients is deprecated).
  if lsp.get_clients then
    return #lsp.get_clients({ bufnr = buf }) > 0
  end
  return next(lsp.buf_get_clients(buf)) ~= nil
end

return M
