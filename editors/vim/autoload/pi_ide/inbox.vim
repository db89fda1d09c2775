vim9script
# pi_ide/inbox.vim: protocol v0.3, pi -> editor. pi writes `<state dir>/pi-<pid>.json` naming the editor
# it is connected to and the files its tools changed. Vim has no file-system watcher, so a 500 ms timer (100 ms
# while pi's files change: BUSY_POLL_MS) lists the state directory (one readdirex(), no reads) and reads a pi file only when its listing changed
# or it was written in the last two seconds (Vim's file times have one-second resolution: a rewrite within
# the same second with the same size shows no change in the listing). For a live pi of ours that names
# this Vim, the changed files this Vim has loaded are handled:
#
# * unmodified buffer: the bytes of one verified read (READ_SCRIPT) put in through the API, so no read
#   autocommand runs and nothing else the path points at ever enters it; never a prompt, every window's
#   view kept;
# * buffer with unsaved changes: never touched; the user is told once per conflict, in one line;
# * the file gone, or no longer what the buffer was read from (now a symlink, re-pointed, not a regular
#   file): not reloaded.
#
# It never opens, runs or deletes anything because a message said so. Each outcome becomes a `files` report
# in our state file, and `pi` says which message was handled last. Malformed, oversized or foreign messages
# are ignored with one notice (and a line in :PiIde), never an error.

import autoload 'pi_ide/writer.vim'
import autoload 'pi_ide/diagnostics.vim'
import autoload 'pi_ide/approval.vim'
import autoload 'pi_ide/approval_rules.vim'
import autoload 'pi_ide/ask.vim'
import autoload 'pi_ide/review.vim'
import autoload 'pi_ide/review_rules.vim'
import autoload 'pi_ide/merge.vim'

export const MAX_BYTES = 64 * 1024
export const MAX_CHANGED = 50
export const MAX_LAST_TURN = 50
# `files` holds at most MAX_REPORTS reports (pi reads no more: MAX_FILE_REPORTS of src/protocol/limits.ts),
# kept by what pi still lists, never by a clock (PROTOCOL.md `files`, v0.5): each pi's newest KEPT_REPORTS, and
# every report on a change (file and seq) that pi's newest message still lists in `changed`. pi writing 200 files
# in one run, or slow to read them, then finds every answer, and a second pi's reports never push out the first's.
# The Neovim client's rule (editors/nvim/lua/pi-ide/inbox/init.lua).
export const MAX_REPORTS = 200
export const KEPT_REPORTS = 20
export const POLL_MS = 500
# While pi's files change (pi is writing, and waits at most 1 s for each answer: PROTOCOL.md), the listing is
# taken every BUSY_POLL_MS, until BUSY_S seconds pass without a change; then every POLL_MS again, so an idle
# Vim does no more than before.
export const BUSY_POLL_MS = 100
export const BUSY_S = 2
# PROTOCOL.md "Limits": pi's files nest at most MAX_DEPTH levels of lists and objects. A deeper one is refused
# before json_decode() sees it: Vim 9.0 crashes (SIGSEGV) decoding 100,000 levels.
export const MAX_DEPTH = 16

var dir = ''
var poll_timer = 0
var poll_ms = 0
# localtime() until which the poll stays at BUSY_POLL_MS.
var busy_until = 0
var OnReport: func = () => 0
# Whether a pi was connected at the last poll (Poll asks for a state write when that changes).
var was_connected = false
# Per pi file name: {fp: its listing, text: what was last read}.
var seen: dict<dict<any>> = {}
# Per pi identity (writer.PiKeyOfName: `<pid>` or `<pid>-<ns digits>`): {message, handled, at}.
var pis: dict<dict<any>> = {}
var reports: list<dict<any>> = []
var last: dict<number> = {}
var problems: dict<string> = {}
# Buffer (string) -> file name, for the "unsaved, not reloaded" already said.
var told: dict<string> = {}
# Buffer (string) -> what its path was when it was read ({name, type, real}).
var read_as: dict<dict<any>> = {}
var alive_at: dict<number> = {}
# Per pi identity: the text of its change set last handed on (it is rewritten with every change of any file).
var review_text: dict<string> = {}
var status_drawn = ''

def IsInteger(v: any, min: number = 0): bool
  return type(v) == v:t_number && v >= min
enddef

# Pure: why `msg` (decoded JSON) is not a well-formed pi message from `pi-<pi>.json`, or '' (`pi`: the identity
# its name spells, writer.PiKeyOfName, or a bare pid).
export def Validate(msg: any, pi: any): string
  var key = writer.Key(pi)
  if type(msg) != v:t_dict
    return 'not a JSON object'
  endif
  if type(get(msg, 'kind', 0)) != v:t_string || msg.kind != 'pi'
    return 'kind is not "pi"'
  endif
  if type(get(msg, 'protocol', 0)) != v:t_string
    return 'no protocol version'
  endif
  if type(get(msg, 'pid', '')) != v:t_number || msg.pid != writer.PidOfKey(key)
    return printf('pid field %s does not match the file name', string(get(msg, 'pid', v:null)))
  endif
  var ns_bad = writer.NsDisagrees(msg, key)
  if ns_bad != ''
    return ns_bad
  endif
  var ed = get(msg, 'editor_pid', v:null)
  if type(ed) != v:t_none && !IsInteger(ed, 1)
    return 'editor_pid is not a pid'
  endif
  if !IsInteger(get(msg, 'seq', v:null))
    return 'seq is not an integer'
  endif
  var changed = get(msg, 'changed', v:null)
  if type(changed) != v:t_list || len(changed) > MAX_CHANGED
    return printf('changed is not a list of at most %d entries', MAX_CHANGED)
  endif
  for c in changed
    if type(c) != v:t_dict || type(get(c, 'file', 0)) != v:t_string || c.file !~ '^/'
        || !IsInteger(get(c, 'seq', v:null), 1)
      return 'a changed entry is not {file = absolute path, seq = integer}'
    endif
  endfor
  var lt = get(msg, 'last_turn', [])
  if type(lt) != v:t_list || len(lt) > MAX_LAST_TURN
    return printf('last_turn is not a list of at most %d paths', MAX_LAST_TURN)
  endif
  for f in lt
    if type(f) != v:t_string
      return 'last_turn holds a non-string'
    endif
  endfor
  return ''
enddef

# The pid of `pi-<pid>.json` (canonical decimal, as for state files), or 0.
export def PidOfName(name: string): number
  return name =~# '^pi-' ? writer.PidOfName(strpart(name, 3)) : 0
enddef

