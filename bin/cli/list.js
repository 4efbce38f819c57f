// `toolnexus list [mcp.json] [--json]`: every server's status, protocol version, time to
// come up, tool count and full failure reason, then its tools.
import { listMcpTools } from "toolnexus"

import { PRINTS_FAILURES } from "../../js/notices.js"
import { safeJson, safeLine } from "../../js/terminal.js"
import { fail } from "./fail.js"
import { envState } from "./state.js"

const usage = "usage: toolnexus list [mcp.json] [--json]   (default: ./mcp.json)"

const help = `${usage}

Connects to every enabled server of the config, lists its tools and disconnects.
Per server: its status, the protocol version spoken with it (2026-07-28, or what a
2025-era server answered initialize with), how long it took to come up, its tool count
(and its resource and prompt counts when it offers them),
and for a failed server the reason in full; then each tool with its required parameters
and the first line of its description.

  --json     print { servers: { <name>: { status, protocolVersion, connectMs,
             toolCount, resourceCount, promptCount, error, needsAuth,
             tools: [{ name, description, inputSchema, ... }] } } }
             (needsAuth: true for a server that waits for "toolnexus auth <name>")
  -h, --help this text

Exits 0 when no server failed, 1 when one did, 2 on a usage or config error.`

const options = { json: { type: "boolean" }, help: { type: "boolean", short: "h" } }

async function run(values, positionals) {
  if (positionals.length > 1) return fail(usage)
  const [path = "mcp.json"] = positionals
  let inventory
  try {
    // The listing holds each failure's reason: the library's stderr notice would repeat it.
    inventory = await listMcpTools(path, { [PRINTS_FAILURES]: true, state: envState() })
  } catch (error) {
    return fail(`toolnexus: ${error.message}`)
  }
  const servers = Object.entries(inventory.servers)
  if (values.json) {
    const shown = servers.map(([server, report]) => [server, { ...report, tools: inventory.tools[server] ?? [] }])
    console.log(safeJson({ servers: Object.fromEntries(shown) }))
  } else {
    for (const [server, report] of servers) printServer(server, report, inventory.tools[server] ?? [])
  }
  return servers.some(([, report]) => report.status === "failed") ? 1 : 0
}

function printServer(server, report, tools) {
  const took = report.connectMs === undefined ? "" : `${report.connectMs} ms`
  if (report.status === "connected") {
    const facts = [`${report.toolCount} tools`, `protocol ${report.protocolVersion}`, `up in ${took}`]
    // Only servers that declare resources or prompts have counts of them.
    if (report.promptCount !== undefined) facts.splice(1, 0, `${report.promptCount} prompts`)
    if (report.resourceCount !== undefined) facts.splice(1, 0, `${report.resourceCount} resources`)
    console.log(safeLine(`${server}: connected (${facts.join(", ")})`))
  } else if (report.needsAuth) {
    console.log(safeLine(`${server}: needs authorization (run: toolnexus auth ${server})`))
  } else {
    console.log(safeLine(`${server}: ${report.status}`))
  }
  if (report.error !== undefined) console.log(`  ${safeLine(took ? `after ${took}: ${report.error}` : report.error)}`)
  for (const tool of tools) {
    const required = tool.inputSchema.required ?? []
    const params = required.length ? ` (requires: ${required.join(", ")})` : ""
    console.log(`  ${safeLine(`${tool.name}${params}: ${tool.description.split("\n", 1)[0]}`)}`)
  }
}

export const listCommand = { usage, help, options, run }
