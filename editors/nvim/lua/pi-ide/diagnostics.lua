--- pi-ide.diagnostics: a buffer's vim.diagnostic entries as protocol v0.3 reports them, stamped with the
--- buffer version (changedtick) they belong to, so pi can tell current diagnostics from stale ones.
---
--- A checker (LSP client, linter) publishes into its own namespace, for the content it saw. Each publish is
--- dated: with the buffer's changedtick when it happens, except an LSP client's publish for a document version
--- older than the content Neovim last sent it (a slow server's answer for the old content, arriving after a
--- reload or an edit), which is dated with that version, so it is never taken for the current content.
--- Several checkers publish at different times, so the date is kept per namespace. The buffer's diagnostics
--- are reported with the newest date held (the newest verdict) and list only the items of the namespaces
--- dated with it. A namespace not set since is left out (neither listed nor counted) until it publishes
--- again: its items describe older content, and pi must never take them for current.
---
--- The DiagnosticChanged handler only records the dates and bumps a generation counter; the reading,
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

local PUBLISH = "textDocument/publishDiagnostics"

local H = {
  ns_stamp = {}, ---@type table<integer, table<integer, integer>> buf -> namespace -> date of its last publish
  empty = {}, ---@type table<integer, integer> buf -> date of the last publish that named no namespace
  seen = {}, ---@type table<integer, table<integer, { first: table, n: integer }>> before 0.10: the lists last seen
  gen = {}, ---@type table<integer, integer> buf -> generation, bumped by every DiagnosticChanged
  cache = {}, ---@type table<integer, { gen: integer, value: table }>
  writing = {}, ---@type table<integer, { before: integer, changed: boolean }> buf -> the write under way
  watching = {}, ---@type table<integer, true> buf -> our on_lines callback is attached (see on_write_pre)
  checked = {}, ---@type table<integer, true> buf -> a checker that is not an LSP client has published for it
  publishing = nil, ---@type { ns: integer, version: integer|nil }|nil the LSP publish being handled now
  observers = setmetatable({}, { __mode = "k" }), ---@type table<function, true> our wrappers (observe_lsp)
}

local function tick(buf)
  return vim.api.nvim_buf_get_var(buf, "changedtick")
end

--- Pure: the date of an LSP client's publish. `said` is the document version the server answered for
--- (`publishDiagnostics.version`, optional in LSP), `sent` the version of the content Neovim last sent it
--- (vim.lsp.util.buf_versions: the changedtick of that change, 0 after a didOpen), `now` the changedtick.
--- Computed for the content last sent: that is the buffer's content (a write moves changedtick, not the
--- content), so `now`. For an older version: that version, which is older than `now`, so pi treats the
--- publish as old and waits for the answer on the new content. No version said: `now`, as for any checker.
---@param said integer|nil
---@param sent integer|nil
---@param now integer
---@return integer
function M.date(said, sent, now)
  if type(said) ~= "number" or said == sent then
    return now
  end
  return math.min(said, now - 1)
end

--- The publish an LSP client is handing over: its namespace and the version the server named.
local function publish_of(result, ctx)
  if type(ctx) ~= "table" or type(ctx.client_id) ~= "number" then
    return nil
  end
  local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, ctx.client_id)
  if not ok or type(ns) ~= "number" then
    return nil
  end
  local version = type(result) == "table" and result.version or nil
  return { ns = ns, version = type(version) == "number" and version or nil }
end

--- `handler`, or a wrapper of it that says which publish is being handled while it runs: vim.diagnostic.set()
--- fires DiagnosticChanged inside it, where on_changed() reads H.publishing. Errors pass through unchanged.
local function observing(handler)
  if H.observers[handler] then
    return handler
  end
  local function observer(err, result, ctx, config)
    local outer = H.publishing
    H.publishing = publish_of(result, ctx)
    local ok, value, more = pcall(handler, err, result, ctx, config)
    H.publishing = outer
    if not ok then
      error(value, 0)
    end
    return value, more
  end
  H.observers[observer] = true
  return observer
end

--- A handlers table (vim.lsp.handlers, a client's) with its publishDiagnostics handler observed.
local function observe_handlers(handlers)
  if type(handlers) == "table" and type(handlers[PUBLISH]) == "function" then
    handlers[PUBLISH] = observing(handlers[PUBLISH])
  end
end

--- See the version each LSP publish names: wrap the publishDiagnostics handlers in use, the global one and
--- each client's own (a user's override too: it stays in charge, only observed), and
--- vim.lsp.diagnostic.on_publish_diagnostics, which the default handler calls and `vim.lsp.with()` overrides
--- made later capture. Idempotent and cheap; called at setup, on LspAttach and on DiagnosticChanged (a
--- handler set after those is observed from the next call). Nothing is loaded for it: before vim.lsp is,
--- there is nothing to observe.
function M.observe_lsp()
  if not package.loaded["vim.lsp"] then
    return
  end
  local lsp = vim.lsp
  local ok, module = pcall(require, "vim.lsp.diagnostic")
  if ok and type(module) == "table" and type(module.on_publish_diagnostics) == "function" then
    module.on_publish_diagnostics = observing(module.on_publish_diagnostics)
  end
  observe_handlers(lsp.handlers)
  -- TODO: use get_clients only when 0.9 support is dropped (0.10 added it; get_active_clients is deprecated).
  for _, client in pairs((lsp.get_clients or lsp.get_active_clients)()) do
    observe_handlers(client.handlers)
  end
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

