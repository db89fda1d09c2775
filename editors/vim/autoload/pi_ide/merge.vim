vim9script
# pi_ide/merge.vim: pi's change merged into a buffer with unsaved changes (issue 26; PROTOCOL.md "v0.5: pi's
# change merged into an unsaved buffer"), the rule of the Neovim client's pi-ide.inbox.merge. pi's message carries,
# with each change, its hunks (the file before pi's tool -> after it) and the SHA-256 of what the tool wrote. A
# three-way merge of line ranges:
#
# * base: the file before pi's change(s), rebuilt from the file on disk (one verified read, its hash checked) by
#   taking pi's hunks back out, newest change first;
# * ours: the buffer; the user's changes are the line diff base -> buffer (Diff: Vim 9.0 has no diff());
# * theirs: pi's hunks from base.
#
# A pi hunk no user change touches goes into the buffer at its place moved by the user's line-count changes above
# it; one that touches the user's lines is left out (a conflict, reported with the buffer's lines there). The merged
# hunks are one undo step of their own (an undo break before and after, in the buffer's own context, hidden buffers
# too); the buffer stays modified and is never written. Pure functions first, the buffer last.

# A conflict lists at most this many of the user's lines, each cut at MAX_LINE_BYTES; at most MAX_CONFLICTS per
# report. pi's hunks taken per change: the change set's cap per file.
export const MAX_CONFLICTS = 20
export const MAX_CONFLICT_LINES = 20
export const MAX_LINE_BYTES = 500
export const MAX_HUNKS = 500
# Diff gives up past this many differing lines in a window (what both its ends do not share) and returns it as one
# change: a coarser change of the user's only makes more conflicts, never a wrong merge.
export const MAX_EDIT_DISTANCE = 2000

def IsInt(v: any, min: number): bool
  return type(v) == v:t_number && v >= min && v <= 0x7fffffff
enddef

def IsLines(v: any): bool
  return type(v) == v:t_list && indexof(v, (_, s) => type(s) != v:t_string) < 0
enddef

# Pure: `m` (a changed entry's `merge`, decoded JSON) as {sha256, prev_seq (0: none), hunks} when well-formed,
# else {} . Hunks ascending and apart, each with as many lines as it says.
export def Parse(m: any): dict<any>
  if type(m) != v:t_dict
    return {}
  endif
  var sha = get(m, 'sha256', v:null)
  if type(sha) != v:t_string || strlen(sha) != 64 || sha =~ '\X' # not \x\{64}: costly to compile at each call
    return {}
  endif
  var prev = get(m, 'prev_seq', v:null)
  if type(prev) != v:t_none && !IsInt(prev, 1)
    return {}
  endif
  var hunks = get(m, 'hunks', v:null)
  if type(hunks) != v:t_list || len(hunks) > MAX_HUNKS
    return {}
  endif
  var old_end = 1
  var new_end = 1
  for h in hunks
    if type(h) != v:t_dict || !IsInt(get(h, 'old_start', v:null), 1) || !IsInt(get(h, 'new_start', v:null), 1)
        || !IsLines(get(h, 'old_text', v:null)) || !IsLines(get(h, 'new_text', v:null))
        || !IsInt(get(h, 'old_lines', v:null), 0) || !IsInt(get(h, 'new_lines', v:null), 0)
        || h.old_lines != len(h.old_text) || h.new_lines != len(h.new_text)
        || h.old_start < old_end || h.new_start < new_end || h.new_start - new_end != h.old_start - old_end
      return {}
    endif
    old_end = h.old_start + h.old_lines
    new_end = h.new_start + h.new_lines
  endfor
  return {sha256: tolower(sha), prev_seq: type(prev) == v:t_none ? 0 : prev, hunks: hunks}
enddef

# Pure: the text before a change, from `after` (lines) and the change's `hunks`, or v:null when `after` does not
# hold the hunks' new lines where they say (the file is not what pi's tool wrote). One copy of `after`, its hunks'
# lines swapped in place from the last (each slice of a 10,000-line list copies every string it holds).
export def Unapply(after: list<string>, hunks: list<any>): any
  return Fits(after, hunks) ? SwapIn(copy(after), hunks) : v:null
enddef

# Pure: does `after` hold `hunks`' new lines where they say, the hunks ascending?
def Fits(after: list<string>, hunks: list<any>): bool
  var old_end = 1 # the first line after the previous hunk, in the text before and in `after`
  var new_end = 1
  for h in hunks
    if h.new_start < new_end || h.new_start - 1 > len(after) || h.old_start - old_end != h.new_start - new_end
        || slice(after, h.new_start - 1, h.new_start - 1 + h.new_lines) != h.new_text
      return false
    endif
    old_end = h.old_start + h.old_lines
    new_end = h.new_start + h.new_lines
  endfor
  return true
