vim9script
# pi_ide/diagnostics.vim: a buffer's ALE results as protocol v0.3 reports them, dated with the buffer version
# (b:changedtick) of the content the linters read, never a later one (PROTOCOL.md, v0.3).
#
# ALE's User events name no buffer, so the lint cycle is followed through what ALE does around them:
#
# * `ALEWantResults` fires in ALE's s:Lint() with `g:ale_want_results_buffer` set, right before it starts the
#   linters of that buffer; the `ALELintPre` that follows in the same call is that buffer's. A later
#   `ALELintPre` with no `ALEWantResults` before it (ALE's cleanup of a buffer, a deferred start) is not taken
#   for any buffer.
# * At `ALELintPre` the buffer's changedtick is the content the cycle's linters read: ALE hands a job the
#   buffer's lines (stdin, or a temp file for %t) when it starts it, in this same call (or later, on newer
#   content, for a deferred start: dated with this older tick, which only makes them read as old). Jobs
#   still running from an earlier cycle (ALE keeps the lint_file ones) are in `active_linter_list` at that
#   moment; those keep the date of the cycle that started them.
# * Each linter that becomes active during the cycle (`ALEJobStarted`, and a check once the synchronous start
#   is over) is dated with the cycle's tick (language servers excepted: see IsLsp); a linter that reads the
#   file on disk (lint_file) while the buffer has unsaved changes is dated 0: its results are for other
#   content.
# * `ALELintPost` fires when the buffer's lint is done, right after ALE counted it in `b:ale_linted`: the
#   buffer whose count moved is the one. Its results are read from `g:ale_buffer_info` (ALE's public
#   record, also behind ale#engine#GetLoclist) and reported with the newest linter date; only the items of
#   the linters with that date are listed (a linter that did not run again, e.g. a lint_file one after an
#   edit, is left out until it does: its items describe older content). This is the Neovim client's rule
#   for several checkers (editors/nvim/lua/pi-ide/diagnostics.lua).
#
# Without ALE none of these events fire: nothing is recorded and every buffer's diagnostics are null.

import autoload 'pi_ide/state.vim'

# Caps from PROTOCOL.md (v0.3): the state file stays small whatever the linters report.
export const MAX_ITEMS = 100
export const MAX_MESSAGE = 500

# The buffer whose lint ALE is about to start ({buf}), between ALEWantResults and ALELintPre.
var want: dict<number> = {}
# Per buffer (string): the cycle under way {tick, carry: names active at its start, seen: names dated}.
var cycles: dict<dict<any>> = {}
# Per buffer: linter name -> the changedtick of the content its last results are for.
var dates: dict<dict<number>> = {}
# Per buffer: b:ale_linted when last seen (ALE counts finished lints in it).
var linted: dict<number> = {}
# Per buffer: the diagnostics reported, built at the ALELintPost that made them.
var reported: dict<dict<any>> = {}

const SEVERITY = {E: 'error', W: 'warning', I: 'info'}
# A style problem (sub_type "style") ranks one step lower: a style error is not a broken build.
const STYLE_SEVERITY = {E: 'warning', W: 'info', I: 'hint'}
const RANK = {error: 0, warning: 1, info: 2, hint: 3}

def AleLoaded(): bool
  return get(g:, 'loaded_ale', 0) == 1 && type(get(g:, 'ale_buffer_info', 0)) == v:t_dict
enddef

def AleInfo(buf: number): dict<any>
  return AleLoaded() ? get(g:ale_buffer_info, string(buf), {}) : {}
enddef

def Str(v: any): any
  if type(v) == v:t_string
    return v
  elseif type(v) == v:t_number && v != -1
    return string(v)
  endif
  return v:null
enddef

def Num(v: any): number
  return type(v) == v:t_number ? v : str2nr(string(v))
enddef

