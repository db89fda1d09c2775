-- pi-ide: lets the pi coding agent see the file, cursor and selection of this Neovim.
-- Kept tiny on purpose: it runs at every startup, so it only defines :PiIde and starts the client; the real
-- work lives in lua/pi-ide/ and is loaded lazily.

-- One copy may be on 'packpath' (the zero-config link pi creates) and another under a plugin manager; the
-- first one sourced wins and the second stops here.
if vim.g.loaded_pi_ide then
  return
end
vim.g.loaded_pi_ide = 1

if vim.fn.has("nvim-0.7") ~= 1 then
  vim.api.nvim_echo({ { "(pi-ide) needs Neovim 0.7 or newer; the client is off", "WarningMsg" } }, true, {})
  return
end

vim.api.nvim_create_user_command("PiIde", function(cmd)
  require("pi-ide").command(cmd.fargs)
end, {
  nargs = "*",
  complete = function(_, line)
    if line:match("^%s*%S+%s+revert%s+") then
      return { "file", "run" }
    end
    return { "status", "enable", "disable", "diff", "review", "hunks", "revert", "approve", "reject", "proposal" }
  end,
  desc = "pi-ide: status, on/off, diff a buffer with its file, review/revert pi's changes, approve/reject pi's edit",
})

-- v0.5 send to pi: `:PiIdeSend [prompt]` (a draft in pi's input), `:PiIdeSend! [prompt]` (at once), with a range
-- the selection, `@diagnostic`, `@hunk` or `@file` first for those. Mappings are offered, never set.
vim.api.nvim_create_user_command("PiIdeSend", function(cmd)
  require("pi-ide.send").command(cmd)
end, {
  nargs = "*",
  range = true,
  bang = true,
  complete = function(arg, line)
    if line:match("^%s*%S+%s+%S*$") then
      return vim.tbl_filter(function(f)
        return f:sub(1, #arg) == arg
      end, { "@diagnostic", "@hunk", "@file" })
    end
    return {}
  end,
  desc = "pi-ide: send the selection (or line, @diagnostic, @hunk, @file) to pi: a draft; ! sends at once",
})
local function plug(mode, name, rhs, desc)
  vim.keymap.set(mode, "<Plug>(" .. name .. ")", rhs, { silent = true, desc = "pi-ide: " .. desc })
end
plug("n", "pi-ide-send", "<Cmd>PiIdeSend<CR>", "send the line to pi (draft)")
plug("x", "pi-ide-send", ":PiIdeSend<CR>", "send the selection to pi (draft)")
plug("n", "pi-ide-send-now", "<Cmd>PiIdeSend!<CR>", "send the line to pi at once")
plug("x", "pi-ide-send-now", ":PiIdeSend!<CR>", "send the selection to pi at once")
plug("n", "pi-ide-send-diagnostic", "<Cmd>PiIdeSend @diagnostic<CR>", "send the diagnostic under the cursor (draft)")

-- Defaults work without setup(); `vim.g.pi_ide_disable = true` keeps it off. The start is deferred to the
-- first turn of the event loop: requiring the modules during startup would cost every Neovim start about
-- 2 ms (module search over 'runtimepath'), and the first write, right after startup, sees the same state.
if not vim.g.pi_ide_disable then
  vim.schedule(function()
    -- v:exiting is set once Neovim quits: `nvim +qa` runs this during exit, after VimLeavePre.
    if not vim.g.pi_ide_disable and vim.v.exiting == vim.NIL then
      require("pi-ide")._autostart()
    end
  end)
end
