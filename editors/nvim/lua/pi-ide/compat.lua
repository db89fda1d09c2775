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

-- O_NOFOLLOW is not in luv's uv.constants (neither 0.7.2's luv nor 0.10's), and its value differs by
-- platform: Linux has one value on x86 and mips and another on arm and powerpc; macOS and the BSDs share one.
local NOFOLLOW_LINUX = { x86 = 0x20000, x64 = 0x20000, mips = 0x20000, mips64 = 0x20000 }
local function o_nofollow()
  local sys = M.uv.os_uname().sysname
  if sys == "Linux" then
    return NOFOLLOW_LINUX[jit and jit.arch or ""] or 0x8000
  end
  return (sys == "Darwin" or sys:match("BSD")) and 0x100 or 0
end

--- Flags for uv.fs_open of a path someone else may swap: O_RDONLY|O_NONBLOCK, and O_NOFOLLOW unless
--- `follow`. A FIFO swapped in would block open() for good without O_NONBLOCK (Neovim hangs, SIGTERM too); a
--- symlink opened without O_NOFOLLOW reads whatever it points to. Where O_NOFOLLOW is unknown (0), callers
--- still compare the opened file with what lstat saw.
---@param follow boolean|nil open through a symlink (the caller checks what was opened)
---@return integer
function M.open_flags_untrusted(follow)
  local c = M.uv.constants or {}
  local nonblock = c.O_NONBLOCK or (M.uv.os_uname().sysname == "Linux" and 0x800 or 0x4)
  return (c.O_RDONLY or 0) + nonblock + (follow and 0 or o_nofollow())
end

--- Wall-clock unix seconds with millisecond precision. os.time() alone has one-second steps, which would
--- make a selection made now and one made 900 ms ago look identical.
---@return number
function M.now()
  local sec, usec = M.uv.gettimeofday()
  return sec + math.floor(usec / 1000) / 1000
end

return M
