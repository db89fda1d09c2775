--- pi-ide.diagnostics: a buffer's vim.diagnostic entries as protocol v0.3 reports them, stamped with the
--- buffer version (changedtick) they belong to, so pi can tell current diagnostics from stale ones.
---
--- A checker (LSP client, linter) publishes into its own namespace, for the content it saw: the content of
--- that moment. Several checkers publish at different times, so freshness is kept per namespace: the
--- changedtick at which each namespace's items were last set. The buffer's diagnostics are reported with
--- the changedtick of the last DiagnosticChanged (the newest verdict) and list only the items of the
--- namespaces set at that changedtick. A namespace not set since is left out (neither listed nor counted)
--- until it publishes again: its items describe older content, and pi must never take them for current.
---
--- The DiagnosticChanged handler only records the stamps and bumps a generation counter; the reading,
--- sorting and capping happen at most once per generation, when a state write needs them.
---@module 'pi-ide.diagnostics'
local M = {}

--- Caps from PROTOCOL.md (v0.3): the state file stays small whatever the checker reports.
M.MAX_ITEMS = 100
M.MAX_MESSAGE = 500

local SEVERITY = { "error", "warning", "info", "hint" } -- vim.diagnostic.severity.ERROR = 1 .. HINT = 4

--- Before 0.10, vim.diagnostic.get() returns the stored items themselves (0.10 deep-copies them), and
--- vim.diagnostic.set() stores the tables it was given: a namespace whose first item is another table than
--- last time was set again, even with equal content.
local GET_SHARES_ITEMS = vim.fn.has("nvim-0.10") == 0

local H = {
  stamp = {}, ---@type table<integer, integer> buf -> changedtick at the last DiagnosticChanged (the version)
  ns_stamp = {}, ---@type table<integer, table<integer, integer>> buf -> namespace -> changedtick when last set
  seen = {}, ---@type table<integer, table<integer, { first: table, n: integer }>> before 0.10: the lists last seen
  gen = {}, ---@type table<integer, integer> buf -> generation, bumped by every DiagnosticChanged
  cache = {}, ---@type table<integer, { gen: integer, value: table }>
  before_write = {}, ---@type table<integer, integer> buf -> changedtick at BufWritePre
  skip_clears = {}, ---@type table<integer, integer> buf -> empty publishes still to ignore after a reload
}

local function tick(buf)
  return vim.api.nvim_buf_get_var(buf, "changedtick")
end

--- Pure: the namespaces of a list of diagnostics (0.9+: DiagnosticChanged's `data.diagnostics`, the list
--- just set; core sets one namespace at a time, but a plugin may fire the event with anything).
---@param list table[]
---@return table<integer, true>
function M.namespaces_of(list)
  local set = {}
  for _, d in ipairs(list) do
    if type(d) == "table" and type(d.namespace) == "number" then
      set[d.namespace] = true
    end
  end
  return set
end

--- Pure: which namespaces were set again, given how each namespace's stored list looked before and looks
--- now (`{first = its first item table, n = its length}`): a new first table or another length.
---@param before table<integer, { first: table, n: integer }>
---@param now table<integer, { first: table, n: integer }>
---@return table<integer, true>
function M.replaced(before, now)
  local set = {}
  for ns, s in pairs(now) do
    local b = before[ns]
    if not b or b.first ~= s.first or b.n ~= s.n then
      set[ns] = true
    end
  end
  return set
end

--- Before 0.10 (no `data`): the namespaces this DiagnosticChanged set, from the stored lists' identity.
--- vim.diagnostic.get() costs one table insert per item there (no copies).
local function namespaces_replaced(buf)
  local now = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local s = now[d.namespace]
    if s then
      s.n = s.n + 1
    else
      now[d.namespace] = { first = d, n = 1 }
    end
  end
  local set = M.replaced(H.seen[buf] or {}, now)
  H.seen[buf] = now
  return set
end

