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

# `g:pi_ide_disable = 1` keeps it off.
if !get(g:, 'pi_ide_disable', false)
  if v:vim_did_enter
    pi_ide#Autostart()
  else
    augroup PiIdeStart
      autocmd!
      autocmd VimEnter * ++once pi_ide#Autostart()
    augroup END
  endif
endif