--- The version the buffer's diagnostics are reported with: the newest date held, or nil before any publish.
local function reported_version(buf)
  local newest = H.empty[buf]
  for _, date in pairs(H.ns_stamp[buf] or {}) do
    if not newest or date > newest then
      newest = date
    end
  end
  return newest
end

--- DiagnosticChanged: date the namespaces it set (see M.date). An event that set no items (a checker's empty
--- publish, a reset) is a verdict too: that checker says "nothing" about the content (an LSP client's, for
--- the version it names). Any publish but an LSP client's also marks the buffer as checked (M.expected).
---@param buf integer
---@param data table|nil the event's `args.data` (0.9+: `{ diagnostics = the list just set }`)
function M.on_changed(buf, data)
  M.observe_lsp()
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
  local publish = H.publishing
  local now = tick(buf)
  local date = now
  if publish then
    set[publish.ns] = true
    local util = package.loaded["vim.lsp.util"]
    date = M.date(publish.version, util and util.buf_versions and util.buf_versions[buf], now)
  else
    H.checked[buf] = true
  end
  if next(set) == nil then
    H.empty[buf] = date
  end
  local stamps = H.ns_stamp[buf] or {}
  H.ns_stamp[buf] = stamps
  for ns in pairs(set) do
    stamps[ns] = date
  end
end

--- Writing a buffer bumps its changedtick without changing its content: diagnostics that were current
--- before the write are still current after it, unless the content changed during the write (a formatter
--- in BufWritePre, registered after ours). Content changes are seen by an on_lines callback, attached at
--- the first write and detached at the first change after a write (one Lua call per change in between).
---@param buf integer
function M.on_write_pre(buf)
  H.writing[buf] = { before = tick(buf), changed = false }
  if H.watching[buf] then
    return
  end
  H.watching[buf] = vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b)
      local writing = H.writing[b]
      if not writing then
        H.watching[b] = nil
        return true -- detach: no write under way
      end
      writing.changed = true
    end,
    on_detach = function(_, b)
      H.watching[b] = nil
    end,
  }) or nil
end

---@param buf integer
function M.on_write_post(buf)
  local writing = H.writing[buf]
  H.writing[buf] = nil
  if not writing or writing.changed or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  local before = writing.before
  if reported_version(buf) ~= before then
    return
  end
  local now = tick(buf)
  if H.empty[buf] == before then
    H.empty[buf] = now
  end
  for ns, t in pairs(H.ns_stamp[buf] or {}) do
    if t == before then
      H.ns_stamp[buf][ns] = now
    end
  end
  H.gen[buf] = (H.gen[buf] or 0) + 1
end

---@param buf integer
function M.forget(buf)
  H.ns_stamp[buf], H.empty[buf], H.seen[buf], H.gen[buf] = nil, nil, nil, nil
  H.cache[buf], H.writing[buf], H.checked[buf] = nil, nil, nil
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

--- Two diagnostics are the same when everything the protocol reports of them is: two clients of one server
--- (or a server and a linter wrapping it) publish each problem once per namespace, and the model must read
--- it once.
local function same(a, b)
  return a.severity == b.severity
    and a.lnum == b.lnum
    and a.col == b.col
    and a.end_lnum == b.end_lnum
    and a.end_col == b.end_col
    and a.message == b.message
    and a.source == b.source
    and a.code == b.code
end

