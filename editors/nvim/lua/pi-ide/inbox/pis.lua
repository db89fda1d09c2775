--- pi-ide.inbox.pis: the pis whose messages name this Neovim, and which of them is connected (for the
--- statusline and :PiIde). A pi counts while its process lives, as far as this Neovim can tell: kill(pid, 0) only
--- for a pi of its own pid namespace (PROTOCOL.md v0.5); a pi is known by its key, (pid, namespace)
--- (pi-ide.inbox.identity).
---@module 'pi-ide.inbox.pis'
local compat = require("pi-ide.compat")
local uv = compat.uv

local M = {}

local H = {
  pis = {}, ---@type table<string, { message: table, handled: integer, at: number, pid: integer, ns: string|nil }>
  alive_at = {}, ---@type table<string, number> pi's key -> last time kill(pid, 0) said alive
}

--- kill(pid, 0): "alive", "dead" or "foreign" (a process of another user).
---@param pid integer
---@return "alive"|"dead"|"foreign"
function M.liveness(pid)
  local ok, _, code = uv.kill(pid, 0)
  if ok == 0 or ok == true then
    return "alive"
  end
  return code == "EPERM" and "foreign" or "dead"
end

--- The last seq handled of pi `key`'s messages (0 for a pi not seen yet).
---@param key string
---@return integer
function M.handled(key)
  local known = H.pis[key]
  return known and known.handled or 0
end

--- Record `msg` (validated, from a live pi naming us) as the newest of pi `ident` (pi-ide.inbox.identity).
---@param msg table
---@param ident table
function M.record(msg, ident)
  local now = compat.now()
  H.pis[ident.key] =
    { message = msg, handled = math.max(M.handled(ident.key), msg.seq), at = now, pid = ident.pid, ns = ident.ns }
  H.alive_at[ident.key] = now
end

--- Per recorded pi (by key), the changes its newest message lists: their reports stay (PROTOCOL.md `files`).
---@return table<string, { file: string, seq: integer }[]>
function M.listed()
  local out = {}
  for key, p in pairs(H.pis) do
    out[key] = p.message.changed
  end
  return out
end

--- Forget pi `key`: it exited, or no longer names us.
---@param key string
function M.forget(key)
  H.pis[key] = nil
  require("pi-ide.review").forget(key) -- its change set's marks go with it
end

--- Forget every pi (:PiIde disable: the client no longer listens, so no pi is connected).
function M.reset()
  for key in pairs(H.pis) do
    require("pi-ide.review").forget(key)
  end
  H.pis, H.alive_at = {}, {}
end

--- Is any pi recorded (live when last checked)?
---@return boolean
function M.any()
  return next(H.pis) ~= nil
end

--- How often a recorded pi's process is checked (kill(pid, 0)): the statusline calls connected() on every
--- redraw, and a pi killed without removing its file must leave the statusline within about this long.
M.CHECK_EVERY_S = 1

--- The pi connected to this Neovim: the most recent live pi whose message names us.
---@return { pid: integer, cwd: string, last_turn: string[] }|nil
function M.connected()
  local best
  local now = compat.now()
  local identity = require("pi-ide.inbox.identity")
  for key, p in pairs(H.pis) do
    -- A pi of another namespace cannot be checked from here: it counts until its file goes.
    if identity.judges(p.ns) and now - (H.alive_at[key] or 0) >= M.CHECK_EVERY_S then
      if M.liveness(p.pid) == "alive" then
        H.alive_at[key] = now
      else
        M.forget(key)
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

--- v0.5 send to pi: every live pi whose message names this Neovim, newest first, as { pid, pid_ns (its message's
--- `pid_ns`, nil when it wrote none), key (identity.key), cwd }.
---@return { pid: integer, pid_ns: string|nil, key: string, cwd: string }[]
function M.all()
  M.connected() -- drops the dead ones
  local out = {}
  for key, p in pairs(H.pis) do
    local m = p.message
    out[#out + 1] = {
      pid = p.pid,
      pid_ns = type(m.pid_ns) == "string" and m.pid_ns or nil,
      key = key,
      cwd = type(m.cwd) == "string" and m.cwd or "",
      at = p.at,
    }
  end
  table.sort(out, function(a, b)
    return a.at > b.at
  end)
  return out
end

--- What the statusline says: "" without a connected pi, "pi" with one, "pi +N" when its last turn changed
--- N files.
---@return string
function M.status_text()
  local ok, pi = pcall(M.connected)
  if not ok or not pi then
    return ""
  end
  local n = #pi.last_turn
  return n > 0 and ("pi +%d"):format(n) or "pi"
end

return M
