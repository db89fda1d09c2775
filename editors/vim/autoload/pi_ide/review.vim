vim9script
# pi_ide/review.vim: protocol v0.4, pi's change set (`pi-<pid>.review.json`) in Vim. Passive by default: the
# buffers of files pi changed mark pi's hunks of its newest run in the sign column (signs move with edits);
# nothing opens, moves the cursor or takes focus unless the user asks:
#   :PiIde revert [file|run]   put the baseline's lines back in the buffer for the hunk under the cursor (or
#                   all of the buffer's, or of every loaded buffer of the run): the buffers change, not the disk (one `u` brings pi's version back; the user saves when they choose).
#                   A hunk whose lines differ from what pi left (the user edited them) is refused.
#   :PiIde hunks    pi's hunks of its newest run, every file, into the quickfix list (not opened).
#   :PiIde review   the current buffer beside pi's baseline (a read-only scratch buffer, both in diff mode).
# pi_ide/inbox.vim reads the change set, with the one reader of pi's files, after each message of a pi that
# names this Vim (pi writes the change set before the message that announces it), and hands it here. Only
# buffers already loaded are marked or changed. What was reverted goes into the state file (`reverted`), so pi
# can tell its model; a revert the user undoes (`u`, `:earlier`: its undo step is no longer in the text, as Vim's
# undo tree tells) leaves `reverted` before pi tells its model, and the hunk is marked again; one thrown away unsaved
# with the buffer's text (`:e!`, `:bd!`, `:bw!`) leaves it for good. Marks follow their lines when lines move above
# them, and a hunk whose lines of pi's were deleted is not reverted. The Neovim client's behaviour
# (editors/nvim/lua/pi-ide/review.lua).
# This file is the UI (signs, reverts in buffers, the quickfix list, commands, notices); the pure rules (which change
# sets and hunks count, where hunks are marked, the reverts kept and their key, undo steps) are pi_ide/review_rules.vim.

import autoload 'pi_ide/approval.vim'
import autoload 'pi_ide/review_rules.vim'
import autoload 'pi_ide/writer.vim'

const GROUP = 'pi_ide_review'
# The signs (no text) that keep where each revert put the baseline's lines (see Track).
const TRACK_GROUP = 'pi_ide_reverted'
const TRACK_SIGN = 'PiIdeReverted'
# The signs (no text) on the line after each marked hunk of pi's lines (see MarkSigns).
const FENCE_GROUP = 'pi_ide_review_fence'
# Below the approval's `?` (9): a proposal on the same line shows first.
const PRIORITY = 8

# pi identity (writer.PiKeyOfName) -> its validated runs (only pis connected to this Vim).
var sets: dict<list<dict<any>>> = {}
# pi identity -> the fields that name it in `reverted` (writer.PiFields).
var names: dict<dict<any>> = {}
# Buffer (string) -> {source: what its marks were placed from, hunks: {sign id (string): what it marks}}.
var marks: dict<dict<any>> = {}
# Newest last: {pi_pid, pi_ns (as pi's file said; left out when it said none), run, id, file, line, lines}.
var reverted: list<dict<any>> = []
# Buffer (string) -> {tick: its changedtick when its reverts were last looked at, reverts: [{seq: the revert's undo
# step (`undotree()`'s seq); sign: the id of the sign that keeps where its lines start (Track); top: whether they
# start on line 1; record: its entry in `reverted`; info: what the hunk's mark was; undone: whether its undo step
# was out of the text at the last look; saved: whether the buffer's last write after it had it (Written)}]}.
var tracked: dict<dict<any>> = {}
var next_id = 1
var defined = false
# The undo tree UndoTree read (win_execute runs a command, and returns only what it printed).
var tree_read: dict<any> = {}
# The loaded file buffer of a path (pi_ide/inbox.vim's rule), and what to do after a revert.
var FindBuffer: func(string): number = (_) => 0
var OnChange: func = () => 0

const SIGNS = {add: 'PiIdeReviewAdd', change: 'PiIdeReviewChange', delete: 'PiIdeReviewDelete'}

