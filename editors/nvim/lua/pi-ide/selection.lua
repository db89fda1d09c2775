--- Selections: turn two positions and a visual mode into the protocol's selection object.
---
--- `extract` is pure (lines come from a callback) so it can be tested without a buffer; `read` is the thin
--- part that asks Neovim for the live visual area or the buffer's '< '> marks.
---
--- Rules (protocol v0.2): start <= end, 1-based inclusive, byte columns. A single-line selection carries
--- the exact column range; a multi-line one carries whole lines, with start/end columns at the first/last
--- line edges. Visual-block (^V) spanning lines is reported as whole lines with the anchors' byte columns.
--- The end column is extended to the last byte of its character, so a selected "é" is columns 1-2.
---@module 'pi-ide.selection'
local M = {}

local CTRL_V = "\22"

--- Normalise a mode string to "v", "V" or CTRL-V (select modes behave like their visual twins).
---@param mode string
---@return string|nil visual mode, or nil when `mode` is not a visual/select mode
function M.visual_kind(mode)
  local c = mode:sub(1, 1)
  if c == "v" or c == "s" then
    return "v"
  elseif c == "V" or c == "S" then
    return "V"
  elseif c == CTRL_V or c == "\19" then
    return CTRL_V
  end
  return nil
end

--- Is byte `b` a UTF-8 continuation byte (10xxxxxx)?
local function is_cont(b)
  return b ~= nil and b >= 0x80 and b <= 0xBF
end

