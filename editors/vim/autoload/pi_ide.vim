vim9script
# pi_ide.vim: writes this Vim's state (file, cursor, selection, cwd) to `<state dir>/<vim pid>.json` for
# the pi coding agent (PROTOCOL.md), and answers pi's messages (protocol v0.3, pi_ide/inbox.vim).
# See `:help pi-ide`.
#
# Shape: one augroup, one timer. Events only arm the timer; the snapshot, the encoding and the write happen
# when it fires, so a burst of cursor moves costs one write. Writes are serialised (the atomic replace runs
# in a job, see pi_ide/writer.vim): a write asked for while one is under way is done once it finishes.
# Every handler catches: an error here must never reach the user while typing; it is reported once.

import autoload 'pi_ide/writer.vim'
import autoload 'pi_ide/state.vim'
import autoload 'pi_ide/inbox.vim'
import autoload 'pi_ide/diagnostics.vim'
import autoload 'pi_ide/approval.vim'
import autoload 'pi_ide/review.vim'
import autoload 'pi_ide/buffers.vim'

var enabled = false
var ui = false
var timer = 0
# '' = no write pending, 'soon' = debounced write armed, 'now' = prompt write armed.
var pending = ''
# A write is under way (its mv job, when one runs); `again` asks for one more when it ends.
var writing = false
var write_job: any = v:none
var again = false
var last_content = ''
# v0.5 unsaved buffers: the serial of our `<pid>.buffers.json` (grows for the life of this Vim), what it holds
# (buffers.Key) and whether it exists.
var buffers_serial = 0
var buffers_key = ''
var buffers_written = false
var warned: dict<bool> = {}
var argv: list<string> = []
# Per buffer: the last selection the user made ({at, kind, s, e, tick}: when visual mode was left, the
# marks it left and the changedtick then).
var records: dict<dict<any>> = {}
# Visual mode is on (ModeChanged): cursor moves then also move the selection tracker.
var visual_active = false
# Deleted or replaced selections. Vim keeps '< '> after `d` or `c` on a selection (moved onto whatever text
# follows), so the marks cannot tell a yank from a delete. A text property over the visual area can: Vim
# shrinks it with every deletion inside it and removes it once its text is gone (`d`, `c`, `p` over it,
# `:1,20d` later), and moves it with edits above. It has no highlight: nothing shows. Per buffer: the lines
# it was placed on and whether it covers any text.
const PROP = 'pi_ide_selection'
const PROP_ID = 1
var tracked: dict<dict<any>> = {}
# The last file buffer the user was in, and the window: described while a terminal is focused.
var last_file = {buf: 0, win: 0}
# The selection built last time from a buffer's marks, with what it was built from.
var memo: dict<any> = {}
var stats: dict<any> = {dir: '', path: '', writes: 0, skipped: 0, failures: 0, last_write: 0,
  last_error: '', last_payload: {}, written: false}

def DebounceMs(): number
  return get(g:, 'pi_ide_debounce_ms', 200)
enddef

def MaxSelection(): number
  return get(g:, 'pi_ide_max_selection_bytes', state.MAX_SELECTION_BYTES)
enddef

# Say `msg` once per `key` (until re-armed), in one line: never a hit-enter prompt.
export def WarnOnce(key: string, msg: string)
  if get(warned, key, false)
    return
  endif
  warned[key] = true
  Notice(msg)
enddef

# One line of the message area, cut to what it holds (v:echospace), kept in :messages; a warning unless `hl`
# says otherwise.
export def Notice(msg: string, hl: string = 'WarningMsg')
  var room = max([v:echospace - 1, 10])
  var text = msg
  if strdisplaywidth(text) > room
    while strdisplaywidth(text .. '…') > room && text != ''
      text = strcharpart(text, 0, strchars(text) - 1)
    endwhile
    text ..= '…'
  endif
  execute 'echohl ' .. hl
  echomsg text
  echohl None
enddef

def Internal(where: string)
  WarnOnce('internal', printf('(pi-ide) internal error in %s, please report it: %s', where, v:exception))
enddef