# Say once per file name why a message was ignored; keep it for :PiIde.
def Problem(name: string, why: string)
  if get(problems, name, '') == why
    return
  endif
  problems[name] = why
  pi_ide#Notice(printf('(pi-ide) ignoring %s: %s', name, why))
enddef

# "alive", "dead" or "foreign": from /proc (Linux). Without /proc the file's presence is all there is
# (pi removes it when it exits), so a pi counts as alive. So does a pi of another pid namespace (a sandbox,
# a container: PROTOCOL.md v0.5): its pid names another process here, or none, so it is not judged at all.
def Liveness(key: string): string
  if !isdirectory('/proc/self') || !writer.JudgesKey(key)
    return 'alive'
  endif
  var proc = '/proc/' .. writer.PidOfKey(key)
  if getftype(proc) != 'dir'
    return 'dead'
  endif
  return get(writer.Entry(proc), 'user', '') == writer.Me() ? 'alive' : 'foreign'
enddef

# Read `<dir>/<name>` (listed as `e`) only if it is a regular file, ours, without group/other bits and at
# most `max` bytes; getftype() right before readfile() makes sure no FIFO or link is opened. Vim cannot open
# a file and then check what it opened, so a swap between that check and the read is not excluded (see
# editors/vim/README.md). Returns [text, problem]; both '' when the file is simply gone. The one reader of
# everything pi writes: its messages (MAX_BYTES), its approval requests (pi_ide/approval.vim) and its change
# set (pi_ide/review.vim).
export def ReadFile(path: string, e: dict<any>, max: number = MAX_BYTES): list<string>
  if e.type != 'file'
    return ['', printf('is a %s, not a regular file', e.type)]
  endif
  if e.user != writer.Me() || e.user == ''
    return ['', printf('belongs to %s, not to you', writer.OwnerName(e.user))]
  endif
  if e.perm[3 : ] != '------'
    return ['', printf('has group/other permissions (%s)', e.perm)]
  endif
  if e.size > max
    return ['', printf('is %d bytes, over the %d-byte limit', e.size, max)]
  endif
  if getftype(path) != 'file' || getfsize(path) > max
    return ['', '']
  endif
  var text = join(readfile(path, 'b', max + 1), "\n")
  if strlen(text) > max
    return ['', printf('grew over the %d-byte limit', max)]
  endif
  return [text, '']
enddef

# Pure: [the decoded JSON of one of pi's files, ''], or [v:null, why it is refused]: the one decoder of pi's files.
# The nesting is measured on the text first, without recursion: escapes and strings out, then everything but
# brackets; each pass then takes out the innermost empty pairs, one level per pass, so what is left after
# MAX_DEPTH passes nests deeper (or never closes).
export def Decode(text: string): list<any>
  # The old engine (\%#=1) does these simple patterns several times faster than the NFA on megabytes.
  var b = text->substitute('\%#=1\\.', '', 'g')->substitute('\%#=1"[^"]*"', '', 'g')
    ->substitute('\%#=1[^][{}]\+', '', 'g')
  for _ in range(MAX_DEPTH)
    if b == ''
      break
    endif
    b = b->substitute('\%#=1\[\]\|{}', '', 'g')
  endfor
  if b != ''
    # As many openers as closers left: levels deeper than MAX_DEPTH; else brackets that never close (no JSON).
    var deep = 2 * strlen(substitute(b, '[^[{]', '', 'g')) == strlen(b)
    return [v:null, deep ? printf('nested deeper than %d levels: refused unread', MAX_DEPTH) : 'not valid JSON']
  endif
  try
    return [json_decode(text), '']
  catch
    return [v:null, 'not valid JSON']
  endtry
enddef

# The loaded file buffer showing `file`, or 0 (by name, then by real path). Not getbufinfo(): it lists every
# sign of every buffer (a request's marks: hundreds).
def FindBuffer(file: string): number
  var real = resolve(file)
  for buf in range(1, bufnr('$'))
    if !bufloaded(buf) || bufname(buf) == '' || getbufvar(buf, '&buftype') != ''
      continue
    endif
    var p = fnamemodify(bufname(buf), ':p')
    if p == file || resolve(p) == real
      return buf
    endif
  endfor
  return 0
enddef

# What `path` is on disk: its own type ("file", "link", ...), its real path, the type of what it
# resolves to; {} when nothing is there.
def Identity(path: string): dict<any>
  var t = getftype(path)
  if t == ''
    return {}
  endif
  var real = resolve(path)
  return {type: t, real: real, resolves_to: getftype(real)}
enddef

# Pure: may a buffer be re-read from its path, which was `was` when it was read ({} = read before the
# client saw it) and is `now` ({} = gone)? "reload", "gone" or "refused" (PROTOCOL.md: a regular file then
# and now, or a symlink then and now resolving to the same real path, a regular file).
export def ReloadVerdict(was: dict<any>, now: dict<any>): string
  if empty(now)
    return 'gone'
  endif
  if now.resolves_to != 'file' || (now.type != 'file' && now.type != 'link')
    return 'refused'
  endif
  if empty(was)
    return now.type == 'file' ? 'reload' : 'refused'
  endif
  if was.type != now.type || (now.type == 'link' && was.real != now.real)
    return 'refused'
  endif
  return 'reload'
enddef

# The one read of a file pi changed, shared with the Emacs client (editors/emacs/pi-ide-inbox.el, the same
# script): Vim script cannot open a file without following a symlink, so perl does it. It reads ARGV[0] only
# when lstat sees a regular file of ours and the file it opened (O_NOFOLLOW|O_NONBLOCK: a symlink swapped in
# after the check fails, a FIFO never blocks) is the one lstat saw, at most ARGV[1] bytes, into ARGV[2] (a new
# file, 0600). Exit 0: read; 10: gone; 11: refused; 12: too large; anything else: not read.
export const READ_SCRIPT = 'use Fcntl; my ($p, $max, $out) = @ARGV; my @l = lstat($p) or exit(10); '
  .. '(-f _ && $l[4] == $<) or exit(11); sysopen(my $f, $p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) '
  .. 'or exit($!{ENOENT} ? 10 : 11); my @s = stat($f); (-f _ && $s[0] == $l[0] && $s[1] == $l[1]) or exit(11); '
  .. '$s[7] <= $max or exit(12); my ($b, $n) = (""); while ($n = sysread($f, $b, 65536, length $b)) '
  .. '{ exit(12) if length($b) > $max } defined $n or exit(11); my $o; if (defined $out) { sysopen($o, $out, '
  .. 'O_WRONLY | O_CREAT | O_EXCL, 0600) or exit(13) } else { $o = \*STDOUT } binmode $o; print $o $b or exit(13); '
  .. 'close $o or exit(13); exit(0)'
