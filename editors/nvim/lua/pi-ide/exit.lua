--- The state file must not outlive Neovim, whatever the way out. VimLeavePre and VimLeave remove it on a
--- normal exit, but neither runs when another plugin's VimLeavePre throws (Neovim skips the remaining exit
--- autocmds), when a GUI closes the `--embed` channel on 0.7 (Neovim exits without any autocmd), or when
--- Neovim is killed. So the first write also starts a guard: a detached `/bin/sh` whose stdin is a pipe
--- from this Neovim. It blocks in read(2), with no timer and no CPU, until that pipe closes, which the
--- kernel does when Neovim exits for any reason; then it removes the file (`rm -f`: nothing when the
--- normal exit already did). Detached (its own session), so the terminal's SIGHUP does not reach it.
---@module 'pi-ide.exit'
local uv = require("pi-ide.compat").uv

local M = {}

-- The guard's stdin: held open for Neovim's lifetime; closing it (Neovim exiting) is the guard's signal.
local guard = nil ---@type { pipe: userdata, path: string, pid: integer }|nil

local SCRIPT = 'read _ ; rm -f -- "$@"'

--- Start the guard for `path` (once per Neovim; the path never changes: it is named after our pid).
---@param path string
---@return boolean ok
---@return string|nil err
function M.arm(path)
  if guard then
    return true
  end
  local pipe = uv.new_pipe(false)
  if not pipe then
    return false, "cannot create a pipe"
  end
  local handle, pid = uv.spawn("/bin/sh", {
    -- The unsaved buffers and the answers to show and ask (v0.5) go with the state file.
    args = {
      "-c",
      SCRIPT,
      "pi-ide-exit-guard",
      path,
      (path:gsub("%.json$", ".buffers.json")),
      (path:gsub("%.json$", ".answers.json")),
    },
    stdio = { pipe, nil, nil },
    detached = true,
  }, function()
    -- The guard exited (only when this Neovim is exiting, or someone killed it): nothing to do.
  end)
  if not handle then
    pipe:close()
    return false, "cannot start /bin/sh: " .. tostring(pid)
  end
  -- Neovim must not wait for the guard, nor keep its loop alive for it.
  handle:unref()
  pipe:unref()
  guard = { pipe = pipe, path = path, pid = pid }
  return true
end

--- The guard's pid, or nil (for :PiIde and tests).
---@return integer|nil
function M.guard_pid()
  return guard and guard.pid or nil
end

return M
