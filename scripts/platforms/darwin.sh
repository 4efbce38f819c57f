#!/usr/bin/env bash
# macOS, x64 and arm64: the crate (the napi layer included) type-checks and passes clippy
# with warnings denied for both targets. Linking needs Apple's SDK, which no registry
# has, so the release binaries come from macos-latest (see CI.yml); zig stands in as the
# C compiler for ring's build script.
source "$(dirname "$0")/lib/common.sh"
cd "$ROOT"

TARGETS=(x86_64-apple-darwin aarch64-apple-darwin)
need_rust_target "${TARGETS[@]}"
need_zig
# The oldest macOS the x64 release supports (rustls-platform-verifier needs 10.14); arm64
# starts at 11 whatever this says. The same as CI.yml.
export MACOSX_DEPLOYMENT_TARGET=10.14

for target in "${TARGETS[@]}"; do
  step "cargo zigbuild check: $target"
  cargo-zigbuild check --target "$target" --features node --all-targets
  step "clippy -D warnings: $target"
  cargo-zigbuild clippy --target "$target" --workspace --all-targets -- -D warnings
  cargo-zigbuild clippy --target "$target" --features node -- -D warnings
done
