vim9script
# pi_ide/review_rules.vim: protocol v0.4, the pure rules of pi's change set (`pi-<pid>.review.json`): data in, data
# out, no buffer, sign or window touched. Which change sets and hunks count (Validate), which run is each file's
# newest (Newest), where pi's hunks are marked in a buffer's lines (Placement), the reverts kept for pi and their key
# (AddReverted), the quickfix items, a baseline's lines, and whether an undo step is in the text (StepApplied).
# pi_ide/review.vim is the UI over them (signs, reverts in buffers, quickfix, commands, notices). The Neovim
# client's rules (editors/nvim/lua/pi-ide/review.lua).

import autoload 'pi_ide/approval_rules.vim'
import autoload 'pi_ide/writer.vim'

# PROTOCOL.md "v0.4": the largest change set read, the reverts kept for pi.
export const MAX_BYTES = 8 * 1024 * 1024
export const MAX_REVERTED = 50
# PROTOCOL.md "Limits": the runs of a change set (refused whole when more; the hunks per file:
# approval_rules.MAX_HUNKS).
export const MAX_RUNS = 3
# PROTOCOL.md `files[].note` (approval_rules.NOTES): an entry with any other note is malformed, dropped.
def NoteOk(f: dict<any>): bool
  var note = get(f, 'note', v:null)
  return type(note) == v:t_none || type(note) == v:t_string && index(approval_rules.NOTES, note) >= 0
enddef
def IsCount(v: any): bool
  return type(v) == v:t_number && v >= 0
enddef

# Pure: [runs, ''] from a decoded change set of pi `pi` (its identity, writer.PiKeyOfName, or a bare pid), or
# [[], why it is refused]. Malformed runs, files and hunks are dropped (the rest still shows); the hunks' shape
# is the approval request's (one rule).
export def Validate(msg: any, pi: any): list<any>
  var key = writer.Key(pi)
  if type(msg) != v:t_dict || type(get(msg, 'kind', 0)) != v:t_string || msg.kind !=# 'pi-review'
    return [[], 'not a pi change set']
  endif
  if type(get(msg, 'pid', '')) != v:t_number || msg.pid != writer.PidOfKey(key)
    return [[], 'its pid is not the one in its name']
  endif
  var ns_bad = writer.NsDisagrees(msg, key)
  if ns_bad != ''
    return [[], ns_bad]
  endif
  if type(get(msg, 'runs', 0)) != v:t_list
    return [[], 'runs: not a list']
  endif
  # The caps by the counts alone, before any work per hunk.
  if len(msg.runs) > MAX_RUNS
    return [[], printf('runs: %d, over the cap of %d: refused', len(msg.runs), MAX_RUNS)]
  endif
  for run in msg.runs
    for f in type(run) == v:t_dict && type(get(run, 'files', 0)) == v:t_list ? run.files : []
      var over = type(f) == v:t_dict && type(get(f, 'hunks', 0)) == v:t_list
        ? approval_rules.OverCap('hunks of a file', f.hunks) : ''
      if over != ''
        return [[], over]
      endif
    endfor
  endfor
  var runs: list<dict<any>> = []
  for run in msg.runs
    if type(run) != v:t_dict || !IsCount(get(run, 'run', -1)) || type(get(run, 'files', 0)) != v:t_list
      continue
    endif
    var files: list<dict<any>> = []
    for f in run.files
      if type(f) != v:t_dict || type(get(f, 'file', 0)) != v:t_string || f.file !~ '^/'
          || type(get(f, 'hunks', 0)) != v:t_list || !NoteOk(f)
        continue
      endif
      var hunks: list<dict<any>> = []
      for h in f.hunks
        if approval_rules.ValidHunk(h)
          hunks->add(h)
        endif
      endfor
      var baseline = get(f, 'baseline', v:null)
      files->add({file: f.file, baseline: type(baseline) == v:t_string ? baseline : v:null, hunks: hunks})
    endfor
    runs->add({run: run.run, files: files})
  endfor
  return [runs, '']
enddef

# Pure: per file of `sets` (pi identity -> runs), the entry of the newest run that changed it: {pid, run, entry};
# `pid` is the identity (writer.PiKeyOfName), a string.
export def Newest(all: dict<list<dict<any>>>): dict<dict<any>>
  var out: dict<dict<any>> = {}
  for [pid, runs] in items(all)
    for run in runs
      for f in run.files
        if !has_key(out, f.file) || run.run > out[f.file].run
          out[f.file] = {pid: pid, run: run.run, entry: f}
        endif
      endfor
    endfor
  endfor
  return out
enddef

# Pure: is line `at` (1-based) of `lines` the same as line `base_at` of `base`, or are both past an end?
export def SameLine(lines: list<string>, at: number, base: list<string>, base_at: number): bool
  var here = at >= 1 && at <= len(lines)
  var there = base_at >= 1 && base_at <= len(base)
  return here && there ? lines[at - 1] ==# base[base_at - 1] : !here && !there
enddef

