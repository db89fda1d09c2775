" pi-ide: lets the pi coding agent see the file, cursor and selection of this Vim (see :help pi-ide).
" Kept tiny: it runs at every start, so it only defines :PiIde and starts the client once Vim is up; the
" code lives in autoload/ and loads then.
if !has('vim9script') || v:version < 900
  finish
endif
vim9script

# The zero-config link pi creates and a plugin manager's copy may both be on 'packpath': the first wins.
if exists('g:loaded_pi_ide')
  finish
endif
g:loaded_pi_ide = 1

command -nargs=? -complete=custom,pi_ide#Complete PiIde pi_ide#Command(<q-args>)
# v0.5 send to pi: `:PiIdeSend [prompt]` (a draft in pi's input), `:PiIdeSend! [prompt]` (at once), with a range
# the selection, `@diagnostic`, `@hunk` or `@file` first for those. Mappings are offered, never set.
command -bang -range -nargs=* -complete=custom,pi_ide#send#Complete PiIdeSend
  \ pi_ide#send#Command(<bang>false, <range>, <line1>, <line2>, <q-args>)
nnoremap <silent> <Plug>(pi-ide-send) <Cmd>PiIdeSend<CR>
xnoremap <silent> <Plug>(pi-ide-send) :PiIdeSend<CR>
nnoremap <silent> <Plug>(pi-ide-send-now) <Cmd>PiIdeSend!<CR>
xnoremap <silent> <Plug>(pi-ide-send-now) :PiIdeSend!<CR>
nnoremap <silent> <Plug>(pi-ide-send-diagnostic) <Cmd>PiIdeSend @diagnostic<CR>

import autoload 'pi_ide/diagnostics.vim'

# `g:pi_ide_disable = 1` keeps it off.
if !get(g:, 'pi_ide_disable', false)
  # ALE's lint cycles, followed from the start: ALE lints the files given on the command line before
  # VimEnter. User events of a plugin that is not installed never fire, so without ALE this costs nothing
  # (pi_ide/diagnostics.vim loads at the first one).
  augroup PiIdeAle
    autocmd!
    autocmd User ALEWantResults diagnostics.OnWantResults()
    autocmd User ALELintPre diagnostics.OnLintPre()
    autocmd User ALEJobStarted diagnostics.OnStarted()
    autocmd User ALELintPost diagnostics.OnLintPost()
  augroup END
  if v:vim_did_enter
    pi_ide#Autostart()
  else
    augroup PiIdeStart
      autocmd!
      autocmd VimEnter * ++once pi_ide#Autostart()
    augroup END
  endif
endif
