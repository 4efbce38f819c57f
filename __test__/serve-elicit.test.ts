// The gateway passes an upstream's questions (elicitation) to the downstream client that
// made the call, and the client's answer back: a 2025-11-25 upstream's
// `elicitation/create` request (over stdio, and over streamable HTTP on the call's stream)
// and a 2026-07-28 upstream's input-required rounds, each to the official SDK v1 client
// (2025-11-25: `elicitation/create` on the call's stream) and the SDK v2 client
// (2026-07-28: an input-required result it answers by calling again). A client that
// cannot answer gets nothing, and the upstream gets `cancel`.
import assert from "node:assert/strict"
import { describe, test } from "node:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Client as Client2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioTransport2 } from "@modelcontextprotocol/client/stdio"
import { ElicitRequestSchema, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js"
import { FORM_MESSAGE, FORM_SCHEMA } from "./fixtures/elicit-constants.mjs"
import { startElicitHttp } from "./fixtures/elicit-http.mjs"
import { fixture, NODE, ROOT, tempDir } from "./helpers.js"
import { CLI, configFile, ENV, modern, served, textOf, v1Http, v2Http, type Served } from "./serve-helpers.js"

const T = { timeout: 60_000 }

const upstreams = () => ({
  form: { command: [NODE, fixture("elicit-server.mjs")] },
  rounds: { command: [NODE, fixture("rounds-server.mjs")] },
})

/** The store of `upstreams`, declaring elicitation, served. */
const gateway = (t: Parameters<typeof served>[0], more: Record<string, object> = {}) =>
  served(t, { ...upstreams(), ...more }, { store: { elicitation: true } })

type Asked = { message: string; mode?: string; requestedSchema?: unknown }

describe("serveMcp: an upstream's questions reach the downstream client", T, () => {
  test("SDK v1 client (2025-11-25): a 2025 stdio upstream's elicitation/create and a 2026 upstream's round", async (t) => {
    const { url, later } = await gateway(t)
    const asked: Asked[] = []
    const client = new Client({ name: "asker", version: "1" }, { capabilities: { elicitation: { form: {} } } })
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Asked)
      return { action: "accept", content: { name: "Ada" } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    later(() => client.close())

    const form = await client.callTool({ name: "form_ask_name", arguments: {} })
    assert.deepEqual(JSON.parse(textOf(form)), { action: "accept", content: { name: "Ada" } })
    assert.equal(asked[0].message, FORM_MESSAGE)
    assert.deepEqual(asked[0].requestedSchema, FORM_SCHEMA)

    const round = await client.callTool({ name: "rounds_confirm", arguments: {} })
    const answered = JSON.parse(textOf(round))
    assert.deepEqual(answered.responses, { ok: { action: "accept", content: { name: "Ada" } } })
    assert.equal(answered.state, "s1")
    assert.equal(asked[1].message, "Sure?")
    assert.equal(asked.length, 2)
  })

  test("SDK v2 client (2026-07-28): the same questions as input-required rounds it answers", async (t) => {
    const { url, later } = await gateway(t)
    const asked: Asked[] = []
    const client = await v2Http(later, url, { client: { capabilities: { elicitation: { form: {} } } } })
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params as Asked)
      return { action: "accept", content: { name: "Grace" } }
    })
    const form = await client.callTool({ name: "form_ask_name", arguments: {} })
    assert.deepEqual(JSON.parse(textOf(form as never)), { action: "accept", content: { name: "Grace" } })
    const round = await client.callTool({ name: "rounds_confirm", arguments: {} })
    const answered = JSON.parse(textOf(round as never))
    assert.deepEqual(answered.responses, { ok: { action: "accept", content: { name: "Grace" } } })
    assert.equal(answered.state, "s1")
    assert.deepEqual(
      asked.map((a) => a.message),
      [FORM_MESSAGE, "Sure?"],
    )
  })

  test("a 2025 HTTP upstream asks on its call's stream; the answer goes back through the gateway", async (t) => {
    const remote = await startElicitHttp()
    t.after(() => remote.close())
    const { url, later } = await gateway(t, { remote: { url: remote.url } })
    const client = new Client({ name: "asker", version: "1" }, { capabilities: { elicitation: { form: {} } } })
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }))
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    later(() => client.close())
    const result = await client.callTool({ name: "remote_ask", arguments: {} })
    assert.equal(textOf(result), "decline")
  })

  test("a server asking many questions at once gets at most 8 put to the client; the rest are cancelled", async (t) => {
    const { url, later } = await gateway(t)
    const client = new Client({ name: "asker", version: "1" }, { capabilities: { elicitation: { form: {} } } })
    let asked = 0
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++
      await new Promise((resolve) => setTimeout(resolve, 500))
      return { action: "accept", content: { name: "Ada" } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    later(() => client.close())
    const result = await client.callTool({ name: "form_ask_many", arguments: { count: 20 } })
    assert.deepEqual(JSON.parse(textOf(result)), { accept: 8, cancel: 12 })
    assert.equal(asked, 8)
  })

  test("a client that declared no elicitation is never asked: the upstream gets cancel", async (t) => {
    const { url, later } = await gateway(t)
    const { client } = await v1Http(later, url)
    const form = await client.callTool({ name: "form_ask_name", arguments: {} })
    assert.deepEqual(JSON.parse(textOf(form)), { action: "cancel" })
    const v2 = await v2Http(later, url)
    const round = await v2.callTool({ name: "rounds_confirm", arguments: {} })
    assert.deepEqual(JSON.parse(textOf(round as never)).responses, { ok: { action: "cancel" } })
  })

  test("a URL-mode question goes only to a client that declared URL mode", async (t) => {
    const { url, later } = await gateway(t)
    const ask = async (elicitation: ClientCapabilities["elicitation"]) => {
      const client = new Client({ name: "asker", version: "1" }, { capabilities: { elicitation } })
      const modes: string[] = []
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        modes.push(String(request.params.mode))
        return { action: "accept" }
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      later(() => client.close())
      const result = await client.callTool({ name: "form_authorize", arguments: {} })
      return { action: JSON.parse(textOf(result)).action, modes }
    }
    assert.deepEqual(await ask({ form: {} }), { action: "cancel", modes: [] })
    assert.deepEqual(await ask({ form: {}, url: {} }), { action: "accept", modes: ["url"] })
  })

  test("the upstream sees the elicitation capability only on a store that declares it", async (t) => {
    const declared = await gateway(t)
    const { client } = await v1Http(declared.later, declared.url)
    const capabilities = await client.callTool({ name: "form_capabilities", arguments: {} })
    assert.deepEqual(JSON.parse(textOf(capabilities)), { form: {}, url: {} })

    const plain: Served = await served(t, upstreams())
    const other = await v1Http(plain.later, plain.url)
    const none = await other.client.callTool({ name: "form_capabilities", arguments: {} })
    assert.equal(JSON.parse(textOf(none)), null)
  })

  test("toolnexus serve --stdio: both SDKs' stdio clients answer the upstreams' questions", async (t) => {
    const config = configFile(tempDir(t), { mcpServers: upstreams() })
    const transport = () => ({ command: NODE, args: [CLI, "serve", config, "--stdio"], cwd: ROOT, env: ENV })
    const v1 = new Client({ name: "asker", version: "1" }, { capabilities: { elicitation: { form: {} } } })
    v1.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Lin" } }))
    await v1.connect(new StdioClientTransport(transport()))
    t.after(() => v1.close())
    const v2 = new Client2(
      { name: "asker", version: "2" },
      { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } },
    )
    v2.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Kay" } }))
    await v2.connect(new StdioTransport2(transport()))
    t.after(() => v2.close())
    for (const [client, name] of [
      [v1, "Lin"],
      [v2, "Kay"],
    ] as const) {
      const form = await client.callTool({ name: "form_ask_name", arguments: {} })
      assert.deepEqual(JSON.parse(textOf(form as never)), { action: "accept", content: { name } })
      const round = await client.callTool({ name: "rounds_confirm", arguments: {} })
      assert.deepEqual(JSON.parse(textOf(round as never)).responses, { ok: { action: "accept", content: { name } } })
    }
  })

  test("a 2026 call sent again with a requestState no call waits under is refused, naming it", async (t) => {
    const { url } = await gateway(t)
    const params = { name: "rounds_confirm", arguments: {}, requestState: "feed", inputResponses: {} }
    const raw = await modern(url, "tools/call", params)
    assert.ok(raw.rpc?.error, raw.text)
    assert.match(raw.rpc.error.message, /no call waits under this requestState/)
  })
})
