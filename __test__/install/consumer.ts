// What a TypeScript user writes against the installed package. The install test
// type-checks it with only toolnexus installed (no @types/node) under each TypeScript
// major and moduleResolution; the repository's typecheck covers it too.
import { createMcpStore, defineTool, listMcpTools, loadMcp, serveStoreApi, type Tool, type ToolResult } from "toolnexus"

export async function consume(): Promise<string[]> {
  const inventory = await listMcpTools({ demo: { type: "local", command: ["node", "server.mjs"] } })
  const mcp = await loadMcp("mcp.json", { onLog: (server, level) => void [server, level] })
  const first: Tool | undefined = mcp.tools[0]
  const result: ToolResult | undefined = await first?.execute({ q: "x" }, { timeout: 1_000 })
  await mcp.close()

  const echo = defineTool<{ text: string }>({ name: "echo", description: "Echo", run: ({ text }) => text })
  const store = createMcpStore(null, { maxRestarts: 1 })
  const api = await serveStoreApi(store, { port: 0 })
  api.server.close()
  await api.close()
  await store.close()
  return [...Object.keys(inventory.status), echo.name, api.url, result?.output ?? ""]
}
