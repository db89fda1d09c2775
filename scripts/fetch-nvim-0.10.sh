#!/usr/bin/env bash
# Fetch Debian 13 (trixie)'s Neovim 0.10 into <repo>/.cache/nvim-0.10 and write a launcher there, so the
# Neovim client's test suite can run against 0.10 as well as Debian 12's apt 0.7.2.
#
# Why not apt-get install: trixie's neovim needs glibc >= 2.38 and Debian 12 ships 2.36. We never touch the
# system: a private APT config downloads neovim's dependency closure (trixie's libc6 included), dpkg-deb -x
# unpacks it, and the launcher runs the binary through trixie's own ld-linux with --library-path.
# Recipe: ../shared/notes/fetch-nvim-0.10.md (the team's notes beside this repository). Needs only
# deb.debian.org (or the mirror in $DEBIAN_MIRROR). Idempotent: a working launcher means there is nothing to do.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${NVIM_010_DIR:-$repo/.cache/nvim-0.10}
launcher=$target/nvim
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

works() { [ -x "$1" ] && "$1" --version 2>/dev/null | head -n1 | grep -Eq '^NVIM v0\.(1[0-9]|[2-9][0-9])\.|^NVIM v[1-9]'; }

if works "$launcher" && [ -e "$target/data/nvim/site/parser" ]; then
	exit 0
fi

# On Debian 13 and later the system Neovim is already >= 0.10: point the launcher at it.
sys=$(command -v nvim || true)
if [ -n "$sys" ] && works "$sys"; then
	mkdir -p "$target"
	printf '#!/bin/sh\nexec %s "$@"\n' "$sys" >"$launcher"
	chmod 755 "$launcher"
	echo "fetch-nvim-0.10: system $sys is >= 0.10; $launcher points at it"
	exit 0
fi

for tool in apt-get apt-cache dpkg-deb; do
	command -v "$tool" >/dev/null || { echo "fetch-nvim-0.10: needs $tool (Debian/Ubuntu)" >&2; exit 1; }
done
[ -r "$keyring" ] || { echo "fetch-nvim-0.10: needs $keyring (apt-get install debian-archive-keyring)" >&2; exit 1; }

# Build in a scratch dir next to the target and move it into place at the end, so an interrupted run never
# leaves a half-unpacked tree that looks installed.
mkdir -p "$(dirname "$target")"
work=$(mktemp -d "$target.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/etc/sources.list.d" "$work/etc/preferences.d" "$work/etc/apt.conf.d" "$work/lists/partial" "$work/cache/archives/partial" \
	"$work/debs" "$work/root"
: >"$work/status"
echo "deb [signed-by=$keyring] $mirror trixie main" >"$work/etc/sources.list"
cat >"$work/apt.conf" <<CONF
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
Dir::Etc "$work/etc";
Dir::Etc::sourcelist "$work/etc/sources.list";
Dir::Etc::sourceparts "$work/etc/sources.list.d";
Dir::Etc::preferencesparts "$work/etc/preferences.d";
Dir::State "$work";
Dir::State::lists "$work/lists";
Dir::State::status "$work/status";
Dir::Cache "$work/cache";
Dir::Cache::archives "$work/cache/archives";
APT::Sandbox::User "root";
Acquire::Languages "none";
CONF
export APT_CONFIG=$work/apt.conf

echo "fetch-nvim-0.10: reading trixie package lists from $mirror"
apt-get -q update >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; exit 1; }
mapfile -t pkgs < <(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances neovim | grep -E '^[a-z0-9]' | sort -u)
[ "${#pkgs[@]}" -gt 0 ] || { echo "fetch-nvim-0.10: could not resolve neovim's dependencies" >&2; exit 1; }
echo "fetch-nvim-0.10: downloading ${#pkgs[@]} packages"
(cd "$work/debs" && apt-get -q download "${pkgs[@]}" >"$work/download.log" 2>&1) || {
	cat "$work/download.log" >&2
	exit 1
}
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done

R=$target/root
L=$R/usr/lib/x86_64-linux-gnu
# Trixie's ftplugins (lua, vim, markdown...) start treesitter and fail without the bundled parsers, which a
# system install finds in /usr/lib/nvim/parser. Expose them as a system data dir ("site/parser").
mkdir -p "$work/data/nvim/site"
ln -s "$R/usr/lib/nvim/parser" "$work/data/nvim/site/parser"
# exec keeps the pid equal to nvim's own, which matters: the state file is named <pid>.json.
cat >"$work/nvim" <<LAUNCH
#!/bin/sh
export VIMRUNTIME="$R/usr/share/nvim/runtime" LUA_CPATH="$L/lua/5.1/?.so;;"
export XDG_DATA_DIRS="$target/data:\${XDG_DATA_DIRS:-/usr/local/share:/usr/share}"
exec "$L/ld-linux-x86-64.so.2" --library-path "$L" "$R/usr/bin/nvim" "\$@"
LAUNCH
chmod 755 "$work/nvim"
rm -rf "$work/lists" "$work/cache" "$work/debs" "$work/etc" "$work/apt.conf" "$work/status" "$work"/*.log
rm -rf "$target"
chmod 755 "$work"
mv "$work" "$target"
trap - EXIT
if ! works "$launcher"; then
	echo "fetch-nvim-0.10: $launcher was written but does not run" >&2
	"$launcher" --version >&2 || true
	exit 1
fi
echo "fetch-nvim-0.10: $("$launcher" --version | head -n1) at $launcher"
