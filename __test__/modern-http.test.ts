// What a 2026-07-28 server sees of toolnexus over HTTP: every POST, the first included,
// carries MCP-Protocol-Version, Mcp-Method and (for tools/call) Mcp-Name; a parameter
// marked `x-mcp-header` is mirrored into Mcp-Param-*; there is no session, no GET stream
// and no DELETE. A tool whose `x-mcp-header` breaks the revision's rules is left out.
import assert from "node:assert/strict"
import { test, type TestContext } from "node:test"
import { loadMcp } from "toolnexus"
import { startModernHttp } from "./fixtures/modern-http.mjs"

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

async function modernServer(t: TestContext, events: boolean) {
  const server = await startModernHttp(
    ({ method }, _res, answer) => {
      if (method === "tools/list") return answer({ tools: [TOOL, BAD_HEADER] })
      if (method === "tools/call") return answer({ content: [{ type: "text", text: "ok" }] })
      return false
    },
    { events },
  )
  t.after(() => server.close())
  return server
}

for (const answers of ["JSON bodies", "event streams"]) {
  test(`every POST carries the revision's headers, x-mcp-header parameters are mirrored, and there is no session (answers as ${answers})`, async (t) => {
    const server = await modernServer(t, answers === "event streams")
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
}