# A file larger than this is not reloaded (`refused`): :e! reads it.
export const MAX_RELOAD_BYTES = 32 * 1024 * 1024

# Pure: the lines of `bytes` (readfile(..., 'b') of the file) as buffer `opts` ({ff, fenc, enc, bomb}) holds
# them, and whether the file ends with a newline.
export def BufferLines(bytes: list<string>, opts: dict<any>): dict<any>
  var lines = copy(bytes)
  var eol = !empty(lines) && lines[-1] == ''
  if eol
    remove(lines, -1)
  endif
  if opts.ff == 'dos'
    map(lines, (_, l) => substitute(l, "\r$", '', ''))
  endif
  if opts.fenc != '' && opts.fenc != opts.enc
    map(lines, (_, l) => iconv(l, opts.fenc, opts.enc))
  endif
  if opts.bomb && !empty(lines)
    lines[0] = substitute(lines[0], "^\xef\xbb\xbf", '', '')
  endif
  return {lines: empty(lines) ? [''] : lines, eol: eol}
enddef

# Read `path` once (READ_SCRIPT) into a private file: {status: 'read', bytes} or {status: gone/refused}.
def ReadVerified(path: string): dict<any>
  if !executable('perl')
    return {status: 'refused'}
  endif
  var out = tempname()
  var read: dict<any> = {status: 'refused'}
  try
    system(join(mapnew(['perl', '-e', READ_SCRIPT, path, string(MAX_RELOAD_BYTES), out],
      (_, a) => shellescape(a)), ' '))
    var code = v:shell_error
    if code == 0 && getftype(out) == 'file'
      read = {status: 'read', bytes: readfile(out, 'b')}
    elseif code == 10
      read = {status: 'gone'}
    endif
  finally
    delete(out)
  endtry
  return read
enddef

# READ_SCRIPT for many files in one perl: the script compiled once, each read run in a forked child (its exit
# code the verdict), the codes printed in order. A shell and a perl started per file cost about 30 ms each here,
# and pi waits 1 s for the answers to a message that names 40 files.
const BATCH_SCRIPT = 'my $s = shift; my $r = eval "sub { $s }" or exit(15); my @c; while (@ARGV) { '
  .. 'my @a = splice(@ARGV, 0, 3); my $k = fork(); if (!defined $k) { push @c, 14; next } '
  .. 'if (!$k) { @ARGV = @a; $r->(); exit(14) } waitpid($k, 0); push @c, $? >> 8 } print join(" ", @c)'

# READ_SCRIPT in a perl that stays (READER, a job started at the first message and kept while polling): no shell
# and no perl started per message, no child per file (each cost tens of milliseconds on a loaded machine, and pi
# waits 1 s for its answers). READ_SCRIPT is compiled once with `exit` made to end only its own run (the code
# kept). Each line asks for reads: (path, cap, out) triples, tab-separated, each with `\`, newline and tab
# escaped (`\\`, `\n`, `\t`); the answer line has their exit codes, in order (14: the read did not finish), a
# read's (0) with the SHA-256 of the bytes it wrote to `out` (`0:<64 hex>`, Digest::SHA, core perl; a bare 0
# without it): a merge checks the file against pi's hash without joining and hashing 10,000 lines in Vim (issue 26).
# `out` is Vim's own new temp file, opened without following a link.
const READER = 'use Fcntl; BEGIN { *CORE::GLOBAL::exit = sub { die bless [$_[0] // 0], "PiIdeExit" } } $| = 1; '
  .. 'my $s = shift; my $r = eval "sub { $s }" or die; my $d = eval { require Digest::SHA; 1 }; '
  .. 'while (my $l = <STDIN>) { chomp $l; my @a = map { s/\\(.)/$1 eq "n" ? "\n" : $1 eq "t" ? "\t" : $1/ger } '
  .. 'split /\t/, $l, -1; my @c; while (@a) { local @ARGV = splice(@a, 0, 3); my $o = $ARGV[2]; '
  .. 'my $c = eval { $r->(); 14 } // (ref $@ eq "PiIdeExit" ? $@->[0] : 14); if ($c eq "0" && $d && defined $o '
  .. '&& sysopen(my $h, $o, O_RDONLY | O_NOFOLLOW)) { my $x = eval { Digest::SHA->new(256)->addfile($h)->hexdigest }; '
  .. '$c .= ":$x" if defined $x; close $h } push @c, $c } print join(" ", @c), "\n" }'
# How long one line of reads may take before the reader is given up (killed; BATCH_SCRIPT reads then).
const READER_TIMEOUT_MS = 5000
var reader: any = v:none

def StopReader()
  if type(reader) == v:t_job
    job_stop(reader, 'kill')
  endif
  reader = v:none
enddef

