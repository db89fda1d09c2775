vim9script
# pi_ide/send.vim: `:PiIdeSend` (protocol v0.5, send to pi). Hands the pi connected to this Vim the selection (a
# range, from visual mode), the line under the cursor, ALE's diagnostic there, pi's hunk there or the whole file,
# with the words typed after the command: `<state dir>/<pid>.send.json`, written like the state file
# (pi_ide/writer.vim: 0600, a private temp then one rename, in a checked directory; removed with the state file).
# pi puts it into its input as a draft, or with `!` sends it at once, and says what became of it in its message
# (`sent`): Answered() shows that in one line. An excluded file is refused by pi (it holds the ignore rules) and
# said so here in one line. No autocmd, no timer. The Neovim client's rules (editors/nvim/lua/pi-ide/send.lua).

import autoload 'pi_ide/writer.vim'
import autoload 'pi_ide/state.vim'
import autoload 'pi_ide/inbox.vim'
import autoload 'pi_ide/review.vim'
import autoload 'pi_ide/diagnostics.vim'

# What `item.text` may take once JSON-encoded: the selection's cap (MAX_SELECTION_TEXT_BYTES).
export const MAX_TEXT_BYTES = 256 * 1024
# The typed prompt's cap in bytes (MAX_SEND_PROMPT_BYTES).
export const MAX_PROMPT_BYTES = 16 * 1024

# The identity (writer.PiKeyOfName) of the pi picked when several name this Vim.
var chosen = ''
# Ids sent and not yet answered.
var pending: dict<bool> = {}
var count = 0
# The last send: {id, pi, kind, file, fate}.
var last: dict<any> = {}
# One write of the send file at a time: the writer's replace finishes in a job, and a second write of the same file
# started before the first's callback ran would share (and lose) its temp. A send given meanwhile waits in `queued`
# ([dir, text, id]) and is written next; one given after it replaces it (the file holds one send: pi takes the newest).
var in_flight = false
var queued: list<any> = []

const FATES = {
  draft: "in pi's input as a draft",
  prompt: 'sent to pi as a prompt',
  'follow-up': 'queued for pi as a follow-up',
}

# Pure: [the form ("diagnostic", "hunk", "file" or ""), the prompt] of the command's arguments.
export def ParseArgs(args: string): list<string>
  var a = trim(args)
  var m = matchlist(a, '^@\(\a\+\)\%(\s\+\|$\)\(.*\)$')
  if !empty(m) && index(['diagnostic', 'hunk', 'file'], m[1]) >= 0
    return [m[1], m[2]]
  endif
  return ['', a]
enddef

def Say(text: string)
  pi_ide#Notice(text)
enddef

# The diagnostic of ALE's under line `lnum` of `buf` (the most severe), or {}.
def DiagnosticAt(buf: number, lnum: number): dict<any>
  var found = filter(mapnew(diagnostics.Current(buf), (_, d) => diagnostics.ToItem(d)),
    (_, d) => d.line <= lnum && lnum <= (d.end_line == v:null ? d.line : d.end_line))
  var rank = {error: 0, warning: 1, info: 2, hint: 3}
  sort(found, (a, b) => get(rank, a.severity, 4) - get(rank, b.severity, 4))
  return empty(found) ? {} : found[0]
enddef

# [the item to send, ''] or [{}, why not]. `range`: [first, last] of a selection, or [].
export def Item(form: string, range: list<number>): list<any>
  var buf = bufnr()
  var name = bufname(buf)
  if !state.IsFileBuffer(&buftype, name)
    return [{}, '(pi-ide) not a file buffer: nothing sent']
  endif
  var file = fnamemodify(name, ':p')
  var row = line('.')
  var [kind, first, last_line, message] = ['line', row, row, v:null]
  if form == 'file'
    [kind, first, last_line] = ['file', 1, line('$')]
  elseif form == 'diagnostic'
    var d = DiagnosticAt(buf, row)
    if empty(d)
      return [{}, '(pi-ide) no diagnostic under the cursor: nothing sent']
    endif
    [kind, first, message] = ['diagnostic', d.line, d.message]
    last_line = max([first, d.end_line == v:null ? d.line : d.end_line])
  elseif form == 'hunk'
    var h = review.HunkAt(buf, row)
    if empty(h)
      return [{}, "(pi-ide) no hunk of pi's under the cursor: nothing sent"]
    endif
    [kind, first, last_line] = ['hunk', h[0], h[1]]
  elseif !empty(range)
    [kind, first, last_line] = ['selection', range[0], range[1]]
  endif
  last_line = max([first, min([last_line, line('$')])])
  var [text, cut] = state.Fit(join(getline(first, last_line), "\n"), MAX_TEXT_BYTES)
  return [{kind: kind, file: file, start_line: first, end_line: last_line, text: text, truncated: cut,
    message: message}, '']
enddef

