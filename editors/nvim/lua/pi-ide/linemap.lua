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

--- The first window `hunks_windowed` diffs around a place where the lists differ (lines each side); it grows
--- fourfold while the window's diff reaches into its last half.
M.WINDOW = 16

--- The 0-based end (exclusive) of the a side (`i` 1) or b side (`i` 3) of a vim.diff hunk.
local function side_end(h, i)
  return (h[i + 1] == 0 and h[i] or h[i] - 1) + h[i + 1]
end

--- The first index at or after `from` where `list` holds `line`, or nil.
local function index_of(list, line, from)
  for k = from, #list do
    if list[k] == line then
      return k
    end
  end
  return nil
end

--- Do `n` lines of `a` from `i` equal those of `b` from `j` (1-based)?
local function equal_run(a, i, b, j, n)
  for k = 0, n - 1 do
    if a[i + k] ~= b[j + k] then
      return false
    end
  end
  return true
end

--- A change at old[i + 1], new[j + 1] (0-based counts before it) that only inserts lines (up to where old[i + 1]
--- comes back in `new`) or only deletes some (up to where new[j + 1] comes back in `old`), the nearer, when M.WINDOW
--- lines after it are equal on both sides; as a vim.diff hunk, or nil. Diffing growing windows that hold nothing in
--- common would cost the square of their size.
local function block(old, new, i, j, ea, eb)
  local w = M.WINDOW
  local k = i < ea and index_of(new, old[i + 1], j + 1) or nil -- 1-based
  local l = j < eb and index_of(old, new[j + 1], i + 1) or nil
  local ins = k and k > j + 1 and k - 1 + w <= eb and i + w <= ea and equal_run(old, i + 1, new, k, w)
  local del = l and l > i + 1 and l - 1 + w <= ea and j + w <= eb and equal_run(old, l, new, j + 1, w)
  if ins and (not del or k - 1 - j <= l - 1 - i) then
    return { i, 0, j + 1, k - 1 - j }
  elseif del then
    return { i + 1, l - 1 - i, j, 0 }
  end
  return nil
end

--- Pure: the hunks from `old` to `new`, in M.hunks' shape, found without diffing the whole lists: the lines both
--- share are walked over (equal Lua strings compare at once), and only a window around each place they differ is
--- diffed (vim.diff), its hunks taken up to the first that reaches into the window's last half (the lines past the
--- window could change it), all of them once the window reaches both ends; a block only inserted or only deleted
--- that the first window cannot hold is found by where its neighbour line comes back (`block`). A few edits in a
--- long file cost what their windows cost, not a diff of the whole file (issue 26: a merge into a 10,000-line
--- buffer). Where lines repeat, vim.diff on the whole lists could place a hunk elsewhere; both are true diffs.
---@param old string[]
---@param new string[]
---@return integer[][]
function M.hunks_windowed(old, new)
  local na, nb = #old, #new
  local i = 0
  while i < na and i < nb and old[i + 1] == new[i + 1] do
    i = i + 1
  end
  local j = i
  local ea, eb = na, nb -- the lines both share at the end are left out, as at the start
  while ea > i and eb > j and old[ea] == new[eb] do
    ea, eb = ea - 1, eb - 1
  end
  local out, w = {}, M.WINDOW
  while i < ea or j < eb do
    local wa, wb = math.min(w, ea - i), math.min(w, eb - j)
    local whole = i + wa == ea and j + wb == eb
    local hs = M.hunks(vim.list_slice(old, i + 1, i + wa), vim.list_slice(new, j + 1, j + wb))
    local a_end, b_end = nil, nil
    for _, h in ipairs(hs) do
      local ha, hb = side_end(h, 1), side_end(h, 3)
      if not whole and (ha > wa - w / 2 or hb > wb - w / 2) then
        break
      end
      out[#out + 1] = { h[1] + i, h[2], h[3] + j, h[4] }
      a_end, b_end = ha, hb
    end
    local skip = a_end == nil and not whole and w == M.WINDOW and block(old, new, i, j, ea, eb) or nil
    if skip then
      out[#out + 1] = skip
      a_end, b_end = side_end(skip, 1) - i, side_end(skip, 3) - j
    end
    if a_end == nil then
      if whole then
        break -- not reached: the window's first lines differ, so its diff has a hunk
      end
      w = w * 4
    else
      i, j, w = i + a_end, j + b_end, M.WINDOW
      while i < ea and j < eb and old[i + 1] == new[j + 1] do
        i, j = i + 1, j + 1
      end
    end
  end
  return out
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