enddef

# `lines` (checked by Fits) with each hunk's new lines replaced by its old ones, from the last.
def SwapIn(lines: list<string>, hunks: list<any>): list<string>
  for h in reverse(copy(hunks))
    if h.new_lines > 0
      remove(lines, h.new_start - 1, h.new_start - 2 + h.new_lines)
    endif
    extend(lines, h.old_text, h.new_start - 1)
  endfor
  return lines
enddef

# The first window Diff diffs around a place where the two lists differ (lines each side); it grows fourfold while
# the window's diff reaches into its last half.
export const DIFF_WINDOW = 16

# Pure: the line changes from `a` to `b`, as 0-based half-open ranges {a, a_end, b, b_end}, ascending, found
# without diffing the whole lists: the lines both share are walked over, and only a window around each place they
# differ is diffed (Myers), its changes taken up to the first that reaches into the window's last half (the lines
# past the window could change it), all of them once the window reaches both ends. A few edits in a long file cost
# what their windows cost (issue 26: a merge into a 10,000-line buffer). Where lines repeat, a diff of the whole
# lists could place a change elsewhere; both are true diffs. With `stop` >= 0, the changes up to the first that
# starts past a[stop] (its index in `a`) are left out: the same changes as without it up to there (a merge needs
# none past pi's last hunk). With `own`, `a` and `b` are Diff's own (the caller does not use them after): the lines
# it has passed are taken off their fronts, and equal runs compared as taken off, without a copy of their strings
# (each slice or item read copies every string it holds); the changes are the same.
export def Diff(a: list<string>, b: list<string>, stop: number = -1, own: bool = false): list<dict<number>>
  var ea = len(a)
  var eb = len(b)
  # How many lines are taken off the front of `a` and `b` (`own`): a[x] is then a[x - at.a].
  var at: dict<any> = {a: 0, b: 0, own: own}
  var i = Equal(a, b, 0, 0, ea, eb, at)
  var j = i
  # The lines both share at the end, sixteen at a time while they are (as Equal).
  while ea - 16 >= i && eb - 16 >= j && a[ea - 16 - at.a : ea - 1 - at.a] == b[eb - 16 - at.b : eb - 1 - at.b]
    ea -= 16
    eb -= 16
  endwhile
  while ea > i && eb > j && a[ea - 1 - at.a] ==# b[eb - 1 - at.b]
    ea -= 1
    eb -= 1
  endwhile
  var out: list<dict<number>> = []
  var w = DIFF_WINDOW
  # Every change found from here on starts at a[i] or later.
  while (i < ea || j < eb) && (stop < 0 || i <= stop)
    var wa = min([w, ea - i])
    var wb = min([w, eb - j])
    var whole = i + wa == ea && j + wb == eb
    var ia = i - at.a
    var jb = j - at.b
    if wa == w && wb == w && a[ia + 1 : ia + w - 1] == b[jb + 1 : jb + w - 1]
      # One line changed, the rest of the window equal: what Myers finds there, without it (a typed edit's case).
      out->add({a: i, a_end: i + 1, b: j, b_end: j + 1})
      var n = Equal(a, b, i + 1, j + 1, ea, eb, at)
      i += 1 + n
      j += 1 + n
      continue
    endif
    var took: dict<number> = {}
    for r in Myers(slice(a, ia, ia + wa), slice(b, jb, jb + wb)) # slice(): a[0 : -1] would be the whole list
      if !whole && (r.a_end > wa - w / 2 || r.b_end > wb - w / 2)
        break
      endif
      took = r
      out->add({a: r.a + i, a_end: r.a_end + i, b: r.b + j, b_end: r.b_end + j})
    endfor
    if empty(took)
      if whole
        break # not reached: the window's first lines differ, so its diff has a change
      endif
      var skip = w == DIFF_WINDOW ? Block(a, b, i, j, ea, eb, at) : {}
      if !empty(skip)
        # A block only inserted or only deleted, longer than the window: Myers on growing windows that hold
        # nothing in common would cost the square of their size.
        out->add(skip)
        var m = Equal(a, b, skip.a_end, skip.b_end, ea, eb, at)
        i = skip.a_end + m
        j = skip.b_end + m
        continue
      endif
      w *= 4
      continue
    endif
    var n = Equal(a, b, i + took.a_end, j + took.b_end, ea, eb, at)
    i += took.a_end + n
    j += took.b_end + n
    w = DIFF_WINDOW
  endwhile
  return out
