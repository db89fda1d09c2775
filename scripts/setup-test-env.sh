#!/usr/bin/env bash
# Everything `npm test` needs beyond `npm ci`, installed idempotently (it runs as `pretest`):
#   - Debian packages: neovim (0.7.2 on Debian 12, 0.10 on Debian 13), lua-check (luacheck, run by
#     `npm run check` on the Neovim client), tmux, git, and for the real
#     VS Code test chromium + libkrb5-dev (code-server's kerberos add-on builds from source);
#   - Neovim 0.10 unpacked from Debian 13 into .cache/nvim-0.10 (the version matrix runs 0.7.2 and 0.10);
#   - code-server in .cache/vscode-test for the real VS Code test.
# A second run with everything present takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v nvim >/dev/null || need+=(neovim)
command -v luacheck >/dev/null || need+=(lua-check)
command -v tmux >/dev/null || need+=(tmux)
[ -x /usr/bin/vim.nox ] || need+=(vim-nox)
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-test-env: missing Debian packages: ${need[*]}; install them (apt-get install ${need[*]}) and rerun" >&2
    exit 1
  fi
  echo "setup-test-env: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

bash scripts/fetch-nvim-0.10.sh
if [ -f scripts/setup-vscode-test.sh ]; then bash scripts/setup-vscode-test.sh; fi
