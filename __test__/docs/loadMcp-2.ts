import assert from "node:assert"
import fs from "node:fs"
import path from "node:path"
import { loadMcp, parseMcpConfig } from "toolnexus"

// A tiny real MCP server, written next to toolnexus's own source so it can resolve
// both `toolnexus` and `@modelcontextprotocol/sdk`, and run over stdio.
const serverScript = `
import { buildMcpServer, defineTool } from "toolnexus"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
const tools = [
  defineTool({ name: "greet", description: "Greet by name", run: (args) => "Hello, " + args.name + "!" }),
]
const server = buildMcpServer(tools, { name: "docs-demo" })
await server.connect(new StdioServerTransport())
`
const scriptPath = path.resolve(process.cwd(), "js", `_docs_mcp_load_demo_${Date.now()}.mjs`)
fs.writeFileSync(scriptPath, serverScript)

try {
  // examples/mcp.json's "example-remote" is enabled:false — inspect it without connecting.
  const fixture = parseMcpConfig("examples/mcp.json")
  assert.equal(fixture["example-remote"].enabled, false)

  const mcp = await loadMcp({
    greeter: { type: "local", command: ["node", scriptPath] },
    remote: fixture["example-remote"],
  })

  assert.deepEqual(mcp.status, { greeter: "connected", remote: "disabled" })
  assert.deepEqual(mcp.tools.map((t) => t.name), ["greeter_greet"])

  const res = await mcp.tools[0].execute({ name: "Muthu" })
  assert.equal(res.output, "Hello, Muthu!")

  await mcp.close()
  console.log("ok:", JSON.stringify(mcp.status))
} finally {
  fs.rmSync(scriptPath, { force: true })
}