--- DiagnosticChanged: stamp the namespaces it set (with items) with the buffer's current version.
--- An event that set no items (a checker's empty publish, a reset) still moves the version: that checker
--- says "nothing" about the current content.
---@param buf integer
---@param data table|nil the event's `args.data` (0.9+: `{ diagnostics = the list just set }`)
function M.on_changed(buf, data)
  if not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local set
  if type(data) == "table" and type(data.diagnostics) == "table" then
    set = M.namespaces_of(data.diagnostics)
  elseif GET_SHARES_ITEMS then
    set = namespaces_replaced(buf)
  else
    -- 0.10 without data: not vim.diagnostic.set/reset (they always send it) but a plugin's :doautocmd,
    -- which says nothing about any checker's verdict.
    return
  end
  H.gen[buf] = (H.gen[buf] or 0) + 1
  local skip = H.skip_clears[buf]
  if skip then
    if next(set) == nil then
      -- The server clearing the closed document, not a verdict on the new content: stamping it would
      -- present "no diagnostics" as current.
      H.skip_clears[buf] = skip > 1 and skip - 1 or nil
      return
    end
    H.skip_clears[buf] = nil
  end
  local now = tick(buf)
  H.stamp[buf] = now
  local stamps = H.ns_stamp[buf] or {}
  H.ns_stamp[buf] = stamps
  for ns in pairs(set) do
    stamps[ns] = now
  end
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
    local now = tick(buf)
    H.stamp[buf] = now
    for ns, t in pairs(H.ns_stamp[buf] or {}) do
      if t == before then
        H.ns_stamp[buf][ns] = now
      end
    end
    H.gen[buf] = (H.gen[buf] or 0) + 1
  end
end

---@param buf integer
function M.forget(buf)
  H.stamp[buf], H.ns_stamp[buf], H.seen[buf], H.gen[buf] = nil, nil, nil, nil
  H.cache[buf], H.before_write[buf], H.skip_clears[buf] = nil, nil, nil
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

--- The namespaces whose items are current at the reported version, sorted (a stable order for ties).
---@return integer[]
local function current_namespaces(buf)
  local version, list = H.stamp[buf], {}
  for ns, t in pairs(H.ns_stamp[buf] or {}) do
    if t == version then
      list[#list + 1] = ns
    end
  end
  table.sort(list)
  return list
end

--- The diagnostics of `namespaces` worth reading, and how many there are in all. vim.diagnostic.get()
--- deep-copies every item on 0.10 (~0.4 ms for 500), so where vim.diagnostic.count() exists (0.10+, which
--- also takes a list of namespaces) only the severities that can make the cap are fetched. Before 0.10
--- get() copies nothing and takes one namespace: read them all and keep those of `namespaces`.
---@param namespaces integer[]
local function fetch(buf, namespaces)
  if #namespaces == 0 then
    return {}, 0
  end
  if not vim.diagnostic.count then
    local wanted = {}
    for _, ns in ipairs(namespaces) do
      wanted[ns] = true
    end
    local list = {}
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if wanted[d.namespace] then
        list[#list + 1] = d
      end
    end
    return list, #list
  end
  local counts = vim.diagnostic.count(buf, { namespace = namespaces })
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
      for _, d in ipairs(vim.diagnostic.get(buf, { severity = sev, namespace = namespaces })) do
        list[#list + 1] = d
      end
      got = got + counts[sev]
    end
  end
  return list, total
end

--- The buffer's diagnostics for the state file, or vim.NIL when no checker has reported for it yet
--- (then nothing is known, not "no problems"). Only the namespaces current at the version are read.
---@param buf integer
---@return table|userdata
function M.collect(buf)
  local gen = H.gen[buf]
  if not gen or not H.stamp[buf] then
    return vim.NIL
  end
  local cached = H.cache[buf]
  if cached and cached.gen == gen then
    return cached.value
  end
  local list, total = fetch(buf, current_namespaces(buf))
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
