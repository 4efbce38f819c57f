// A 2026-07-28 server's `ttlMs` on tools/list: the store re-lists once it runs out, and a
// server that gives none is not re-listed unasked.
import assert from "node:assert/strict"
import { test } from "node:test"
import { createMcpStore } from "toolnexus"
import { fixture, NODE, poll, sleep } from "./helpers.js"

const entry = (ttlMs: number) => ({ command: [NODE, fixture("ttl-server.mjs"), String(ttlMs)] })

test("a store re-lists a modern server when the ttlMs of its tools/list runs out", async (t) => {
  const store = createMcpStore({ s: entry(1000) })
  t.after(() => store.close())
  const listed = () => store.listTools().map((tool) => tool.name)
  assert.ok(await poll(() => listed().includes("s_t1"), 10_000), `never listed: ${listed()}`)
  assert.equal(store.status().s.protocolVersion, "2026-07-28")
  assert.ok(await poll(() => listed().includes("s_t2"), 5_000), `not re-listed after its ttlMs: ${listed()}`)
})

test("a ttlMs of 0 (not cacheable) does not make the store re-list unasked", async (t) => {
  const store = createMcpStore({ s: entry(0) })
  t.after(() => store.close())
  const listed = () => store.listTools().map((tool) => tool.name)
  assert.ok(await poll(() => listed().includes("s_t1"), 10_000), `never listed: ${listed()}`)
  await sleep(2_000) // an absence cannot be awaited: twice the ttlMs after which the first test re-lists
  assert.deepEqual(listed(), ["s_t1"])
})
