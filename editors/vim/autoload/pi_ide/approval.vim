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
# An answer is for the request the user saw (PROTOCOL.md): approve/reject answer the request this Vim last
# showed (its notice, or :PiIde proposal) and the user has not answered; when that one no longer waits and
# another does, they refuse in one line naming the other, and the same command again answers it. A request
# that arrives while one shown is unanswered is told but does not take its place.
# The decision goes into the state file (`decisions`), which pi reads. Doing nothing is not a rejection: pi's
# own dialog may answer, or its timeout ends the wait. It never changes a buffer or a file for a request.
# The Neovim client's behaviour (editors/nvim/lua/pi-ide/approval.lua).

import autoload 'pi_ide/writer.vim'

# PROTOCOL.md "Approval": the largest request read, the decisions kept for pi; and the proposed lines shown
# inline per hunk (the rest is counted).
export const MAX_BYTES = 1024 * 1024
export const MAX_DECISIONS = 20
export const MAX_VIRTUAL_LINES = 20
# PROTOCOL.md "Limits": the hunks of a request, or of a file of pi's change set (refused whole when more, by the
# count, before any work per hunk), and the largest line number or count taken from them.
export const MAX_HUNKS = 500
export const MAX_LINE = 2147483647
# PROTOCOL.md `hunks[].id` and `request.id`: 1 to this many bytes (strlen() counts bytes).
export const MAX_ID_BYTES = 64

const SIGN = 'PiIdeApproval'
const SIGN_GROUP = 'pi_ide_approval'
const PROP = 'pi_ide_approval_add'

# pi pid (string) -> the request it waits on.
var pending: dict<dict<any>> = {}
# Newest last: {pi_pid, id, decision}.
var decisions: list<dict<any>> = []
# Requests whose arrival was told, as '<pi pid>:<id>' (pi's ids are its tool calls', which another pi may use too).
var told: dict<bool> = {}
# {pi_pid, id} of the request the user was last shown and has not answered: the one approve/reject answer.
var shown: dict<any> = {}
var dir = ''
# The loaded file buffer of a path (pi_ide/inbox.vim's rule), and what to do after a decision.
var FindBuffer: func(string): number = (_) => 0
var OnChange: func = () => 0
var defined = false
# Buffers (string) that carry marks: only those are cleared (a clear walks every line of the buffer).
var marked: dict<bool> = {}

# A line number or line count of pi's: an integer 0 to MAX_LINE (a Float, 1.5 or 1e400, is none).
def IsLine(v: any): bool
  return type(v) == v:t_number && v >= 0 && v <= MAX_LINE
enddef

# Pure: why a list of pi's hunks is over the cap (refused whole), or ''.
export def OverCap(what: string, hunks: list<any>): string
  return len(hunks) > MAX_HUNKS ? printf('%s: %d, over the cap of %d: refused', what, len(hunks), MAX_HUNKS) : ''
enddef

# Loops rather than filter() and mapnew() with a lambda, here and below: a lambda made per hunk costs more
# than the work itself (500 hunks, bench/vim.ts).
def IsLines(v: any): bool
  if type(v) != v:t_list
    return false
  endif
  for l in v
    if type(l) != v:t_string
      return false
    endif
  endfor
  return true
enddef

def IsString(v: any, s: string): bool
  return type(v) == v:t_string && v ==# s
enddef

# Pure: is `h` (decoded JSON) a hunk as pi writes them (the change set's shape, PROTOCOL.md `hunks[]`): its id 1 to
# MAX_ID_BYTES bytes, `old_start` and `new_start` line numbers from 1?
export def ValidHunk(h: any): bool
  return type(h) == v:t_dict && type(get(h, 'id', 0)) == v:t_string && h.id != '' && strlen(h.id) <= MAX_ID_BYTES
    && IsLine(get(h, 'old_start', -1)) && IsLine(get(h, 'new_start', -1)) && h.old_start >= 1 && h.new_start >= 1
    && IsLines(get(h, 'old_text', 0)) && IsLines(get(h, 'new_text', 0))
enddef

# The pid of `pi-<pid>.approval.json` (the canonical decimal of every state file name), or 0.
export def PidOfName(name: string): number
  var digits = matchstr(name, '^pi-\zs[0-9]\+\ze\.approval\.json$')
  return digits == '' ? 0 : writer.PidOfName(digits .. '.json')
enddef

