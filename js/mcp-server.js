// buildMcpServer: exposes `Tool`s as an MCP server over an official SDK server transport.
//
// The SDK is imported lazily, inside connect(): importing toolnexus (the client
// path) must never load @modelcontextprotocol/sdk, which only servers need.

import { createRequire } from "node:module"
import { coded, invalidArgument } from "./errors.js"

/** @type {string | undefined} */
let packageVersion
function toolnexusVersion() {
  packageVersion ??= createRequire(import.meta.url)("../package.json").version
  return /** @type {string} */ (packageVersion)
}

/**
 * @param {import("../index.d.ts").Tool[]} tools
 * @param {{ name?: string; version?: string; tools?: string[] }} [cfg]
 * @param {(e: { name: string; source: string; ms: number; isError: boolean }) => unknown} [onCall]
 */
export function buildMcpServer(tools, cfg = {}, onCall) {
  const allowed = cfg.tools ? new Set(cfg.tools) : undefined
  /** @type {Map<string, import("../index.d.ts").Tool>} */
  const byName = new Map()
  for (const tool of tools) {
    if (allowed && !allowed.has(tool.name)) continue
    // Names are how clients call tools: a duplicate would make one tool unreachable.
    if (byName.has(tool.name)) throw invalidArgument(`buildMcpServer: duplicate tool name "${tool.name}"`)
    byName.set(tool.name, tool)
  }

  /** @type {Promise<any> | undefined} */
  let connecting
  let closed = false

  async function start(/** @type {unknown} */ transport) {
    const [{ Server }, { ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode }] = await importSdk()
    const server = new Server(
      { name: cfg.name ?? "toolnexus", version: cfg.version ?? toolnexusVersion() },
      { capabilities: { tools: {} } },
    )
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...byName.values()].map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
    }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args } = request.params
      const tool = byName.get(name)
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
      const started = performance.now()
      const result = await runTool(tool, args ?? {}, { signal: extra.signal })
      report(onCall, { name, source: tool.source, ms: performance.now() - started, isError: result.isError })
      return result
    })
    await server.connect(/** @type {any} */ (transport))
    return server
  }

  return {
    connect(/** @type {unknown} */ transport) {
      // One server, one transport: the SDK's Server is bound to a single connection.
      if (connecting) {
        return Promise.reject(
          coded(
            new Error("buildMcpServer: connect() was already called; build another server for another transport"),
            "TOOLNEXUS_INVALID_ARGUMENT",
          ),
        )
      }
      if (closed) return Promise.reject(coded(new Error("buildMcpServer: the server is closed"), "TOOLNEXUS_CLOSED"))
      connecting = start(transport)
      return connecting.then(() => undefined)
    },
    async close() {
      closed = true
      const server = await connecting?.catch(() => undefined)
      await server?.close()
    },
  }
}

async function importSdk() {
  try {
    return await Promise.all([
      import("@modelcontextprotocol/sdk/server/index.js"),
      import("@modelcontextprotocol/sdk/types.js"),
    ])
  } catch (err) {
    const hint = "buildMcpServer needs the @modelcontextprotocol/sdk package installed next to toolnexus"
    const message = `${hint}: ${err instanceof Error ? err.message : String(err)}`
    throw coded(new Error(message, { cause: err }), "TOOLNEXUS_MISSING_DEPENDENCY")
  }
}

/**
 * Tools from defineTool never reject, but any object shaped like a Tool can be served
 * (an MCP tool from loadMcp, a hand-written one): a rejection becomes an error result
 * so the client gets a tool error, not a protocol error.
 * @param {import("../index.d.ts").Tool} tool
 * @param {Record<string, unknown>} args
 * @param {import("../index.d.ts").ToolContext} ctx
 */
async function runTool(tool, args, ctx) {
  try {
    return toCallResult(await tool.execute(args, ctx))
  } catch (err) {
    return toCallResult({ output: err instanceof Error ? err.message : String(err), isError: true })
  }
}

/**
 * A ToolResult as a `tools/call` result. What an MCP tool's result carried beyond text
 * is served again: the whole content array from `metadata.content` (images, audio,
 * resources) and a `metadata.structuredContent` object; otherwise one text content.
 * @param {import("../index.d.ts").ToolResult | undefined} result
 */
function toCallResult(result) {
  const output = String(result?.output ?? "")
  const isError = Boolean(result?.isError)
  const rich = result?.metadata?.content
  const content = Array.isArray(rich) && rich.length > 0 ? rich : [{ type: "text", text: output }]
  const structured = result?.metadata?.structuredContent
  const isObject = structured !== null && typeof structured === "object" && !Array.isArray(structured)
  return isObject ? { content, structuredContent: structured, isError } : { content, isError }
}

/**
 * The caller's observer must never break a tool call: both a synchronous throw and a
 * rejected promise are swallowed. It is not awaited, so a slow observer cannot delay
 * the reply.
 * @param {((e: any) => unknown) | undefined} onCall
 * @param {{ name: string; source: string; ms: number; isError: boolean }} event
 */
function report(onCall, event) {
  if (!onCall) return
  try {
    const r = onCall(event)
    if (r && typeof (/** @type {any} */ (r).then) === "function") {
      ;/** @type {PromiseLike<unknown>} */ (r).then(undefined, () => {})
    }
  } catch {
    // swallowed on purpose, see above
  }
}
