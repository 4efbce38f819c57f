// `toolnexus serve [mcp.json] [--http HOST:PORT] [--stdio] [--agent ID] [--state URL] [--meta]`:
// the config's servers as one MCP endpoint (see serveMcp). Only stderr is written to:
// over stdio, stdout is the protocol's.
import fs from "node:fs"
import { createMcpStore, serveMcp } from "toolnexus"

import { safeLine } from "../../js/terminal.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"

const usage =
  "usage: toolnexus serve [mcp.json] [--http HOST:PORT] [--stdio] [--agent ID] [--state URL] [--meta]   (default: ./mcp.json)"

const help = `${usage}

Starts every enabled server of the config in one store and serves it as one MCP
server, in both protocol eras, until stopped (Ctrl-C) or, over stdio, until the client
leaves. Over HTTP, /mcp serves the whole store and /agents/<id>/mcp each agent's view.

The config may say, beside "mcpServers":
  "agents": { "<id>": ["<server>", ...] }   each agent's view: the servers named
                                           (an agent's servers run for that agent)
  "serve": { "http": "127.0.0.1:8808", "meta": false,
             "allowedOrigins": ["https://app.example"],
             "auth": { "tokens": { "/mcp": "\${TOKEN}",
                                   "/agents/<id>/mcp": ["\${A}", "\${B}"] } } }

  --http HOST:PORT  listen there (default: the config's, else 127.0.0.1:8808)
  --stdio           serve one view on stdin and stdout instead
  --agent ID        serve that agent's view (at /mcp, or over stdio)
  --state URL       share the fleet's state (Redis or Valkey; default TOOLNEXUS_STATE)
  --meta            serve the meta-tools (search_tools, describe_tool, call_tool)
                    instead of every tool
  -h, --help        this text

Exits 0 when stopped, 2 on a usage or config error.`

const options = {
  http: { type: "string" },
  stdio: { type: "boolean" },
  agent: { type: "string" },
  state: { type: "string" },
  meta: { type: "boolean" },
  help: { type: "boolean", short: "h" },
}

const DEFAULT_HTTP = "127.0.0.1:8808"

/** The store's config and each agent's, from the file's `mcpServers` and `agents`. */
function split(config) {
  const servers = config.mcpServers ?? {}
  const agents = config.agents ?? {}
  if (typeof agents !== "object" || Array.isArray(agents)) throw new Error('"agents" must be an object')
  const own = new Set()
  const views = {}
  for (const [id, names] of Object.entries(agents)) {
    if (!Array.isArray(names)) throw new Error(`"agents.${id}" must be an array of server names`)
    const entries = {}
    for (const name of names) {
      if (!(name in servers)) throw new Error(`"agents.${id}" names "${name}", which is not in "mcpServers"`)
      entries[name] = servers[name]
      own.add(name)
    }
    views[id] = { mcpServers: entries }
  }
  const rest = Object.fromEntries(Object.entries(servers).filter(([name]) => !own.has(name)))
  // The sections are this command's: the store's config names only its own servers.
  const { agents: _agents, serve: _serve, ...others } = config
  return { store: { ...others, mcpServers: rest }, agents: views }
}

async function run(values, positionals) {
  if (positionals.length > 1) return fail(usage)
  if (values.stdio && values.http !== undefined)
    return fail(`toolnexus serve: --http and --stdio are one or the other\n${usage}`)
  const [path = "mcp.json"] = positionals
  let config
  try {
    config = JSON.parse(fs.readFileSync(path, "utf8"))
  } catch (error) {
    return fail(`toolnexus: cannot read ${path}: ${error.message}`)
  }
  if (config === null || typeof config !== "object") return fail(`toolnexus: ${path} is not a JSON object`)
  const serve = config.serve ?? {}
  let store, view, gateway
  try {
    const { store: own, agents } = split(config)
    const hasAgents = Object.keys(agents).length > 0
    // Without agents the file is read by path, so that what it names relative to itself resolves.
    store = createMcpStore(hasAgents ? own : path, { state: values.state ?? envState(), elicitation: true })
    for (const [id, servers] of Object.entries(agents)) store.forAgent(id).addServers(servers)
    if (values.agent !== undefined && !(values.agent in agents)) {
      throw new Error(`no agent "${values.agent}" in "agents"`)
    }
    view = values.agent === undefined ? store : store.forAgent(values.agent)
    await view.listToolsAsync()
    gateway = await serveMcp(view, {
      ...(values.stdio ? { stdio: true } : { http: values.http ?? serve.http ?? DEFAULT_HTTP }),
      meta: values.meta ?? serve.meta,
      allowedOrigins: serve.allowedOrigins,
      auth: serve.auth,
    })
  } catch (error) {
    await store?.close()
    return fail(`toolnexus serve: ${error.message}`)
  }
  if (gateway.url) console.error(safeLine(`toolnexus serve: listening on ${gateway.url}`))
  const stop = () => gateway.close()
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  await gateway.ended
  await store.close()
  return 0
}

export const serveCommand = { options, usage, help, run }
