// Remote servers' requests reuse their connections: keep-alive and an idle pool per host,
// so a hundred sequential calls do not pay a hundred TCP (and TLS) handshakes.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { loadMcp } from "toolnexus"
import { startStreamable } from "./fixtures/remote-streamable.mjs"
import { toolNamed } from "./helpers.js"

const CALLS = 100
/** The long-lived GET stream, the POSTs, and one spare for a race at the start. */
const MAX_CONNECTIONS = 3
/**
 * A reused connection whose previous answer was not read to its end stalls on TCP's
 * delayed ACK (about 40 ms on Linux) before the client gives up on it: the reason rmcp's
 * own client disables its pool. A median far below that shows no call pays it.
 */
const MAX_MEDIAN_MS = 25

describe("HTTP connection reuse", { timeout: 60_000 }, () => {
  for (const json of [false, true]) {
    test(`${CALLS} sequential calls (${json ? "JSON" : "SSE"} answers) ride at most ${MAX_CONNECTIONS} TCP connections`, async () => {
      const srv = await startStreamable({ stateful: true, json })
      let connections = 0
      const ms: number[] = []
      srv.httpServer.on("connection", () => connections++)
      const source = await loadMcp({ r: { url: srv.url } })
      try {
        assert.deepEqual(source.status, { r: "connected" })
        const echo = toolNamed(source, "r_echo")
        for (let i = 0; i < CALLS; i++) {
          const start = performance.now()
          const res = await echo.execute({ text: `call ${i}` })
          ms.push(performance.now() - start)
          assert.equal(res.isError, false, res.output)
          assert.deepEqual(JSON.parse(res.output), { text: `call ${i}` })
        }
      } finally {
        await source.close()
        await srv.close()
      }
      const posts = srv.log.filter((e) => e.method === "POST").length
      assert.ok(posts > CALLS, `only ${posts} POSTs reached the server`)
      assert.ok(connections <= MAX_CONNECTIONS, `${posts} POSTs opened ${connections} TCP connections`)
      const median = ms.sort((a, b) => a - b)[CALLS / 2]
      assert.ok(median < MAX_MEDIAN_MS, `median call ${median.toFixed(1)} ms`)
    })
  }
})
