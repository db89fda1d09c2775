--- The only module that touches the file system: the state directory's safety checks and the atomic write.
--- Functions return `ok, err` (plus a problem name) and never throw.
---
--- The state file can hold selected source text, so it must never land where someone else can read it or
--- redirect it: the directory is created 0700, and an existing one is used only if it is a real directory
--- (lstat: a symlink is refused, never followed), owned by us, with no group/other permission bits.
---
--- These are the rules of src/protocol/state-dir.ts (pi and the TypeScript clients). One table of cases,
--- test/fixtures/state-dir-cases.ts, runs against both (test/unit/protocol/state-dir.test.ts and
--- test/nvim/state-dir.test.ts), and the problem names returned here are that module's: "missing",
--- "symlink", "not-directory", "foreign-owner", "open-permissions", "uncreatable", "temp-in-the-way", "io".
---@module 'pi-ide.writer'
local uv = require("pi-ide.compat").uv

local M = {}

local MODE_DIR = 448 -- 0700
local MODE_FILE = 384 -- 0600

--- `$XDG_RUNTIME_DIR/pi-ide`, else `/tmp/pi-ide` (protocol v0.2). A relative XDG_RUNTIME_DIR is ignored, as
--- the XDG spec says and as the pi side does: both must arrive at the same directory.
---@param runtime_dir string|nil
---@return string
function M.state_dir(runtime_dir)
  if runtime_dir and runtime_dir:sub(1, 1) == "/" then
    return (runtime_dir:gsub("/+$", "")) .. "/pi-ide"
  end
  return "/tmp/pi-ide"
end

--- Largest pid a state file name may carry (pid_t is a signed 32-bit integer).
local MAX_PID = 2 ^ 31 - 1

--- The pid a state file name `<pid>.json` stands for, or nil when `name` is not one. Only the canonical
--- spelling counts (parseStateFileName in src/protocol/state-dir.ts): decimal, no sign, no leading zero, at most
--- 2^31-1, so `0123.json` cannot alias `123.json`. pi's `pi-<pid>.json` is this rule behind a prefix.
---@param name string
---@return integer|nil
function M.pid_of_name(name)
  local digits = type(name) == "string" and name:match("^([1-9][0-9]*)%.json$")
  if not digits or #digits > 10 then
    return nil
  end
  local pid = tonumber(digits)
  return pid <= MAX_PID and pid or nil
end

---@class PiIdeDirInfo
---@field exists boolean
---@field type string|nil "directory", "link", "file", ...
---@field uid integer|nil
---@field perm integer|nil permission bits (mode & 0777)

--- What lstat says about `dir`, for checks and for :checkhealth.
---@param dir string
---@return PiIdeDirInfo
function M.inspect(dir)
  local st = uv.fs_lstat(dir)
  if not st then
    return { exists = false }
  end
  return { exists = true, type = st.type, uid = st.uid, perm = st.mode % 512 }
end

--- Why `info` is not a safe state directory, or nil when it is.
---@param dir string
---@param info PiIdeDirInfo
---@param uid integer
---@return string|nil problem the message
---@return string|nil kind the problem's name (see the module header)
function M.problem(dir, info, uid)
  if not info.exists then
    return ("%s does not exist"):format(dir), "missing"
  end
  if info.type == "link" then
    return ("%s is a symbolic link; refusing to follow it (remove it)"):format(dir), "symlink"
  end
  if info.type ~= "directory" then
    return ("%s is a %s, not a directory (remove it)"):format(dir, tostring(info.type)), "not-directory"
  end
  if info.uid ~= uid then
    return ("%s is owned by uid %d, not by you (uid %d); not writing there"):format(dir, info.uid, uid),
      "foreign-owner"
  end
  if info.perm % 64 ~= 0 then
    return ("%s has mode %03o: others could read your selection; not writing there (chmod 700 %s)"):format(
      dir,
      info.perm,
      dir
    ),
      "open-permissions"
  end
  return nil
end

--- May `dir` be used? Read-only: creates and changes nothing.
---@param dir string
---@param uid integer|nil default: ours
---@return boolean ok
---@return string|nil err
---@return string|nil kind
function M.check(dir, uid)
  local problem, kind = M.problem(dir, M.inspect(dir), uid or uv.getuid())
  if problem then
    return false, problem, kind
  end
  return true
end