# Pure: one ALE loclist item as the protocol lists it. ALE's lnum/col are 1-based byte positions (col 0: no
# column), its end_col is inclusive; the protocol's end_column points just past the end.
export def ToItem(d: dict<any>): dict<any>
  var kind = get(d, 'type', 'E')
  var table = get(d, 'sub_type', '') == 'style' ? STYLE_SEVERITY : SEVERITY
  var line = Num(get(d, 'lnum', 1))
  line = line < 1 ? 1 : line
  var column = Num(get(d, 'col', 1))
  var end_col = has_key(d, 'end_col') ? Num(d.end_col) : 0
  var end_line = has_key(d, 'end_lnum') ? Num(d.end_lnum) : (end_col > 0 ? line : 0)
  var text = get(d, 'text', '')
  if type(text) != v:t_string
    text = string(text)
  endif
  return {
    severity: get(table, kind, 'error'),
    line: line,
    column: column < 1 ? 1 : column,
    end_line: end_line > 0 ? (end_line < line ? line : end_line) : v:null,
    end_column: end_col > 0 ? end_col + 1 : v:null,
    message: strlen(text) <= MAX_MESSAGE ? text : state.Cut(text, MAX_MESSAGE),
    source: type(get(d, 'linter_name', 0)) == v:t_string ? d.linter_name : v:null,
    code: has_key(d, 'code') ? Str(d.code) : Str(get(d, 'nr', -1)),
  }
enddef

# Pure: ALE loclist items -> the protocol's {version, total, items}: errors first, then by line and column,
# exact duplicates (same severity, range, message, source and code) listed and counted once, at most
# MAX_ITEMS listed, `total` counting them all.
# The order is one sort of numbers (a sort with a Vim script comparator costs several times more): severity
# (2 bits) | line (24) | column (16) | index (20), within 62 bits. Duplicates share severity, line and column,
# so they are neighbours after it: only items in a run of equal positions are compared (by their encoding).
export def Build(all: list<dict<any>>, version: number): dict<any>
  # The index has 20 bits: a million problems in one buffer are more than anyone reads.
  var list = len(all) > 0xFFFFF ? all[: 0xFFFFE] : all
  var mapped = mapnew(list, (_, d) => ToItem(d))
  var keys = mapnew(mapped, (i, d) => ((RANK[d.severity] * 0x1000000 + min([d.line, 0xFFFFFF])) * 0x10000
    + min([d.column, 0xFFFF])) * 0x100000 + i)
  sort(keys, 'N')
  var items: list<dict<any>> = []
  var total = 0
  var run_pos = -1
  var run_first: dict<any> = {}
  var run_seen: dict<bool> = {}
  for k in keys
    var d = mapped[k % 0x100000]
    var pos = k / 0x100000
    if pos != run_pos
      [run_pos, run_first, run_seen] = [pos, d, {}]
    else
      if empty(run_seen)
        run_seen[Rest(run_first)] = true
      endif
      var rest = Rest(d)
      if has_key(run_seen, rest)
        continue
      endif
      run_seen[rest] = true
    endif
    total += 1
    if len(items) < MAX_ITEMS
      items->add(d)
    endif
  endfor
  return {version: version, total: total, items: items}
enddef

# What tells apart two items at one position.
def Rest(d: dict<any>): string
  return json_encode([d.end_line, d.end_column, d.message, d.source, d.code])
enddef

# A language server run by ALE: its answers come whenever the server sends them, and ALE keeps no document
# version with them (an answer for older content cannot be told apart), so they are never dated: left out.
def IsLsp(linter: dict<any>): bool
  var lsp = get(linter, 'lsp', '')
  return type(lsp) != v:t_string || lsp != ''
enddef

# Does `linter` read the file on disk rather than the buffer's lines? ALE's `lint_file` (a function: it may).
# A linter without read_buffer still gets the buffer's lines, in a temp file (%t).
def ReadsFile(linter: dict<any>): bool
  var lint_file = get(linter, 'lint_file', 0)
  return type(lint_file) == v:t_func || (type(lint_file) == v:t_number && lint_file != 0)
    || (type(lint_file) == v:t_bool && lint_file)
enddef

