vim9script
# pi_ide/approval_rules.vim: protocol v0.4, the pure rules of pi's approval requests (`pi-<pid>.approval.json`): data
# in, data out, no buffer, sign or window touched. Which requests and hunks count (Validate, ValidHunk, OverCap: the
# change set's hunks too, pi_ide/review_rules.vim), whether a buffer's lines are the ones pi read (Matches), the
# proposal applied or as a diff, where its marks go (Placement), the notice's text, the decisions kept for pi, and
# which request an answer is for (Target). pi_ide/approval.vim is the UI over them (signs, virtual text, notices,
# commands). The Neovim client's rules (editors/nvim/lua/pi-ide/approval.lua).

import autoload 'pi_ide/writer.vim'
import autoload 'pi_ide/merge.vim'

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
# PROTOCOL.md `files[].note` (wire.ts REVIEW_NOTES): pi's notes on a change set's entry or a request; any other
# note makes the entry malformed (dropped; a request refused), never shown.
export const NOTES = ['binary', 'too large', 'unreadable']

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

# Pure: [request, ''] from a decoded approval file of pi `pi` (its identity, writer.PiKeyOfName, or a bare pid),
# or [{}, why it is refused]. Malformed hunks are dropped (the rest still shows); the request is still asked
# without them.
export def Validate(msg: any, pi: any): list<any>
  var key = writer.Key(pi)
  var pid = writer.PidOfKey(key)
  if type(msg) != v:t_dict || !IsString(get(msg, 'kind', 0), 'pi-approval')
    return [{}, 'not a pi approval request']
  endif
  if type(get(msg, 'pid', '')) != v:t_number || msg.pid != pid
    return [{}, 'its pid is not the one in its name']
  endif
  var ns_bad = writer.NsDisagrees(msg, key)
  if ns_bad != ''
    return [{}, ns_bad]
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
  var note = get(r, 'note', v:null)
  if type(note) != v:t_none && (type(note) != v:t_string || index(NOTES, note) < 0)
    return [{}, 'request.note: not binary, too large or unreadable']
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
  return [extend(writer.PiFields(key, msg), {
    pi_key: key,
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
  }), '']
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
# virtual text hung on line `at`, `below` it or (an insertion before a line) `above` it. `places` (Against, issue
# 26: a buffer with unsaved changes) moves each hunk to its place in the buffer ({row, rows, touches}); `touches`
# says the hunk touches the user's unsaved lines.
export def Placement(hunks: list<dict<any>>, count: number, places: list<dict<any>> = []): list<dict<any>>
  var out: list<dict<any>> = []
  for i in range(len(hunks))
    var h = hunks[i]
    var start = empty(places) ? h.old_start : places[i].row + 1
    var n = empty(places) ? len(h.old_text) : places[i].rows
    var first = max([1, min([start, count])])
    var last = n > 0 ? max([first, min([start + n - 1, count])]) : first
    var text: list<string> = []
    for l in h.new_text[: MAX_VIRTUAL_LINES - 1]
      text->add('+ ' .. l)
    endfor
    if len(h.new_text) > MAX_VIRTUAL_LINES
      text->add(printf('+ … %d more lines', len(h.new_text) - MAX_VIRTUAL_LINES))
    endif
    var above = n == 0 && start <= count
    out->add({signs: range(first, last), at: above ? first : last, align: above ? 'above' : 'below', text: text,
      touches: !empty(places) && places[i].touches})
  endfor
  return out
enddef

