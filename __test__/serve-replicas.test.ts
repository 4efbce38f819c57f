// Several gateways on one fleet state: `serveMcp` replicas, each over a store of its own,
// sharing a registry through a real redis-server (redis.ts), and `toolnexus serve --state`
// processes. A 2026-07-28 request is stateless, so any replica answers it alike; a
// 2025-11-25 session lives on the replica that opened it, another answers 404 for its id
// and the client opens a new session there; a server added on one replica is served by
// all. Raw requests where the wire is the point; the official clients otherwise (SDK v1
// @modelcontextprotocol/sdk for 2025-11-25, SDK v2 @modelcontextprotocol/client for
// 2026-07-28).
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import fs from "node:fs"
import net from "node:net"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Client as Client2, StreamableHTTPClientTransport as HttpTransport2 } from "@modelcontextprotocol/client"
import { createMcpStore, serveMcp, type McpGateway, type McpStore } from "toolnexus"
import { assertGone, local, NODE, poll, ROOT, tempDir, toolsFlag } from "./helpers.js"
import { here } from "./liveness.js"
import { startRedis, type Redis } from "./redis.js"

const T = { timeout: 60_000 }
const LEGACY = "2025-11-25"
const MODERN = "2026-07-28"
const ACCEPT = "application/json, text/event-stream"
const CLIENT_INFO = { name: "replicas-test", version: "1.0.0" }
const CLI = path.join(ROOT, "bin", "toolnexus.js")

/** The tools of the servers every replica's config has (the fixture answers a custom tool with its arguments as JSON). */
const BASE_TOOLS = [
  {
    name: "lookup",
    description: "Looks a word up",
    inputSchema: { type: "object", properties: { word: { type: "string" } } },
  },
  "ping",
]
const BASE = { mcpServers: { base: local(toolsFlag(BASE_TOOLS)) } }
const BASE_NAMES = ["base_lookup", "base_ping"]
/** The server one replica adds at run time. */
const EXTRA = local(
  toolsFlag([
    { name: "added", description: "Added at run time", inputSchema: { type: "object", properties: { n: {} } } },
  ]),
)

// ---------------------------------------------------------------- set-up

/** Runs the functions given, last first, when the test ends (clients, gateways, stores, then Redis). */
function closers(t: TestContext) {
  const fns: Array<() => unknown> = []
  t.after(async () => {
    for (const fn of fns.reverse()) {
      try {
        await fn()
      } catch {
        // a close failing must not hide the test's own failure
      }
    }
  })
  return (fn: () => unknown) => void fns.push(fn)
}

interface Replica {
  store: McpStore
  gateway: McpGateway
  url: string
}

interface Fleet {
  redis: Redis
  later: (fn: () => unknown) => void
  a: Replica
  b: Replica
}

/** A Redis stopped last, after everything else the test opened. */
async function redisFor(t: TestContext, later: (fn: () => unknown) => void): Promise<Redis> {
  const redis = await startRedis()
  later(() => redis.stop())
  return redis
}

/** One replica: a store of `BASE` on the fleet's state (a catalog folder of its own), ready, served over HTTP. */
async function replica(t: TestContext, redis: Redis, later: (fn: () => unknown) => void): Promise<Replica> {
  const store = createMcpStore(BASE, { state: redis.url, catalogDir: tempDir(t) })
  later(() => store.close())
  const joined = await poll(() => store.sharedState().status === "connected", 10_000)
  assert.ok(joined, `the store never connected to the state: ${JSON.stringify(store.sharedState())}`)
  await store.waitReady()
  assert.equal(store.status().base?.state, "connected", JSON.stringify(store.status()))
  const gateway = await serveMcp(store)
  later(() => gateway.close())
  assert.match(gateway.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  return { store, gateway, url: gateway.url! }
}

/** Two replicas, A and B, on one Redis. */
async function fleet(t: TestContext): Promise<Fleet> {
  const later = closers(t)
  const redis = await redisFor(t, later)
  const a = await replica(t, redis, later)
  const b = await replica(t, redis, later)
  assert.notEqual(a.url, b.url)
  return { redis, later, a, b }
}

/** The official SDK v1 client over streamable HTTP (2025-11-25), closed when the test ends. */
async function v1Client(later: (fn: () => unknown) => void, url: string, sessionId?: string) {
  const client = new Client(CLIENT_INFO)
  const transport = new StreamableHTTPClientTransport(new URL(url), sessionId ? { sessionId } : undefined)
  await client.connect(transport)
  later(() => client.close())
  return { client, transport }
}

const sorted = (tools: Array<{ name: string }>) => tools.map((x) => x.name).sort()
const texts = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) =>
    c.type === "text" ? c.text : c.type,
  )

