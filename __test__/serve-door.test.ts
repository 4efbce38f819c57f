// serveMcp over streamable HTTP, from the outside: which path serves which view, the front
// door (Origin and bearer tokens), option checks, meta mode through the official SDK v1
// client, hostile downstream input (the gateway keeps serving a well-behaved client all
// along) and close().
import assert from "node:assert/strict"
import { once } from "node:events"
import fs from "node:fs"
import net from "node:net"
import { after, before, describe, test, type TestContext } from "node:test"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { createMcpStore, serveMcp } from "toolnexus"
import type { McpGateway, McpStore, McpStoreView, ServeMcpOptions } from "toolnexus"
import { local, sleep, toolsFlag } from "./helpers.js"
import { at, cleanup, connectV1, runLifo, serveView, v1Http, type Job, type Later } from "./serve-helpers.js"
import { ACCEPT, del, initialize, openSession, post, sessionHeaders, show, type Raw } from "./serve-helpers.js"
import { invalidArgument, sorted, T, textOf, within } from "./serve-helpers.js"

/** The store's own server's tools (the fixture answers every custom tool with its arguments as JSON). */
const PLAIN_TOOLS = [
  {
    name: "echo",
    description: "Returns its arguments as JSON text",
    inputSchema: { type: "object", properties: { text: { type: "string" } } },
  },
  {
    name: "weather_forecast",
    description: "Forecast the weather for a city",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
]

// ---------------------------------------------------------------- set-up

/**
 * A store with one server of its own (`plain`: echo, weather_forecast), agent a's server
 * (`mine`: alpha_only) and agent b's (`theirs`: beta_only), every one listed.
 */
async function makeStore(defer: Later): Promise<McpStore> {
  const store = createMcpStore({ mcpServers: { plain: local(toolsFlag(PLAIN_TOOLS)) } })
  defer(() => store.close())
  store.forAgent("a").addServers({
    mcpServers: { mine: local(toolsFlag([{ name: "alpha_only", description: "Only agent a has this tool" }])) },
  })
  store.forAgent("b").addServers({ mcpServers: { theirs: local(toolsFlag(["beta_only"])) } })
  await store.waitReady()
  await store.forAgent("a").waitReady()
  await store.forAgent("b").waitReady()
  assert.equal(store.tools().length, 4, `store tools: ${JSON.stringify(store.status())}`)
  assert.equal(store.forAgent("a").tools().length, 1, JSON.stringify(store.forAgent("a").status()))
  assert.equal(store.forAgent("b").tools().length, 1, JSON.stringify(store.forAgent("b").status()))
  return store
}

interface Kit {
  store: McpStore
  defer: Later
  serve(view: McpStoreView, opts?: ServeMcpOptions): Promise<McpGateway>
  connect(url: string, headers?: Record<string, string>): Promise<Client>
}

/** The store, a gateway of any view, SDK v1 clients: closed when the test ends, in the reverse order. */
async function kit(t: TestContext): Promise<Kit> {
  const defer = cleanup(t)
  const store = await makeStore(defer)
  return {
    store,
    defer,
    serve: (view, opts) => serveView(defer, view, opts),
    connect: async (url, headers) => (await v1Http(defer, url, { headers })).client,
  }
}

/** An SDK v1 client over streamable HTTP, not closed by itself. */
const sdkClient = async (url: string, headers?: Record<string, string>) => (await connectV1(url, { headers })).client

const portOf = (gateway: McpGateway) => Number(new URL(gateway.url!).port)

// ---------------------------------------------------------------- raw HTTP

const is4xx = (raw: Raw) => raw.status >= 400 && raw.status < 500

/** Writes `data` on a fresh TCP connection; what came back and whether the server closed it within `ms`. */
async function tcpExchange(port: number, data: string, ms = 5_000): Promise<{ text: string; closed: boolean }> {
  const socket = net.connect(port, "127.0.0.1")
  socket.on("error", () => {})
  await once(socket, "connect")
  let text = ""
  socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
  const closed = new Promise<boolean>((resolve) => socket.on("close", () => resolve(true)))
  socket.write(data)
  const result = await settlesWithin(closed, ms)
  socket.destroy()
  return { text, closed: result }
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = promise.then(() => true)
  return (await within(settled, ms)) ?? false
}

// ---------------------------------------------------------------- views

describe("serveMcp: which path serves which view", T, () => {
  test("/mcp lists the store's tools; /agents/<id>/mcp only that agent's", async (t) => {
    const { store, serve, connect } = await kit(t)
    const gateway = await serve(store)
    assert.match(gateway.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)

    const main = await connect(gateway.url!)
    assert.deepEqual(sorted((await main.listTools()).tools), sorted(store.tools()))

    const a = await connect(at(gateway, "/agents/a/mcp"))
    const aTools = (await a.listTools()).tools
    assert.deepEqual(sorted(aTools), sorted(store.forAgent("a").tools()))
    assert.deepEqual(sorted(aTools), ["mine_alpha_only"])

    const b = await connect(at(gateway, "/agents/b/mcp"))
    assert.deepEqual(sorted((await b.listTools()).tools), sorted(store.forAgent("b").tools()))

    // An agent's tool called through its path runs as the agent's view names it.
    const called = await a.callTool({ name: "mine_alpha_only", arguments: { n: 1 } })
    assert.notEqual(called.isError, true, JSON.stringify(called))
    assert.deepEqual(called.content, [{ type: "text", text: '{"n":1}' }])
  })

  test("an agent the store does not have, and any other path, answer 404 without a session", async (t) => {
    const { store, serve } = await kit(t)
    const gateway = await serve(store)
    for (const path of [
      "/agents/nobody/mcp",
      "/other",
      "/",
      "/agents//mcp",
      "/agents/a/x/mcp",
      "/mcp/more",
      "/agents/a",
    ]) {
      const raw = await post(at(gateway, path), initialize())
      assert.equal(raw.status, 404, `${path}: ${show(raw)}`)
      assert.equal(raw.headers.get("mcp-session-id"), null, `${path}: ${show(raw)}`)
    }
    const get = await fetch(at(gateway, "/other"), { headers: { accept: ACCEPT }, signal: AbortSignal.timeout(10_000) })
    assert.equal(get.status, 404, await get.text())
    // The store is as it was.
    assert.equal(store.tools().length, 4)
  })

  test("serveMcp(store.forAgent('a')) serves a's view at /mcp and no agents' paths", async (t) => {
    const { store, serve, connect } = await kit(t)
    const gateway = await serve(store.forAgent("a"))
    const client = await connect(gateway.url!)
    assert.deepEqual(sorted((await client.listTools()).tools), ["mine_alpha_only"])
    for (const path of ["/agents/a/mcp", "/agents/b/mcp"]) {
      const raw = await post(at(gateway, path), initialize())
      assert.equal(raw.status, 404, `${path}: ${show(raw)}`)
    }
  })
})

// ---------------------------------------------------------------- Origin

describe("serveMcp: the Origin rule", T, () => {
  test("a page of another origin gets 403 and no session; loopback pages get in", async (t) => {
    const { store, serve } = await kit(t)
    const gateway = await serve(store)
    for (const origin of ["http://evil.example", "http://localhost.evil.example", "null", "https://127.0.0.1.nip.io"]) {
      for (const path of ["/mcp", "/agents/a/mcp"]) {
        const raw = await post(at(gateway, path), initialize(), { origin })
        assert.equal(raw.status, 403, `${origin} at ${path}: ${show(raw)}`)
        assert.equal(raw.headers.get("mcp-session-id"), null, `${origin} made a session: ${show(raw)}`)
        assert.equal(raw.rpc?.result, undefined, `${origin} was answered: ${show(raw)}`)
      }
    }
    for (const origin of ["http://localhost:3000", "http://127.0.0.1:8080", "https://localhost", "http://[::1]:5173"]) {
      const session = await openSession(gateway.url!, { origin })
      const listed = await session.send({ jsonrpc: "2.0", id: 2, method: "tools/list" })
      assert.equal(listed.status, 200, `${origin}: ${show(listed)}`)
      assert.deepEqual(sorted((listed.rpc?.result?.tools as Array<{ name: string }>) ?? []), sorted(store.tools()))
    }
    // The rule holds within a session made without an Origin, too.
    const session = await openSession(gateway.url!)
    const evil = await session.send({ jsonrpc: "2.0", id: 3, method: "tools/list" }, { origin: "http://evil.example" })
    assert.equal(evil.status, 403, show(evil))
  })

  test("an origin in allowedOrigins gets in; others still get 403", async (t) => {
    const { store, serve } = await kit(t)
    const gateway = await serve(store, { allowedOrigins: ["https://app.example"] })
    const session = await openSession(gateway.url!, { origin: "https://app.example" })
    const listed = await session.send({ jsonrpc: "2.0", id: 2, method: "tools/list" })
    assert.equal(listed.status, 200, show(listed))
    assert.equal((listed.rpc?.result?.tools as unknown[]).length, store.tools().length, show(listed))
    await openSession(gateway.url!, { origin: "http://localhost:3000" })
    for (const origin of ["https://other.example", "http://evil.example"]) {
      const raw = await post(gateway.url!, initialize(), { origin })
      assert.equal(raw.status, 403, `${origin}: ${show(raw)}`)
    }
  })
})

// ---------------------------------------------------------------- tokens

describe("serveMcp: bearer tokens", T, () => {
  const ENV = "TOOLNEXUS_DOOR_TEST_TOKEN"

  test("401 without a token or with a wrong one; each path opens with its own tokens only", async (t) => {
    const { store, serve, connect } = await kit(t)
    const fromEnv = `env-token-${process.pid}-${Date.now()}`
    process.env[ENV] = fromEnv
    t.after(() => delete process.env[ENV])
    const gateway = await serve(store, {
      auth: { tokens: { "/mcp": "main-secret", "/agents/a/mcp": ["a-secret", `\${${ENV}}`] } },
    })
    // Expanded when serveMcp was called: a later change of the variable changes nothing.
    process.env[ENV] = "changed-afterwards"
    const agentA = at(gateway, "/agents/a/mcp")

    const none = await post(gateway.url!, initialize())
    assert.equal(none.status, 401, show(none))
    assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="toolnexus"', show(none))
    assert.equal(none.headers.get("mcp-session-id"), null, show(none))

    const noneAtAgent = await post(agentA, initialize())
    assert.equal(noneAtAgent.status, 401, show(noneAtAgent))
    assert.equal(noneAtAgent.headers.get("www-authenticate"), 'Bearer realm="toolnexus"', show(noneAtAgent))

    const wrongs: Array<[string, string]> = [
      [gateway.url!, "nope"],
      [gateway.url!, "a-secret"], // agent a's token does not open /mcp
      [gateway.url!, fromEnv],
      [agentA, "main-secret"], // nor /mcp's the agent's path
      [agentA, `\${${ENV}}`], // the literal text is not the token
      [agentA, "changed-afterwards"],
      [at(gateway, "/agents/b/mcp"), "main-secret"], // a path with no tokens is closed to all
      [at(gateway, "/agents/b/mcp"), "a-secret"],
    ]
    for (const [url, token] of wrongs) {
      const raw = await post(url, initialize(), { authorization: `Bearer ${token}` })
      assert.equal(raw.status, 401, `${token} at ${url}: ${show(raw)}`)
      const challenge = raw.headers.get("www-authenticate") ?? ""
      assert.match(challenge, /^Bearer realm="toolnexus"/, show(raw))
      assert.match(challenge, /error="invalid_token"/, show(raw))
      assert.equal(raw.headers.get("mcp-session-id"), null, show(raw))
    }

    // The right tokens, through the SDK v1 client.
    const main = await connect(gateway.url!, { Authorization: "Bearer main-secret" })
    assert.deepEqual(sorted((await main.listTools()).tools), sorted(store.tools()))
    for (const token of ["a-secret", fromEnv]) {
      const a = await connect(agentA, { Authorization: `Bearer ${token}` })
      assert.deepEqual(sorted((await a.listTools()).tools), ["mine_alpha_only"], token)
    }
    // And refused through it without one, or with another path's.
    await assert.rejects(sdkClient(gateway.url!))
    await assert.rejects(sdkClient(gateway.url!, { Authorization: "Bearer a-secret" }))
  })

  test("every request of a session needs the token, not only initialize", async (t) => {
    const { store, serve } = await kit(t)
    const gateway = await serve(store, { auth: { tokens: { "/mcp": ["one", "two"] } } })
    const session = await openSession(gateway.url!, { authorization: "Bearer two" })
    const without = await post(
      gateway.url!,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      sessionHeaders(session.id),
    )
    assert.equal(without.status, 401, show(without))
    assert.equal(without.rpc?.result, undefined, show(without))
    const withIt = await session.send({ jsonrpc: "2.0", id: 3, method: "tools/list" })
    assert.equal(withIt.status, 200, show(withIt))
    assert.equal((withIt.rpc?.result?.tools as unknown[]).length, store.tools().length, show(withIt))
    // The other listed token opens the same path.
    await openSession(gateway.url!, { authorization: "Bearer one" })
  })
})

// ---------------------------------------------------------------- bad options

describe("serveMcp: bad options", T, () => {
  test("bad values are refused with TOOLNEXUS_INVALID_ARGUMENT", async (t) => {
    const { store, defer } = await kit(t)
    const UNSET = "TOOLNEXUS_DOOR_TEST_SURELY_UNSET"
    delete process.env[UNSET]
    const bad: Array<[string, unknown, unknown]> = [
      ["http: nonsense", store, { http: "nonsense" }],
      ["http: a number", store, { http: 8080 }],
      ["http: port out of range", store, { http: "127.0.0.1:99999" }],
      ["stdio: 'yes'", store, { stdio: "yes" }],
      ["meta: 'true'", store, { meta: "true" }],
      ["http and stdio", store, { http: "127.0.0.1:0", stdio: true }],
      ["allowedOrigins: a string", store, { allowedOrigins: "http://x.example" }],
      ["auth: null", store, { auth: null }],
      ["an empty token", store, { auth: { tokens: { "/mcp": "" } } }],
      ["an empty token in a list", store, { auth: { tokens: { "/mcp": ["fine", ""] } } }],
      ["a token of an unset variable", store, { auth: { tokens: { "/mcp": `\${${UNSET}}` } } }],
      ["a token not a string", store, { auth: { tokens: { "/mcp": 5 } } }],
      ["a token path /x", store, { auth: { tokens: { "/x": "t" } } }],
      ["a token path /agents/a", store, { auth: { tokens: { "/agents/a": "t" } } }],
      ["a token path /agents//mcp", store, { auth: { tokens: { "/agents//mcp": "t" } } }],
      ["tokens: an array", store, { auth: { tokens: ["t"] } }],
      ["options: a string", store, "127.0.0.1:0"],
      ["view: {}", {}, undefined],
      ["view: null", null, undefined],
    ]
    for (const [what, view, opts] of bad) {
      let made: McpGateway | undefined
      await assert.rejects(
        async () => {
          made = await serveMcp(view as McpStoreView, opts as ServeMcpOptions)
        },
        invalidArgument,
        what,
      )
      if (made) defer(() => made!.close())
    }
    // The store is untouched by all that.
    assert.equal(store.tools().length, 4)
  })

  test("a port already taken rejects with a coded error naming the address", async (t) => {
    const { store, serve } = await kit(t)
    const blocker = net.createServer()
    blocker.listen(0, "127.0.0.1")
    await once(blocker, "listening")
    t.after(() => blocker.close())
    const port = (blocker.address() as net.AddressInfo).port
    const address = `127.0.0.1:${port}`
    await assert.rejects(serveMcp(store, { http: address }), (error: unknown) => {
      assert.ok(error instanceof Error, String(error))
      const code = (error as Error & { code?: unknown }).code
      assert.equal(typeof code, "string", `no code: ${error.message}`)
      assert.match(code as string, /^TOOLNEXUS_/, error.message)
      assert.ok(error.message.includes(address), `the message does not name ${address}: ${error.message}`)
      return true
    })
    // Another port still serves.
    const gateway = await serve(store)
    await openSession(gateway.url!)
  })
})

// ---------------------------------------------------------------- meta mode

const META = JSON.parse(fs.readFileSync(new URL("../js/meta-tools.json", import.meta.url), "utf8")) as {
  tools: Array<{ name: string; description: string; inputSchema: object }>
}

describe("serveMcp: meta mode", T, () => {
  test("lists exactly the three meta-tools; they search, describe and call the view's tools", async (t) => {
    const { store, serve, connect } = await kit(t)
    const gateway = await serve(store, { meta: true })
    const client = await connect(gateway.url!)
    const listed = (await client.listTools()).tools
    assert.deepEqual(sorted(listed), ["call_tool", "describe_tool", "search_tools"])
    for (const def of META.tools) {
      const tool = listed.find((x) => x.name === def.name)!
      assert.equal(tool.description, def.description, def.name)
      assert.deepEqual(tool.inputSchema, def.inputSchema, def.name)
    }

    const weather = store.tools().find((x) => x.name.endsWith("weather_forecast"))!
    const echo = store.tools().find((x) => x.name.endsWith("_echo"))!

    const searched = await client.callTool({ name: "search_tools", arguments: { query: "weather forecast city" } })
    assert.notEqual(searched.isError, true, JSON.stringify(searched))
    const found = JSON.parse(textOf(searched)) as Array<{ name: string; description: string }>
    assert.ok(Array.isArray(found) && found.length >= 1, textOf(searched))
    assert.deepEqual(found[0], { name: weather.name, description: "Forecast the weather for a city" })
    const known = new Set(store.tools().map((x) => x.name))
    for (const entry of found) {
      assert.deepEqual(Object.keys(entry).sort(), ["description", "name"], JSON.stringify(entry))
      assert.ok(known.has(entry.name), `search_tools found ${entry.name}, not a tool of the view`)
    }

    const described = await client.callTool({ name: "describe_tool", arguments: { name: weather.name } })
    assert.notEqual(described.isError, true, JSON.stringify(described))
    assert.deepEqual(JSON.parse(textOf(described)), {
      name: weather.name,
      description: weather.description,
      inputSchema: weather.inputSchema,
    })

    const called = await client.callTool({
      name: "call_tool",
      arguments: { name: echo.name, arguments: { text: "hi" } },
    })
    assert.notEqual(called.isError, true, JSON.stringify(called))
    assert.deepEqual(JSON.parse(textOf(called)), { text: "hi" })

    const missing = await client.callTool({ name: "call_tool", arguments: { name: "no_such_tool", arguments: {} } })
    assert.equal(missing.isError, true, JSON.stringify(missing))
    const undescribed = await client.callTool({ name: "describe_tool", arguments: { name: "no_such_tool" } })
    assert.equal(undescribed.isError, true, JSON.stringify(undescribed))
    // A tool of the view is not itself callable in meta mode.
    await assert.rejects(client.callTool({ name: echo.name, arguments: { text: "direct" } }))
  })

  test("an agent's path in meta mode finds and runs only that agent's tools", async (t) => {
    const { store, serve, connect } = await kit(t)
    const gateway = await serve(store, { meta: true })
    const a = await connect(at(gateway, "/agents/a/mcp"))
    assert.deepEqual(sorted((await a.listTools()).tools), ["call_tool", "describe_tool", "search_tools"])
    const searched = await a.callTool({ name: "search_tools", arguments: { query: "alpha only agent" } })
    const found = JSON.parse(textOf(searched)) as Array<{ name: string }>
    assert.deepEqual(sorted(found), ["mine_alpha_only"])
    const weather = await a.callTool({ name: "search_tools", arguments: { query: "weather forecast" } })
    assert.ok(!textOf(weather).includes("weather_forecast"), textOf(weather))
    const store_echo = store.tools().find((x) => x.name.endsWith("_echo"))!.name
    const other = await a.callTool({ name: "call_tool", arguments: { name: store_echo, arguments: {} } })
    assert.equal(other.isError, true, JSON.stringify(other))
    const mine = await a.callTool({ name: "call_tool", arguments: { name: "mine_alpha_only", arguments: { k: "v" } } })
    assert.notEqual(mine.isError, true, JSON.stringify(mine))
    assert.deepEqual(JSON.parse(textOf(mine)), { k: "v" })
  })
})

// ---------------------------------------------------------------- hostile input

describe("serveMcp: hostile downstream input", T, () => {
  let store: McpStore
  let gateway: McpGateway
  let good: Client
  let expected: string[]
  /** Cleanup jobs, run last-in first-out after the last test: the client, the gateway, the store. */
  const closing: Job[] = []
  const defer: Later = (job) => void closing.push(job)

  before(async () => {
    store = await makeStore(defer)
    gateway = await serveView(defer, store)
    good = (await v1Http(defer, gateway.url!)).client
    expected = sorted(store.tools())
    assert.deepEqual(sorted((await good.listTools()).tools), expected)
  })

  after(() => runLifo(closing))

  /** The well-behaved client, connected since before the first test, still lists and calls. */
  async function stillServes(): Promise<void> {
    const listed = await good.listTools(undefined, { timeout: 10_000 })
    assert.deepEqual(sorted(listed.tools), expected)
    const echo = expected.find((n) => n.endsWith("_echo"))!
    const called = await good.callTool({ name: echo, arguments: { text: "still" } }, undefined, { timeout: 10_000 })
    assert.deepEqual(called.content, [{ type: "text", text: '{"text":"still"}' }])
  }

  test("a malformed JSON body gets a 4xx, in a session or not", async () => {
    const session = await openSession(gateway.url!)
    for (const body of ['{"jsonrpc":"2.0","id":1,"method":', "not json at all", "", "\u0000\u0001\u00ff", "{}}"]) {
      const outside = await post(gateway.url!, body)
      assert.ok(is4xx(outside), `${JSON.stringify(body)}: ${show(outside)}`)
      const inside = await session.send(body)
      assert.ok(is4xx(inside), `${JSON.stringify(body)} in a session: ${show(inside)}`)
    }
    await stillServes()
  })

  test("a 5 MiB body gets 413 (or a 4xx); 3 MiB is still read", async () => {
    const session = await openSession(gateway.url!)
    const padded = (bytes: number, id: number) =>
      JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: { pad: "x".repeat(bytes) } })
    for (const [what, send] of [
      ["outside a session", (body: string) => post(gateway.url!, body)],
      ["in a session", (body: string) => session.send(body)],
    ] as const) {
      let raw: Raw | undefined
      let thrown: unknown
      try {
        raw = await send(padded(5 * 1024 * 1024, 9))
      } catch (error) {
        thrown = error
      }
      assert.ok(raw, `${what}: no response to a 5 MiB body: ${String(thrown)} ${String((thrown as Error)?.cause)}`)
      assert.ok(raw.status === 413 || is4xx(raw), `${what}: ${show(raw)}`)
    }
    // Under the 4 MiB limit, a long request is a request.
    const big = await session.send(padded(3 * 1024 * 1024, 10))
    assert.equal(big.status, 200, show(big))
    assert.deepEqual(sorted((big.rpc?.result?.tools as Array<{ name: string }>) ?? []), expected, show(big))
    await stillServes()
  })

  test("a JSON-RPC batch or a JSON value that is not an object is refused, not answered", async () => {
    const session = await openSession(gateway.url!)
    const list = { jsonrpc: "2.0", id: 4, method: "tools/list" }
    for (const body of [[initialize()], [list, { ...list, id: 5 }], [], 42, '"text"', "null", "true", {}]) {
      const text = typeof body === "string" ? body : JSON.stringify(body)
      for (const [what, raw] of [
        ["outside a session", await post(gateway.url!, text)],
        ["in a session", await session.send(text)],
      ] as const) {
        const refused = is4xx(raw) || (raw.status === 200 && raw.rpc?.error !== undefined && !raw.rpc.result)
        assert.ok(refused, `${text} ${what}: ${show(raw)}`)
        if (what === "outside a session") assert.equal(raw.headers.get("mcp-session-id"), null, show(raw))
      }
    }
    await stillServes()
  })

  test("an unknown method gets JSON-RPC error -32601; an unknown tool a JSON-RPC error", async () => {
    const session = await openSession(gateway.url!)
    const unknown = await session.send({ jsonrpc: "2.0", id: 11, method: "no/such/method", params: {} })
    assert.equal(unknown.rpc?.id, 11, show(unknown))
    assert.equal(unknown.rpc?.error?.code, -32601, show(unknown))

    const tool = await session.send({
      jsonrpc: "2.0",
      id: 12,
      method: "tools/call",
      params: { name: "no_such_tool", arguments: {} },
    })
    assert.equal(tool.rpc?.id, 12, show(tool))
    assert.equal(tool.rpc?.result, undefined, show(tool))
    assert.equal(typeof tool.rpc?.error?.code, "number", show(tool))
    assert.match(tool.rpc!.error!.message, /no_such_tool/, show(tool))
    // Through the SDK client too: a rejection, not a result.
    await assert.rejects(good.callTool({ name: "no_such_tool", arguments: {} }), /no_such_tool/)
    await stillServes()
  })

  test("clients stalled mid-headers or mid-body do not delay another client", async () => {
    const port = portOf(gateway)
    const stalled: net.Socket[] = []
    const closedEarly: string[] = []
    const stall = async (data: string, what: string) => {
      const socket = net.connect(port, "127.0.0.1")
      socket.on("error", () => {})
      socket.on("close", () => closedEarly.push(what))
      await once(socket, "connect")
      socket.write(data)
      stalled.push(socket)
    }
    try {
      for (let i = 0; i < 20; i++) {
        await stall(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ${ACCEPT}\r\nContent-Ty`, `headers ${i}`)
      }
      const body = JSON.stringify(initialize())
      await stall(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: ${ACCEPT}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
        "body",
      )
      await sleep(200)
      const start = Date.now()
      await stillServes()
      // A new client, start to finish, while they stall.
      const fresh = await sdkClient(gateway.url!)
      try {
        assert.deepEqual(sorted((await fresh.listTools(undefined, { timeout: 10_000 })).tools), expected)
      } finally {
        await fresh.close()
      }
      const ms = Date.now() - start
      assert.deepEqual(closedEarly, [], "stalled connections closed before the other client was done")
      assert.ok(
        stalled.every((s) => !s.destroyed),
        "a stalled socket was gone before the other client was done",
      )
      assert.ok(ms < 5_000, `the other client took ${ms} ms while others stalled`)
    } finally {
      for (const socket of stalled) socket.destroy()
    }
  })

  test("50 concurrent garbage requests, then a good one works", async () => {
    const port = portOf(gateway)
    const url = gateway.url!
    const kinds: Array<() => Promise<string | undefined>> = [
      async () => {
        const raw = await post(url, '{"jsonrpc":"2.0","id":')
        return is4xx(raw) ? undefined : `malformed: ${show(raw)}`
      },
      async () => {
        const raw = await post(url, initialize(), { "content-type": "text/plain" })
        return is4xx(raw) ? undefined : `text/plain: ${show(raw)}`
      },
      async () => {
        const raw = await post(url, initialize(), { accept: "text/html" })
        return is4xx(raw) ? undefined : `accept text/html: ${show(raw)}`
      },
      async () => {
        const raw = await post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": "bogus" })
        return is4xx(raw) ? undefined : `bogus session: ${show(raw)}`
      },
      async () => {
        const raw = await post(at(gateway, "/agents/nobody/mcp"), initialize())
        return raw.status === 404 ? undefined : `unknown agent: ${show(raw)}`
      },
      async () => {
        const raw = await post(url, initialize(), { origin: "http://evil.example" })
        return raw.status === 403 ? undefined : `evil origin: ${show(raw)}`
      },
      async () => {
        const raw = await del(url, { "mcp-session-id": "bogus" })
        // rmcp answers 202 to a DELETE of any session id, known or not: only no 5xx is asked.
        return raw.status < 500 ? undefined : `DELETE bogus: ${show(raw)}`
      },
      async () => {
        const raw = await post(url, [1, 2, 3])
        return is4xx(raw) ? undefined : `array: ${show(raw)}`
      },
      async () => {
        const answer = await tcpExchange(port, "\u0000\u0001GARBAGE \r\n\r\nmore garbage\r\n\r\n")
        return answer.closed || /^HTTP\/1\.[01] 4\d\d/.test(answer.text)
          ? undefined
          : `tcp garbage: neither closed nor refused: ${JSON.stringify(answer.text.slice(0, 200))}`
      },
      async () => {
        const answer = await tcpExchange(port, "GET /mcp HTTP/9.9\r\nHost: x\r\n\r\n")
        return answer.closed || /^HTTP\/1\.[01] 4\d\d/.test(answer.text)
          ? undefined
          : `bad version: neither closed nor refused: ${JSON.stringify(answer.text.slice(0, 200))}`
      },
    ]
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => kinds[i % kinds.length]()))
    const problems = outcomes.flatMap((o, i) =>
      o.status === "rejected" ? [`#${i}: threw ${String(o.reason)}`] : o.value ? [`#${i}: ${o.value}`] : [],
    )
    assert.deepEqual(problems, [])
    const fresh = await sdkClient(gateway.url!)
    try {
      assert.deepEqual(sorted((await fresh.listTools(undefined, { timeout: 10_000 })).tools), expected)
    } finally {
      await fresh.close()
    }
    await stillServes()
  })
})

// ---------------------------------------------------------------- close

describe("serveMcp: close()", T, () => {
  test("stops listening, ends `ended` and its sessions; the store stays usable", async (t) => {
    const { store, serve } = await kit(t)
    const names = sorted(store.tools())
    const gateway = await serve(store)
    const url = gateway.url!
    const client = await sdkClient(url)
    t.after(() => client.close())
    assert.deepEqual(sorted((await client.listTools()).tools), names)

    let ended = false
    void gateway.ended.then(() => (ended = true))
    await sleep(100)
    assert.equal(ended, false, "ended resolved while the gateway was serving")

    assert.ok(await settlesWithin(gateway.close(), 10_000), "close() took more than 10 s")
    assert.ok(await settlesWithin(gateway.ended, 5_000), "ended did not resolve after close()")

    await assert.rejects(post(url, initialize()), (error: Error & { cause?: { code?: string } }) => {
      assert.equal(error.cause?.code, "ECONNREFUSED", `${error} ${String(error.cause)}`)
      return true
    })
    // The session the client had is gone with the gateway.
    await assert.rejects(client.listTools(undefined, { timeout: 5_000 }))
    // A second close is harmless.
    assert.ok(await settlesWithin(gateway.close(), 5_000), "a second close() did not settle")

    // The store is still there, and can be served again, on the same address.
    assert.deepEqual(sorted(store.tools()), names)
    const echo = names.find((n) => n.endsWith("_echo"))!
    const called = await store.callTool(echo, { text: "after" })
    assert.equal(called.isError, false, called.output)
    const again = await serve(store, { http: new URL(url).host })
    assert.equal(again.url, url)
    const client2 = await sdkClient(again.url!)
    t.after(() => client2.close())
    assert.deepEqual(sorted((await client2.listTools()).tools), names)
  })
})