# One field of a READER line.
def ReaderField(s: string): string
  return substitute(s, "[\\\\\n\t]", (m) => m[0] == '\' ? '\\' : m[0] == "\n" ? '\n' : '\t', 'g')
enddef

# The exit codes of READ_SCRIPT for `args` ((path, cap, out) triples) from the kept reader, or [] when it
# cannot answer (it is then stopped; the next message starts another).
def ReaderCodes(args: list<string>): list<string>
  if type(reader) != v:t_job || job_status(reader) != 'run'
    reader = job_start(['perl', '-e', READER, READ_SCRIPT], {in_mode: 'nl', out_mode: 'nl', err_io: 'null'})
    if job_status(reader) != 'run'
      reader = v:none
      return []
    endif
  endif
  var answer = ''
  try
    answer = ch_evalraw(reader, join(mapnew(args, (_, a) => ReaderField(a)), "\t") .. "\n",
      {timeout: READER_TIMEOUT_MS})
  catch
  endtry
  var codes = split(answer)
  if len(codes) * 3 != len(args)
    StopReader()
    return []
  endif
  return codes
enddef

# ReadVerified for each of `paths` at once: per path {status: 'read', bytes, sha256 (of the bytes, when the kept
# reader hashed them)} or {status: gone/refused}; a path left out (perl missing or failing) is read on its own by
# Reload. The kept reader reads them; failing that, one perl started for them (BATCH_SCRIPT). Exported for
# bench/vim-merge.ts.
export def ReadVerifiedMany(paths: list<string>): dict<dict<any>>
  var reads: dict<dict<any>> = {}
  if empty(paths) || !executable('perl')
    return reads
  endif
  var outs = mapnew(paths, (_, _) => tempname())
  try
    var args: list<string> = []
    for i in range(len(paths))
      args += [paths[i], string(MAX_RELOAD_BYTES), outs[i]]
    endfor
    var codes = ReaderCodes(args)
    if empty(codes)
      for out in outs
        delete(out)
      endfor
      codes = split(system(join(mapnew(['perl', '-e', BATCH_SCRIPT, READ_SCRIPT] + args, (_, a) => shellescape(a)),
        ' ')))
      if v:shell_error != 0 || len(codes) != len(paths)
        return {}
      endif
    endif
    for i in range(len(paths))
      var [code, sha] = (codes[i] .. ':')->split(':', true)[0 : 1]
      if code == '0' && getftype(outs[i]) == 'file'
        reads[paths[i]] = {status: 'read', bytes: readfile(outs[i], 'b')}
        if sha =~ '^\x\{64}$'
          reads[paths[i]].sha256 = sha
        endif
      else
        reads[paths[i]] = {status: code == '10' ? 'gone' : 'refused'}
      endif
    endfor
  finally
    for out in outs
      delete(out)
    endfor
  endtry
  return reads
enddef

# Put `lines` into unmodified buffer `buf` through the API (no read autocommand runs; listeners and language
# servers see only these lines), keeping every window's view, leave it unmodified, and bring Vim's record of
# the file on disk up to date (RecordOnDisk). True when the content changed.
def Apply(buf: number, content: dict<any>): bool
  var views: dict<dict<number>> = {}
  for w in win_findbuf(buf)
    win_execute(w, 'g:pi_ide_view = winsaveview()')
    views[string(w)] = g:pi_ide_view
  endfor
  var changed = getbufline(buf, 1, '$') != content.lines || getbufvar(buf, '&eol') != content.eol
  if changed
    # As a reload would, also in a 'nomodifiable' or 'readonly' buffer (and without W10's pause).
    var ma = getbufvar(buf, '&modifiable')
    var ro = getbufvar(buf, '&readonly')
    setbufvar(buf, '&modifiable', 1)
    setbufvar(buf, '&readonly', 0)
    try
      setbufline(buf, 1, content.lines)
      if len(getbufline(buf, 1, '$')) > len(content.lines)
        silent deletebufline(buf, len(content.lines) + 1, '$')
      endif
      setbufvar(buf, '&eol', content.eol)
    finally
      setbufvar(buf, '&modifiable', ma)
      setbufvar(buf, '&readonly', ro)
    endtry
  endif
  setbufvar(buf, '&modified', 0)
  RecordOnDisk(buf)
  for [w, view] in items(views)
    if winbufnr(str2nr(w)) == buf
      g:pi_ide_view = view
      win_execute(str2nr(w), 'winrestview(g:pi_ide_view)')
    endif
  endfor
  # As after Vim's own reload, FileChangedShellPost in the buffer (ALE lints on it), which now holds the
  # verified lines; where a window shows it (an autocommand's <abuf> is the current buffer).
  var wins = win_findbuf(buf)
  if changed && !empty(wins)
    win_execute(wins[0], 'doautocmd <nomodeline> FileChangedShellPost ' .. fnameescape(bufname(buf)))
  endif
  return changed
enddef

# Bring Vim's record of `buf`'s file on disk up to date (so no W11 follows, and a :w asks nothing): a :checktime
# whose FileChangedShell answers '', with 'autoread' off and no other autocommand.
def RecordOnDisk(buf: number)
  var global_ar = &g:autoread
  var local_ar = false
  &g:autoread = false
  if getbufvar(buf, '&autoread')
    local_ar = true
    setbufvar(buf, '&autoread', 0)
  endif
  # When the size on disk is the recorded one, :checktime reads the file into a hidden scratch buffer to
  # compare: that read must run no autocommand (its text may be anything the path points at by then).
  var ei = &eventignore
  &eventignore = join(filter(getcompletion('', 'event'), (_, e) => e !=? 'FileChangedShell'), ',')
  augroup PiIdeReload
    autocmd!
    execute printf('autocmd FileChangedShell <buffer=%d> v:fcs_choice = ""', buf)
  augroup END
  try
    execute 'silent! checktime ' .. buf
  finally
    &eventignore = ei
    augroup PiIdeReload
      autocmd!
    augroup END
    augroup! PiIdeReload
    &g:autoread = global_ar
    if local_ar && bufexists(buf)
      setbufvar(buf, '&autoread', 1)
    endif
  endtry
enddef

# Reload unmodified buffer `buf` from `path` (its own path, or a link's recorded real path): one verified
# read (done already, in `reads`, when HandleMessage read a message's files at once), applied as is.
# "reloaded", "unchanged", "gone" or "refused".
def Reload(buf: number, path: string, reads: dict<dict<any>>): string
  var read = has_key(reads, path) ? reads[path] : ReadVerified(path)
  if read.status != 'read'
    return read.status
  endif
  var opts = {ff: getbufvar(buf, '&fileformat'), fenc: getbufvar(buf, '&fileencoding'), enc: &encoding,
    bomb: getbufvar(buf, '&bomb')}
  var changed = Apply(buf, BufferLines(read.bytes, opts))
  # What BufferRead does after a read, but the record of the path: it stays as it was when the user read it.
  approval.BufferRead(buf)
  if changed
    review.Reloaded(buf)
  else
    review.BufferRead(buf)
  endif
  return changed ? 'reloaded' : 'unchanged'
enddef

const HOW_TO_RESOLVE = "Compare: :w !diff % -   Take pi's version: :e!"
# How a merge's conflict is compared (issue 26): ShowDisk, which never reloads or writes the buffer.
const COMPARE = ':PiIde diff'

# :PiIde diff: the file on disk (one verified read, as a reload reads it) beside the current buffer, read-only in a
# scratch buffer, both in diff mode. The buffer is never reloaded or written (no W12), the cursor stays in its
# window. Returns '' or why there is nothing to show.
export def ShowDisk(): string
  var buf = bufnr()
  if getbufvar(buf, '&buftype') != '' || bufname(buf) == ''
    return '(pi-ide) this buffer has no file to compare with'
  endif
  var plan = ReloadPlan(buf)
  var read = plan.verdict == 'reload' ? ReadVerified(plan.target) : {status: plan.verdict}
  if read.status != 'read'
    return printf('(pi-ide) the file on disk cannot be read for a compare (%s)', read.status)
  endif
  var content = BufferLines(read.bytes, {ff: &fileformat, fenc: &fileencoding, enc: &encoding, bomb: &bomb})
  var back = win_getid()
  var filetype = &filetype
  diffthis
  vertical rightbelow new
  approval.Scratch(content.lines, 'pi-ide://disk' .. fnamemodify(bufname(buf), ':p'), filetype)
  diffthis
  win_gotoid(back)
  return ''
enddef

# Once per conflict (until the buffer is written or read again). `where`: the lines of a merge's conflict (issue
# 26: pi's other hunks are in the buffer, these lines are the user's), '' when nothing was merged.
def TellModified(buf: number, file: string, where: string = '')
  if has_key(told, string(buf))
    return
  endif
  var name = fnamemodify(file, ':~:.')
  told[string(buf)] = name
  if where == ''
    pi_ide#Notice(printf('(pi-ide) pi changed %s; unsaved buffer kept, see :PiIde', name))
  else
    pi_ide#Notice(printf("(pi-ide) pi's change to %s touches your unsaved %s: kept yours. Compare: %s", name, where,
      COMPARE))
  endif
