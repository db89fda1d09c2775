vim9script
# pi_ide/ask.vim: protocol v0.5, the model shows a place and asks what is open. While pi's `ide_show` or
# `ide_open_files` tool waits (at most 1 s), pi writes `pi-<pid>.ask.json` naming this Vim; the inbox's poll
# (pi_ide/inbox.vim) reads it like pi's other files and hands it here. Each request is answered once, in
# `<state dir>/<pid>.answers.json` (written like the state file, by pi_ide/writer.vim), keyed by pi and id.
#   show: the place goes to the quickfix list ("pi-ide: pi's places", appended while it stays pi's, a new list
#         in the stack otherwise, so the user's own list stays one `:colder` away). Not the location list: it
#         belongs to a window, and pi must not pick (or change) one. One inert notice; the current window,
#         buffer and cursor stay, no file is loaded, unless g:pi_ide_show_follow is 1 (then it opens).
#   ask:  the loaded file buffers with their modified flag and changedtick, the current one first, and ALE's
#         diagnostics (dated as in the state file) of the named file, of every one, or none.
# Nothing is opened, created or run because pi said so (but the user's follow). Nothing runs per keystroke:
# only when the poll sees a new request file. Validation is pure (Validate); the rest is the UI.

import autoload 'pi_ide/writer.vim'
import autoload 'pi_ide/diagnostics.vim'
import autoload 'pi_ide/approval_rules.vim'

# PROTOCOL.md, Limits (src/protocol/limits.ts; held together by test/vim/show-ask.test.ts).
export const MAX_BYTES = 64 * 1024
export const MAX_REQUESTS = 8
export const MAX_NOTE_BYTES = 1024
export const MAX_ANSWERS = 16
export const MAX_FILE_BYTES = 1024 * 1024
export const MAX_BUFFERS = 200
export const MAX_ITEMS = 200
export const MAX_ID_BYTES = 64
export const MAX_LINE = 2147483647
# How many answered requests are remembered (each is answered once).
const MAX_DONE = 64
export const QF_TITLE = "pi-ide: pi's places"

var dir = ''
# Newest last: the answers as written.
var answers: list<dict<any>> = []
# '<pi key>:<id>' -> 1, and their order.
var done: dict<number> = {}
var done_order: list<string> = []
# The quickfix list pi's places go to, while it exists (0: none yet).
var qf_id = 0
# The answers file's write: one at a time (the writer's temp paths are fixed); another asked for meanwhile.
var writing = false
var again = false

def IsNull(v: any): bool
  return type(v) == v:t_none
enddef

# A string equal to `s` (json_decode gives any type: == across types is an error in Vim9).
def IsText(v: any, s: string): bool
  return type(v) == v:t_string && v ==# s
enddef

def IsLine(v: any): bool
  return type(v) == v:t_number && v >= 1 && v <= MAX_LINE
enddef

def IsPath(v: any): bool
  return type(v) == v:t_string && v =~# '^/' && strlen(v) <= 4095
enddef

# Pure: [one request, ''] or [{}, why it is malformed].
def ValidateRequest(r: any): list<any>
  if type(r) != v:t_dict
    return [{}, 'a request is not an object']
  endif
  var id = get(r, 'id', 0)
  if type(id) != v:t_string || strlen(id) < 1 || strlen(id) > MAX_ID_BYTES
    return [{}, printf("a request's id is not 1 to %d bytes", MAX_ID_BYTES)]
  endif
  var expires = get(r, 'expires', v:null)
  if type(expires) != v:t_number && type(expires) != v:t_float
    return [{}, 'a request has no expires']
  endif
  var kind = get(r, 'kind', '')
  if IsText(kind, 'show')
    var file = get(r, 'file', 0)
    var line = get(r, 'line', 0)
    if !IsPath(file) || !IsLine(line)
      return [{}, 'a show has no absolute file and line']
    endif
    var e = get(r, 'end_line', v:null)
    if !IsNull(e) && (!IsLine(e) || e < line)
      return [{}, "a show's end_line is not a line at or after its line"]
    endif
    var note = get(r, 'note', v:null)
    if !IsNull(note) && (type(note) != v:t_string || strlen(note) > MAX_NOTE_BYTES)
      return [{}, printf("a show's note is not text of at most %d bytes", MAX_NOTE_BYTES)]
    endif
    return [{id: id, kind: 'show', file: file, line: line, end_line: e, note: note, expires: expires}, '']
  elseif IsText(kind, 'ask')
    var d = get(r, 'diagnostics', '')
    if !IsText(d, 'file') && !IsText(d, 'all') && !IsText(d, 'none')
      return [{}, "an ask's diagnostics is not file, all or none"]
    endif
    var file = get(r, 'file', v:null)
    if d == 'file' && !IsPath(file)
      return [{}, "an ask for a file's diagnostics names no absolute file"]
    endif
    return [{id: id, kind: 'ask', diagnostics: d, file: d == 'file' ? file : v:null, expires: expires}, '']
  endif
  return [{}, "a request's kind is not show or ask"]