# Write the request for `pi` (inbox.All()'s entry). Returns '' once the write is under way, or why not.
export def Write(pi: dict<any>, item: dict<any>, mode: string, prompt: string): string
  var dir = writer.StateDir(getenv('XDG_RUNTIME_DIR') ?? '')
  var problem = writer.EnsureDir(dir, writer.Me())
  if !empty(problem)
    return '(pi-ide) not sending: ' .. problem[0]
  endif
  count += 1
  var id = printf('s%d-%d-%d', getpid(), localtime(), count)
  var request = extend({protocol: '0.5', kind: 'send', pid: getpid()}, pi.fields)
  extend(request, {id: id, timestamp: localtime(), mode: mode, prompt: state.Cut(prompt, MAX_PROMPT_BYTES),
    item: item})
  pending[id] = true
  last = {id: id, pi: pi.pid, kind: item.kind, file: item.file, fate: v:null}
  Put(dir, json_encode(request), id)
  return ''
enddef

# One write of the send file at a time (see in_flight).
def Put(dir: string, text: string, id: string)
  if in_flight
    queued = [dir, text, id]
    return
  endif
  in_flight = true
  writer.WriteNamed(dir, printf('%d.send.json', getpid()), text, writer.Me(), (res) => {
    in_flight = false
    if !empty(res)
      if has_key(pending, id)
        remove(pending, id)
      endif
      Say('(pi-ide) not sending: ' .. res[0])
    endif
    if !empty(queued)
      var [d, t, i] = queued
      queued = []
      Put(d, t, i)
    endif
  })
enddef

# Which pi: the only one naming this Vim, the one picked before while it still does, or ask once. {} when none
# (said here) or the user picked none.
def WhichPi(): dict<any>
  var all = inbox.All()
  if empty(all)
    Say('(pi-ide) no pi is connected to this Vim: nothing sent')
    return {}
  endif
  if len(all) == 1
    return all[0]
  endif
  for p in all
    if p.key ==# chosen
      return p
    endif
  endfor
  var lines = ['Send to which pi?']
  for i in range(len(all))
    var p = all[i]
    lines->add(printf('%d. pi %d%s in %s', i + 1, p.pid, has_key(p.fields, 'pi_ns') ? ' (' .. p.fields.pi_ns .. ')'
      : '', p.cwd))
  endfor
  var n = inputlist(mapnew(lines, (_, l) => substitute(l, '[[:cntrl:]]', '?', 'g')))
  if n < 1 || n > len(all)
    return {}
  endif
  chosen = all[n - 1].key
  return all[n - 1]
enddef

# :PiIdeSend[!] [@diagnostic|@hunk|@file] [prompt]. `range`: how many line numbers were given (<range>), and the
# lines (<line1>, <line2>).
export def Command(bang: bool, nrange: number, line1: number, line2: number, args: string)
  try
    var [form, prompt] = ParseArgs(args)
    var [item, why] = Item(form, nrange > 0 ? [min([line1, line2]), max([line1, line2])] : [])
    if why != ''
      Say(why)
      return
    endif
    var pi = WhichPi()
    if empty(pi)
      return
    endif
    var problem = Write(pi, item, bang ? 'now' : 'draft', prompt)
    if problem != ''
      Say(problem)
    endif
  catch
    Say('(pi-ide) send failed: ' .. v:exception)
  endtry
enddef

# Complete the form after :PiIdeSend.
export def Complete(arg: string, line: string, _: number): string
  return line =~ '^\s*\S\+\s\+\S*$' ? "@diagnostic\n@hunk\n@file" : ''
enddef

# A pi message naming us (validated by the inbox): if it answers one of our sends, say what became of it.
export def Answered(msg: dict<any>)
  var sent = get(msg, 'sent', v:null)
  if type(sent) != v:t_dict || type(get(sent, 'id', 0)) != v:t_string || !has_key(pending, sent.id)
    return
  endif
  if get(sent, 'editor_pid', 0) != getpid()
    return
  endif
  remove(pending, sent.id)
  var fate = type(get(sent, 'fate', 0)) == v:t_string ? sent.fate : '?'
  if get(last, 'id', '') ==# sent.id
    last.fate = fate
  endif
  var text = ''
  if has_key(FATES, fate)
    text = printf('(pi-ide) %s %s', get(last, 'kind', 'send'), FATES[fate])
  elseif fate == 'excluded'
    text = "(pi-ide) not sent: the file is excluded by pi's ignore rules"
  else
    text = '(pi-ide) pi refused the send: ' .. (type(get(sent, 'reason', 0)) == v:t_string ? sent.reason : fate)
  endif
  # pi's words shown inert: nothing in them moves the cursor or clears lines.
  pi_ide#Notice(substitute(text, '[[:cntrl:]]', '?', 'g'), has_key(FATES, fate) ? 'None' : 'WarningMsg')
enddef

# For :PiIde: the last send and its fate.
export def SummaryLines(): list<string>
  if empty(last)
    return []
  endif
  return [substitute(printf('last send: %s of %s to pi %d: %s', last.kind, fnamemodify(last.file, ':~:.'), last.pi,
    last.fate == v:null ? 'no answer yet' : last.fate), '[[:cntrl:]]', '?', 'g')]
enddef

# For tests: the last send and its fate.
export def Debug(): dict<any>
  return {last: last, chosen: chosen, pending: keys(pending)}
enddef