--- One vim.diagnostic item as the protocol lists it (message cut to MAX_MESSAGE).
---@param d table
---@param null userdata vim.NIL
---@return table
local function to_item(d, null)
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
  return {
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

local NO_MESSAGE = {} -- the index key of an item without a message (a table key cannot be nil)

--- Pure: vim.diagnostic items -> the protocol's `{version, total, items}` (errors first, then by position,
--- exact duplicates listed and counted once, capped). Exposed for tests and the benchmark.
--- Duplicates share severity, line and column, so the sort puts them in one run of equal positions. Within a
--- run (usually of one item) an item is compared only with the kept items of the same message, indexed once
--- the run has a second item: 500 items on one position cost about as much as 500 spread out. Past the cap
--- items are still compared, to count the duplicates.
---@param list table[] vim.diagnostic.get() items
---@param version integer
---@param total integer|nil how many there are in all (default #list); the duplicates found in `list` are
---  taken off it
---@return table
function M.build(list, version, total)
  local order = sorted_indices(list)
  local items = {}
  local null = vim.NIL
  local head, by_message, duplicates = nil, nil, 0
  for i = 1, #order do
    local d = list[order[i]]
    local seen = false
    if head and head.severity == d.severity and head.lnum == d.lnum and head.col == d.col then
      if not by_message then
        by_message = { [head.message == nil and NO_MESSAGE or head.message] = { head } }
      end
      local key = d.message == nil and NO_MESSAGE or d.message
      local kept = by_message[key]
      if kept then
        for _, k in ipairs(kept) do
          if same(k, d) then
            seen = true
            break
          end
        end
        if not seen then
          kept[#kept + 1] = d
        end
      else
        by_message[key] = { d }
      end
    else
      head, by_message = d, nil
    end
    if seen then
      duplicates = duplicates + 1
    elseif #items < M.MAX_ITEMS then
      items[#items + 1] = to_item(d, null)
    end
  end
  return { version = version, total = (total or #list) - duplicates, items = items }
end

--- The namespaces whose items are current at the reported version, sorted (a stable order for ties).
---@return integer[]
local function current_namespaces(buf, version)
  local list = {}
  for ns, t in pairs(H.ns_stamp[buf] or {}) do
    if t == version then
      list[#list + 1] = ns
    end
  end
  table.sort(list)
  return list
end

--- The diagnostics of `namespaces` worth reading, how many there are in all, and whether all were read.
--- vim.diagnostic.get() deep-copies every item on 0.10 (~0.4 ms for 500), so where vim.diagnostic.count()
--- exists (0.10+, which also takes a list of namespaces) only the severities that can make `want` are
--- fetched. Before 0.10 get() copies nothing and takes one namespace: read them all and keep those of
--- `namespaces`.
---@param namespaces integer[]
---@param want number how many items are worth reading (more if a severity has more)
---@return table[] list, integer total, boolean complete
local function fetch(buf, namespaces, want)
  if #namespaces == 0 then
    return {}, 0, true
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
    return list, #list, true
  end
  local counts = vim.diagnostic.count(buf, { namespace = namespaces })
  local total = 0
  for sev = 1, 4 do
    total = total + (counts[sev] or 0)
  end
  local list = {}
  for sev = 1, 4 do
    if #list >= want then
      return list, total, #list == total
    end
    if (counts[sev] or 0) > 0 then
      for _, d in ipairs(vim.diagnostic.get(buf, { severity = sev, namespace = namespaces })) do
        list[#list + 1] = d
      end
    end
  end
  return list, total, true
end

--- The buffer's diagnostics for the state file, or vim.NIL when no checker has reported for it yet
--- (then nothing is known, not "no problems"). Only the namespaces current at the version are read.
---@param buf integer
---@return table|userdata
function M.collect(buf)
  local gen = H.gen[buf]
  local version = gen and reported_version(buf)
  if not version then
    return vim.NIL
  end
  local cached = H.cache[buf]
  if cached and cached.gen == gen then
    return cached.value
  end
  local namespaces = current_namespaces(buf, version)
  local list, total, complete = fetch(buf, namespaces, M.MAX_ITEMS)
  local value = M.build(list, version, total)
  if not complete and #value.items < M.MAX_ITEMS then
    -- Duplicates took places that a lower severity's items can fill: read them all.
    list, total = fetch(buf, namespaces, math.huge)
    value = M.build(list, version, total)
  end
  H.cache[buf] = { gen = gen, value = value }
  return value
end

--- Will a checker report diagnostics for this buffer? One that has published for it (nvim-lint and the like,
--- through vim.diagnostic, an empty list when clean), an attached LSP client, or the user's word:
--- `vim.b.pi_ide_diagnostics_expected = true` (a linter that has not run on the buffer yet).
---@param buf integer
---@return boolean
function M.expected(buf)
  local ok, flag = pcall(vim.api.nvim_buf_get_var, buf, "pi_ide_diagnostics_expected")
  if (ok and flag == true) or H.checked[buf] then
    return true
  end
  if not package.loaded["vim.lsp"] then
    return false -- no client without it (and loading it here would cost every user without LSP)
  end
  local lsp = vim.lsp
  -- TODO: use get_clients only when 0.9 support is dropped (0.10 added it; buf_get_clients is deprecated).
  if lsp.get_clients then
    return #lsp.get_clients({ bufnr = buf }) > 0
  end
  return next(lsp.buf_get_clients(buf)) ~= nil
end

return M
