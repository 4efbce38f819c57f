// What `napi build --use-napi-cross` asks of `@napi-rs/cross-toolchain`: per host CPU, the
// targets it has toolchains for; a `version`, which names its cache folder
// (~/.napi-rs/cross-toolchain/<version>/<target>); and `download(arch, target)`, which
// fetches `@napi-rs/cross-toolchain-<arch>-target-<cpu>` at the version of the release it
// belongs to. No release has both x64-hosted toolchains we need (the x86_64 one was
// published only as 1.0.0, the aarch64 one only as 1.0.3), so each target is handed to
// the release that has its toolchain.
"use strict"

/** Per host CPU (`process.arch`), the release that holds each target's toolchain. */
const releases = {
  x64: {
    "x86_64-unknown-linux-gnu": "cross-toolchain-for-x86_64",
    "aarch64-unknown-linux-gnu": "cross-toolchain-for-aarch64",
  },
}

module.exports.x64 = releases.x64

// The x86_64 toolchain's release, so that caches made before this stand-in stay valid.
module.exports.version = require("cross-toolchain-for-x86_64/package.json").version

module.exports.download = function download(arch, target) {
  const release = releases[arch]?.[target]
  if (!release) throw new Error(`no cross toolchain for ${target} on a ${arch} host`)
  return require(release).download(arch, target)
}