// ---------------------------------------------------------------- raw HTTP

interface JsonRpc {
  jsonrpc?: string
  id?: string | number | null
  result?: Record<string, any>
  error?: { code: number; message: string; data?: unknown }
}

interface Raw {
  status: number
  headers: Headers
  text: string
  /** The JSON-RPC response of the body: plain JSON, or the first response in an event stream. */
  rpc?: JsonRpc
}

const show = (raw: Raw) =>
  `HTTP ${raw.status} ${JSON.stringify(Object.fromEntries(raw.headers))} ${JSON.stringify(raw.text.slice(0, 600))}`

/** Reads a response body; an event stream up to its first JSON-RPC response (it may stay open). */
async function readBody(res: Response): Promise<{ text: string; rpc?: JsonRpc }> {
  const type = res.headers.get("content-type") ?? ""
  if (!type.startsWith("text/event-stream")) {
    const text = await res.text()
    try {
      return { text, rpc: JSON.parse(text) as JsonRpc }
    } catch {
      return { text }
    }
  }
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { text }
      text += decoder.decode(value, { stream: true })
      for (const event of text.split(/\r?\n\r?\n/).slice(0, -1)) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n")
        if (!data) continue
        try {
          const message = JSON.parse(data) as JsonRpc
          if ("result" in message || "error" in message) return { text, rpc: message }
        } catch {
          // not JSON: read on
        }
      }
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

/** Sends `body` (JSON) with the headers a streamable HTTP client sends. */
async function send(url: string, body: unknown, headers: Record<string, string> = {}, method = "POST"): Promise<Raw> {
  const res = await fetch(url, {
    method,
    headers: { accept: ACCEPT, "content-type": "application/json", ...headers },
    body: method === "POST" ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, headers: res.headers, ...(await readBody(res)) }
}

interface Session {
  id: string
  /** The headers of a request in the session. */
  headers: Record<string, string>
}

/** A 2025-11-25 session opened by hand: initialize, then notifications/initialized. */
async function openSession(url: string): Promise<Session> {
  const init = await send(url, {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: CLIENT_INFO },
  })
  assert.equal(init.status, 200, show(init))
  assert.equal(init.rpc?.result?.protocolVersion, LEGACY, show(init))
  const id = init.headers.get("mcp-session-id")
  assert.ok(id, `initialize made no session: ${show(init)}`)
  const headers = { "mcp-session-id": id, "mcp-protocol-version": LEGACY }
  const initialized = await send(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)
  assert.ok(initialized.status === 202 || initialized.status === 200, show(initialized))
  return { id, headers }
}

/** tools/list in a 2025 session. */
const sessionList = (url: string, session: Session, id = 2) =>
  send(url, { jsonrpc: "2.0", id, method: "tools/list" }, session.headers)

/** One stateless 2026-07-28 request: its version, client info and capabilities in `_meta`, and the headers. */
function modern(url: string, method: string, params: Record<string, unknown> = {}, id: number | string = 1) {
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
  }
  const headers: Record<string, string> = { "mcp-protocol-version": MODERN, "mcp-method": method }
  if (method === "tools/call") headers["mcp-name"] = String(params.name)
  return send(url, { jsonrpc: "2.0", id, method, params: { ...params, _meta } }, headers)
}

/** The tools a stateless tools/list answers, failing with the response otherwise. */
async function modernTools(url: string): Promise<Array<{ name: string }>> {
  const raw = await modern(url, "tools/list")
  assert.equal(raw.status, 200, show(raw))
  const tools = raw.rpc?.result?.tools
  assert.ok(Array.isArray(tools), `tools/list answered no tools: ${show(raw)}`)
  return tools
}

