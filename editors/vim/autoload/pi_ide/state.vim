vim9script
# pi_ide/state.vim: pure functions. A snapshot of the editor (plain data) becomes the protocol's payload
# and then JSON text; a visual area becomes the protocol's selection. No editor state is read here except
# through the line reader passed in, so every rule can be tested with literal values.
# The rules are the Neovim client's (editors/nvim/lua/pi-ide/state.lua and selection.lua).

# pi refuses a state file larger than this (PROTOCOL.md, "Limits").
export const MAX_FILE_BYTES = 1024 * 1024
# Our clients' cap on the selection text once JSON-encoded (PROTOCOL.md, "Limits").
export const MAX_SELECTION_BYTES = 256 * 1024

# URL-like names (scp://, fugitive://) are not paths on this machine.
def IsUrl(name: string): bool
  return name =~# '^\a[[:alnum:]+.-]*://'
enddef

# Only a normal buffer (buftype "") with a name that is a path describes a file.
export def IsFileBuffer(buftype: string, bufname: string): bool
  return buftype == '' && bufname != '' && !IsUrl(bufname)
enddef

# The base name for files, something recognisable otherwise.
export def DisplayName(buftype: string, bufname: string): string
  if bufname == ''
    if buftype == 'quickfix'
      return '[Quickfix List]'
    endif
    return buftype == 'prompt' ? '[Prompt]' : '[No Name]'
  endif
  if buftype == 'terminal' || IsUrl(bufname)
    return bufname
  endif
  return fnamemodify(substitute(bufname, '/\+$', '', ''), ':t')
enddef

# "v", "V" or CTRL-V for a visual or select mode (as mode() spells them), "" otherwise.
export def VisualKind(mode: string): string
  var c = mode[0]
  if c == 'v' || c == 's'
    return 'v'
  elseif c == 'V' || c == 'S'
    return 'V'
  elseif c == "\<C-v>" || c == "\<C-s>"
    return "\<C-v>"
  endif
  return ''
enddef

# A 1-based byte column clamped into `line` (an empty line still has column 1; V marks use MAXCOL).
def Clamp(line: string, col: number): number
  return max([1, min([col, strlen(line)])])
enddef

# The first byte of the character that byte column `col` falls in.
def StartCol(line: string, col: number): number
  if line == ''
    return 1
  endif
  return byteidx(line, charidx(line, Clamp(line, col) - 1)) + 1
enddef

# The last byte of the character that byte column `col` falls in: a selected "é" is columns 1-2.
def EndCol(line: string, col: number): number
  if line == ''
    return 1
  endif
  var next = byteidx(line, charidx(line, Clamp(line, col) - 1) + 1)
  return next < 0 ? strlen(line) : next
enddef

# The text a visual area covers, for the selection tracker: {start, end} as 1-based byte columns with an
# exclusive end (a text property's), and whether it covers any text. Charwise: from the first byte of the
# start character to the end of the last one. Linewise and block: the lines' text, their last newline
# excluded (so the empty line a linewise `c` leaves behind is not "what is left of the selection").
export def Area(kind: string, a: list<number>, b: list<number>, first: string, last: string): dict<any>
  var sc = 1
  var ec = strlen(last) + 1
  if kind == 'v'
    sc = first == '' ? 1 : min([StartCol(first, a[1]), strlen(first) + 1])
    ec = last == '' ? 1 : EndCol(last, b[1]) + 1
  endif
  return {start: sc, 'end': ec, covers: a[0] != b[0] || ec > sc}
enddef

# `s` cut to at most `n` bytes without splitting a character.
export def Cut(s: string, n: number): string
  if strlen(s) <= n
    return s
  endif
  if n <= 0
    return ''
  endif
  return strpart(s, 0, byteidx(s, charidx(s, n)))
enddef

# Size of `s` once JSON-encoded, without the quotes.
export def EncodedSize(s: string): number
  return strlen(json_encode(s)) - 2
enddef

# `s` cut so that its JSON encoding takes at most `max` bytes, at a character boundary, and whether it was
# cut. Escaping grows text (control bytes sixfold), so a cap on the raw text does not bound the file. A
# binary search over byte lengths: about 20 encodings, only for selections over the cap.
export def Fit(s: string, max: number): list<any>
  if EncodedSize(s) <= max
    return [s, false]
  endif
  # Encoding never shrinks text: nothing longer than `max` raw bytes can fit.
  var lo = 0
  var hi = min([strlen(s), max])
  while lo < hi
    var mid = (lo + hi + 1) / 2
    if EncodedSize(Cut(s, mid)) <= max
      lo = mid
    else
      hi = mid - 1
    endif
  endwhile
  return [Cut(s, lo), true]
enddef

# Whole lines first..last joined with "\n", read in chunks of 1,000 lines and cut at `max` bytes, so a
# huge selection costs about `max` bytes of work. Returns [text, cut].
def JoinLines(GetLines: func(number, number): list<string>, first: number, last: number, max: number): list<any>
  var parts: list<string> = []
  var total = 0
  var lnum = first
  while lnum <= last
    var chunk_last = min([last, lnum + 999])
    for l in GetLines(lnum, chunk_last)
      var sep = empty(parts) ? 0 : 1
      if total + sep + strlen(l) > max
        var room = max - total - sep
        if room > 0
          parts->add(Cut(l, room))
        endif
        return [join(parts, "\n"), true]
      endif
      parts->add(l)
      total += sep + strlen(l)
    endfor
    lnum = chunk_last + 1
  endwhile
  return [join(parts, "\n"), false]
