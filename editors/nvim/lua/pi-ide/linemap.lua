--- pi-ide.linemap: where a line of a buffer's old text is in its new text, through the line diff between the
--- two (`vim.diff`, built into Neovim). A reload after pi's edit uses it so that every window's cursor and view
--- stay on the text they were on, not on the same line number. Pure.
---@module 'pi-ide.linemap'
local M = {}

--- The hunks from `old` to `new` (lists of lines), as `vim.diff` gives them: { start_a, count_a, start_b,
--- count_b }, 1-based; with a count of 0, the start is the line before the change.
---@param old string[]
---@param new string[]
---@return integer[][]
function M.hunks(old, new)
  local a = #old > 0 and (table.concat(old, "\n") .. "\n") or ""
  local b = #new > 0 and (table.concat(new, "\n") .. "\n") or ""
  return vim.diff(a, b, { result_type = "indices" })
end

--- Pure: the new line of old line `line` through `hunks`. A line inside a changed region goes to the same
--- offset in its replacement (its last line when the replacement is shorter), or, when the region was only
--- deleted, to the line that now follows it. At least 1.
---@param hunks integer[][]
---@param line integer
---@return integer
function M.map_line(hunks, line)
  local delta = 0
  for _, h in ipairs(hunks) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    if ca == 0 then
      if line <= sa then
        break
      end
      delta = delta + cb
    elseif line < sa then
      break
    elseif line < sa + ca then
      if cb == 0 then
        return math.max(1, sb + 1)
      end
      return sb + math.min(line - sa, cb - 1)
    else
      delta = delta + cb - ca
    end
  end
  return math.max(1, line + delta)
end

return M