enddef

# Pure: pi's request file, as decoded, for pi `key` (the name's: writer.PiKeyOfName). Returns [{editor_pid,
# requests}, problem]: the malformed requests left out (the first's problem said), or [{}, why] when the file
# is refused whole.
export def Validate(msg: any, key: string): list<any>
  if type(msg) != v:t_dict || !IsText(get(msg, 'kind', 0), 'pi-ask')
    return [{}, 'kind is not "pi-ask"']
  endif
  var pid = get(msg, 'pid', 0)
  if type(pid) != v:t_number || pid != writer.PidOfKey(key)
    return [{}, 'pid does not match the file name']
  endif
  var disagree = writer.NsDisagrees(msg, key)
  if disagree != ''
    return [{}, disagree]
  endif
  if type(get(msg, 'editor_pid', 0)) != v:t_number
    return [{}, 'editor_pid is not a pid']
  endif
  var requests = get(msg, 'requests', 0)
  if type(requests) != v:t_list || len(requests) > MAX_REQUESTS
    return [{}, printf('requests is not a list of at most %d', MAX_REQUESTS)]
  endif
  var out: list<dict<any>> = []
  var problem = ''
  for raw in requests
    var [r, bad] = ValidateRequest(raw)
    if bad == ''
      out->add(r)
    elseif problem == ''
      problem = bad
    endif
  endfor
  return [{editor_pid: msg.editor_pid, requests: out}, problem]
enddef

# `<pid>.answers.json` (src/protocol/show-ask.ts, editorAnswersFileName).
export def FileName(pid: number): string
  return printf('%d.answers.json', pid)
enddef

def RememberDone(key: string)
  done[key] = 1
  done_order->add(key)
  while len(done_order) > MAX_DONE
    remove(done, remove(done_order, 0))
  endwhile
enddef

# The loaded file buffers: [{buf, file, tick, lines, modified}], `current` first. Files only: no terminals,
# help, quickfix, prompts, scratch buffers, URL-like names (as pi_ide/buffers.vim's).
def FileBuffers(current: number): list<dict<any>>
  var out: list<dict<any>> = []
  var infos = getbufinfo({bufloaded: 1})
  sort(infos, (a, b) => a.bufnr == current ? -1 : b.bufnr == current ? 1 : a.bufnr - b.bufnr)
  for info in infos
    var name = info.name
    if name == '' || getbufvar(info.bufnr, '&buftype') != '' || name =~ '^\a[[:alnum:]+.-]*://'
      continue
    endif
    out->add({buf: info.bufnr, file: fnamemodify(name, ':p'), tick: info.changedtick, lines: info.linecount,
      modified: info.changed})
  endfor
  return out
enddef

# Is the buffer entry `e` the buffer of `file` (by name, then by real path)?
def Shows(e: dict<any>, file: string): bool
  return e.file ==# file || resolve(e.file) ==# resolve(file)
enddef

def AnswerAsk(r: dict<any>): dict<any>
  var current = bufnr('%')
  var all = FileBuffers(current)
  var room = MAX_ITEMS
  var out: list<dict<any>> = []
  for e in all[: MAX_BUFFERS - 1]
    var b: dict<any> = {file: e.file, modified: e.modified != 0, version: e.tick, lines_total: e.lines,
      active: e.buf == current}
    if r.diagnostics == 'all' || (r.diagnostics == 'file' && Shows(e, r.file))
      # ALE's diagnostics as the state file has them: dated with the changedtick they were computed for.
      var d = diagnostics.Collect(e.buf)
      if !IsNull(d)
        if len(d.items) > room
          d = {version: d.version, total: d.total, items: room > 0 ? d.items[: room - 1] : []}
        endif
        room -= len(d.items)
      endif
      b.diagnostics = d
    endif
    out->add(b)
  endfor
  return {kind: 'ask', buffers: out, buffers_total: len(all)}
enddef

