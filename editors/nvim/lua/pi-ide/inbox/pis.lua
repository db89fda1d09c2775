--- pi-ide.inbox.pis: the pis whose messages name this Neovim, and which of them is connected (for the
--- statusline and :PiIde). A pi counts while its process lives.
---@module 'pi-ide.inbox.pis'
local compat = require("pi-ide.compat")
local uv = compat.uv

local M = {}

local H = {
  pis = {}, ---@type table<integer, { message: table, handled: integer, at: number }>
  alive_at = {}, ---@type table<integer, number> pid -> last time kill(pid, 0) said alive
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

--- The last seq handled of pi `pid`'s messages (0 for a pi not seen yet).
---@param pid integer
---@return integer
function M.handled(pid)
  local known = H.pis[pid]
  return known and known.handled or 0
end

--- Record `msg` (validated, from a live pi naming us) as pi `msg.pid`'s newest.
---@param msg table
function M.record(msg)
  local now = compat.now()
  H.pis[msg.pid] = { message = msg, handled = math.max(M.handled(msg.pid), msg.seq), at = now }
  H.alive_at[msg.pid] = now
end

--- Forget pi `pid`: it exited, or no longer names us.
---@param pid integer
function M.forget(pid)
  H.pis[pid] = nil
  require("pi-ide.review").forget(pid) -- its change set's marks go with it
end

--- Forget every pi (:PiIde disable: the client no longer listens, so no pi is connected).
function M.reset()
  for pid in pairs(H.pis) do
    require("pi-ide.review").forget(pid)
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
  for pid, p in pairs(H.pis) do
    if now - (H.alive_at[pid] or 0) >= M.CHECK_EVERY_S then
      if M.liveness(pid) == "alive" then
        H.alive_at[pid] = now
      else
        M.forget(pid)
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

--- v0.5 send to pi: every live pi whose message names this Neovim, as { pid, cwd }, newest first.
---@return { pid: integer, cwd: string }[]
function M.all()
  M.connected() -- drops the dead ones
  local out = {}
  for pid, p in pairs(H.pis) do
    out[#out + 1] = { pid = pid, cwd = type(p.message.cwd) == "string" and p.message.cwd or "", at = p.at }
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
