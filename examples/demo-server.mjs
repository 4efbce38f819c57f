// The bundled demo MCP server that examples/mcp.json starts: a few plain functions served
// over stdio by toolnexus itself, so the main job runs offline.
import { buildMcpServer, defineTool } from "toolnexus"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"

const tools = [
  defineTool({
    name: "echo",
    description: "Return the given text unchanged",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }) => String(text),
  }),
  defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    run: ({ a, b }) => String(Number(a) + Number(b)),
  }),
  defineTool({
    name: "word_count",
    description: "Count the words in a text.\nWords are runs of non-space characters.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    run: ({ text }) => ({ words: String(text).split(/\s+/).filter(Boolean).length }),
  }),
]

await buildMcpServer(tools, { name: "toolnexus-demo" }).connect(new StdioServerTransport())