enddef

# The protocol's selection from two positions ([line, 1-based byte col], either order) in visual `kind`
# ("v", "V" or CTRL-V). Single-line: the exact column range. Multi-line: whole lines, with the columns of
# the edges (linewise: 1 and the last line's end; block: the two corners). Text capped by its encoded size.
export def Extract(kind: string, a: list<number>, b: list<number>,
    GetLines: func(number, number): list<string>, max: number): dict<any>
  var s = a
  var e = b
  if b[0] < a[0] || (b[0] == a[0] && b[1] < a[1])
    [s, e] = [b, a]
  endif
  var first = get(GetLines(s[0], s[0]), 0, '')
  var last = s[0] == e[0] ? first : get(GetLines(e[0], e[0]), 0, '')
  var sc: number
  var ec: number
  if kind == 'V'
    [sc, ec] = [1, EndCol(last, strlen(last))]
  else
    [sc, ec] = [StartCol(first, s[1]), EndCol(last, e[1])]
  endif
  var raw: list<any>
  if s[0] == e[0]
    var piece = strpart(first, sc - 1, ec - sc + 1)
    raw = [Cut(piece, max), strlen(piece) > max]
  else
    raw = JoinLines(GetLines, s[0], e[0], max)
  endif
  var fitted = Fit(raw[0], max)
  var sel: dict<any> = {start: {line: s[0], column: sc}, 'end': {line: e[0], column: ec}, text: fitted[0]}
  if raw[1] || fitted[1]
    sel.truncated = true
  endif
  return sel
enddef

# Launch arguments for `argv`: v:argv without the program name.
export def FilterArgv(argv: list<string>): list<string>
  return argv[1 : ]
enddef

# The payload (without `timestamp`) from a snapshot:
# {pid, pid_ns ('' when unknown), cwd, argv, bufname (absolute for files), buftype, filetype, modified, lines_total,
#  cursor: [line, 1-based byte col], selection: dict or {} , selected_at: number or 0 (unknown)}.
export def Build(snap: dict<any>): dict<any>
  var sel: any = v:null
  if !empty(snap.selection)
    sel = {start: snap.selection.start, 'end': snap.selection.end, text: snap.selection.text,
      selected_at: snap.selected_at > 0 ? snap.selected_at : v:null}
    if get(snap.selection, 'truncated', false)
      sel.truncated = true
    endif
  endif
  var is_file = IsFileBuffer(snap.buftype, snap.bufname)
  var out: dict<any> = {
    pid: snap.pid,
    cwd: snap.cwd,
    app: 'vim',
    argv: snap.argv,
    active_buffer: {
      file: is_file ? snap.bufname : v:null,
      name: DisplayName(snap.buftype, snap.bufname),
      language: snap.filetype != '' ? snap.filetype : v:null,
      cursor: {line: snap.cursor[0], column: snap.cursor[1]},
      selection: sel,
      modified: snap.modified ? v:true : v:false,
      lines_total: snap.lines_total,
    },
  }
  # v0.5: the pid namespace `pid` is in (PROTOCOL.md), left out where /proc does not say.
  if get(snap, 'pid_ns', '') != ''
    out.pid_ns = snap.pid_ns
  endif
  return out
enddef

# [content, text, error]: the JSON without `timestamp` (to skip writes that change nothing) and the file's
# text with it. When the file would exceed MAX_FILE_BYTES, the selection is cut further (and marked
# truncated), then the oldest `files` reports are dropped; when even that cannot help, content is "" and
# error says why: a file pi refuses would make this editor vanish from pi.
export def Encode(payload: dict<any>, timestamp: number): list<string>
  var content = json_encode(payload)
  var prefix = printf('{"timestamp":%d,', timestamp)
  var Over = () => strlen(prefix) + strlen(content) - 1 - MAX_FILE_BYTES
  var sel = payload.active_buffer.selection
  if Over() > 0 && type(sel) == v:t_dict && sel.text != ''
    # 32 bytes of slack for `"truncated":true,`.
    var room = EncodedSize(sel.text) - Over() - 32
    sel.text = Fit(sel.text, max([0, room]))[0]
    sel.truncated = true
    content = json_encode(payload)
  endif
  # Many reports with many diagnostics (pi writing 200 files at once): the oldest reports go first, they are
  # the ones pi has most likely read already. Each report's size once, so one more encode makes it fit.
  var files = get(payload, 'files', [])
  if Over() > 0 && type(files) == v:t_list && !empty(files)
    var excess = Over()
    var drop = 0
    while excess > 0 && drop < len(files)
      excess -= strlen(json_encode(files[drop])) + 1
      drop += 1
    endwhile
    if drop >= len(files)
      remove(payload, 'files')
    else
      payload.files = files[drop :]
    endif
    content = json_encode(payload)
  endif
  if Over() > 0
    return ['', '', printf("the state would take %d bytes, over pi's limit of %d; not written",
      strlen(prefix) + strlen(content) - 1, MAX_FILE_BYTES)]
  endif
  return [content, prefix .. strpart(content, 1), '']
enddef
