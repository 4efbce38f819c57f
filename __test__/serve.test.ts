// serveMcp and `toolnexus serve`: a store view served as one MCP server, checked with the
// official clients. SDK v1 (@modelcontextprotocol/sdk) speaks 2025-11-25 (initialize,
// Mcp-Session-Id); SDK v2 (@modelcontextprotocol/client 2.4.0) with `versionNegotiation:
// "auto"` speaks 2026-07-28 (server/discover). Upstreams: fixtures/v1-server.mjs (the era
// tools, 2025 era), fixtures/offer-server.mjs (tool members, resources, templates, prompts,
// both eras) and fixtures/serve-upstream.mjs (records its pid, for the process checks).
// What the serve*.test.ts files share is in serve-helpers.ts.
import assert from "node:assert/strict"
import type { ChildProcess } from "node:child_process"
import path from "node:path"
import { describe, test, type TestContext } from "node:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolResultSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type JSONRPCMessage,
  type Tool as WireTool,
} from "@modelcontextprotocol/sdk/types.js"
import { Client as Client2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioTransport2 } from "@modelcontextprotocol/client/stdio"
import type { McpStore, McpStoreView } from "toolnexus"
import { NOTE_TEXT } from "./fixtures/offer-server.mjs"
import { assertGone, childPids, fixture, NODE, poll, readRecord, ROOT, sleep, tempDir } from "./helpers.js"
import {
  ACCEPT,
  CLIENT_INFO,
  LEGACY,
  MODERN,
  plain,
  ready,
  served,
  serveView,
  texts,
  v1Http,
  v2Http,
} from "./serve-helpers.js"
import { assertExits0, CLI, configFile, descendantsOf, ENV, pidsIn, spawnCli, type Served } from "./serve-helpers.js"
import { cleanup, initialize, post, serveCli, sorted } from "./serve-helpers.js"

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

/** The record of the era server (and of serve-upstream, where given) in a test's folder. */
const recordIn = (dir: string) => path.join(dir, "events.jsonl")

/** The era tools (`era_*`) and the offer server (`offer_*`, resources, prompts). */
const eraAndOffer = (dir: string) => ({
  era: { command: eraCmd(recordIn(dir)) },
  offer: { command: offerCmd() },
})

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

/** A client transport over a child's stdin and stdout; `close()` only ends its stdin. */
class ChildTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private buffer = new ReadBuffer()
  constructor(private child: ChildProcess) {}
  async start() {
    this.child.stdout!.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (let message = this.buffer.readMessage(); message; message = this.buffer.readMessage()) {
        this.onmessage?.(message)
      }
    })
    this.child.on("close", () => this.onclose?.())
  }
  async send(message: JSONRPCMessage) {
    this.child.stdin!.write(serializeMessage(message))
  }
  async close() {
    this.child.stdin!.end()
  }
}

/** A temp config of one serve-upstream, `up`, and the file its processes append their pids to. */
function upConfig(t: TestContext) {
  const dir = tempDir(t)
  const pids = path.join(dir, "pids")
  return { pids, config: configFile(dir, { mcpServers: { up: { command: upstreamCmd(pids) } } }) }
}

/** How an SDK's stdio transport starts `toolnexus serve <config> --stdio`. */
const cliStdio = (config: string) => ({
  command: NODE,
  args: [CLI, "serve", config, "--stdio"],
  cwd: ROOT,
  env: ENV,
  stderr: "pipe" as const,
})

/** An SDK v1 client of `toolnexus serve <config> --stdio`, closed when the test ends. */
async function v1Stdio(t: TestContext, config: string) {
  const client = new Client(CLIENT_INFO)
  await client.connect(new StdioClientTransport(cliStdio(config)))
  t.after(() => client.close())
  return client
}

/** An SDK v2 client (`versionNegotiation: "auto"`) of `toolnexus serve <config> --stdio`, closed when the test ends. */
async function v2Stdio(t: TestContext, config: string) {
  const client = new Client2(CLIENT_INFO, { versionNegotiation: { mode: "auto" } })
  await client.connect(new StdioTransport2(cliStdio(config)))
  t.after(() => client.close())
  return client
}

/** The slow-call events of an era or serve-upstream record, as their names. */
const slowEvents = (record: string) =>
  readRecord<{ event: string; tool: string }>(record)
    .filter((e) => e.tool === "slow")
    .map((e) => e.event)