// ---------------------------------------------------------------- 2025 sessions

describe("serveMcp replicas: a 2025-11-25 session lives on the replica that opened it", T, () => {
  test("A's session works on A; B answers 404 for its id; a client opens a new session on B", async (t) => {
    const { a, b, later } = await fleet(t)

    const session = await openSession(a.url)
    const onA = await sessionList(a.url, session)
    assert.equal(onA.status, 200, show(onA))
    assert.deepEqual(sorted(onA.rpc?.result?.tools ?? []), BASE_NAMES, show(onA))

    // The same id on B: B never saw it.
    const onB = await sessionList(b.url, session, 3)
    assert.equal(onB.status, 404, `B answered A's session id with ${show(onB)}`)
    const call = await send(
      b.url,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "base_ping", arguments: {} } },
      session.headers,
    )
    assert.equal(call.status, 404, `a call in A's session on B: ${show(call)}`)
    // A DELETE of it on B cannot end it: rmcp closes an unknown session idempotently (202).
    const ended = await send(b.url, undefined, session.headers, "DELETE")
    t.diagnostic(`DELETE of A's session id on B: HTTP ${ended.status}`)
    assert.ok(ended.status < 500, `DELETE of A's session on B: ${show(ended)}`)

    // None of that touched the session on A.
    const stillOnA = await sessionList(a.url, session, 5)
    assert.equal(stillOnA.status, 200, `A's session after B's 404s: ${show(stillOnA)}`)
    assert.deepEqual(sorted(stillOnA.rpc?.result?.tools ?? []), BASE_NAMES)

    // The SDK v1 client holding A's id and sent to B gets the 404 ...
    const { client: stale } = await v1Client(later, b.url, session.id)
    const refused = await stale.listTools().then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    )
    assert.ok("error" in refused, `B listed tools in A's session: ${JSON.stringify(refused)}`)
    assert.ok(refused.error instanceof StreamableHTTPError, `not an HTTP error: ${String(refused.error)}`)
    assert.equal(refused.error.code, 404, String(refused.error))

    // ... so it opens a new session there, which works.
    const { client, transport } = await v1Client(later, b.url)
    assert.ok(transport.sessionId, "B gave the new client no session")
    assert.notEqual(transport.sessionId, session.id, "B's session has A's id")
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    assert.deepEqual(sorted((await client.listTools()).tools), BASE_NAMES)
    const pinged = await client.callTool({ name: "base_lookup", arguments: { word: "replica" } })
    assert.deepEqual(texts(pinged), [JSON.stringify({ word: "replica" })])

    // And the other way round: B's session is unknown on A.
    const bOnA = await sessionList(
      a.url,
      { id: transport.sessionId, headers: { ...session.headers, "mcp-session-id": transport.sessionId } },
      6,
    )
    assert.equal(bOnA.status, 404, `A answered B's session id with ${show(bOnA)}`)
  })
})

// ---------------------------------------------------------------- 2026-07-28, stateless

