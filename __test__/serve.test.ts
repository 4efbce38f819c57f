// serveMcp and `toolnexus serve`: a store view served as one MCP server, checked with the
// official clients. SDK v1 (@modelcontextprotocol/sdk) speaks 2025-11-25 (initialize,
// Mcp-Session-Id); SDK v2 (@modelcontextprotocol/client 2.4.0) with `versionNegotiation:
// "auto"` speaks 2026-07-28 (server/discover). Upstreams: fixtures/v1-server.mjs (the era
// tools, 2025 era), fixtures/offer-server.mjs (tool members, resources, templates, prompts,
// both eras) and fixtures/serve-upstream.mjs (records its pid, for the process checks).
import assert from "node:assert/strict"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolResultSchema,
  ToolListChangedNotificationSchema,
  type JSONRPCMessage,
  type Tool as WireTool,
} from "@modelcontextprotocol/sdk/types.js"
import { Client as Client2, StreamableHTTPClientTransport as HttpTransport2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioTransport2 } from "@modelcontextprotocol/client/stdio"
import { createMcpStore, serveMcp, type McpGateway, type McpStore, type McpStoreView } from "toolnexus"
import { NOTE_TEXT } from "./fixtures/offer-server.mjs"
import { assertGone, childPids, fixture, NODE, poll, readRecord, ROOT, sleep, tempDir } from "./helpers.js"
import { here } from "./liveness.js"

const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
const CLI = path.join(ROOT, "bin", "toolnexus.js")
/** The environment for spawned CLIs: the SDKs' stdio transports pass only a few variables by default. */
const ENV = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
)
const CLIENT_INFO = { name: "serve-test", version: "1.0.0" }
/** The members of a tool besides its name, description and inputSchema. */
const MEMBERS = ["title", "annotations", "outputSchema", "icons", "execution", "_meta"] as const

/** What the era fixture's `progress` tool reports, and how many calls of it a test makes. */
const PROGRESS = [
  { progress: 1, total: 2 },
  { progress: 2, total: 2 },
]
const ROUNDS = 5

const eraCmd = (record: string) => [NODE, fixture("v1-server.mjs"), `--record=${record}`]
const offerCmd = () => [NODE, fixture("offer-server.mjs")]
const upstreamCmd = (pids: string, record?: string) => [
  NODE,
  fixture("serve-upstream.mjs"),
  `--pids=${pids}`,
  ...(record ? [`--record=${record}`] : []),
]

/** Runs the functions given, last first, when the test ends (clients before gateways before stores). */
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
  return (fn: () => unknown) => fns.push(fn)
}

/** Waits until every service of `view` is connected, failing with the states otherwise. */
async function ready(view: McpStoreView) {
  await poll(() => Object.values(view.status()).every((s) => s.state !== "initializing"), 15_000)
  for (const [name, status] of Object.entries(view.status())) {
    assert.equal(status.state, "connected", `${name}: ${status.lastError}`)
  }
}

interface Served {
  store: McpStore
  gateway: McpGateway
  url: string
  later: (fn: () => unknown) => number
  record: string
  dir: string
}

