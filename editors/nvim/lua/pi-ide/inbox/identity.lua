--- pi-ide.inbox.identity: pi's identity across pid namespaces (PROTOCOL.md v0.5, "pi's identity is (pid,
--- pid_ns)"). A pi outside the initial namespace names its files `pi-<pid>-<ns digits>.json` (`.review.json`,
--- `.approval.json`); this Neovim checks pi's pid with kill(pid, 0) only when pi's namespace is its own, and keys
--- everything it keeps per pi by the pair. Pure but for reading its own namespace once.
---@module 'pi-ide.inbox.identity'
local M = {}

--- The initial pid namespace: the host's, fixed by the kernel.
M.INITIAL = "pid:[4026531836]"

local KINDS =
  { [".json"] = "message", [".review.json"] = "review", [".approval.json"] = "approval", [".ask.json"] = "ask" }
local SUFFIX = { message = ".json", review = ".review.json", approval = ".approval.json", ask = ".ask.json" }

--- What a pi file's name says: { kind = "message"|"review"|"approval"|"ask" (v0.5 show and ask), pid,
--- ns = "pid:[<digits>]" or nil (the initial namespace's name), key }; nil for any other name (the table
--- test/fixtures/state-dir-cases.ts PI_FILE_NAME_CASES): the pid canonical, the namespace's digits canonical
--- (1-20, no leading zero, compared as text) and never the initial namespace's, so no other spelling aliases a pi.
---@param name any
---@return table|nil
function M.parse_name(name)
  if type(name) ~= "string" then
    return nil
  end
  local pid_digits, rest = name:match("^pi%-(%d+)(.*)$")
  if not pid_digits then
    return nil
  end
  local ns_digits, suffix = rest:match("^%-(%d+)(%..*)$")
  if not ns_digits then
    suffix = rest
  end
  local kind = KINDS[suffix]
  local pid = kind and require("pi-ide.writer").pid_of_name(pid_digits .. ".json")
  if not pid then
    return nil
  end
  local ns
  if ns_digits then
    if #ns_digits > 20 or ns_digits:sub(1, 1) == "0" then
      return nil
    end
    ns = "pid:[" .. ns_digits .. "]"
    if ns == M.INITIAL then
      return nil
    end
  end
  return { kind = kind, pid = pid, ns = ns, key = M.key(pid, ns) }
end

--- The key of pi (pid, namespace) for everything kept per pi; a namespace left out is the initial one.
---@param pid integer
---@param ns string|nil
---@return string
function M.key(pid, ns)
  return ("%d@%s"):format(pid, ns or M.INITIAL)
end

--- pi's `kind` file name for the pi (pid, ns).
---@param kind string
---@param pid integer
---@param ns string|nil
---@return string
function M.file_name(kind, pid, ns)
  local digits = ns and ns ~= M.INITIAL and ns:match("^pid:%[(%d+)%]$")
  return ("pi-%d%s%s"):format(pid, digits and ("-" .. digits) or "", SUFFIX[kind])
end

--- Does the file's `pid_ns` field agree with its name (`ident` from parse_name)? Otherwise it is malformed.
---@param ident table
---@param pid_ns any
---@return string|nil problem
function M.disagreement(ident, pid_ns)
  if ident.ns then
    if pid_ns ~= ident.ns then
      return ("pid_ns does not match the file name (%s)"):format(ident.ns)
    end
  elseif pid_ns ~= nil and pid_ns ~= M.INITIAL then
    return "pid_ns names another namespace than the initial one under a pi-<pid> name"
  end
  return nil
end

--- `who` as an identity: a table from parse_name as it is, a pid (a pi of the initial namespace, as callers
--- before v0.5 name one) made one.
---@param who table|integer
---@return table { pid, ns, key }
function M.of(who)
  if type(who) == "table" then
    return who
  end
  return { pid = who, key = M.key(who, nil) }
end

--- The key of `who`: a key string as it is, a pid (the initial namespace) or an identity made one.
---@param who string|integer|table
---@return string
function M.key_of(who)
  if type(who) == "string" then
    return who
  end
  return M.of(who).key
end

local own

--- This Neovim's namespace, read once; one that cannot be read counts as the initial one.
---@return string
function M.own()
  if not own then
    own = require("pi-ide.state").pid_namespace() or M.INITIAL
  end
  return own
end

--- May kill(pid, 0) here judge a pi of namespace `ns` (nil: the initial one)? Only in this Neovim's own.
---@param ns string|nil
---@return boolean
function M.judges(ns)
  return (ns or M.INITIAL) == M.own()
end

--- For tests: take `ns` as this Neovim's own namespace (nil: read it again).
---@param ns string|nil
function M._set_own(ns)
  own = ns
end

return M