enddef

# A change at a[i], b[j] that only inserts lines (b[j] up to where a[i] comes back in b) or only deletes some (a[i]
# up to where b[j] comes back in a), the nearer of the two, when DIFF_WINDOW lines after it are equal on both sides;
# else {}. index() finds the line in C. `at`: Diff's lines taken off the fronts.
def Block(a: list<string>, b: list<string>, i: number, j: number, ea: number, eb: number, at: dict<any>): dict<number>
  var oa: number = at.a
  var ob: number = at.b
  var k = i < ea ? index(b, a[i - oa], j - ob) : -1
  k = k < 0 ? -1 : k + ob
  var l = j < eb ? index(a, b[j - ob], i - oa) : -1
  l = l < 0 ? -1 : l + oa
  var ins = k > j && k + DIFF_WINDOW <= eb && i + DIFF_WINDOW <= ea
    && a[i - oa : i - oa + DIFF_WINDOW - 1] == b[k - ob : k - ob + DIFF_WINDOW - 1]
  var del = l > i && l + DIFF_WINDOW <= ea && j + DIFF_WINDOW <= eb
    && a[l - oa : l - oa + DIFF_WINDOW - 1] == b[j - ob : j - ob + DIFF_WINDOW - 1]
  if ins && (!del || k - j <= l - i)
    return {a: i, a_end: i, b: j, b_end: k}
  elseif del
    return {a: i, a_end: l, b: j, b_end: j}
  endif
  return {}
enddef

# How many lines from a[i] and b[j] on are equal (before ea, eb). Sixteen at a time while they are: one list
# comparison costs less than sixteen steps of a loop. With `at.own`, the lines before a[i] and b[j] are taken off
# first (Diff never reads them again) and each sixteen compared as taken off (remove() moves them; a slice would
# copy their strings), put back when they differ.
def Equal(a: list<string>, b: list<string>, i: number, j: number, ea: number, eb: number, at: dict<any>): number
  var n = 0
  if at.own
    if i > at.a
      remove(a, 0, i - at.a - 1)
      at.a = i
    endif
    if j > at.b
      remove(b, 0, j - at.b - 1)
      at.b = j
    endif
    while i + n + 16 <= ea && j + n + 16 <= eb
      var x = remove(a, 0, 15)
      var y = remove(b, 0, 15)
      if x != y
        extend(a, x, 0)
        extend(b, y, 0)
        break
      endif
      n += 16
    endwhile
    at.a += n
    at.b += n
  else
    while i + n + 16 <= ea && j + n + 16 <= eb && a[i + n : i + n + 15] == b[j + n : j + n + 15]
      n += 16
    endwhile
  endif
  var oa: number = at.a
  var ob: number = at.b
  while i + n < ea && j + n < eb && a[i + n - oa] ==# b[j + n - ob]
    n += 1
  endwhile
  return n
enddef

# Pure: the line changes from `a` to `b` (Myers' O(ND) diff), as 0-based half-open ranges {a, a_end, b, b_end},
# ascending. The lines both share at either end are taken off first: only the middle is diffed.
def Myers(a: list<string>, b: list<string>): list<dict<number>>
  var head = 0
  while head < len(a) && head < len(b) && a[head] ==# b[head]
    head += 1
  endwhile
  var tail = 0
  while tail < len(a) - head && tail < len(b) - head && a[len(a) - 1 - tail] ==# b[len(b) - 1 - tail]
    tail += 1
  endwhile
  var n = len(a) - head - tail
  var m = len(b) - head - tail
  if n == 0 && m == 0
    return []
  endif
  if n == 0 || m == 0
    return [{a: head, a_end: head + n, b: head, b_end: head + m}]
  endif
  var off = n + m + 1
  var v = repeat([0], 2 * off + 1)
  var trace: list<list<number>> = []
  var found = -1
  for d in range(0, min([n + m, MAX_EDIT_DISTANCE]))
    # v before step d, for k in -(d - 1)..(d - 1): what the way back reads.
    trace->add(d == 0 ? [] : v[off - d + 1 : off + d - 1])
    var k = -d
    while k <= d
      var x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1
      var y = x - k
      while x < n && y < m && a[head + x] ==# b[head + y]
        x += 1
        y += 1
      endwhile
      v[off + k] = x
      if x >= n && y >= m
        found = d
        break
      endif
      k += 2
    endwhile
    if found >= 0
      break
    endif
  endfor
  if found < 0
    return [{a: head, a_end: head + n, b: head, b_end: head + m}]
  endif
  # The way back: each step one line deleted (x moves) or inserted (y moves), collected as [x, y, kind].
  var steps: list<list<number>> = []
  var x = n
  var y = m
  for d in range(found, 1, -1)
    var prev = trace[d]
    var k = x - y
    var pk = (k == -d || (k != d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1])) ? k + 1 : k - 1
    var px = prev[pk + d - 1]
    var py = px - pk
    while x > px && y > py
      x -= 1
      y -= 1
    endwhile
    steps->add(x == px ? [px, py, 1] : [px, py, 0])
    x = px
    y = py
  endfor
  reverse(steps)
  var out: list<dict<number>> = []
  for [sx, sy, ins] in steps
    var last = empty(out) ? {} : out[-1]
    if !empty(last) && last.a_end == sx && last.b_end == sy
      if ins
        last.b_end += 1
      else
        last.a_end += 1
      endif
    else
      out->add({a: sx, a_end: sx + (ins ? 0 : 1), b: sy, b_end: sy + (ins ? 1 : 0)})
    endif
  endfor
  return mapnew(out, (_, r) => ({a: r.a + head, a_end: r.a_end + head, b: r.b + head, b_end: r.b_end + head}))
