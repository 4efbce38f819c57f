// `toolnexus read`, `toolnexus prompt`, and the resource and prompt counts of
// `toolnexus list`, against a server written with the official SDK v2: server text is
// printed with its control characters escaped; what toolnexus composes hides secrets.
import assert from "node:assert/strict"
import fs from "node:fs"
import path from "node:path"
import { describe, test } from "node:test"
import { SECRET } from "./fixtures/offer-server.mjs"
import { fixture, NODE, ROOT, runProcess, tempDir, type NodeRun } from "./helpers.js"

const BIN = path.join(ROOT, "bin", "toolnexus.js")
const T = { timeout: 30_000 }
const show = (run: NodeRun) => `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`

function config(dir: string): string {
  const file = path.join(dir, "mcp.json")
  const offer = { command: [NODE, fixture("offer-server.mjs")], env: { OFFER_TOKEN: SECRET } }
  const bare = { command: [NODE, fixture("offer-server.mjs"), "--tools-only"] }
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { offer, bare } }))
  return file
}

const runBin = (args: string[]) => runProcess([BIN, ...args], { timeout: 20_000 })

describe("toolnexus read, prompt, list counts", () => {
  test("read prints contents with control characters escaped", T, async (t) => {
    const file = config(tempDir(t))
    const run = await runBin(["read", "offer", "note://one", "--config", file])
    assert.equal(run.code, 0, show(run))
    assert.ok(!run.stdout.includes("\u001b"), show(run))
    assert.match(run.stdout, /^a note\\u001b\[31m with /, show(run))
    const blob = await runBin(["read", "offer", "bin://bytes", "--config", file])
    assert.equal(blob.stdout.trim(), "[blob application/octet-stream, 8 base64 characters]", show(blob))
    const json = await runBin(["read", "offer", "note://one", "--config", file, "--json"])
    assert.ok(!json.stdout.includes("\u001b"), show(json))
    assert.equal(JSON.parse(json.stdout).contents[0].uri, "note://one")
  })

  test("a failed read: exit 1, the reason names the server, its secret hidden", T, async (t) => {
    const file = config(tempDir(t))
    const run = await runBin(["read", "offer", `note://${SECRET}`, "--config", file])
    assert.equal(run.code, 1, show(run))
    assert.match(run.stderr, /^toolnexus: MCP server "offer" /m, show(run))
    assert.ok(!run.stderr.includes(SECRET), show(run))
    assert.ok(!run.stdout.includes(SECRET), show(run))
  })

  test("prompt prints the messages; bad arguments are a usage error", T, async (t) => {
    const file = config(tempDir(t))
    const run = await runBin(["prompt", "offer", "greet", '{"name":"Ann","lang":"es"}', "--config", file])
    assert.equal(run.code, 0, show(run))
    assert.deepEqual(run.stdout.trim().split("\n"), ["A greeting", "user: Say hello to Ann in es"])
    const bad = await runBin(["prompt", "offer", "greet", "[1]", "--config", file])
    assert.equal(bad.code, 2, show(bad))
    assert.match(bad.stderr, /the arguments must be a JSON object/)
  })

  test("list shows each server's resource and prompt counts", T, async (t) => {
    const file = config(tempDir(t))
    const run = await runBin(["list", file])
    assert.equal(run.code, 0, show(run))
    assert.match(run.stdout, /^offer: connected \(2 tools, 3 resources, 1 prompts, protocol /m, show(run))
    assert.match(run.stdout, /^bare: connected \(2 tools, protocol /m, show(run))
    const json = JSON.parse((await runBin(["list", file, "--json"])).stdout)
    assert.equal(json.servers.offer.resourceCount, 3)
    assert.equal(json.servers.offer.promptCount, 1)
    assert.equal("resourceCount" in json.servers.bare, false)
  })
})