--- Make sure `dir` exists and is safe to write into. Creates it 0700 when missing (not its parents:
--- XDG_RUNTIME_DIR is the session's, and /tmp always exists).
---@param dir string
---@param uid integer|nil the owner the dir must have; default: ours
---@return boolean ok
---@return string|nil err
---@return boolean|nil insecure true when the dir exists but must not be used
---@return string|nil kind the problem's name
function M.ensure_dir(dir, uid)
  uid = uid or uv.getuid()
  local info = M.inspect(dir)
  if not info.exists then
    local ok, err, code = uv.fs_mkdir(dir, MODE_DIR)
    if ok then
      -- The umask filters mkdir's mode; a dir we have just made is ours to set exactly.
      uv.fs_chmod(dir, MODE_DIR)
    elseif code ~= "EEXIST" then
      -- EEXIST: another editor created it in between; the checks below decide whether we may use it.
      return false, ("cannot create %s: %s"):format(dir, tostring(err)), nil, "uncreatable"
    end
    info = M.inspect(dir)
  end
  local problem, kind = M.problem(dir, info, uid)
  if problem then
    return false, problem, info.exists, kind
  end
  return true
end

--- Write all of `data` to `fd`, looping over short writes.
local function write_all(fd, data)
  local offset = 0
  while offset < #data do
    local n, err = uv.fs_write(fd, offset == 0 and data or data:sub(offset + 1), offset)
    if not n then
      return false, err
    end
    if n == 0 then
      return false, "write returned 0 bytes"
    end
    offset = offset + n
  end
  return true
end

--- Atomically replace `<dir>/<pid>.json` with `text`: write `<pid>.json.tmp` in the same directory, then
--- rename. The caller has checked the directory (ensure_dir).
---@param dir string
---@param pid integer
---@param text string
---@param uid integer|nil the owner a leftover temp file must have to be removed; default: ours
---@return boolean ok
---@return string|nil err
---@return string|nil kind "temp-in-the-way" or "io"
function M.write(dir, pid, text, uid)
  return M.write_named(dir, ("%d.json"):format(pid), text, uid)
end

--- Atomically replace `<dir>/<name>` with `text`, by the state file's rules (see write): the editor's other
--- files in the state dir (v0.5 `<pid>.buffers.json`, the send request `<pid>.send.json`) are written so too.
---@param dir string
---@param name string
---@param text string
---@param uid integer|nil
---@return boolean ok
---@return string|nil err
---@return string|nil kind
function M.write_named(dir, name, text, uid)
  local final = ("%s/%s"):format(dir, name)
  local tmp = final .. ".tmp"
  -- "wx" (O_EXCL) refuses to open through an existing file or symlink at the temp path.
  local fd, err, code = uv.fs_open(tmp, "wx", MODE_FILE)
  if not fd and code == "EEXIST" then
    -- A regular file of ours here is a leftover of an interrupted write (or of a previous process with our
    -- pid): remove it and retry once. Anything else (a symlink, a directory, someone else's file) is refused.
    local st = uv.fs_lstat(tmp)
    if st and st.type == "file" and st.uid == (uid or uv.getuid()) then
      uv.fs_unlink(tmp)
      fd, err = uv.fs_open(tmp, "wx", MODE_FILE)
    else
      return false, ("%s exists and is not our temp file; not writing"):format(tmp), "temp-in-the-way"
    end
  end
  if not fd then
    return false, ("cannot create %s: %s"):format(tmp, tostring(err)), "io"
  end
  local ok, werr = write_all(fd, text)
  -- The umask can only remove bits from 0600; chmod makes the mode exact whatever it is.
  uv.fs_fchmod(fd, MODE_FILE)
  local closed, cerr = uv.fs_close(fd)
  if not ok or not closed then
    uv.fs_unlink(tmp)
    return false, ("cannot write %s: %s"):format(tmp, tostring(werr or cerr)), "io"
  end
  local renamed, rerr = uv.fs_rename(tmp, final)
  if not renamed then
    uv.fs_unlink(tmp)
    return false, ("cannot rename %s: %s"):format(tmp, tostring(rerr)), "io"
  end
  return true
end

--- Remove our state file, our send request and answers (v0.5), any temp file. Only inside a directory that
--- passes the checks: unlinking through a directory someone swapped for a symlink would delete a file
--- elsewhere. A missing directory holds nothing of ours: that is success.
---@param dir string
---@param pid integer
---@param uid integer|nil the owner the dir must have; default: ours
---@return boolean ok
---@return string|nil err
---@return string|nil kind
function M.remove(dir, pid, uid)
  -- The unsaved buffers (v0.5) go with the state file that names them.
  local ok, err, kind = M.remove_named(dir, ("%d.buffers.json"):format(pid), uid)
  if ok then
    ok, err, kind = M.remove_named(dir, ("%d.send.json"):format(pid), uid)
  end
  if ok then
    ok, err, kind = M.remove_named(dir, ("%d.answers.json"):format(pid), uid) -- v0.5 show and ask
  end
  if ok then
    ok, err, kind = M.remove_named(dir, ("%d.json"):format(pid), uid)
  end
  if ok then
    require("pi-ide.buffers").forget()
  end
  return ok, err, kind
end

--- Remove `<dir>/<name>` and its temp file, under remove's rules.
---@param dir string
---@param name string
---@param uid integer|nil
---@return boolean ok
---@return string|nil err
---@return string|nil kind
function M.remove_named(dir, name, uid)
  local problem, kind = M.problem(dir, M.inspect(dir), uid or uv.getuid())
  if kind == "missing" then
    return true
  end
  if problem then
    return false, "state dir is not ours; left it alone: " .. problem, kind
  end
  local final = ("%s/%s"):format(dir, name)
  uv.fs_unlink(final .. ".tmp")
  local ok, err, code = uv.fs_unlink(final)
  if not ok and code ~= "ENOENT" then
    return false, tostring(err), "io"
  end
  return true
end

return M