/** A store of `servers(dir)`, ready, served over HTTP; all closed when the test ends. */
async function served(t: TestContext, servers: (dir: string) => Record<string, object>): Promise<Served> {
  const dir = tempDir(t)
  const record = path.join(dir, "events.jsonl")
  const later = closers(t)
  const store = createMcpStore({ mcpServers: servers(dir) })
  later(() => store.close())
  await ready(store)
  const gateway = await serveMcp(store)
  later(() => gateway.close())
  assert.match(gateway.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  return { store, gateway, url: gateway.url!, later, record, dir }
}

/** The era tools (`era_*`) and the offer server (`offer_*`, resources, prompts). */
const eraAndOffer = (dir: string) => ({
  era: { command: eraCmd(path.join(dir, "events.jsonl")) },
  offer: { command: offerCmd() },
})

async function v1Http(s: Served, url = s.url) {
  const client = new Client(CLIENT_INFO)
  const transport = new StreamableHTTPClientTransport(new URL(url))
  await client.connect(transport)
  s.later(() => client.close())
  return { client, transport }
}

async function v2Http(s: Served, opts: ConstructorParameters<typeof Client2>[1] = {}) {
  const client = new Client2(CLIENT_INFO, { versionNegotiation: { mode: "auto" }, ...opts })
  await client.connect(new HttpTransport2(new URL(s.url)))
  s.later(() => client.close())
  return client
}

/** What a server lists itself, asked directly by an SDK v1 client over stdio. */
async function ownListing(command: string[]): Promise<WireTool[]> {
  const client = new Client(CLIENT_INFO)
  await client.connect(new StdioClientTransport({ command: command[0]!, args: command.slice(1), env: ENV }))
  try {
    return (await client.listTools()).tools
  } finally {
    await client.close()
  }
}

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value))
const texts = (result: object) =>
  (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) =>
    c.type === "text" ? c.text : c.type,
  )

/**
 * Asserts the gateway's listing: the store's names in the store's order, each tool
 * exactly as its server lists it (every member) under the store's name for it, and the
 * members the store itself reports.
 */
async function assertListing(store: McpStore, listed: WireTool[], upstreams: Record<string, string[]>) {
  const infos = store.listTools()
  assert.deepEqual(
    listed.map((x) => x.name),
    infos.map((x) => x.name),
    "the gateway lists the store's tools, by the store's names",
  )
  const own: Record<string, WireTool[]> = {}
  for (const [server, command] of Object.entries(upstreams)) own[server] = await ownListing(command)
  for (const [i, tool] of listed.entries()) {
    const info = infos[i]!
    const upstream = own[info.serviceName]
    assert.ok(upstream, `no upstream listing for ${info.serviceName}`)
    const sent = upstream.find((x) => `${info.serviceName}_${x.name}` === tool.name)
    assert.ok(sent, `${tool.name}: no such tool upstream (${upstream.map((x) => x.name).join(", ")})`)
    assert.deepEqual(plain(tool), { ...plain(sent), name: tool.name }, `${tool.name} as its server lists it`)
    for (const key of MEMBERS) {
      assert.deepEqual(plain(tool)[key], plain(info)[key], `${tool.name}.${key} as the store reports it`)
    }
  }
}

/** Spawns `toolnexus serve ...args` with its stdin and stdout piped; SIGKILLed if left running. */
function spawnCli(t: TestContext, args: string[]) {
  const child = spawn(NODE, [CLI, "serve", ...args], { cwd: ROOT, env: process.env, stdio: "pipe" })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  )
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  })
  return { child, exited, stderr: () => stderr }
}

/** A client transport over a child's stdin and stdout; `close()` only ends its stdin. */
class ChildTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private buffer = new ReadBuffer()
  constructor(private child: ChildProcessWithoutNullStreams) {}
  async start() {
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) {
        this.onmessage?.(message)
      }
    })
    this.child.on("close", () => this.onclose?.())
  }
  async send(message: JSONRPCMessage) {
    this.child.stdin.write(serializeMessage(message))
  }
  async close() {
    this.child.stdin.end()
  }
}

/** An SDK v1 client of `toolnexus serve --stdio` with one serve-upstream. */
async function v1Stdio(t: TestContext, dir: string, pids: string) {
  const config = configFile(dir, { mcpServers: { up: { command: upstreamCmd(pids) } } })
  const client = new Client(CLIENT_INFO)
  const transport = new StdioClientTransport({
    command: NODE,
    args: [CLI, "serve", config, "--stdio"],
    cwd: ROOT,
    env: ENV,
    stderr: "pipe",
  })
  await client.connect(transport)
  t.after(() => client.close())
  return { client, transport }
}