enddef

# "line N" or "lines N-M" for a conflict's lines.
def LinesPhrase(c: dict<any>): string
  return c.lines <= 1 ? printf('line %d', c.line) : printf('lines %d-%d', c.line, c.line + c.lines - 1)
enddef

# Issue 26: where merges' conflicts stand (text properties without a highlight: they follow the lines), listed by
# :PiIde hunks with pi's hunks until the buffer and its file agree again. Id 1: the user's lines; 2: the place of
# pi's lines the user deleted.
const CONFLICT_PROP = 'pi_ide_conflict'

def ListConflicts(buf: number, conflicts: list<dict<any>>)
  if empty(prop_type_get(CONFLICT_PROP))
    prop_type_add(CONFLICT_PROP, {})
  endif
  var count = getbufinfo(buf)[0].linecount
  for c in conflicts
    var first = max([1, min([c.line, count])])
    var final = c.lines > 0 ? min([first + c.lines - 1, count]) : first
    try
      prop_add(first, 1, {type: CONFLICT_PROP, bufnr: buf, id: c.lines > 0 ? 1 : 2, end_lnum: final,
        end_col: strlen(getbufline(buf, final)[0]) + 1})
    catch
    endtry
  endfor
enddef

def UnlistConflicts(buf: number)
  if bufloaded(buf) && !empty(prop_type_get(CONFLICT_PROP))
    prop_remove({type: CONFLICT_PROP, bufnr: buf, all: true})
  endif
enddef

# Issue 26: the quickfix items of merges' conflicts in buffers still modified (:PiIde hunks lists them with pi's
# hunks): one per place, on the user's lines kept there.
export def ConflictItems(): list<dict<any>>
  var items: list<dict<any>> = []
  if empty(prop_type_get(CONFLICT_PROP))
    return items
  endif
  for key in sort(keys(told), 'N')
    var buf = str2nr(key)
    if !bufloaded(buf) || !getbufvar(buf, '&modified')
      continue
    endif
    var first = 0
    for p in prop_list(1, {bufnr: buf, end_lnum: -1, types: [CONFLICT_PROP]})
      first = p.start ? p.lnum : first
      if !p.end
        continue
      endif
      var where = p.id == 2 ? printf("line %d (you deleted pi's lines there)", first)
        : LinesPhrase({line: first, lines: p.lnum - first + 1})
      items->add({bufnr: buf, lnum: first, end_lnum: p.lnum,
        text: printf("conflict: your unsaved %s kept; pi's version is on disk (:PiIde diff)", where)})
    endfor
  endfor
  return items
enddef

# Issue 26: merge pi's `chain` (its new changes of the file, oldest first; `handled`: the seq this pi had before)
# into modified `buf` (pi_ide/merge.vim), when every change carries its hunks and they follow each other from what
# this Vim already handled, reading `path` once (verified, as a reload reads it). {} when not merged (an older pi,
# a change too large to carry, a file not what pi wrote): the buffer is untouched and reported `modified`.
def TryMerge(buf: number, path: string, chain: list<dict<any>>, handled: number, reads: dict<dict<any>>): dict<any>
  var parsed: list<dict<any>> = []
  for c in chain
    var m = merge.Parse(get(c, 'merge', v:null))
    if empty(m)
      return {}
    endif
    if (empty(parsed) && m.prev_seq > handled) || (!empty(parsed) && m.prev_seq != parsed[-1].seq)
      return {} # a change of this file in between is not in the message: its base is unknown
    endif
    parsed->add({seq: c.seq, merge: m})
  endfor
  if empty(parsed)
    return {}
  endif
  var read = has_key(reads, path) ? reads[path] : ReadVerified(path)
  if read.status != 'read'
    return {}
  endif
  # Merge may change the list it is given (no copy of 10,000 lines): the read is not used again.
  if has_key(reads, path)
    remove(reads, path)
  endif
  var outcome = merge.Merge(buf, parsed, read.bytes, get(read, 'sha256', ''))
  return has_key(outcome, 'status') ? outcome : {}
enddef

# Whether unmodified buffer `buf` is reloaded ({verdict: 'reload'} or why not), and the path its reload reads.
def ReloadPlan(buf: number): dict<string>
  # Decided on the path the reload reads, the buffer's own: pi's path may be another name for it.
  var path = fnamemodify(bufname(buf), ':p')
  var was = get(read_as, string(buf), {})
  if !empty(was) && was.name != path
    was = {}
  endif
  var now = Identity(path)
  return {verdict: ReloadVerdict(was, now), target: get(now, 'type', '') == 'link' ? now.real : path}
enddef

# Issue 26: the lines of `buf`'s file on disk as pi's (one verified read, as a reload reads it), for a proposal shown
# against the unsaved buffer (pi_ide/approval.vim); v:null when it cannot be read or the buffer converts its lines.
def DiskLines(buf: number): any
  var plan = ReloadPlan(buf)
  if plan.verdict != 'reload' || !merge.Comparable(buf)
    return v:null
  endif
  var read = ReadVerified(plan.target)
  return read.status == 'read' ? merge.Split(read.bytes) : v:null
enddef

# `pi`: the fields that name the pi (writer.PiFields); `reads`: the files read at once (ReadVerifiedMany);
# `chain`: this pi's new changes of the file, oldest first, and `handled` the seq it had before (for a merge).
def HandleChange(change: dict<any>, pi: dict<any>, reads: dict<dict<any>>, chain: list<dict<any>> = [],
    handled: number = 0): dict<any>
  var report: dict<any> = extend({file: change.file, seq: change.seq, status: 'not-open',
    version: v:null, modified: v:false, diagnostics_expected: v:false, diagnostics: v:null}, pi)
  var buf = FindBuffer(change.file)
  if buf == 0
    return report
  endif
  report.buf = buf
  report.modified = getbufvar(buf, '&modified') ? v:true : v:false
  var plan = ReloadPlan(buf)
  if plan.verdict != 'reload'
    report.status = plan.verdict
  elseif report.modified
    var outcome = TryMerge(buf, plan.target, empty(chain) ? [change] : chain, handled, reads)
    if empty(outcome)
      report.status = 'modified'
      TellModified(buf, change.file)
    else
      report.status = outcome.status
      report.merge = {hunks: outcome.hunks, merged: outcome.merged, conflicts: outcome.conflicts}
      if outcome.status == 'merged'
        RecordOnDisk(buf) # the buffer has pi's change: a :w must not ask whether to overwrite a changed file
      else
        ListConflicts(buf, outcome.conflicts)
        TellModified(buf, change.file, LinesPhrase(outcome.conflicts[0]))
      endif
    endif
  else
    if has_key(told, string(buf))
      remove(told, string(buf))
    endif
    UnlistConflicts(buf)
    report.status = Reload(buf, plan.target, reads)
  endif
  if bufexists(buf)
    report.version = getbufvar(buf, 'changedtick')
    report.diagnostics_expected = diagnostics.Expected(buf) ? v:true : v:false
  endif
  return report
