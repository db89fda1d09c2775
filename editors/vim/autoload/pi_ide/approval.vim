vim9script
# pi_ide/approval.vim: protocol v0.4, optional approval. With pi's setting `ideContext.approve: "edits"`, pi's
# write/edit waits for the user's decision: pi writes `pi-<pid>.approval.json` (the proposed hunks against the
# file as it is) while it waits and removes it once the wait ends. pi_ide/inbox.vim finds and reads that file
# under the rules of pi's messages and hands the decoded request here. Passive, never blocking: one line in
# the message area, the proposed hunks marked in the file's buffer if it is loaded and still holds the lines
# pi read (a `?` sign on the lines pi would replace, the proposed lines as virtual text), "approve?" in the
# statusline and :PiIde; nothing opens or takes focus unless asked:
#   :PiIde approve    let pi apply the change
#   :PiIde reject     pi does not apply it (and tells its model the user rejected it in Vim)
#   :PiIde proposal   the proposed change beside the buffer (or as a diff), read-only
# Issue 26: a buffer with unsaved changes shows the proposal against it (Against): hunks placed where the merge
# would put them, those touching the user's unsaved lines marked there with `!` and named in the notice.
# An answer is for the request the user saw (PROTOCOL.md): approve/reject answer the request this Vim last
# showed (its notice, or :PiIde proposal) and the user has not answered; when that one no longer waits and
# another does, they refuse in one line naming the other, and the same command again answers it. A request
# that arrives while one shown is unanswered is told but does not take its place.
# The decision goes into the state file (`decisions`), which pi reads. Doing nothing is not a rejection: pi's
# own dialog may answer, or its timeout ends the wait. It never changes a buffer or a file for a request.
# The Neovim client's behaviour (editors/nvim/lua/pi-ide/approval.lua).
# This file is the UI (signs, virtual text, notices, the proposal view, commands); the pure rules (which requests
# count, the proposal's diff and marks, the notice's text, the decisions kept, an answer's request) are
# pi_ide/approval_rules.vim.

import autoload 'pi_ide/approval_rules.vim'
import autoload 'pi_ide/writer.vim'

const SIGN = 'PiIdeApproval'
# Issue 26: a hunk that touches the user's unsaved lines, marked on them.
const SIGN_TOUCH = 'PiIdeApprovalTouch'
const SIGN_GROUP = 'pi_ide_approval'
const PROP = 'pi_ide_approval_add'

# pi pid (string) -> the request it waits on.
var pending: dict<dict<any>> = {}
# Newest last: {pi_pid, pi_ns (as pi's file said; left out when it said none), id, decision}.
var decisions: list<dict<any>> = []
# Requests whose arrival was told, as '<pi pid>:<id>' (pi's ids are its tool calls', which another pi may use too).
var told: dict<bool> = {}
# {pi_key, id} of the request the user was last shown and has not answered: the one approve/reject answer.
var shown: dict<any> = {}
var dir = ''
# The loaded file buffer of a path (pi_ide/inbox.vim's rule), and what to do after a decision.
var FindBuffer: func(string): number = (_) => 0
var OnChange: func = () => 0
# Issue 26: the lines of a buffer's file on disk as pi's (pi_ide/inbox.vim's verified read), or v:null.
var DiskLines: func(number): any = (_) => v:null
var defined = false
# Buffers (string) that carry marks: only those are cleared (a clear walks every line of the buffer).
var marked: dict<bool> = {}

def Shown(file: string): string
  return approval_rules.Inert(fnamemodify(file, ':~:.'))
enddef

def Define()
  if defined
    return
  endif
  defined = true
  highlight default link PiIdeApproval DiffText
  highlight default link PiIdeApprovalAdd DiffAdd
  sign_define(SIGN, {text: '?', texthl: 'PiIdeApproval'})
  sign_define(SIGN_TOUCH, {text: '!', texthl: 'PiIdeApproval'})
  if empty(prop_type_get(PROP))
    prop_type_add(PROP, {highlight: 'PiIdeApprovalAdd'})
  endif
enddef

def Unmark(file: string)
  var buf = FindBuffer(file)
  if buf > 0 && has_key(marked, string(buf))
    remove(marked, string(buf))
    sign_unplace(SIGN_GROUP, {buffer: buf})
    prop_remove({type: PROP, bufnr: buf, all: true})
  endif
enddef

# Where request `r` stands in `buf`: {places (Placement's; [] for the hunks' own lines), proposed: the text as the
# user would see it}, or {} when it cannot be shown there. An unmodified buffer holds the file pi read: the hunks'
# own lines, where they still stand. One with unsaved changes (issue 26): against the file on disk (read as a
# reload reads it) by the merge's rule (approval_rules.Against), when the disk holds the lines pi read.
def PlacesIn(buf: number, r: dict<any>): dict<any>
  var lines = getbufline(buf, 1, '$')
  if !getbufvar(buf, '&modified')
    return approval_rules.Matches(lines, r.hunks) ? {places: [], proposed: approval_rules.Apply(lines, r.hunks)} : {}
  endif
  var disk = DiskLines(buf)
  if type(disk) != v:t_list || !approval_rules.Matches(disk, r.hunks)
    return {}
  endif
  # A request that cannot be placed is not shown there; never an error in the editor.
  try
    return approval_rules.Against(disk, lines, r.hunks)
  catch
    return {}
  endtry
