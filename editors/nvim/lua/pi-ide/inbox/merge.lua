--- pi-ide.inbox.merge: pi's change merged into a buffer with unsaved changes (issue 26). pi's message carries, with
--- each change, the change's hunks (the file before pi's tool -> after it) and the SHA-256 of what the tool wrote
--- (`changed[].merge`, PROTOCOL.md "v0.5: pi's change merged into an unsaved buffer"). The merge is a three-way
--- merge of line ranges:
---
--- * base: the file before pi's change(s), rebuilt from the file on disk (read as a reload reads it, verified
---   by its hash) by taking pi's hunks back out, newest change first;
--- * ours: the buffer (the user's unsaved text); the user's changes are the line diff base -> buffer (vim.diff);
--- * theirs: pi's hunks from base.
---
--- A pi hunk whose base lines no user change touches (overlapping ranges; an insertion at the edge of the
--- other's range counts) goes into the buffer at its place moved by the user's line-count changes above it; one
--- that touches the user's lines is left out, and the buffer keeps the user's text there (a conflict, reported
--- with the buffer's lines there). The merged hunks are applied in one undo step of their own: an undo break
--- before and after (never joined to the user's step), in the buffer's own context, hidden buffers too; the
--- buffer stays modified and is never written. Pure functions first, the buffer's I/O last.
---@module 'pi-ide.inbox.merge'
local M = {}

local H = {
  --- buffer -> the file's lines after pi's change and the buffer's changedtick right after the merge (for the
  --- review's marks: pi's change set names lines of pi's file, which the user's lines above have moved).
  merged = {}, ---@type table<integer, { tick: integer, disk: string[], hunks: integer[][]|nil }>
}

--- A conflict lists at most this many of the user's lines, each cut at MAX_LINE_BYTES; at most MAX_CONFLICTS
--- conflicts per report (the state file stays small; pi quotes them to its model).
M.MAX_CONFLICTS = 20
M.MAX_CONFLICT_LINES = 20
M.MAX_LINE_BYTES = 500
--- pi's hunks taken per change (the change set's cap per file).
M.MAX_HUNKS = 500

local function is_int(v, min)
  return type(v) == "number" and v == math.floor(v) and v >= (min or 0) and v <= 2 ^ 31 - 1
end

local function is_lines(v)
  if type(v) ~= "table" then
    return false
  end
  for _, s in ipairs(v) do
    if type(s) ~= "string" then
      return false
    end
  end
  return true
end

--- Pure: `merge` (a changed entry's field, decoded JSON) when well-formed, else nil and why. Hunks ascending and
--- apart, each with as many lines as it says.
---@param merge any
---@return table|nil merge
---@return string|nil problem
function M.parse(merge)
  if type(merge) ~= "table" then
    return nil, "merge is not an object"
  end
  if type(merge.sha256) ~= "string" or not merge.sha256:match("^%x+$") or #merge.sha256 ~= 64 then
    return nil, "merge.sha256 is not a SHA-256"
  end
  if merge.prev_seq ~= nil and merge.prev_seq ~= vim.NIL and not is_int(merge.prev_seq, 1) then
    return nil, "merge.prev_seq is not a seq"
  end
  if type(merge.hunks) ~= "table" or #merge.hunks > M.MAX_HUNKS then
    return nil, "merge.hunks is not a list of at most 500"
  end
  local old_end, new_end = 1, 1
  for _, h in ipairs(merge.hunks) do
    if
      type(h) ~= "table"
      or not is_int(h.old_start, 1)
      or not is_int(h.new_start, 1)
      or not is_lines(h.old_text)
      or not is_lines(h.new_text)
      or h.old_lines ~= #h.old_text
      or h.new_lines ~= #h.new_text
      or h.old_start < old_end
      or h.new_start < new_end
      or h.new_start - new_end ~= h.old_start - old_end
    then
      return nil, "a merge hunk is malformed"
    end
    old_end, new_end = h.old_start + h.old_lines, h.new_start + h.new_lines
  end
  return {
    sha256 = merge.sha256:lower(),
    prev_seq = merge.prev_seq ~= vim.NIL and merge.prev_seq or nil,
    hunks = merge.hunks,
  }, nil
end

--- Pure: the text before a change, from `after` (lines) and the change's `hunks`, or nil when `after` does not
--- hold the hunks' new lines where they say (the file is not what pi's tool wrote).
---@param after string[]
---@param hunks table[]
---@return string[]|nil
function M.unapply(after, hunks)
  local before, at = {}, 1
  for _, h in ipairs(hunks) do
    for i = at, h.new_start - 1 do
      if after[i] == nil then
        return nil
      end
      before[#before + 1] = after[i]
    end
    for i, line in ipairs(h.new_text) do
      if after[h.new_start + i - 1] ~= line then
        return nil
      end
    end
    if #before + 1 ~= h.old_start then
      return nil
    end
    for _, line in ipairs(h.old_text) do
      before[#before + 1] = line
    end
    at = h.new_start + h.new_lines
  end
  for i = at, #after do
    before[#before + 1] = after[i]
  end
  return before
end

--- Pure: a hunk as a 0-based half-open range of its a side and of its b side. vim.diff's hunks ({start_a,
--- count_a, start_b, count_b}, a start of an empty side the line before it) and pi's ({old_start, old_lines, ...},
--- a start the line at or after it) both become {a, a_end, b, b_end}.
local function from_vim(h)
  local a = h[2] == 0 and h[1] or h[1] - 1
  local b = h[4] == 0 and h[3] or h[3] - 1
  return { a = a, a_end = a + h[2], b = b, b_end = b + h[4] }
end

--- Pure: does a change of base range [a1, e1) touch one of [a2, e2)? Overlapping lines; and an insertion (an
--- empty range) touches a range it lies in or at the edge of: whose line would come first is the user's call.
local function touches(a1, e1, a2, e2)
  if a1 < e1 and a2 < e2 then
    return a1 < e2 and a2 < e1
  end
  return a1 <= e2 and a2 <= e1
end

local function cut(line)
  return #line > M.MAX_LINE_BYTES and line:sub(1, M.MAX_LINE_BYTES) or line
end

--- Pure: merge pi's hunks (`theirs`, from `base`) into `ours` (the buffer's lines). Returns the edits to make in
--- `ours` (0-based ranges of `ours`, ascending, apart: { from, to, lines }), how many of pi's hunks they carry,
--- and the conflicts ({ line, lines, text }: the 1-based first line in the merged buffer and how many of the user's
--- lines stand where pi's hunk would go; at most MAX_CONFLICTS).
---@param base string[]
---@param ours string[]
---@param theirs table[] pi's hunks from base (old_start, old_lines, new_text)
---@return { edits: table[], merged: integer, conflicts: table[], conflicts_total: integer }
function M.plan(base, ours, theirs)
  -- Only the windows around the places where base and buffer differ are diffed (linemap.hunks_windowed): a few
  -- edits of the user's in a long file cost what their windows cost.
  local user = {}
  for i, h in ipairs(require("pi-ide.linemap").hunks_windowed(base, ours)) do
    user[i] = from_vim(h)
  end
  local out = { edits = {}, merged = 0, conflicts = {}, conflicts_total = 0 }
  local u = 1 -- the first user change not wholly before the current pi hunk
  local delta = 0 -- the user's line-count change above it
  local shift = 0 -- the line-count change of pi's hunks merged above it (a conflict names the merged buffer's lines)
  for _, h in ipairs(theirs) do
    local a, e = h.old_start - 1, h.old_start - 1 + h.old_lines
    while user[u] and user[u].a_end <= a and not touches(user[u].a, user[u].a_end, a, e) do
      delta = delta + (user[u].b_end - user[u].b) - (user[u].a_end - user[u].a)
      u = u + 1
    end
    -- The user's changes this hunk touches (all at u and after, in order).
    local last = u - 1
    while user[last + 1] and touches(user[last + 1].a, user[last + 1].a_end, a, e) do
      last = last + 1
    end
    if last < u then
      out.edits[#out.edits + 1] = { from = a + delta, to = e + delta, lines = h.new_text }
      out.merged = out.merged + 1
      shift = shift + #h.new_text - h.old_lines
    else
      out.conflicts_total = out.conflicts_total + 1
      -- In `ours`: from where the first of (pi's range, the user's changes) starts to where the last ends.
      local from = math.min(a + delta, user[u].b)
      local grown = 0
      for i = u, last do
        grown = grown + (user[i].b_end - user[i].b) - (user[i].a_end - user[i].a)
      end
      local to = math.max(e + delta + grown, user[last].b_end)
      if #out.conflicts < M.MAX_CONFLICTS then
        local text = {}
        for i = from + 1, math.min(to, from + M.MAX_CONFLICT_LINES) do
          text[#text + 1] = cut(ours[i])
        end
        out.conflicts[#out.conflicts + 1] = { line = from + shift + 1, lines = to - from, text = text }
      end
    end
  end
  return out
end

-- ---- The buffer ----------------------------------------------------------------------------------------------

--- Pure: `text` (a file's bytes) as pi's lines (split at "\n", no last empty line after a final newline).
---@param text string
---@return string[]
function M.split(text)
  -- string.find in a loop: several times faster than vim.split on a 10,000-line file.
  local lines, at = {}, 1
  while true do
    local nl = text:find("\n", at, true)
    if not nl then
      break
    end
    lines[#lines + 1] = text:sub(at, nl - 1)
    at = nl + 1
  end
  if at <= #text then
    lines[#lines + 1] = text:sub(at)
  end
  return lines
end

local sha256_ffi = nil ---@type fun(text: string): string|nil

--- The SHA-256 (hex) of "abc" (FIPS 180-2's example): a hash function found through the FFI is used only when it
--- gives this (`verified`).
local SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

--- `digest` when it hashes "abc" right (it never raises), else nil: a function found through the FFI is used only so.
local function verified(digest)
  local ok, abc = pcall(digest, "abc")
  return ok and abc == SHA256_ABC and digest or nil
end

--- The system's libcrypto (OpenSSL) SHA256 through LuaJIT's FFI, or nil: it uses the CPU's SHA instructions, several
--- times faster than Neovim's own on a 10,000-line file (issue 26: the merge checks the file's hash).
local function openssl_sha256(ffi)
  local lib
  for _, name in ipairs({ "libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.3.dylib", "libcrypto.dylib" }) do
    local ok, l = pcall(ffi.load, name)
    if ok then
      lib = l
      break
    end
  end
  if not lib then
    return nil
  end
  pcall(ffi.cdef, "unsigned char *SHA256(const unsigned char *d, size_t n, unsigned char *md);")
  local md = ffi.new("unsigned char[32]")
  local hex = {}
  local function digest(t)
    lib.SHA256(t, #t, md)
    for k = 0, 31 do
      hex[k + 1] = string.format("%02x", md[k])
    end
    return table.concat(hex)
  end
  return verified(digest)
end

--- Pure: the SHA-256 (hex) of `text`: the system's OpenSSL through LuaJIT's FFI, else Neovim's own sha256_bytes
--- through the FFI (vim.fn.sha256 first copies the text into a Vim string), else vim.fn.sha256.
---@param text string
---@return string
function M.sha256(text)
  if sha256_ffi == nil then
    sha256_ffi = false
    local has_ffi, ffi = pcall(require, "ffi")
    if has_ffi then
      sha256_ffi = openssl_sha256(ffi) or false
    end
    if has_ffi and not sha256_ffi then
      pcall(
        ffi.cdef,
        "const char *sha256_bytes(const uint8_t *buf, size_t buf_len, const uint8_t *salt, size_t salt_len);"
      )
      local ok = pcall(function()
        return ffi.C.sha256_bytes
      end)
      if ok then
        sha256_ffi = verified(function(t)
          return ffi.string(ffi.C.sha256_bytes(t, #t, nil, 0))
        end) or false
      end
    end
  end
  return sha256_ffi and sha256_ffi(text) or vim.fn.sha256(text)
end

--- Can `buf`'s lines be compared with pi's (a file's text split at "\n")? A buffer that converts what it reads
--- (CR-LF, another encoding, a BOM, 'binary') shows other lines than pi's: not merged.
local function comparable(buf)
  local bo = vim.bo[buf]
  local enc = bo.fileencoding
  return bo.fileformat == "unix" and not bo.binary and not bo.bomb and (enc == "" or enc:match("^utf%-8") ~= nil)
end
M.comparable = comparable -- pi-ide.approval shows a proposal against an unsaved buffer by the same rule

--- Apply `edits` (M.plan) to `buf`, from the last: one undo step of its own. The undo breaks ('undolevels' set
--- to itself, :help undo-break) go before (not joined to the user's last change) and after (the user's next
--- change is not joined to it), in the buffer's own context (a hidden buffer too).
local function apply(buf, edits)
  vim.api.nvim_buf_call(buf, function()
    local bo = vim.bo[buf]
    local modifiable, readonly = bo.modifiable, bo.readonly
    bo.modifiable, bo.readonly = true, false -- as a reload does; no W10 "Changing a readonly file"
    vim.cmd("let &g:undolevels = &g:undolevels")
    local ok, err = pcall(function()
      for i = #edits, 1, -1 do
        local ed = edits[i]
        vim.api.nvim_buf_set_lines(buf, ed.from, ed.to, false, ed.lines)
      end
    end)
    vim.cmd("let &g:undolevels = &g:undolevels")
    bo.modifiable, bo.readonly = modifiable, readonly
    if not ok then
      error(err, 0)
    end
  end)
end

--- Merge pi's changes `chain` (this pi's new changes of the buffer's file, oldest first, each with a parsed
--- `merge`) into `buf`, whose file `disk` holds what the newest wrote (read as a reload reads it). Returns the
--- outcome ({ status = "merged"|"conflict", merged, hunks, conflicts }) or nil (with why) when it cannot merge:
--- then the buffer is untouched and the change is reported `modified`, as before.
---@param buf integer
---@param chain table[]
---@param disk string|nil
---@return table|nil outcome
---@return string|nil why
function M.merge(buf, chain, disk)
  if not disk then
    return nil, "the file could not be read"
  end
  if not comparable(buf) then
    return nil, "the buffer converts its file's lines"
  end
  local newest = chain[#chain].merge
  if M.sha256(disk) ~= newest.sha256 then
    return nil, "the file is not what pi's tool wrote"
  end
  local now = M.split(disk)
  local after = now
  local hunks = {}
  for i = #chain, 1, -1 do
    after = M.unapply(after, chain[i].merge.hunks)
    if not after then
      return nil, "pi's hunks do not fit the file"
    end
  end
  local base = after
  -- pi's hunks from base to the file now: one diff over the chain (a single change: its own hunks).
  if #chain == 1 then
    hunks = chain[1].merge.hunks
  else
    for _, h in ipairs(require("pi-ide.linemap").hunks_windowed(base, now)) do
      local r = from_vim(h)
      hunks[#hunks + 1] = {
        old_start = r.a + 1,
        old_lines = r.a_end - r.a,
        new_text = vim.list_slice(now, r.b + 1, r.b_end), -- not unpack: LuaJIT caps its results
      }
    end
  end
  local ours = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local plan = M.plan(base, ours, hunks)
  if #plan.edits > 0 then
    apply(buf, plan.edits)
  end
  H.merged[buf] = { tick = vim.api.nvim_buf_get_changedtick(buf), disk = now }
  return {
    status = plan.conflicts_total > 0 and "conflict" or "merged",
    merged = plan.merged,
    hunks = #hunks,
    conflicts = plan.conflicts,
  }
end

--- The 0-based row of `buf` where row `row` of pi's file stands, right after a merge into it (pi's change set
--- names lines of the file: the user's lines above have moved them), or nil: no merge, or the buffer changed since
--- (the review's marks then move with their lines by themselves).
---@param buf integer
---@param row integer
---@return integer|nil
function M.buffer_row(buf, row)
  local m = H.merged[buf]
  if not m or not vim.api.nvim_buf_is_valid(buf) or vim.api.nvim_buf_get_changedtick(buf) ~= m.tick then
    H.merged[buf] = nil
    return nil
  end
  local linemap = require("pi-ide.linemap")
  m.hunks = m.hunks or linemap.hunks(m.disk, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
  return linemap.map_line(m.hunks, row + 1) - 1
end

---@param buf integer
function M.forget(buf)
  H.merged[buf] = nil
end

return M