# Date the linters that started in `buf`'s cycle under way.
def DateStarted(key: string)
  var cycle = get(cycles, key, {})
  if empty(cycle)
    return
  endif
  var buf = str2nr(key)
  var modified = getbufvar(buf, '&modified') ? true : false
  for linter in get(AleInfo(buf), 'active_linter_list', [])
    var name = type(linter) == v:t_dict ? get(linter, 'name', '') : ''
    if type(name) != v:t_string || name == '' || has_key(cycle.carry, name) || has_key(cycle.seen, name)
        || IsLsp(linter)
      continue
    endif
    cycle.seen[name] = true
    var date: number = modified && ReadsFile(linter) ? 0 : cycle.tick
    var of_buf: dict<number> = get(dates, key, {})
    of_buf[name] = date
    dates[key] = of_buf
  endfor
enddef

def DateAllStarted()
  for key in keys(cycles)
    DateStarted(key)
  endfor
enddef

# ALE runs its User events under :silent, which keeps a notice out of the message history too: the error is
# also kept for :PiIde.
var last_error = ''

def Internal()
  last_error = v:exception .. ' (' .. v:throwpoint .. ')'
  pi_ide#WarnOnce('diagnostics', '(pi-ide) internal error reading ALE''s results, please report it: '
    .. v:exception)
enddef

# The :PiIde line on the described buffer's diagnostics `d` (as written), the buffer being at `version`.
export def Describe(d: any, version: number): string
  if type(d) != v:t_dict
    return AleLoaded() ? 'diagnostics: ALE has not reported for this buffer'
      : 'diagnostics: none (ALE is not loaded, see :help pi-ide-diagnostics)'
  endif
  var counts: dict<number> = {}
  for item in d.items
    counts[item.severity] = get(counts, item.severity, 0) + 1
  endfor
  var parts = mapnew(filter(['error', 'warning', 'info', 'hint'], (_, k) => has_key(counts, k)),
    (_, k) => printf('%d %s', counts[k], k))
  if d.total > len(d.items)
    parts->add(printf('%d more not listed', d.total - len(d.items)))
  endif
  return printf('diagnostics (ALE): %s, %s', empty(parts) ? 'none' : join(parts, ', '),
    d.version >= version ? 'for this content' : printf('for an earlier version (%d, now %d)', d.version, version))
enddef

# Lines for :PiIde.
export def SummaryLines(): list<string>
  return last_error == '' ? [] : ['diagnostics: internal error, please report it: ' .. last_error]
enddef

# User ALEWantResults: ALE is about to lint g:ale_want_results_buffer.
export def OnWantResults()
  try
    var buf = get(g:, 'ale_want_results_buffer', 0)
    if type(buf) != v:t_number || !bufexists(buf)
      return
    endif
    want = {buf: buf}
    # The ALELintPre of this buffer comes in the same call, or not at all: forget it once that call is over.
    timer_start(0, (_) => {
      want = {}
    })
  catch
    Internal()
  endtry
enddef

# User ALELintPre: the cycle of the buffer ALE said it wants results for starts now.
export def OnLintPre()
  try
    if empty(want) || !bufexists(want.buf)
      return
    endif
    var buf = want.buf
    want = {}
    var key = string(buf)
    var carry: dict<bool> = {}
    for linter in get(AleInfo(buf), 'active_linter_list', [])
      if type(linter) == v:t_dict && type(get(linter, 'name', 0)) == v:t_string
        carry[linter.name] = true
      endif
    endfor
    cycles[key] = {tick: getbufvar(buf, 'changedtick'), carry: carry, seen: {}}
    if !has_key(linted, key)
      linted[key] = getbufvar(buf, 'ale_linted', 0)
    endif
    # Linters whose start is synchronous are active once ALE's call returns (ALEJobStarted catches most).
    timer_start(0, (_) => {
      try
        DateStarted(key)
      catch
        Internal()
      endtry
    })
  catch
    Internal()
  endtry
enddef

# User ALEJobStarted: a linter became active in some buffer's cycle.
export def OnStarted()
  try
    DateAllStarted()
  catch
    Internal()
  endtry
enddef

