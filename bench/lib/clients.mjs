// The three clients measured, behind one small interface:
//
//   open(commands)   connect to every server (a command line each) and list all their tools;
//                    resolves { toolCount, caller(serverIndex, toolName), close() }, where
//                    caller(...) is `(args) => Promise<text output>`
//   list(commands)   connect, list every tool, disconnect; resolves the tool count
//
// toolnexus: the package in this repository (or TOOLNEXUS_BENCH_PACKAGE), through its
//   public API: loadMcp / listMcpTools / tool.execute.
// sdk: the official TypeScript SDK: a Client with a StdioClientTransport per server,
//   tools/list followed page by page, client.callTool, text parts joined as toolnexus does.
// floor: bare newline-delimited JSON-RPC in plain Node (lib/floor.mjs).

import path from "node:path"
import { pathToFileURL } from "node:url"
import { FloorConnection } from "./floor.mjs"
import { repoRoot } from "./refserver.mjs"

export const CLIENT_NAMES = ["toolnexus", "sdk", "floor"]

const serverName = (index) => `s${index}`

async function toolnexusClient() {
  const dir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
  const toolnexus = await import(pathToFileURL(path.join(dir, "index.js")).href)
  const config = (commands) => ({
    mcpServers: Object.fromEntries(commands.map((command, i) => [serverName(i), { command }])),
  })
  const checkStatus = (status) => {
    const down = Object.entries(status).filter(([, s]) => s !== "connected")
    if (down.length > 0) throw new Error(`toolnexus: servers not connected: ${JSON.stringify(down)}`)
  }
  return {
    name: "toolnexus",
    async open(commands) {
      const source = await toolnexus.loadMcp(config(commands))
      checkStatus(source.status)
      const byName = new Map(source.tools.map((tool) => [tool.name, tool]))
      return {
        toolCount: source.tools.length,
        caller(serverIndex, toolName) {
          const tool = byName.get(`${serverName(serverIndex)}_${toolName}`)
          if (!tool) throw new Error(`toolnexus: no tool ${toolName} on server ${serverIndex}`)
          return (args) =>
            tool.execute(args).then((result) => {
              if (result.isError) throw new Error(result.output)
              return result.output
            })
        },
        close: () => source.close(),
      }
    },
    async list(commands) {
      const inventory = await toolnexus.listMcpTools(config(commands))
      checkStatus(inventory.status)
      return Object.values(inventory.tools).reduce((n, tools) => n + tools.length, 0)
    },
  }
}

async function sdkClient() {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js")
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js")
  const connectOne = async (command) => {
    const client = new Client({ name: "bench", version: "0.0.0" })
    await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1) }))
    const tools = []
    let cursor
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor })
      tools.push(...page.tools)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return { client, tools }
  }
  const textOf = (result) => {
    const texts = []
    for (const part of result.content) if (part.type === "text") texts.push(part.text)
    const output = texts.join("\n")
    if (result.isError) throw new Error(output)
    return output
  }
  const closeAll = (servers) => Promise.all(servers.map(({ client }) => client.close()))
  return {
    name: "sdk",
    async open(commands) {
      const servers = await Promise.all(commands.map(connectOne))
      return {
        toolCount: servers.reduce((n, s) => n + s.tools.length, 0),
        caller(serverIndex, toolName) {
          const { client } = servers[serverIndex]
          return (args) => client.callTool({ name: toolName, arguments: args }).then(textOf)
        },
        close: () => closeAll(servers),
      }
    },
    async list(commands) {
      const servers = await Promise.all(commands.map(connectOne))
      await closeAll(servers)
      return servers.reduce((n, s) => n + s.tools.length, 0)
    },
  }
}

function floorClient() {
  const connectOne = async (command) => {
    const connection = new FloorConnection(command)
    await connection.initialize()
    return { connection, tools: await connection.listTools() }
  }
  const closeAll = (servers) => Promise.all(servers.map(({ connection }) => connection.close()))
  return {
    name: "floor",
    async open(commands) {
      const servers = await Promise.all(commands.map(connectOne))
      return {
        toolCount: servers.reduce((n, s) => n + s.tools.length, 0),
        caller(serverIndex, toolName) {
          const { connection } = servers[serverIndex]
          return (args) => connection.callTool(toolName, args)
        },
        close: () => closeAll(servers),
      }
    },
    async list(commands) {
      const servers = await Promise.all(commands.map(connectOne))
      await closeAll(servers)
      return servers.reduce((n, s) => n + s.tools.length, 0)
    },
  }
}

export async function makeClient(name) {
  switch (name) {
    case "toolnexus":
      return toolnexusClient()
    case "sdk":
      return sdkClient()
    case "floor":
      return floorClient()
    default:
      throw new Error(`unknown client "${name}"`)
  }
}
