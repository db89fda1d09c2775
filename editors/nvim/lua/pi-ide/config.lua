--- Options: defaults and validation. setup() is optional; every option has a working default.
---@module 'pi-ide.config'
local M = {}

---@class PiIdeConfig
---@field enabled boolean
---@field debounce_ms integer
---@field max_selection_bytes integer

--- The options, in the order the docs list them. This table is the only description of the options:
--- scripts/nvim-options.ts writes the Options sections of doc/pi-ide.txt and README.md from it, and
--- `npm run check` fails when they differ.
---@class PiIdeOption
---@field name string
---@field default any
---@field type string Lua type of the value
---@field check? fun(v: any): boolean
---@field want? string what `check` wants, for the error message
---@field summary string the comment in the setup() example
---@field doc string the paragraph in the docs

---@type PiIdeOption[]
M.options = {
  {
    name = "enabled",
    default = true,
    type = "boolean",
    summary = "start writing right away",
    doc = "Start writing the state file as soon as the plugin loads. `false` loads it but stays off "
      .. "until `:PiIde enable`.",
  },
  {
    name = "debounce_ms",
    default = 200,
    type = "number",
    check = function(v)
      return v >= 0 and v <= 60000 and v == math.floor(v)
    end,
    want = "a whole number of milliseconds between 0 and 60000",
    summary = "coalesce cursor/text events (0..60000)",
    doc = "Cursor moves and text changes are coalesced. The first one arms a timer, the write happens "
      .. "when it fires, with the state at that moment. While you keep moving there is at most one write "
      .. "per `debounce_ms` (5 per second at 200 ms), and the file is never more than `debounce_ms` behind. "
      .. "Buffer and window switches, entering and leaving visual mode, and directory changes (:cd, :tcd, "
      .. ":lcd) are written at once; in a burst (say, toggling visual mode very fast) at most one such write "
      .. "goes out per 20 ms, with the latest state. A write whose content would not change is skipped.",
  },
  {
    name = "max_selection_bytes",
    default = 256 * 1024,
    type = "number",
    check = function(v)
      return v >= 1 and v <= 512 * 1024 and v == math.floor(v)
    end,
    want = "a whole number of bytes between 1 and 524288 (pi reads state files up to 1 MiB)",
    summary = "cap on the selection text in the file (256 KiB)",
    doc = "The selection text is cut, on a character boundary, so that it takes at most this many bytes "
      .. "in the state file, JSON escaping included (escaping can make text several times bigger), and the "
      .. "selection is marked `truncated`. A `ggVG` on a huge or binary file never stalls typing and never "
      .. "makes the file too big for pi, which reads at most 1 MiB; start/end still describe the whole "
      .. "selection. At most 524288 (512 KiB).",
  },
  {
    name = "review_marks",
    default = true,
    type = "boolean",
    summary = "mark pi's hunks in the sign column",
    doc = "Mark the lines pi's last change set touched in buffers you have open (the sign column, "
      .. "highlight groups `PiIdeReviewAdd`, `PiIdeReviewChange` and `PiIdeReviewDelete`, linked to the diff "
      .. "groups), and the hunks of a change pi waits for you to approve (`?`, with the proposed lines below). "
      .. "`false` shows no marks; `:PiIde hunks`, `:PiIde review`, `:PiIde revert` and `:PiIde proposal` "
      .. "still work.",
  },
  {
    name = "follow",
    default = false,
    type = "boolean",
    summary = "open the places pi's model shows",
    doc = "When pi's model shows you a place (its `ide_show` tool), it goes to the quickfix list "
      .. "(\"pi-ide: pi's places\") with a one-line notice, and your window, buffer and cursor stay where they "
      .. "are: `:cc N` (the notice says N) or `:copen` takes you there. `true` also opens it at once, in the "
      .. "current window (a split when that window is a terminal or holds unsaved changes 'hidden' cannot keep).",
  },
}

---@type PiIdeConfig
M.defaults = {}
---@type table<string, { type: string, check?: (fun(v: any): boolean), want?: string }>
local schema = {}
for _, o in ipairs(M.options) do
  M.defaults[o.name] = o.default
  schema[o.name] = { type = o.type, check = o.check, want = o.want }
end

--- The options as plain data, for the docs generator (scripts/nvim-options.ts).
---@return { name: string, default: any, summary: string, doc: string }[]
function M.doc()
  local out = {}
  for _, o in ipairs(M.options) do
    out[#out + 1] = { name = o.name, default = o.default, summary = o.summary, doc = o.doc }
  end
  return out
end

--- Merge user options over the defaults, rejecting unknown keys and wrong types.
---@param opts table|nil
---@return boolean ok
---@return PiIdeConfig|string config_or_error
function M.resolve(opts)
  if opts == nil then
    return true, vim.deepcopy(M.defaults)
  end
  if type(opts) ~= "table" then
    return false, ("(pi-ide) `setup()` expects a table of options, not %s"):format(type(opts))
  end
  local keys = vim.tbl_keys(opts)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, key in ipairs(keys) do
    local rule, value = schema[key], opts[key]
    if rule == nil then
      local known = vim.tbl_keys(schema)
      table.sort(known)
      return false, ("(pi-ide) unknown option `%s` (known: %s)"):format(tostring(key), table.concat(known, ", "))
    end
    if type(value) ~= rule.type then
      return false, ("(pi-ide) `%s` should be a %s, not %s"):format(key, rule.type, type(value))
    end
    if rule.check and not rule.check(value) then
      return false, ("(pi-ide) `%s` should be %s, not %s"):format(key, rule.want, tostring(value))
    end
  end
  return true, vim.tbl_extend("force", vim.deepcopy(M.defaults), opts)
end

return M