/** An SDK v2 client (`versionNegotiation: "auto"`) of `toolnexus serve --stdio` with one serve-upstream. */
async function v2Stdio(t: TestContext, dir: string, pids: string) {
  const config = configFile(dir, { mcpServers: { up: { command: upstreamCmd(pids) } } })
  const client = new Client2(CLIENT_INFO, { versionNegotiation: { mode: "auto" } })
  const transport = new StdioTransport2({
    command: NODE,
    args: [CLI, "serve", config, "--stdio"],
    cwd: ROOT,
    env: ENV,
    stderr: "pipe",
  })
  await client.connect(transport)
  t.after(() => client.close())
  return { client, transport }
}

/** A temp mcp.json of `config`. */
function configFile(dir: string, config: object) {
  const file = path.join(dir, "mcp.json")
  fs.writeFileSync(file, JSON.stringify(config))
  return file
}

/** The pids serve-upstream.mjs processes appended to `file`. */
const pidsIn = (file: string) =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number) : []

/** The slow-call events of an era or serve-upstream record, as their names. */
const slowEvents = (record: string) =>
  readRecord<{ event: string; tool: string }>(record)
    .filter((e) => e.tool === "slow")
    .map((e) => e.event)

describe("serveMcp over HTTP: an SDK v1 client (2025-11-25)", { timeout: 60_000 }, () => {
  test("initialize and a session; tools/list is the store's tools with every member their servers sent", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client, transport } = await v1Http(s)
    assert.equal(transport.protocolVersion, LEGACY)
    assert.ok(transport.sessionId, "the gateway gave the session an Mcp-Session-Id")
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    const capabilities = client.getServerCapabilities()
    assert.equal(capabilities?.tools?.listChanged, true, JSON.stringify(capabilities))
    const { tools } = await client.listTools()
    await assertListing(s.store, tools, { era: eraCmd(s.record), offer: offerCmd() })
    const weather = tools.find((x) => x.name === "offer_weather")
    assert.equal(weather?.title, "Weather")
    assert.deepEqual(weather?._meta, { ui: { resourceUri: "ui://weather/view.html" } })
    assert.equal(weather?.annotations?.readOnlyHint, true)
  })

  test("calls: a text result and an error result", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    const echo = await client.callTool({ name: "era_echo", arguments: { text: "hello gateway" } })
    assert.deepEqual(plain(echo), { content: [{ type: "text", text: "hello gateway" }] })
    const failed = await client.callTool({ name: "era_fail", arguments: {} })
    assert.deepEqual([failed.isError, texts(failed)], [true, ["it failed"]])
  })

  test("calls: structured content of a tool without an output schema", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    const add = await client.callTool({ name: "era_add", arguments: { a: 2, b: 3.5 } })
    assert.deepEqual(plain(add), { content: [{ type: "text", text: "5.5" }], structuredContent: { sum: 5.5 } })
  })

  test("calls: structured content of a tool with an output schema, as the server sent it", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    // Listed first, so the client checks the result against the tool's output schema.
    await client.listTools()
    const weather = await client.callTool({ name: "offer_weather", arguments: { city: "Oslo" } })
    assert.deepEqual(plain(weather), {
      content: [{ type: "text", text: "Oslo: 21" }],
      structuredContent: { city: "Oslo", celsius: 21 },
    })
  })

  test("calls: progress reaches onprogress, all of it before the result", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    // The upstream sends progress 1 and 2, then its result at once: a few calls, so that a
    // relay racing the last progress against the result shows.
    for (let call = 1; call <= ROUNDS; call++) {
      const seen: Array<{ progress: number; total?: number }> = []
      const progressed = await client.callTool({ name: "era_progress", arguments: {} }, CallToolResultSchema, {
        onprogress: ({ progress, total }) => seen.push({ progress, total }),
      })
      assert.deepEqual(texts(progressed), ["progress done"])
      assert.deepEqual(seen, PROGRESS, `the progress of call ${call} of ${ROUNDS}`)
    }
  })

  test("an unknown tool is an error, not a hang", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    await assert.rejects(client.callTool({ name: "era_nothing", arguments: {} }), /Unknown tool: era_nothing/)
  })
})

