// A 2026-07-28 server over HTTP whose response stream breaks before the answer: the
// revision cannot resume a stream (no Last-Event-ID), so the call is sent once more, with
// a new JSON-RPC id; a stream that breaks again fails the call, naming the server.
import assert from "node:assert/strict"
import { test, type TestContext } from "node:test"
import { loadMcp } from "toolnexus"
import { startModernHttp } from "./fixtures/modern-http.mjs"

/** Starts the server; the first `breaks` tools/call streams send progress, then break. */
async function brokenStreams(t: TestContext, breaks: number): Promise<{ url: string; callIds: unknown[] }> {
  const callIds: unknown[] = []
  const server = await startModernHttp(({ id, method, params }, res, answer) => {
    if (method === "tools/list") return answer({ tools: [{ name: "work", inputSchema: { type: "object" } }] })
    if (method !== "tools/call") return false
    callIds.push(id)
    if (callIds.length > breaks) return answer({ content: [{ type: "text", text: `done at try ${callIds.length}` }] })
    res.writeHead(200, { "content-type": "text/event-stream" })
    const progress = { progressToken: params._meta?.progressToken, progress: 1 }
    res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: progress })}\n\n`)
    setTimeout(() => res.socket?.destroy(), 20)
  })
  t.after(() => server.close())
  return { url: server.url, callIds }
}

async function callOnce(t: TestContext, breaks: number) {
  const server = await brokenStreams(t, breaks)
  const source = await loadMcp({ b: { url: server.url } })
  t.after(() => source.close())
  assert.deepEqual(source.status, { b: "connected" })
  const result = await source.tools[0]!.execute({}, { timeout: 10_000 })
  return { result, callIds: server.callIds }
}

test("a call whose response stream breaks is sent again with a new id, and answers", async (t) => {
  const { result, callIds } = await callOnce(t, 1)
  assert.deepEqual([result.isError, result.output], [false, "done at try 2"])
  assert.equal(callIds.length, 2)
  assert.notEqual(callIds[0], callIds[1])
})

test("a call whose stream breaks twice is sent again only once, and fails naming the server", async (t) => {
  const { result, callIds } = await callOnce(t, 2)
  assert.deepEqual(
    [result.isError, result.output],
    [true, 'MCP server "b" closed the connection during tools/call "work"'],
  )
  assert.equal(callIds.length, 2)
})
