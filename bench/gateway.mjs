// The gateway (`serveMcp` over streamable HTTP) against a direct call and against the same
// gateway built with the official SDK v2, one upstream echo server over stdio behind each:
// 1. added latency: p50 and p99 of an `echo` call through the toolnexus gateway minus
//    those of the same call made directly (`tool.execute` on a store), interleaved in
//    rounds (target: p50 at most 50 µs); for scale, the same client against a bare TCP
//    server that answers at once (the HTTP round trip alone), and the gateway answering a
//    call of an unknown tool itself (its HTTP and MCP layers, no store, no upstream);
// 2. throughput with 64 calls in flight through the toolnexus gateway and through an SDK v2
//    gateway (`McpServer` from @modelcontextprotocol/server forwarding each `tools/call` to
//    a `Client` of @modelcontextprotocol/client, served by `createMcpHandler` on node:http)
//    (target: toolnexus at least 3x);
// 3. idle vs loaded: p50 and p99 with 1 and with 64 calls in flight, both gateways, with
//    each gateway process's CPU time and voluntary context switches per call.
//
//   node bench/gateway.mjs [--calls 2000] [--throughput-calls 20000] [--in-flight 64]
//                          [--era 2026|2025]
//   taskset -c 0 node bench/gateway.mjs --latency     (figure 1 only)
//
// Each gateway runs in a Node process of its own (this file, `--child toolnexus|v2`), as a
// deployed one would, so the client's JavaScript never shares a thread with a gateway's.
// The downstream client is the same for both: raw HTTP/1.1 on keep-alive TCP sockets (one
// per call in flight), a request written as one string, the answer's JSON parsed and
// checked. In the 2026-07-28 era (the default) it is stateless: every request carries the
// `_meta` envelope and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers
// (rmcp's server refuses a request without any of them); in the 2025-11-25 era it opens a
// session (`initialize`, `notifications/initialized`) and sends its `Mcp-Session-Id`. The
// upstream is the Rust reference server (target/release/toolnexus-refserver, built by
// `npm run build:refserver`) or, without it, the test suite's Node fixture server.
// Figures are in µs and calls/s; ratios are toolnexus / SDK v2. Progress goes to stderr.
import { spawn } from "node:child_process"
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { refserverPath, repoRoot, serverCommand } from "./lib/refserver.mjs"
import { formatNumber, median, quantile, sorted, summary, table } from "./lib/stats.mjs"

const { values: flags } = parseArgs({
  options: {
    calls: { type: "string", default: "2000" },
    "throughput-calls": { type: "string", default: "20000" },
    "in-flight": { type: "string", default: "64" },
    era: { type: "string", default: "2026" },
    latency: { type: "boolean", default: false },
    child: { type: "string" },
    "upstream-version": { type: "string" },
  },
})
const ERAS = { 2025: "2025-11-25", 2026: "2026-07-28" }
const VERSION = ERAS[flags.era]
if (!VERSION) throw new Error(`--era must be 2025 or 2026, got ${flags.era}`)
const CALLS = Number(flags.calls)
const THROUGHPUT_CALLS = Number(flags["throughput-calls"])
const IN_FLIGHT = Number(flags["in-flight"])
const ROUNDS = 4
const ADDED_TARGET_US = 50
const THROUGHPUT_TARGET = 3
const ARGS = { text: "hi" }
const UNKNOWN_TOOL = "no_such_tool"
const self = fileURLToPath(import.meta.url)
const packageDir = process.env.TOOLNEXUS_BENCH_PACKAGE ?? repoRoot
const toolnexus = () => import(pathToFileURL(path.join(packageDir, "index.js")).href)

/**
 * The upstream stdio echo server: the reference server, or the Node fixture server (SDK v1)
 * with one tool, `echo`. `expected`: the text its echo answers `ARGS` with.
 */
function upstream() {
  try {
    return { kind: "toolnexus-refserver", command: serverCommand(refserverPath()), expected: ARGS.text }
  } catch {
    const script = fileURLToPath(new URL("../__test__/fixtures/server.mjs", import.meta.url))
    if (!existsSync(script)) throw new Error("neither toolnexus-refserver nor the fixture server is available")
    const echo = {
      name: "echo",
      description: "Returns its arguments as JSON text",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    }
    return {
      kind: "Node fixture server (__test__/fixtures/server.mjs)",
      command: [process.execPath, script, `--tools=${JSON.stringify([echo])}`],
      expected: JSON.stringify(ARGS), // it answers with its arguments as JSON
    }
  }
}
const EXPECTED = upstream().expected

