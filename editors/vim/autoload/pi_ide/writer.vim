vim9script
# pi_ide/writer.vim: the state directory's rules and the state file's atomic replace, the Vim twin of
# src/protocol/state-dir.ts and editors/nvim/lua/pi-ide/writer.lua. One table of cases,
# test/fixtures/state-dir-cases.ts, runs against all three (test/vim/state-dir.test.ts for this one), and
# the problem names are theirs: "missing", "symlink", "not-directory", "foreign-owner", "open-permissions",
# "uncreatable", "temp-in-the-way", "io". Results are data ([] = fine, else [message, problem name]);
# nothing here throws.
#
# What Vim script can and cannot do, and how each rule is kept:
# - lstat: readdirex() of the parent reports an entry's own type ("link" for a symlink), owner name and
#   mode without following it; getftype() (also lstat) is used before every other look at a path.
# - Owner: Vim has no getuid(). The user is the owner of the directory Vim's tempname() just created for
#   this process (that directory is ours by construction), compared by name.
# - O_EXCL: Vim has no exclusive open, but mkdir() is exclusive: the text is written in a fresh 0700
#   directory `<pid>.json.tmp.d`, so nothing planted there can be written through.
# - rename: Vim's rename() unlinks the target before renaming (and copies when rename fails), so readers
#   could see no file at all. The replace is done by `mv -f -T` (GNU coreutils: one rename(2), never into a
#   directory), through the protocol's temp path `<pid>.json.tmp`; the caller is told through a callback
#   when it has finished. With perl, one perl started at the first write stays and does each replace with the
#   same rename(2) calls (RENAMER, a line asked, a line answered: no process started per write, which cost
#   tens of milliseconds a write on a loaded machine); without perl, one `sh` job per write (REPLACE).

const MAX_PID = 2147483647

# `$XDG_RUNTIME_DIR/pi-ide` when XDG_RUNTIME_DIR is absolute, else `/tmp/pi-ide` (PROTOCOL.md).
export def StateDir(runtime: string): string
  if runtime =~ '^/'
    return substitute(runtime, '/\+$', '', '') .. '/pi-ide'
  endif
  return '/tmp/pi-ide'
enddef

# The pid a `<pid>.json` name stands for, or 0: canonical decimal only (`0123.json` is not `123.json`'s),
# at most 2^31-1.
export def PidOfName(name: string): number
  if name !~# '^[1-9][0-9]\{0,9}\.json$'
    return 0
  endif
  var pid = str2nr(name)
  return pid <= MAX_PID ? pid : 0
enddef

# pi's identity across pid namespaces (PROTOCOL.md v0.5): the pair (pid, pid namespace), spelled as the stem of
# its file names: `<pid>` for a pi of the initial namespace (or not knowing its own), `<pid>-<ns digits>` for
# any other (`pi-1-4026532455.json`). Every per-pi thing in this client is keyed by that stem.
export const INITIAL_NS = 'pid:[4026531836]'
const INITIAL_NS_DIGITS = '4026531836'

# The identity (stem) of one of pi's file names, `pi-<stem>.json`, `.review.json`, `.approval.json` or (v0.5)
# `.ask.json`, or '':
# canonical decimal for both numbers; a suffix naming the initial namespace is no name pi writes.
export def PiKeyOfName(name: string): string
  var m = matchlist(name, '\C^pi-\([1-9][0-9]\{0,9}\)\%(-\([1-9][0-9]\{0,19}\)\)\=\%(\.review\|\.approval\|\.ask\)\=\.json$')
  if empty(m) || str2nr(m[1]) > MAX_PID || m[2] ==# INITIAL_NS_DIGITS
    return ''
  endif
  return m[2] == '' ? m[1] : m[1] .. '-' .. m[2]
enddef

# The pid of an identity.
export def PidOfKey(key: string): number
  return str2nr(key)
enddef

