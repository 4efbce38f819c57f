// A 2026-07-28 server over HTTP whose response stream breaks before the answer: the
// revision cannot resume a stream (no Last-Event-ID), so the call is sent once more, with
// a new JSON-RPC id; a stream that breaks again fails the call, naming the server.
import assert from "node:assert/strict"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { test, type TestContext } from "node:test"
import { loadMcp } from "toolnexus"

/** Starts the server; the first `breaks` tools/call streams send progress, then break. */
async function brokenStreams(t: TestContext, breaks: number): Promise<{ url: string; callIds: unknown[] }> {
  const callIds: unknown[] = []
  const server = http.createServer(async (req, res) => {
    let body = ""
    for await (const chunk of req) body += chunk
    if (req.method !== "POST") return void res.writeHead(405).end()
    const { id, method, params } = JSON.parse(body)
    const answer = (result: object) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { resultType: "complete", ...result } }))
    }
    switch (method) {
      case "server/discover":
        return answer({
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} },
          serverInfo: { name: "broken-streams", version: "1.0.0" },
          ttlMs: 0,
          cacheScope: "private",
        })
      case "tools/list":
        return answer({ tools: [{ name: "work", inputSchema: { type: "object" } }] })
      case "tools/call": {
        callIds.push(id)
        if (callIds.length > breaks)
          return answer({ content: [{ type: "text", text: `done at try ${callIds.length}` }] })
        res.writeHead(200, { "content-type": "text/event-stream" })
        const progress = { progressToken: params._meta?.progressToken, progress: 1 }
        res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: progress })}\n\n`)
        return void setTimeout(() => res.socket?.destroy(), 20)
      }
      default:
        res.writeHead(404, { "content-type": "application/json" })
        res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } }))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, callIds }
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