# The user's g:pi_ide_show_follow: open the place in the current window (a split when it holds unsaved
# changes 'hidden' cannot keep, or is no file window). Returns whether it opened.
def Follow(r: dict<any>): bool
  var split = &buftype != '' || (&modified && !&hidden)
  # 'A': no swap-file ATTENTION prompt; nothing pi asks for may block the user with a question.
  var shortmess = &shortmess
  var ok = true
  try
    set shortmess+=A
    execute printf('%s +%d %s', split ? 'split' : 'edit', r.line, fnameescape(r.file))
  catch
    ok = false
  finally
    &shortmess = shortmess
  endtry
  return ok
enddef

def AnswerShow(r: dict<any>): dict<any>
  var text = IsNull(r.note) ? '' : approval_rules.Inert(r.note)
  var item: dict<any> = {filename: r.file, lnum: r.line, col: 1, text: 'pi: ' .. text}
  if !IsNull(r.end_line)
    item.end_lnum = r.end_line
  endif
  var ours = qf_id == 0 ? 0 : getqflist({id: qf_id}).id
  if ours != 0
    setqflist([], 'a', {id: ours, items: [item]})
  else
    setqflist([], ' ', {title: QF_TITLE, items: [item]})
    qf_id = getqflist({id: 0}).id
  endif
  var size = getqflist({id: qf_id, size: 0}).size
  var opened = get(g:, 'pi_ide_show_follow', 0) == 1 && Follow(r)
  var lines = !IsNull(r.end_line) && r.end_line != r.line ? printf('%d-%d', r.line, r.end_line)
    : string(r.line)
  var name = approval_rules.Inert(fnamemodify(r.file, ':~:.'))
  # A new message line, not one more under an earlier notice still shown: that would scroll into a hit-enter
  # prompt, and the poll's callback would wait in it.
  redraw
  pi_ide#Notice(printf('(pi-ide) pi shows %s:%s%s%s', name, lines, IsNull(r.note) ? '' : ': ' .. text,
    opened ? '' : printf(' (:cc %d)', size)), 'None')
  return {kind: 'show', status: opened ? 'opened' : 'listed', list: 'quickfix'}
enddef

# The answers file's text, the oldest answers dropped until it fits MAX_FILE_BYTES; '' when none fits.
def Encode(pid: number): string
  while true
    var text = json_encode({protocol: '0.5', kind: 'editor-answers', pid: pid,
      timestamp: localtime(), answers: answers})
    if strlen(text) <= MAX_FILE_BYTES
      return text
    endif
    if empty(answers)
      return ''
    endif
    remove(answers, 0)
  endwhile
  return ''
enddef

def WriteAnswers()
  if writing
    again = true
    return
  endif
  var text = Encode(getpid())
  if text == '' || dir == ''
    return
  endif
  writing = true
  writer.WriteNamed(dir, FileName(getpid()), text, writer.Me(), (res: list<string>) => {
    writing = false
    if !empty(res)
      pi_ide#WarnOnce('answers', '(pi-ide) cannot answer pi''s show or ask: ' .. res[0])
    endif
    if again
      again = false
      WriteAnswers()
    endif
  })
enddef

# Answer each new request of pi `key`'s request file (decoded: `msg`) that names this Vim. The inbox checked
# the file (ours, private, not too large) and that pi lives. Returns '' or why it (or a request in it) was
# not used.
export def Receive(msg: any, key: string, now: float): string
  var [m, bad] = Validate(msg, key)
  if empty(m)
    return bad
  endif
  if m.editor_pid != getpid()
    return ''
  endif
  var fields = writer.PiFields(key, msg)
  var answered = false
  for r in m.requests
    var dkey = key .. ':' .. r.id
    if has_key(done, dkey) || r.expires < now
      continue
    endif
    RememberDone(dkey)
    var a: dict<any>
    try
      a = r.kind == 'show' ? AnswerShow(r) : AnswerAsk(r)
    catch
      a = r.kind == 'show' ? {kind: 'show', status: 'refused', list: v:null,
        reason: 'the editor failed: ' .. v:exception} : {kind: 'ask', buffers: [], buffers_total: 0}
    endtry
    answers->add(extend(a, fields)->extend({id: r.id}))
    answered = true
  endfor
  if len(answers) > MAX_ANSWERS
    answers = answers[len(answers) - MAX_ANSWERS :]
  endif
  if answered
    WriteAnswers()
  endif
  return bad
enddef

# Start answering into `state_dir`.
export def Start(state_dir: string)
  dir = state_dir
enddef

# The places pi showed, for tests and :PiIde: the quickfix list's id (0: none yet).
export def QuickfixId(): number
  return qf_id
enddef

# Stop: forget every answer (the file goes with the state file: writer.Remove).
export def Reset()
  dir = ''
  answers = []
  done = {}
  done_order = []
  writing = false
  again = false
enddef