# The pid namespace of an identity, as `pid_ns` spells it.
export def NsOfKey(key: string): string
  var digits = matchstr(key, '-\zs[0-9]\+$')
  return digits == '' ? INITIAL_NS : printf('pid:[%s]', digits)
enddef

# An identity from what callers pass: the stem itself, or a bare pid (the initial namespace's pi).
export def Key(key_or_pid: any): string
  return type(key_or_pid) == v:t_string ? key_or_pid : string(key_or_pid)
enddef

# Pure: why decoded file `msg` of identity `key` names another namespace than its name does, or '': `pid_ns` is
# the name's namespace, and may be left out only in a name without one (a pi before v0.5, or not knowing its own).
export def NsDisagrees(msg: dict<any>, key: string): string
  if !has_key(msg, 'pid_ns') && key !~ '-'
    return ''
  endif
  var ns = get(msg, 'pid_ns', v:null)
  if type(ns) != v:t_string || ns !=# NsOfKey(key)
    return printf('pid_ns %s does not match the file name', has_key(msg, 'pid_ns') ? string(ns) : '(none)')
  endif
  return ''
enddef

# The fields that name pi `key` in what this Vim writes back (reports, reverts, decisions): `pi_pid`, and
# `pi_ns` exactly as pi's file said (left out when it said none).
export def PiFields(key: string, msg: dict<any>): dict<any>
  var out: dict<any> = {pi_pid: PidOfKey(key)}
  if type(get(msg, 'pid_ns', 0)) == v:t_string
    out.pi_ns = msg.pid_ns
  endif
  return out
enddef

# Pure: the identity a record written back names (`pi_pid`, `pi_ns`, the initial namespace when left out).
export def KeyOfRecord(r: dict<any>): string
  var digits = matchstr(get(r, 'pi_ns', ''), '^pid:\[\zs[0-9]\+\ze\]$')
  var pid = string(get(r, 'pi_pid', 0))
  return digits == '' || digits ==# INITIAL_NS_DIGITS ? pid : pid .. '-' .. digits
enddef

# This Vim's pid namespace (`readlink /proc/self/ns/pid`), read once; '' where /proc does not say.
var own_ns: any = v:null
export def OwnNs(): string
  if type(own_ns) == v:t_none
    own_ns = matchstr(resolve('/proc/self/ns/pid'), '/\zspid:\[[0-9]\+\]$')
  endif
  return own_ns
enddef

# May this Vim judge identity `key`'s pid by its process (liveness)? Only in its own namespace: elsewhere the
# pid names another process or none. A Vim not knowing its own counts itself in the initial namespace.
export def JudgesKey(key: string): bool
  return NsOfKey(key) ==# (OwnNs() ?? INITIAL_NS)
enddef

# What lstat says about `path`: a readdirex() entry ({type, user, perm, size, time, ...}) or {} when
# nothing is there. Never follows `path` itself.
export def Entry(path: string): dict<any>
  var clean = substitute(path, '/\+$', '', '')
  var parent = fnamemodify(clean, ':h')
  var name = fnamemodify(clean, ':t')
  if getftype(clean) == ''
    return {}
  endif
  try
    var found = readdirex(parent, (e) => e.name == name, {sort: 'none'})
    return empty(found) ? {} : found[0]
  catch
    return {}
  endtry
enddef

var me = ''

# The name of the user this Vim runs as: the owner of Vim's own temp directory (see the header).
export def Me(): string
  if me == ''
    me = get(Entry(fnamemodify(tempname(), ':h')), 'user', '')
  endif
  return me
enddef

# How an owner is shown: readdirex() gives '' for a uid without a name.
export def OwnerName(user: string): string
  return user == '' ? 'a user without a name' : user
enddef

