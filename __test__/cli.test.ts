// The `toolnexus list [config]` bin: which servers come up and what tools they offer.
// Exit codes: 0 all good, 1 a server failed, 2 a usage or config error.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { failureLines, linesWith, NODE, ROOT, runProcess, tempDir, type NodeRun } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")
const DEMO_SERVER = path.join(ROOT, "examples", "demo-server.mjs")
const TEST_TIMEOUT = { timeout: 30_000 }

/** Runs `node bin/toolnexus.js ...args` (from the repo root unless `cwd`); never rejects. */
const runBin = (args: string[], opts: { cwd?: string; timeout?: number } = {}) =>
  runProcess([BIN, ...args], { cwd: opts.cwd, timeout: opts.timeout ?? 20_000 })

const show = (run: NodeRun) => `exit ${run.code} (signal ${run.signal})\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`

function assertExit(run: NodeRun, code: number): void {
  assert.equal(run.timedOut, false, `the bin did not exit on its own\n${show(run)}`)
  assert.equal(run.code, code, show(run))
}

const USAGE = /^usage: toolnexus list/m

function writeConfig(dir: string, config: unknown, name = "mcp.json"): string {
  const file = path.join(dir, name)
  fs.writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config))
  return file
}

describe("toolnexus list", () => {
  test("examples/mcp.json: exit 0, the demo server's tools with required params, the remote disabled", TEST_TIMEOUT, async () => {
    const run = await runBin(["list", "examples/mcp.json"])
    assertExit(run, 0)
    const lines = run.stdout.split("\n")
    const demo = lines.findIndex((l) => l.startsWith("demo: connected"))
    assert.ok(demo >= 0, `no "demo: connected" line\n${show(run)}`)
    // The demo server's tools follow its line, indented, in listed order.
    const tools = lines.slice(demo + 1, demo + 4)
    assert.match(tools[0], /^\s+echo \(requires: text\): /, show(run))
    assert.match(tools[1], /^\s+add \(requires: a, b\): /, show(run))
    assert.match(tools[2], /^\s+word_count \(requires: text\): /, show(run))
    assert.deepEqual(linesWith(run.stdout, "example-remote:"), ["example-remote: disabled"])
    assert.equal(failureLines(run.stderr, "demo").length, 0, show(run))
  })

  test("a failing server: exit 1, printed as failed; the other servers still listed", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    const file = writeConfig(dir, {
      mcpServers: {
        bad: { command: ["node", "/no/such/script.mjs"], timeout: 10_000 },
        good: { command: [NODE, DEMO_SERVER], timeout: 10_000 },
      },
    })
    const run = await runBin(["list", file])
    assertExit(run, 1)
    assert.deepEqual(linesWith(run.stdout, "bad:"), ["bad: failed"], show(run))
    assert.ok(linesWith(run.stdout, "good: connected").length === 1, show(run))
    assert.equal(failureLines(run.stderr, "bad").length, 1, show(run))
  })

  test("the config defaults to ./mcp.json in the working directory", TEST_TIMEOUT, async (t) => {
    const dir = tempDir(t)
    writeConfig(dir, { off: { url: "https://example.com/mcp", enabled: false } })
    const run = await runBin(["list"], { cwd: dir })
    assertExit(run, 0)
    assert.deepEqual(run.stdout.trim().split("\n"), ["off: disabled"])
  })

  for (const args of [[], ["frob"], ["list", "a.json", "b.json"], ["--help"]]) {
    test(`arguments ${JSON.stringify(args)}: exit 2 with a usage line`, TEST_TIMEOUT, async () => {
      const run = await runBin(args)
      assertExit(run, 2)
      assert.match(run.stderr, USAGE, show(run))
      assert.equal(run.stdout, "", show(run))
    })
  }

  test("a missing config file: exit 2 naming the file", TEST_TIMEOUT, async (t) => {
    const missing = path.join(tempDir(t), "nope", "mcp.json")
    const run = await runBin(["list", missing])
    assertExit(run, 2)
    assert.ok(run.stderr.includes(missing), `stderr does not name ${missing}\n${show(run)}`)
    assert.equal(run.stdout, "", show(run))
  })

  test("a config that is not JSON: exit 2 naming the file", TEST_TIMEOUT, async (t) => {
    const file = writeConfig(tempDir(t), "{ not json")
    const run = await runBin(["list", file])
    assertExit(run, 2)
    assert.ok(run.stderr.includes(file), `stderr does not name ${file}\n${show(run)}`)
  })
})
