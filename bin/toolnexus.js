#!/usr/bin/env node
// `toolnexus list [config]`: which servers of an mcp.json come up, and what tools they
// offer. Exits 1 when a server failed, 2 on a usage or config error.
import { listMcpTools } from "toolnexus"

const USAGE = "usage: toolnexus list [path/to/mcp.json]   (default: ./mcp.json)"
const [command, path = "mcp.json", ...rest] = process.argv.slice(2)
if (command !== "list" || rest.length > 0) {
  console.error(USAGE)
  process.exit(2)
}

let inventory
try {
  inventory = await listMcpTools(path)
} catch (error) {
  console.error(`toolnexus: ${error.message}`)
  process.exit(2)
}

const firstLine = (text) => text.split("\n", 1)[0]
for (const [server, status] of Object.entries(inventory.status)) {
  const tools = inventory.tools[server] ?? []
  console.log(`${server}: ${status}${status === "connected" ? ` (${tools.length} tools)` : ""}`)
  for (const tool of tools) {
    const required = tool.inputSchema.required ?? []
    const params = required.length ? ` (requires: ${required.join(", ")})` : ""
    console.log(`  ${tool.name}${params}: ${firstLine(tool.description)}`)
  }
}
process.exitCode = Object.values(inventory.status).includes("failed") ? 1 : 0