# Why `info` (an Entry) is not a safe state directory, or [] when it is.
export def Problem(dir: string, info: dict<any>, user: string): list<string>
  if empty(info)
    return [dir .. ' does not exist', 'missing']
  endif
  if info.type =~# '^link'
    return [dir .. ' is a symbolic link; refusing to follow it (remove it)', 'symlink']
  endif
  if info.type != 'dir'
    return [printf('%s is a %s, not a directory (remove it)', dir, info.type), 'not-directory']
  endif
  # A user without a name (readdirex() says ''): two such users cannot be told apart, so never a match.
  if info.user != user || user == ''
    return [printf('%s is owned by %s, not by you (%s); not writing there', dir, OwnerName(info.user),
      OwnerName(user)), 'foreign-owner']
  endif
  if info.perm[3 : ] != '------'
    return [printf('%s has mode %s: others could read your selection; not writing there (chmod 700 %s)',
      dir, info.perm, dir), 'open-permissions']
  endif
  return []
enddef

# May `dir` be used? Read-only.
export def Check(dir: string, user: string): list<string>
  return Problem(dir, Entry(dir), user)
enddef

# When the full check of a directory last passed, per directory and user. The owner is read with
# readdirex() of the parent, which lists the whole parent: /tmp/pi-ide's parent is /tmp, thousands of
# entries on a busy machine (17 ms measured). Between full checks (at most 60 s apart) a write checks only
# what lstat and the mode say, which is what can change without the owner changing: a directory of ours
# with mode 0700 in a sticky /tmp cannot be removed or replaced by another user, only by us (or root).
var verified: dict<number> = {}
const RECHECK_SECONDS = 60

# Check() for the per-write and per-poll path: the full check when the last one that passed is older than
# RECHECK_SECONDS (or never passed), else only what lstat and the mode say.
export def CheckCached(dir: string, user: string): list<string>
  var key = dir .. "\n" .. user
  if getftype(dir) == 'dir' && localtime() - get(verified, key, -RECHECK_SECONDS) < RECHECK_SECONDS
      && getfperm(dir)[3 : ] == '------'
    return []
  endif
  var problem = Check(dir, user)
  if empty(problem)
    verified[key] = localtime()
  elseif has_key(verified, key)
    remove(verified, key)
  endif
  return problem
enddef

# Make sure `dir` exists and is safe: create it 0700 when missing (the last component only), then check.
# An existing directory is judged, never changed.
export def EnsureDir(dir: string, user: string): list<string>
  if getftype(dir) == ''
    try
      mkdir(dir, '', 0o700)
      # The umask filters mkdir's mode; a directory just made is ours to set exactly.
      setfperm(dir, 'rwx------')
    catch
      if getftype(dir) == ''
        return [printf('cannot create %s: %s', dir, v:exception), 'uncreatable']
      endif
      # Another editor created it in between: the check below decides.
    endtry
  endif
  return CheckCached(dir, user)
enddef

# The protocol's temp path, and the private directory the text is written in first.
def TempOf(final: string): string
  return final .. '.tmp'
enddef

def PrivateOf(final: string): string
  return final .. '.tmp.d'
enddef

# Clear the way at the temp path: a leftover regular file of ours (an interrupted write) is removed;
# anything else there is refused. Then create the private directory, exclusively (mkdir fails on anything
# already at that path: nothing planted there can be written through).
def MakeTemp(tmp: string, private: string, user: string): list<string>
  var t = getftype(tmp)
  if t == 'file' && get(Entry(tmp), 'user', '') == user
    delete(tmp)
  elseif t != ''
    return [tmp .. ' exists and is not our temp file; not writing', 'temp-in-the-way']
  endif
  try
    mkdir(private, '', 0o700)
  catch
    if getftype(private) != ''
      return [private .. ' is in the way (a write that was interrupted? remove it); not writing', 'temp-in-the-way']
    endif
    return [printf('cannot create %s: %s', private, v:exception), 'io']
  endtry
  setfperm(private, 'rwx------')
  return []
enddef

# Remove what MakeTemp made (and whatever is left in it: only we can write there).
def DropTemp(private: string)
  if getftype(private) == 'dir'
    delete(private .. '/state')
    delete(private, 'd')
  endif
