// A call started right after close() fails, naming the server, however the race falls:
// close() ends the calls on the host's own thread before anything else runs. Run a couple
// of hundred times with the other core kept busy, as a loaded machine is.
import assert from "node:assert/strict"
import { after, before, test } from "node:test"
import { createMcpStore, loadMcp } from "toolnexus"
import { startBusyLoop, stopBusyLoop } from "../bench/lib/busy.mjs"
import { local } from "./helpers.js"

const T = { timeout: 240_000 }
const ROUNDS = 100
const AT_ONCE = 4

before(() => startBusyLoop())
after(() => stopBusyLoop())

/** Asserts that `result`, of a call started after close(), failed as closed, naming `server`. */
function closed(result: { output: string; isError: boolean; metadata?: { code?: string } }, round: number) {
  assert.equal(result.isError, true, `round ${round}: ${JSON.stringify(result)}`)
  assert.equal(result.metadata?.code, "TOOLNEXUS_CLOSED", result.output)
  assert.match(result.output, /^MCP server "s" is closed; cannot run tools\/call "echo"$/)
}

test("loadMcp: a call right after close() fails as closed", T, async () => {
  for (let round = 0; round < ROUNDS; round += AT_ONCE) {
    const sources = await Promise.all(Array.from({ length: AT_ONCE }, () => loadMcp({ s: local() })))
    for (const [i, source] of sources.entries()) {
      const echo = source.tools.find((tool) => tool.name === "s_echo")!
      const closing = source.close()
      const result = await echo.execute({ text: "after close" })
      await closing
      closed(result, round + i)
    }
  }
})

test("a store: a call right after close() fails as closed", T, async () => {
  for (let round = 0; round < ROUNDS; round += AT_ONCE) {
    const stores = Array.from({ length: AT_ONCE }, () => createMcpStore({ s: local() }, { catalog: false }))
    await Promise.all(stores.map((store) => store.waitReady()))
    for (const [i, store] of stores.entries()) {
      const echo = store.tools().find((tool) => tool.name === "s_echo")!
      const closing = store.close()
      const result = await echo.execute({ text: "after close" })
      await closing
      closed(result, round + i)
    }
  }
})
