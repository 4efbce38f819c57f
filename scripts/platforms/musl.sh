#!/usr/bin/env bash
# musl (Alpine): the release builds for x64 and arm64 (zig as the C compiler and linker);
# on x64 then, under a musl Node, the JS suite's lifecycle, load, traffic and hostile-input
# files, the Rust tests built for musl, and the install rehearsal: the release scripts
# publish the gnu and musl packages to a local registry, and npm on the musl Node picks
# the musl one.
source "$(dirname "$0")/lib/common.sh"
cd "$ROOT"

need_zig
need_rust_target x86_64-unknown-linux-musl aarch64-unknown-linux-musl
need_musl_node

for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
  step "release build: $target"
  npm run build:target -- --target "$target" -x
done
for cpu in x64 arm64; do
  # Linked against the musl loader only: no glibc symbol versions slipped in.
  needed=$(readelf -d "toolnexus.linux-$cpu-musl.node" | grep NEEDED)
  echo "$needed"
  [ "$(echo "$needed" | grep -vc 'libc.so')" = 0 ] || { echo "unexpected NEEDED entries" >&2; exit 1; }
done

step "the musl Node loads the musl addon"
in_musl "$MUSL_NODE_BIN/node" --input-type=module -e '
  await import("toolnexus")
  const maps = (await import("node:fs")).readFileSync("/proc/self/maps", "utf8")
  if (!maps.includes("toolnexus.linux-x64-musl.node")) throw new Error("the musl addon was not the one loaded")
  if (process.report.getReport().header.glibcVersionRuntime) throw new Error("this Node is not a musl one")
  console.log("ok: toolnexus.linux-x64-musl.node on", process.version)
'

step "JS tests on the musl Node"
in_musl "$MUSL_NODE_BIN/node" --import tsx --test __test__/lifecycle.test.ts __test__/load.test.ts \
  __test__/traffic.test.ts __test__/hostile-input.test.ts

step "Rust tests built for musl"
cargo-zigbuild test --workspace --target x86_64-unknown-linux-musl

step "install rehearsal: npm on the musl Node picks the musl package"
TOOLNEXUS_MUSL_NODE_BIN="$MUSL_NODE_BIN" in_musl node --import tsx --test __test__/install-musl.test.ts