describe("serveMcp replicas: a 2026-07-28 request reaches either replica", T, () => {
  test("server/discover, tools/list and tools/call answer alike on A and B, with no session", async (t) => {
    const { a, b } = await fleet(t)

    const discovered = await Promise.all([a.url, b.url].map((url) => modern(url, "server/discover")))
    for (const raw of discovered) {
      assert.equal(raw.status, 200, show(raw))
      assert.ok(raw.rpc?.result, show(raw))
      assert.ok(raw.rpc.result.supportedVersions?.includes(MODERN), show(raw))
      assert.equal(raw.headers.get("mcp-session-id"), null, `a stateless answer opened a session: ${show(raw)}`)
    }
    assert.deepEqual(discovered[0]!.rpc!.result, discovered[1]!.rpc!.result, "A and B describe themselves alike")

    const [fromA, fromB] = await Promise.all([modernTools(a.url), modernTools(b.url)])
    assert.deepEqual(sorted(fromA), BASE_NAMES)
    assert.deepEqual(fromB, fromA, "B lists exactly what A lists")

    const calls = await Promise.all(
      [a.url, b.url].map((url, i) =>
        modern(url, "tools/call", { name: "base_lookup", arguments: { word: "either" } }, 10 + i),
      ),
    )
    for (const raw of calls) {
      assert.equal(raw.status, 200, show(raw))
      assert.equal(raw.rpc?.result?.isError ?? false, false, show(raw))
      assert.deepEqual(texts(raw.rpc!.result!), [JSON.stringify({ word: "either" })], show(raw))
    }
  })

  test("the SDK v2 client behind a round-robin balancer: every request may land on the other replica", async (t) => {
    const { a, b, later } = await fleet(t)
    const hits = { a: 0, b: 0 }
    const sessions: string[] = []
    let turn = 0
    // Each request goes to the next replica, as a load balancer with no affinity sends it.
    const balanced = async (url: string | URL, init?: RequestInit) => {
      const target = turn++ % 2 === 0 ? a : b
      hits[target === a ? "a" : "b"]++
      const res = await fetch(String(url).replace(a.url, target.url), init)
      const id = res.headers.get("mcp-session-id")
      if (id) sessions.push(id)
      return res
    }
    const client = new Client2(CLIENT_INFO, { versionNegotiation: { mode: "auto" } })
    await client.connect(new HttpTransport2(new URL(a.url), { fetch: balanced }))
    later(() => client.close())
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.equal(client.getServerVersion()?.name, "toolnexus")

    for (let round = 0; round < 3; round++) {
      assert.deepEqual(sorted((await client.listTools()).tools), BASE_NAMES, `round ${round}`)
      const result = await client.callTool({ name: "base_lookup", arguments: { word: `round ${round}` } })
      assert.deepEqual(texts(result), [JSON.stringify({ word: `round ${round}` })], `round ${round}`)
    }
    assert.ok(hits.a >= 2 && hits.b >= 2, `both replicas answered: ${JSON.stringify(hits)}`)
    assert.deepEqual(sessions, [], "no replica opened a session for 2026-07-28 requests")
  })
})

// ---------------------------------------------------------------- the shared registry

describe("serveMcp replicas: a server added on one replica is served by all", T, () => {
  test("added on A's store, B's gateway lists it, pushes the change and calls it; removed, it goes", async (t) => {
    const { a, b, later } = await fleet(t)
    const { client } = await v1Client(later, b.url)
    let changes = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changes++)
    assert.deepEqual(sorted((await client.listTools()).tools), BASE_NAMES)

    a.store.addServers({ mcpServers: { extra: EXTRA } })
    const added = Date.now()
    const listed = await poll(async () => {
      const names = sorted((await client.listTools()).tools)
      return names.includes("extra_added") && names
    }, 15_000)
    assert.ok(listed, `B's gateway never listed extra_added; B's store: ${JSON.stringify(b.store.status())}`)
    t.diagnostic(`B's gateway listed the server added on A after ${Date.now() - added} ms`)
    assert.deepEqual(listed, [...BASE_NAMES, "extra_added"].sort())
    assert.ok(sorted(await modernTools(b.url)).includes("extra_added"), "a stateless tools/list on B names it too")

    const result = await client.callTool({ name: "extra_added", arguments: { n: 7 } })
    assert.equal(result.isError ?? false, false, JSON.stringify(result))
    assert.deepEqual(texts(result), [JSON.stringify({ n: 7 })])
    // B may list the tool from the shared catalog before its own process is up; the call
    // waited for that process, which B runs itself.
    assert.equal(b.store.status().extra?.state, "connected", "B runs the added server itself")
    const pushed = await poll(() => changes > 0, 5_000)
    assert.ok(pushed, "B's session got no notifications/tools/list_changed for the added server")

    assert.equal(a.store.removeServer("extra"), true)
    const gone = await poll(async () => !sorted((await client.listTools()).tools).includes("extra_added"), 10_000)
    assert.ok(gone, `B's gateway still lists extra_added after A removed it: ${JSON.stringify(b.store.status())}`)
    assert.deepEqual(sorted(await modernTools(b.url)), BASE_NAMES)
  })
})

// ---------------------------------------------------------------- the CLI