/** A store with the upstream as service `echo`, listed; resolves { store, tool, version }. */
async function openStore(command) {
  const { createMcpStore } = await toolnexus()
  const store = createMcpStore({ mcpServers: { echo: { type: "local", command } } }, { catalog: false })
  await store.listToolsAsync()
  const status = store.status().echo
  const tool = store.tools().find((t) => /(^|_)echo$/.test(t.name))
  if (status?.state !== "connected" || !tool) {
    await store.close()
    throw new Error(`the upstream did not connect or has no echo tool: ${JSON.stringify(status)}`)
  }
  return { store, tool, version: status.protocolVersion }
}

// ---------------------------------------------------------------- the gateway processes

/** In a child: serve a gateway, print `{ url, tool, upstreamVersion }`, stop when stdin ends. */
async function child(kind) {
  const { command } = upstream()
  let served
  if (kind === "toolnexus") {
    const { serveMcp } = await toolnexus()
    const { store, tool, version } = await openStore(command)
    const gateway = await serveMcp(store, { http: "127.0.0.1:0" })
    served = {
      url: gateway.url,
      tool: tool.name,
      upstreamVersion: version,
      close: async () => {
        await gateway.close()
        await store.close()
      },
    }
  } else if (kind === "v2") {
    served = await v2Gateway(command, flags["upstream-version"])
  } else if (kind === "bare") {
    served = await bareServer()
  } else {
    throw new Error(`unknown child ${kind}`)
  }
  const { close, ...shown } = served
  process.stdout.write(`${JSON.stringify(shown)}\n`)
  process.stdin.on("end", () => close())
  process.stdin.resume()
}

/**
 * The SDK v2 gateway: one `Client` on the upstream over stdio, and per request (as
 * `createMcpHandler` wants) an `McpServer` whose tools, named as toolnexus names them,
 * forward each call to that client and answer with its result as it came.
 */
async function v2Gateway(command, upstreamVersion) {
  const { Client } = await import("@modelcontextprotocol/client")
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio")
  const { McpServer, createMcpHandler, fromJsonSchema } = await import("@modelcontextprotocol/server")
  const { serveHandler } = await import("../__test__/fixtures/fetch-http.mjs")
  // The upstream spoken in the version toolnexus's store spoke, pinned (no probe).
  const mode = upstreamVersion === ERAS[2026] ? { pin: upstreamVersion } : "legacy"
  const client = new Client({ name: "v2-gateway", version: "0" }, { versionNegotiation: { mode } })
  await client.connect(new StdioClientTransport({ command: command[0], args: command.slice(1) }))
  const { tools } = await client.listTools()
  // Schemas converted once, not per request.
  const exposed = tools.map((t) => ({
    name: `echo_${t.name}`,
    upstreamName: t.name,
    description: t.description,
    inputSchema: fromJsonSchema(t.inputSchema),
  }))
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: "v2-gateway", version: "0" }, { capabilities: { tools: {} } })
    for (const tool of exposed) {
      server.registerTool(tool.name, { description: tool.description, inputSchema: tool.inputSchema }, (args) =>
        client.callTool({ name: tool.upstreamName, arguments: args }),
      )
    }
    return server
  })
  const served = await serveHandler(handler)
  return {
    url: served.url,
    tool: exposed.find((t) => t.upstreamName === "echo")?.name,
    close: async () => {
      await served.close()
      await client.close()
    },
  }
}

/** A TCP server that answers every request at once with a canned echo result. */
async function bareServer() {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: EXPECTED }] } })
  const answer = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  const sockets = new Set()
  const server = net.createServer((socket) => {
    socket.setNoDelay(true)
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    let pending = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      for (;;) {
        const end = pending.indexOf("\r\n\r\n")
        if (end === -1) return
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(pending.toString("latin1", 0, end))?.[1] ?? 0)
        if (pending.length < end + 4 + length) return
        pending = pending.subarray(end + 4 + length)
        socket.write(answer)
      }
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    tool: "echo",
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Starts `--child kind`; resolves what it printed, its pid, and `stop()`. */
function startChild(kind, extra = []) {
  const proc = spawn(process.execPath, [self, "--child", kind, "--era", flags.era, ...extra], {
    stdio: ["pipe", "pipe", "inherit"],
  })
  const exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let text = ""
    proc.once("error", reject)
    exited.then(({ code, signal }) =>
      reject(new Error(`the ${kind} gateway exited (${code ?? signal}) before serving`)),
    )
    proc.stdout.on("data", (chunk) => {
      text += chunk
      const newline = text.indexOf("\n")
      if (newline === -1) return
      resolve({
        ...JSON.parse(text.slice(0, newline)),
        pid: proc.pid,
        /** Ends the child; resolves false when it did not exit by itself within 5 s. */
        async stop() {
          proc.stdin.end()
          const timer = new Promise((r) => setTimeout(r, 5_000, "timeout"))
          if ((await Promise.race([exited, timer])) !== "timeout") return true
          proc.kill("SIGKILL")
          await exited
          return false
        },
      })
    })
  })
}

