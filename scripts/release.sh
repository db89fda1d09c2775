#!/usr/bin/env bash
# Builds every artifact of a release at package.json's version, in one run: `npm run release`.
# Output in dist/ (or $PI_IDE_RELEASE_OUT), each file named with the version:
#   pi-ide-context-<v>.tgz                     the pi package (npm pack): the extension, the Neovim, Vim and Emacs clients
#   pi-ide-context-<v>.vsix                    the VS Code extension
#   pi-ide-context-jetbrains-<v>.zip           the JetBrains plugin ("Install Plugin from Disk")
#   pi-ide-context-obsidian-<v>/               the Obsidian plugin's files (main.js, manifest.json)
#   pi-ide-<v>.tar                             the Emacs package (package-install-file)
# Needs, beyond `npm ci`: a JDK and Debian's IntelliJ platform jars for the JetBrains plugin (the same packages
# as `npm test`; it says which are missing). Installs the VS Code and Obsidian clients' build tools with `npm ci`
# in their folders when they are not there yet. Refuses to build when a client's manifest names another version.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
export PATH=$repo/node_modules/.bin:$PATH
out=${PI_IDE_RELEASE_OUT:-$repo/dist}

log() { echo "release: $*"; }
fail() {
	echo "release: $*" >&2
	exit 1
}
# Runs a build step and shows its output only when it fails.
quiet() {
	local output
	output=$("$@" 2>&1) || {
		printf '%s\n' "$output" >&2
		fail "failed: $*"
	}
}

version=$(node -p 'require("./package.json").version')
mismatches=$(node scripts/release-versions.ts --check) || fail "every client must say version $version first: $mismatches"

missing=()
for pkg in openjdk-17-jdk-headless libintellij-platform-api-java libintellij-platform-impl-java libintellij-core-java \
	libintellij-utils-java libintellij-extensions-java; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] || fail "the JetBrains plugin needs Debian packages: apt-get install ${missing[*]}"

for client in vscode obsidian; do
	if [ ! -d "editors/$client/node_modules" ]; then
		log "installing editors/$client's build tools (npm ci)"
		quiet npm ci --prefix "editors/$client" --no-audit --no-fund
	fi
done

rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log "pi package"
quiet npm pack --pack-destination "$out"

log "VS Code extension"
# The client's own `package` script: its build, then vsce into editors/vscode/dist/.
quiet npm run --prefix editors/vscode package
mv editors/vscode/dist/pi-ide-context.vsix "$out/pi-ide-context-$version.vsix"

log "JetBrains plugin"
PI_IDE_JETBRAINS_OUT=$work/jetbrains quiet bash editors/jetbrains/build.sh
cp "$work/jetbrains/pi-ide-context-jetbrains.zip" "$out/pi-ide-context-jetbrains-$version.zip"

log "Obsidian plugin"
quiet npm run --prefix editors/obsidian build
mkdir -p "$out/pi-ide-context-obsidian-$version"
cp editors/obsidian/main.js editors/obsidian/manifest.json "$out/pi-ide-context-obsidian-$version/"

log "Emacs package"
mkdir -p "$work/emacs/pi-ide-$version"
cp editors/emacs/*.el "$work/emacs/pi-ide-$version/"
tar -C "$work/emacs" --owner=0 --group=0 --sort=name -cf "$out/pi-ide-$version.tar" "pi-ide-$version"

log "version $version in $out:"
(cd "$out" && ls -1)