enddef

# The replace, run by `sh` as one job: the file leaves the private directory for the temp path, the
# directory goes, and the temp file is renamed over the state file. So when the state file appears no temp
# is left, and a reader sees either the old file or the new one, never none (Vim's rename() would unlink
# the target first). `mv -T` is one rename(2), never "into" a directory; rename never follows a symlink.
const REPLACE = 'mv -f -T -- "$1/state" "$2" && rmdir -- "$1" && mv -f -T -- "$2" "$3"'

# REPLACE in a perl that stays: each line read asks for one replace, its fields (the private directory, the temp
# path, the file; tab-separated, `\`, newline and tab escaped as `\\`, `\n`, `\t`) those of REPLACE; each line
# written answers one, in order: 0 when done, else which step failed and why.
const RENAMER = '$| = 1; while (my $l = <STDIN>) { chomp $l; my ($p, $t, $f) = map { s/\\(.)/$1 eq "n" ? "\n" : '
  .. '$1 eq "t" ? "\t" : $1/ger } split /\t/, $l, -1; my $r = !rename("$p/state", $t) ? "1 $!" : !rmdir($p) '
  .. '? "2 $!" : !rename($t, $f) ? "3 $!" : "0"; print "$r\n" }'

# The perl doing the replaces (a job, or v:none), and the callbacks of the replaces asked of it, oldest first.
var renamer: any = v:none
var renames: list<func(string)> = []

