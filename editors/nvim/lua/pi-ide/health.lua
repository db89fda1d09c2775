--- :checkhealth pi-ide
---@module 'pi-ide.health'
local compat = require("pi-ide.compat")

local M = {}

function M.check()
  local h = compat.health()
  local uv = compat.uv
  local writer = require("pi-ide.writer")
  local pi = require("pi-ide")

  h.start("pi-ide: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.7") == 1 then
    h.ok(("Neovim %s is supported (0.7 or newer)"):format(version))
  else
    h.error(("Neovim %s is too old"):format(version), { "Install Neovim 0.7 or newer" })
  end

  h.start("pi-ide: client")
  local s = pi.status()
  if s.enabled then
    h.ok(("enabled, debounce %d ms, selection cap %d bytes"):format(s.config.debounce_ms, s.config.max_selection_bytes))
  elseif vim.g.pi_ide_disable then
    h.warn("disabled by vim.g.pi_ide_disable", { "Unset it, or run :PiIde enable" })
  else
    h.warn("disabled", { "Run :PiIde enable, or call require('pi-ide').setup()" })
  end

  h.start("pi-ide: state directory")
  local dir = s.dir or writer.state_dir(uv.os_getenv("XDG_RUNTIME_DIR"))
  local info = writer.inspect(dir)
  if not info.exists then
    h.warn(dir .. " does not exist yet", { "It is created (mode 0700) on the first write" })
  else
    local problem = writer.problem(dir, info, uv.getuid())
    local desc = ("%s: %s, owner uid %s, mode %03o"):format(dir, tostring(info.type), tostring(info.uid), info.perm)
    if problem then
      h.error(desc .. ": " .. problem, {
        "The state file can contain selected text, so it is only written into a private directory",
        ("Fix or remove it: rm -rf %s (it is recreated 0700), or set XDG_RUNTIME_DIR"):format(dir),
      })
    else
      h.ok(desc)
    end
  end

  h.start("pi-ide: last write")
  if s.last_error then
    h.error("last attempt failed: " .. s.last_error)
  end
  if s.last_write then
    local ago = s.now - s.last_write
    h.ok(("%s, %.1f s ago (%d writes, %d unchanged skipped)"):format(
      os.date("%Y-%m-%d %H:%M:%S", math.floor(s.last_write)),
      ago,
      s.writes,
      s.skipped
    ))
  else
    h.info("no write yet in this session")
  end
  if s.path then
    if uv.fs_lstat(s.path) then
      h.ok("state file present: " .. s.path)
    elseif s.enabled then
      h.warn("state file missing: " .. s.path, { "Move the cursor to trigger a write; see :PiIde" })
    else
      h.info("no state file (client disabled): " .. s.path)
    end
  end

  h.start("pi-ide: pi's messages (protocol v0.3)")
  local inbox = require("pi-ide.inbox")
  if inbox._state().watching then
    h.ok("watching the state directory for pi's messages (reloads after pi's edits)")
  elseif s.enabled then
    h.warn("not watching for pi's messages", { "Buffers pi changes are not reloaded; see the warning above or :PiIde" })
  end
  for _, line in ipairs(inbox.summary_lines()) do
    h.info(line)
  end
end

return M