# Pure: [request, ''] from a decoded approval file of pi `pid`, or [{}, why it is refused]. Malformed hunks are
# dropped (the rest still shows); the request is still asked without them.
export def Validate(msg: any, pid: number): list<any>
  if type(msg) != v:t_dict || !IsString(get(msg, 'kind', 0), 'pi-approval')
    return [{}, 'not a pi approval request']
  endif
  if type(get(msg, 'pid', '')) != v:t_number || msg.pid != pid
    return [{}, 'its pid is not the one in its name']
  endif
  if type(get(msg, 'editor_pid', '')) != v:t_number || msg.editor_pid < 1
    return [{}, 'editor_pid is not a pid']
  endif
  var r = get(msg, 'request', 0)
  if type(r) != v:t_dict
    return [{}, 'request: not an object']
  endif
  var id = get(r, 'id', 0)
  if type(id) != v:t_string || id == '' || strlen(id) > MAX_ID_BYTES
    return [{}, printf('request.id: not a string of 1 to %d bytes', MAX_ID_BYTES)]
  endif
  if type(get(r, 'file', 0)) != v:t_string || r.file !~ '^/'
    return [{}, 'request.file: not an absolute path']
  endif
  var expires = get(r, 'expires', '')
  if type(get(r, 'tool', 0)) != v:t_string || type(get(r, 'timeout_s', '')) != v:t_number || r.timeout_s < 1
      || (type(expires) != v:t_number && (type(expires) != v:t_float || isinf(expires) || isnan(expires)))
    return [{}, 'request: tool, timeout_s or expires missing']
  endif
  if type(get(r, 'hunks', 0)) != v:t_list
    return [{}, 'request.hunks: not a list']
  endif
  var over = OverCap('request.hunks', r.hunks)
  if over != ''
    return [{}, over]
  endif
  var hunks: list<dict<any>> = []
  for h in r.hunks
    if ValidHunk(h)
      hunks->add(h)
    endif
  endfor
  var total = get(r, 'hunks_total', v:null)
  return [{
    pi_pid: pid,
    editor_pid: msg.editor_pid,
    id: id,
    tool: r.tool,
    file: r.file,
    created: type(get(r, 'created', 0)) == v:t_bool && r.created,
    note: type(get(r, 'note', v:null)) == v:t_string ? r.note : '',
    hunks: hunks,
    hunks_total: IsLine(total) ? total : len(hunks),
    timeout_s: r.timeout_s,
    expires: expires,
  }, '']
enddef

# Pure: do the hunks' old lines stand in `lines` where the request says (the buffer holds what pi read)?
export def Matches(lines: list<string>, hunks: list<dict<any>>): bool
  for h in hunks
    var i = 0
    for text in h.old_text
      var at = h.old_start - 1 + i
      if at < 0 || at >= len(lines) || lines[at] !=# text
        return false
      endif
      i += 1
    endfor
  endfor
  return true
enddef

# Pure: `lines` with the hunks applied (bottom up, so earlier line numbers stay right).
export def Apply(lines: list<string>, hunks: list<dict<any>>): list<string>
  var out = copy(lines)
  for h in sort(copy(hunks), (a, b) => b.old_start - a.old_start)
    var at = min([max([0, h.old_start - 1]), len(out)])
    if !empty(h.old_text) && at < len(out)
      remove(out, at, min([at + len(h.old_text), len(out)]) - 1)
    endif
    extend(out, h.new_text, at)
  endfor
  return out
enddef

# Pure: the request as a unified diff, for a file that is not loaded (or no longer holds pi's lines).
export def DiffLines(r: dict<any>): list<string>
  var out = ['--- ' .. r.file, '+++ ' .. r.file .. " (pi's proposal)"]
  if r.note != ''
    out->add(printf('(no preview: %s)', r.note))
  endif
  for h in r.hunks
    out->add(printf('@@ -%d,%d +%d,%d @@', h.old_start, len(h.old_text), h.new_start, len(h.new_text)))
    out += mapnew(h.old_text, (_, l) => '-' .. l)
    out += mapnew(h.new_text, (_, l) => '+' .. l)
  endfor
  return out
enddef

# Pure: where the marks of `hunks` go in a buffer of `count` lines. Per hunk: the lines that get the sign (those
# pi would replace; for an insertion the line it goes before, or the last line), and the proposed lines as
# virtual text hung on line `at`, `below` it or (an insertion before a line) `above` it.
export def Placement(hunks: list<dict<any>>, count: number): list<dict<any>>
  var out: list<dict<any>> = []
  for h in hunks
    var n = len(h.old_text)
    var first = max([1, min([h.old_start, count])])
    var last = n > 0 ? max([first, min([h.old_start + n - 1, count])]) : first
    var text: list<string> = []
    for l in h.new_text[: MAX_VIRTUAL_LINES - 1]
      text->add('+ ' .. l)
    endfor
    if len(h.new_text) > MAX_VIRTUAL_LINES
      text->add(printf('+ … %d more lines', len(h.new_text) - MAX_VIRTUAL_LINES))
    endif
    var above = n == 0 && h.old_start <= count
    out->add({signs: range(first, last), at: above ? first : last, align: above ? 'above' : 'below', text: text})
  endfor
  return out