describe("serveMcp over HTTP: an SDK v1 client (2025-11-25)", { timeout: 60_000 }, () => {
  test("initialize and a session; tools/list is the store's tools with every member their servers sent", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client, transport } = await v1Http(s.later, s.url)
    assert.equal(transport.protocolVersion, LEGACY)
    assert.ok(transport.sessionId, "the gateway gave the session an Mcp-Session-Id")
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    const capabilities = client.getServerCapabilities()
    assert.equal(capabilities?.tools?.listChanged, true, JSON.stringify(capabilities))
    const { tools } = await client.listTools()
    await assertListing(s.store, tools, { era: eraCmd(recordIn(s.dir)), offer: offerCmd() })
    const weather = tools.find((x) => x.name === "offer_weather")
    assert.equal(weather?.title, "Weather")
    assert.deepEqual(weather?._meta, { ui: { resourceUri: "ui://weather/view.html" } })
    assert.equal(weather?.annotations?.readOnlyHint, true)
  })

  test("calls: a text result and an error result", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.url)
    const echo = await client.callTool({ name: "era_echo", arguments: { text: "hello gateway" } })
    assert.deepEqual(plain(echo), { content: [{ type: "text", text: "hello gateway" }] })
    const failed = await client.callTool({ name: "era_fail", arguments: {} })
    assert.deepEqual([failed.isError, texts(failed)], [true, ["it failed"]])
  })

  test("calls: structured content of a tool without an output schema", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.url)
    const add = await client.callTool({ name: "era_add", arguments: { a: 2, b: 3.5 } })
    assert.deepEqual(plain(add), { content: [{ type: "text", text: "5.5" }], structuredContent: { sum: 5.5 } })
  })

  test("calls: structured content of a tool with an output schema, as the server sent it", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.url)
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
    const { client } = await v1Http(s.later, s.url)
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
    const { client } = await v1Http(s.later, s.url)
    await assert.rejects(client.callTool({ name: "era_nothing", arguments: {} }), /Unknown tool: era_nothing/)
  })
})

describe("serveMcp over HTTP: an SDK v2 client (2026-07-28)", { timeout: 60_000 }, () => {
  test("server/discover negotiates 2026-07-28", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s.later, s.url)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true)
  })

  test("tools/list is the store's tools with every member their servers sent", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s.later, s.url)
    const { tools } = await client.listTools()
    await assertListing(s.store, tools as WireTool[], { era: eraCmd(recordIn(s.dir)), offer: offerCmd() })
  })

  test("calls: text, structured content, an error result", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s.later, s.url)
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
    const client = await v2Http(s.later, s.url)
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
        const { client, transport } = await v1Http(s.later, s.url)
        assert.equal(transport.protocolVersion, LEGACY)
        return (signal: AbortSignal) =>
          client.callTool({ name: "era_slow", arguments: { ms: 30_000 } }, CallToolResultSchema, { signal })
      },
    ],
    [
      MODERN,
      async (s: Served) => {
        const client = await v2Http(s.later, s.url)
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
      const started = await poll(() => slowEvents(recordIn(s.dir)).includes("started"), 10_000)
      assert.ok(started, "the slow call never reached the upstream")
      const abortedAt = Date.now()
      controller.abort()
      await assert.rejects(pending)
      assert.ok(Date.now() - abortedAt < 2_000, `the aborted call took ${Date.now() - abortedAt} ms to settle`)
      await poll(() => slowEvents(recordIn(s.dir)).includes("cancelled"), 5_000)
      assert.deepEqual(slowEvents(recordIn(s.dir)), ["started", "cancelled"], "the upstream was told of the abort")
    })
  }
})

describe("serveMcp: a stateless call's client hangs up", { timeout: 60_000 }, () => {
  test("the upstream call is cancelled when the connection of its 2026-07-28 request closes", async (t) => {
    const s = await served(t, eraAndOffer)
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
      "io.modelcontextprotocol/clientCapabilities": {},
    }
    const params = { name: "era_slow", arguments: { ms: 30_000 }, _meta }
    const headers = {
      accept: ACCEPT,
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "era_slow",
    }
    const controller = new AbortController()
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params })
    const pending = fetch(s.url, { method: "POST", headers, body, signal: controller.signal })
    pending.catch(() => {})
    const started = await poll(() => slowEvents(recordIn(s.dir)).includes("started"), 10_000)
    assert.ok(started, "the slow call never reached the upstream")
    controller.abort()
    await poll(() => slowEvents(recordIn(s.dir)).includes("cancelled"), 5_000)
    assert.deepEqual(slowEvents(recordIn(s.dir)), ["started", "cancelled"], "the upstream was told of the hang-up")
  })
})