# One field of a RENAMER line.
def Field(s: string): string
  return substitute(s, "[\\\\\n\t]", (m) => m[0] == '\' ? '\\' : m[0] == "\n" ? '\n' : '\t', 'g')
enddef

def RenameAnswered(line: string)
  if !empty(renames)
    var Done = remove(renames, 0)
    Done(line)
  endif
enddef

# The perl ended (it died; one stopped by Close is no longer `renamer`): the replaces asked of it fail; the next
# write starts another.
def RenamerGone(job: job)
  if type(renamer) == v:t_job && renamer == job
    renamer = v:none
    FailRenames('9 the perl doing the replace exited')
  endif
enddef

def FailRenames(why: string)
  var pending = renames
  renames = []
  for Done in pending
    Done(why)
  endfor
enddef

# The replace through RENAMER; its job (the perl) is returned, as Write's is.
def Rename(private: string, tmp: string, final: string, Done: func(list<string>)): any
  if type(renamer) != v:t_job || job_status(renamer) != 'run'
    renamer = job_start(['perl', '-e', RENAMER], {
      in_mode: 'nl', out_mode: 'nl', err_io: 'null',
      out_cb: (_, line) => RenameAnswered(line),
      exit_cb: (j, _) => RenamerGone(j)})
    if job_status(renamer) != 'run'
      renamer = v:none
      DropTemp(private)
      Done(['cannot start perl to rename ' .. private .. '/state', 'io'])
      return v:none
    endif
  endif
  renames->add((line: string) => {
    DropTemp(private)
    if line !~# '^0$' && getftype(tmp) == 'file'
      delete(tmp)
    endif
    Done(line =~# '^0$' ? [] : [printf('cannot rename %s/state to %s (step %s)', private, final, line), 'io'])
  })
  ch_sendraw(renamer, join([private, tmp, final]->mapnew((_, f) => Field(f)), "\t") .. "\n")
  return renamer
enddef

# Stop the perl doing the replaces, if one runs (the client is stopped; a write under way fails), and wait
# until it is gone, so no replace it had begun can put a file back after the client removes it.
export def Close()
  var job = renamer
  renamer = v:none
  Halt(job)
  FailRenames('9 the perl doing the replace was stopped')
enddef

# Kill `job` (a job Write returned, or v:none) and wait, at most 500 ms, until it is gone. job_stop() signals
# the job's process group (`sh` and `mv`, or the perl); a rename under way still completes, so the caller
# removing files waits for that. The wait runs Vim's callbacks (a write's Done among them): `job` is the
# caller's copy, never a variable such a callback clears.
export def Halt(job: any)
  if type(job) != v:t_job
    return
  endif
  job_stop(job, 'kill')
  var waited = 0
  while job_status(job) == 'run' && waited < 500
    sleep 5m
    waited += 5
  endwhile
enddef

# Replace `<dir>/<pid>.json` with `text` atomically. The caller has checked the directory (EnsureDir).
# `Done` gets [] or [message, problem name] once the file is in place (or the write failed); the job is
# returned so the caller can wait for it or stop it (VimLeavePre), or v:none when nothing was started.
export def Write(dir: string, pid: number, text: string, user: string, Done: func(list<string>)): any
  return WriteNamed(dir, printf('%d.json', pid), text, user, Done)
enddef

# Replace `<dir>/<name>` with `text` by Write's rules: the editor's other files in the state dir (v0.5
# `<pid>.buffers.json`) are written so too.
export def WriteNamed(dir: string, name: string, text: string, user: string, Done: func(list<string>)): any
  var final = dir .. '/' .. name
  var tmp = TempOf(final)
  var private = PrivateOf(final)
  var problem = MakeTemp(tmp, private, user)
  if !empty(problem)
    Done(problem)
    return v:none
  endif
  var file = private .. '/state'
  var ok = false
  try
    # 'S': no fsync (7 ms a write measured); the rename, not the disk, is what makes the replace atomic.
    ok = writefile(split(text, "\n", true), file, 'bS') == 0
  catch
  endtry
  if !ok || setfperm(file, 'rw-------') == 0
    DropTemp(private)
    Done([printf('cannot write %s', file), 'io'])
    return v:none
  endif
  if executable('perl')
    return Rename(private, tmp, final, Done)
  endif
  var job = job_start(['sh', '-c', REPLACE, 'sh', private, tmp, final], {
    in_io: 'null', out_io: 'null', err_io: 'null',
    exit_cb: (_, status) => {
      DropTemp(private)
      if status != 0 && getftype(tmp) == 'file'
        delete(tmp)
      endif
      Done(status == 0 ? [] : [printf('cannot rename %s to %s (exit %d)', file, final, status), 'io'])
    }})
  if job_status(job) == 'fail'
    DropTemp(private)
    Done(['cannot start sh to rename ' .. file, 'io'])
    return v:none
  endif
  return job
enddef

# Remove our state file and any temp. Only inside a directory that passes the checks (a missing one holds
# nothing of ours). delete() unlinks a symlink itself, never its target.
export def Remove(dir: string, pid: number, user: string): list<string>
  # The unsaved buffers, the last send to pi and the answers to show and ask (v0.5) go with the state file.
  var problem = RemoveNamed(dir, printf('%d.buffers.json', pid), user)
  if empty(problem)
    problem = RemoveNamed(dir, printf('%d.send.json', pid), user)
  endif
  if empty(problem)
    problem = RemoveNamed(dir, printf('%d.answers.json', pid), user)
  endif
  return !empty(problem) ? problem : RemoveNamed(dir, printf('%d.json', pid), user)
enddef

# Remove `<dir>/<name>` and any temp of it, by Remove's rules.
export def RemoveNamed(dir: string, name: string, user: string): list<string>
  var problem = Check(dir, user)
  if !empty(problem) && problem[1] == 'missing'
    return []
  endif
  if !empty(problem)
    return ['state dir is not ours; left it alone: ' .. problem[0], problem[1]]
  endif
  var final = dir .. '/' .. name
  if getftype(TempOf(final)) == 'file'
    delete(TempOf(final))
  endif
  DropTemp(PrivateOf(final))
  if getftype(final) != '' && delete(final) != 0
    return ['cannot remove ' .. final, 'io']
  endif
  return []
enddef
