// Multi-round-trip requests (2026-07-28) against a hand-written server: the answers and
// the echoed requestState go back in a new request, a looping server is given up after a
// bounded number of rounds, and sampling and roots, which toolnexus never offers, end the
// call with a clear refusal.
import assert from "node:assert/strict"
import { test } from "node:test"
import { listMcpTools, loadMcp, type McpSource } from "toolnexus"
import { failureLines, fixture, NODE, runNode, toolNamed } from "./helpers.js"

const entry = { command: [NODE, fixture("rounds-server.mjs")], protocol: "2026-07-28" as const }

async function open(t: import("node:test").TestContext, asked: string[] = []): Promise<McpSource> {
  const source = await loadMcp(
    { r: entry },
    { waitFor: async (request) => (asked.push(request.prompt), { id: request.id, ok: true, data: {} }) },
  )
  t.after(() => source.close())
  assert.deepEqual(source.status, { r: "connected" })
  return source
}

test("an answered round is sent again with the responses and the state the server gave", async (t) => {
  const asked: string[] = []
  const source = await open(t, asked)
  const result = await toolNamed(source, "r_confirm").execute({})
  assert.equal(result.isError, false, result.output)
  assert.deepEqual(JSON.parse(result.output), { responses: { ok: { action: "accept", content: {} } }, state: "s1" })
  assert.deepEqual(asked, ["Sure?"])
})

test("a server that keeps asking is given up after 16 rounds, naming it", async (t) => {
  const asked: string[] = []
  const source = await open(t, asked)
  const result = await toolNamed(source, "r_loop").execute({})
  assert.equal(result.isError, true)
  assert.match(result.output, /^MCP server "r" asked for input more than 16 times during tools\/call "loop"/)
  assert.equal(asked.length, 16)
})

test("sampling and roots, which toolnexus does not offer, end the call with a refusal", async (t) => {
  const source = await open(t)
  for (const [tool, method] of [
    ["sample", "sampling/createMessage"],
    ["roots", "roots/list"],
  ]) {
    const result = await toolNamed(source, `r_${tool}`).execute({})
    assert.equal(result.isError, true)
    assert.equal(
      result.output,
      `MCP server "r" asked for ${method} during tools/call "${tool}", which toolnexus does not support`,
    )
  }
})

test("a tools/list that asks for input first is answered through waitFor, or fails without one", async (t) => {
  const asking = { ...entry, command: [...entry.command, "--ask-to-list"] }
  const asked: string[] = []
  const source = await loadMcp(
    { r: asking },
    { waitFor: async (request) => (asked.push(request.prompt), { id: request.id, ok: true, data: {} }) },
  )
  t.after(() => source.close())
  assert.deepEqual(source.status, { r: "connected" })
  assert.deepEqual(
    source.tools.map((tool) => tool.name),
    ["r_loop", "r_sample", "r_roots", "r_confirm"],
  )
  assert.deepEqual(asked, ["List the tools?"])

  const inventory = await listMcpTools({ r: asking })
  assert.equal(inventory.status.r, "failed")
  assert.equal(inventory.servers.r?.error, "asked for input during tools/list, but no waitFor was given to answer it")
})