enddef

# Pure: does a change of base range [a1, e1) touch one of [a2, e2)? Overlapping lines; and an insertion (an empty
# range) touches a range it lies in or at the edge of: whose line would come first is the user's call.
def Touches(a1: number, e1: number, a2: number, e2: number): bool
  if a1 < e1 && a2 < e2
    return a1 < e2 && a2 < e1
  endif
  return a1 <= e2 && a2 <= e1
enddef

def Cut(line: string): string
  return strlen(line) > MAX_LINE_BYTES ? strpart(line, 0, MAX_LINE_BYTES) : line
enddef

# Pure: merge pi's hunks `theirs` (from `base`: old_start, old_lines, new_text) into `ours` (the buffer's lines).
# Returns {edits: 0-based ranges of `ours`, ascending, apart ({from, to, lines}), merged: how many of pi's hunks
# they carry, conflicts: [{line, lines, text}] (1-based first line in the merged buffer, at most MAX_CONFLICTS),
# conflicts_total}. With `buf` (not 0), `ours` is its lines and `base` and `ours` are Plan's own (Diff's `own`:
# taken apart, the caller does not use them after): the conflicts' text is read from the buffer.
export def Plan(base: list<string>, ours: list<string>, theirs: list<any>, buf: number = 0): dict<any>
  # The user's changes up to pi's last hunk: one starting after its end touches none of pi's hunks.
  var user = Diff(base, ours, empty(theirs) ? 0 : theirs[-1].old_start - 1 + theirs[-1].old_lines, buf != 0)
  var out: dict<any> = {edits: [], merged: 0, conflicts: [], conflicts_total: 0}
  var u = 0       # the first user change not wholly before the current pi hunk
  var delta = 0   # the user's line-count change above it
  var shift = 0   # the line-count change of pi's hunks merged above it (a conflict names the merged buffer's lines)
  for h in theirs
    var a = h.old_start - 1
    var e = a + h.old_lines
    while u < len(user) && user[u].a_end <= a && !Touches(user[u].a, user[u].a_end, a, e)
      delta += (user[u].b_end - user[u].b) - (user[u].a_end - user[u].a)
      u += 1
    endwhile
    var last = u - 1
    while last + 1 < len(user) && Touches(user[last + 1].a, user[last + 1].a_end, a, e)
      last += 1
    endwhile
    if last < u
      out.edits->add({from: a + delta, to: e + delta, lines: h.new_text})
      out.merged += 1
      shift += len(h.new_text) - h.old_lines
    else
      out.conflicts_total += 1
      var from = min([a + delta, user[u].b])
      var grown = 0
      for i in range(u, last)
        grown += (user[i].b_end - user[i].b) - (user[i].a_end - user[i].a)
      endfor
      var to = max([e + delta + grown, user[last].b_end])
      if len(out.conflicts) < MAX_CONFLICTS
        var upto = min([to, from + MAX_CONFLICT_LINES])
        var text = mapnew(buf != 0 ? (from < upto ? getbufline(buf, from + 1, upto) : []) : slice(ours, from, upto),
          (_, l) => Cut(l))
        out.conflicts->add({line: from + shift + 1, lines: to - from, text: text})
      endif
    endif
  endfor
  return out
enddef

# Pure: a file's bytes (readfile(..., 'b')) as pi's lines (split at "\n", no last empty line after a final
# newline).
export def Split(bytes: list<string>): list<string>
  return !empty(bytes) && bytes[-1] == '' ? bytes[: -2] : copy(bytes)