/** A port that was free a moment ago (the kernel's pick for port 0, released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** What `promise` resolves to within `ms`, else undefined (the timer never outlives the wait). */
async function within<V>(promise: Promise<V>, ms: number): Promise<V | undefined> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Every live process below `pid`. */
function descendantsOf(pid: number): number[] {
  const parents = here.parents()
  const found: number[] = []
  const queue = [pid]
  while (queue.length > 0) {
    const parent = queue.shift()!
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child)
        queue.push(child)
      }
    }
  }
  return found
}

/** `toolnexus serve <config> --http 127.0.0.1:<port> --state <url>`, once it says it listens; SIGKILLed if left running. */
async function serveCli(t: TestContext, config: string, state: string) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/mcp`
  const child = spawn(NODE, [CLI, "serve", config, "--http", `127.0.0.1:${port}`, "--state", state], {
    cwd: ROOT,
    env: process.env,
    stdio: ["ignore", "ignore", "pipe"],
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  )
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })
  const listening = await poll(
    () => stderr.includes(`listening on ${url}`) || child.exitCode !== null || child.signalCode !== null,
    15_000,
  )
  assert.ok(listening && child.exitCode === null, `the CLI on port ${port} never listened\nstderr: ${stderr}`)
  return { child, url, exited, stderr: () => stderr }
}

describe("`toolnexus serve --state`: two processes on one state", T, () => {
  test("both serve the same tools and the fleet's added server; SIGTERM ends each with 0 and its servers", async (t) => {
    const later = closers(t)
    const redis = await redisFor(t, later)
    const dir = tempDir(t)
    const config = path.join(dir, "mcp.json")
    fs.writeFileSync(config, JSON.stringify(BASE))
    const clis = await Promise.all([serveCli(t, config, redis.url), serveCli(t, config, redis.url)])

    const clients = await Promise.all(clis.map((cli) => v1Client(later, cli.url)))
    const listings = await Promise.all(clients.map(({ client }) => client.listTools()))
    assert.deepEqual(sorted(listings[0]!.tools), BASE_NAMES)
    assert.deepEqual(listings[1]!.tools, listings[0]!.tools, "the two CLIs list the same tools")
    const [modernA, modernB] = await Promise.all(clis.map((cli) => modernTools(cli.url)))
    assert.deepEqual(modernB, modernA, "a stateless tools/list answers alike on either CLI")

    // A third member of the fleet adds a server: both CLIs serve it.
    const store = createMcpStore(null, { state: redis.url, catalogDir: tempDir(t) })
    later(() => store.close())
    const joined = await poll(() => store.sharedState().status === "connected", 10_000)
    assert.ok(joined, JSON.stringify(store.sharedState()))
    store.addServers({ mcpServers: { extra: EXTRA } })
    for (const [i, { client }] of clients.entries()) {
      const listed = await poll(async () => sorted((await client.listTools()).tools).includes("extra_added"), 15_000)
      assert.ok(listed, `CLI ${i} never served extra_added\nstderr: ${clis[i]!.stderr()}`)
      const result = await client.callTool({ name: "extra_added", arguments: { n: i } })
      assert.deepEqual(texts(result), [JSON.stringify({ n: i })], `CLI ${i}`)
    }
    await store.close()

    // Each CLI runs its servers itself: base and extra, at least, below each.
    const below = clis.map((cli) => descendantsOf(cli.child.pid!))
    for (const [i, pids] of below.entries()) {
      assert.ok(pids.length >= 2, `processes below CLI ${i}: ${pids.join(", ")}`)
    }
    await Promise.all(clients.map(({ client }) => client.close()))
    for (const cli of clis) cli.child.kill("SIGTERM")
    for (const [i, cli] of clis.entries()) {
      const exit = await within(cli.exited, 10_000)
      assert.ok(exit, `CLI ${i} still runs 10 s after SIGTERM\nstderr: ${cli.stderr()}`)
      assert.deepEqual(exit, { code: 0, signal: null }, `CLI ${i}\nstderr: ${cli.stderr()}`)
    }
    await assertGone([...clis.map((cli) => cli.child.pid!), ...below.flat()], 5_000, "the CLIs and their servers")
  })
})
