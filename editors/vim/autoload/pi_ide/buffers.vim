vim9script
# pi_ide/buffers.vim: the texts of this Vim's unsaved file buffers for pi (protocol v0.5, `<pid>.buffers.json`
# beside the state file): pi's `read` of such a file then returns what the user sees, not the disk. The state
# file's write (pi_ide.vim) writes it first, and only when a modified buffer's changedtick, or the set of
# modified buffers, changed; the state file's `buffers_serial` names it. Pure but for reading the buffers.

# PROTOCOL.md, Limits (src/protocol/limits.ts): the texts take at most MAX_TEXT_BYTES once JSON-encoded, in
# all; at most MAX_BUFFERS are listed.
export const MAX_TEXT_BYTES = 2 * 1024 * 1024
export const MAX_BUFFERS = 32

# `<pid>.buffers.json` (src/protocol/wire.ts, editorBuffersFileName).
export def FileName(pid: number): string
  return printf('%d.buffers.json', pid)
enddef

# The loaded file buffers with unsaved changes, `current` first: [{buf, file, tick}].
export def Modified(current: number): list<dict<any>>
  var out: list<dict<any>> = []
  var infos = getbufinfo({bufloaded: 1, bufmodified: 1})
  sort(infos, (a, b) => a.bufnr == current ? -1 : b.bufnr == current ? 1 : a.bufnr - b.bufnr)
  for info in infos
    var name = info.name
    # Files only: no terminals, help, quickfix, prompts, scratch buffers, URL-like names.
    if name == '' || getbufvar(info.bufnr, '&buftype') != '' || name =~ '^\a[[:alnum:]+.-]*://'
      continue
    endif
    add(out, {buf: info.bufnr, file: fnamemodify(name, ':p'), tick: info.changedtick})
    if len(out) >= MAX_BUFFERS
      break
    endif
  endfor
  return out
enddef

# What decides whether the file is written again: the buffers and their ticks.
export def Key(mods: list<dict<any>>): string
  return join(mapnew(mods, (_, m) => m.file .. "\n" .. m.tick), "\n")
enddef

# The file's text for `mods`: each buffer's lines, or `note: "too_large"` once the encoded texts would pass
# MAX_TEXT_BYTES. Each text is JSON-encoded once: its encoded size decides, and it is spliced in as it is.
export def Encode(pid: number, serial: number, mods: list<dict<any>>, now: number): string
  var budget = MAX_TEXT_BYTES
  var entries: list<string> = []
  for m in mods
    var lines = getbufline(m.buf, 1, '$')
    var head = printf('{"file":%s,"version":%d,"lines_total":%d,', json_encode(m.file), m.tick, len(lines))
    var text = json_encode(join(lines, "\n"))
    if strlen(text) <= budget
      budget -= strlen(text)
      add(entries, head .. '"text":' .. text .. '}')
    else
      add(entries, head .. '"note":"too_large"}')
    endif
  endfor
  return printf('{"protocol":"0.5","kind":"editor-buffers","pid":%d,"serial":%d,"timestamp":%d,"buffers":[%s]}',
    pid, serial, now, join(entries, ','))
enddef