// ---------------------------------------------------------------- the downstream client

/**
 * One keep-alive HTTP/1.1 connection, one request at a time: `post(text)` resolves
 * { status, headers, body }. A connection the server closed while idle is opened again
 * before the next request (`reopened` counts them); one closed under a request fails it.
 */
class RawConnection {
  constructor(url) {
    this.url = new URL(url)
    this.reopened = 0
    this.open()
  }

  open() {
    const socket = net.connect({ host: this.url.hostname, port: Number(this.url.port), noDelay: true })
    this.socket = socket
    this.closed = false
    this.buffer = Buffer.alloc(0)
    this.head = undefined
    this.parts = []
    this.waiter = undefined
    this.connected = new Promise((resolve, reject) => {
      socket.once("connect", resolve)
      socket.once("error", reject)
    })
    socket.on("data", (chunk) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
      this.parse()
    })
    socket.on("error", () => {}) // "close" follows
    socket.on("close", () => {
      if (socket !== this.socket) return
      this.closed = true
      const waiter = this.waiter
      this.waiter = undefined
      waiter?.reject(new Error(`${this.url} closed the connection under a request`))
    })
  }

  post(text) {
    if (this.closed) {
      this.reopened++
      this.open()
      return this.connected.then(() => this.post(text))
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject }
      this.socket.write(text)
    })
  }

  parse() {
    for (;;) {
      if (!this.head) {
        const end = this.buffer.indexOf("\r\n\r\n")
        if (end === -1) return
        const lines = this.buffer.toString("latin1", 0, end).split("\r\n")
        const headers = {}
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":")
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
        }
        this.head = { status: Number(lines[0].split(" ")[1]), headers }
        this.buffer = this.buffer.subarray(end + 4)
      }
      let body
      const { headers } = this.head
      if (headers["content-length"] !== undefined) {
        const length = Number(headers["content-length"])
        if (this.buffer.length < length) return
        body = this.buffer.toString("utf8", 0, length)
        this.buffer = this.buffer.subarray(length)
      } else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
        for (;;) {
          const lineEnd = this.buffer.indexOf("\r\n")
          if (lineEnd === -1) return
          const size = parseInt(this.buffer.toString("latin1", 0, lineEnd), 16)
          if (this.buffer.length < lineEnd + 2 + size + 2) return
          if (size === 0) {
            this.buffer = this.buffer.subarray(lineEnd + 4) // no trailers
            break
          }
          this.parts.push(this.buffer.subarray(lineEnd + 2, lineEnd + 2 + size))
          this.buffer = this.buffer.subarray(lineEnd + 2 + size + 2)
        }
        body = Buffer.concat(this.parts).toString("utf8")
        this.parts = []
      } else {
        body = ""
      }
      const response = { ...this.head, body }
      this.head = undefined
      const waiter = this.waiter
      this.waiter = undefined
      waiter?.resolve(response)
    }
  }

  close() {
    this.socket.destroy()
  }
}

/** The JSON-RPC message of a response body: JSON, or the last `data:` of an SSE stream. */
function messageOf({ status, headers, body }) {
  if (status >= 300) throw new Error(`HTTP ${status}: ${body.slice(0, 300)}`)
  if ((headers["content-type"] ?? "").startsWith("text/event-stream")) {
    const data = body
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .filter((line) => line.startsWith("{"))
    return JSON.parse(data.at(-1))
  }
  return JSON.parse(body)
}