describe("serveMcp over HTTP: an SDK v2 client (2026-07-28)", { timeout: 60_000 }, () => {
  test("server/discover negotiates 2026-07-28", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true)
  })

  test("tools/list is the store's tools with every member their servers sent", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s)
    const { tools } = await client.listTools()
    await assertListing(s.store, tools as WireTool[], { era: eraCmd(s.record), offer: offerCmd() })
  })

  test("calls: text, structured content, an error result", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s)
    const echo = await client.callTool({ name: "era_echo", arguments: { text: "hello modern" } })
    assert.deepEqual(texts(echo), ["hello modern"])
    assert.notEqual(echo.isError, true)
    const add = await client.callTool({ name: "era_add", arguments: { a: 1, b: 2 } })
    assert.deepEqual(add.structuredContent, { sum: 3 })
    const weather = await client.callTool({ name: "offer_weather", arguments: { city: "Rome" } })
    assert.deepEqual(weather.structuredContent, { city: "Rome", celsius: 21 })
    const failed = await client.callTool({ name: "era_fail", arguments: {} })
    assert.deepEqual([failed.isError, texts(failed)], [true, ["it failed"]])
  })

  test("progress reaches onprogress", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s)
    for (let call = 1; call <= ROUNDS; call++) {
      const seen: Array<{ progress: number; total?: number }> = []
      const result = await client.callTool(
        { name: "era_progress", arguments: {} },
        { onprogress: ({ progress, total }) => seen.push({ progress, total }) },
      )
      assert.deepEqual(texts(result), ["progress done"])
      assert.deepEqual(seen, PROGRESS, `the progress of call ${call} of ${ROUNDS}`)
    }
  })
})

describe("serveMcp: cancellation reaches the upstream", { timeout: 60_000 }, () => {
  for (const [era, open] of [
    [
      LEGACY,
      async (s: Served) => {
        const { client, transport } = await v1Http(s)
        assert.equal(transport.protocolVersion, LEGACY)
        return (signal: AbortSignal) =>
          client.callTool({ name: "era_slow", arguments: { ms: 30_000 } }, CallToolResultSchema, { signal })
      },
    ],
    [
      MODERN,
      async (s: Served) => {
        const client = await v2Http(s)
        assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
        return (signal: AbortSignal) => client.callTool({ name: "era_slow", arguments: { ms: 30_000 } }, { signal })
      },
    ],
  ] as const) {
    test(`a ${era} client's abort of a slow call cancels the upstream call`, async (t) => {
      const s = await served(t, eraAndOffer)
      const call = await open(s)
      const controller = new AbortController()
      const pending = call(controller.signal)
      pending.catch(() => {})
      const started = await poll(() => slowEvents(s.record).includes("started"), 10_000)
      assert.ok(started, "the slow call never reached the upstream")
      const abortedAt = Date.now()
      controller.abort()
      await assert.rejects(pending)
      assert.ok(Date.now() - abortedAt < 2_000, `the aborted call took ${Date.now() - abortedAt} ms to settle`)
      await poll(() => slowEvents(s.record).includes("cancelled"), 5_000)
      assert.deepEqual(slowEvents(s.record), ["started", "cancelled"], "the upstream was told of the abort")
    })
  }
})