# A Vim a user can see: a terminal or a GUI. `vim -es` (a script) has no terminal and runs in Ex mode.
def HasUi(): bool
  return has('gui_running') || (&term != '' && mode(1) !~# '^c[ev]')
enddef

# [line, 1-based byte col] of a mark in `buf`, or [] when it is not set.
def Mark(buf: number, name: string): list<number>
  for m in getmarklist(buf)
    if m.mark == "'" .. name
      return m.pos[1] > 0 ? [m.pos[1], m.pos[2]] : []
    endif
  endfor
  return []
enddef

def LineReader(buf: number): func(number, number): list<string>
  return (first: number, last: number): list<string> => getbufline(buf, first, last)
enddef

# Follow the live visual area of `buf` with the text property (on entering visual mode and every cursor move
# in it: the last one before an operator is what the operator acts on). `anywhere`: the old property may
# have moved since it was placed (edits since the last selection), so it is removed from the whole buffer.
def Track(buf: number, mode: string, anywhere: bool)
  var kind = state.VisualKind(mode)
  if kind == ''
    return
  endif
  if empty(prop_type_get(PROP))
    prop_type_add(PROP, {})
  endif
  var v = getpos('v')
  var c = getpos('.')
  var a = [v[1], v[2]]
  var b = [c[1], c[2]]
  if b[0] < a[0] || (b[0] == a[0] && b[1] < a[1])
    [a, b] = [b, a]
  endif
  var old = get(tracked, string(buf), {})
  if !empty(old)
    if anywhere
      prop_remove({type: PROP, id: PROP_ID, bufnr: buf, all: true})
    else
      prop_remove({type: PROP, id: PROP_ID, bufnr: buf, all: true}, old.first, min([old.last, line('$')]))
    endif
  endif
  var area = state.Area(kind, a, b, getline(a[0]), getline(b[0]))
  if area.covers
    prop_add(a[0], area.start, {type: PROP, id: PROP_ID, bufnr: buf, end_lnum: b[0], end_col: area.end})
  endif
  tracked[string(buf)] = {first: a[0], last: b[0], covers: area.covers}
enddef

# Has the text of `buf`'s last visual area been deleted or replaced since it was selected?
def Gone(buf: number): bool
  var t = get(tracked, string(buf), {})
  if empty(t) || !t.covers
    return false
  endif
  return empty(prop_find({type: PROP, id: PROP_ID, bufnr: buf, lnum: 1, col: 1}, 'f'))
enddef

# The selection to report for `buf` and its selected_at (0: unknown): the live visual area while selecting;
# else the '< '> marks. If they are the marks the user left behind (or the same ones moved by edits), dated
# when visual mode was left, unless the selected text has since been deleted or replaced (then none);
# marks made otherwise (`m<`) are dated unknown. Registers are never used.
def ReadSelection(buf: number, mode: string): list<any>
  var kind = state.VisualKind(mode)
  if kind != ''
    var v = getpos('v')
    var c = getpos('.')
    return [state.Extract(kind, [v[1], v[2]], [c[1], c[2]], LineReader(buf), MaxSelection()), localtime()]
  endif
  var s = Mark(buf, '<')
  var e = Mark(buf, '>')
  if empty(s) || empty(e)
    return [{}, 0]
  endif
  var count = getbufinfo(buf)[0].linecount
  s[0] = min([s[0], count])
  e[0] = min([e[0], count])
  var tick = getbufvar(buf, 'changedtick')
  var rec = get(records, string(buf), {})
  var at = 0
  var use_kind = 'v'
  if !empty(rec) && ((rec.s == s && rec.e == e) || rec.tick != tick)
    if Gone(buf)
      return [{}, 0]
    endif
    [at, use_kind] = [rec.at, rec.kind]
  endif
  return [FromMarks(buf, tick, use_kind, s, e), at]
enddef

def FromMarks(buf: number, tick: number, kind: string, s: list<number>, e: list<number>): dict<any>
  var key = [buf, tick, kind, s, e, MaxSelection()]
  if get(memo, 'key', []) == key
    return memo.sel
  endif
  var sel = state.Extract(kind, s, e, LineReader(buf), MaxSelection())
  memo = {key: key, sel: sel}
  return sel
enddef

def IsTextBuffer(buf: number): bool
  return bufexists(buf) && getbufvar(buf, '&buftype') == ''
enddef

def Note(buf: number, win: number)
  if IsTextBuffer(buf) && state.IsFileBuffer('', bufname(buf))
    last_file = {buf: buf, win: win}
  endif
enddef

# The buffer to describe, its cursor and whether it is a fallback: while the user is in a terminal (pi's
# own) or another non-file buffer, the file they were last in, with its cursor and selection.
def Target(): list<any>
  var buf = bufnr()
  var win = win_getid()
  if IsTextBuffer(buf) || !(last_file.buf > 0 && IsTextBuffer(last_file.buf) && bufloaded(last_file.buf))
    Note(buf, win)
    return [buf, [line('.'), col('.')], false]
  endif
  var b = last_file.buf
  var w = last_file.win
  if winbufnr(w) != b
    w = bufwinid(b)
  endif
  if w > 0
    var p = getcurpos(w)
    return [b, [p[1], p[2]], true]
  endif
  return [b, [max([getbufinfo(b)[0].lnum, 1]), 1], true]
enddef

def Snapshot(): dict<any>
  var [buf, cursor, fallback] = Target()
  if empty(argv)
    argv = state.FilterArgv(v:argv)
  endif
  var name = bufname(buf)
  var buftype = getbufvar(buf, '&buftype')
  var [sel, at] = ReadSelection(buf, fallback ? 'n' : mode())
  return {
    pid: getpid(),
    pid_ns: writer.OwnNs(),
    cwd: getcwd(),
    argv: argv,
    bufname: name != '' && buftype == '' ? fnamemodify(name, ':p') : name,
    buftype: buftype,
    filetype: getbufvar(buf, '&filetype'),
    modified: getbufvar(buf, '&modified'),
    lines_total: getbufinfo(buf)[0].linecount,
    cursor: cursor,
    selection: sel,
    selected_at: at,
    buf: buf,
  }
enddef

# Write the state file now unless its content would not change.
def WriteNow()
  if !enabled || !ui || type(v:exiting) != v:t_none
    return
  endif
  if writing
    again = true
    return
  endif
  var snap = Snapshot()
  var payload = state.Build(snap)
  inbox.Annotate(payload, snap.buf)
  var now = localtime()
  # v0.5: the unsaved buffers' texts, written (when they changed) before the state file that names them; only
  # while a pi is connected (issue 26: nothing added to a keystroke without one; the inbox asks for a write as
  # soon as that changes). Without one, a copy written before goes once the state no longer names it.
  var mods = empty(inbox.Connected()) ? [] : buffers.Modified(snap.buf)
  var key = buffers.Key(mods)
  # Written again when it changed, or when it is gone (with the state dir, when someone removed that).
  if !empty(mods) && (key !=# buffers_key || !buffers_written
      || getftype(stats.dir .. '/' .. buffers.FileName(getpid())) != 'file')
    var problem = writer.EnsureDir(stats.dir, writer.Me())
    if !empty(problem)
      Failed(problem)
      return
    endif
    var serial = buffers_serial + 1
    var sidecar = buffers.Encode(getpid(), serial, mods, now)
    writing = true
    var job = writer.WriteNamed(stats.dir, buffers.FileName(getpid()), sidecar, writer.Me(),
      (res) => BuffersWritten(res, payload, now, serial, key))
    write_job = writing ? job : v:none
    return
  endif
  if !empty(mods)
    payload.buffers_serial = buffers_serial
  endif
  WriteState(payload, now)
enddef

def BuffersWritten(res: list<string>, payload: dict<any>, now: number, serial: number, key: string)
  writing = false
  write_job = v:none
  try
    if empty(res)
      buffers_serial = serial
      buffers_key = key
      buffers_written = true
      payload.buffers_serial = serial
      if has_key(warned, 'buffers')
        remove(warned, 'buffers')
      endif
    else
      # The state goes without buffers_serial: pi reads the disk, as before.
      WarnOnce('buffers', '(pi-ide) not handing the unsaved buffers to pi: ' .. res[0])
    endif
    WriteState(payload, now)
  catch
    Internal('write')
  endtry
enddef

def WriteState(payload: dict<any>, now: number)
  var [content, text, err] = state.Encode(payload, now)
  if content != '' && content ==# last_content
    stats.skipped += 1
    if again
      again = false
      WriteNow()
    endif
    return
  endif
  var problem = content == '' ? [err, 'too-big'] : writer.EnsureDir(stats.dir, writer.Me())
  if !empty(problem)
    Failed(problem)
    return
  endif
  writing = true
  # From now on the file may exist (the job can finish before Vim notices it): the exit must remove it.
  stats.written = true
  var job = writer.Write(stats.dir, getpid(), text, writer.Me(), (res) => Written(res, content, payload, now))
  # Done may have run already (a failure before the job started): then nothing is under way.
  write_job = writing ? job : v:none
enddef

def Failed(problem: list<string>)
  stats.failures += 1
  stats.last_error = problem[0]
  var key = index(['symlink', 'not-directory', 'foreign-owner', 'open-permissions'], problem[1]) >= 0
    ? 'insecure' : 'write'
  WarnOnce(key, '(pi-ide) not writing the state file: ' .. problem[0])
enddef

def Written(res: list<string>, content: string, payload: dict<any>, now: number)
  writing = false
  write_job = v:none
  try
    if !empty(res)
      Failed(res)
    else
      if has_key(warned, 'write')
        remove(warned, 'write')
      endif
      if has_key(warned, 'insecure')
        remove(warned, 'insecure')
      endif
      last_content = content
      # No buffer is modified any more: the copy the state no longer names goes.
      if buffers_written && !has_key(payload, 'buffers_serial')
        if empty(writer.RemoveNamed(stats.dir, buffers.FileName(getpid()), writer.Me()))
          buffers_written = false
          buffers_key = ''
        endif
      endif
      stats.writes += 1
      stats.last_write = now
      stats.last_error = ''
      stats.last_payload = payload
      stats.written = true
    endif
    if again
      again = false
      WriteNow()
    endif
  catch
    Internal('write')
  endtry
enddef

def OnTimer(_: number)
  pending = ''
  timer = 0
  try
    WriteNow()
  catch
    Internal('write')
  endtry
enddef

# Ask for a write: urgent ones on the next turn of the main loop, the rest after the debounce. The timer
# is armed by the first event and not re-armed by later ones, so continuous movement writes every
# debounce period (at most 5 a second at 200 ms) instead of never.
export def Schedule(urgent: bool)
  if !enabled
    return
  endif
  if urgent
    if pending != 'now'
      if timer != 0
        timer_stop(timer)
      endif
      pending = 'now'
      timer = timer_start(0, OnTimer)
    endif
  elseif pending == ''
    pending = 'soon'
    timer = timer_start(DebounceMs(), OnTimer)
  endif
enddef

# ALE has new results for `buf` (pi_ide/diagnostics.vim): the state and the reports on pi's edits carry them
# at once (pi waits for them after its edits). A write that would change nothing is skipped.
export def DiagnosticsChanged(_buf: number)
  try
    Schedule(true)
  catch
    Internal('diagnostics')
  endtry
enddef

# CursorMoved and friends: the per-keystroke path, kept to a comparison and at most one timer_start.
export def Moved()
  try
    if visual_active
      Track(bufnr(), mode(), false)
    endif
    if pending == '' && enabled
      Schedule(false)
    endif
  catch
    Internal('CursorMoved')
  endtry
enddef

def Now()
  try
    Schedule(true)
  catch
    Internal('autocmd')
  endtry
enddef

# Visual mode entered or left. Leaving is the moment `selected_at` records; Vim has set '< and '>.
def ModeChanged()
  try
    var was = state.VisualKind(get(v:event, 'old_mode', ''))
    var is = state.VisualKind(get(v:event, 'new_mode', ''))
    if was == '' && is == ''
      return
    endif
    var buf = bufnr()
    visual_active = is != ''
    if is != ''
      Track(buf, get(v:event, 'new_mode', ''), was == '')
    else
      records[string(buf)] = {at: localtime(), kind: was, s: Mark(buf, '<'), e: Mark(buf, '>'),
        tick: b:changedtick}
    endif
    Schedule(true)
  catch
    Internal('ModeChanged')
  endtry
enddef

def Left()
  try
    Note(bufnr(), win_getid())
  catch
    Internal('BufLeave')
  endtry
enddef

def Wiped(buf: number)
  for d in [records, tracked]
    if has_key(d, string(buf))
      remove(d, string(buf))
    endif
  endfor
  if last_file.buf == buf
    last_file = {buf: 0, win: 0}
  endif
  if get(memo, 'key', [0])[0] == buf
    memo = {}
  endif
  inbox.Forget(buf)
enddef

def CreateAutocmds()
  augroup PiIde
    autocmd!
    autocmd CursorMoved,CursorMovedI,TextChanged,TextChangedI,TextChangedP * Moved()
    autocmd BufEnter,WinEnter,BufFilePost,FileType,TerminalOpen,BufWritePost,DirChanged,InsertLeave * Now()
    autocmd ModeChanged * ModeChanged()
    autocmd BufLeave,WinLeave * Left()
    autocmd BufWipeout * Wiped(str2nr(expand('<abuf>')))
    autocmd BufReadPost * review.TextRead(str2nr(expand('<abuf>')))
    autocmd BufReadPost,BufWritePost * inbox.BufferRead(str2nr(expand('<abuf>')))
    autocmd BufWritePost * review.Written(str2nr(expand('<abuf>')), expand('<afile>:p'))
    autocmd BufUnload * review.TextUnloaded(str2nr(expand('<abuf>')))
    autocmd BufWritePre * diagnostics.OnWritePre(str2nr(expand('<abuf>')))
    autocmd BufWritePost * diagnostics.OnWritePost(str2nr(expand('<abuf>')))
    autocmd VimLeavePre * Stop(true)
  augroup END
enddef

# Start writing the state file (idempotent).
export def Enable()
  try
    if enabled
      return
    endif
    stats.dir = writer.StateDir(getenv('XDG_RUNTIME_DIR') ?? '')
    stats.path = printf('%s/%d.json', stats.dir, getpid())
    # Processes started in this Vim's :terminal find it by this pid (pi connects to the editor it runs in).
    setenv('PI_IDE_EDITOR_PID', string(getpid()))
    ui = HasUi()
    enabled = true
    last_content = ''
    warned = {}
    CreateAutocmds()
    if ui
      inbox.Start(stats.dir, () => Schedule(true))
    endif
    Schedule(true)
  catch
    Internal('enable')
  endtry
enddef

# Stop: remove the autocmds, the timers and our state file. A write under way is stopped and waited for
# first, so it cannot put the file back. The file is removed even when a step before fails.
export def Stop(exiting: bool = false)
  try
    enabled = false
    pending = ''
    if timer != 0
      timer_stop(timer)
      timer = 0
    endif
    inbox.Stop()
    augroup PiIde
      autocmd!
    augroup END
    writer.Halt(write_job)
    writer.Close()
    writing = false
    write_job = v:none
    again = false
  catch
    if !exiting
      Internal('disable')
    endif
  endtry
  try
    if getenv('PI_IDE_EDITOR_PID') == string(getpid())
      setenv('PI_IDE_EDITOR_PID', v:null)
    endif
    RemoveFile()
  catch
    if !exiting
      Internal('disable')
    endif
  endtry
enddef

def RemoveFile()
  if stats.written && stats.dir != ''
    var problem = writer.Remove(stats.dir, getpid(), writer.Me())
    stats.written = !empty(problem)
    if empty(problem)
      buffers_written = false
      buffers_key = ''
    endif
    if !empty(problem)
      stats.last_error = problem[0]
    endif
  endif
  last_content = ''
enddef

# Called by plugin/pi-ide.vim once Vim has started.
export def Autostart()
  if !get(g:, 'pi_ide_disable', false) && type(v:exiting) == v:t_none
    Enable()
  endif
enddef

# A copy of the client's status, for :PiIde and tests.
export def Status(): dict<any>
  var s = copy(stats)
  s.enabled = enabled
  s.ui = ui
  s.writing = writing
  s.pending = pending != ''
  s.now = localtime()
  return s
enddef

def Age(now: number, t: number): string
  var d = max([0, now - t])
  if d < 60
    return printf('%ds ago', d)
  elseif d < 3600
    return printf('%dm%02ds ago', d / 60, d % 60)
  endif
  return printf('%dh%02dm ago', d / 3600, d % 3600 / 60)
enddef

# Lines for :PiIde.
export def Summary(): list<string>
  var s = Status()
  var lines = [printf('pi-ide: %s', s.enabled ? 'enabled' : 'disabled')]
  if s.path != ''
    lines->add(printf('state file: %s (%s)', s.path, getftype(s.path) == '' ? 'absent' : 'present'))
  endif
  if s.last_error != ''
    lines->add('problem: ' .. s.last_error)
  endif
  if s.enabled && !s.ui
    lines->add('no UI (a script, vim -es): no state file')
  endif
  if s.last_write > 0
    lines->add(printf('last write: %s (%s), %d writes, %d unchanged skipped',
      strftime('%H:%M:%S', s.last_write), Age(s.now, s.last_write), s.writes, s.skipped))
    var b = s.last_payload.active_buffer
    lines->add(printf('buffer: %s [%s] line %d col %d of %d%s',
      type(b.file) == v:t_string ? b.file : b.name .. ' (not a file)',
      type(b.language) == v:t_string ? b.language : 'no filetype',
      b.cursor.line, b.cursor.column, b.lines_total, b.modified ? ', modified' : ''))
    var sel = b.selection
    if type(sel) == v:t_dict
      lines->add(printf('selection: %d:%d-%d:%d, %d bytes%s, %s', sel.start.line, sel.start.column,
        sel.end.line, sel.end.column, strlen(sel.text), get(sel, 'truncated', false) ? ' (cut)' : '',
        type(sel.selected_at) == v:t_number ? 'made ' .. Age(s.now, sel.selected_at) : 'made before this session'))
    else
      lines->add('selection: none')
    endif
    lines->add(diagnostics.Describe(get(b, 'diagnostics', v:null), get(b, 'version', 0)))
    lines->add('cwd: ' .. s.last_payload.cwd)
  else
    lines->add('last write: none yet')
  endif
  return lines + inbox.SummaryLines() + pi_ide#send#SummaryLines()
enddef

# :PiIde approve | reject | proposal (pi_ide/approval.vim), revert | hunks | review (pi_ide/review.vim), diff
# (pi_ide/inbox.vim): one line said,
# never an error.
def Answer(sub: string)
  var said: string
  try
    if sub =~# '^revert\( file\| run\)\=$'
      said = review.Revert(sub[7 :])
    elseif sub == 'hunks'
      said = review.ToQuickfix(inbox.ConflictItems())
    elseif sub == 'review'
      said = review.ShowBaseline()
    elseif sub == 'diff'
      said = inbox.ShowDisk()
    else
      said = sub == 'proposal' ? approval.Show() : approval.Decide(sub == 'approve' ? 'accept' : 'reject')
    endif
  catch
    said = '(pi-ide) ' .. v:exception
  endtry
  if said != ''
    Notice(said, 'None')
  endif
enddef

# :PiIde [status|enable|disable|approve|reject|proposal|revert [file|run]|hunks|review|diff]
export def Command(arg: string)
  var sub = arg == '' ? 'status' : arg
  if index(['approve', 'reject', 'proposal', 'revert', 'revert file', 'revert run', 'hunks', 'review', 'diff'], sub) >= 0
    Answer(sub)
    return
  elseif sub == 'enable'
    Enable()
  elseif sub == 'disable'
    Stop()
  elseif sub != 'status'
    echohl ErrorMsg
    echomsg printf('(pi-ide) unknown subcommand `%s` (use status, enable, disable, approve, reject, proposal, revert [file|run], hunks, review or diff)', sub)
    echohl None
    return
  endif
  var lines: list<string>
  try
    lines = Summary()
  catch
    lines = ['(pi-ide) ' .. v:exception]
  endtry
  echo join(lines, "\n")
enddef

export def Complete(..._): string
  return "status\nenable\ndisable\napprove\nreject\nproposal\nrevert\nhunks\nreview\ndiff"
enddef

# For statuslines: "" when no pi is connected to this Vim, "pi" when one is, "pi +N" when pi's last turn
# changed N files, followed by "approve?" while pi waits for the user's approval. See `:help pi-ide-statusline`.
export def Statusline(): string
  try
    return inbox.Statusline()
  catch
    return ''
  endtry
enddef

# For tests and the benchmark: a write now, even when the content is unchanged.
export def WriteForTest()
  last_content = ''
  WriteNow()
enddef
