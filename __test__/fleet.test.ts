// A fleet: stores in separate processes sharing their registry, catalog, news, health and
// sign-ins through one real redis-server (redis.ts). Each instance runs in a Node process
// of its own (fixtures/fleet-instance.mjs), driven over JSON lines; single-instance
// items (faults, corrupt values) use a store in this process. Every wait polls for a
// condition with a deadline and fails saying what it last saw.
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import http from "node:http"
import net from "node:net"
import os from "node:os"
import { describe, test, type TestContext } from "node:test"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { createMcpStore, type FleetInstance, type McpStore, type StateOption, type StoreServerStatus } from "toolnexus"
import { startOAuthServer } from "./fixtures/oauth-server.mjs"
import { startHttpServer } from "./fixtures/http-server.mjs"
import { assertGone, fixture, isAlive, local, NODE, ROOT, sleep, tempDir, toolsFlag } from "./helpers.js"
import { here } from "./liveness.js"
import { encode, startRedis, type Redis } from "./redis.js"

const T = { timeout: 120_000 }
const REGISTRY = "toolnexus:default:registry"

// ---------------------------------------------------------------- helpers

/** Polls `check` (sync or async) every 50 ms until it gives a value other than undefined/false. */
async function until<V>(
  what: string,
  check: () => V | undefined | false | Promise<V | undefined | false>,
  ms = 10_000,
  show?: () => unknown,
): Promise<V> {
  const deadline = Date.now() + ms
  let last: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined && value !== false) return value as V
    } catch (e) {
      last = e
    }
    if (Date.now() >= deadline) break
    await sleep(50)
  }
  const seen = show ? await show() : undefined
  assert.fail(
    `timed out after ${ms} ms waiting for ${what}` +
      (seen !== undefined ? `; last seen: ${JSON.stringify(seen)}` : "") +
      (last ? `; last error: ${String(last)}` : ""),
  )
}

interface Spec {
  config?: object
  options?: Record<string, unknown>
  authorize?: boolean
}

/** One store instance in a process of its own (fixtures/fleet-instance.mjs). */
interface Instance {
  readonly pid: number
  /** The versions of every onChange so far. */
  readonly changes: number[]
  readonly stderr: () => string
  readonly exited: () => boolean
  send<R = any>(op: string, extra?: Record<string, unknown>): Promise<R>
  status(agent?: string): Promise<Record<string, StoreServerStatus>>
  listTools(agent?: string): Promise<string[]>
  /** Asks the store to close, then waits for the process to exit. */
  close(): Promise<void>
  kill(): Promise<void>
}

function startInstance(t: TestContext, spec: Spec, env: Record<string, string> = {}): Instance {
  const child = spawn(NODE, [fixture("fleet-instance.mjs"), JSON.stringify(spec)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = (stderr + d).slice(-20_000)))
  const changes: number[] = []
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  let nextId = 1
  let buffer = ""
  let exited = false
  const exit = new Promise<void>((resolve) =>
    child.on("exit", () => {
      exited = true
      for (const p of pending.values()) p.reject(new Error(`instance ${child.pid} exited; stderr: ${stderr}`))
      pending.clear()
      resolve()
    }),
  )
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    buffer += d
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      if (!line.trim()) continue
      let message: any
      try {
        message = JSON.parse(line)
      } catch {
        continue // a stray line is no answer
      }
      if (message.event === "change") changes.push(message.version)
      const waiting = pending.get(message.id)
      if (!waiting) continue
      pending.delete(message.id)
      if ("error" in message) waiting.reject(new Error(`instance ${child.pid}: ${message.error}`))
      else waiting.resolve(message.result)
    }
  })
  child.stdin.on("error", () => {}) // a write after the child is gone
  const send = (op: string, extra: Record<string, unknown> = {}) =>
    new Promise<any>((resolve, reject) => {
      if (exited) return reject(new Error(`instance ${child.pid} has exited; stderr: ${stderr}`))
      const id = nextId++
      pending.set(id, { resolve, reject })
      child.stdin.write(JSON.stringify({ id, op, ...extra }) + "\n")
    })
  const kill = async () => {
    if (!exited) child.kill("SIGKILL")
    await exit
  }
  const instance: Instance = {
    pid: child.pid!,
    changes,
    stderr: () => stderr,
    exited: () => exited,
    send,
    status: (agent) => send("status", agent ? { agent } : {}),
    listTools: (agent) => send("listTools", agent ? { agent } : {}),
    async close() {
      if (exited) return
      await send("close").catch(() => {})
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      await exit
      clearTimeout(timer)
    },
    kill,
  }
  t.after(async () => {
    if (exited) return
    child.stdin.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
    await exit
    clearTimeout(timer)
  })
  return instance
}

/** The options of one fleet member: the shared state and a catalog folder of its own. */
const member = (t: TestContext, state: StateOption, extra: Record<string, unknown> = {}) => ({
  state,
  catalogDir: tempDir(t),
  ...extra,
})

/** A store in this process, closed when the test ends. */
function openStore(t: TestContext, config: object | null, opts: Parameters<typeof createMcpStore>[1]): McpStore {
  const store = createMcpStore(config, opts)
  t.after(() => store.close())
  return store
}

