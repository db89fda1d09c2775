--- pi-ide.inbox.notice: warnings in one line of the message area. A longer one would open a hit-enter
--- prompt, which blocks the editor until a key is pressed.
---@module 'pi-ide.inbox.notice'
local M = {}

local ELLIPSIS = "…"

--- Pure: `text` cut at its end to at most `cells` display cells, "…" marking the cut.
---@param text string
---@param cells integer
---@return string
local function head(text, cells)
  if vim.fn.strdisplaywidth(text) <= cells then
    return text
  end
  for n = vim.fn.strchars(text) - 1, 0, -1 do
    local cut = vim.fn.strcharpart(text, 0, n) .. ELLIPSIS
    if vim.fn.strdisplaywidth(cut) <= cells then
      return cut
    end
  end
  return ""
end

--- Pure: `text` cut at its start to at most `cells` display cells, "…" marking the cut: the tail of a path
--- is where its file name is.
---@param text string
---@param cells integer
---@return string
local function tail(text, cells)
  if vim.fn.strdisplaywidth(text) <= cells then
    return text
  end
  local chars = vim.fn.strchars(text)
  for skip = 1, chars do
    local cut = ELLIPSIS .. vim.fn.strcharpart(text, skip)
    if vim.fn.strdisplaywidth(cut) <= cells then
      return cut
    end
  end
  return ELLIPSIS
end

--- Pure: the first of `variants` (`{ before, after }` around `name`, longest first) that fits in `cells`
--- display cells; else the last one with `name` cut to its tail, and that cut to `cells` if still too long.
---@param variants string[][]
---@param name string
---@param cells integer
---@return string
function M.fit(variants, name, cells)
  for _, v in ipairs(variants) do
    local text = v[1] .. name .. v[2]
    if vim.fn.strdisplaywidth(text) <= cells then
      return text
    end
  end
  local last = variants[#variants]
  local room = cells - vim.fn.strdisplaywidth(last[1] .. last[2])
  return head(last[1] .. tail(name, math.max(room, 1)) .. last[2], cells)
end

--- Warn in one line of the message area. v:echospace is what the last line holds before Neovim opens a
--- hit-enter prompt (it depends on 'columns', 'showcmd' and 'ruler'), so it is read when the notice shows.
---@param variants string[][] see fit()
---@param name string
function M.show(variants, name)
  vim.schedule(function()
    local cells = tonumber(vim.v.echospace) or (vim.o.columns - 12)
    vim.notify(M.fit(variants, name, math.max(cells, 1)), vim.log.levels.WARN)
  end)
end

return M