describe("serveMcp: list changes", { timeout: 60_000 }, () => {
  test("a 2025-11-25 session is sent tools/list_changed when a server is added and removed", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.url)
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
    const client = await v2Http(s.later, s.url, {
      client: {
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

/**
 * Asserts what the offer server offers, through `client`: its resources, the text one
 * read, its prompt, and the prompt got for `name` in `lang`; returns the listings and the
 * prompt for more checks.
 */
async function assertOffers(client: Client | Client2, name: string, lang: string) {
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
  const greeting = await client.getPrompt({ name: "offer_greet", arguments: { name, lang } })
  assert.deepEqual(plain(greeting.messages), [
    { role: "user", content: { type: "text", text: `Say hello to ${name} in ${lang}` } },
  ])
  return { resources, prompts, greeting }
}

describe("serveMcp: resources, templates, prompts and completions pass through", { timeout: 60_000 }, () => {
  test("an SDK v1 client (2025-11-25)", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.url)
    const { resources, prompts, greeting } = await assertOffers(client, "Ann", "es")
    assert.equal(resources[0]?.title, "Note")
    assert.deepEqual(
      prompts[0]?.arguments?.map((a) => a.name),
      ["name", "lang"],
    )
    assert.equal(greeting.description, "A greeting")

    const { resourceTemplates } = await client.listResourceTemplates()
    assert.deepEqual(
      resourceTemplates.map((r) => r.uriTemplate),
      ["city://{name}"],
    )
    const city = await client.readResource({ uri: "city://Rome" })
    assert.deepEqual(plain(city.contents), [{ uri: "city://Rome", text: "city Rome" }])
    const langs = await client.complete({
      ref: { type: "ref/prompt", name: "offer_greet" },
      argument: { name: "lang", value: "e" },
    })
    assert.deepEqual(langs.completion.values, ["en", "es"])
  })

  test("an SDK v2 client (2026-07-28)", async (t) => {
    const s = await served(t, eraAndOffer)
    const client = await v2Http(s.later, s.url)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    await assertOffers(client, "Bo", "fr")
  })
})

describe("serveMcp: agent views", { timeout: 60_000 }, () => {
  test("the store at /mcp, each agent's view at /agents/<id>/mcp; an agent's view alone at /mcp", async (t) => {
    const s = await served(t, (dir) => ({ era: { command: eraCmd(recordIn(dir)) } }))
    const agent = s.store.forAgent("a")
    agent.addServers({ mcpServers: { up: { command: upstreamCmd(path.join(s.dir, "pids")) } } })
    await ready(agent)
    await ready(s.store)
    const names = (view: McpStoreView) => view.listTools().map((x) => x.name)
    const listed = async (url: string) => {
      const { client } = await v1Http(s.later, url)
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

    const own = await serveView(s.later, agent)
    assert.deepEqual((await listed(own.url!)).names, names(agent))
    const nested = await fetch(own.url!.replace(/\/mcp$/, "/agents/a/mcp"), { method: "POST" })
    assert.equal(nested.status, 404, "an agent's gateway serves no other view")
  })
})

describe("`toolnexus serve --stdio`", { timeout: 60_000 }, () => {
  for (const [sdk, connect, text, [a, b]] of [
    ["an SDK v1 stdio client (2025-11-25)", v1Stdio, "over stdio", [40, 2]],
    ["an SDK v2 stdio client (2026-07-28)", v2Stdio, "modern stdio", [1, 1]],
  ] as const) {
    test(`${sdk} lists and calls`, async (t) => {
      const client = await connect(t, upConfig(t).config)
      assert.equal(client.getServerVersion()?.name, "toolnexus")
      const { tools } = await client.listTools()
      assert.deepEqual(
        tools.map((x) => x.name),
        ["up_echo", "up_add", "up_slow"],
      )
      assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text } })), [text])
      const add = await client.callTool({ name: "up_add", arguments: { a, b } })
      assert.deepEqual(add.structuredContent, { sum: a + b })
    })
  }

  test("an SDK v1 stdio client: once it leaves, no server is left", async (t) => {
    const { pids, config } = upConfig(t)
    const client = await v1Stdio(t, config)
    assert.deepEqual(texts(await client.callTool({ name: "up_echo", arguments: { text: "once" } })), ["once"])
    const started = pidsIn(pids)
    assert.equal(started.length, 1, `upstream processes started: ${started.join(", ")}`)
    await client.close()
    await assertGone(started, 5_000, "upstream processes of the CLI")
  })

  test("an SDK v2 stdio client negotiates 2026-07-28; once it leaves, no server is left (its probe's neither)", async (t) => {
    const { pids, config } = upConfig(t)
    const client = await v2Stdio(t, config)
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN)
    assert.equal(client.getServerVersion()?.name, "toolnexus")
    await client.close()
    // The client probed on a sibling CLI, which started an upstream of its own.
    const started = pidsIn(pids)
    assert.equal(started.length, 2, `upstream processes started: ${started.join(", ")}`)
    await assertGone(started, 5_000, "upstream processes of the CLIs")
  })

  test("examples/mcp.json: the demo server's tools, and a call", async (t) => {
    const client = await v1Stdio(t, "examples/mcp.json")
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
    const record = recordIn(dir)
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
    await assertExits0(cli, "the CLI", "its stdin closed")
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
    const { client } = await v1Http(s.later, s.url)
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

describe("`toolnexus serve` with the config's agents and serve sections", { timeout: 60_000 }, () => {
  test("/mcp serves every server, /agents/<id>/mcp only the agent's, each path behind its own token", async (t) => {
    const later = cleanup(t)
    const dir = tempDir(t)
    const pids = path.join(dir, "pids")
    process.env.SERVE_TEST_ADMIN_TOKEN = "admin-secret"
    t.after(() => delete process.env.SERVE_TEST_ADMIN_TOKEN)
    const config = configFile(dir, {
      mcpServers: { shared: { command: upstreamCmd(pids) }, mine: { command: upstreamCmd(pids) } },
      agents: { writer: ["mine"] },
      serve: { auth: { tokens: { "/mcp": "${SERVE_TEST_ADMIN_TOKEN}", "/agents/writer/mcp": "writer-secret" } } },
    })
    const cli = await serveCli(t, [config, "--http", "127.0.0.1:0"])
    const writerUrl = new URL("/agents/writer/mcp", cli.url).href

    const refused = await post(cli.url, initialize())
    assert.equal(refused.status, 401)
    const wrong = await post(writerUrl, initialize(), { authorization: "Bearer admin-secret" })
    assert.equal(wrong.status, 401, "the store's token does not open the agent's path")

    const writer = await v1Http(later, writerUrl, { headers: { authorization: "Bearer writer-secret" } })
    assert.deepEqual(sorted((await writer.client.listTools()).tools), ["mine_add", "mine_echo", "mine_slow"])
    const admin = await v1Http(later, cli.url, { headers: { authorization: "Bearer admin-secret" } })
    const all = sorted((await admin.client.listTools()).tools)
    assert.ok(
      ["shared_add", "shared_echo", "shared_slow"].every((name) => all.includes(name)),
      all.join(", "),
    )
    assert.equal(all.length, 6, `the store view lists the agent's server too: ${all.join(", ")}`)
    // One process per server: the agent's server runs for the agent only.
    assert.equal(pidsIn(pids).length, 2, `server processes started: ${pidsIn(pids).join(", ")}`)
  })
})

describe("serveMcp: what servers log", { timeout: 60_000 }, () => {
  test("a 2025-11-25 session gets each server's messages under its name, at the level it set", async (t) => {
    const s = await served(t, eraAndOffer)
    const { client } = await v1Http(s.later, s.gateway.url!)
    const heard: Array<{ level: string; logger?: string; data: unknown }> = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (note) => {
      heard.push(note.params)
    })
    // Messages come on the session's GET stream, which the client opens after connecting:
    // a call made before it is open logs to nobody, so calls go on until one is heard.
    const call = () => client.callTool({ name: "era_progress", arguments: {} })
    const logged = await poll(async () => (await call()) && heard.length > 0, 10_000)
    assert.ok(logged, "no message reached the client")
    assert.deepEqual(heard[0], { level: "warning", logger: "era", data: "halfway" })

    await client.setLoggingLevel("error")
    await sleep(300) // what the calls above logged, still on its way
    const before = heard.length
    await call()
    await sleep(500) // a message would come on the other stream, in no set order
    assert.equal(heard.length, before, `a warning passed a session that asked for errors: ${JSON.stringify(heard)}`)
  })
})