# Pure (issue 26): the proposal against the user's unsaved buffer. `disk` is the file as it is (what pi proposed
# from: the hunks' old lines stand there), `ours` the buffer's lines. The user's changes are the line diff disk ->
# buffer, and pi_ide/merge.vim's Plan (the merge's own rule: placement and "touches") decides. Returns {places: one
# per hunk, in order ({row: 0-based first row in `ours`, rows, touches}): a hunk that touches no change of the
# user's where the merge would put it (its replaced lines, moved by the user's line-count changes above); one that
# touches the user's lines on those lines (rows 0: the user deleted them, `row` is where they were); proposed:
# `ours` with the hunks that touch nothing placed (the proposal as the user would see it)}.
# {} when the hunks are not ascending and apart (pi's never overlap; the merge's rule needs them so).
export def Against(disk: list<string>, ours: list<string>, given: list<dict<any>>): dict<any>
  var at = 1
  for h in given
    if h.old_start < at
      return {}
    endif
    at = h.old_start + len(h.old_text)
  endfor
  # Plan counts a hunk's lines by `old_lines`: taken from its text, as everything else here takes them.
  var hunks = mapnew(given, (_, h) => ({old_start: h.old_start, old_lines: len(h.old_text), new_text: h.new_text}))
  var all = merge.Plan(disk, ours, hunks)
  var places: list<dict<any>> = []
  if all.conflicts_total == 0
    places = mapnew(all.edits, (_, ed) => ({row: ed.from, rows: ed.to - ed.from, touches: false}))
  else
    # Each hunk alone: its place depends on the user's changes only, and a conflict is then named in `ours`' rows
    # (the plan names the merged buffer's, moved by pi's hunks above it).
    for h in hunks
      var one = merge.Plan(disk, ours, [h])
      places->add(empty(one.edits)
        ? {row: one.conflicts[0].line - 1, rows: one.conflicts[0].lines, touches: true}
        : {row: one.edits[0].from, rows: one.edits[0].to - one.edits[0].from, touches: false})
    endfor
  endif
  var proposed = copy(ours)
  for ed in reverse(copy(all.edits))
    proposed = slice(proposed, 0, ed.from) + ed.lines + slice(proposed, ed.to)
  endfor
  return {places: places, proposed: proposed}
enddef

# Pure (issue 26): [long, short]: the one line naming the user's unsaved lines the proposal touches (`places` from
# Against), and a short form for a narrow message line; ['', ''] when it touches none.
export def TouchPhrase(places: list<dict<any>>): list<string>
  # The touched spans in order ([from, to), 0-based rows), those that overlap or meet joined: one place named once.
  var spans: list<list<number>> = []
  var n = 0
  for p in places
    if p.touches
      n += 1
      var to = p.row + max([p.rows, 1])  # where the user deleted: the row the place stands on
      if !empty(spans) && p.row <= spans[-1][1]
        spans[-1][1] = max([spans[-1][1], to])
      else
        spans->add([p.row, to])
      endif
    endif
  endfor
  if n == 0
    return ['', '']
  endif
  var ranges: list<string> = []
  for [from, to] in spans
    ranges->add(to == from + 1 ? string(to) : printf('%d-%d', from + 1, to))
  endfor
  var where = (len(ranges) == 1 && stridx(ranges[0], '-') < 0 ? 'line ' : 'lines ') .. join(ranges[: 4], ', ')
    .. (len(ranges) > 5 ? ', …' : '')
  var verb = len(places) == 1 ? 'hunk touches' : n == 1 ? 'hunks touches' : 'hunks touch'
  var short = printf('%d of %d %s your unsaved %s', n, len(places), verb, where)
  return [short .. ": if accepted, the file gets pi's text and your buffer keeps yours there", short]
enddef

# Control characters of a name from a file shown as `?`: nothing pi writes can move the cursor or clear lines.
export def Inert(s: string): string
  return substitute(s, '[[:cntrl:]]', '?', 'g')
enddef

export def What(r: dict<any>): string
  return r.note != '' ? printf('(%s)', r.note) : printf('%d %s', r.hunks_total, r.hunks_total == 1 ? 'hunk' : 'hunks')
enddef

# Pure: the one line that tells of request `r` for `name` (the file as the user knows it): the longest form
# that fits `room` columns, else the shortest (the message line cuts it).
export def NoticeText(r: dict<any>, name: string, room: number): string
  # Issue 26: the hunks that touch the user's unsaved lines (`touch`, `touch_short`: TouchPhrase) in every form.
  var long = get(r, 'touch', '') == '' ? '' : '; ' .. r.touch
  var short = get(r, 'touch_short', '') == '' ? '' : ' (' .. r.touch_short .. ')'
  var forms = [
    printf('(pi-ide) pi waits for your approval (%s, %d s) of %s%s: :PiIde approve / reject / proposal', What(r),
      r.timeout_s, name, long),
    printf("(pi-ide) approve pi's change to %s%s? :PiIde approve / reject", name, short),
    printf('(pi-ide) pi waits: %s%s (:PiIde)', name, short),
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

# The request approve/reject answer: the one shown, if it still waits; else {} and the one that waits instead
# (or {}). An answer never goes to a request the user was not shown.
export def Target(waiting: dict<dict<any>>, seen: dict<any>): list<dict<any>>
  var r = empty(seen) ? {} : get(waiting, seen.pi_key, {})
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
