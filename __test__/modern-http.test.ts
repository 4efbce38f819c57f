// What a 2026-07-28 server sees of toolnexus over HTTP: every POST, the first included,
// carries MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name; a parameter
// marked `x-mcp-header` is mirrored into Mcp-Param-*; there is no session, no GET stream
// and no DELETE. A tool whose `x-mcp-header` breaks the revision's rules is left out.
import assert from "node:assert/strict"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { test, type TestContext } from "node:test"
import { loadMcp } from "toolnexus"

interface Seen {
  method: string | undefined
  rpc: string | undefined
  headers: http.IncomingHttpHeaders
}

const TOOL = {
  name: "query",
  inputSchema: {
    type: "object",
    properties: { region: { type: "string", "x-mcp-header": "Region" }, sql: { type: "string" } },
  },
}

/** A tool the revision says a client must leave out: `x-mcp-header` on a number. */
const BAD_HEADER = {
  name: "bad",
  inputSchema: { type: "object", properties: { n: { type: "number", "x-mcp-header": "N" } } },
}

async function modernServer(t: TestContext): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = http.createServer(async (req, res) => {
    let body = ""
    for await (const chunk of req) body += chunk
    const message = body ? JSON.parse(body) : {}
    seen.push({ method: req.method, rpc: message.method, headers: req.headers })
    if (req.method !== "POST") return void res.writeHead(405).end()
    if (message.id === undefined) return void res.writeHead(202).end()
    const answer = (result: object) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { resultType: "complete", ...result } }))
    }
    switch (message.method) {
      case "server/discover":
        return answer({
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} },
          serverInfo: { name: "headers", version: "1.0.0" },
          ttlMs: 0,
          cacheScope: "private",
        })
      case "tools/list":
        return answer({ tools: [TOOL, BAD_HEADER] })
      case "tools/call":
        return answer({ content: [{ type: "text", text: "ok" }] })
      default:
        res.writeHead(404, { "content-type": "application/json" })
        res.end(
          JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }),
        )
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  t.after(() => new Promise((resolve) => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen }
}

test("every POST carries the revision's headers, x-mcp-header parameters are mirrored, and there is no session", async (t) => {
  const server = await modernServer(t)
  const source = await loadMcp({ h: { url: server.url } })
  assert.deepEqual(source.status, { h: "connected" })
  assert.deepEqual(
    source.tools.map((tool) => tool.name),
    ["h_query"],
  )
  const result = await source.tools[0]!.execute({ region: "us-west1", sql: "select 1" })
  assert.deepEqual([result.isError, result.output], [false, "ok"])
  await source.close()

  assert.deepEqual(
    server.seen.map((s) => [s.method, s.rpc]),
    [
      ["POST", "server/discover"],
      ["POST", "tools/list"],
      ["POST", "tools/call"],
    ],
  )
  for (const { rpc, headers } of server.seen) {
    assert.equal(headers["mcp-protocol-version"], "2026-07-28", `${rpc}: MCP-Protocol-Version`)
    assert.equal(headers["mcp-method"], rpc, `${rpc}: Mcp-Method`)
    assert.equal(headers["mcp-session-id"], undefined, `${rpc}: no session`)
  }
  const call = server.seen[2]!.headers
  assert.equal(call["mcp-name"], "query")
  assert.equal(call["mcp-param-region"], "us-west1")
})
