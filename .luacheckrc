-- luacheck (Debian: lua-check) for the Neovim client; run by `npm run check` and CI: `luacheck editors/nvim`.
-- Neovim's Lua is LuaJIT (Lua 5.1) with the `vim` global; the client sets no globals of its own.
std = "luajit"
max_line_length = 120
-- `vim` is read-only except its option and variable tables, which are meant to be assigned to.
local writable = { read_only = false, other_fields = true }
read_globals = {
  vim = {
    other_fields = true,
    fields = { g = writable, b = writable, v = writable, env = writable, o = writable, bo = writable, wo = writable },
  },
}
-- Only Lua: the directory also holds the README and the vimdoc.
include_files = { "**/*.lua" }
