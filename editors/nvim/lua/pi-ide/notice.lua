--- pi-ide.notice: warnings in one line of the message area. A longer one would open a hit-enter
--- prompt, which blocks the editor until a key is pressed; so does a line break inside one (a file name, a
--- field of a message), so control characters are shown, not sent (^J). Warnings about pi's messages are
--- rate-limited: a flood of malformed files (1,000 of them) shows a few, then one line counting the rest.
--- Used by the inbox (pi's messages, conflicts) and by init.lua's own warnings (a state dir of another user
--- at startup, a failed write).
---@module 'pi-ide.notice'
local compat = require("pi-ide.compat")

local M = {}

--- At most BURST warnings per WINDOW_S seconds; the rest are counted and said in one line at the window's end.
M.BURST = 3
M.WINDOW_S = 10

local H = {
  shown = {}, ---@type number[] when the warnings of the current window were shown
  held = 0, -- warnings held back in the current window
  summary = nil, ---@type userdata|nil the timer that says how many were held back
  lines = {}, ---@type string[] the whole text of the last few line() warnings, for :PiIde
}

--- :PiIde repeats this many of the last line() warnings whole.
local KEEP_LINES = 5

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

--- `text` with control characters (a line break, a tab, an escape) shown as ^J, ^I, ^[ : inert, one line.
---@param text string
---@return string
function M.inert(text)
  return vim.fn.strtrans(text)
end

--- Pure: the first of `variants` (`{ before, after }` around `name`, longest first) that fits in `cells`
--- display cells; else the last one with `name` cut to its tail, and that cut to `cells` if still too long.
---@param variants string[][]
---@param name string
---@param cells integer
---@return string
function M.fit(variants, name, cells)
  name = M.inert(name)
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
--- The cells one line of the message area holds without a prompt. At startup (before the first redraw)
--- v:echospace can be wider than the screen: take the smaller.
local function echospace()
  return math.max(math.min(tonumber(vim.v.echospace) or vim.o.columns, vim.o.columns - 12), 1)
end

function M.show(variants, name)
  vim.schedule(function()
    vim.notify(M.fit(variants, name, echospace()), vim.log.levels.WARN)
  end)
end

--- One warning `text` in one line: cut at its end, pointing to :PiIde for the whole of it.
---@param text string
function M.line(text)
  H.lines[#H.lines + 1] = text
  if #H.lines > KEEP_LINES then
    table.remove(H.lines, 1)
  end
  vim.schedule(function()
    local cells, more = echospace(), " (:PiIde)"
    local line = M.inert(text)
    if vim.fn.strdisplaywidth(line) > cells then
      line = head(line, cells - vim.fn.strdisplaywidth(more)) .. more
    end
    vim.notify(line, vim.log.levels.WARN)
  end)
end

--- Lines for :PiIde: the last line() warnings, whole (and inert).
---@return string[]
function M.summary_lines()
  return vim.tbl_map(function(text)
    return "warning: " .. M.inert(text)
  end, H.lines)
end

local function say_held()
  if H.summary then
    H.summary:close()
    H.summary = nil
  end
  if H.held > 0 then
    local n = H.held
    H.held, H.shown = 0, {}
    M.show({ { "(pi-ide) ", (" more warning%s held back: see :PiIde"):format(n == 1 and "" or "s") } }, tostring(n))
  end
end

--- show(), rate-limited: at most BURST per WINDOW_S seconds; past that, warnings are held back until none
--- has come for WINDOW_S seconds (a flood is one spell), then one line says how many.
---@param variants string[][] see fit()
---@param name string
function M.warn(variants, name)
  local now = compat.now()
  local recent = {}
  for _, t in ipairs(H.shown) do
    if now - t < M.WINDOW_S then
      recent[#recent + 1] = t
    end
  end
  H.shown = recent
  if #recent < M.BURST and H.held == 0 then
    H.shown[#H.shown + 1] = now
    M.show(variants, name)
    return
  end
  H.held = H.held + 1
  H.summary = H.summary or compat.uv.new_timer()
  H.summary:start(
    M.WINDOW_S * 1000,
    0,
    vim.schedule_wrap(function()
      pcall(say_held)
    end)
  )
end

return M
