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
for target in "${TARGETS[@]}"; do
  # The oldest macOS each release supports: 10.14 on x64 (rustls-platform-verifier needs
  # it), 11 on arm64, the first macOS there; the same as CI.yml. zig, which builds ring's
  # C here, takes the number as given, and finds no SDK headers for arm64 at 10.14.
  case "$target" in
    aarch64-*) export MACOSX_DEPLOYMENT_TARGET=11.0 ;;
    *) export MACOSX_DEPLOYMENT_TARGET=10.14 ;;
  esac
  step "cargo zigbuild check: $target"
  cargo-zigbuild check --target "$target" --features node --all-targets
  step "clippy -D warnings: $target"
  cargo-zigbuild clippy --target "$target" --workspace --all-targets -- -D warnings
  cargo-zigbuild clippy --target "$target" --features node -- -D warnings
done
