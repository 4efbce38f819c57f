// The install rehearsal on musl (Alpine): this checkout is published with its release
// scripts for linux-x64-gnu and linux-x64-musl to a loopback verdaccio, then npm running
// on a musl Node installs it into an empty folder, where it must pick the musl package,
// and the docs examples and the README's first example run on that Node. Needs both
// addons built and a musl Node: scripts/platforms/musl.sh runs it with
// TOOLNEXUS_MUSL_NODE_BIN set (a folder with `node` and `npm`), on any other run it skips.
import assert from "node:assert/strict"
import fs from "node:fs"
import os from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"

import { type Registry, startRegistry } from "./install/registry.js"
import { packageSize, run, stageCheckout, stageExamples, withoutRust } from "./install/steps.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const muslBin = process.env.TOOLNEXUS_MUSL_NODE_BIN
const BUILT = { "x86_64-unknown-linux-gnu": "linux-x64-gnu", "x86_64-unknown-linux-musl": "linux-x64-musl" }
const examples = ["loadMcp-1", "loadMcp-2", "loadMcp-3", "listMcpTools-1", "listMcpTools-2", "listMcpTools-3"]

describe("npm install toolnexus on a musl Node", { skip: !muslBin && "no musl Node given", timeout: 600_000 }, () => {
  let tmp: string
  let registry: Registry
  let app: string

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolnexus-install-musl-"))
    registry = await startRegistry(path.join(tmp, "registry"))
    const binaries = Object.fromEntries(
      Object.entries(BUILT).map(([triple, dir]) => [triple, path.join(root, `toolnexus.${dir}.node`)]),
    )
    const src = stageCheckout(root, path.join(tmp, "src"), binaries)
    // The platforms this machine built; the release workflow builds every listed one.
    const manifest = path.join(src, "package.json")
    const pkg = JSON.parse(fs.readFileSync(manifest, "utf8"))
    pkg.napi.targets = Object.keys(BUILT)
    fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2))
    run("npm", ["run", "artifacts"], { cwd: src, env: registry.env })
    run("npm", ["publish"], { cwd: src, env: registry.env })
    app = path.join(tmp, "app")
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
  })

  after(async () => {
    await registry?.stop()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  })

  it("npm on the musl Node installs the musl platform package, and only it", () => {
    const env = withoutRust(registry.env, muslBin)
    assert.equal(
      run("node", ["-p", "process.report.getReport().header.glibcVersionRuntime"], { cwd: app, env }).stdout,
      "undefined\n",
    )
    run("npm", ["install", "toolnexus", "@modelcontextprotocol/sdk"], { cwd: app, env })
    const { packages } = packageSize(app)
    const ours = packages.filter((p) => p.startsWith("toolnexus")).sort()
    assert.deepEqual(ours, ["toolnexus", "toolnexus-linux-x64-musl"])
  })

  it("runs the docs examples and the first example on the musl Node", () => {
    const env = withoutRust(registry.env, muslBin)
    stageExamples(root, app, examples)
    const tsx = import.meta.resolve("tsx")
    for (const name of examples) {
      const { stdout } = run("node", ["--import", tsx, `docs/${name}.ts`], { cwd: app, env })
      assert.ok(
        stdout.split("\n").some((line) => line.startsWith("ok:")),
        `${name}: ${stdout}`,
      )
    }
    const first = run("node", ["first.mjs"], { cwd: app, env }).stdout
    assert.match(first, /\{ demo: 'connected' \}\n\[ 'demo_echo', 'demo_add', 'demo_word_count' \]\n5\n/)
    const list = run("npx", ["toolnexus", "list", "examples/mcp.json"], { cwd: app, env })
    assert.match(list.stdout, /^demo: connected \(3 tools, protocol 2025-\d\d-\d\d, up in \d+ ms\)$/m)
  })
})
