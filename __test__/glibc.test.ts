// The linux-gnu addon must load on glibc 2.28 systems and newer (RHEL 8, Debian 10,
// Ubuntu 20.04): `npm run build` links it against napi-cross's glibc 2.17 sysroot, and
// this reads the highest GLIBC_ symbol version it needs from its dynamic symbol table.
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { it } from "node:test"
import { fileURLToPath } from "node:url"

const MAX = [2, 28]
const addon = fileURLToPath(new URL(`../toolnexus.linux-${process.arch}-gnu.node`, import.meta.url))

const parse = (v: string) => v.split(".").map(Number)
const newer = (a: number[], b: number[]) =>
  (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0)

it(
  `the linux-${process.arch}-gnu addon needs glibc <= ${MAX.join(".")}`,
  { skip: process.platform !== "linux" },
  () => {
    const symbols = execFileSync("objdump", ["-T", addon], { encoding: "utf8", maxBuffer: 64 << 20 })
    const versions = [...symbols.matchAll(/\bGLIBC_(\d+(?:\.\d+)+)/g)].map((m) => parse(m[1]!))
    assert.ok(versions.length > 0, "no GLIBC_ symbols found: is this a glibc build?")
    const highest = versions.reduce((a, b) => (newer(a, b) >= 0 ? a : b))
    assert.ok(
      newer(highest, MAX) <= 0,
      `the addon needs GLIBC_${highest.join(".")}; build it with \`npm run build\` (napi-cross), not natively`,
    )
  },
)