describe("serveMcp: list changes", { timeout: 60_000 }, () => {
  test("a 2025-11-25 session is sent tools/list_changed when a server is added and removed", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    let notified = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++
    })
    const names = async () => (await client.listTools()).tools.map((x) => x.name)
    const before = await names()
    assert.ok(!before.includes("more_echo"))
    await sleep(300) // the GET stream the notifications come on

    s.store.addServers({ mcpServers: { more: { command: upstreamCmd(path.join(s.dir, "pids")) } } })
    const grown = await poll(async () => notified > 0 && (await names()).includes("more_echo") && true, 10_000)
    assert.ok(grown, `notified ${notified} times; tools now: ${(await names()).join(", ")}`)
    assert.deepEqual(await names(), [...before, "more_echo", "more_add", "more_slow"])

    const seen = notified
    assert.equal(s.store.removeServer("more"), true)
    const shrunk = await poll(async () => notified > seen && !(await names()).includes("more_echo") && true, 10_000)
    assert.ok(shrunk, `notified ${notified - seen} times after the removal`)
    assert.deepEqual(await names(), before)
  })

  test("a 2026-07-28 client hears of the change through subscriptions/listen", async (t) => {
    const s = await served(t, eraAndOffer)
    const changes: string[][] = []
    const errors: string[] = []
    const client = await v2Http(s, {
      listChanged: {
        tools: {
          debounceMs: 0,
          // Called once a list_changed arrived, with the refreshed list or why refreshing failed.
          onChanged: (error, tools) => {
            if (error) errors.push(error.message)
            else if (tools) changes.push(tools.map((x) => x.name))
          },
        },
      },
    })
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.ok(client.autoOpenedSubscription, "listChanged opened a subscriptions/listen stream")
    assert.deepEqual(client.autoOpenedSubscription.honoredFilter.toolsListChanged, true)
    s.store.addServers({ mcpServers: { more: { command: upstreamCmd(path.join(s.dir, "pids")) } } })
    const heard = await poll(() => changes.some((names) => names.includes("more_echo")), 10_000)
    assert.ok(heard, `the lists heard of: ${JSON.stringify(changes)}; refreshes that failed: ${JSON.stringify(errors)}`)
  })
})

describe("serveMcp: resources, templates, prompts and completions pass through", { timeout: 60_000 }, () => {
  test("an SDK v1 client (2025-11-25)", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s)
    const { resources } = await client.listResources()
    assert.deepEqual(
      resources.map((r) => r.uri),
      ["note://one", "bin://bytes", "ui://weather/view.html"],
    )
    assert.equal(resources[0]?.title, "Note")
    const note = await client.readResource({ uri: "note://one" })
    assert.deepEqual(plain(note.contents), [{ uri: "note://one", mimeType: "text/plain", text: NOTE_TEXT }])
    const { resourceTemplates } = await client.listResourceTemplates()
    assert.deepEqual(
      resourceTemplates.map((r) => r.uriTemplate),
      ["city://{name}"],
    )
    const city = await client.readResource({ uri: "city://Rome" })
    assert.deepEqual(plain(city.contents), [{ uri: "city://Rome", text: "city Rome" }])

    const { prompts } = await client.listPrompts()
    assert.deepEqual(
      prompts.map((p) => p.name),
      ["offer_greet"],
    )
    assert.deepEqual(
      prompts[0]?.arguments?.map((a) => a.name),
      ["name", "lang"],
    )
    const greeting = await client.getPrompt({ name: "offer_greet", arguments: { name: "Ann", lang: "es" } })
    assert.equal(greeting.description, "A greeting")
    assert.deepEqual(plain(greeting.messages), [
      { role: "user", content: { type: "text", text: "Say hello to Ann in es" } },
    ])
    const langs = await client.complete({
      ref: { type: "ref/prompt", name: "offer_greet" },
      argument: { name: "lang", value: "e" },
    })
    assert.deepEqual(langs.completion.values, ["en", "es"])
  })

  test("an SDK v2 client (2026-07-28)", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    const { resources } = await client.listResources()
    assert.deepEqual(
      resources.map((r) => r.uri),
      ["note://one", "bin://bytes", "ui://weather/view.html"],
    )
    const note = await client.readResource({ uri: "note://one" })
    assert.deepEqual(plain(note.contents), [{ uri: "note://one", mimeType: "text/plain", text: NOTE_TEXT }])
    const { prompts } = await client.listPrompts()
    assert.deepEqual(
      prompts.map((p) => p.name),
      ["offer_greet"],
    )
    const greeting = await client.getPrompt({ name: "offer_greet", arguments: { name: "Bo", lang: "fr" } })
    assert.deepEqual(plain(greeting.messages), [
      { role: "user", content: { type: "text", text: "Say hello to Bo in fr" } },
    ])
  })
})

