// Several gateways on one fleet state: `serveMcp` replicas, each over a store of its own,
// sharing a registry through a real redis-server (redis.ts), and `toolnexus serve --state`
// processes. A 2026-07-28 request is stateless, so any replica answers it alike; a
// 2025-11-25 session lives on the replica that opened it, another answers 404 for its id
// and the client opens a new session there; a server added on one replica is served by
// all. Raw requests where the wire is the point; the official clients otherwise (SDK v1
// @modelcontextprotocol/sdk for 2025-11-25, SDK v2 @modelcontextprotocol/client for
// 2026-07-28).
import assert from "node:assert/strict"
import { describe, test, type TestContext } from "node:test"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { createMcpStore, type McpGateway, type McpStore } from "toolnexus"
import { assertGone, local, poll, tempDir, toolsFlag } from "./helpers.js"
import { startRedis, type Redis } from "./redis.js"
import { cleanup, serveView, sorted, T, texts, v1Http, v2Http, type Later } from "./serve-helpers.js"
import { del, MODERN, modern, modernTools, openSession, post, show, type Session } from "./serve-helpers.js"
import { assertExits0, configFile, descendantsOf, serveCli } from "./serve-helpers.js"

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

interface Replica {
  store: McpStore
  gateway: McpGateway
  url: string
}

interface Fleet {
  redis: Redis
  later: Later
  a: Replica
  b: Replica
}

/** A Redis stopped last, after everything else the test opened. */
async function redisFor(later: Later): Promise<Redis> {
  const redis = await startRedis()
  later(() => redis.stop())
  return redis
}

/** One replica: a store of `BASE` on the fleet's state (a catalog folder of its own), ready, served over HTTP. */
async function replica(t: TestContext, redis: Redis, later: Later): Promise<Replica> {
  const store = createMcpStore(BASE, { state: redis.url, catalogDir: tempDir(t) })
  later(() => store.close())
  const joined = await poll(() => store.sharedState().status === "connected", 10_000)
  assert.ok(joined, `the store never connected to the state: ${JSON.stringify(store.sharedState())}`)
  await store.waitReady()
  assert.equal(store.status().base?.state, "connected", JSON.stringify(store.status()))
  const gateway = await serveView(later, store)
  return { store, gateway, url: gateway.url! }
}

/** Two replicas, A and B, on one Redis. */
async function fleet(t: TestContext): Promise<Fleet> {
  const later = cleanup(t)
  const redis = await redisFor(later)
  const a = await replica(t, redis, later)
  const b = await replica(t, redis, later)
  assert.notEqual(a.url, b.url)
  return { redis, later, a, b }
}

/** tools/list in the 2025 session whose request headers are `headers`, at `url`. */
const sessionList = (url: string, headers: Session["headers"], id = 2) =>
  post(url, { jsonrpc: "2.0", id, method: "tools/list" }, headers)

// ---------------------------------------------------------------- 2025 sessions

describe("serveMcp replicas: a 2025-11-25 session lives on the replica that opened it", T, () => {
  test("A's session works on A; B answers 404 for its id; a client opens a new session on B", async (t) => {
    const { a, b, later } = await fleet(t)

    const session = await openSession(a.url)
    const onA = await sessionList(a.url, session.headers)
    assert.equal(onA.status, 200, show(onA))
    assert.deepEqual(sorted(onA.rpc?.result?.tools ?? []), BASE_NAMES, show(onA))

    // The same id on B: B never saw it.
    const onB = await sessionList(b.url, session.headers, 3)
    assert.equal(onB.status, 404, `B answered A's session id with ${show(onB)}`)
    const call = await post(
      b.url,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "base_ping", arguments: {} } },
      session.headers,
    )
    assert.equal(call.status, 404, `a call in A's session on B: ${show(call)}`)
    // A DELETE of it on B cannot end it: rmcp closes an unknown session idempotently (202).
    const ended = await del(b.url, session.headers)
    t.diagnostic(`DELETE of A's session id on B: HTTP ${ended.status}`)
    assert.ok(ended.status < 500, `DELETE of A's session on B: ${show(ended)}`)

    // None of that touched the session on A.
    const stillOnA = await sessionList(a.url, session.headers, 5)
    assert.equal(stillOnA.status, 200, `A's session after B's 404s: ${show(stillOnA)}`)
    assert.deepEqual(sorted(stillOnA.rpc?.result?.tools ?? []), BASE_NAMES)

    // The SDK v1 client holding A's id and sent to B gets the 404 ...
    const { client: stale } = await v1Http(later, b.url, { sessionId: session.id })
    const refused = await stale.listTools().then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    )
    assert.ok("error" in refused, `B listed tools in A's session: ${JSON.stringify(refused)}`)
    assert.ok(refused.error instanceof StreamableHTTPError, `not an HTTP error: ${String(refused.error)}`)
    assert.equal(refused.error.code, 404, String(refused.error))

    // ... so it opens a new session there, which works.
    const { client, transport } = await v1Http(later, b.url)
    assert.ok(transport.sessionId, "B gave the new client no session")
    assert.notEqual(transport.sessionId, session.id, "B's session has A's id")
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    assert.deepEqual(sorted((await client.listTools()).tools), BASE_NAMES)
    const pinged = await client.callTool({ name: "base_lookup", arguments: { word: "replica" } })
    assert.deepEqual(texts(pinged), [JSON.stringify({ word: "replica" })])

    // And the other way round: B's session is unknown on A.
    const bOnA = await sessionList(a.url, { ...session.headers, "mcp-session-id": transport.sessionId }, 6)
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
    const client = await v2Http(later, a.url, { transport: { fetch: balanced } })
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
    const { client } = await v1Http(later, b.url)
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

describe("`toolnexus serve --state`: two processes on one state", T, () => {
  test("both serve the same tools and the fleet's added server; SIGTERM ends each with 0 and its servers", async (t) => {
    const later = cleanup(t)
    const redis = await redisFor(later)
    const config = configFile(tempDir(t), BASE)
    const clis = await Promise.all([
      serveCli(t, [config, "--http", "127.0.0.1:0", "--state", redis.url]),
      serveCli(t, [config, "--http", "127.0.0.1:0", "--state", redis.url]),
    ])

    const clients = await Promise.all(clis.map((cli) => v1Http(later, cli.url)))
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
    for (const [i, cli] of clis.entries()) await assertExits0(cli, `CLI ${i}`, "SIGTERM")
    await assertGone([...clis.map((cli) => cli.child.pid!), ...below.flat()], 5_000, "the CLIs and their servers")
  })
})
