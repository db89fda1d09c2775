--- pi-ide.v03: the protocol v0.3 wiring init.lua calls into (kept here so init.lua stays a few hook lines):
--- the autocmds for diagnostics, and the start of the inbox that handles pi's messages.
---@module 'pi-ide.v03'
local M = {}

--- Register the v0.3 autocmds with init.lua's `au(events, handler, desc)` (its augroup, its guard).
---@param au fun(events: string|string[], handler: fun(args: table), desc: string)
---@param schedule fun(urgent: boolean) init.lua's write scheduler
function M.autocmds(au, schedule)
  local inbox = require("pi-ide.inbox")
  local diagnostics = require("pi-ide.diagnostics")
  au("DiagnosticChanged", function(args)
    -- args.data (0.9+) holds the list just set: it names the checker (namespace) that published.
    if inbox.diagnostics_changed(args.buf, args.data) then
      schedule(true)
    end
  end, "diagnostics changed: stamp the checker's namespace with the buffer version")
  diagnostics.observe_lsp()
  if vim.fn.exists("##LspAttach") == 1 then -- 0.8+
    au("LspAttach", function()
      diagnostics.observe_lsp()
    end, "see the document version each LSP publish of diagnostics names")
  end
  au("BufWritePre", function(args)
    diagnostics.on_write_pre(args.buf)
  end, "a write bumps changedtick but not the content")
  au("BufWritePost", function(args)
    diagnostics.on_write_post(args.buf)
    inbox.buffer_synced(args.buf)
    require("pi-ide.review").buffer_written(args.buf, args.file)
  end, "diagnostics current before a write stay current; a later conflict with pi is told again; reverts saved")
  au("BufUnload", function(args)
    require("pi-ide.review").buffer_unloaded(args.buf)
  end, "reverts thrown away with the buffer's text are no longer told to pi")
  au("BufReadPost", function(args)
    inbox.buffer_read(args.buf)
  end, "a later conflict with pi is told again; remember the path read, for reloads through symlinks")
  au("BufWipeout", function(args)
    inbox.forget(args.buf)
  end, "forget the buffer's diagnostics")
end

--- Watch the state dir for pi's messages. A failure (no watcher) is reported once; the v0.2 part goes on.
--- The directory deleted and recreated (the README's advice for a stale one): the directory is made again
--- under its rules, watched anew, and the state file rewritten at once (`rewrite`), so pi sees this Neovim
--- again and its next edit is answered.
---@param dir string
---@param schedule fun(urgent: boolean)
---@param rewrite fun() write the state file now, even if unchanged
function M.start(dir, schedule, rewrite)
  if not require("pi-ide.writer").ensure_dir(dir) then
    return -- the state writer already says why the directory cannot be used
  end
  local ok, err = require("pi-ide.inbox").start(dir, function()
    schedule(true)
  end, function()
    M.start(dir, schedule, rewrite)
    rewrite()
  end)
  if not ok then
    require("pi-ide.notice").line("(pi-ide) not watching for pi's messages: " .. tostring(err))
  end
end

return M