enddef

# Mark the request for `file` in its buffer, if it is loaded and the request can be shown there (PlacesIn), unless
# `g:pi_ide_review_marks` is 0 (Neovim's `review_marks`). The request learns which of the user's unsaved lines it
# touches (`touch`, `touch_short`: approval_rules.TouchPhrase). Signs and virtual text only: the buffer's text,
# its 'modified' and its undo history stay as they are.
def Mark(file: string)
  Unmark(file)
  var buf = FindBuffer(file)
  var r = values(filter(copy(pending), (_, p) => p.file == file))
  if buf == 0 || empty(r) || r[0].note != ''
    return
  endif
  var at = PlacesIn(buf, r[0])
  if empty(at)
    return
  endif
  var phrase = approval_rules.TouchPhrase(at.places)
  r[0].touch = phrase[0]
  r[0].touch_short = phrase[1]
  if !get(g:, 'pi_ide_review_marks', true)
    return
  endif
  Define()
  marked[string(buf)] = true
  var signs: list<dict<any>> = []
  for p in approval_rules.Placement(r[0].hunks, getbufinfo(buf)[0].linecount, at.places)
    for l in p.signs
      signs->add({buffer: buf, group: SIGN_GROUP, name: p.touches ? SIGN_TOUCH : SIGN, lnum: l, priority: 9})
    endfor
    for t in p.text
      prop_add(p.at, 0, {type: PROP, bufnr: buf, text: t, text_align: p.align})
    endfor
  endfor
  sign_placelist(signs)
enddef

# The request shown first: the one that runs out first (Target's rule, with no request shown).
def Current(): dict<any>
  return approval_rules.Target(pending, {})[1]
enddef

def Bind(r: dict<any>)
  shown = {pi_key: r.pi_key, id: r.id}
enddef

# A request arrived: told once. It becomes the one approve/reject answer only when no request shown to the
# user is still unanswered (they may be typing their answer to that one).
def Tell(r: dict<any>)
  const key = printf('%s:%s', r.pi_key, r.id)
  if get(told, key, false)
    return
  endif
  told[key] = true
  if empty(shown)
    Bind(r)
  endif
  pi_ide#Notice(approval_rules.NoticeText(r, Shown(r.file), max([v:echospace - 1, 10])))
enddef

# Start (pi_ide/inbox.vim): requests come from `state_dir`; `Find` gives the loaded buffer of a path;
# `Changed` runs after a decision (a state write now, the statusline).
# `Disk` gives the lines of a buffer's file on disk (issue 26: a proposal shown against an unsaved buffer).
export def Start(state_dir: string, Find: func(string): number, Changed: func,
    Disk: func(number): any = (_) => v:null)
  dir = state_dir
  FindBuffer = Find
  OnChange = Changed
  DiskLines = Disk
enddef