# Pure: where pi's `hunks` (from `base`, the baseline's lines) are marked in a buffer holding `lines`: only hunks
# whose new lines still stand where pi left them (never a mark on lines that are not pi's). A deletion left no
# lines of pi's to check: it is marked only where the lines around it are still the baseline's, on the line that
# now follows it, or on the last line for one at the end (`at_end`). Per hunk: {hunk, first, last, kind, at_end}.
export def Placement(hunks: list<dict<any>>, lines: list<string>, base: list<string>): list<dict<any>>
  var out: list<dict<any>> = []
  var count = len(lines)
  for h in hunks
    var n = len(h.new_text)
    if n > 0
      var first = h.new_start
      if first >= 1 && first + n - 1 <= count && lines[first - 1 : first + n - 2] ==# h.new_text
        out->add({hunk: h, first: first, last: first + n - 1, kind: empty(h.old_text) ? 'add' : 'change',
          at_end: false})
      endif
    elseif count > 0 && SameLine(lines, h.new_start - 1, base, h.old_start - 1)
        && SameLine(lines, h.new_start, base, h.old_start + len(h.old_text))
      var at = max([1, min([h.new_start, count])])
      out->add({hunk: h, first: at, last: at, kind: 'delete', at_end: h.new_start > count})
    endif
  endfor
  return out
enddef

# Pure: do reverts `a` and `b` ({pi_pid, pi_ns, run, id}; pi_ns left out: the initial namespace) revert the same hunk of pi's? The key of every client and of pi
# (test/fixtures/revert-key.ts); ids compared case-sensitively, byte for byte (==#).
def SameHunk(a: dict<any>, b: dict<any>): bool
  return writer.KeyOfRecord(a) ==# writer.KeyOfRecord(b) && get(a, 'run', -1) == get(b, 'run', -1)
    && get(a, 'id', '') ==# get(b, 'id', '')
enddef

# Pure: `list` with `entry` added, newest last, at most MAX_REVERTED; an earlier revert of the same hunk (reverted
# again after an undo) leaves it, so each hunk is listed once, as last reverted.
export def AddReverted(list: list<dict<any>>, entry: dict<any>): list<dict<any>>
  var out = list + [entry]
  # At most one there (this is the one way in); the ids compared first, as most differ: one :PiIde revert file
  # adds hundreds.
  var id = get(entry, 'id', '')
  for i in range(len(list))
    if get(list[i], 'id', '') ==# id && SameHunk(list[i], entry)
      remove(out, i)
      break
    endif
  endfor
  return len(out) > MAX_REVERTED ? out[len(out) - MAX_REVERTED :] : out
enddef

# Pure: is undo step `seq` of `tree` (undotree()'s) in the text now? On the path from the first step to the current
# one (an undone step is past it; one on another branch is not on it), or no longer in the history at all (cut by
# 'undolevels', or the history dropped): then nothing can take it back. (The Neovim client's `_step_applied`.)
export def StepApplied(tree: dict<any>, seq: number): bool
  return Applied(StepsOf(tree), seq)
enddef

# Pure: is step `seq` in the text, from StepsOf's [the steps on the path, every step]?
export def Applied(steps: list<dict<bool>>, seq: number): bool
  return has_key(steps[0], seq) || !has_key(steps[1], seq)
enddef

# Pure: [the steps on the path from the first step of `tree` to its current one, every step in it], as sets (read
# once per look: each revert of the buffer is then one lookup).
export def StepsOf(tree: dict<any>): list<dict<bool>>
  var entries = get(tree, 'entries', [])
  var all: dict<bool> = {}
  AllSteps(entries, all)
  var path: dict<bool> = {}
  for seq in PathTo(entries, get(tree, 'seq_cur', 0), [])[1]
    path[seq] = true
  endfor
  return [path, all]
enddef

def AllSteps(entries: list<dict<any>>, all: dict<bool>)
  for e in entries
    all[e.seq] = true
    if has_key(e, 'alt')
      AllSteps(e.alt, all)
    endif
  endfor
enddef

# [whether step `cur` is in `entries` (or a branch of them), and the steps on the way to it], with `before` the steps
# on the way to `entries`. Each `alt` list is a branch that left the list it is in just before its entry: its steps
# come after the entries before that one, instead of it and the rest.
def PathTo(entries: list<dict<any>>, cur: number, before: list<number>): list<any>
  var path = copy(before)
  for e in entries
    if has_key(e, 'alt')
      var [found, there] = PathTo(e.alt, cur, path)
      if found
        return [true, there]
      endif
    endif
    path->add(e.seq)
    if e.seq == cur
      return [true, path]
    endif
  endfor
  return [false, []]
enddef

# Pure: quickfix items for the newest runs (`Newest`), files by name, hunks top down.
export def QuickfixItems(newest: dict<dict<any>>): list<dict<any>>
  var items: list<dict<any>> = []
  for file in sort(keys(newest))
    var found = newest[file]
    for h in found.entry.hunks
      var first = get(h.new_text, 0, get(h.old_text, 0, ''))
      items->add({filename: file, lnum: max([1, h.new_start]),
        text: printf("pi (run %d): +%d -%d %s", found.run, len(h.new_text), len(h.old_text), first)})
    endfor
  endfor
  return items
enddef

# Pure: the lines of a file's text (the change set's `baseline`), as pi splits them: no last empty line for the
# final newline.
export def TextLines(text: string): list<string>
  var lines = split(text, "\n", true)
  return !empty(lines) && lines[-1] == '' ? lines[: -2] : lines
enddef
