#!/usr/bin/env bash
# Everything `npm test` needs beyond `npm ci`, installed idempotently (it runs as `pretest`):
#   - Debian packages: neovim (0.7.2 on Debian 12, 0.10 on Debian 13), lua-check (luacheck, run by
#     `npm run check` on the Neovim client), tmux, git, vim-nox and vim-ale (the Vim client and the ALE it reads
#     diagnostics from), emacs-nox with elpa-flycheck and elpa-vterm (the Emacs client's tests, Flycheck and
#     vterm as Debian ships them), and for the real VS Code test chromium + libkrb5-dev (code-server's kerberos
#     add-on builds from source), for the JetBrains client a JDK, the IntelliJ platform 183 jars and JUnit 5;
#   - Neovim 0.10 unpacked from Debian 13 into .cache/nvim-0.10 (the version matrix runs 0.7.2 and 0.10);
#   - code-server in .cache/vscode-test for the real VS Code test;
#   - verdaccio (a local npm registry, from npm) in test/registry/node_modules for the release test.
# A second run with everything present takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v nvim >/dev/null || need+=(neovim)
command -v luacheck >/dev/null || need+=(lua-check)
command -v tmux >/dev/null || need+=(tmux)
[ -x /usr/bin/vim.nox ] || need+=(vim-nox)
# ALE, the linter engine the Vim client reads diagnostics from (Debian installs it as an optional package: `packadd ale`).
[ -d /usr/share/vim-ale ] || need+=(vim-ale)
command -v emacs >/dev/null || need+=(emacs-nox)
dpkg -s elpa-flycheck >/dev/null 2>&1 || need+=(elpa-flycheck)
dpkg -s elpa-vterm >/dev/null 2>&1 || need+=(elpa-vterm)
command -v git >/dev/null || need+=(git)
# bubblewrap: pi in a sandbox beside the host's editors (test/e2e/bubblewrap.test.ts, issue 23).
command -v bwrap >/dev/null || need+=(bubblewrap)
# unzip: the release test reads the .vsix and the JetBrains plugin zip.
command -v unzip >/dev/null || need+=(unzip)
command -v chromium >/dev/null || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
# The JetBrains client (editors/jetbrains/build.sh): a JDK, the IntelliJ platform 183 jars, JUnit 5.
dpkg -s openjdk-17-jdk-headless >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
dpkg -s libintellij-platform-api-java >/dev/null 2>&1 || need+=(libintellij-platform-api-java)
dpkg -s libintellij-platform-impl-java >/dev/null 2>&1 || need+=(libintellij-platform-impl-java)
dpkg -s libintellij-core-java >/dev/null 2>&1 || need+=(libintellij-core-java)
dpkg -s libintellij-utils-java >/dev/null 2>&1 || need+=(libintellij-utils-java)
dpkg -s libintellij-extensions-java >/dev/null 2>&1 || need+=(libintellij-extensions-java)
dpkg -s junit5 >/dev/null 2>&1 || need+=(junit5)
# ...and what intellij-core's headless application needs when the plugin's glue is tested
dpkg -s libpicocontainer1-java >/dev/null 2>&1 || need+=(libpicocontainer1-java)
dpkg -s libguava-java >/dev/null 2>&1 || need+=(libguava-java)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-test-env: missing Debian packages: ${need[*]}; install them (apt-get install ${need[*]}) and rerun" >&2
    exit 1
  fi
  echo "setup-test-env: installing ${need[*]}"
  # Waits while another apt or dpkg holds the lock.
  bash scripts/apt-install.sh "${need[@]}"
fi

bash scripts/fetch-nvim-0.10.sh
# verdaccio, the local npm registry of the release test (test/e2e/release.test.ts), pinned by its own lock file.
if [ ! -x test/registry/node_modules/.bin/verdaccio ]; then
  echo "setup-test-env: installing verdaccio into test/registry"
  (cd test/registry && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -f scripts/setup-vscode-test.sh ]; then bash scripts/setup-vscode-test.sh; fi