/** A downstream MCP client of one endpoint over `connections` sockets, in the era of `--era`. */
class Downstream {
  static async open(url, tool, connections) {
    const client = new Downstream(url, tool)
    client.connections = Array.from({ length: connections }, () => new RawConnection(url))
    await Promise.all(client.connections.map((c) => c.connected))
    if (VERSION === ERAS[2025]) await client.handshake()
    client.callHead = client.head({ "mcp-method": "tools/call", "mcp-name": tool })
    client.unknownHead = client.head({ "mcp-method": "tools/call", "mcp-name": UNKNOWN_TOOL })
    // A first call proves the path and the answer's shape.
    await client.call(0)
    return client
  }

  constructor(url, tool) {
    this.url = new URL(url)
    this.tool = tool
    this.nextId = 1
    this.sessionId = undefined
    const meta =
      VERSION === ERAS[2026]
        ? {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": VERSION,
              "io.modelcontextprotocol/clientInfo": { name: "gateway-bench", version: "0" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          }
        : {}
    this.callParams = JSON.stringify({ name: tool, arguments: ARGS, ...meta })
    this.unknownParams = JSON.stringify({ name: UNKNOWN_TOOL, arguments: ARGS, ...meta })
  }

  /** The request line and headers up to `content-length: ` (the length and body follow). */
  head(extra = {}) {
    const headers = {
      host: this.url.host,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
      ...(VERSION === ERAS[2026] ? extra : {}),
    }
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`)
    return `POST ${this.url.pathname} HTTP/1.1\r\n${lines.join("")}content-length: `
  }

  async handshake() {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: "gateway-bench", version: "0" } },
    })
    const head = this.head()
    const answer = await this.connections[0].post(`${head}${initialize.length}\r\n\r\n${initialize}`)
    const message = messageOf(answer)
    if (message.error) throw new Error(`initialize: ${message.error.message}`)
    this.sessionId = answer.headers["mcp-session-id"]
    const initialized = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    const ack = await this.connections[0].post(`${this.head()}${initialized.length}\r\n\r\n${initialized}`)
    if (ack.status >= 300) throw new Error(`notifications/initialized: HTTP ${ack.status}: ${ack.body}`)
  }

  /** One `tools/call` on connection `c`; throws unless the answer is the echo. */
  async call(c) {
    const body = `{"jsonrpc":"2.0","id":${this.nextId++},"method":"tools/call","params":${this.callParams}}`
    const answer = await this.connections[c].post(`${this.callHead}${body.length}\r\n\r\n${body}`)
    const message = messageOf(answer)
    const text = message.result?.content?.[0]?.text
    if (text !== EXPECTED || message.result.isError) {
      throw new Error(`unexpected answer from ${this.url}: ${JSON.stringify(message).slice(0, 300)}`)
    }
  }

  /**
   * One untimed call on every connection, so a measurement starts on open sockets (the
   * toolnexus gateway closes a connection idle for 10 s, Node's server one idle for 5 s);
   * a call the server's idle close cut is made again once.
   */
  touch() {
    return Promise.all(this.connections.map((_, c) => this.call(c).catch(() => this.call(c))))
  }

  /** How many times a connection was opened again after the server closed it. */
  get reopened() {
    return this.connections.reduce((n, c) => n + c.reopened, 0)
  }

  /** A `tools/call` of a tool the server does not have, on connection `c`: answered without the upstream. */
  async callUnknown(c) {
    const body = `{"jsonrpc":"2.0","id":${this.nextId++},"method":"tools/call","params":${this.unknownParams}}`
    const message = messageOf(await this.connections[c].post(`${this.unknownHead}${body.length}\r\n\r\n${body}`))
    if (!message.error && !message.result?.isError) {
      throw new Error(`unexpected answer from ${this.url}: ${JSON.stringify(message).slice(0, 300)}`)
    }
  }

  close() {
    for (const connection of this.connections) connection.close()
  }
}

// ---------------------------------------------------------------- measuring

/** Per-call µs of `calls` sequential awaits of `fn`. */
async function sequential(fn, calls) {
  const times = new Float64Array(calls)
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now()
    await fn()
    times[i] = (performance.now() - t0) * 1e3
  }
  return times
}

/** `calls` calls of `client`, one in flight per connection; per-call µs and what they cost. */
async function inFlight(client, calls, pid) {
  await client.touch()
  const times = new Float64Array(calls)
  let next = 0
  return measured(pid, calls, times, () =>
    Promise.all(
      client.connections.map(async (_, c) => {
        for (let i = next++; i < calls; i = next++) {
          const t0 = performance.now()
          await client.call(c)
          times[i] = (performance.now() - t0) * 1e3
        }
      }),
    ),
  )
}

/**
 * Runs `run()`, which makes `calls` calls and fills `times`; resolves `times`, the calls
 * per second, and per call: CPU µs of this process (every thread), of the gateway's
 * process `pid` (every thread) and of the processes below it (the upstream server), and
 * the gateway process's voluntary context switches (Linux: /proc/<pid>/task/<tid>/...).
 */
async function measured(pid, calls, times, run) {
  const before = usage(pid)
  const started = performance.now()
  await run()
  const ms = performance.now() - started
  const after = usage(pid)
  const per = (key) => (after[key] - before[key]) / calls
  return {
    times,
    perSecond: (calls * 1e3) / ms,
    clientCpu: per("client"),
    gatewayCpu: per("gateway"),
    upstreamCpu: per("upstream"),
    gatewaySwitches: per("switches"),
  }
}

function usage(pid) {
  const { user, system } = process.cpuUsage()
  const { ns, below, switches } = processUsage(pid)
  return { client: user + system, gateway: ns / 1e3, upstream: below / 1e3, switches }
}

/** CPU ns and voluntary switches of `pid` (every thread), and CPU ns of the processes below it. */
function processUsage(pid) {
  const out = { ns: 0, below: 0, switches: 0 }
  let tasks = []
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const task of tasks) {
    const dir = `/proc/${pid}/task/${task}`
    try {
      out.ns += Number(readFileSync(`${dir}/schedstat`, "utf8").split(" ")[0])
      out.switches += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`${dir}/status`, "utf8"))?.[1] ?? 0)
      for (const kid of readFileSync(`${dir}/children`, "utf8").split(" ")) {
        if (!kid) continue
        const below = processUsage(Number(kid))
        out.below += below.ns + below.below
      }
    } catch {
      // the thread ended while we looked
    }
  }
  return out
}

const us = (x) => `${formatNumber(x)} µs`
const p50 = (times) => quantile(sorted(times), 0.5)
const p99 = (times) => quantile(sorted(times), 0.99)
const concat = (arrays) => {
  const out = new Float64Array(arrays.reduce((n, a) => n + a.length, 0))
  let at = 0
  for (const a of arrays) out.set(a, (at += a.length) - a.length)
  return out
}
const print = (line = "") => process.stdout.write(`${line}\n`)
const log = (line) => process.stderr.write(`${line}\n`)

/** The addon this platform loads, and when it was built: another build may have replaced it. */
function addon() {
  const prefix = `toolnexus.${process.platform}-${process.arch}`
  const file = readdirSync(packageDir).find((f) => f.startsWith(prefix) && f.endsWith(".node"))
  if (!file) return "addon not found"
  const built = statSync(path.join(packageDir, file)).mtime.toISOString().slice(0, 16).replace("T", " ")
  return `addon ${file} built ${built} UTC`
}

async function main() {
  // Anything stuck ends the run rather than hanging it.
  setTimeout(() => {
    log("gateway bench: still running after 10 minutes; giving up")
    process.exit(1)
  }, 10 * 60_000).unref()
  const { kind: upstreamKind, command } = upstream()
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")
  const loadBefore = load()
  const children = []
  const clients = []
  let direct
  try {
    log("starting the toolnexus gateway")
    const tn = await startChild("toolnexus")
    children.push(tn)
    let v2
    if (!flags.latency) {
      log("starting the SDK v2 gateway")
      v2 = await startChild("v2", ["--upstream-version", tn.upstreamVersion ?? ERAS[2025]])
      children.push(v2)
    }
    log("starting the bare HTTP server")
    const bare = await startChild("bare")
    children.push(bare)
    direct = await openStore(command)

    print(`gateway bench: ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} cores, ${addon()}`)
    print(`upstream: ${upstreamKind} over stdio, spoken in ${tn.upstreamVersion ?? "?"}; tool ${tn.tool}`)
    print(
      `downstream: raw HTTP/1.1 on keep-alive sockets, era ${VERSION}` +
        (VERSION === ERAS[2026] ? " (stateless, _meta in every request)" : " (a session: initialize, Mcp-Session-Id)") +
        ", the same client for every server",
    )
    print(`each gateway in a Node process of its own; the direct calls in this one, through a store of their own`)
    print()

    // ------------------------------------------------------------ 1. added latency
    const tnOne = await Downstream.open(tn.url, tn.tool, 1)
    const bareOne = await Downstream.open(bare.url, bare.tool, 1)
    clients.push(tnOne, bareOne)
    const runs = {
      direct: async () => {
        const result = await direct.tool.execute(ARGS)
        if (result.isError || result.output !== EXPECTED) throw new Error(`direct call: ${JSON.stringify(result)}`)
      },
      gateway: () => tnOne.call(0),
      unknown: () => tnOne.callUnknown(0),
      bare: () => bareOne.call(0),
    }
    log("1. added latency: warming up")
    for (const fn of Object.values(runs)) await sequential(fn, 500)
    const latency = { direct: [], gateway: [], unknown: [], bare: [] }
    const rounds = 10
    for (let round = 0; round < rounds; round++) {
      const order = Object.keys(runs)
      if (round % 2) order.reverse()
      for (const name of order) {
        await runs[name]() // untimed: the first call of a block may reopen an idle connection
        latency[name].push(await sequential(runs[name], Math.ceil(CALLS / rounds)))
      }
    }
    const [d, g, u, b] = [latency.direct, latency.gateway, latency.unknown, latency.bare].map(concat)
    const added50 = p50(g) - p50(d)
    const added99 = p99(g) - p99(d)
    const row = (label, p50us, p99us) =>
      print(`   ${label.padEnd(58)} p50 ${us(p50us).padStart(8)}   p99 ${us(p99us).padStart(8)}`)
    print(`1. added latency: an echo call through the toolnexus gateway over HTTP minus the same call made`)
    print(`   directly (tool.execute on a store), ${d.length} calls each, interleaved in ${rounds} rounds`)
    row("direct tool.execute", p50(d), p99(d))
    row("through the gateway", p50(g), p99(g))
    row("added by the gateway (difference of the two)", added50, added99)
    print(
      `   target: p50 added ≤ ${ADDED_TARGET_US} µs: ${added50 <= ADDED_TARGET_US ? "met" : "NOT met"}` +
        ` (${formatNumber(added50 / ADDED_TARGET_US)}× the target)`,
    )
    print(`   for scale, the same client in the same rounds:`)
    row("a bare TCP server answering at once (the HTTP round trip)", p50(b), p99(b))
    row("the gateway answering a call of an unknown tool itself", p50(u), p99(u))
    const beyond = added50 - p50(b)
    print(
      `   added p50 less the bare round trip: ${us(beyond)}` +
        ` (${beyond <= ADDED_TARGET_US ? "within" : "over"} the ${ADDED_TARGET_US} µs target)`,
    )

    // ------------------------------------------------------------ 2 and 3. both gateways
    if (v2) {
      print()
      const gateways = [
        { name: "toolnexus", child: tn },
        { name: "SDK v2", child: v2 },
      ]
      for (const gw of gateways) {
        gw.one = await Downstream.open(gw.child.url, gw.child.tool, 1)
        gw.many = await Downstream.open(gw.child.url, gw.child.tool, IN_FLIGHT)
        clients.push(gw.one, gw.many)
        log(`2, 3. warming up the ${gw.name} gateway`)
        await sequential(() => gw.one.call(0), 500)
        await inFlight(gw.many, 2_000)
        gw.seq = []
        gw.loaded = []
      }
      const seqCalls = Math.ceil(CALLS / ROUNDS)
      const manyCalls = Math.ceil(THROUGHPUT_CALLS / ROUNDS)
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...gateways].reverse() : gateways
        for (const gw of order) {
          log(`2, 3. round ${round + 1}/${ROUNDS}: ${gw.name}`)
          await gw.one.touch()
          const times = new Float64Array(seqCalls)
          const one = async () => {
            for (let i = 0; i < seqCalls; i++) {
              const t0 = performance.now()
              await gw.one.call(0)
              times[i] = (performance.now() - t0) * 1e3
            }
          }
          gw.seq.push(await measured(gw.child.pid, seqCalls, times, one))
          gw.loaded.push(await inFlight(gw.many, manyCalls, gw.child.pid))
        }
      }
      const figures = gateways.map((gw) => {
        const idle = concat(gw.seq.map((r) => r.times))
        const loaded = concat(gw.loaded.map((r) => r.times))
        const rates = gw.loaded.map((r) => r.perSecond)
        return {
          rates,
          rate: median(rates),
          idle50: p50(idle),
          idle99: p99(idle),
          loaded50: p50(loaded),
          loaded99: p99(loaded),
          gatewayCpu: median(gw.loaded.map((r) => r.gatewayCpu)),
          upstreamCpu: median(gw.loaded.map((r) => r.upstreamCpu)),
          idleCpu: median(gw.seq.map((r) => r.gatewayCpu)),
          idleSwitches: median(gw.seq.map((r) => r.gatewaySwitches)),
          loadedSwitches: median(gw.loaded.map((r) => r.gatewaySwitches)),
          clientCpu: median(gw.loaded.map((r) => r.clientCpu)),
        }
      })
      const [t, s] = figures
      const ratio = t.rate / s.rate
      const x = (a, b) => `${formatNumber(a / b)}×`
      print(
        `2. throughput: ${manyCalls * ROUNDS} echo calls, ${IN_FLIGHT} in flight (one socket each), ${ROUNDS} rounds`,
      )
      print(
        `3. idle vs loaded: latency of a call with 1 in flight (${seqCalls * ROUNDS} calls) and with ${IN_FLIGHT} in flight`,
      )
      print(`   CPU per call and voluntary context switches (from /proc): the gateway's process (every thread),`)
      print(`   its upstream server, and this process (the client)`)
      print(
        table(
          [
            [
              `calls/s, ${IN_FLIGHT} in flight (median of rounds ±spread)`,
              summary(t.rates),
              summary(s.rates),
              x(t.rate, s.rate),
            ],
            ["p50 latency, 1 in flight", us(t.idle50), us(s.idle50), x(t.idle50, s.idle50)],
            ["p99 latency, 1 in flight", us(t.idle99), us(s.idle99), x(t.idle99, s.idle99)],
            [`p50 latency, ${IN_FLIGHT} in flight`, us(t.loaded50), us(s.loaded50), x(t.loaded50, s.loaded50)],
            [`p99 latency, ${IN_FLIGHT} in flight`, us(t.loaded99), us(s.loaded99), x(t.loaded99, s.loaded99)],
            [`p50 ${IN_FLIGHT} in flight / p50 1 in flight`, x(t.loaded50, t.idle50), x(s.loaded50, s.idle50), ""],
            ["gateway process CPU per call, 1 in flight", us(t.idleCpu), us(s.idleCpu), x(t.idleCpu, s.idleCpu)],
            [
              "gateway process voluntary switches per call, 1 in flight",
              formatNumber(t.idleSwitches),
              formatNumber(s.idleSwitches),
              x(t.idleSwitches, s.idleSwitches),
            ],
            [
              `gateway process voluntary switches per call, ${IN_FLIGHT} in flight`,
              formatNumber(t.loadedSwitches),
              formatNumber(s.loadedSwitches),
              x(t.loadedSwitches, s.loadedSwitches),
            ],
            [
              `gateway process CPU per call, ${IN_FLIGHT} in flight`,
              us(t.gatewayCpu),
              us(s.gatewayCpu),
              x(t.gatewayCpu, s.gatewayCpu),
            ],
            [
              `its upstream's CPU per call, ${IN_FLIGHT} in flight`,
              us(t.upstreamCpu),
              us(s.upstreamCpu),
              x(t.upstreamCpu, s.upstreamCpu),
            ],
            [
              `client CPU per call, ${IN_FLIGHT} in flight`,
              us(t.clientCpu),
              us(s.clientCpu),
              x(t.clientCpu, s.clientCpu),
            ],
          ],
          ["figure", "toolnexus", "SDK v2", "toolnexus / v2"],
        ),
      )
      print(
        `   target throughput ≥ ${THROUGHPUT_TARGET}× the SDK v2 gateway: ${ratio >= THROUGHPUT_TARGET ? "met" : "NOT met"} (${formatNumber(ratio)}×)`,
      )
    }
    const reopened = clients.reduce((n, c) => n + c.reopened, 0)
    if (reopened > 0) print(`(${reopened} idle connections closed by a server were opened again, outside the timings)`)
    print(`load average before ${loadBefore}, after ${load()}`)
  } finally {
    for (const client of clients) client.close()
    await direct?.store.close()
    for (const c of children) {
      if (!(await c.stop())) log(`note: a gateway process (pid ${c.pid}) did not exit within 5 s of its stdin closing`)
    }
  }
}

if (flags.child) await child(flags.child)
else await main()