def Define()
  if defined
    return
  endif
  defined = true
  highlight default link PiIdeReviewAdd DiffAdd
  highlight default link PiIdeReviewChange DiffChange
  highlight default link PiIdeReviewDelete DiffDelete
  var bar = &encoding ==# 'utf-8' ? '┃' : '|'
  sign_define(SIGNS.add, {text: bar, texthl: SIGNS.add})
  sign_define(SIGNS.change, {text: bar, texthl: SIGNS.change})
  sign_define(SIGNS.delete, {text: &encoding ==# 'utf-8' ? '▁' : '_', texthl: SIGNS.delete})
  sign_define(TRACK_SIGN, {})
enddef

def Unmark(buf: number)
  if has_key(marks, string(buf))
    remove(marks, string(buf))
    if bufexists(buf)
      sign_unplace(GROUP, {buffer: buf})
      sign_unplace(FENCE_GROUP, {buffer: buf})
    endif
  endif
enddef

# The signs that mark placement `p` (Placement's {hunk, first, last, kind, at_end}) of a hunk of pi `pid`'s run `run`
# in `buf` (whose file is `file`, `count` lines; `base`: the baseline's lines, for a deletion), and what they mark:
# [signs, info]. A hunk of pi's lines with a line after it gets a fence there too (a sign without text, below every
# other): Vim moves the sign of a deleted line onto the next one, so pi's last line deleted puts its sign on the
# fence's line, which may read the same as pi's (MarkHolds).
def MarkSigns(buf: number, p: dict<any>, pid: string, run: number, file: string, base: list<string>,
    count: number): list<any>
  var ids: list<number> = []
  var signs: list<dict<any>> = []
  for l in range(p.first, p.last)
    ids->add(next_id)
    signs->add({buffer: buf, group: GROUP, id: next_id, name: SIGNS[p.kind], lnum: l, priority: PRIORITY})
    next_id += 1
  endfor
  var fence = 0
  if p.kind != 'delete' && p.last < count
    fence = next_id
    signs->add({buffer: buf, group: FENCE_GROUP, id: fence, name: TRACK_SIGN, lnum: p.last + 1, priority: 1})
    next_id += 1
  endif
  return [signs, {pid: pid, run: run, file: file, hunk: p.hunk, at_end: p.at_end, ids: ids, fence: fence,
    base: base}]
enddef

# Mark `found` ({pid, run, entry}) in `buf`, unless `g:pi_ide_review_marks` is 0 (Neovim's `review_marks`).
# Marks placed from the same source stay where they moved: pi's line numbers no longer hold once lines were added
# or removed above (a revert that changes the line count, the user's edits), so after an edit they are checked
# where they are (KeepMarks); the buffer read again from its file (TextRead), or reloaded by pi (Reloaded), places them
# anew. And the change set is rewritten with every change of any file: re-placing the signs of the files it did not
# change would be most of a load's cost.
def MarkBuffer(buf: number, file: string, found: dict<any>)
  var source = ''
  if !empty(found) && get(g:, 'pi_ide_review_marks', true)
    source = printf('%s %d %s', found.pid, found.run,
      join(mapnew(found.entry.hunks, (_, h) => h.id .. ':' .. h.new_start)))
  endif
  var known = get(marks, string(buf), {})
  if source != '' && get(known, 'source', '') ==# source
    if known.tick != getbufvar(buf, 'changedtick')
      known.tick = getbufvar(buf, 'changedtick')
      KeepMarks(buf)
    endif
    return
  endif
  Unmark(buf)
  if source == ''
    return
  endif
  Define()
  var placed: dict<dict<any>> = {}
  var signs: list<dict<any>> = []
  # The baseline's lines only for a deletion's neighbours (split once, and only when there is one).
  var base: list<string> = []
  if type(found.entry.baseline) == v:t_string && !empty(filter(copy(found.entry.hunks), (_, h) => empty(h.new_text)))
    base = review_rules.TextLines(found.entry.baseline)
  endif
  var lines = getbufline(buf, 1, '$')
  for p in review_rules.Placement(found.entry.hunks, lines, base)
    var [these, info] = MarkSigns(buf, p, found.pid, found.run, file, base, len(lines))
    signs += these
    for id in info.ids
      placed[string(id)] = info
    endfor
  endfor
  sign_placelist(signs)
  marks[string(buf)] = {source: source, tick: getbufvar(buf, 'changedtick'), hunks: placed}
enddef

# Whether the mark `info` in `buf` still stands on pi's version, from line `at` (its first sign's): pi's lines, none
# deleted (the last sign above the fence) or added between; for a deletion, the baseline's lines around it.
# `lnums`: where the signs of the buffer stand (sign id (string) -> line), read once for many marks; empty: asked.
def MarkHolds(buf: number, info: dict<any>, at: number, lnums: dict<number> = {}): bool
  var h = info.hunk
  var n = len(h.new_text)
  if at == 0
    return false
  elseif n == 0
    return DeletionHolds(buf, info.at_end ? at : at - 1, info.base, h)
  endif
  var last = empty(lnums) ? SignLine(buf, info.ids[-1]) : get(lnums, string(info.ids[-1]), 0)
  var fence = info.fence == 0 ? 0
    : empty(lnums) ? SignLineIn(buf, FENCE_GROUP, info.fence) : get(lnums, string(info.fence), 0)
  return last == at + n - 1 && (info.fence == 0 || fence > last) && getbufline(buf, at, at + n - 1) ==# h.new_text
enddef

# Take the mark `info` (its signs and fence) out of `buf`.
def UnplaceMark(buf: number, info: dict<any>)
  var signs = mapnew(info.ids, (_, id) => ({buffer: buf, group: GROUP, id: id}))
  sign_unplacelist(info.fence == 0 ? signs : signs + [{buffer: buf, group: FENCE_GROUP, id: info.fence}])
  var known = get(get(marks, string(buf), {}), 'hunks', {})
  for id in info.ids
    if has_key(known, string(id))
      remove(known, string(id))
    endif
  endfor
enddef

# The marks of `buf` checked where they are now: one that no longer stands on pi's version (MarkHolds) goes, as
# MarkBuffer would not place it (a revert of it is refused anyway); the others stay where they moved.
def KeepMarks(buf: number)
  # Where every sign stands, read once (Vim walks all of the buffer's signs for each sign_getplaced()).
  var lnums: dict<number> = {}
  for group in [GROUP, FENCE_GROUP]
    for placed in sign_getplaced(buf, {group: group})[0].signs
      lnums[string(placed.id)] = placed.lnum
    endfor
  endfor
  var seen: dict<bool> = {}
  for info in values(get(get(marks, string(buf), {}), 'hunks', {}))
    if !has_key(seen, string(info.ids[0]))
      seen[string(info.ids[0])] = true
      if !MarkHolds(buf, info, get(lnums, string(info.ids[0]), 0), lnums)
        UnplaceMark(buf, info)
      endif
    endif
  endfor
enddef

# Re-mark every loaded buffer of a file in the newest runs, and clear those no longer in them.
export def Refresh()
  var keep: dict<bool> = {}
  for [file, found] in items(review_rules.Newest(sets))
    var buf = FindBuffer(file)
    if buf > 0
      keep[string(buf)] = true
      MarkBuffer(buf, file, found)
    endif
  endfor
  for buf in keys(marks)
    if !has_key(keep, buf)
      Unmark(str2nr(buf))
    endif
  endfor
enddef

# Start (pi_ide/inbox.vim): `Find` gives the loaded buffer of a path; `Changed` runs after a revert (a state
# write now).
export def Start(Find: func(string): number, Changed: func)
  FindBuffer = Find
  OnChange = Changed
enddef

# A decoded change set from `pi-<pid>.review.json` of a live pi of this user that names this Vim. Returns ''
# or why it is not used (then what was known of that pi stays until it is forgotten).
export def Receive(msg: any, pi: any): string
  var key = writer.Key(pi)
  var [runs, bad] = review_rules.Validate(msg, key)
  if bad != ''
    return bad
  endif
  sets[key] = runs
  names[key] = writer.PiFields(key, msg)
  Refresh()
  return ''
enddef

# pi `pi` (identity or bare pid) has no change set any more (gone, no longer connected to this Vim, its file
# removed): its marks go.
export def Forget(pi: any)
  var key = writer.Key(pi)
  if has_key(sets, key)
    remove(sets, key)
    Refresh()
  endif
enddef

# Not listening any more: no change set counts.
export def Reset()
  for key in keys(sets)
    Forget(key)
  endfor
enddef

# BufReadPost: a file of pi's newest runs, loaded (or re-read) now, gets its marks.
export def BufferRead(_buf: number)
  if !empty(sets)
    Refresh()
  endif
enddef

# pi's message reloaded `buf` with new text (pi_ide/inbox.vim): its marks are placed anew from that text, as after a
# read. pi writes its change set before the message of its edit, and Vim reads the change set after each message: when
# handling an earlier message outlasts pi's wait for the answer (a busy machine), pi's next run goes on, and the change
# set read then is already that run's while the buffer still holds the text before its edit. None of its hunks stood
# there, and the same source would have kept that when the edit's message came (MarkBuffer).
export def Reloaded(buf: number)
  Unmark(buf)
  BufferRead(buf)
enddef

# BufWipeout: nothing to clear in a buffer that is gone; its reverts stay as they were last seen (Untrack).
export def Wiped(buf: number)
  if has_key(marks, string(buf))
    remove(marks, string(buf))
  endif
  if has_key(tracked, string(buf))
    for r in tracked[string(buf)].reverts
      Untrack(buf, r)
    endfor
    remove(tracked, string(buf))
  endif
enddef

# The text of `buf` was thrown away for its file's: read again (`:e!`, a reload; `read`) or unloaded (`:bd!`, `:bw!`).
# A revert the file does not have (none of the buffer's writes since had it) is gone with the text: out of
# `reverted`, so pi never tells its model of a revert the file and buffer do not hold. One the file has holds, even
# if undone in the text thrown away; after a read, the undo step it is in is the read's when the text before had it
# undone.
def TextReplaced(buf: number, read: bool)
  if !has_key(tracked, string(buf))
    return
  endif
  var t = tracked[string(buf)]
  var tree = read ? UndoTree(buf) : {}
  var steps = review_rules.StepsOf(tree)
  var changed = false
  var still: list<dict<any>> = []
  for r in t.reverts
    if Kept(r.record) && !r.saved
      filter(reverted, (_, e) => e isnot r.record)
      changed = true
    elseif Kept(r.record)
      changed = changed || r.undone
      r.undone = false
      if read
        if !review_rules.Applied(steps, r.seq)
          r.seq = tree.seq_cur
        endif
        still->add(r)
        continue
      endif
    endif
    if bufexists(buf)
      sign_unplace(TRACK_GROUP, {buffer: buf, id: r.sign})
    endif
  endfor
  if read
    t.reverts = still
    t.tick = -1
  else
    remove(tracked, string(buf))
  endif
  if changed
    OnChange()
  endif
enddef

# BufReadPost (before BufferRead): the buffer's text is its file's again; see TextReplaced. Its marks are placed
# anew from the text read.
export def TextRead(buf: number)
  TextReplaced(buf, true)
  Unmark(buf)
enddef

# BufUnload (`:bd!`, `:bw!`): the buffer's text is thrown away; see TextReplaced.
export def TextUnloaded(buf: number)
  TextReplaced(buf, false)
enddef

# BufWritePost of `buf` to `file` (`:w other` writes another one): the reverts its file now has, or no longer has
# (one undone when written).
export def Written(buf: number, file: string)
  if !has_key(tracked, string(buf)) || file !=# fnamemodify(bufname(buf), ':p')
    return
  endif
  var steps = review_rules.StepsOf(UndoTree(buf))
  for r in tracked[string(buf)].reverts
    r.saved = review_rules.Applied(steps, r.seq)
  endfor
enddef

# The line where sign `id` of `group` stands now in `buf`, or 0.
def SignLineIn(buf: number, group: string, id: number): number
  var placed = sign_getplaced(buf, {group: group, id: id})
  return empty(placed) || empty(placed[0].signs) ? 0 : placed[0].signs[0].lnum
enddef

# The line where a review sign stands now, or 0.
def SignLine(buf: number, id: number): number
  return SignLineIn(buf, GROUP, id)
enddef

# Is line `at` of buffer `buf` the same as line `base_at` of `base`, or are both past an end? (SameLine's rule on
# a buffer, without copying its lines.)
def BufSame(buf: number, at: number, base: list<string>, base_at: number): bool
  var here = at >= 1 ? getbufline(buf, at) : []
  return review_rules.SameLine(here, empty(here) ? 0 : 1, base, base_at)
enddef

# Are the lines around a deletion of pi's (`h`) the baseline's (`base`), with `before` the buffer's line just above
# the place (0: the top)? Where a deletion is marked, reverted, and seen undone (Placement's rule on a buffer).
def DeletionHolds(buf: number, before: number, base: list<string>, h: dict<any>): bool
  return BufSame(buf, before, base, h.old_start - 1) && BufSame(buf, before + 1, base, h.old_start + len(h.old_text))
enddef

# How many lines `buf` has: from a window showing it, else getbufinfo(), which also lists every sign in the buffer.
def LineCount(buf: number): number
  var win = bufwinid(buf)
  return win != -1 ? line('$', win) : getbufinfo(buf)[0].linecount
enddef

# Run Ex command `cmd` in `buf` (loaded): its window, or, for a buffer in no window, a hidden popup showing it
# (`undotree()` and an undo break work on the current buffer only; Vim 9.0's undotree() takes no buffer).
def InBuffer(buf: number, cmd: string)
  if buf == bufnr()
    execute cmd
    return
  endif
  var wins = win_findbuf(buf)
  if !empty(wins)
    win_execute(wins[0], cmd)
    return
  endif
  var popup = popup_create(buf, {hidden: true})
  win_execute(popup, cmd)
  popup_close(popup)
enddef

# Close the undo block of `buf` (`:help undo-break`): what comes next is an undo step of its own.
def UndoBreak(buf: number)
  InBuffer(buf, '&undolevels = &undolevels')
enddef

# The undo tree of `buf` (`:help undotree()`).
def UndoTree(buf: number): dict<any>
  InBuffer(buf, 'tree_read = undotree()')
  return tree_read
enddef

# Put the baseline's lines of the marked hunk `info` back in buffer `buf` (loaded), or return why not; `made` gets
# the revert ([its entry in `reverted`, info]) to follow once its undo step is known (RevertIn).
def RevertOne(buf: number, info: dict<any>, made: list<list<dict<any>>>): string
  var h = info.hunk
  var n = len(h.new_text)
  var at = SignLine(buf, info.ids[0])
  if n > 0
    # Vim moves the signs of deleted lines onto the next one, and keeps them on changed lines: the text decides,
    # and the fence (pi's last line deleted).
    if !MarkHolds(buf, info, at)
      return printf("%s line %d: you changed these lines after pi's edit; not reverted",
        fnamemodify(info.file, ':t'), at)
    endif
    # Replaced in place, then the rest added or removed.
    var common = min([n, len(h.old_text)])
    if common > 0
      setbufline(buf, at, h.old_text[: common - 1])
    endif
    if len(h.old_text) > n
      appendbufline(buf, at + n - 1, h.old_text[n :])
    elseif n > common
      deletebufline(buf, at + common, at + n - 1)
    endif
  else
    # Checked again as when it was marked: the lines around the deletion are still the baseline's.
    var before = info.at_end ? at : at - 1
    if !MarkHolds(buf, info, at)
      return printf("%s line %d: the lines around pi's deletion changed since; not reverted",
        fnamemodify(info.file, ':t'), at)
    endif
    appendbufline(buf, before, h.old_text)
  endif
  UnplaceMark(buf, info)
  var record = extend(copy(get(names, info.pid, {pi_pid: writer.PidOfKey(info.pid)})), {run: info.run, id: h.id, file: info.file, line: info.at_end ? at + 1 : at, lines: n})
  reverted = review_rules.AddReverted(reverted, record)
  made->add([record, info])
  return ''
enddef

# Follow revert `record` of hunk `info` in `buf`, made in undo step `seq`: an undo of it, and a redo, are seen by
# asking Vim's undo tree (LookAtReverts). A sign (no text) keeps where its lines start, so the hunk can be marked
# again after an undo: on the line just above them, which the undo and redo of the revert do not move (Vim moves a
# sign like a line's number: one on the first reverted line would be pushed below pi's added lines put back by an
# undo); on line 1 for a revert at the top, where the place is line 1 (`top`). The sign also tells that the buffer
# was not unloaded since (Vim drops its signs, and its undo history with them). (Without text the sign shows
# nothing, but while one is placed the sign column stays open, as pi's mark there had it.)
def Track(buf: number, record: dict<any>, info: dict<any>, seq: number)
  Define()
  var sign = next_id
  next_id += 1
  sign_place(sign, TRACK_GROUP, TRACK_SIGN, buf, {lnum: max([1, record.line - 1])})
  if !has_key(tracked, string(buf))
    tracked[string(buf)] = {tick: -1, reverts: []}
  endif
  tracked[string(buf)].reverts->add({seq: seq, sign: sign, top: record.line <= 1, record: record, info: info,
    undone: false, saved: false})
enddef

# Stop following revert `r` in `buf` (its sign or its buffer gone, or it left `reverted`): it stays as it was last
# seen, so one undone at the last look leaves `reverted` for good, and one that held stays listed.
def Untrack(buf: number, r: dict<any>)
  if bufexists(buf)
    sign_unplace(TRACK_GROUP, {buffer: buf, id: r.sign})
  endif
  if r.undone
    filter(reverted, (_, e) => e isnot r.record)
  endif
enddef

# Is `record` (the very entry, not an equal one) still in `reverted`?
def Kept(record: dict<any>): bool
  for e in reverted
    if e is record
      return true
    endif
  endfor
  return false
enddef

# Mark hunk `info` again in `buf` from line `at` (its revert undone: pi's version is back there), while its run is still the file's
# newest in pi's change set and the buffer has marks (not switched off), unless it is marked already.
def MarkAgain(buf: number, at: number, info: dict<any>)
  var found = get(review_rules.Newest(sets), info.file, {})
  var known = get(marks, string(buf), {})
  if empty(found) || found.pid != info.pid || found.run != info.run || empty(known)
      || !empty(MarksOf(buf, info))
    return
  endif
  var n = len(info.hunk.new_text)
  var count = LineCount(buf)
  # Pi's lines must be back at the place (an undo of the revert brings them back; nothing else is marked).
  if n > 0 ? getbufline(buf, at, at + n - 1) !=# info.hunk.new_text : count == 0
    return
  endif
  var p = n > 0
    ? {hunk: info.hunk, first: at, last: at + n - 1, kind: empty(info.hunk.old_text) ? 'add' : 'change', at_end: false}
    : {hunk: info.hunk, first: max([1, min([at, count])]), last: max([1, min([at, count])]), kind: 'delete',
      at_end: at > count}
  var [signs, again] = MarkSigns(buf, p, info.pid, info.run, info.file, info.base, count)
  sign_placelist(signs)
  for id in again.ids
    known.hunks[string(id)] = again
  endfor
enddef

# The sign ids of the marks of hunk `info` (the same pi, run and id) in `buf`.
def MarksOf(buf: number, info: dict<any>): list<string>
  return keys(filter(copy(get(get(marks, string(buf), {}), 'hunks', {})),
    (_, m) => m.pid == info.pid && m.run == info.run && m.hunk.id ==# info.hunk.id))
enddef

# Take the marks of hunk `info` out of `buf` (its revert holds again: a redo).
def UnmarkHunk(buf: number, info: dict<any>)
  for id in MarksOf(buf, info)
    var mark = get(marks[string(buf)].hunks, id, {})
    if !empty(mark)
      UnplaceMark(buf, mark)
    endif
  endfor
enddef

# Look again at the reverts in the buffers that changed since the last look (their changedtick), by asking each
# buffer's undo tree whether the revert's undo step is in its text. A buffer not loaded keeps what was last seen;
# one in no window cannot have been undone (undo needs a window), and is looked at once it is shown. One UNDONE
# (`u`, `:earlier`, an undo branch without it) is no longer a revert: Listed leaves it out, so pi never tells its
# model of it, and its hunk is marked again where pi's lines are back; a redo makes it a revert again (listed, that
# mark gone). The user's own edits change neither: only the undo history decides, so equal lines, or lines typed
# around the place, cannot be mistaken for an undo. Only reads the buffers: never changes their text.
def LookAtReverts()
  for [b, t] in items(tracked)
    var buf = str2nr(b)
    if !bufloaded(buf) || t.tick == getbufvar(buf, 'changedtick') || (buf != bufnr() && empty(win_findbuf(buf)))
      continue
    endif
    t.tick = getbufvar(buf, 'changedtick')
    var steps = review_rules.StepsOf(UndoTree(buf))
    # Where each tracking sign stands: read once (Vim walks all of the buffer's signs for each sign_getplaced()).
    var lnums: dict<number> = {}
    for placed in sign_getplaced(buf, {group: TRACK_GROUP})[0].signs
      lnums[string(placed.id)] = placed.lnum
    endfor
    var still: list<dict<any>> = []
    for r in t.reverts
      var above = get(lnums, string(r.sign), 0)
      if !Kept(r.record) || above == 0
        # Left `reverted` (reverted again, or past the newest MAX_REVERTED), or its sign was taken away (the
        # buffer unloaded: Vim drops its signs, and the undo history that had the revert's step).
        Untrack(buf, r)
        continue
      endif
      var undone = !review_rules.Applied(steps, r.seq)
      if undone && !r.undone
        MarkAgain(buf, r.top ? 1 : above + 1, r.info)
      elseif !undone && r.undone
        UnmarkHunk(buf, r.info)
      endif
      r.undone = undone
      still->add(r)
    endfor
    t.reverts = still
  endfor
enddef

# `reverted` without the reverts the user undid (LookAtReverts), newest last.
def Listed(): list<dict<any>>
  LookAtReverts()
  var undone: list<dict<any>> = []
  for t in values(tracked)
    undone += mapnew(filter(copy(t.reverts), (_, r) => r.undone), (_, r) => r.record)
  endfor
  return filter(copy(reverted), (_, e) => empty(filter(copy(undone), (_, u) => u is e)))
enddef

# v0.5 send to pi (pi_ide/send.vim, `:PiIdeSend @hunk`): [first, last] line of the hunk of pi's marked in `buf` on
# line `lnum`, where its signs are now, or [] when none is.
export def HunkAt(buf: number, lnum: number): list<number>
  var known = get(get(marks, string(buf), {}), 'hunks', {})
  for s in sign_getplaced(buf, {group: GROUP, lnum: lnum})[0].signs
    var info = get(known, string(s.id), {})
    var lines: list<number> = []
    for id in get(info, 'ids', [])
      var placed = sign_getplaced(buf, {group: GROUP, id: id})[0].signs
      if !empty(placed)
        lines->add(placed[0].lnum)
      endif
    endfor
    if !empty(lines)
      return [min(lines), max(lines)]
    endif
  endfor
  return []
enddef

# Revert the hunks of pi's marked in `buf` on line `lnum` (one, but for a deletion marked on the line of another
# hunk), or all of them (`lnum` 0). Returns [how many were reverted, the problems, how many were marked there].
def RevertIn(buf: number, lnum: number): list<any>
  var known = get(get(marks, string(buf), {}), 'hunks', {})
  var chosen: list<dict<any>> = []
  # A hunk of several lines has a sign on each: taken once, by its first sign's id.
  var taken: dict<bool> = {}
  var where = lnum > 0 ? {lnum: lnum} : {}
  for s in sign_getplaced(buf, extend({group: GROUP}, where))[0].signs
    var info = get(known, string(s.id), {})
    if !empty(info) && !has_key(taken, string(info.ids[0]))
      taken[string(info.ids[0])] = true
      chosen->add(info)
    endif
  endfor
  if empty(chosen)
    return [0, [], 0]
  endif
  if !getbufvar(buf, '&modifiable')
    return [0, [printf('%s is not modifiable; not reverted', fnamemodify(bufname(buf), ':t'))], len(chosen)]
  endif
  # One undo step of its own: the user's edits before it, even made in the same command or from a mapping, stay
  # out of it, so one `u` takes back the revert and nothing else, and its step tells an undo (LookAtReverts).
  UndoBreak(buf)
  # In any order: each hunk's place is read from its signs when it is reverted, and Vim moves the signs of the
  # others with every line added or removed.
  var problems: list<string> = []
  var made: list<list<dict<any>>> = []
  for info in chosen
    var problem = RevertOne(buf, info, made)
    if problem != ''
      problems->add(problem)
    endif
  endfor
  if !empty(made)
    var seq = UndoTree(buf).seq_cur
    UndoBreak(buf)
    for [record, info] in made
      Track(buf, record, info, seq)
    endfor
  endif
  return [len(made), problems, len(chosen)]
enddef

# :PiIde revert [file|run]: the hunks of pi's under the cursor, or all of the buffer's (`file`), or of every
# buffer of pi's newest runs that Vim has loaded (`run`), in the buffers. Returns the one line to tell the user.
export def Revert(scope: string = ''): string
  var done = 0
  var problems: list<string> = []
  var seen = 0
  var undo_note = '(in the buffer; `u` undoes, `:w` saves)'
  if scope == 'run'
    undo_note = '(in the buffers; `u` in each undoes, `:wa` saves)'
    for b in keys(marks)
      if bufloaded(str2nr(b))
        var [d, p, n] = RevertIn(str2nr(b), 0)
        [done, problems, seen] = [done + d, problems + p, seen + n]
      endif
    endfor
  else
    [done, problems, seen] = RevertIn(bufnr(), scope == 'file' ? 0 : line('.'))
  endif
  if seen == 0
    return scope != '' ? "(pi-ide) no hunks of pi's to revert here"
      : "(pi-ide) no hunk of pi's under the cursor (`:PiIde hunks` lists them)"
  endif
  if done == 0
    return '(pi-ide) ' .. problems[0]
  endif
  OnChange()
  var msg = printf("(pi-ide) reverted %d of pi's hunks %s", done, undo_note)
  return empty(problems) ? msg : printf('%s; %d refused: %s', msg, len(problems), problems[0])
enddef

# :PiIde hunks: pi's hunks of its newest run into the quickfix list (not opened: `:copen` shows it), and `extra`
# (issue 26: pi_ide/inbox.vim's ConflictItems, where merges kept the user's lines). Returns the one line to tell
# the user.
export def ToQuickfix(extra: list<dict<any>> = []): string
  var items = review_rules.QuickfixItems(review_rules.Newest(sets)) + extra
  if empty(items)
    return "(pi-ide) no hunks of pi's known (pi changed nothing yet, or no pi is connected)"
  endif
  setqflist([], ' ', {title: "pi's changes", items: items})
  return empty(extra) ? printf("(pi-ide) %d of pi's hunks in the quickfix list (:copen)", len(items))
    : printf("(pi-ide) %d of pi's hunks and %d conflicts in the quickfix list (:copen)", len(items) - len(extra),
    len(extra))
enddef

# :PiIde review: the current buffer beside its file's baseline in pi's newest run, both in diff mode, the baseline
# read-only in a scratch buffer. Your buffer is never changed, reloaded or written (no W12), and the cursor stays
# in its window. Returns '' or why there is nothing to show.
export def ShowBaseline(): string
  var buf = bufnr()
  var found: dict<any> = {}
  for [file, f] in items(review_rules.Newest(sets))
    if FindBuffer(file) == buf
      found = f
      break
    endif
  endfor
  if empty(found)
    return "(pi-ide) pi did not change this buffer's file in its newest run"
  endif
  if type(found.entry.baseline) != v:t_string
    return "(pi-ide) pi's change set carries no baseline for this file (created by pi, binary or too large)"
  endif
  var back = win_getid()
  var filetype = &filetype
  diffthis
  vertical rightbelow new
  approval.Scratch(review_rules.TextLines(found.entry.baseline), 'pi-ide://baseline' .. found.entry.file, filetype)
  diffthis
  win_gotoid(back)
  return ''
enddef

# Lines for :PiIde: pi's newest hunks known, and the reverts made.
export def SummaryLines(): list<string>
  var newest = review_rules.Newest(sets)
  var listed = Listed()
  if empty(newest) && empty(listed)
    return []
  endif
  var count = 0
  for f in values(newest)
    count += len(f.entry.hunks)
  endfor
  return [printf("pi's changes: %d %s in %d %s of its newest runs (:PiIde hunks); %d reverted here", count,
    count == 1 ? 'hunk' : 'hunks', len(newest), len(newest) == 1 ? 'file' : 'files', len(listed))]
enddef

# The state file's `reverted` list (v0.4), or v:null when nothing was reverted (or every revert was undone).
export def Reverted(): any
  var listed = Listed()
  return empty(listed) ? v:null : listed
enddef

# For tests.
export def Debug(): dict<any>
  return {sets: sets, marks: marks, reverted: reverted, tracked: tracked}
enddef
