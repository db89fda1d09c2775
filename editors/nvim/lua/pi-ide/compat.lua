--- Version shims for Neovim 0.7.2 (Debian 12) .. 0.10+, kept in one place so the rest reads like current
--- Neovim. Each shim names the version that makes it removable.
---@module 'pi-ide.compat'
local M = {}

-- TODO: use vim.uv directly when 0.9 support is dropped (vim.uv appeared in 0.10).
M.uv = vim.uv or vim.loop

--- The health reporter. 0.10 has vim.health.start/ok/warn/error; 0.7-0.9 have require("health") with
--- report_* names.
---@class PiIdeHealth
---@field start fun(name: string)
---@field ok fun(msg: string)
---@field warn fun(msg: string, advice?: string[])
---@field error fun(msg: string, advice?: string[])
---@field info fun(msg: string)

---@return PiIdeHealth
function M.health()
  local h = vim.health or require("health")
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

--- Wall-clock unix seconds with millisecond precision. os.time() alone has one-second steps, which would
--- make a selection made now and one made 900 ms ago look identical.
---@return number
function M.now()
  local sec, usec = M.uv.gettimeofday()
  return sec + math.floor(usec / 1000) / 1000
end

return M
