--- Options: defaults and validation. setup() is optional; every option has a working default.
---@module 'pi-ide.config'
local M = {}

---@class PiIdeConfig
---@field enabled boolean
---@field debounce_ms integer
---@field max_selection_bytes integer

---@type PiIdeConfig
M.defaults = {
  -- Start writing the state file right away. false = load the plugin but stay off until :PiIde enable.
  enabled = true,
  -- Cursor moves and text changes are coalesced: the first one arms a timer, the write happens when it
  -- fires. 200 ms keeps pi at most this far behind and caps writes at 5 per second while you move.
  -- Buffer/window switches, visual-mode changes and :cd are written at once regardless.
  debounce_ms = 200,
  -- The selection text is cut (on a character boundary) so that it takes at most this many bytes in the state
  -- file, JSON escaping included, and marked `truncated`: a `ggVG` over a huge file never stalls typing and
  -- never makes the file too big for pi (which reads at most 1 MiB). start/end still describe all of it.
  max_selection_bytes = 256 * 1024,
}

---@type table<string, { type: string, check?: (fun(v: any): boolean), want?: string }>
local schema = {
  enabled = { type = "boolean" },
  debounce_ms = {
    type = "number",
    check = function(v)
      return v >= 0 and v <= 60000 and v == math.floor(v)
    end,
    want = "a whole number of milliseconds between 0 and 60000",
  },
  max_selection_bytes = {
    type = "number",
    check = function(v)
      return v >= 1 and v <= 512 * 1024 and v == math.floor(v)
    end,
    want = "a whole number of bytes between 1 and 524288 (pi reads state files up to 1 MiB)",
  },
}

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