enddef

# Pure: which of `list` (newest last) to keep: per pi its newest KEPT_REPORTS, and those on a change (file and
# seq) its newest message lists (`listed`: pi's key (writer.KeyOfRecord) -> its `changed` entries); at most
# MAX_REPORTS, the newest.
export def Retain(list: list<dict<any>>, listed: dict<any>): list<dict<any>>
  var lookup: dict<dict<bool>> = {}
  for [key, changed] in items(listed)
    lookup[key] = {}
    for c in changed
      lookup[key][printf("%d\n%s", c.seq, c.file)] = true
    endfor
  endfor
  var kept: list<dict<any>> = []
  var per_pi: dict<number> = {}
  for r in reverse(copy(list))
    if len(kept) >= MAX_REPORTS
      break
    endif
    var pi = writer.KeyOfRecord(r)
    per_pi[pi] = get(per_pi, pi, 0) + 1
    if per_pi[pi] <= KEPT_REPORTS || has_key(get(lookup, pi, {}), printf("%d\n%s", r.seq, r.file))
      kept->add(r)
    endif
  endfor
  return reverse(kept)
enddef

# Per pi whose message names this Vim, the changes its newest message lists: their reports stay (Retain).
def Listed(): dict<any>
  return mapnew(pis, (_, p) => p.message.changed)
enddef

