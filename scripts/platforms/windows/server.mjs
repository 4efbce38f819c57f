// The MCP server of the Windows run (official SDK, stdio). Tools: `argv` (the arguments it
// was started with, so the run can check how they were quoted), `pid`, and `grandchild`
// (starts a detached Node process that would outlive this server, and returns its pid).
import { spawn } from "node:child_process"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }] })
const none = { type: "object", properties: {} }
const server = new Server({ name: "windows-run", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: ["argv", "pid", "grandchild"].map((name) => ({ name, inputSchema: none })),
}))
server.setRequestHandler(CallToolRequestSchema, (request) => {
  switch (request.params.name) {
    case "argv":
      return text(process.argv.slice(2))
    case "pid":
      return text(process.pid)
    case "grandchild": {
      // Detached: outside the job Node keeps for its own children, so only toolnexus's
      // job can end it.
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
        detached: true,
        stdio: "ignore",
      })
      child.unref()
      return text(child.pid)
    }
  }
  throw new Error(`no tool ${request.params.name}`)
})
await server.connect(new StdioServerTransport())