# A decoded request from `pi-<pid>.approval.json` of a live pi of this user, read at `now` (seconds). Returns
# '' or why it is not used. One naming another editor is not ours: forgotten, nothing said. A file that
# replaced a request and cannot be read as one leaves nothing known to wait on: forgotten too.
export def Receive(msg: any, pi: any, now: number): string
  var key = writer.Key(pi)
  var [r, bad] = approval_rules.Validate(msg, key)
  if bad != ''
    Forget(key)
    return bad
  endif
  if r.editor_pid != getpid()
    Forget(key)
    return ''
  endif
  if !empty(filter(copy(decisions), (_, d) => writer.KeyOfRecord(d) ==# key && d.id ==# r.id))
    return ''
  endif
  if r.expires <= now
    Forget(key)
    return printf('the request expired %d s ago', float2nr(now - r.expires))
  endif
  var before = get(pending, key, {})
  if !empty(before) && before.file != r.file
    Unmark(before.file)
  endif
  pending[key] = r
  Mark(r.file)
  Tell(r)
  return ''
enddef

# pi `pi` (identity or bare pid) waits on nothing any more (its request removed, another editor asked, pi gone).
export def Forget(pi: any)
  var key = writer.Key(pi)
  var r = get(pending, key, {})
  if !empty(r)
    remove(pending, key)
    Unmark(r.file)
  endif
enddef

# Drop requests whose time ran out or whose pi is no longer alive (`Alive(identity)`), at `now`: pi removes its
# file then, but a pi killed mid-wait cannot. True when one was dropped.
export def Prune(now: number, Alive: func(string): bool): bool
  var dropped = false
  for r in values(pending)
    if r.expires <= now || !Alive(r.pi_key)
      Forget(r.pi_key)
      dropped = true
    endif
  endfor
  return dropped
enddef

# Not listening any more: no request counts.
export def Reset()
  for r in values(pending)
    Forget(r.pi_key)
  endfor
enddef

# :PiIde approve | reject ("accept" or "reject"). Returns the one line to tell the user.
export def Decide(decision: string): string
  var [r, instead] = approval_rules.Target(pending, shown)
  if empty(r)
    if empty(instead)
      shown = {}
      return '(pi-ide) pi is not waiting for your approval'
    endif
    # The request the user saw has ended (timed out, answered elsewhere): this one was never shown to them.
    Bind(instead)
    var verb = decision == 'accept' ? 'approve' : 'reject'
    return printf('(pi-ide) not %s: the request you saw is gone; pi now asks about %s (%s): :PiIde %s again',
      decision == 'accept' ? 'approved' : 'rejected', Shown(instead.file), approval_rules.What(instead), verb)
  endif
  shown = {}
  Forget(r.pi_key)
  var name = Shown(r.file)
  # pi may have ended the wait since the last poll: then there is nothing to answer.
  if getftype(printf('%s/pi-%s.approval.json', dir, r.pi_key)) != 'file'
    return printf("(pi-ide) pi's request to change %s is gone (answered in pi, or pi stopped); nothing done", name)
  endif
  if localtime() >= r.expires
    return printf("(pi-ide) pi's request to change %s ran out (%d s); pi did not apply it", name, r.timeout_s)
  endif
  decisions = approval_rules.AddDecision(decisions, extend(has_key(r, 'pi_ns') ? {pi_pid: r.pi_pid, pi_ns: r.pi_ns} : {pi_pid: r.pi_pid},
    {id: r.id, decision: decision}))
  OnChange()
  return decision == 'accept' ? printf('(pi-ide) approved: pi applies its change to %s', name)
    : printf('(pi-ide) rejected: pi leaves %s as it is', name)
enddef

# The current window made a read-only scratch buffer holding `lines` (also pi_ide/review.vim's baseline view).
export def Scratch(lines: list<string>, name: string, filetype: string)
  setlocal buftype=nofile bufhidden=wipe noswapfile
  setline(1, lines)
  setlocal nomodifiable readonly
  &l:filetype = filetype
  # A second view of the same file while the first is open: that name is taken, the buffer stays unnamed.
  try
    execute 'silent file ' .. fnameescape(name)
  catch
  endtry
enddef

# :PiIde proposal: the change pi waits on, read-only. The file's buffer, when it holds the lines pi read,
# beside the proposed text, both in diff mode; else the hunks as a diff in a scratch window. The user's buffer
# is never changed, reloaded or written (no W12), and the cursor goes back to the window it was in. Returns ''
# or why there is nothing to show.
export def Show(): string
  var r = approval_rules.Target(pending, shown)[0]
  if empty(r)
    r = Current()
  endif
  if empty(r)
    return '(pi-ide) pi is not waiting for your approval'
  endif
  Bind(r)
  var back = win_getid()
  var buf = FindBuffer(r.file)
  # Issue 26: a buffer with unsaved changes beside itself with pi's hunks that touch none of them placed.
  var at = buf > 0 && r.note == '' ? PlacesIn(buf, r) : {}
  var said = ''
  if !empty(at)
    var proposed = at.proposed
    var touch = approval_rules.TouchPhrase(at.places)[0]
    said = touch == '' ? '' : '(pi-ide) ' .. touch
    var wins = win_findbuf(buf)
    if bufnr() != buf
      if empty(wins)
        execute 'sbuffer ' .. buf
      else
        win_gotoid(wins[0])
      endif
    endif
    var filetype = getbufvar(buf, '&filetype')
    diffthis
    vertical rightbelow new
    Scratch(proposed, 'pi-ide://proposal' .. r.file, filetype)
    diffthis
  else
    botright new
    Scratch(approval_rules.DiffLines(r), 'pi-ide://proposal.diff' .. r.file, 'diff')
  endif
  win_gotoid(back)
  return said
enddef

# BufReadPost: a file with a pending request, loaded now, gets its marks.
export def BufferRead(buf: number)
  for r in values(pending)
    if FindBuffer(r.file) == buf
      Mark(r.file)
    endif
  endfor
enddef

# The state file's `decisions` (v0.4): always a list, empty included: it tells pi this Vim answers.
export def Decisions(): list<dict<any>>
  return copy(decisions)
enddef

# For statuslines: "approve?" while pi waits, else "".
export def StatusText(): string
  return empty(Current()) ? '' : 'approve?'
enddef

# Lines for :PiIde.
export def SummaryLines(): list<string>
  var r = Current()
  if empty(r)
    return []
  endif
  return [printf('pi waits for your approval: %s of %s (%s)%s, %d s left. :PiIde approve / reject / proposal',
    r.created ? 'creation' : approval_rules.Inert(r.tool), Shown(r.file), approval_rules.What(r),
    get(r, 'touch', '') == '' ? '' : '; ' .. r.touch, max([0, float2nr(r.expires) - localtime()]))]
enddef

# For tests.
export def Debug(): dict<any>
  return {pending: pending, decisions: decisions, shown: shown}
enddef
