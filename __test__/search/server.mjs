// A stdio MCP server listing the search catalog (tools.mjs), each tool as
// `<server>_<tool>`: `node server.mjs [minimum count]`. Calls answer their own name.
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { catalog } from "./tools.mjs"

const tools = catalog(Number(process.argv[2] ?? 2_000)).map(({ server, name, description, inputSchema }) => ({
  name: `${server}_${name}`,
  description,
  inputSchema,
}))
const server = new Server({ name: "search-catalog", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: "text", text: `called ${request.params.name}` }],
}))
await server.connect(new StdioServerTransport())