# User ALELintPost: the buffer whose b:ale_linted moved is done; build what it reports.
export def OnLintPost()
  try
    for key in keys(linted)
      var buf = str2nr(key)
      var count = getbufvar(buf, 'ale_linted', 0)
      if count == linted[key]
        continue
      endif
      linted[key] = count
      DateStarted(key)
      if has_key(cycles, key)
        remove(cycles, key)
      endif
      Publish(buf)
      pi_ide#DiagnosticsChanged(buf)
    endfor
  catch
    Internal()
  endtry
enddef

def Publish(buf: number)
  var key = string(buf)
  var d = get(dates, key, {})
  if empty(d) || !getbufvar(buf, 'ale_enabled', get(g:, 'ale_enabled', 0))
    if has_key(reported, key)
      remove(reported, key)
    endif
    return
  endif
  var version = max(values(d))
  var current = filter(copy(d), (_, t) => t == version)
  var items = filter(copy(get(AleInfo(buf), 'loclist', [])), (_, i) => type(i) == v:t_dict
    && get(i, 'bufnr', buf) == buf && has_key(current, get(i, 'linter_name', '')))
  reported[key] = Build(items, version)
enddef

# ALE's problems in `buf` as it shows them now (its loclist items of that buffer), for `:PiIdeSend @diagnostic`.
export def Current(buf: number): list<dict<any>>
  return filter(copy(get(AleInfo(buf), 'loclist', [])), (_, i) => type(i) == v:t_dict && get(i, 'bufnr', buf) == buf)
enddef

# The buffer's diagnostics for the state file, or v:null when ALE has not reported for it (unknown, never
# "clean"), or no longer knows it (its cleanup, :ALEDisable).
export def Collect(buf: number): any
  var key = string(buf)
  if !has_key(reported, key) || empty(AleInfo(buf))
    return v:null
  endif
  return reported[key]
enddef

# Will ALE report diagnostics for this buffer? It has reported for it, or it is enabled there and has
# linters for its filetype (language servers do not count: see IsLsp); or the user says so
# (b:pi_ide_diagnostics_expected, as for Neovim).
export def Expected(buf: number): bool
  var flag = getbufvar(buf, 'pi_ide_diagnostics_expected', 0)
  if (type(flag) == v:t_bool && flag) || (type(flag) == v:t_number && flag == 1)
    return true
  endif
  if !AleLoaded() || !getbufvar(buf, 'ale_enabled', get(g:, 'ale_enabled', 0))
    return false
  endif
  if type(Collect(buf)) == v:t_dict
    return true
  endif
  var ft = getbufvar(buf, '&filetype')
  if ft == ''
    return false
  endif
  try
    return !empty(filter(ale#linter#RemoveIgnored(buf, ft, ale#linter#Get(ft)),
      (_, l) => type(l) == v:t_dict && !IsLsp(l)))
  catch
    return false
  endtry
enddef

# A write moves changedtick (by one, when the buffer had unsaved changes) but not the content: results current
# before it stay current after it, unless the content changed during the write (a fixer on save), which moves
# changedtick further. Per buffer: {tick, modified} at BufWritePre.
var writing: dict<dict<any>> = {}

export def OnWritePre(buf: number)
  try
    writing[string(buf)] = {tick: getbufvar(buf, 'changedtick'), modified: getbufvar(buf, '&modified') ? 1 : 0}
  catch
    Internal()
  endtry
enddef

export def OnWritePost(buf: number)
  try
    var key = string(buf)
    var before = get(writing, key, {})
    if empty(before)
      return
    endif
    remove(writing, key)
    var now = getbufvar(buf, 'changedtick')
    if now != before.tick + before.modified || now == before.tick || !has_key(dates, key)
      return
    endif
    map(dates[key], (_, t) => t == before.tick ? now : t)
    if has_key(reported, key) && reported[key].version == before.tick
      Publish(buf)
    endif
  catch
    Internal()
  endtry
enddef

export def Forget(buf: number)
  var key = string(buf)
  for d in [cycles, dates, linted, reported, writing]
    if has_key(d, key)
      remove(d, key)
    endif
  endfor
enddef

# For tests.
export def Debug(): dict<any>
  return {cycles: cycles, dates: dates, linted: linted, reported: reported, error: last_error}
enddef
