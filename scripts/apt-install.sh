#!/usr/bin/env bash
# Install Debian packages (scripts/setup-test-env.sh, .ci/run): refresh the package lists, then install the
# packages named as arguments (none: refresh only). While another apt or dpkg holds a lock (an unattended
# upgrade, a second `npm test`), wait up to APT_LOCK_WAIT seconds (default 300) instead of failing at once.
# apt-get waits for dpkg's lock itself (DPkg::Lock::Timeout), but apt 2.6 (Debian 12) does not wait for the
# package lists' lock that `apt-get update` takes: that one is retried here.
set -euo pipefail
wait_s=${APT_LOCK_WAIT:-300}
export DEBIAN_FRONTEND=noninteractive
# apt's lock message is matched below: keep it untranslated.
export LC_ALL=C

deadline=$((SECONDS + wait_s))
said=""
until out=$(apt-get -o DPkg::Lock::Timeout="$wait_s" update -qq 2>&1); do
  if [[ $out != *"Could not get lock"* ]] || ((SECONDS >= deadline)); then
    printf '%s\n' "$out" >&2
    exit 1
  fi
  if [ -z "$said" ]; then
    echo "apt-install: another apt holds the package lists' lock; waiting up to ${wait_s} s" >&2
    said=1
  fi
  sleep 1
done
# Warnings of a successful update (a repository without a Release file, ...) are still worth seeing.
[ -z "$out" ] || printf '%s\n' "$out" >&2

if [ $# -gt 0 ]; then
  apt-get -o DPkg::Lock::Timeout="$wait_s" install -y -qq --no-install-recommends "$@" >/dev/null
fi