enddef

# Control characters of a name from a file shown as `?`: nothing pi writes can move the cursor or clear lines.
def Inert(s: string): string
  return substitute(s, '[[:cntrl:]]', '?', 'g')
enddef

def What(r: dict<any>): string
  return r.note != '' ? printf('(%s)', r.note) : printf('%d %s', r.hunks_total, r.hunks_total == 1 ? 'hunk' : 'hunks')
enddef

# Pure: the one line that tells of request `r` for `name` (the file as the user knows it): the longest form
# that fits `room` columns, else the shortest (the message line cuts it).
export def NoticeText(r: dict<any>, name: string, room: number): string
  var forms = [
    printf('(pi-ide) pi waits for your approval (%s, %d s) of %s: :PiIde approve / reject / proposal', What(r),
      r.timeout_s, name),
    printf("(pi-ide) approve pi's change to %s? :PiIde approve / reject", name),
    printf('(pi-ide) pi waits: %s (:PiIde)', name),
  ]
  for f in forms
    if strdisplaywidth(f) <= room
      return f
    endif
  endfor
  return forms[-1]
enddef

# Pure: `list` with `decision` added, newest last, at most MAX_DECISIONS.
export def AddDecision(list: list<dict<any>>, decision: dict<any>): list<dict<any>>
  var out = list + [decision]
  return len(out) > MAX_DECISIONS ? out[len(out) - MAX_DECISIONS :] : out
enddef

def Shown(file: string): string
  return Inert(fnamemodify(file, ':~:.'))
enddef

def Define()
  if defined
    return
  endif
  defined = true
  highlight default link PiIdeApproval DiffText
  highlight default link PiIdeApprovalAdd DiffAdd
  sign_define(SIGN, {text: '?', texthl: 'PiIdeApproval'})
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

# Mark the request for `file` in its buffer, if it is loaded and still holds the lines pi read, unless
# `g:pi_ide_review_marks` is 0 (Neovim's `review_marks`). Signs and virtual text only: the buffer's text, its
# 'modified' and its undo history stay as they are.
def Mark(file: string)
  Unmark(file)
  var buf = FindBuffer(file)
  var r = values(filter(copy(pending), (_, p) => p.file == file))
  if buf == 0 || empty(r) || !get(g:, 'pi_ide_review_marks', true)
    return
  endif
  var lines = getbufline(buf, 1, '$')
  if !Matches(lines, r[0].hunks)
    return
  endif
  Define()
  marked[string(buf)] = true
  var signs: list<dict<any>> = []
  for p in Placement(r[0].hunks, len(lines))
    for l in p.signs
      signs->add({buffer: buf, group: SIGN_GROUP, name: SIGN, lnum: l, priority: 9})
    endfor
    for t in p.text
      prop_add(p.at, 0, {type: PROP, bufnr: buf, text: t, text_align: p.align})
    endfor
  endfor
  sign_placelist(signs)
enddef

# The request approve/reject answer: the one shown, if it still waits; else {} and the one that waits instead
# (or {}). An answer never goes to a request the user was not shown.
export def Target(waiting: dict<dict<any>>, seen: dict<any>): list<dict<any>>
  var r = empty(seen) ? {} : get(waiting, string(seen.pi_pid), {})
  if !empty(r) && r.id ==# seen.id
    return [r, {}]
  endif
  var best: dict<any> = {}
  for p in values(waiting)
    if empty(best) || p.expires < best.expires
      best = p
    endif
  endfor
  return [{}, best]
enddef

# The request shown first: the one that runs out first (Target's rule, with no request shown).
def Current(): dict<any>
  return Target(pending, {})[1]
enddef

def Bind(r: dict<any>)
  shown = {pi_pid: r.pi_pid, id: r.id}
enddef

# A request arrived: told once. It becomes the one approve/reject answer only when no request shown to the
# user is still unanswered (they may be typing their answer to that one).
def Tell(r: dict<any>)
  const key = printf('%d:%s', r.pi_pid, r.id)
  if get(told, key, false)
    return
  endif
  told[key] = true
  if empty(shown)
    Bind(r)
  endif
  pi_ide#Notice(NoticeText(r, Shown(r.file), max([v:echospace - 1, 10])))