const connected = (i: Instance) =>
  until(`instance ${i.pid} connected to redis`, async () => (await i.send("sharedState")).status === "connected")

/** The registry document as Redis holds it (parsed), or undefined when there is none or it is not JSON. */
async function registryOf(redis: Redis, key = REGISTRY): Promise<any> {
  const raw = (await redis.command("GET", key)) as string | null
  if (raw === null) return undefined
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}

/** The live processes whose parent is `pid`. */
const childrenOf = (pid: number) => [...here.parents()].filter(([, ppid]) => ppid === pid).map(([p]) => p)

/** Every process below `pid` (children, grandchildren ...). */
function descendantsOf(pid: number): number[] {
  const parents = here.parents()
  const found: number[] = []
  const walk = (p: number) => {
    for (const [child, ppid] of parents) if (ppid === p) (found.push(child), walk(child))
  }
  walk(pid)
  return found
}

/** Closes every instance and asserts that neither they nor their server processes live on. */
async function closeAll(instances: Instance[]) {
  const pids = instances.flatMap((i) => (i.exited() ? [] : [i.pid, ...descendantsOf(i.pid)]))
  await Promise.all(instances.map((i) => i.close()))
  await assertGone(pids, 5_000, "instances and their servers")
}

const entryOf = (doc: any, name: string, view = "") => doc?.views?.[view]?.[name]

/**
 * The commands `redis` runs from now on, as MONITOR shows them (`"MGET" "key"`), until the
 * test ends: what no store says, such as that it has read a key.
 */
async function monitor(t: TestContext, redis: Redis): Promise<string[]> {
  const socket = net.connect({ host: "127.0.0.1", port: redis.port })
  t.after(() => socket.destroy())
  const commands: string[] = []
  let partial = ""
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject)
    socket.setEncoding("utf8").on("data", (data: string) => {
      const lines = (partial + data).split("\r\n")
      partial = lines.pop()!
      // "+OK", then a line per command: +<time> [<db> <client>] "NAME" "arg" ...
      for (const line of lines) {
        if (line === "+OK") resolve()
        else commands.push(line.slice(line.indexOf("] ") + 2))
      }
    })
    socket.write(encode(["MONITOR"]))
  })
  return commands
}

/** A free loopback port nobody listens on (the kernel's pick for port 0, released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * A stateless streamable-HTTP MCP server whose tools all sessions share: calling `grow`
 * with { name } adds that tool and sends notifications/tools/list_changed on the call's
 * own response stream (so only the caller hears of it).
 */