# Add `report`, replacing this pi's earlier report on the same file (another pi's stays: see Retain).
def Remember(report: dict<any>)
  const key = writer.KeyOfRecord(report)
  filter(reports, (_, r) => r.file != report.file || writer.KeyOfRecord(r) !=# key)
  reports->add(report)
  reports = Retain(reports, Listed())
enddef

def HandleMessage(msg: dict<any>, key: string): bool
  var ed = get(msg, 'editor_pid', v:null)
  if type(ed) != v:t_number || ed != getpid()
    if has_key(pis, key)
      remove(pis, key)
    endif
    # Not (or no longer) connected to us: its request for approval and its change set are not ours either.
    approval.Forget(key)
    review.Forget(key)
    return false
  endif
  var handled = get(get(pis, key, {}), 'handled', 0)
  pis[key] = {message: msg, handled: max([handled, msg.seq]), at: localtime()}
  # v0.5: what became of our send (pi_ide/send.vim), if this message says.
  try
    pi_ide#send#Answered(msg)
  catch
  endtry
  var newest: dict<dict<any>> = {}
  # Each file's new changes, oldest first (for a merge into an unsaved buffer, issue 26).
  var chains: dict<list<dict<any>>> = {}
  for c in msg.changed
    if c.seq > handled && (!has_key(newest, c.file) || newest[c.file].seq < c.seq)
      newest[c.file] = c
    endif
    if c.seq > handled
      chains[c.file] = get(chains, c.file, [])->add(c)
    endif
  endfor
  map(chains, (_, l) => sort(l, (a, b) => a.seq - b.seq))
  var changes = sort(values(newest), (a, b) => a.seq - b.seq)
  # The files to reload, read at once (ReadVerifiedMany); each is judged again as it is handled.
  var targets: dict<bool> = {}
  for c in changes
    var buf = FindBuffer(c.file)
    # A modified buffer's file is read for a merge, when pi sent one.
    if buf != 0 && (!getbufvar(buf, '&modified') || has_key(c, 'merge'))
      var plan = ReloadPlan(buf)
      if plan.verdict == 'reload'
        targets[plan.target] = true
      endif
    endif
  endfor
  var reads = ReadVerifiedMany(keys(targets))
  const fields = writer.PiFields(key, msg)
  for c in changes
    Remember(HandleChange(c, fields, reads, chains[c.file], handled))
  endfor
  last = {pid: msg.pid, seq: msg.seq}
  return true
enddef

# A listed pi file, read: [decoded JSON, "new"] when its text is new since the last read; [v:null, "same"]
# when unchanged or gone; [v:null, "bad"] when refused or malformed (said once by Problem).
def ReadNew(e: dict<any>, max: number): list<any>
  var [text, why] = ReadFile(dir .. '/' .. e.name, e, max)
  if text == ''
    if why != ''
      Problem(e.name, why)
      return [v:null, 'bad']
    endif
    return [v:null, 'same']
  endif
  if get(get(seen, e.name, {}), 'text', '') ==# text
    return [v:null, 'same']
  endif
  seen[e.name].text = text
  var [msg, bad] = Decode(text)
  if bad != ''
    Problem(e.name, bad)
    return [v:null, 'bad']
  endif
  return [msg, 'new']
enddef

# Read and handle one listed pi file. True when it was a message for us.
def Process(e: dict<any>, key: string): bool
  var [msg, read] = ReadNew(e, MAX_BYTES)
  if read != 'new'
    return false
  endif
  var bad = Validate(msg, key)
  if bad != ''
    Problem(e.name, bad)
    return false
  endif
  var life = Liveness(key)
  if life != 'alive'
    if life == 'foreign'
      Problem(e.name, printf('pid %d belongs to another user', writer.PidOfKey(key)))
    endif
    if has_key(pis, key)
      remove(pis, key)
    endif
    review.Forget(key)
    return false
  endif
  alive_at[key] = localtime()
  if has_key(problems, e.name)
    remove(problems, e.name)
  endif
  if !HandleMessage(msg, key)
    return false
  endif
  ProcessReview(key)
  return true
enddef

# v0.4: read `pi-<pid>.review.json` of pi `pid`, whose message names this Vim, after each of its messages (pi
# writes the change set before the message that announces it), and hand it to pi_ide/review.vim when its text
# is new. None there: pi changed nothing yet, or is older than v0.4, or removed it.
def ProcessReview(key: string)
  var name = printf('pi-%s.review.json', key)
  var e = writer.Entry(dir .. '/' .. name)
  var [text, why] = empty(e) ? ['', ''] : ReadFile(dir .. '/' .. name, e, review_rules.MAX_BYTES)
  if why != ''
    Problem(name, why)
    return
  endif
  if text == ''
    if has_key(review_text, key)
      remove(review_text, key)
    endif
    review.Forget(key)
    return
  endif
  if get(review_text, key, '') ==# text
    return
  endif
  review_text[key] = text
  var [msg, bad] = Decode(text)
  if bad != ''
    Problem(name, bad)
    return
  endif
  why = review.Receive(msg, key)
  if why != ''
    Problem(name, why)
  elseif has_key(problems, name)
    remove(problems, name)
  endif
enddef

# Read and hand on one listed `pi-<pid>.approval.json` (v0.4): only a live pi of this user counts.
def ProcessApproval(e: dict<any>, key: string)
  var [msg, read] = ReadNew(e, approval_rules.MAX_BYTES)
  if read == 'bad'
    # What replaced the request cannot be read as one: nothing known is waited on any more.
    approval.Forget(key)
  endif
  if read != 'new'
    return
  endif
  var life = Liveness(key)
  if life != 'alive'
    if life == 'foreign'
      Problem(e.name, printf('pid %d belongs to another user', writer.PidOfKey(key)))
    endif
    approval.Forget(key)
    return
  endif
  alive_at[key] = localtime()
  var why = approval.Receive(msg, key, localtime())
  if why != ''
    Problem(e.name, why)
  elseif has_key(problems, e.name)
    remove(problems, e.name)
  endif
enddef

# Read and hand on one listed `pi-<pid>.ask.json` (v0.5 show and ask): only a live pi of this user counts.
def ProcessAsk(e: dict<any>, key: string)
  var [msg, read] = ReadNew(e, ask.MAX_BYTES)
  if read != 'new'
    return
  endif
  var life = Liveness(key)
  if life != 'alive'
    if life == 'foreign'
      Problem(e.name, printf('pid %d belongs to another user', writer.PidOfKey(key)))
    endif
    return
  endif
  var why = ask.Receive(msg, key, 0.0 + localtime())
  if why != ''
    Problem(e.name, why)
  elseif has_key(problems, e.name)
    remove(problems, e.name)
  endif
enddef

# Liveness, looked up at most every 2 s per pi (it lists /proc): asked on every poll while a request waits.
def IsAlive(key: string): bool
  var now = localtime()
  if now - get(alive_at, key, 0) <= 2
    return true
  endif
  if Liveness(key) != 'alive'
    return false
  endif
  alive_at[key] = now
  return true
enddef

# The pi identity of a message or approval file, '' for anything else (a change set is read after its message).
def KeyOfAny(name: string): string
  return name =~# '\.review\.json$' ? '' : writer.PiKeyOfName(name)
enddef

def IsApproval(name: string): bool
  return name =~# '\.approval\.json$'
enddef

def IsAsk(name: string): bool
  return name =~# '\.ask\.json$'
enddef

# One tick of the poll: list the directory, read what may have changed.
export def Poll()
  if dir == '' || !empty(writer.CheckCached(dir, writer.Me()))
    return
  endif
  var entries = readdirex(dir, (e) => e.name =~# '^pi-', {sort: 'none'})
  var now = localtime()
  var present: dict<bool> = {}
  var acted = false
  var touched = false
  for e in entries
    var key = KeyOfAny(e.name)
    if key == ''
      continue
    endif
    present[e.name] = true
    var fp = printf('%s %s %s %d %d', e.type, e.user, e.perm, e.size, e.time)
    var old = get(seen, e.name, {})
    if !empty(old) && old.fp ==# fp && now - e.time > 2
      continue
    endif
    if empty(old)
      seen[e.name] = {fp: fp, text: ''}
    endif
    seen[e.name].fp = fp
    touched = true
    if IsApproval(e.name)
      ProcessApproval(e, key)
    elseif IsAsk(e.name)
      ProcessAsk(e, key)
    elseif Process(e, key)
      acted = true
    endif
  endfor
  for name in keys(seen)
    if !has_key(present, name)
      seen->remove(name)
      # A pi message gone: pi exited. An approval request gone: the wait ended. Either way nothing waits.
      var gone = KeyOfAny(name)
      if IsAsk(name)
        # A request file gone: pi's calls ended; nothing waits, nothing to forget (answers stay, bound by id).
        if has_key(problems, name)
          remove(problems, name)
        endif
        touched = true
        continue
      endif
      if !IsApproval(name)
        if has_key(pis, gone)
          remove(pis, gone)
        endif
        review.Forget(gone)
        if has_key(review_text, gone)
          remove(review_text, gone)
        endif
        var review_name = printf('pi-%s.review.json', gone)
        if has_key(problems, review_name)
          remove(problems, review_name)
        endif
      endif
      approval.Forget(gone)
      if has_key(problems, name)
        remove(problems, name)
      endif
      touched = true
    endif
  endfor
  if approval.Prune(now, IsAlive)
    touched = true
  endif
  if touched
    RedrawStatusIfChanged()
  endif
  # The unsaved buffers go to pi only while one is connected: a change either way asks for a write (which
  # writes or removes them). Connected() looks at liveness at most every 2 s, so a killed pi is noticed too.
  var connected = !empty(Connected())
  if connected != was_connected
    was_connected = connected
    acted = true
  endif
  if acted
    OnReport()
  endif
  if touched
    busy_until = now + BUSY_S
  endif
  PollEvery(now < busy_until ? BUSY_POLL_MS : POLL_MS)
enddef

# The poll's timer, repeating every `ms` (restarted only when that changes; not while stopped).
def PollEvery(ms: number)
  if poll_timer == 0 || poll_ms == ms
    return
  endif
  timer_stop(poll_timer)
  poll_ms = ms
  poll_timer = timer_start(ms, OnPoll, {repeat: -1})
enddef

def OnPoll(_: number)
  try
    Poll()
  catch
    pi_ide#WarnOnce('inbox', '(pi-ide) internal error reading pi''s messages, please report it: ' .. v:exception)
  endtry
enddef

# A decision was made (pi_ide/approval.vim): it goes into the state file now.
def Decided()
  RedrawStatusIfChanged()
  OnReport()
enddef

# Start polling `dir`. `On_report` asks for a prompt state write.
export def Start(state_dir: string, On_report: func)
  Stop()
  dir = state_dir
  OnReport = On_report
  approval.Start(state_dir, FindBuffer, Decided, DiskLines)
  review.Start(FindBuffer, Decided)
  ask.Start(state_dir)
  # Stop forgot every request: one still waiting is read again.
  filter(seen, (name, _) => !IsApproval(name))
  poll_ms = POLL_MS
  busy_until = 0
  poll_timer = timer_start(POLL_MS, OnPoll, {repeat: -1})
  # A pi that wrote before this Vim started.
  timer_start(0, OnPoll)
enddef

export def Stop()
  if poll_timer != 0
    timer_stop(poll_timer)
    poll_timer = 0
  endif
  StopReader()
  approval.Reset()
  review.Reset()
  ask.Reset()
  review_text = {}
enddef

export def Forget(buf: number)
  diagnostics.Forget(buf)
  review.Wiped(buf)
  if has_key(told, string(buf))
    remove(told, string(buf))
  endif
  UnlistConflicts(buf)
  if has_key(read_as, string(buf))
    remove(read_as, string(buf))
  endif
enddef

# BufReadPost, BufWritePost: the buffer and its file agree; remember what its path was when read (at read
# time: by the time pi's message comes, the path may already have been swapped).
export def BufferRead(buf: number)
  if has_key(told, string(buf))
    remove(told, string(buf))
  endif
  UnlistConflicts(buf)
  approval.BufferRead(buf)
  review.BufferRead(buf)
  if getbufvar(buf, '&buftype') != '' || bufname(buf) == ''
    if has_key(read_as, string(buf))
      remove(read_as, string(buf))
    endif
    return
  endif
  var path = fnamemodify(bufname(buf), ':p')
  var id = Identity(path)
  if !empty(id) && id.resolves_to == 'file'
    read_as[string(buf)] = {name: path, type: id.type, real: id.real}
  else
    if has_key(read_as, string(buf))
      remove(read_as, string(buf))
    endif
  endif
enddef

# Add the v0.3 fields to a state payload: the active buffer's version and diagnostics (ALE's, dated by
# pi_ide/diagnostics.vim; null when unknown, never "clean"), and the reports on pi's changes, each with its
# buffer's diagnostics as they are now (pi waits for those of the new content after its edit).
export def Annotate(payload: dict<any>, buf: number)
  payload.protocol = '0.3'
  payload.active_buffer.version = getbufvar(buf, 'changedtick')
  payload.active_buffer.diagnostics = diagnostics.Collect(buf)
  reports = Retain(reports, Listed())
  if !empty(reports)
    payload.files = mapnew(reports, (_, r) => ({file: r.file, seq: r.seq, status: r.status,
      version: r.version, modified: r.modified, diagnostics_expected: r.diagnostics_expected,
      diagnostics: has_key(r, 'buf') && bufexists(r.buf) ? diagnostics.Collect(r.buf) : v:null}
      ->extend(has_key(r, 'pi_ns') ? {pi_pid: r.pi_pid, pi_ns: r.pi_ns} : {pi_pid: r.pi_pid})
      # Issue 26: only for `merged` and `conflict`, which only a pi that sent hunks gets.
      ->extend(has_key(r, 'merge') ? {merge: r.merge} : {})))
  endif
  payload.pi = empty(last) ? v:null : {pid: last.pid, seq: last.seq}
  # v0.4: always written, empty before the first decision: it tells pi this Vim answers approvals.
  payload.decisions = approval.Decisions()
  # v0.4: pi's hunks the user reverted here, once there are any.
  var undone = review.Reverted()
  if type(undone) == v:t_list
    payload.reverted = undone
  endif
enddef

# The pi connected to this Vim: the most recent live pi whose message names us, or {}.
export def Connected(): dict<any>
  var best: dict<any> = {}
  var now = localtime()
  for [key, p] in items(pis)
    # The liveness check at most every 2 s: statuslines ask on every redraw.
    if now - get(alive_at, key, 0) > 2
      if Liveness(key) == 'alive'
        alive_at[key] = now
      else
        pis->remove(key)
        continue
      endif
    endif
    if empty(best) || p.at > best.at
      best = p
    endif
  endfor
  if empty(best)
    return {}
  endif
  var m = best.message
  return {pid: m.pid, cwd: type(get(m, 'cwd', 0)) == v:t_string ? m.cwd : '', last_turn: get(m, 'last_turn', [])}
enddef

# v0.5 send to pi: every live pi whose message names this Vim, newest first, as {key, pid, fields (writer.PiFields:
# pi_pid, and pi_ns as its message said), cwd}.
export def All(): list<dict<any>>
  Connected() # drops the dead ones
  var out: list<dict<any>> = []
  for [key, p] in items(pis)
    var m = p.message
    out->add({key: key, pid: writer.PidOfKey(key), fields: writer.PiFields(key, m),
      cwd: type(get(m, 'cwd', 0)) == v:t_string ? m.cwd : '', at: p.at})
  endfor
  return sort(out, (a, b) => b.at - a.at)
enddef

def StatusText(): string
  var pi = Connected()
  var text = empty(pi) ? '' : empty(pi.last_turn) ? 'pi' : printf('pi +%d', len(pi.last_turn))
  var waits = approval.StatusText()
  return waits == '' ? text : text == '' ? waits : text .. ' ' .. waits
enddef

def RedrawStatusIfChanged()
  var text = StatusText()
  if text != status_drawn
    status_drawn = text
    redrawstatus!
  endif
enddef

export def Statusline(): string
  status_drawn = StatusText()
  return status_drawn
enddef

export def SummaryLines(): list<string>
  var lines: list<string> = []
  var pi = Connected()
  if !empty(pi)
    lines->add(printf('pi: connected, pid %d, cwd %s', pi.pid, pi.cwd))
    lines->add(empty(pi.last_turn) ? 'pi changed no files in its last turn'
      : 'pi changed in its last turn: ' .. join(mapnew(pi.last_turn, (_, f) => fnamemodify(f, ':~:.')), ', '))
  else
    lines->add('pi: none connected')
  endif
  for [buf, name] in items(told)
    if bufexists(str2nr(buf)) && getbufvar(str2nr(buf), '&modified')
      lines->add(printf('not reloaded: pi changed %s on disk, your unsaved changes were kept. %s', name,
        HOW_TO_RESOLVE))
    endif
  endfor
  lines += approval.SummaryLines()
  lines += review.SummaryLines()
  for name in sort(keys(problems))
    lines->add(printf('ignored %s: %s', name, problems[name]))
  endfor
  return lines + diagnostics.SummaryLines()
enddef

# For tests.
export def Debug(): dict<any>
  return {reports: reports, last: last, problems: problems, watching: poll_timer != 0, poll_ms: poll_ms,
    reader: type(reader) == v:t_job ? job_status(reader) : 'none'}
enddef
