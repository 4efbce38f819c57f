// A read-only JSON API over a store, in MCPStore's response shape, for dashboards:
//   GET /for_store/list_tools
//   GET /for_agent/:id/list_tools
//   GET /for_store/fleet: the fleet's health, { shared_state, instances }
// Each answers { success, data, message }; listings add metadata: { total_tools, services_count }.
import http from "node:http"
import { extraJson, schemaJson } from "./listed.js"

const STORE_TOOLS = /^\/for_store\/list_tools\/?$/
const AGENT_TOOLS = /^\/for_agent\/([^/]+)\/list_tools\/?$/
const FLEET = /^\/for_store\/fleet\/?$/

/**
 * A store tool in MCPStore's snake_case shape, as JSON text. The schema goes in as the
 * text it was listed as: parsing and re-serialising it would fail on one that nests
 * deeper than the call stack goes.
 */
function entryJson(tool) {
  const head = JSON.stringify({
    name: tool.name,
    description: tool.description,
    service_name: tool.serviceName,
    client_id: tool.clientId,
  })
  // The server's other members (`title`, `annotations`, ...) follow, as they were listed.
  const extra = extraJson(tool)
  const rest = extra === undefined ? "" : `,${extra.slice(1, -1)}`
  return `${head.slice(0, -1)},"inputSchema":${schemaJson(tool)}${rest}}`
}

function send(res, status, body, headers = {}) {
  sendJson(res, status, JSON.stringify(body), headers)
}

function sendJson(res, status, text, headers = {}) {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  })
  res.end(text)
}

const failure = (message) => ({ success: false, data: null, message })

/** The listing's JSON text: `{ success, data, metadata, message }`. */
async function listing(view, agent) {
  const tools = await view.listToolsAsync()
  const services = new Set(tools.map((t) => t.serviceName)).size
  const metadata = { total_tools: tools.length, services_count: services }
  const message =
    // MCPStore's wording, unpluralized on purpose: dashboards written for it may match it.
    `Retrieved ${tools.length} tools from ${services} services` + (agent === undefined ? "" : ` for agent '${agent}'`)
  const data = tools.map(entryJson).join(",")
  return `{"success":true,"data":[${data}],"metadata":${JSON.stringify(metadata)},"message":${JSON.stringify(message)}}`
}

/** The fleet's health as JSON text: the shared state's status and the live instances. */
async function fleet(store) {
  const instances = await store.instances()
  const data = { shared_state: store.sharedState(), instances }
  return JSON.stringify({ success: true, data, message: `${instances.length} live instances` })
}

async function handle(store, req, res) {
  const path = (req.url ?? "/").split("?")[0]
  let agent
  let known = false
  const health = FLEET.test(path)
  if (STORE_TOOLS.test(path) || health) known = true
  else {
    const m = AGENT_TOOLS.exec(path)
    if (m) {
      known = true
      try {
        agent = decodeURIComponent(m[1])
      } catch {
        return send(res, 400, failure(`Malformed agent id in ${path}`))
      }
      if (agent === "") return send(res, 400, failure("Empty agent id"))
    }
  }
  if (!known) return send(res, 404, failure(`Not found: ${req.method} ${path}`))
  if (req.method !== "GET" && req.method !== "HEAD") {
    return send(res, 405, failure(`Method ${req.method} not allowed on ${path}`), { allow: "GET, HEAD" })
  }
  const view = agent === undefined ? store.forStore() : store.forAgent(agent)
  try {
    return sendJson(res, 200, health ? await fleet(store) : await listing(view, agent))
  } catch (error) {
    return send(res, 500, failure(String(error?.message ?? error)))
  }
}

/**
 * Serves the store's tool listings over HTTP on `host` (default 127.0.0.1) and `port`
 * (default 0: any free port). Resolves once listening, with the bound port and `close()`.
 */
export async function serveStoreApi(store, opts = {}) {
  // An empty host is the default too: to node:http it would mean every interface.
  const host = opts.host || "127.0.0.1"
  const port = opts.port ?? 0
  const server = http.createServer((req, res) => {
    handle(store, req, res).catch((error) => {
      if (!res.headersSent) send(res, 500, failure(String(error?.message ?? error)))
      else res.destroy()
    })
  })
  await new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve()
    })
  })
  const address = server.address()
  const boundPort = typeof address === "object" && address ? address.port : port
  const urlHost = host.includes(":") ? `[${host}]` : host
  let closing
  return {
    port: boundPort,
    host,
    url: `http://${urlHost}:${boundPort}`,
    server,
    close() {
      closing ??= new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    },
  }
}