describe("serveMcp: agent views", { timeout: 60_000 }, () => {
  test("the store at /mcp, each agent's view at /agents/<id>/mcp; an agent's view alone at /mcp", async (t) => {
    const s = await served(t, (dir) => ({ era: { command: eraCmd(path.join(dir, "events.jsonl")) } }))
    const agent = s.store.forAgent("a")
    agent.addServers({ mcpServers: { up: { command: upstreamCmd(path.join(s.dir, "pids")) } } })
    await ready(agent)
    await ready(s.store)
    const names = (view: McpStoreView) => view.listTools().map((x) => x.name)
    const listed = async (url: string) => {
      const { client } = await v1Http(s, url)
      return { client, names: (await client.listTools()).tools.map((x) => x.name) }
    }
    const agentUrl = s.url.replace(/\/mcp$/, "/agents/a/mcp")
    assert.deepEqual((await listed(s.url)).names, names(s.store))
    const a = await listed(agentUrl)
    assert.deepEqual(a.names, names(agent))
    assert.deepEqual(a.names, ["up_echo", "up_add", "up_slow"])
    assert.deepEqual(texts(await a.client.callTool({ name: "up_echo", arguments: { text: "from a" } })), ["from a"])
    const nobody = await fetch(s.url.replace(/\/mcp$/, "/agents/nobody/mcp"), { method: "POST" })
    assert.equal(nobody.status, 404)

    const own = await serveMcp(agent)
    s.later(() => own.close())
    assert.deepEqual((await listed(own.url!)).names, names(agent))
    const nested = await fetch(own.url!.replace(/\/mcp$/, "/agents/a/mcp"), { method: "POST" })
    assert.equal(nested.status, 404, "an agent's gateway serves no other view")
  })
})

