// The clients measured, behind one small interface. A server is an endpoint:
// `{ command: [program, ...args] }` (stdio) or `{ url }` (streamable HTTP).
//
//   open(endpoints)  connect to every server and list all their tools; resolves
//                    { toolCount, caller(serverIndex, toolName), close() }, where
//                    caller(...) is `(args) => Promise<text output>`
//   list(endpoints)  connect, list every tool, disconnect; resolves the tool count
//
// Each client runs in one era: "2025" (the `initialize` handshake, 2025-11-25) or "2026"
// (MCP 2026-07-28: no handshake, the version in every request's `_meta`).
//
// toolnexus: the package in this repository (or TOOLNEXUS_BENCH_PACKAGE), through its
//   public API: loadMcp / listMcpTools / tool.execute, with `protocol` pinned to the era.
// v1: @modelcontextprotocol/sdk 1.x: Client + StdioClientTransport or
//   StreamableHTTPClientTransport; 2025 era only.
// v2: @modelcontextprotocol/client 2.x: the same, with `versionNegotiation` in legacy mode
//   or pinned to 2026-07-28.
// floor: bare JSON-RPC in plain Node (lib/floor.mjs, lib/http-floor.mjs).

import path from "node:path"
import { pathToFileURL } from "node:url"
import { FloorConnection } from "./floor.mjs"
import { HttpFloorConnection } from "./http-floor.mjs"
import { repoRoot } from "./refserver.mjs"

export const ERAS = { 2025: "2025-11-25", 2026: "2026-07-28" }
/** Every client, in the order of the table's columns; v1 has no 2026 era. */
export const CLIENTS = [
  { kind: "toolnexus", era: "2025" },
  { kind: "v1", era: "2025" },
  { kind: "v2", era: "2025" },
  { kind: "floor", era: "2025" },
  { kind: "toolnexus", era: "2026" },
  { kind: "v2", era: "2026" },
  { kind: "floor", era: "2026" },
]
/** The 64 MiB results of the cost curve, and a margin for their JSON envelope. */
const MAX_MESSAGE_BYTES = 80 * 1024 * 1024
/** The SDKs' own request timeout (60 s) would cut the slowest rounds; the runner bounds them. */
const REQUEST_OPTIONS = { timeout: 10 * 60_000 }

const serverName = (index) => `s${index}`
const sum = (list, f) => list.reduce((n, x) => n + f(x), 0)

/** The text of a tools/call result, parts joined by "\n" as toolnexus joins them. */
function textOf(result) {
  const texts = []
  for (const part of result.content) if (part.type === "text") texts.push(part.text)
  const output = texts.join("\n")
  if (result.isError) throw new Error(output)
  return output
}

/** open/list for an SDK-shaped client: `connect(endpoint)` resolves { tools, call, close }. */
function sessions(name, connect) {
  const closeAll = (servers) => Promise.all(servers.map((s) => s.close()))
  return {
    name,
    async open(endpoints) {
      const servers = await Promise.all(endpoints.map(connect))
      return {
        toolCount: sum(servers, (s) => s.tools.length),
        caller: (serverIndex, toolName) => (args) => servers[serverIndex].call(toolName, args),
        close: () => closeAll(servers),
      }
    },
    async list(endpoints) {
      const servers = await Promise.all(endpoints.map(connect))
      await closeAll(servers)
      return sum(servers, (s) => s.tools.length)
    },
  }
}