async function growingServer(t: TestContext) {
  const schema = { type: "object", properties: {} }
  const tools = [
    { name: "first", description: "There from the start", inputSchema: schema },
    {
      name: "grow",
      description: "Adds a tool named args.name",
      inputSchema: { ...schema, properties: { name: { type: "string" } } },
    },
  ]
  let lists = 0
  const httpServer = http.createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405, { Allow: "POST" }).end()
    const server = new Server({ name: "growing", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })
    server.setRequestHandler(ListToolsRequestSchema, async () => (lists++, { tools }))
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      if (request.params.name === "grow") {
        const name = String(request.params.arguments?.name ?? "grown")
        if (!tools.some((x) => x.name === name))
          tools.push({ name, description: `Added: ${name}`, inputSchema: schema })
        await extra.sendNotification({ method: "notifications/tools/list_changed" })
        return { content: [{ type: "text", text: `added ${name}` }] }
      }
      return { content: [{ type: "text", text: `${request.params.name} ok` }] }
    })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on("close", () => {
      transport.close().catch(() => {})
      server.close().catch(() => {})
    })
    try {
      await server.connect(transport)
      await transport.handleRequest(req, res)
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err))
    }
  })
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve))
  const { port } = httpServer.address() as { port: number }
  t.after(
    () =>
      new Promise<void>((resolve) => {
        httpServer.closeAllConnections()
        httpServer.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${port}/mcp`, tools, lists: () => lists }
}

// ---------------------------------------------------------------- a. registry

describe("fleet registry", () => {
  test("addServers/removeServer on A reach B within 1 s and survive a restart of the fleet", T, async (t) => {
    const redis = await startRedis(t)
    const A = startInstance(t, { config: { base: local() }, options: member(t, redis.url) })
    const B = startInstance(t, { config: { base: local() }, options: member(t, redis.url) })
    await Promise.all([connected(A), connected(B)])

    // Added on A: B names it within 1 s, then connects it itself.
    await A.send("addServers", { config: { extra: local(), kept: local() } })
    const added = Date.now()
    await until(
      "B's status to name extra and kept",
      async () => {
        const s = await B.status()
        return "extra" in s && "kept" in s
      },
      5_000,
      () => B.status(),
    )
    const seenIn = Date.now() - added
    assert.ok(seenIn <= 1_000, `B saw the added servers after ${seenIn} ms (more than 1 s)`)
    await until(
      "B to connect extra itself and list its tools",
      async () => {
        const s = await B.status()
        return s.extra?.state === "connected" && (await B.listTools()).includes("extra_echo")
      },
      15_000,
      () => B.status(),
    )
    const doc = await registryOf(redis)
    assert.ok(entryOf(doc, "extra"), `the registry holds extra: ${JSON.stringify(doc)}`)
    assert.equal(entryOf(doc, "base"), undefined, "a server of the initial config is not written to the registry")

    // An agent's server goes to the same agent's view on B.
    await A.send("addServers", { agent: "ag1", config: { mine: local() } })
    await until(
      "B's agent ag1 to have mine",
      async () => "mine" in (await B.status("ag1")),
      5_000,
      () => B.status("ag1"),
    )
    assert.ok(!("mine" in (await B.status("ag2"))), "another agent's view does not get it")

    // Removed on A: gone on B within 1 s.
    assert.equal(await A.send("removeServer", { name: "extra" }), true)
    const removed = Date.now()
    await until(
      "B to drop extra",
      async () => !("extra" in (await B.status())),
      5_000,
      () => B.status(),
    )
    const goneIn = Date.now() - removed
    assert.ok(goneIn <= 1_000, `B dropped the removed server after ${goneIn} ms (more than 1 s)`)
    assert.ok(!(await B.listTools()).some((x) => x.startsWith("extra_")), "B lists no tool of extra")

    // A server of the initial config removed at run time: a tombstone removes it on B too.
    assert.equal(await A.send("removeServer", { name: "base" }), true)
    await until(
      "B to drop base (tombstone)",
      async () => !("base" in (await B.status())),
      5_000,
      () => B.status(),
    )

    await closeAll([A, B])

    // Two new instances: they apply the registry on start.
    const C = startInstance(t, { config: {}, options: member(t, redis.url) })
    const D = startInstance(t, { config: {}, options: member(t, redis.url) })
    for (const X of [C, D]) {
      await until(
        `new instance ${X.pid} to have kept and mine, not extra`,
        async () => {
          const s = await X.status()
          const agent = await X.status("ag1")
          return "kept" in s && "mine" in agent && !("extra" in s)
        },
        10_000,
        async () => ({ store: await X.status(), ag1: await X.status("ag1") }),
      )
    }
    await until(
      "C to connect kept",
      async () => (await C.status()).kept?.state === "connected",
      15_000,
      () => C.status(),
    )
    const echo = await C.send("callTool", { name: "kept_echo", args: { text: "hi" } })
    assert.equal(echo.isError, false, JSON.stringify(echo))
    assert.ok(!("extra" in (await C.status())), "the removed server did not come back")
    await closeAll([C, D])
  })
})

// ---------------------------------------------------------------- b. namespaces

describe("fleet namespaces", () => {
  test("two namespaces on one Redis never see each other's registry", T, async (t) => {
    const redis = await startRedis(t)
    const ns = (namespace: string) => member(t, { url: redis.url, namespace })
    const A1 = startInstance(t, { config: {}, options: ns("one") })
    const B1 = startInstance(t, { config: {}, options: ns("one") })
    const A2 = startInstance(t, { config: {}, options: ns("two") })
    const B2 = startInstance(t, { config: {}, options: ns("two") })
    await Promise.all([A1, B1, A2, B2].map(connected))
    assert.equal((await A1.send("sharedState")).namespace, "one")
    assert.equal((await A2.send("sharedState")).namespace, "two")

    await Promise.all([
      A1.send("addServers", { config: { alpha: local() } }),
      A2.send("addServers", { config: { beta: local() } }),
    ])
    await until(
      "B1 to get alpha and B2 beta",
      async () => "alpha" in (await B1.status()) && "beta" in (await B2.status()),
    )
    // Both news went out together: had one crossed over, it would be there by now (an
    // absence cannot be awaited).
    await sleep(300)
    assert.deepEqual(Object.keys(await B1.status()), ["alpha"])
    assert.deepEqual(Object.keys(await B2.status()), ["beta"])
    assert.deepEqual(Object.keys(await A1.status()), ["alpha"])

    const one = await registryOf(redis, "toolnexus:one:registry")
    const two = await registryOf(redis, "toolnexus:two:registry")
    assert.ok(entryOf(one, "alpha") && !entryOf(one, "beta"), `namespace one: ${JSON.stringify(one)}`)
    assert.ok(entryOf(two, "beta") && !entryOf(two, "alpha"), `namespace two: ${JSON.stringify(two)}`)
    const keys = await redis.keys()
    const stray = keys.filter((k) => !k.startsWith("toolnexus:one:") && !k.startsWith("toolnexus:two:"))
    assert.deepEqual(stray, [], "every key lives under its namespace")
    assert.equal(await redis.command("EXISTS", REGISTRY), 0, "nothing in the default namespace")

    // A newcomer of namespace one starts with alpha only.
    const C1 = startInstance(t, { config: {}, options: ns("one") })
    await until("C1 to apply namespace one's registry", async () => "alpha" in (await C1.status()))
    assert.deepEqual(Object.keys(await C1.status()), ["alpha"])
    const ids = async (i: Instance) => ((await i.send("instances")) as FleetInstance[]).map((x) => x.pid).sort()
    await until("namespace one to list its three instances", async () => (await ids(C1)).length === 3)
    assert.deepEqual(await ids(C1), [A1.pid, B1.pid, C1.pid].sort())
    assert.deepEqual(await ids(A2), [A2.pid, B2.pid].sort())
    await closeAll([A1, B1, A2, B2, C1])
  })
})

// ---------------------------------------------------------------- c. shared catalog

describe("fleet catalog", () => {
  test("a fresh lazy instance lists the 200 tools A listed, before any server of its own starts", T, async (t) => {
    const redis = await startRedis(t)
    const tools = Array.from({ length: 200 }, (_, i) => ({ name: `tool_${i}`, description: `Tool number ${i}` }))
    const config = { many: local(toolsFlag(tools)) }
    const A = startInstance(t, { config, options: member(t, redis.url) })
    await until(
      "A to list the 200 tools",
      async () => (await A.listTools()).length === 200,
      20_000,
      async () => (await A.listTools()).length,
    )
    await until(
      "A's catalog document in Redis",
      async () => (await redis.keys("toolnexus:default:catalog:*")).length === 1,
    )
    const [key] = await redis.keys("toolnexus:default:catalog:*")
    assert.equal(JSON.parse((await redis.command("GET", key!)) as string).tools.length, 200)

    const B = startInstance(t, { config, options: member(t, redis.url, { lazy: true }) })
    const listed = await until(
      "B to list the 200 tools from the shared catalog",
      async () => {
        const names = await B.listTools()
        return names.length === 200 && names
      },
      10_000,
      async () => ({ tools: (await B.listTools()).length, state: await B.send("sharedState") }),
    )
    assert.ok(listed.includes("many_tool_0") && listed.includes("many_tool_199"), listed.slice(0, 3).join(", "))
    const status = await B.status()
    assert.equal(status.many?.state, "lazy", JSON.stringify(status))
    assert.deepEqual(childrenOf(B.pid), [], "B started no server process")
    // onChange is called on the JS thread after the listing changed: it may come just after.
    await until("B's onChange to fire for the shared catalog", () => B.changes.length > 0, 2_000)

    // A call starts it for real.
    const result = await B.send("callTool", { name: "many_tool_7", args: {} })
    assert.equal(result.isError, false, JSON.stringify(result))
    assert.equal(childrenOf(B.pid).length, 1, "the call started B's server")
    await closeAll([A, B])
  })

  test("a fresh instance lists 5,000 tools from the shared catalog before any server starts", T, async (t) => {
    const redis = await startRedis(t)
    const config = { big: { command: [NODE, fixture("many-tools.mjs"), "--count=5000"] } }
    const A = startInstance(t, { config, options: member(t, redis.url) })
    await until(
      "A to list 5,000 tools",
      async () => (await A.listTools()).length === 5_000,
      30_000,
      async () => (await A.listTools()).length,
    )
    await until("the catalog document", async () => (await redis.keys("toolnexus:default:catalog:*")).length === 1)
    const B = startInstance(t, { config, options: member(t, redis.url, { lazy: true }) })
    await until(
      "B to list 5,000 tools",
      async () => (await B.listTools()).length === 5_000,
      10_000,
      async () => (await B.listTools()).length,
    )
    assert.equal((await B.status()).big?.state, "lazy")
    assert.deepEqual(childrenOf(B.pid), [], "B started no server process")
    await closeAll([A, B])
  })
})

// ---------------------------------------------------------------- d. news

describe("fleet news", () => {
  test("a list change A sees fires onChange on B and B lists the new tool", T, async (t) => {
    const redis = await startRedis(t)
    const remote = await growingServer(t)
    const config = { shared: { url: remote.url } }
    const A = startInstance(t, { config, options: member(t, redis.url) })
    const B = startInstance(t, { config, options: member(t, redis.url) })
    await Promise.all([A, B].map(connected))
    for (const X of [A, B]) {
      await until(
        `${X.pid} to list shared_grow`,
        async () => (await X.listTools()).includes("shared_grow"),
        10_000,
        () => X.status(),
      )
    }
    const changesBefore = B.changes.length
    const result = await A.send("callTool", { name: "shared_grow", args: { name: "fresh" } })
    assert.equal(result.isError, false, JSON.stringify(result))
    await until(
      "A to list shared_fresh",
      async () => (await A.listTools()).includes("shared_fresh"),
      5_000,
      () => A.listTools(),
    )
    await until(
      "B to list shared_fresh",
      async () => (await B.listTools()).includes("shared_fresh"),
      5_000,
      () => B.listTools(),
    )
    // The listener is called through the native store's queue, apart from the reads, so a
    // read may show the new tool just before it is told.
    await until("B's onChange to fire", () => B.changes.length > changesBefore, 5_000)
    const [key] = await redis.keys("toolnexus:default:catalog:*")
    assert.ok(key, "a catalog document")
    assert.match((await redis.command("GET", key)) as string, /"fresh"/, "the catalog document has the new tool")
    await closeAll([A, B])
  })
})

// ---------------------------------------------------------------- e. Redis down at start

describe("fleet faults: Redis unreachable at start", () => {
  test("the store works from its config, says why, and writes what it kept once Redis is there", T, async (t) => {
    // A server that is stopped at once: its port is free until it is restarted on it.
    const redis = await startRedis(t)
    const firstPid = redis.pid
    await redis.command("SHUTDOWN", "NOSAVE").catch(() => {})
    await until("the first redis-server to exit", () => !isAlive(firstPid), 5_000)

    const store = openStore(t, { loc: local() }, member(t, redis.url))
    await until(
      "loc to connect",
      () => store.status().loc?.state === "connected",
      15_000,
      () => store.status(),
    )
    const echo = await store.callTool("loc_echo", { text: "down" })
    assert.equal(echo.isError, false, JSON.stringify(echo))
    const down = await until(
      "sharedState unavailable with a reason",
      () => {
        const s = store.sharedState()
        return s.status === "unavailable" && !/not reached yet/.test(s.reason ?? "") && s
      },
      10_000,
      () => store.sharedState(),
    )
    assert.ok(down.reason && down.reason.includes(String(redis.port)), `the reason names the server: ${down.reason}`)

    store.addServers({ late: local() })
    await until(
      "late to connect",
      () => store.status().late?.state === "connected",
      15_000,
      () => store.status(),
    )

    await redis.restart()
    await until(
      "sharedState connected",
      () => store.sharedState().status === "connected",
      8_000,
      () => store.sharedState(),
    )
    await until(
      "the registry to hold late, written when Redis came back",
      async () => entryOf(await registryOf(redis), "late"),
      5_000,
      () => redis.dump(),
    )
    assert.ok((await redis.dump()).get(REGISTRY)?.includes("late"))
    assert.equal(entryOf(await registryOf(redis), "loc"), undefined, "the initial config is not written")
    await until("this instance in the instances list", async () => (await store.instances()).length === 1)
  })
})

describe("fleet faults: Redis lost in the middle of work", () => {
  test("calls go on without waiting for it; what was written meanwhile lands when it returns", T, async (t) => {
    const redis = await startRedis(t)
    const store = openStore(t, { loc: local() }, member(t, redis.url))
    await until("connected to redis", () => store.sharedState().status === "connected")
    await until(
      "loc to connect",
      () => store.status().loc?.state === "connected",
      15_000,
      () => store.status(),
    )
    const firstPid = redis.pid
    await redis.command("SHUTDOWN", "NOSAVE").catch(() => {})
    await until("redis-server to exit", () => !isAlive(firstPid), 5_000)
    for (let i = 0; i < 20; i++) {
      const started = Date.now()
      const echo = await store.callTool("loc_echo", { text: `call ${i}` })
      assert.equal(echo.isError, false, JSON.stringify(echo))
      // A call waiting on the state would take its bound (2 s) at least.
      assert.ok(Date.now() - started < 1_000, `call ${i} took ${Date.now() - started} ms`)
    }
    store.addServers({ during: local() })
    await until(
      "during to connect",
      () => store.status().during?.state === "connected",
      15_000,
      () => store.status(),
    )
    await until(
      "sharedState unavailable",
      () => store.sharedState().status === "unavailable",
      10_000,
      () => store.sharedState(),
    )
    await redis.restart()
    await until(
      "the registry to hold during",
      async () => entryOf(await registryOf(redis), "during"),
      10_000,
      () => redis.keys(),
    )
    await until("sharedState connected", () => store.sharedState().status === "connected")
  })
})

// ---------------------------------------------------------------- f. Redis restarted empty

describe("fleet faults: Redis restarted empty", () => {
  test("the instances write back the registry, their catalog documents and themselves", T, async (t) => {
    const redis = await startRedis(t)
    const A = startInstance(t, { config: {}, options: member(t, redis.url) })
    const B = startInstance(t, { config: {}, options: member(t, redis.url) })
    await Promise.all([A, B].map(connected))
    await A.send("addServers", { config: { extra: local() } })
    await until(
      "B to connect extra",
      async () => (await B.status()).extra?.state === "connected",
      15_000,
      () => B.status(),
    )
    await until("a catalog document", async () => (await redis.keys("toolnexus:default:catalog:*")).length === 1)
    await until("two instances listed", async () => (await A.send("instances")).length === 2)

    await redis.restart()
    const after = Date.now()
    await until(
      "the registry document back with extra",
      async () => entryOf(await registryOf(redis), "extra"),
      10_000,
      () => redis.keys(),
    )
    await until(
      "the catalog document back",
      async () => (await redis.keys("toolnexus:default:catalog:*")).length === 1,
      10_000,
      () => redis.keys(),
    )
    await until(
      "both instances listed again",
      async () => (await A.send("instances")).length === 2,
      10_000,
      () => A.send("instances"),
    )
    t.diagnostic(`registry, catalog and instances back ${Date.now() - after} ms after the restart`)
    for (const X of [A, B]) assert.equal((await X.send("sharedState")).status, "connected")
    // The fleet still works: a new server reaches the other instance.
    await B.send("addServers", { config: { later: local() } })
    await until(
      "A to get later",
      async () => "later" in (await A.status()),
      5_000,
      () => A.status(),
    )
    await closeAll([A, B])
  })
})

// ---------------------------------------------------------------- g. corrupt values

describe("fleet faults: corrupt and foreign values", () => {
  test("a garbage, foreign or non-string registry and a garbage catalog are ignored and replaced", T, async (t) => {
    const redis = await startRedis(t)
    const store = openStore(t, null, member(t, redis.url))
    await until("connected", () => store.sharedState().status === "connected")
    store.addServers({ one: local() })
    await until("one in the registry", async () => entryOf(await registryOf(redis), "one"))
    await until(
      "one connected",
      () => store.status().one?.state === "connected",
      15_000,
      () => store.status(),
    )
    const news = JSON.stringify({ from: "someone-else", registry: true })
    const ran = await monitor(t, redis)

    const corruptions: Array<[string, string[][]]> = [
      ["garbage", [["SET", REGISTRY, "garbage \u0000\u00ff{"]]],
      ["another format", [["SET", REGISTRY, JSON.stringify({ format: "other/9", views: [1, 2, { x: null }] })]]],
      [
        "its own format, wrong shapes",
        [
          [
            "SET",
            REGISTRY,
            JSON.stringify({ format: "toolnexus-registry/1", views: { "": { one: 5, x: { entry: "no" } }, a: [] } }),
          ],
        ],
      ],
      [
        "a hash",
        [
          ["DEL", REGISTRY],
          ["HSET", REGISTRY, "views", "x"],
        ],
      ],
    ]
    let n = 0
    for (const [what, commands] of corruptions) {
      for (const command of commands) await redis.command(...command)
      // Other instances' news makes this one read the registry again.
      const from = ran.length
      await redis.command("PUBLISH", "toolnexus:default:news", news)
      await until(
        `${what}: the store reading the registry after the news`,
        () => {
          const told = ran.findIndex((c, i) => i >= from && c.startsWith('"PUBLISH"') && c.includes("someone-else"))
          return told >= 0 && ran.includes(`"MGET" "${REGISTRY}"`, told)
        },
        10_000,
        () => ran.slice(from),
      )

      assert.ok("one" in store.status(), `${what}: the store still has one: ${JSON.stringify(store.status())}`)
      const echo = await store.callTool("one_echo", { text: what })
      assert.equal(echo.isError, false, `${what}: ${JSON.stringify(echo)}`)
      const name = `added_${n++}`
      store.addServers({ [name]: local() })
      await until(
        `${what}: the registry replaced by a document holding ${name}`,
        async () => {
          const type = await redis.command("TYPE", REGISTRY)
          return type === "string" && entryOf(await registryOf(redis), name)
        },
        5_000,
        async () => [await redis.command("TYPE", REGISTRY), await redis.dump()],
      )
      const doc = await registryOf(redis)
      assert.equal(doc.format, "toolnexus-registry/1")
      assert.ok(entryOf(doc, "one"), `${what}: the rewritten registry keeps one: ${JSON.stringify(doc)}`)
    }
    assert.equal(store.sharedState().status, "connected")

    // A garbage catalog document (in a namespace of its own, so that no registry entry
    // mixes in): a fresh lazy instance shows nothing from it, works, and replaces it.
    const cat = { url: redis.url, namespace: "cat" }
    const writer = openStore(t, { one: local() }, member(t, cat))
    await until("the writer's catalog document", async () => (await redis.keys("toolnexus:cat:catalog:*")).length === 1)
    await writer.close()
    const [catalogKey] = await redis.keys("toolnexus:cat:catalog:*")
    await redis.command("SET", catalogKey!, "{not json")
    const fresh = openStore(t, { one: local() }, member(t, cat, { lazy: true }))
    // It says it is alive only after it has read the shared catalog (see fleet.rs `rejoin`).
    await until("fresh in the instances list", async () => (await fresh.instances()).length === 1)
    assert.deepEqual(fresh.listTools(), [], "nothing listed from a garbage catalog")
    assert.equal(fresh.status().one?.state, "lazy")
    // With no listing to show, listToolsAsync starts the lazy server.
    const listed = (await fresh.listToolsAsync()).map((x) => x.name)
    assert.ok(listed.includes("one_echo"), `${listed.join(", ")}; ${JSON.stringify(fresh.status())}`)
    const echo = await fresh.callTool("one_echo", { text: "x" })
    assert.equal(echo.isError, false, JSON.stringify(echo))
    await until(
      "the garbage catalog document replaced",
      async () => {
        const raw = (await redis.command("GET", catalogKey!)) as string | null
        try {
          return raw !== null && JSON.parse(raw).tools.length > 0
        } catch {
          return false
        }
      },
      5_000,
      () => redis.command("GET", catalogKey!),
    )
  })
})

// ---------------------------------------------------------------- h. secrets

describe("fleet secrets", () => {
  test("entries are shared unexpanded; each host expands its own variables; no secret in Redis", T, async (t) => {
    const redis = await startRedis(t)
    const web = await startHttpServer()
    t.after(() => web.close())
    const secretA = `fleet-secret-A-${Math.random().toString(36).slice(2)}`
    const secretB = `fleet-secret-B-${Math.random().toString(36).slice(2)}`
    const A = startInstance(t, { config: {}, options: member(t, redis.url) }, { FLEET_SECRET: secretA })
    const B = startInstance(t, { config: {}, options: member(t, redis.url) }, { FLEET_SECRET: secretB })
    await Promise.all([A, B].map(connected))
    await A.send("addServers", {
      config: {
        sec: { ...local(), env: { TOKEN: "${FLEET_SECRET}" } },
        web: { url: web.url, headers: { Authorization: "Bearer ${FLEET_SECRET}" } },
      },
    })
    for (const X of [A, B]) {
      await until(
        `${X.pid} to connect sec and web`,
        async () => {
          const s = await X.status()
          return s.sec?.state === "connected" && s.web?.state === "connected"
        },
        15_000,
        () => X.status(),
      )
    }
    const envOf = async (X: Instance) => {
      const result = await X.send("callTool", { name: "sec_env", args: { names: ["TOKEN"] } })
      assert.equal(result.isError, false, JSON.stringify(result))
      return JSON.parse(result.output).TOKEN
    }
    assert.equal(await envOf(A), secretA, "A expanded its own variable")
    assert.equal(await envOf(B), secretB, "B expanded its own variable")
    const auth = web.requests.map((h) => h.authorization)
    assert.ok(auth.includes(`Bearer ${secretA}`) && auth.includes(`Bearer ${secretB}`), "each host sent its own header")

    const doc = await registryOf(redis)
    assert.equal(entryOf(doc, "sec")?.entry?.env?.TOKEN, "${FLEET_SECRET}", JSON.stringify(doc))
    assert.equal(entryOf(doc, "web")?.entry?.headers?.Authorization, "Bearer ${FLEET_SECRET}", JSON.stringify(doc))
    await until("the catalog documents", async () => (await redis.keys("toolnexus:default:catalog:*")).length >= 2)
    const dump = await redis.dump()
    for (const [key, value] of dump) {
      for (const secret of [secretA, secretB]) {
        assert.ok(!key.includes(secret) && !value.includes(secret), `${key} holds a secret: ${value}`)
      }
    }
    await closeAll([A, B])
  })
})

// ---------------------------------------------------------------- i. instances

describe("fleet instances", () => {
  test("instances list each other with their servers; a closed or killed one leaves the list", T, async (t) => {
    const redis = await startRedis(t)
    const config = { loc: local() }
    const [A, B, C] = [0, 1, 2].map(() => startInstance(t, { config, options: member(t, redis.url) }))
    await Promise.all([A!, B!, C!].map(connected))
    const list = async (X: Instance) => (await X.send("instances")) as FleetInstance[]
    const all = await until(
      "A to list three instances with loc connected",
      async () => {
        const found = await list(A!)
        return found.length === 3 && found.every((x) => x.servers.loc === "connected") && found
      },
      15_000,
      () => list(A!),
    )
    assert.deepEqual(all.map((x) => x.pid).sort(), [A!, B!, C!].map((x) => x.pid).sort())
    assert.equal(new Set(all.map((x) => x.id)).size, 3, "distinct ids")
    for (const x of all) {
      assert.equal(x.host, os.hostname())
      const age = Date.now() - Date.parse(x.seenAt)
      assert.ok(age >= -1_000 && age < 5_000, `seenAt ${x.seenAt} is recent`)
    }
    assert.deepEqual((await list(B!)).map((x) => x.id).sort(), all.map((x) => x.id).sort(), "B sees the same")

    // Closed: gone at once (its key is deleted). Killed: gone once its key expires.
    await B!.close()
    const closedAt = Date.now()
    await until(
      "B to leave the list",
      async () => !(await list(A!)).some((x) => x.pid === B!.pid),
      7_000,
      () => list(A!),
    )
    t.diagnostic(`a closed instance left the list after ${Date.now() - closedAt} ms`)
    const cChildren = descendantsOf(C!.pid)
    await C!.kill()
    const killedAt = Date.now()
    await until(
      "the killed C to leave the list",
      async () => !(await list(A!)).some((x) => x.pid === C!.pid),
      9_000,
      () => list(A!),
    )
    t.diagnostic(`a killed instance left the list after ${Date.now() - killedAt} ms`)
    assert.deepEqual(
      (await list(A!)).map((x) => x.pid),
      [A!.pid],
    )
    for (const pid of cChildren) if (isAlive(pid)) process.kill(pid, "SIGKILL") // the killed store could not reap them
    await closeAll([A!])
  })
})

// ---------------------------------------------------------------- j. sign-ins

describe("fleet sign-ins", () => {
  const key = "0123456789abcdef".repeat(4)

  test("A signs in; B, with no way to prompt, uses the shared sign-in; Redis holds no token in clear", T, async (t) => {
    const redis = await startRedis(t)
    const server = await startOAuthServer()
    t.after(() => server.close())
    const state = { url: redis.url, key }
    const config = { docs: { url: server.url } }
    const A = startInstance(t, { config, options: member(t, state), authorize: true }, { XDG_CACHE_HOME: tempDir(t) })
    await connected(A)
    await until(
      "A to connect docs",
      async () => (await A.status()).docs?.state === "connected",
      20_000,
      () => A.status(),
    )
    const first = await A.send("callTool", { name: "docs_whoami" })
    assert.equal(first.isError, false, JSON.stringify(first))
    assert.equal(await A.send("prompts"), 1)
    assert.equal((await A.send("sharedState")).signIns, true)

    const B = startInstance(t, { config, options: member(t, state) }, { XDG_CACHE_HOME: tempDir(t) })
    await until(
      "B to connect docs",
      async () => (await B.status()).docs?.state === "connected",
      20_000,
      () => B.status(),
    )
    const second = await B.send("callTool", { name: "docs_whoami" })
    assert.equal(second.isError, false, JSON.stringify(second))
    assert.equal(server.log.authorize.length, 1, "one sign-in for the fleet")

    const dump = await redis.dump()
    const oauthKeys = [...dump.keys()].filter((k) => k.startsWith("toolnexus:default:oauth:"))
    assert.equal(oauthKeys.length, 1, `one sealed sign-in: ${[...dump.keys()].join(", ")}`)
    for (const [k, value] of dump) {
      for (const secret of server.secrets) {
        assert.ok(!value.includes(secret) && !k.includes(secret), `${k} holds a token in clear`)
      }
    }
    assert.ok(!B.stderr().includes("sign-ins are not shared"), B.stderr())
    await closeAll([A, B])
  })

  test("a refresh lease left by a killed instance holds the others up only until it runs out", T, async (t) => {
    const redis = await startRedis(t)
    const server = await startOAuthServer({ expiresIn: 3, revokeFamilyOnReuse: true })
    t.after(() => server.close())
    const state = { url: redis.url, key }
    const config = { docs: { url: server.url } }
    const A = startInstance(t, { config, options: member(t, state), authorize: true }, { XDG_CACHE_HOME: tempDir(t) })
    await until("A to connect docs", async () => (await A.status()).docs?.state === "connected", 20_000)
    const B = startInstance(t, { config, options: member(t, state) }, { XDG_CACHE_HOME: tempDir(t) })
    await until("B to connect docs", async () => (await B.status()).docs?.state === "connected", 20_000)
    // A dies holding the lease of the next refresh: its key stays until it expires.
    await A.kill()
    const lease = `toolnexus:default:lease:${createHash("sha256").update(server.url).digest("hex")}`
    await redis.command("SET", lease, "a-killed-holder", "PX", "5000")
    const refreshes = () => server.summary().grants.refresh_token ?? 0
    const before = refreshes()
    const results = []
    const started = Date.now()
    while (Date.now() - started < 10_000) {
      results.push(await B.send("callTool", { name: "docs_whoami" }))
      // While the dead holder's lease stands, nobody refreshes.
      if ((await redis.command("GET", lease)) === "a-killed-holder") assert.equal(refreshes(), before)
    }
    assert.deepEqual(
      results.filter((r) => r.isError),
      [],
      "every call of B succeeds",
    )
    assert.ok(refreshes() > before, "B refreshed once the lease ran out")
    assert.equal(server.summary().reuses, 0, "no refresh token sent twice")
    await closeAll([B])
  })

  test(
    "three instances refreshing rotating tokens for 30 s: every call succeeds, no refresh token reused",
    T,
    async (t) => {
      const redis = await startRedis(t)
      const server = await startOAuthServer({ expiresIn: 3, revokeFamilyOnReuse: true })
      t.after(() => server.close())
      const state = { url: redis.url, key }
      const config = { docs: { url: server.url } }
      const A = startInstance(t, { config, options: member(t, state), authorize: true }, { XDG_CACHE_HOME: tempDir(t) })
      await until(
        "A to connect docs",
        async () => (await A.status()).docs?.state === "connected",
        20_000,
        () => A.status(),
      )
      const others = [0, 1].map(() =>
        startInstance(t, { config, options: member(t, state) }, { XDG_CACHE_HOME: tempDir(t) }),
      )
      const fleet = [A, ...others]
      for (const X of others) {
        await until(
          `${X.pid} to connect docs`,
          async () => (await X.status()).docs?.state === "connected",
          20_000,
          () => X.status(),
        )
      }
      const failures: string[] = []
      let calls = 0
      const end = Date.now() + 30_000
      await Promise.all(
        fleet.map(async (X) => {
          while (Date.now() < end) {
            const result = await X.send("callTool", { name: "docs_whoami" })
            calls++
            if (result.isError) failures.push(`${X.pid}: ${JSON.stringify(result)}`)
            await sleep(150) // the load's pace: a call every 150 ms from each instance
          }
        }),
      )
      const summary = server.summary()
      t.diagnostic(
        `${calls} calls; ${JSON.stringify({ ...summary, refreshUses: Object.keys(summary.refreshUses).length })}`,
      )
      // One line per distinct failure, with how often and where (a revoked family fails every call after).
      const distinct = new Map<string, number>()
      for (const f of failures) distinct.set(f, (distinct.get(f) ?? 0) + 1)
      const pids = `A=${A.pid} others=${others.map((x) => x.pid).join(",")}`
      assert.equal(
        failures.length,
        0,
        `${failures.length} of ${calls} calls failed (${pids}; server ${JSON.stringify(summary)}):\n` +
          [...distinct].map(([f, n]) => `${n}x ${f}`).join("\n"),
      )
      assert.equal(summary.authorize, 1, "one sign-in")
      assert.ok((summary.grants.refresh_token ?? 0) >= 5, `tokens were refreshed: ${JSON.stringify(summary.grants)}`)
      assert.equal(summary.reuses, 0)
      const reused = Object.entries(summary.refreshUses).filter(([, n]) => n !== 1)
      assert.deepEqual(reused, [], "every refresh token used once")
      await closeAll(fleet)
    },
  )
})