describe("`toolnexus serve --stdio`", { timeout: 60_000 }, () => {
  test("an SDK v1 stdio client (2025-11-25) lists and calls", async (t) => {
    const dir = tempDir(t)
    const { client } = await v1Stdio(t, dir, path.join(dir, "pids"))
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((x) => x.name),
      ["up_echo", "up_add", "up_slow"],
    )
    assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text: "over stdio" } })), [
      "over stdio",
    ])
    const add = await client.callTool({ name: "up_add", arguments: { a: 40, b: 2 } })
    assert.deepEqual(add.structuredContent, { sum: 42 })
  })

  test("an SDK v1 stdio client: once it leaves, no server is left", async (t) => {
    const dir = tempDir(t)
    const pids = path.join(dir, "pids")
    const { client } = await v1Stdio(t, dir, pids)
    assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text: "once" } })), ["once"])
    const started = pidsIn(pids)
    assert.equal(started.length, 1, `upstream processes started: ${started.join(", ")}`)
    await client.close()
    await assertGone(started, 5_000, "upstream processes of the CLI")
  })

  test("an SDK v2 stdio client negotiates 2026-07-28; once it leaves, no server is left (its probe's neither)", async (t) => {
    const dir = tempDir(t)
    const pids = path.join(dir, "pids")
    const { client } = await v2Stdio(t, dir, pids)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    await client.close()
    // The client probed on a sibling CLI, which started an upstream of its own.
    const started = pidsIn(pids)
    assert.equal(started.length, 2, `upstream processes started: ${started.join(", ")}`)
    await assertGone(started, 5_000, "upstream processes of the CLIs")
  })

  test("an SDK v2 stdio client (2026-07-28) lists and calls", async (t) => {
    const dir = tempDir(t)
    const { client } = await v2Stdio(t, dir, path.join(dir, "pids"))
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((x) => x.name),
      ["up_echo", "up_add", "up_slow"],
    )
    assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text: "modern stdio" } })), [
      "modern stdio",
    ])
    const add = await client.callTool({ name: "up_add", arguments: { a: 1, b: 1 } })
    assert.deepEqual(add.structuredContent, { sum: 2 })
  })

  test("examples/mcp.json: the demo server's tools, and a call", async (t) => {
    const client = new Client(CLIENT_INFO)
    await client.connect(
      new StdioClientTransport({
        command: NODE,
        args: [CLI, "serve", "examples/mcp.json", "--stdio"],
        cwd: ROOT,
        env: ENV,
        stderr: "pipe",
      }),
    )
    t.after(() => client.close())
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((x) => x.name),
      ["demo_echo", "demo_add", "demo_word_count"],
    )
    assert.deepEqual(texts(await client.callTool({ name: "demo_add", arguments: { a: 2, b: 3 } })), ["5"])
    assert.deepEqual(texts(await client.callTool({ name: "demo_echo", arguments: { text: "hi demo" } })), ["hi demo"])
  })

  test("closing stdin ends the CLI with exit code 0 and its servers with it", async (t) => {
    const dir = tempDir(t)
    const pids = path.join(dir, "pids")
    const record = path.join(dir, "events.jsonl")
    const config = configFile(dir, {
      mcpServers: { up: { command: upstreamCmd(pids, record) }, era: { command: eraCmd(record) } },
    })
    const cli = spawnCli(t, [config, "--stdio"])
    const client = new Client(CLIENT_INFO)
    await client.connect(new ChildTransport(cli.child))
    const { tools } = await client.listTools()
    assert.ok(
      tools.some((x) => x.name === "era_echo") && tools.some((x) => x.name === "up_echo"),
      tools.map((x) => x.name).join(", "),
    )
    assert.deepEqual(texts(await client.callTool({ name: "era_echo", arguments: { text: "bye" } })), ["bye"])
    // Every process under the CLI now: its servers (v1-server.mjs records no pid of its own).
    const descendants = descendantsOf(cli.child.pid!)
    assert.ok(descendants.length >= 2, `processes under the CLI: ${descendants.join(", ")}`)
    await client.close() // ends stdin, nothing more
    const late = AbortSignal.timeout(10_000)
    const exit = await Promise.race([
      cli.exited,
      new Promise<undefined>((resolve) => late.addEventListener("abort", () => resolve(undefined))),
    ])
    assert.ok(exit, `the CLI still runs 10 s after its stdin closed\nstderr: ${cli.stderr()}`)
    assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${cli.stderr()}`)
    await assertGone([...new Set([...descendants, ...pidsIn(pids)])], 5_000, "the CLI's server processes")
  })
})

describe("serveMcp: processes", { timeout: 60_000 }, () => {
  test("gateway.close() stops serving and leaves the store working; store.close() leaves no server", async (t) => {
    const before = new Set(childPids())
    const s = await served(t, (dir) => ({
      ...eraAndOffer(dir),
      up: { command: upstreamCmd(path.join(dir, "pids")) },
    }))
    const upstreams = childPids().filter((pid) => !before.has(pid))
    assert.ok(upstreams.length >= 3, `the store's server processes: ${upstreams.join(", ")}`)
    const { client } = await v1Http(s)
    assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text: "x" } })), ["x"])

    await s.gateway.close()
    await s.gateway.ended // resolved once stopped
    await assert.rejects(fetch(s.url, { method: "POST" }), "the closed gateway still answers")
    const direct = await s.store.callTool("up_echo", { text: "still here" })
    assert.deepEqual([direct.isError, direct.output], [false, "still here"], "the store outlives its gateway")

    await s.store.close()
    await assertGone(upstreams, 5_000)
  })
})

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