async function toolnexusClient(era) {
  const dir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
  const toolnexus = await import(pathToFileURL(path.join(dir, "index.js")).href)
  const config = (endpoints) => ({
    mcpServers: Object.fromEntries(endpoints.map((e, i) => [serverName(i), { ...e, protocol: ERAS[era] }])),
  })
  const checkStatus = (status) => {
    const down = Object.entries(status).filter(([, s]) => s !== "connected")
    if (down.length > 0) throw new Error(`servers not connected: ${JSON.stringify(down)}`)
  }
  return {
    name: "toolnexus",
    async open(endpoints) {
      const source = await toolnexus.loadMcp(config(endpoints))
      try {
        checkStatus(source.status)
      } catch (error) {
        await source.close()
        throw error
      }
      const byName = new Map(source.tools.map((tool) => [tool.name, tool]))
      return {
        toolCount: source.tools.length,
        caller(serverIndex, toolName) {
          const tool = byName.get(`${serverName(serverIndex)}_${toolName}`)
          if (!tool) throw new Error(`no tool ${toolName} on server ${serverIndex}`)
          return (args) =>
            tool.execute(args).then((result) => {
              if (result.isError) throw new Error(result.output)
              return result.output
            })
        },
        close: () => source.close(),
      }
    },
    async list(endpoints) {
      const inventory = await toolnexus.listMcpTools(config(endpoints))
      checkStatus(inventory.status)
      return sum(Object.values(inventory.tools), (tools) => tools.length)
    },
    /** The protocol version toolnexus spoke with one server of `endpoint`, from store status. */
    async spokenVersion(endpoint) {
      const store = toolnexus.createMcpStore({ s0: { ...endpoint, protocol: ERAS[era] } })
      try {
        while (store.isInitializing()) await store.waitReady()
        const status = store.status().s0
        return status.protocolVersion ?? `not reported (state ${status.state})`
      } finally {
        await store.close()
      }
    },
  }
}

/** An SDK client: `Client` and its two transports, from v1 or v2 (same shapes). */
async function sdkClient(name, era) {
  const v2 = name === "v2"
  const { Client, StreamableHTTPClientTransport } = v2
    ? await import("@modelcontextprotocol/client")
    : {
        ...(await import("@modelcontextprotocol/sdk/client/index.js")),
        ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      }
  const { StdioClientTransport } = v2
    ? await import("@modelcontextprotocol/client/stdio")
    : await import("@modelcontextprotocol/sdk/client/stdio.js")
  // v2: the 2026 era pinned (no probe, no fallback), as toolnexus's `protocol` pins it, and
  // no cap on the pages one listTools() follows (64 by default: 6,400 tools here).
  const options = v2
    ? { versionNegotiation: { mode: era === "2026" ? { pin: ERAS[era] } : "legacy" }, listMaxPages: 1e9 }
    : undefined
  const transport = (endpoint) =>
    endpoint.url
      ? new StreamableHTTPClientTransport(new URL(endpoint.url))
      : // The read buffer raised past its 10 MB default, so that large results measure speed.
        new StdioClientTransport({
          command: endpoint.command[0],
          args: endpoint.command.slice(1),
          maxBufferSize: MAX_MESSAGE_BYTES,
        })
  return sessions(name, async (endpoint) => {
    const client = new Client({ name: "bench", version: "0.0.0" }, options)
    await client.connect(transport(endpoint))
    const tools = []
    let cursor
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, REQUEST_OPTIONS)
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return {
      tools,
      // v1 takes a result schema before the options; v2 only the options.
      call: (toolName, args) => {
        const params = { name: toolName, arguments: args }
        const called = v2
          ? client.callTool(params, REQUEST_OPTIONS)
          : client.callTool(params, undefined, REQUEST_OPTIONS)
        return called.then(textOf)
      },
      close: () => client.close(),
    }
  })
}

function floorClient(era) {
  return sessions("floor", async (endpoint) => {
    const connection = endpoint.url
      ? new HttpFloorConnection(endpoint.url, ERAS[era])
      : new FloorConnection(endpoint.command, ERAS[era])
    await connection.open()
    return {
      tools: await connection.listTools(),
      call: (toolName, args) => connection.callTool(toolName, args),
      close: () => connection.close(),
    }
  })
}

/** A client of `kind` speaking `era`; `label` names it in the log and the table notes. */
export async function makeClient(kind, era) {
  const client = await {
    toolnexus: () => toolnexusClient(era),
    v1: () => sdkClient("v1", era),
    v2: () => sdkClient("v2", era),
    floor: () => floorClient(era),
  }[kind]?.()
  if (!client) throw new Error(`unknown client "${kind}"`)
  return { ...client, kind, era, label: `${kind} ${ERAS[era]}` }
}