enddef

# Can `buf`'s lines be compared with pi's (a file's text split at "\n")? A buffer that converts what it reads
# (CR-LF, another encoding, a BOM, 'binary') shows other lines than pi's: not merged (nor a proposal shown against
# it: pi_ide/approval.vim).
export def Comparable(buf: number): bool
  var fenc = getbufvar(buf, '&fileencoding')
  return getbufvar(buf, '&fileformat') == 'unix' && !getbufvar(buf, '&binary') && !getbufvar(buf, '&bomb')
    && &encoding == 'utf-8' && (fenc == '' || fenc =~ '^utf-8')
enddef

# An undo break in `buf` (:help undo-break: 'undolevels' set to itself), in its own context (setbufvar makes it
# the current buffer for the moment, a hidden one too): the next change starts an undo step of its own.
def UndoBreak(buf: number)
  setbufvar(buf, '&undolevels', getbufvar(buf, '&undolevels'))
enddef

# Apply `edits` (Plan) to `buf`, from the last: one undo step of its own, breaks before (not joined to the user's
# last change) and after (the user's next change is not joined to it).
def Apply(buf: number, edits: list<any>)
  var ma = getbufvar(buf, '&modifiable')
  var ro = getbufvar(buf, '&readonly')
  setbufvar(buf, '&modifiable', 1)
  setbufvar(buf, '&readonly', 0)
  UndoBreak(buf)
  try
    for ed in reverse(copy(edits))
      var common = min([ed.to - ed.from, len(ed.lines)])
      if common > 0
        setbufline(buf, ed.from + 1, slice(ed.lines, 0, common))
      endif
      if len(ed.lines) > common
        appendbufline(buf, ed.from + common, slice(ed.lines, common))
      elseif ed.to - ed.from > common
        silent deletebufline(buf, ed.from + common + 1, ed.to)
      endif
    endfor
  finally
    UndoBreak(buf)
    setbufvar(buf, '&modifiable', ma)
    setbufvar(buf, '&readonly', ro)
  endtry
enddef

# Merge pi's changes `chain` (this pi's new changes of the buffer's file, oldest first, each {seq, merge: Parse's})
# into modified `buf`, whose file holds `bytes` (one verified read, readfile(..., 'b')), whose SHA-256 is `sha`
# when the read computed it (pi_ide/inbox.vim's kept reader, in perl), '' to compute it here. `bytes` is the
# merge's own: it may be changed (its lines are the base's, in place: a copy of 10,000 lines costs every string in
# it); the caller does not use it again. Returns {status: "merged"/"conflict", merged, hunks, conflicts}, or {why}
# when it cannot merge: the buffer is then untouched.
export def Merge(buf: number, chain: list<dict<any>>, bytes: list<string>, sha: string = ''): dict<any>
  if !Comparable(buf)
    return {why: "the buffer converts its file's lines"}
  endif
  if (sha == '' ? sha256(join(bytes, "\n")) : tolower(sha)) !=# chain[-1].merge.sha256
    return {why: "the file is not what pi's tool wrote"}
  endif
  # Typed once here: a list<string> argument whose list carries no item type (readfile()'s, getbufline()'s) has
  # every item's type checked at each call, 10,000 lines each time. Split in place (see above).
  var now: list<string> = bytes
  if !empty(now) && now[-1] == ''
    remove(now, -1)
  endif
  var base = now
  for c in reverse(copy(chain))
    if !Fits(base, c.merge.hunks)
      return {why: "pi's hunks do not fit the file"}
    endif
    # Unapply's work on a list of our own: `now` itself when nothing needs it after (one change).
    base = SwapIn(len(chain) > 1 && base is now ? copy(base) : base, c.merge.hunks)
  endfor
  var hunks: list<any> = len(chain) == 1 ? chain[0].merge.hunks
    : mapnew(Diff(base, now), (_, r) => ({old_start: r.a + 1, old_lines: r.a_end - r.a, new_text: slice(now, r.b, r.b_end)}))
  # Typed (see above). Plan's own lists: `base` (bytes, or a copy) and the buffer's lines are not used after.
  var ours: list<string> = getbufline(buf, 1, '$')
  var plan = Plan(base, ours, hunks, buf)
  if !empty(plan.edits)
    Apply(buf, plan.edits)
  endif
  return {status: plan.conflicts_total > 0 ? 'conflict' : 'merged', merged: plan.merged, hunks: len(hunks),
    conflicts: plan.conflicts}
enddef