--- A 1-based byte column clamped into `line`; an empty line still has column 1 (columns are 1-based).
--- `v$` puts the cursor on the newline and V marks use MAXCOL (2^31-1): both clamp to the last byte.
local function clamp(line, col)
  return math.max(1, math.min(col, #line))
end

--- Clamp a 1-based byte column into `line` and move it to the last byte of the character it falls in.
---@param line string
---@param col integer
---@return integer
local function end_col(line, col)
  col = clamp(line, col)
  while col < #line and is_cont(line:byte(col + 1)) do
    col = col + 1
  end
  return col
end

--- Clamp a start column into `line` and move it back to the first byte of the character it falls in.
local function start_col(line, col)
  col = clamp(line, col)
  while col > 1 and is_cont(line:byte(col)) do
    col = col - 1
  end
  return col
end

--- Cut `s` to at most `n` bytes without splitting a UTF-8 character.
---@param s string
---@param n integer
---@return string
function M.cut(s, n)
  if #s <= n then
    return s
  end
  while n > 0 and is_cont(s:byte(n + 1)) do
    n = n - 1
  end
  return s:sub(1, n)
end

--- How many bytes each byte takes inside a JSON string as vim.json writes it: `"`, `\\` and `/` become 2
--- bytes, control characters 2 or 6 (`\\n`, `\\u001b`), DEL 6; everything else, bytes >= 0x80 included, 1.
--- Built from vim.json itself, so it cannot disagree with the encoder.
local escaped = nil

local function escaped_sizes()
  if not escaped then
    escaped = {}
    for b = 0, 255 do
      escaped[b] = #vim.json.encode(string.char(b)) - 2
    end
  end
  return escaped
end

--- Size of `s` once JSON-encoded, without the quotes.
---@param s string
---@return integer
function M.encoded_size(s)
  return #vim.json.encode(s) - 2
end

--- Cut `s` so that its JSON encoding (without the quotes) takes at most `max` bytes, without splitting a
--- UTF-8 character. Escaping makes text grow (2-17% for source code, up to 6x for control bytes), so a cap on
--- the raw text does not bound the file. Costs about two encodings of `s` plus a walk over one 4 KiB chunk.
---@param s string
---@param max integer
---@return string text
---@return boolean cut
function M.fit(s, max)
  if M.encoded_size(s) <= max then
    return s, false
  end
  local size = escaped_sizes()
  local CHUNK = 4096
  local pos, used = 1, 0
  -- Whole chunks while they fit (each measured by the C encoder), then byte by byte inside the first one
  -- that does not.
  while true do
    local chunk = s:sub(pos, pos + CHUNK - 1)
    local n = M.encoded_size(chunk)
    if used + n > max then
      local i = pos
      while used + size[s:byte(i)] <= max do
        used = used + size[s:byte(i)]
        i = i + 1
      end
      return M.cut(s, i - 1), true
    end
    used = used + n
    pos = pos + CHUNK
  end
end

--- Whole lines first..last joined with "\n", read in chunks and capped at `max_bytes` so a huge selection
--- costs at most about `max_bytes` of work.
---@param get_lines fun(first: integer, last: integer): string[] 1-based inclusive
---@return string text
---@return boolean cut
local function join_lines(get_lines, first, last, max_bytes)
  local parts, total = {}, 0
  local lnum = first
  while lnum <= last do
    local chunk_last = math.min(last, lnum + 999)
    for _, l in ipairs(get_lines(lnum, chunk_last)) do
      local sep = #parts > 0 and 1 or 0
      if total + sep + #l > max_bytes then
        local room = max_bytes - total - sep
        if room > 0 then
          parts[#parts + 1] = M.cut(l, room)
        end
        return table.concat(parts, "\n"), true
      end
      parts[#parts + 1] = l
      total = total + sep + #l
    end
    lnum = chunk_last + 1
  end
  return table.concat(parts, "\n"), false
end

--- The selection text capped so that its *encoded* size is at most `max_bytes`. The raw text is read only
--- up to `max_bytes` (encoding never shrinks text), then cut again by its encoded size.
---@return string text
---@return boolean cut
local function capped(text, read_cut, max_bytes)
  local fitted, cut = M.fit(text, max_bytes)
  return fitted, read_cut or cut
end

---@class PiIdePos
---@field line integer 1-based
---@field column integer 1-based byte column

---@class PiIdeSelection
---@field start PiIdePos
---@field end PiIdePos
---@field text string
---@field truncated boolean|nil true when `text` was cut to `max_bytes`

--- Build a selection from two positions (either order) in `mode`.
---@param mode string "v", "V" or CTRL-V
---@param a integer[] {line, col} 1-based byte column (the visual anchor, or '<)
---@param b integer[] {line, col} (the cursor, or '>)
---@param get_lines fun(first: integer, last: integer): string[] 1-based inclusive line reader
---@param max_bytes integer cap on the text's size once JSON-encoded
---@return PiIdeSelection
function M.extract(mode, a, b, get_lines, max_bytes)
  local s, e = a, b
  if b[1] < a[1] or (b[1] == a[1] and b[2] < a[2]) then
    s, e = b, a
  end
  local sl, el = s[1], e[1]
  local first = get_lines(sl, sl)[1] or ""
  local last = sl == el and first or (get_lines(el, el)[1] or "")

  if sl == el then
    local sc, ec
    if mode == "V" then
      sc, ec = 1, end_col(first, #first)
    else
      -- Charwise, or a one-line block: the exact range between the two columns.
      sc, ec = start_col(first, s[2]), end_col(first, e[2])
    end
    local raw = first:sub(sc, ec)
    local text, cut = capped(M.cut(raw, max_bytes), #raw > max_bytes, max_bytes)
    return {
      start = { line = sl, column = sc },
      ["end"] = { line = el, column = ec },
      text = text,
      truncated = cut or nil,
    }
  end

  local sc, ec
  if mode == "V" then
    sc, ec = 1, end_col(last, #last)
  else
    -- Charwise: where the selection starts/ends on its edge lines. Block: the two anchors' byte columns,
    -- which is only an approximation of the block (the text is whole lines either way).
    sc, ec = start_col(first, s[2]), end_col(last, e[2])
  end
  local joined, read_cut = join_lines(get_lines, sl, el, max_bytes)
  local text, cut = capped(joined, read_cut, max_bytes)
  return {
    start = { line = sl, column = sc },
    ["end"] = { line = el, column = ec },
    text = text,
    truncated = cut or nil,
  }
end

--- Per-buffer record of the last visual selection the user made in this session:
--- `at` = when visual mode was left, `mode`, the marks it left behind and the buffer's changedtick then.
---@class PiIdeSelRecord
---@field at number
---@field mode string
---@field s integer[]
---@field e integer[]
---@field tick integer

--- Record the selection just left in `buf` (call from ModeChanged visual -> non-visual, when Neovim has
--- already set '< and '>).
---@param buf integer
---@param mode string the visual mode that was left
---@param now number
---@return PiIdeSelRecord
function M.record(buf, mode, now)
  local api = vim.api
  return {
    at = now,
    mode = M.visual_kind(mode) or "v",
    s = api.nvim_buf_get_mark(buf, "<"),
    e = api.nvim_buf_get_mark(buf, ">"),
    tick = api.nvim_buf_get_changedtick(buf),
  }
end

local function same(p, q)
  return p[1] == q[1] and p[2] == q[2]
end

-- The last selection built from a buffer's marks, with what it was built from. Outside visual mode every
-- write (each cursor move, throttled) reports the marks again; after `ggVG` on a big file reading and
-- cutting up to `max_bytes` of lines each time would cost tens of milliseconds a write. The text can
-- only change with the buffer (changedtick), the marks or the mode, so while none of them moved it is reused.
local marks_memo = nil

-- Deleted or replaced selections. Neovim keeps '< '> after `d` or `c` on a selection (moved onto whatever text
-- follows), and ModeChanged reports leaving visual mode only after the operator has run, so neither the marks
-- nor the moment of leaving can tell a yank from a delete. An extmark over the visual area, moved along while
-- the user selects, can: Neovim shrinks it with every deletion inside it, so once the selected text has been
-- deleted (`d`, `c`, `p` over it, `:1,20d` later) nothing of it is left. Start and end have opposite gravity,
-- so text typed where the selection was (`cNEW TEXT`) does not count as part of it.
local ns = nil ---@type integer|nil
-- Per buffer: the extmark over its last visual area and that area's size in bytes when it was placed.
local tracked = {} ---@type table<integer, { id: integer, size: integer }>

--- Bytes between an extmark's start and end, or nil when it is gone. Rows past the end count as the end.
local function extent(buf, id)
  local api = vim.api
  local ok, m = pcall(api.nvim_buf_get_extmark_by_id, buf, ns, id, { details = true })
  if not ok or not m[1] or not m[3] or not m[3].end_row then
    return nil
  end
  local count = api.nvim_buf_line_count(buf)
  local function offset(row, col)
    if row >= count then
      return api.nvim_buf_get_offset(buf, count)
    end
    return api.nvim_buf_get_offset(buf, row) + col
  end
  local ok2, size = pcall(function()
    return offset(m[3].end_row, m[3].end_col) - offset(m[1], m[2])
  end)
  return ok2 and size or nil
end

--- Follow the live visual area of `buf` with the extmark (call on entering visual mode and on every cursor
--- move in it: the last call before an operator is what the operator acts on).
---@param buf integer
---@param mode string nvim_get_mode().mode
function M.track(buf, mode)
  local kind = M.visual_kind(mode)
  if not kind then
    return
  end
  local api = vim.api
  ns = ns or api.nvim_create_namespace("pi-ide-selection")
  local v, c = vim.fn.getpos("v"), vim.fn.getpos(".")
  local a, b = { v[2], v[3] }, { c[2], c[3] }
  if b[1] < a[1] or (b[1] == a[1] and b[2] < a[2]) then
    a, b = b, a
  end
  local first = api.nvim_buf_get_lines(buf, a[1] - 1, a[1], false)[1] or ""
  local last = a[1] == b[1] and first or (api.nvim_buf_get_lines(buf, b[1] - 1, b[1], false)[1] or "")
  -- 0-based, end exclusive. Linewise and block: the lines' text (their last newline excluded, so that the
  -- empty line a linewise `c` leaves behind is not "what is left of the selection").
  local sc, ec = 0, #last
  if kind == "v" then
    sc, ec = math.min(start_col(first, a[2]) - 1, #first), math.min(end_col(last, b[2]), #last)
  end
  local t = tracked[buf]
  local ok, id = pcall(api.nvim_buf_set_extmark, buf, ns, a[1] - 1, sc, {
    id = t and t.id or nil,
    end_row = b[1] - 1,
    end_col = ec,
    right_gravity = true,
    end_right_gravity = false,
  })
  if ok then
    tracked[buf] = { id = id, size = extent(buf, id) or 0 }
  end
end

--- Has the text of `buf`'s last visual area been deleted or replaced since it was selected? True when nothing
--- of it is left (or only one byte of a longer selection: the newline a linewise `c` keeps).
---@param buf integer
---@return boolean
function M.gone(buf)
  local t = tracked[buf]
  if not t or t.size <= 0 then
    return false -- nothing tracked, or an empty line selected: nothing that could vanish
  end
  local now = extent(buf, t.id)
  if now == nil then
    return false
  end
  return now <= 0 or (now <= 1 and t.size > 1)
end

--- Forget `buf`'s memoised selection when the buffer is wiped out: it may hold up to `max_bytes` of text.
---@param buf integer
function M.forget(buf)
  if marks_memo and marks_memo.buf == buf then
    marks_memo = nil
  end
  tracked[buf] = nil
end

local function from_marks(buf, tick, kind, s, e, get_lines, max_bytes)
  local m = marks_memo
  if m and m.buf == buf and m.tick == tick and m.kind == kind and m.max == max_bytes and same(m.s, s) and same(m.e, e)
  then
    return m.sel
  end
  -- Marks are {line, 0-based byte col}; MAXCOL for V is clamped by extract().
  local sel = M.extract(kind, { s[1], s[2] + 1 }, { e[1], e[2] + 1 }, get_lines, max_bytes)
  marks_memo = { buf = buf, tick = tick, kind = kind, max = max_bytes, s = s, e = e, sel = sel }
  return sel
end

--- The selection to report for the current buffer, with `selected_at`:
--- - in visual/select mode: the live area, selected_at = now;
--- - otherwise the buffer's '< '> marks. If they are the marks the user left behind (or were shifted by
---   later edits), selected_at is when they were made, unless the selected text has since been deleted or
---   replaced (then there is no selection); marks we did not see being made (shada, session,
---   `m<`, another plugin) get selected_at = nil (unknown: pi treats it as stale). Registers are never used.
---@param buf integer
---@param mode string nvim_get_mode().mode
---@param rec PiIdeSelRecord|nil
---@param now number
---@param max_bytes integer
---@return (PiIdeSelection|nil), (number|nil) selection, selected_at
function M.read(buf, mode, rec, now, max_bytes)
  local api = vim.api
  local get_lines = function(first, last)
    return api.nvim_buf_get_lines(buf, first - 1, last, false)
  end
  local kind = M.visual_kind(mode)
  if kind then
    local v, c = vim.fn.getpos("v"), vim.fn.getpos(".")
    return M.extract(kind, { v[2], v[3] }, { c[2], c[3] }, get_lines, max_bytes), now
  end
  local s = api.nvim_buf_get_mark(buf, "<")
  local e = api.nvim_buf_get_mark(buf, ">")
  if s[1] == 0 or e[1] == 0 then
    return nil, nil
  end
  local count = api.nvim_buf_line_count(buf)
  -- Marks can point past the end after lines were deleted.
  s[1], e[1] = math.min(s[1], count), math.min(e[1], count)
  local tick = api.nvim_buf_get_changedtick(buf)
  local at, kind_ = nil, "v"
  -- The marks the user left behind, or the same ones moved by edits above them (the text changed since).
  if rec and (same(rec.s, s) and same(rec.e, e) or rec.tick ~= tick) then
    if M.gone(buf) then
      -- Deleted or replaced: the marks now sit on text the user never selected. No selection to send.
      return nil, nil
    end
    at, kind_ = rec.at, rec.mode
  end
  return from_marks(buf, tick, kind_, s, e, get_lines, max_bytes), at
end

return M