enddef

# Start (pi_ide/inbox.vim): requests come from `state_dir`; `Find` gives the loaded buffer of a path;
# `Changed` runs after a decision (a state write now, the statusline).
export def Start(state_dir: string, Find: func(string): number, Changed: func)
  dir = state_dir
  FindBuffer = Find
  OnChange = Changed
enddef

# A decoded request from `pi-<pid>.approval.json` of a live pi of this user, read at `now` (seconds). Returns
# '' or why it is not used. One naming another editor is not ours: forgotten, nothing said. A file that
# replaced a request and cannot be read as one leaves nothing known to wait on: forgotten too.
export def Receive(msg: any, pid: number, now: number): string
  var [r, bad] = Validate(msg, pid)
  if bad != ''
    Forget(pid)
    return bad
  endif
  if r.editor_pid != getpid()
    Forget(pid)
    return ''
  endif
  if !empty(filter(copy(decisions), (_, d) => d.pi_pid == pid && d.id ==# r.id))
    return ''
  endif
  if r.expires <= now
    Forget(pid)
    return printf('the request expired %d s ago', float2nr(now - r.expires))
  endif
  var before = get(pending, string(pid), {})
  if !empty(before) && before.file != r.file
    Unmark(before.file)
  endif
  pending[string(pid)] = r
  Mark(r.file)
  Tell(r)
  return ''
enddef

# pi `pid` waits on nothing any more (its request removed, another editor asked, pi gone).
export def Forget(pid: number)
  var r = get(pending, string(pid), {})
  if !empty(r)
    remove(pending, string(pid))
    Unmark(r.file)
  endif
enddef

# Drop requests whose time ran out or whose pi is no longer alive (`Alive(pid)`), at `now`: pi removes its
# file then, but a pi killed mid-wait cannot. True when one was dropped.
export def Prune(now: number, Alive: func(number): bool): bool
  var dropped = false
  for r in values(pending)
    if r.expires <= now || !Alive(r.pi_pid)
      Forget(r.pi_pid)
      dropped = true
    endif
  endfor
  return dropped
enddef

# Not listening any more: no request counts.
export def Reset()
  for r in values(pending)
    Forget(r.pi_pid)
  endfor
enddef

# :PiIde approve | reject ("accept" or "reject"). Returns the one line to tell the user.
export def Decide(decision: string): string
  var [r, instead] = Target(pending, shown)
  if empty(r)
    if empty(instead)
      shown = {}
      return '(pi-ide) pi is not waiting for your approval'
    endif
    # The request the user saw has ended (timed out, answered elsewhere): this one was never shown to them.
    Bind(instead)
    var verb = decision == 'accept' ? 'approve' : 'reject'
    return printf('(pi-ide) not %s: the request you saw is gone; pi now asks about %s (%s): :PiIde %s again',
      decision == 'accept' ? 'approved' : 'rejected', Shown(instead.file), What(instead), verb)
  endif
  shown = {}
  Forget(r.pi_pid)
  var name = Shown(r.file)
  # pi may have ended the wait since the last poll: then there is nothing to answer.
  if getftype(printf('%s/pi-%d.approval.json', dir, r.pi_pid)) != 'file'
    return printf("(pi-ide) pi's request to change %s is gone (answered in pi, or pi stopped); nothing done", name)
  endif
  if localtime() >= r.expires
    return printf("(pi-ide) pi's request to change %s ran out (%d s); pi did not apply it", name, r.timeout_s)
  endif
  decisions = AddDecision(decisions, {pi_pid: r.pi_pid, id: r.id, decision: decision})
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
  var r = Target(pending, shown)[0]
  if empty(r)
    r = Current()
  endif
  if empty(r)
    return '(pi-ide) pi is not waiting for your approval'
  endif
  Bind(r)
  var back = win_getid()
  var buf = FindBuffer(r.file)
  if buf > 0 && r.note == '' && Matches(getbufline(buf, 1, '$'), r.hunks)
    var proposed = Apply(getbufline(buf, 1, '$'), r.hunks)
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
    Scratch(DiffLines(r), 'pi-ide://proposal.diff' .. r.file, 'diff')
  endif
  win_gotoid(back)
  return ''
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
  return [printf('pi waits for your approval: %s of %s (%s), %d s left. :PiIde approve / reject / proposal',
    r.created ? 'creation' : Inert(r.tool), Shown(r.file), What(r), max([0, float2nr(r.expires) - localtime()]))]
enddef

# For tests.
export def Debug(): dict<any>
  return {pending: pending, decisions: decisions, shown: shown}
enddef
